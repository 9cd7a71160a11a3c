"""Agreement statistics between a judge and people (and between people).

    cohen_kappa(["a", "b"], ["a", "a"])            # chance-corrected agreement of two raters
    krippendorff_alpha([["a", "a", None], ...])   # units x raters, nominal, missing allowed
    rank_correlations([0.1, 0.9], [0, 1])          # Kendall tau-b and Spearman rho (scipy)

All return plain floats (NaN where undefined, e.g. a single category everywhere). Each figure has
a 95% interval beside it: Wilson's for the agreement rate, a percentile bootstrap (fixed seed)
for Cohen's kappa, and Fisher's z for the rank correlations (Bonett & Wright 2000's standard
error for Spearman, Fieller et al. 1957's for Kendall).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Hashable, Sequence

from scipy import stats

from monitor.emit.intervals import wilson

Interval = tuple[float, float]
NO_INTERVAL: Interval = (math.nan, math.nan)


def agreement_rate(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else math.nan


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """(p_o - p_e) / (1 - p_e), p_e from each rater's own label frequencies."""
    n = len(a)
    if n == 0:
        return math.nan
    observed = agreement_rate(a, b)
    fa, fb = Counter(a), Counter(b)
    expected = sum(fa[c] * fb[c] for c in set(fa) | set(fb)) / (n * n)
    return math.nan if expected == 1 else (observed - expected) / (1 - expected)


def confusion(truth: Sequence[Hashable], predicted: Sequence[Hashable],
              labels: Sequence[Hashable]) -> list[list[int]]:
    """Rows: the truth (people), columns: the prediction (judge), in `labels` order."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for t, p in zip(truth, predicted, strict=True):
        matrix[index[t]][index[p]] += 1
    return matrix


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]]) -> float:
    """Nominal Krippendorff's alpha; each unit lists every rater's value (None: not rated).
    Units with fewer than two values do not count."""
    coincidences: Counter[tuple[Hashable, Hashable]] = Counter()
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            coincidences[(values[i], values[j])] += 1 / (m - 1)
    totals: Counter[Hashable] = Counter()
    for (c, _), count in coincidences.items():
        totals[c] += count
    n = sum(totals.values())
    disagreement = sum(count for (c, k), count in coincidences.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if n <= 1 or expected == 0:
        return math.nan
    return 1 - (n - 1) * disagreement / expected


def rank_correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return {"kendall_tau": math.nan, "spearman_rho": math.nan}
    return {"kendall_tau": float(stats.kendalltau(x, y).statistic),
            "spearman_rho": float(stats.spearmanr(x, y).statistic)}


def pairwise_human_agreement(ratings: Sequence[Sequence[Hashable | None]]) -> float:
    """The human-human ceiling: mean agreement over every pair of raters who rated a unit."""
    agree = pairs = 0
    for unit in ratings:
        values = [v for v in unit if v is not None]
        for a, b in itertools.combinations(values, 2):
            agree += a == b
            pairs += 1
    return agree / pairs if pairs else math.nan


def agreement_interval(a: Sequence[Hashable], b: Sequence[Hashable]) -> Interval:
    return wilson(agreement_rate(a, b), len(a)) if a else NO_INTERVAL


def kappa_interval(a: Sequence[Hashable], b: Sequence[Hashable], resamples: int = 1000,
                   seed: int = 0) -> Interval:
    """Percentile bootstrap over items (resamples where kappa is undefined are left out)."""
    n = len(a)
    if n < 2:
        return NO_INTERVAL
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        kappa = cohen_kappa([a[i] for i in picks], [b[i] for i in picks])
        if not math.isnan(kappa):
            values.append(kappa)
    if len(values) < resamples // 2:
        return NO_INTERVAL
    values.sort()
    return values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]


def correlation_interval(r: float, n: int, kind: str) -> Interval:
    """Fisher z interval of a Spearman ("spearman_rho") or Kendall ("kendall_tau") coefficient."""
    if math.isnan(r) or n < 5 or abs(r) >= 1:
        return NO_INTERVAL
    se = (math.sqrt((1 + r * r / 2) / (n - 3)) if kind == "spearman_rho"
          else math.sqrt(0.437 / (n - 4)))
    z = math.atanh(r)
    return math.tanh(z - 1.959964 * se), math.tanh(z + 1.959964 * se)
