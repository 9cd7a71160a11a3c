"""95 % intervals for sampling-weighted rates and means, from five running sums.

    sums = WeightedSums()
    sums.add(value=1.0, probability=0.02)          # one judged turn, kept with probability p
    sums.estimate()                                # Estimate(value, low, high, n_eff)

Each judged turn has weight w = 1/p. The estimate is the Hájek ratio R = Σwy / Σw. Its variance
comes from linearisation, with the with-replacement approximation (which also counts the
variation of the process itself, so it stays honest when every turn is kept):

    V = Σ w²(y − R)² / (Σw)² = (Σw²y² − 2R Σw²y + R² Σw²) / (Σw)²

The interval is Wilson's score interval on the effective sample size n_eff = R(1 − R) / V: the
number of equally weighted turns that would give the same variance (for a rate with equal
weights, exactly the count). When V is 0 (every turn agrees, or a single turn) n_eff falls back
to Kish's (Σw)² / Σw², so a run of zeros still has an upper bound above zero. The sidecar exports
the same sums as counters (assistant_weighted_*, assistant_sq_weighted_*) and the PromQL in
deploy/prometheus/rules.yml computes the same formula (docs/configuration.md, "Intervals").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    n_eff: float

    def as_dict(self, digits: int = 4) -> dict[str, float]:
        return {"value": round(self.value, digits), "low": round(self.low, digits),
                "high": round(self.high, digits), "n_eff": round(self.n_eff, 1)}


def wilson(rate: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion `rate` observed on `n` (possibly effective) trials."""
    if n <= 0 or math.isnan(rate):
        return 0.0, 1.0
    rate = min(max(rate, 0.0), 1.0)
    z2 = z * z
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n))
    return max(centre - half, 0.0), min(centre + half, 1.0)


@dataclass
class WeightedSums:
    """Σw, Σwy, Σw², Σw²y, Σw²y² over turns with value y in [0, 1] and weight w = 1/p."""

    w: float = 0.0
    wy: float = 0.0
    w2: float = 0.0
    w2y: float = 0.0
    w2y2: float = 0.0

    def add(self, value: float, probability: float = 1.0) -> None:
        w = 1.0 / probability
        self.w += w
        self.wy += w * value
        self.w2 += w * w
        self.w2y += w * w * value
        self.w2y2 += w * w * value * value

    @classmethod
    def of(cls, values: Iterable[float], probabilities: Iterable[float] | None = None
           ) -> WeightedSums:
        sums = cls()
        values = list(values)
        for value, p in zip(values, probabilities or [1.0] * len(values), strict=True):
            sums.add(value, p)
        return sums

    @property
    def mean(self) -> float:
        return self.wy / self.w if self.w else math.nan

    @property
    def variance(self) -> float:
        """Linearised variance of the ratio estimator."""
        if not self.w:
            return math.nan
        r = self.mean
        return max(self.w2y2 - 2 * r * self.w2y + r * r * self.w2, 0.0) / self.w**2

    @property
    def kish_n(self) -> float:
        return self.w**2 / self.w2 if self.w2 else 0.0

    @property
    def n_eff(self) -> float:
        r, v = self.mean, self.variance
        if v > 0 and 0 < r < 1:
            return r * (1 - r) / v
        return self.kish_n

    def estimate(self, z: float = Z95) -> Estimate:
        n = self.n_eff
        low, high = wilson(self.mean, n, z)
        return Estimate(self.mean, low, high, n)


def rate_interval(successes: int, trials: int) -> dict[str, float]:
    """A plain proportion with its Wilson 95 % interval, for the reports."""
    rate = successes / trials if trials else math.nan
    low, high = wilson(rate, trials)
    return Estimate(rate, low, high, trials).as_dict()
