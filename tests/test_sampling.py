"""Sampling: deterministic by trace id, rates per service / route, always-keep rules, backlog
adaptation, and sampling-weighted estimates that are unbiased under non-uniform rates."""

from __future__ import annotations

import contextlib
import json
import math
import random

import pytest
from opentelemetry.sdk.trace.sampling import Decision as OtelDecision
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from prometheus_client import CollectorRegistry

from monitor import _native
from monitor.assemble import Completed, TurnAssembler
from monitor.config import AssemblySettings, SamplingSettings
from monitor.emit.metrics import LabelGuard
from monitor.emit.verdicts import VerdictMetrics
from monitor.ingest.otlp import OtlpDecoder
from monitor.model import (
    AssistantTurn,
    Feedback,
    RetrievedDocument,
    SpanFacts,
    ToolCall,
    turn_json,
)
from monitor.sample import Sampler
from monitor.telemetry import Metrics
from monitor.verdict import JudgeResult, Verdict
from tests.corpus import capture
from tests.hostile import Mutator

pytestmark = pytest.mark.unit

DOC = [RetrievedDocument(id="d", content="text")]


def turn(trace_id: int, **fields) -> AssistantTurn:
    fields.setdefault("documents", DOC)
    return AssistantTurn(trace_id=f"{trace_id:032x}", **fields)


def test_same_decision_as_opentelemetry_trace_id_ratio_sampler() -> None:
    rng = random.Random(1)
    for rate in (0.01, 0.1, 0.5, 0.9):
        sampler = Sampler(SamplingSettings(default_rate=rate, always_keep=[]))
        otel = TraceIdRatioBased(rate)
        for _ in range(2000):
            trace_id = rng.getrandbits(128)
            ours = sampler.decide(turn(trace_id)).keep
            theirs = otel.should_sample(None, trace_id, "turn").decision
            assert ours == (theirs == OtelDecision.RECORD_AND_SAMPLE)


def test_a_conversations_turns_are_kept_or_not_together() -> None:
    """Each conversation decided once, whatever its turns' trace ids, at the rate; by trace id
    with whole_conversations off, as the assistant's head sampler decides."""
    rng = random.Random(2)
    whole = Sampler(SamplingSettings(default_rate=0.3, always_keep=[]))
    by_trace = Sampler(SamplingSettings(default_rate=0.3, always_keep=[],
                                        whole_conversations=False))
    kept = split = 0
    for n in range(1000):
        turns = [turn(rng.getrandbits(128), conversation_id=f"chat-{n}") for _ in range(3)]
        decisions = {whole.decide(t).keep for t in turns}
        assert len(decisions) == 1
        kept += decisions.pop()
        split += len({by_trace.decide(t).keep for t in turns}) > 1
    assert 250 <= kept <= 350 and split > 300


def test_rates_by_route_then_service_then_default() -> None:
    sampler = Sampler(SamplingSettings(default_rate=0.5, service_rates={"bot": 0.2},
                                       route_rates={"bot/billing": 1.0}, always_keep=[]))
    assert sampler.decide(turn(1, service="bot", route="billing")).probability == 1.0
    assert sampler.decide(turn(1, service="bot", route="search")).probability == 0.2
    assert sampler.decide(turn(1, service="other")).probability == 0.5
    kept = sum(sampler.decide(turn(random.Random(i).getrandbits(128), service="bot")).keep
               for i in range(4000))
    assert 0.17 < kept / 4000 < 0.23


def test_always_keep_rules_name_the_reason() -> None:
    sampler = Sampler(SamplingSettings(default_rate=0.0))
    cases = {
        "negative_feedback": turn(1, feedback=Feedback(score=-1)),
        "no_documents": turn(2, documents=[]),
        "error_status": turn(3, error="upstream 500"),
        "failed_tool_call": turn(4, tool_calls=[ToolCall(name="t", error="timeout")]),
    }
    for reason, case in cases.items():
        assert sampler.decide(case).reason == reason
        assert sampler.decide(case).probability == 1.0
    assert not sampler.decide(turn(5, feedback=Feedback(score=1))).keep
    # A turn with tool calls and no documents is not a RAG turn missing its documents.
    assert not sampler.decide(turn(6, documents=[], tool_calls=[ToolCall(name="t")])).keep


