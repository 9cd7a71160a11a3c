"""Drift detection: the statistics against known values, quiet on stationary streams, alerting
on a step and on a slow ramp, never on a handful of samples."""

from __future__ import annotations

import math
import random

import pytest
from prometheus_client import CollectorRegistry

from monitor.config import DriftSettings
from monitor.emit.drift import (
    DriftMonitor,
    StreamDetector,
    mann_whitney_z,
    proportion_z,
    weighted_z,
)
from monitor.emit.intervals import WeightedSums
from monitor.emit.metrics import LabelGuard
from monitor.model import AssistantTurn
from monitor.telemetry import Metrics
from monitor.verdict import JudgeResult, Verdict

pytestmark = pytest.mark.unit


def test_two_proportion_z_against_a_hand_computed_value() -> None:
    # 10/100 vs 25/100: pooled 0.175, se = sqrt(.175*.825*(2/100)) = 0.053735; z = 0.15/se
    z = proportion_z([1] * 10 + [0] * 90, [1] * 25 + [0] * 75)
    assert z == pytest.approx(0.15 / math.sqrt(0.175 * 0.825 * 0.02), rel=1e-9)


def test_mann_whitney_z_against_scipy_values() -> None:
    # scipy.stats.mannwhitneyu([1,2,3,4,5], [6,7,8,9,10], use_continuity=False): U = 0 for the
    # first sample, z = (0 - 12.5) / sqrt(5*5*11/12) = -2.611...; the recent (second) is larger.
    assert mann_whitney_z([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(
        12.5 / math.sqrt(25 * 11 / 12), rel=1e-9)
    # With ties: [1,1,2] vs [2,3,3]: ranks 1.5,1.5,3.5 | 3.5,5.5,5.5 -> U2 = 14.5 - 6 = 8.5;
    # tie term sum(t^3 - t) = 6*3 = 18; var = 9/12 * (7 - 18/30) = 4.8
    assert mann_whitney_z([1, 1, 2], [2, 3, 3]) == pytest.approx((8.5 - 4.5) / math.sqrt(4.8))


def _alerting_share(values: list[float], binary: bool, worse_up: bool, start: int = 0) -> float:
    detector = StreamDetector(DriftSettings(), binary, worse_up)
    alerts = 0
    for i, v in enumerate(values):
        detector.add(v)
        score = detector.score()
        alerts += i >= start and score is not None and score >= 3.0
    return alerts / (len(values) - start)


def _first_alert(values: list[float], binary: bool, worse_up: bool) -> int | None:
    detector = StreamDetector(DriftSettings(), binary, worse_up)
    for i, v in enumerate(values):
        detector.add(v)
        score = detector.score()
        if score is not None and score >= 3.0:
            return i
    return None


def test_quiet_on_stationary_streams() -> None:
    rng = random.Random(1)
    rates = [float(rng.random() < 0.1) for _ in range(5000)]
    scores = [rng.betavariate(6.8, 1.2) for _ in range(5000)]
    assert _alerting_share(rates, True, True) < 0.01
    assert _alerting_share(scores, False, False) < 0.01


def test_step_and_ramp_are_detected_soon_after_they_start() -> None:
    rng = random.Random(2)
    step = [float(rng.random() < (0.1 if t < 2000 else 0.25)) for t in range(4000)]
    first = _first_alert(step, True, True)
    assert first is not None and 2000 <= first < 2300
    ramp = [rng.betavariate(8 * m, 8 * (1 - m)) for m in
            (0.85 - 0.15 * min(max(t - 2000, 0) / 2000, 1) for t in range(6000))]
    first = _first_alert(ramp, False, False)
    assert first is not None and 2000 <= first < 4500
    improving = [float(rng.random() < (0.3 if t < 2000 else 0.1)) for t in range(4000)]
    assert _first_alert(improving, True, True) is None  # fewer no-answers is not an alert


def test_a_handful_of_bad_samples_never_alerts_and_labels_are_bounded() -> None:
    metrics = Metrics(CollectorRegistry())
    monitor = DriftMonitor(DriftSettings(min_samples=30), metrics, LabelGuard([], 5),
                           LabelGuard([], 5))
    for n in range(25):
        turn = AssistantTurn(trace_id=f"{n + 1:032x}", service="bot", route="faq")
        monitor.observe(turn, [JudgeResult("local", [Verdict("completeness", label="no_answer")])])
    assert metrics.registry.get_sample_value(
        "assistant_drift_alert", {"metric": "no_answer_rate", "service": "bot", "route": "faq"}
    ) is None  # not enough samples in either window to say anything


def _no_answer_alerts(stream: list[tuple[bool, float]]) -> list[float | None]:
    """The alert gauge after each (no-answer?, inclusion probability) judged turn."""
    metrics = Metrics(CollectorRegistry())
    monitor = DriftMonitor(DriftSettings(), metrics, LabelGuard([], 5), LabelGuard([], 5))
    alerts = []
    for n, (no_answer, probability) in enumerate(stream):
        turn = AssistantTurn(trace_id=f"{n + 1:032x}", service="bot", route="faq")
        label = "no_answer" if no_answer else "complete"
        monitor.observe(turn, [JudgeResult("local", [Verdict("completeness", label=label)])],
                        probability)
        alerts.append(metrics.registry.get_sample_value(
            "assistant_drift_alert", {"metric": "no_answer_rate", "service": "bot",
                                      "route": "faq"}))
    return alerts


def test_a_few_heavily_weighted_turns_do_not_alert_but_a_real_shift_does() -> None:
    rng = random.Random(3)
    before = [(rng.random() < 0.1, 1.0) for _ in range(500)]
    # Then every 10th judged turn comes from a route sampled at 2% (weight 50), and happens to
    # be a no-answer: the weighted rate of the recent window jumps from 10% to over 80%, but it
    # rests on ten turns (Kish's effective size about 14, under min_samples = 30).
    after = [(True, 0.02) if i % 10 == 9 else (rng.random() < 0.1, 1.0) for i in range(100)]
    recent = WeightedSums.of([float(y) for y, _ in after], [p for _, p in after])
    assert recent.mean > 0.8 and recent.kish_n < 30
    assert 1.0 not in _no_answer_alerts(before + after)

    # A real shift, 10% to 30%, with weights 1 and 2 mixed: enough evidence, it alerts.
    mixed = [(rng.random() < (0.1 if i < 500 else 0.3), 0.5 if i % 5 == 0 else 1.0)
             for i in range(800)]
    alerts = _no_answer_alerts(mixed)
    assert 1.0 not in alerts[:500] and 1.0 in alerts[500:]


def test_weighted_window_test_against_a_hand_computed_value() -> None:
    # Reference: 10% of 200 equally weighted turns; recent: 30% of 100. Unpooled z.
    reference = WeightedSums.of([1.0] * 20 + [0.0] * 180)
    recent = WeightedSums.of([1.0] * 30 + [0.0] * 70)
    expected = 0.2 / math.sqrt(0.1 * 0.9 / 200 + 0.3 * 0.7 / 100)
    assert weighted_z(reference, recent) == pytest.approx(expected)
