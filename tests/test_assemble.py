"""Turn assembly: completion by root + grace or decision wait, bounds, evictions, late spans."""

from __future__ import annotations

import gc
import json
import time
import tracemalloc
import urllib.request
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client import CollectorRegistry

from monitor import _native
from monitor.assemble import Completed, TurnAssembler, facts_size
from monitor.config import AssemblySettings
from monitor.ingest.otlp import OtlpDecoder
from monitor.model import AssistantTurn, Feedback, Message, RetrievedDocument, SpanFacts, ToolCall
from monitor.telemetry import Metrics
from tests.corpus import capture
from tests.hostile import Mutator


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(**settings) -> tuple[TurnAssembler, Clock, Metrics]:
    clock, metrics = Clock(), Metrics(CollectorRegistry())
    defaults = {"root_grace_s": 1.0, "decision_wait_s": 10.0}
    return TurnAssembler(AssemblySettings(**{**defaults, **settings}), metrics, clock), clock, metrics


def span(trace: int, span: int, parent: int = 0, **fields) -> SpanFacts:
    return SpanFacts(trace_id=trace.to_bytes(16, "big"), span_id=span.to_bytes(8, "big"),
                     parent_span_id=parent.to_bytes(8, "big") if parent else b"",
                     is_root=not parent, **fields)


def passed(done: Completed) -> list[AssistantTurn]:
    """The turns an assembler without a sampler passed on: every turn completed."""
    return [turn for turn, _, _ in done.passed]