def test_backlog_scales_rates_down_and_records_the_probability() -> None:
    settings = SamplingSettings(default_rate=0.8, always_keep=["error_status"],
                                adaptive={"low_watermark": 100, "high_watermark": 1100,
                                          "min_factor": 0.1})
    sampler = Sampler(settings)
    assert sampler.backlog_factor(50) == 1.0
    assert math.isclose(sampler.backlog_factor(600), 0.55)
    assert sampler.backlog_factor(5000) == 0.1
    kept = [d for d in (sampler.decide(turn(random.Random(i).getrandbits(128)), backlog=600)
                        for i in range(2000)) if d.keep]
    assert all(math.isclose(d.probability, 0.8 * 0.55) for d in kept)
    assert sampler.decide(turn(1, error="x"), backlog=10**6).probability == 1.0


def _estimate_no_answer_rate(metrics: Metrics) -> float:
    """What the README's PromQL computes, read from the registry."""
    def total(name: str, **labels: str) -> float:
        return sum(s.value for m in metrics.registry.collect() for s in m.samples
                   if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))
    return (total("assistant_weighted_verdicts_total", metric="completeness", verdict="no_answer")
            / total("assistant_weighted_turns_total", metric="completeness"))


def test_weighted_estimate_is_unbiased_under_non_uniform_sampling() -> None:
    """Routes are sampled at 2% and 50%, and negative feedback (more frequent on no-answer turns)
    is always kept: the naive share of no-answers among judged turns is far off, the weighted
    estimate covers the true rate as often as its 95% confidence interval promises."""
    settings = SamplingSettings(route_rates={"bot/faq": 0.02, "bot/billing": 0.5},
                                always_keep=["negative_feedback"])
    sampler = Sampler(settings)
    covered, naive_errors, replications = 0, [], 30
    for seed in range(replications):
        rng = random.Random(seed)
        metrics = Metrics(CollectorRegistry())
        emit = VerdictMetrics(metrics, LabelGuard([], 10), LabelGuard([], 10))
        truth, kept = [], []
        for _ in range(4000):
            route = "faq" if rng.random() < 0.7 else "billing"
            no_answer = rng.random() < (0.05 if route == "faq" else 0.30)
            negative = rng.random() < (0.5 if no_answer else 0.05)
            t = turn(rng.getrandbits(128), service="bot", route=route,
                     feedback=Feedback(score=-1.0) if negative else None)
            truth.append(no_answer)
            decision = sampler.decide(t)
            if decision.keep:
                kept.append((no_answer, decision.probability))
                label = "no_answer" if no_answer else "complete"
                emit.record(t, decision.probability,
                            [JudgeResult("local", [Verdict("completeness", label=label)])])
        true_rate = sum(truth) / len(truth)
        estimate = _estimate_no_answer_rate(metrics)
        # Linearised variance of the ratio (Hajek) estimator under Poisson sampling.
        weight_sum = sum(1 / p for _, p in kept)
        variance = sum((1 - p) / p**2 * (y - estimate) ** 2 for y, p in kept) / weight_sum**2
        covered += abs(estimate - true_rate) <= 1.96 * math.sqrt(variance)
        naive_errors.append(sum(y for y, _ in kept) / len(kept) - true_rate)
    assert covered >= 0.85 * replications, f"95% CI covered the truth {covered}/{replications}"
    assert min(naive_errors) > 0.1  # the unweighted share overstates no-answers every time


def _bodies() -> list[tuple[bytes, str]]:
    """Every trace of the real-instrumentor corpus and 600 hostile mutations, as OTLP bodies."""
    bodies = []
    for path in sorted(capture.FIXTURES.glob("*/*.expected.json")):
        export = json.loads(path.with_name(path.name.replace(".expected", "")).read_text())
        bodies.append((json.dumps(export["traces"]).encode(), "json"))
    fuzz = Mutator(seed=5, fresh_trace_ids=True)
    return bodies + [(fuzz.protobuf(), "proto") for _ in range(600)]


def _assembled(assembler: TurnAssembler, bodies: list[tuple[bytes, str]],
               backlog: int) -> list[Completed]:
    """`bodies` through `assembler`, decoded afresh (an assembler merges into the facts it
    holds), then a turn with negative feedback, then everything left completed."""
    decoder = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16)
    done = []
    for body, fmt in bodies:
        with contextlib.suppress(Exception):  # a refused body makes no turn
            done.append(assembler.add(decoder.decode("traces", body, fmt).facts, backlog))
    done.append(assembler.add([SpanFacts(trace_id=b"\1" * 16, span_id=b"\1" * 8, is_root=True,
                                         feedback=Feedback(score=-0.5), question="q?")], backlog))
    done.append(assembler.add(_awkward_values(), backlog))
    assembler.clock = lambda: 10.0**9  # everything due
    done.append(assembler.expire(backlog))
    return done


