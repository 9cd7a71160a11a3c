"""Sampling: deterministic by trace id, rates per service / route, always-keep rules, backlog
adaptation, and sampling-weighted estimates that are unbiased under non-uniform rates."""

from __future__ import annotations

import math
import random

from opentelemetry.sdk.trace.sampling import Decision as OtelDecision
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from prometheus_client import CollectorRegistry

from monitor.config import SamplingSettings
from monitor.emit.metrics import LabelGuard
from monitor.emit.verdicts import VerdictMetrics
from monitor.model import AssistantTurn, Feedback, RetrievedDocument, ToolCall
from monitor.sample import Sampler
from monitor.telemetry import Metrics
from monitor.verdict import JudgeResult, Verdict

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


def test_rates_by_route_then_service_then_default() -> None:
    sampler = Sampler(SamplingSettings(default_rate=0.5, service_rates={"bot": 0.2},
                                       route_rates={"bot/billing": 1.0}, always_keep=[]))
    assert sampler.rate_for(turn(1, service="bot", route="billing")) == 1.0
    assert sampler.rate_for(turn(1, service="bot", route="search")) == 0.2
    assert sampler.rate_for(turn(1, service="other")) == 0.5
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