def count(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


@pytest.mark.unit
def test_root_end_plus_grace_completes_and_late_log_events_are_merged() -> None:
    assembler, clock, metrics = make()
    assert passed(assembler.add([span(1, 2, parent=1, role="llm"), span(1, 1, question="q?")])) == []
    clock.now += 0.5
    # The official OpenAI instrumentation's log events arrive after the spans.
    fragment = SpanFacts(trace_id=(1).to_bytes(16, "big"), span_id=(2).to_bytes(8, "big"),
                         is_log_fragment=True, event_outputs=[Message("assistant", "a!")])
    assembler.add([fragment])
    assert passed(assembler.expire()) == []
    clock.now += 0.6
    [turn] = passed(assembler.expire())
    assert (turn.question, turn.answer, turn.span_count, turn.completion) == (
        "q?", "a!", 2, "root_ended")
    assert count(metrics, "assistant_turn_completions_total", reason="root_ended") == 1
    assert assembler.trace_count == 0 and assembler.span_count == 0


@pytest.mark.unit
def test_no_root_completes_after_decision_wait() -> None:
    assembler, clock, metrics = make()
    assembler.add([span(1, 2, parent=99)])
    clock.now += 9.9
    assert passed(assembler.expire()) == []
    clock.now += 0.2
    [turn] = passed(assembler.expire())
    assert turn.completion == "decision_wait"


@pytest.mark.unit
def test_a_late_span_that_changes_a_kept_turn_passes_it_on_again_as_a_revision() -> None:
    assembler, clock, metrics = make()
    assembler.add([span(1, 1, question="Where is my order?", answer="It shipped on Monday.")])
    clock.now += 1.1
    [first] = passed(assembler.expire())
    assert (first.revision, first.tool_calls) == (0, [])
    assert assembler.held_size > 0  # its spans wait for late ones
    clock.now += 30  # a tool's span, exported late by its own process
    assembler.add([span(1, 3, parent=1, role="tool", error="timeout",
                        tool=ToolCall(name="track_order", arguments={"order": 7}))])
    assert assembler.trace_count == 1 and passed(assembler.expire()) == []
    clock.now += 1.1  # completed again a root grace after the late span
    done = assembler.expire()
    [revised] = passed(done)
    assert revised.revision == 1 and revised.answer == "It shipped on Monday."
    assert [(c.name, c.error) for c in revised.tool_calls] == [("track_order", "timeout")]
    # not counted again in the traffic's metrics: no turn, tool call, step or session
    assert (done.received, done.steps, done.sessions, done.completions) == ({}, {}, [], {})
    assert count(metrics, "assistant_turn_revisions_total", result="revised") == 1
    assert count(metrics, "assistant_spans_refused_total", reason="late") == 0


@pytest.mark.unit
def test_a_late_span_that_changes_nothing_a_judge_reads_is_not_judged_again() -> None:
    assembler, clock, metrics = make()
    assembler.add([span(1, 1, question="q?", answer="a.")])
    clock.now += 1.1
    assert len(passed(assembler.expire())) == 1
    assembler.add([span(1, 4, parent=1, feedback=Feedback(score=-1.0))])  # a rating, later
    clock.now += 1.1
    assert passed(assembler.expire()) == []
    assert count(metrics, "assistant_turn_revisions_total", result="unchanged") == 1
    assembler.add([span(1, 5, parent=1, role="tool", tool=ToolCall(name="lookup"))])
    clock.now += 1.1
    [revised] = passed(assembler.expire())  # still held: the unchanged turn was held again
    assert revised.revision == 1


@pytest.mark.unit
def test_late_spans_after_the_window_or_beyond_the_held_bytes_are_counted_not_reassembled() -> None:
    assembler, clock, metrics = make(root_grace_s=0, revise_within_s=60)
    assembler.add([span(1, 1)])
    assert len(passed(assembler.expire())) == 1
    clock.now += 61
    assembler.expire()
    assert assembler.held_size == 0  # let go when its window closed
    assembler.add([span(1, 5, parent=1)])
    assert assembler.trace_count == 0
    assert count(metrics, "assistant_spans_refused_total", reason="late") == 1

    assembler, clock, metrics = make(root_grace_s=0, revise_max_mib=1)
    big = "x" * 400_000
    for trace in (1, 2, 3):  # each ~400 KB: the oldest is let go beyond 1 MiB
        assembler.add([span(trace, 1, question=big)])
        assert len(passed(assembler.expire())) == 1
    assert 800_000 < assembler.held_size <= 1 << 20
    assembler.add([span(1, 5, parent=1), span(3, 5, parent=1)])
    assert assembler.trace_count == 1 and assembler.holds((3).to_bytes(16, "big"))
    assert count(metrics, "assistant_spans_refused_total", reason="late") == 1


@pytest.mark.unit
def test_buffer_is_bounded_and_evictions_flush_the_oldest() -> None:
    assembler, clock, metrics = make(max_traces=2, max_spans=100)
    assert passed(assembler.add([span(1, 1, parent=9)])) == []
    clock.now += 1
    assert passed(assembler.add([span(2, 1, parent=9)])) == []
    [evicted] = passed(assembler.add([span(3, 1, parent=9)]))
    assert evicted.trace_id == (1).to_bytes(16, "big").hex() and evicted.completion == "evicted"
    assert assembler.trace_count == 2
    assert count(metrics, "assistant_turn_completions_total", reason="evicted") == 1

    assembler, _, metrics = make(max_traces=100, max_spans=3)
    flushed = passed(assembler.add([span(1, s, parent=9) for s in range(1, 3)] + [span(2, 1), span(2, 2)]))
    assert [t.span_count for t in flushed] == [2] and assembler.span_count == 2


@pytest.mark.unit
def test_spans_beyond_the_per_trace_limit_are_dropped_and_counted() -> None:
    assembler, _, metrics = make(max_spans_per_trace=3, root_grace_s=0)
    assembler.add([span(1, s, parent=1) for s in range(2, 7)] + [span(1, 1)])
    [turn] = passed(assembler.expire())  # the root still arrived and ended the turn
    assert turn.span_count == 4 and turn.completion == "root_ended"
    assert count(metrics, "assistant_spans_refused_total", reason="trace_too_large") == 2


@pytest.mark.unit
def test_agent_trace_with_several_llm_calls_is_one_turn() -> None:
    assembler, clock, _ = make(root_grace_s=0)
    root = span(1, 1, role="agent", input_text="Book a table for two", start_ns=1, end_ns=100)
    calls = [
        span(1, 2, parent=1, role="retrieval", start_ns=2, end_ns=3),
        span(1, 3, parent=1, role="llm", start_ns=4, end_ns=10, model="m",
             output_messages=[Message("assistant", None, tool_calls=[])]),
        span(1, 4, parent=1, role="llm", start_ns=20, end_ns=30, model="m",
             output_messages=[Message("assistant", "Booked for 8pm.")]),
    ]
    assembler.add(calls + [root])
    [turn] = passed(assembler.expire())
    assert (turn.question, turn.answer, turn.span_count) == ("Book a table for two",
                                                             "Booked for 8pm.", 4)


@pytest.mark.unit
@pytest.mark.parametrize("letter", ["a", "é"])  # a byte a character, and two
@pytest.mark.parametrize(("quoted", "question_is_query"), [(300, True), (200, True), (199, False),
                                                           (0, False)])
def test_a_prompt_quoting_a_documents_first_200_characters_is_not_the_question(
        letter: str, quoted: int, question_is_query: bool) -> None:
    """The question is the retrieval query when the LLM's user message quotes a document's first
    200 characters (stripped); quoting fewer, or none (a plain question), it is that message."""
    assembler, _, _ = make(root_grace_s=0)
    document = "  " + "".join(f"{letter}{n % 10}" for n in range(150)) + "\n"  # 300 characters
    prompt = f"Context: {document.strip()[:quoted]}\nQuestion: how long do refunds take?"
    assembler.add([
        span(1, 1, role="llm", start_ns=1, end_ns=10, model="m",
             input_messages=[Message("user", prompt)], output_messages=[Message("assistant", "30 days")]),
        span(1, 2, parent=1, role="retrieval", input_text="refund window", start_ns=2, end_ns=3,
             documents=[RetrievedDocument(content=document)]),
    ])
    [turn] = passed(assembler.expire())
    assert turn.question == ("refund window" if question_is_query else prompt)


@pytest.mark.unit
def test_a_tool_called_twice_alike_explains_each_call_from_its_own_request() -> None:
    # An agent that retries a tool with the same arguments: two executed spans alike, two
    # requests without ids. Each call's `sources` entry names the request that made it (it once
    # named the first call twice: calls were found by equality, not by place).
    assembler, _, _ = make(root_grace_s=0)
    lookup = ToolCall(name="lookup", arguments={"q": "x"})
    requests = [span(1, 2, parent=1, role="llm", start_ns=2, end_ns=3, output_messages=[
        Message("assistant", None, tool_calls=[lookup])]),
        span(1, 4, parent=1, role="llm", start_ns=6, end_ns=7, output_messages=[
            Message("assistant", None, tool_calls=[lookup])])]
    executed = [span(1, 3, parent=1, role="tool", start_ns=4, end_ns=5, tool=lookup),
                span(1, 5, parent=1, role="tool", start_ns=8, end_ns=9, tool=lookup)]
    assembler.add([span(1, 1, role="agent", start_ns=1, end_ns=10), *requests, *executed])
    [turn] = passed(assembler.expire())
    assert len(turn.tool_calls) == 2
    assert [turn.sources[f"tool_calls.{n}.arguments"][0] for n in (0, 1)] == [
        (2).to_bytes(8, "big").hex(), (4).to_bytes(8, "big").hex()]
    assert [turn.sources[f"tool_calls.{n}"][0] for n in (0, 1)] == [
        (3).to_bytes(8, "big").hex(), (5).to_bytes(8, "big").hex()]


@pytest.mark.unit
def test_calls_requested_without_ids_match_executed_ones_by_name_in_order() -> None:
    # 40 executed tool spans without ids, two tools alternating; 41 requests without ids: each
    # takes the first executed call of its name not yet taken, the one left over is a call of
    # its own. Past 16 calls, the calls by name and the sources by field are found by hash.
    assembler, _, _ = make(root_grace_s=0)
    executed = [span(1, 100 + n, parent=1, role="tool", start_ns=4 + n, end_ns=5 + n,
                     tool=ToolCall(name="ab"[n % 2], arguments={"ran": n})) for n in range(40)]
    requested = [ToolCall(name="a", arguments={"asked": n}) for n in range(21)]
    requested += [ToolCall(name="b", arguments={"asked": n}) for n in range(20)]
    llm = span(1, 2, parent=1, role="llm", start_ns=2, end_ns=3,
               output_messages=[Message("assistant", None, tool_calls=requested)])
    assembler.add([span(1, 1, role="agent", start_ns=1, end_ns=100), llm, *executed])
    [turn] = passed(assembler.expire())
    assert len(turn.tool_calls) == 41
    asked = {**{2 * n: {"asked": n} for n in range(20)}, **{2 * n + 1: {"asked": n} for n in range(20)},
             40: {"asked": 20}}
    assert [call.arguments for call in turn.tool_calls] == [asked[n] for n in range(41)]
    llm_id = (2).to_bytes(8, "big").hex()
    assert all(turn.sources[f"tool_calls.{n}.arguments"][0] == llm_id for n in range(41))
    assert turn.sources["tool_calls.39"][0] == (139).to_bytes(8, "big").hex()
    assert turn.sources["tool_calls.40"][:3] == [llm_id, "", "requested_call"]


@pytest.mark.unit
def test_span_facts_built_by_keyword_name_what_they_refuse() -> None:
    with pytest.raises(ValueError, match="unknown role 'judge'"):
        span(1, 1, role="judge")
    with pytest.raises(TypeError, match="no field 'questoin'"):
        span(1, 1, questoin="q?")
    with pytest.raises(ValueError, match="feedback score 5 is outside -1..1"):
        span(1, 1, feedback=Feedback.model_construct(score=5.0))
    with pytest.raises(ValueError, match="unknown completion 'done': expected one of root_ended"):
        _native.testing.build_turn(b"\x01" * 16, [span(1, 1)], "done")


# ----------------------------------------------------------------------------- byte budget

QUESTION_1MB = "Why is my order late? " * 45_455  # about 1 MB, under max_attribute_length


@pytest.mark.unit
def test_the_buffer_is_bounded_in_bytes_and_evictions_are_counted() -> None:
    assembler, clock, metrics = make(max_size_mib=64, root_grace_s=0)
    assert facts_size(span(1, 1, question=QUESTION_1MB)) > 1_000_000
    flushed = []
    for n in range(1, 1001):  # 1,000 root-less spans with 1 MB questions, as an attacker sends
        flushed += passed(assembler.add([span(n, 1, parent=7, question=QUESTION_1MB)]))
        assert assembler.size <= 64 << 20
    assert 60 < assembler.trace_count < 70  # about 64 MiB of 1 MB questions
    assert len(flushed) == 1000 - assembler.trace_count
    assert {t.completion for t in flushed} == {"evicted"}
    assert count(metrics, "assistant_assembly_evictions_total", limit="bytes") == len(flushed)
    assert count(metrics, "assistant_assembly_evictions_total", limit="traces") == 0

    assembler.add([span(5000, 2, parent=1, role="llm"), span(5000, 1, question="q?",
                                                             answer="a.")])
    turns = passed(assembler.expire())
    assert any(t.trace_id == (5000).to_bytes(16, "big").hex() and t.question == "q?"
               and t.span_count == 2 for t in turns)
    assembler.flush_all()
    assert assembler.size == 0 and assembler.span_count == 0  # what was charged is given back


@pytest.mark.unit
def test_merged_fragments_are_charged_and_discard_gives_bytes_back() -> None:
    assembler, _, _ = make()
    assembler.add([span(1, 1)])
    before = assembler.size
    fragment = SpanFacts(trace_id=(1).to_bytes(16, "big"), span_id=(1).to_bytes(8, "big"),
                         is_log_fragment=True, event_inputs=[Message("user", "x" * 10_000)])
    assembler.add([fragment])
    assert assembler.size >= before + 10_000
    assert assembler.discard({(1).to_bytes(16, "big")}) == 1 and assembler.size == 0


def _root_less_request(n: int) -> bytes:
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    s = spans.add(trace_id=(n + 1).to_bytes(16, "big"), span_id=(1).to_bytes(8, "big"),
                  parent_span_id=(7).to_bytes(8, "big"), name="llm")
    kv = s.attributes.add(key="assistant.question")
    kv.value.string_value = QUESTION_1MB
    return request.SerializeToString()


def _rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.mark.integration
def test_root_less_megabyte_spans_cannot_grow_the_sidecar_beyond_its_budget(
        tmp_path, monkeypatch) -> None:
    from tests.conftest import SidecarProcess

    # The admin endpoint's recent turns (200 by default) within 8 MiB of JSON: a turn here is
    # 1 MB, and 200 of them would hold 200 MB.
    monkeypatch.setenv("ASSISTANT_MONITOR_ADMIN__RECENT_TURNS_MAX_MIB", "8")
    # No turn completes on its own meanwhile (decision_wait_s); none is judged (default_rate 0).
    sidecar = SidecarProcess(tmp_path, "assembly: {decision_wait_s: 600, max_size_mib: 32}\n"
                             "sampling: {default_rate: 0.0, always_keep: []}\n")
    try:
        pid, url = sidecar.process.pid, f"http://127.0.0.1:{sidecar.ports['http']}/v1/traces"
        baseline = _rss_kib(pid, "VmRSS")
        for n in range(300):
            request = urllib.request.Request(url, data=_root_less_request(n), method="POST",
                                             headers={"Content-Type": "application/x-protobuf"})
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 200
        grown_mib = (_rss_kib(pid, "VmHWM") - baseline) / 1024
        assert grown_mib < 150, f"RSS grew {grown_mib:.0f} MiB for 300 MB of root-less spans"
        metrics = sidecar.scrape()
        evicted = _sample(metrics, 'assistant_assembly_evictions_total{limit="bytes"}')
        assert evicted >= 250
        assert _sample(metrics, "assistant_assembly_bytes") <= 32 << 20

        body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{
            "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
            "name": "turn", "attributes": [
                {"key": "assistant.question", "value": {"stringValue": "Where is my parcel?"}},
                {"key": "assistant.answer", "value": {"stringValue": "It ships tomorrow."}}],
        }]}]}]}).encode()
        request = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).close()
        deadline = time.monotonic() + 30
        while True:  # the sidecar still assembles a valid turn afterwards
            with urllib.request.urlopen(f"{sidecar.admin_url}/api/turns?limit=5",
                                        timeout=10) as response:
                turns = json.load(response)
            if any(t["trace_id"] == "5b8efff798038103d269b633813fc60c"
                   and t["question"] == "Where is my parcel?" for t in turns):
                break
            assert time.monotonic() < deadline, "the valid turn was not assembled"
            time.sleep(0.1)
    finally:
        assert sidecar.stop() == 0


