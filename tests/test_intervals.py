"""95 % intervals of sampling-weighted rates and means: the formula against known values, and
intervals computed from the exposed counters that cover the truth about as often as promised."""

from __future__ import annotations

import math
import random

import pytest
from prometheus_client import CollectorRegistry

from monitor.agreement import (
    agreement_interval,
    agreement_rate,
    cohen_kappa,
    correlation_interval,
    kappa_interval,
)
from monitor.config import SamplingSettings
from monitor.emit.intervals import WeightedSums, wilson
from monitor.emit.metrics import LabelGuard
from monitor.emit.verdicts import VerdictMetrics
from monitor.model import AssistantTurn, Feedback, RetrievedDocument
from monitor.sample import Sampler
from monitor.telemetry import Metrics
from monitor.verdict import JudgeResult, Verdict

pytestmark = pytest.mark.unit


def test_wilson_against_a_textbook_value() -> None:
    # Newcombe (1998), Statistics in Medicine 17: 81/263 -> 0.2553 to 0.3662.
    low, high = wilson(81 / 263, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    assert wilson(0.0, 10)[0] == 0.0 and 0.25 < wilson(0.0, 10)[1] < 0.3  # zero still has a top


def test_equal_weights_give_the_plain_binomial_interval() -> None:
    sums = WeightedSums.of([1.0] * 30 + [0.0] * 70)
    assert sums.n_eff == pytest.approx(100)
    assert sums.variance == pytest.approx(0.3 * 0.7 / 100)
    estimate = sums.estimate()
    assert (estimate.low, estimate.high) == pytest.approx(wilson(0.3, 100))


def test_heavy_weights_shrink_the_effective_sample() -> None:
    # 90 turns kept at p = 1 and 10 at p = 0.02 (weight 50): the ten dominate the estimate.
    values = [0.0] * 90 + [1.0] * 5 + [0.0] * 5
    sums = WeightedSums.of(values, [1.0] * 90 + [0.02] * 10)
    assert sums.mean == pytest.approx(250 / 590)
    assert sums.n_eff < 15
    assert sums.estimate().high - sums.estimate().low > 0.4


def _totals(metrics: Metrics, metric: str, verdict: str | None = None) -> WeightedSums:
    """The five sums the interval needs, read from the exposed counters (as PromQL would)."""
    def total(name: str, **labels: str) -> float:
        return sum(s.value for m in metrics.registry.collect() for s in m.samples
                   if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))
    if verdict is not None:  # a rate: y is 0 or 1, so y² = y
        hits = total("assistant_sq_weighted_verdicts_total", metric=metric, verdict=verdict)
        return WeightedSums(
            w=total("assistant_weighted_turns_total", metric=metric),
            wy=total("assistant_weighted_verdicts_total", metric=metric, verdict=verdict),
            w2=total("assistant_sq_weighted_turns_total", metric=metric), w2y=hits, w2y2=hits)
    return WeightedSums(
        w=total("assistant_weighted_turns_total", metric=metric),
        wy=total("assistant_weighted_score_total", metric=metric),
        w2=total("assistant_sq_weighted_turns_total", metric=metric),
        w2y=total("assistant_sq_weighted_score_total", metric=metric),
        w2y2=total("assistant_sq_weighted_score_squared_total", metric=metric))


def test_intervals_from_the_counters_cover_the_truth_at_the_nominal_rate() -> None:
    """Routes sampled at 5% and 50%, negative feedback (more frequent on bad turns) always kept:
    the weights are unequal and correlated with the outcome. Over 200 replications the 95%
    intervals of the no-answer rate and of mean groundedness, computed from the counters by the
    documented formula, cover the process's true values close to 95% of the time; Kish's
    effective sample size alone, which ignores that correlation, would be far too wide."""
    sampler = Sampler(SamplingSettings(route_rates={"bot/faq": 0.05, "bot/billing": 0.5},
                                       always_keep=["negative_feedback"]))
    shares = {"faq": 0.7, "billing": 0.3}
    no_answer_p = {"faq": 0.05, "billing": 0.30}
    grounded_mean = {"faq": 0.9, "billing": 0.6}
    true_rate = sum(shares[r] * no_answer_p[r] for r in shares)
    true_mean = sum(shares[r] * grounded_mean[r] for r in shares)
    covered = {"rate": 0, "mean": 0, "kish": 0}
    replications = 200
    for seed in range(replications):
        rng = random.Random(seed)
        metrics = Metrics(CollectorRegistry())
        emit = VerdictMetrics(metrics, LabelGuard([], 10), LabelGuard([], 10))
        for _ in range(3000):
            route = "faq" if rng.random() < shares["faq"] else "billing"
            no_answer = rng.random() < no_answer_p[route]
            m = grounded_mean[route]
            grounded = rng.betavariate(4 * m, 4 * (1 - m))
            negative = rng.random() < (0.5 if no_answer else 0.05)
            turn = AssistantTurn(trace_id=f"{rng.getrandbits(128):032x}", service="bot",
                                 route=route, documents=[RetrievedDocument(id="d", content="x")],
                                 feedback=Feedback(score=-1.0) if negative else None)
            decision = sampler.decide(turn)
            if decision.keep:
                label = "no_answer" if no_answer else "complete"
                emit.record(turn, decision.probability, [JudgeResult("local", [
                    Verdict("completeness", label=label),
                    Verdict("groundedness", score=grounded)])])
        rate = _totals(metrics, "completeness", "no_answer")
        mean = _totals(metrics, "groundedness")
        estimate = rate.estimate()
        covered["rate"] += estimate.low <= true_rate <= estimate.high
        estimate = mean.estimate()
        covered["mean"] += estimate.low <= true_mean <= estimate.high
        low, high = wilson(rate.mean, rate.kish_n)
        covered["kish"] += low <= true_rate <= high
    share = {k: v / replications for k, v in covered.items()}
    assert 0.91 <= share["rate"] <= 0.985, share
    assert 0.91 <= share["mean"] <= 0.985, share
    assert share["kish"] > 0.985, share  # the naive effective size over-covers: too wide


def test_no_turns_has_no_estimate() -> None:
    assert math.isnan(WeightedSums().mean)
    assert wilson(math.nan, 0) == (0.0, 1.0)


def test_agreement_intervals_for_the_calibration_report() -> None:
    # Spearman 0.5 on 30 items: z = atanh(0.5) ± 1.96 * sqrt((1 + 0.125) / 27) (Bonett-Wright).
    half = 1.959964 * math.sqrt(1.125 / 27)
    assert correlation_interval(0.5, 30, "spearman_rho") == pytest.approx(
        (math.tanh(math.atanh(0.5) - half), math.tanh(math.atanh(0.5) + half)))
    assert all(math.isnan(v) for v in correlation_interval(0.5, 4, "kendall_tau"))  # too few
    rng = random.Random(0)
    people = [rng.choice("ab") for _ in range(200)]
    judge = [p if rng.random() < 0.8 else rng.choice("ab") for p in people]
    kappa = cohen_kappa(people, judge)
    low, high = kappa_interval(people, judge)
    assert low < kappa < high and 0.1 < high - low < 0.3
    assert agreement_interval(people, judge) == wilson(agreement_rate(people, judge), 200)