def _awkward_values() -> list[SpanFacts]:
    """A turn whose values JSON spells with care: floats that are not finite, integers beyond
    64 bits, escapes, text outside ASCII, nesting, a tool call's error (kept by its rule)."""
    trace_id, text = b"\2" * 16, 'a "quote", a \\ and \x00\x1f\t\n\u2028 é 漢 😀'
    arguments = {"nan": math.nan, "inf": -math.inf, "big": 2**80, "small": 1e-7, "large": 1e22,
                 "whole": 3.0, "nested": [[{"k": [text, None, True, -1]}]], text: {}}
    return [
        SpanFacts(trace_id=trace_id, span_id=b"\2" * 8, is_root=True, question=text, answer="",
                  start_ns=1, end_ns=2**63, tenant="t",
                  documents=[RetrievedDocument(id=text, content=None, score=math.nan),
                             RetrievedDocument(score=math.inf), RetrievedDocument(score=-0.0)]),
        SpanFacts(trace_id=trace_id, span_id=b"\3" * 8, parent_span_id=b"\2" * 8, role="tool",
                  start_ns=5, end_ns=6, input_tokens=2**62, output_tokens=2**62,
                  tool=ToolCall(name=text, arguments=arguments, result=[math.nan, 2**64],
                                error="boom", call_id="c")),
    ]


def _stored(turn: AssistantTurn | _native.TurnRecord) -> tuple[object, ...]:
    """What the judge queue keeps of a turn: its ids, its document and the turn read back."""
    text = turn_json(turn)
    return (turn.trace_id, turn.service, turn.route, json.loads(text),
            AssistantTurn.model_validate_json(text))


def test_assembly_decides_as_the_sampler_and_builds_only_the_turns_python_needs() -> None:
    """The assembler takes the sampling decision on the turn it composed, so a turn decided
    against never becomes a Python object, and a kept one goes on as its JSON. Its decisions
    must be the sampler's on the built turn (with the backlog growing by each turn kept), its
    JSON must store what the built turn's `model_dump_json` stores, every turn must still be
    counted and listed, and the last turns of each batch are built for /api/turns whatever was
    decided."""
    settings = SamplingSettings(default_rate=0.4, service_rates={"travel-agent": 0.7},
                                adaptive={"low_watermark": 0, "high_watermark": 3000,
                                          "min_factor": 0.2})
    sampler = Sampler(settings)
    assembly = AssemblySettings(root_grace_s=0, max_traces=100_000, max_spans=1_000_000)
    bodies = _bodies()
    every = _assembled(TurnAssembler(assembly, Metrics(CollectorRegistry())), bodies, 150)
    sampling = TurnAssembler(assembly, Metrics(CollectorRegistry()), recent=3,
                             sampler=sampler.compiled)
    decided = _assembled(sampling, bodies, 150)

    assert len(every) == len(decided)
    reasons: set[str] = set()
    for all_of_batch, batch in zip(every, decided, strict=True):
        turns = [turn for turn, _, _ in all_of_batch.passed]
        assert batch.trace_ids == [bytes.fromhex(t.trace_id) for t in turns]
        expected, backlog = [], 150
        for turn in turns:
            decision = sampler.decide(turn, backlog)
            if decision.keep:
                expected.append((_stored(turn), decision.reason, decision.probability))
                backlog += 1
        assert all(isinstance(turn, _native.TurnRecord) for turn, _, _ in batch.passed)
        assert [(_stored(turn), reason, p) for turn, reason, p in batch.passed] == expected
        assert batch.not_sampled == len(turns) - len(expected)
        assert [_stored(turn) for turn in batch.recent] == [_stored(turn) for turn in turns[-3:]]
        held = {id(turn): turn.size for turn, _, _ in batch.passed} | {
            id(turn): turn.size for turn in batch.recent}  # a kept recent turn: one record
        assert batch.size == sum(held.values())  # what the turn queue's byte bound counts
        assert batch.received == all_of_batch.received
        assert (batch.no_question, batch.no_answer) == (all_of_batch.no_question,
                                                       all_of_batch.no_answer)
        reasons.update(reason for _, reason, _ in expected)
    assert sum(len(b.trace_ids) for b in decided) > 300
    assert 0.2 < sum(b.not_sampled for b in decided) / sum(len(b.trace_ids) for b in decided) < 0.8
    assert {"rate", "negative_feedback", "no_documents", "error_status",
            "failed_tool_call"} <= reasons


def test_a_sampler_refuses_an_unknown_rule_by_name() -> None:
    with pytest.raises(ValueError, match="unknown always-keep rule 'negative_feedbak': expected "
                       "one of negative_feedback, no_documents, error_status, failed_tool_call"):
        _native.TurnSampler(always_keep=["negative_feedbak"], default_rate=1.0, service_rates={},
                             route_rates={}, low_watermark=0, high_watermark=1, min_factor=0.5)