def _sample(exposition: str, name: str) -> float:
    for line in exposition.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


@pytest.mark.unit
def test_turns_built_without_validation_equal_what_pydantic_validation_makes() -> None:
    """build_turn makes AssistantTurn (and its documents, tool calls, feedback) from typed
    values without validating them again. Each turn of the real-instrumentor corpus and of 1,500
    hostile mutations must be the very model validation makes of the same data: equal field by
    field, the same fields set, attributes in declaration order, and the same JSON."""
    decoder = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16)
    assembler, clock, _ = make(max_traces=100_000, max_spans=1_000_000)
    turns = []
    for path in sorted(capture.FIXTURES.glob("*/*.expected.json")):
        export = json.loads(path.with_name(path.name.replace(".expected", "")).read_text())
        body = json.dumps(export["traces"]).encode()
        turns += passed(assembler.add(decoder.traces(decoder.parse_traces(body, "json")).facts))
    fuzz = Mutator(seed=21, fresh_trace_ids=True)
    for _ in range(1500):
        try:
            turns += passed(assembler.add(decoder.decode("traces", fuzz.protobuf(), "proto").facts))
        except Exception:  # noqa: BLE001 - a refused body makes no turn
            pass
    turns += passed(assembler.add([span(1, 1, feedback=Feedback(score=-0.5, comment="slow"),
                                 question="q?", answer="a.")]))
    clock.now += 3600
    turns += passed(assembler.expire())
    assert len(turns) > 400 and any(t.documents for t in turns) and any(t.tool_calls for t in turns)
    assert any(t.feedback for t in turns)
    for turn in turns:
        validated = AssistantTurn.model_validate(
            {name: getattr(turn, name) for name in turn.model_fields_set})
        assert turn == validated
        assert turn.model_fields_set == validated.model_fields_set
        assert list(vars(turn)) == list(AssistantTurn.model_fields)
        assert turn.model_dump_json() == validated.model_dump_json()
        for part in [*turn.documents, *turn.tool_calls]:
            assert type(part).model_validate(part.model_dump()) == part
            assert part.model_fields_set == set(type(part).model_fields)


