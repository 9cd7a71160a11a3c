"""In-process drift detection on every judged metric stream, per service and route.

    drift = DriftMonitor(settings.drift, metrics, services, routes)
    drift.observe(turn, results)   # after each judged turn

For each stream the last `recent_size` judged turns are compared with the `reference_size`
turns before them, with a test that fits the data:

- rates (a turn is a no-answer, or not): a two-proportion z-test;
- scores (groundedness, context relevance, tool use, 0..1): a Mann-Whitney rank test (normal
  approximation with tie correction), which makes no assumption about the score's distribution;

plus a one-sided CUSUM on each value standardised against the reference window, which
accumulates small persistent shifts (a slow ramp) that a window test, whose reference follows
the drift, can miss.

`assistant_drift_score{metric,service,route}` is a z-like number oriented so that positive means
worse: the window test's z, or the CUSUM statistic scaled so that its alarm threshold maps to
`z_threshold`, whichever is larger. A score of 3 is a one-sided p ≈ 0.0013 for the window test.
`assistant_drift_alert` is 1 while the score is at or above `z_threshold` and both windows hold at
least `min_samples` turns' worth of evidence, so a handful of noisy samples never pages anyone.

Turns are sampled with unequal probabilities p (always-keep rules, per-route rates, the backlog
factor). Where the weights 1/p in the windows differ, "turns' worth" is Kish's effective sample
size (Σw)²/Σw², not the raw count, and the window test compares the weighted (Hájek) means with
their linearised variances (monitor/emit/intervals.py): z = (m_recent − m_ref) / √(V_recent +
V_ref). A few heavily weighted turns then make a wide interval, not an alert.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable

from monitor.config import DriftSettings
from monitor.contract import QUALITY, turn_values
from monitor.emit.intervals import WeightedSums
from monitor.emit.metrics import LabelGuard, VerdictTelemetry
from monitor.model import AssistantTurn
from monitor.verdict import JudgeResult


def proportion_z(reference: Iterable[float], recent: Iterable[float]) -> float:
    ref, rec = list(reference), list(recent)
    n1, n2 = len(ref), len(rec)
    p1, p2 = sum(ref) / n1, sum(rec) / n2
    pooled = (sum(ref) + sum(rec)) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 0.0
    return (p2 - p1) / se


def mann_whitney_z(reference: Iterable[float], recent: Iterable[float]) -> float:
    """z of the recent window's rank sum: positive when recent values tend to be larger."""
    ref, rec = list(reference), list(recent)
    n1, n2 = len(ref), len(rec)
    values = sorted([(v, 0) for v in ref] + [(v, 1) for v in rec])
    ranks = [0.0] * len(values)
    ties = 0.0
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1][0] == values[i][0]:
            j += 1
        rank = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[k] = rank
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    rank_sum = sum(r for r, (_, group) in zip(ranks, values, strict=True) if group == 1)
    u = rank_sum - n2 * (n2 + 1) / 2
    n = n1 + n2
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return 0.0
    return (u - n1 * n2 / 2) / math.sqrt(variance)


def weighted_z(reference: WeightedSums, recent: WeightedSums) -> float:
    """z of the difference of two weighted means: positive when the recent one is larger."""
    se = math.sqrt(reference.variance + recent.variance)
    return (recent.mean - reference.mean) / se if se > 0 else 0.0


class StreamDetector:
    def __init__(self, settings: DriftSettings, binary: bool, higher_is_worse: bool) -> None:
        self.settings = settings
        self.binary = binary
        self.sign = 1.0 if higher_is_worse else -1.0
        self.recent: deque[float] = deque(maxlen=settings.recent_size)
        self.reference: deque[float] = deque(maxlen=settings.reference_size)
        self.recent_p: deque[float] = deque(maxlen=settings.recent_size)
        self.reference_p: deque[float] = deque(maxlen=settings.reference_size)
        self.cusum = 0.0

    def add(self, value: float, probability: float = 1.0) -> None:
        if len(self.recent) == self.recent.maxlen:
            self.reference.append(self.recent[0])
            self.reference_p.append(self.recent_p[0])
        self.recent.append(value)
        self.recent_p.append(probability)
        if len(self.reference) >= self.settings.min_samples:
            mean = sum(self.reference) / len(self.reference)
            var = sum((x - mean) ** 2 for x in self.reference) / (len(self.reference) - 1)
            sd = math.sqrt(var) if var > 0 else 0.05  # a constant reference still has a scale
            step = self.sign * (value - mean) / sd - self.settings.cusum_k
            self.cusum = max(0.0, self.cusum + step)

    @property
    def weighted(self) -> bool:
        return len(set(self.recent_p) | set(self.reference_p)) > 1

    @property
    def ready(self) -> bool:
        if not self.weighted:
            return min(len(self.recent), len(self.reference)) >= self.settings.min_samples
        return min(WeightedSums.of(self.recent, self.recent_p).kish_n,
                   WeightedSums.of(self.reference, self.reference_p).kish_n
                   ) >= self.settings.min_samples

    def score(self) -> float | None:
        if not self.ready:
            return None
        if self.weighted:
            window = self.sign * weighted_z(WeightedSums.of(self.reference, self.reference_p),
                                            WeightedSums.of(self.recent, self.recent_p))
        else:
            test = proportion_z if self.binary else mann_whitney_z
            window = self.sign * test(self.reference, self.recent)
        sequential = self.cusum / self.settings.cusum_h * self.settings.z_threshold
        return max(window, sequential)


class DriftMonitor:
    def __init__(self, settings: DriftSettings, metrics: VerdictTelemetry, services: LabelGuard,
                 routes: LabelGuard) -> None:
        self.settings = settings
        self.metrics = metrics
        self.services = services
        self.routes = routes
        self.detectors: dict[tuple[str, str, str], StreamDetector] = {}
        self.scored: set[tuple[str, str, str]] = set()

    def observe(self, turn: AssistantTurn, results: list[JudgeResult],
                probability: float = 1.0) -> None:
        service, route = self.services(turn.service), self.routes(turn.route)
        for stream, value in turn_values(turn, results).items():
            key = (stream, service, route)
            detector = self.detectors.get(key)
            if detector is None:
                quality = QUALITY[stream]
                detector = self.detectors[key] = StreamDetector(self.settings, quality.is_rate,
                                                                quality.higher_is_worse)
            detector.add(value, probability)
            score = detector.score()
            if score is None:
                if key in self.scored:  # the evidence thinned out (heavily weighted turns)
                    self.metrics.drift_alert.labels(stream, service, route).set(0.0)
                continue
            self.scored.add(key)
            self.metrics.drift_score.labels(stream, service, route).set(round(score, 4))
            self.metrics.drift_alert.labels(stream, service, route).set(
                float(score >= self.settings.z_threshold))
