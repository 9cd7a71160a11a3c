"""The trace corpus: real instrumentors' exports give the turn the app actually had, field by field.

tests/fixtures/otlp/<instrumentor>/<scenario>.json was captured by tests/corpus/capture.py (its
docstring says how); beside it, <scenario>.expected.json holds what the app did. Each file goes
through the sidecar's own decode, map and assemble path. A fresh capture under the installed
versions must give the same turns as the stored files: a version bump that changes an
instrumentor's output fails here instead of drifting silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from monitor.assemble import TurnAssembler
from monitor.config import AssemblySettings, SessionSettings
from monitor.ingest.otlp import OtlpDecoder
from monitor.model import AssistantTurn
from monitor.sessions import SessionTelemetry, SessionTracker, SessionTurn
from monitor.telemetry import Metrics
from tests.corpus import capture
from tests.test_assemble import passed

CORPUS = sorted(capture.FIXTURES.glob("*/*.expected.json"))
SESSIONS = sorted(capture.FIXTURES.glob("*/*.session.json"))


def turns_from(export_file: Path) -> tuple[list[AssistantTurn], list[SessionTurn]]:
    """The export's turns, and its conversations' turns as sessions are followed by."""
    export = json.loads(export_file.read_text())
    decoder = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16)
    assembler = TurnAssembler(AssemblySettings(root_grace_s=0), Metrics())
    facts = []
    if "logs" in export:  # the official instrumentation's message events
        facts += decoder.logs(decoder.parse_logs(json.dumps(export["logs"]).encode(),
                                                 "json")).facts
    facts += decoder.traces(decoder.parse_traces(json.dumps(export["traces"]).encode(),
                                                 "json")).facts
    completed = [assembler.add(facts), assembler.expire()]
    return ([turn for done in completed for turn in passed(done)],
            [turn for done in completed for turn in done.sessions])


def turn_from(export_file: Path) -> AssistantTurn:
    turns, _ = turns_from(export_file)
    assert len(turns) == 1, [t.trace_id for t in turns]
    return turns[0]


def trajectory(turn: AssistantTurn) -> list[str]:
    """The turn's steps as the expected files write them: agents aside, and an LLM call or a
    retrieval inside one of its kind (a framework's span around the call) once."""
    out = []
    for step in turn.steps:
        wrapped = step.parent is not None and turn.steps[step.parent].kind == step.kind
        if step.kind == "agent" or (wrapped and step.kind in ("llm", "retrieval")):
            continue
        named = f"{step.kind}:{step.name}" if step.kind in ("tool", "handoff") else step.kind
        out.append(named + "!" * (step.error is not None))
    return out


def fields(turn: AssistantTurn) -> dict[str, Any]:
    """The turn as the expected files write it."""
    return {
        "question": turn.question,
        "documents": [{"id": d.id, "content": d.content} for d in turn.documents],
        "answer": turn.answer,
        "tool_calls": [{"name": c.name, "call_id": c.call_id, "arguments": c.arguments,
                        "result": c.result, "failed": c.error is not None}
                       for c in turn.tool_calls],
        "trajectory": trajectory(turn),
    }


@pytest.mark.unit
def test_the_corpus_covers_every_instrumentor_and_scenario() -> None:
    seen = {(p.parent.name, p.name.removesuffix(".expected.json")) for p in CORPUS}
    seen |= {(p.parent.name, p.name.removesuffix(".session.json")) for p in SESSIONS}
    for instrumentor in capture.INSTRUMENTORS:
        for name in [*capture.scenarios_for(instrumentor), *capture.sessions_for(instrumentor)]:
            assert (instrumentor, name) in seen


@pytest.mark.unit
@pytest.mark.parametrize("expected_file", CORPUS,
                         ids=[f"{p.parent.name}/{p.name.split('.')[0]}" for p in CORPUS])
def test_corpus_file_gives_the_expected_turn(expected_file: Path) -> None:
    expected = json.loads(expected_file.read_text())
    turn = turn_from(expected_file.with_name(expected_file.name.replace(".expected", "")))
    got = fields(turn)
    for key in expected:  # field by field, so a failure names the field
        assert got[key] == expected[key], key
    assert turn.model == "m1"
    assert turn.service == f"support-{expected_file.parent.name}"
    # The trajectory's order, nesting and signals.
    assert turn.signals.steps == len(expected["trajectory"])
    assert turn.signals.tool_errors == sum(c["failed"] for c in expected["tool_calls"])
    assert [s.start_ms for s in turn.steps] == sorted(s.start_ms for s in turn.steps)
    assert all(s.parent is None or s.parent < n for n, s in enumerate(turn.steps))
    tool_steps = [s for s in turn.steps if s.kind == "tool"]
    assert [s.tool_call for s in tool_steps] == list(range(len(turn.tool_calls)))


@pytest.mark.unit
@pytest.mark.parametrize("expected_file", SESSIONS,
                         ids=[f"{p.parent.name}/{p.name.split('.')[0]}" for p in SESSIONS])
def test_corpus_conversation_is_one_session_with_its_outcome(expected_file: Path) -> None:
    """A conversation's traces, a turn each, carry its id (the official instrumentation's app on
    its root; OpenInference's `session.id` on the instrumentor's spans too) and are followed as
    one session, closed idle with the outcome the conversation had."""
    expected = json.loads(expected_file.read_text())
    turns, session_turns = turns_from(expected_file.with_name(
        expected_file.name.replace(".session", "")))
    assert [t.question for t in turns] == expected["questions"]
    assert {t.conversation_id for t in turns} == {expected["conversation_id"]}
    closed: list[tuple[str, str, int]] = []
    tracker = SessionTracker(SessionSettings(idle_timeout_s=60), SessionTelemetry(
        CollectorRegistry()), str, str, lambda session, how, outcome: closed.append(
            (session.conversation_id, outcome, session.turns)))
    tracker.add(session_turns, now=0.0)
    tracker.expire(now=61.0)
    assert closed == [(expected["conversation_id"], expected["outcome"],
                       len(expected["questions"]))]


@pytest.mark.integration
def test_a_fresh_capture_gives_the_stored_turns(tmp_path: Path) -> None:
    """Every instrumentor installed here, captured now, against the stored corpus and versions."""
    capture.capture(sorted(capture.INSTRUMENTORS), tmp_path)
    ignore: Any = {"start_time_unix_nano": True, "duration_ms": True,  # timing: each run's
                   "steps": {"__all__": {"start_ms", "duration_ms"}}, "signals": {"tool_ms"}}
    for expected_file in CORPUS + SESSIONS:
        instrumentor = expected_file.parent.name
        name = expected_file.name.replace(".expected", "").replace(".session", "")
        fresh, _ = turns_from(tmp_path / instrumentor / name)
        stored, _ = turns_from(expected_file.with_name(name))
        assert [t.model_dump(exclude=ignore) for t in fresh] == [
            t.model_dump(exclude=ignore) for t in stored], (
            f"{instrumentor}/{name}: the installed versions "
            f"{capture.versions(instrumentor)} give other turns than the corpus' "
            f"{json.loads((expected_file.parent / 'versions.json').read_text())}")


@pytest.mark.unit
def test_the_question_of_a_prompt_built_around_documents_is_the_retrieval_query() -> None:
    turn = turn_from(capture.FIXTURES / "openai-v2" / "rag_docs_in_prompt.json")
    assert turn.question == capture.SCENARIOS["rag_docs_in_prompt"].question
    assert turn.sources["question"][1:3] == ["retrieve", "input_text"]


@pytest.mark.unit
@pytest.mark.parametrize("instrumentor", sorted(capture.FRAMEWORKS))
def test_langchain_document_ids_come_from_metadata(instrumentor: str) -> None:
    turn = turn_from(capture.FIXTURES / instrumentor / "rag_retriever.json")
    assert [d.id for d in turn.documents] == [i for i, _ in capture.REFUND_DOCS]


@pytest.mark.unit
@pytest.mark.parametrize("instrumentor", sorted(capture.FRAMEWORKS))
def test_langchain_tool_arguments_come_from_the_models_request(instrumentor: str) -> None:
    turn = turn_from(capture.FIXTURES / instrumentor / "tool_agent.json")
    assert [c.arguments for c in turn.tool_calls] == [{"topic": "refunds"},
                                                      {"order_id": "A-1001"}]
    assert turn.sources["tool_calls.0.arguments"][2] == "requested_call"


@pytest.mark.unit
def test_a_streamed_agents_answer_comes_from_the_responses_object_it_logs() -> None:
    """The OpenAI Agents SDK logs a streamed Chat Completions call's output as a Responses API
    object, with no flattened output messages: the answer is its output text."""
    turn = turn_from(capture.FIXTURES / "openinference-openai-agents" / "streaming.json")
    assert turn.answer == capture.SCENARIOS["streaming"].answer
    assert turn.sources["answer"][1:3] == ["generation", "output_messages"]


@pytest.mark.unit
@pytest.mark.parametrize("native", [True, False], ids=["compiled", "python"])
def test_an_agents_hand_off_span_is_no_mapping_issue_but_a_nameless_tool_is(native: bool
                                                                            ) -> None:
    """The Agents SDK's hand-off (a TOOL span named "handoff to <agent>", no tool) is the
    hand-off step; a TOOL span of another name without a tool is still counted."""
    export = json.loads((capture.FIXTURES / "openinference-openai-agents" / "handoff.json")
                        .read_text())
    decoder = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16, native=native)
    body = json.dumps(export["traces"])
    batch = decoder.traces(decoder.parse_traces(body.encode(), "json"))
    assert "tool_without_name" not in batch.issues
    renamed = decoder.traces(decoder.parse_traces(
        body.replace('"handoff to billing"', '"transfer"').encode(), "json"))
    assert renamed.issues["tool_without_name"] == 1