@pytest.mark.unit
def test_turns_kept_from_the_cycle_collector_are_freed_when_dropped() -> None:
    """A turn's objects are untracked by the garbage collector (acyclic trees: reference
    counting frees them). Were any of them in a cycle, memory would grow with every turn
    dropped; 20 rounds of 500 turns, each built and dropped, must give their memory back."""
    # (nothing held for late spans: what is held is bounded, and would be counted here)
    assembler, clock, _ = make(root_grace_s=0, max_traces=100_000, max_spans=1_000_000,
                               revise_within_s=0)
    call = ToolCall(name="lookup", arguments={"q": ["refund", {"days": 30}]}, result="ok")
    trace = 0

    def one_round() -> None:
        nonlocal trace
        for _ in range(500):
            trace += 1
            assembler.add([
                span(trace, 1, question="How long do refunds take?", answer="30 days.",
                     feedback=Feedback(score=1.0)),
                span(trace, 2, parent=1, role="retrieval", documents=[
                    RetrievedDocument(id=f"d{n}", content="Refunds take 30 days. " * 20,
                                      score=0.5) for n in range(4)]),
                span(trace, 3, parent=1, role="tool", tool=call)])
        clock.now += 10
        turns = passed(assembler.expire())
        assert len(turns) == 500 and not gc.is_tracked(turns[0])
        assert not gc.is_tracked(turns[0].documents[0])

    tracemalloc.start()
    try:
        one_round()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(20):
            one_round()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 1 << 20, f"{grown} bytes not given back after 10,000 turns"
