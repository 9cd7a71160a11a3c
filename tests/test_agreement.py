"""The agreement statistics against known values."""

from __future__ import annotations

import math

import pytest

from monitor.agreement import (
    agreement_rate,
    cohen_kappa,
    confusion,
    krippendorff_alpha,
    pairwise_human_agreement,
    rank_correlations,
)

pytestmark = pytest.mark.unit


def test_cohen_kappa_textbook_example() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert agreement_rate(a, b) == pytest.approx(0.7)
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == 1.0
    assert math.isnan(cohen_kappa(["x"] * 3, ["x"] * 3))  # one category: undefined


def test_krippendorff_alpha_nominal_example_from_krippendorff_2011() -> None:
    # "Computing Krippendorff's Alpha-Reliability" (2011), the 4 coders x 12 units example with
    # missing values: alpha (nominal) = 0.743.
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]
    c = [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]
    units = list(zip(a, b, c, d, strict=True))
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha([(1, 1), (2, 2), (1, 1)]) == 1.0


def test_rank_correlations_small_cases() -> None:
    # Perfectly monotone: both 1. One swap among 4 items: tau = (5 - 1) / 6, rho = 1 - 6*2/60.
    assert rank_correlations([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(
        {"kendall_tau": 1.0, "spearman_rho": 1.0})
    assert rank_correlations([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(
        {"kendall_tau": 4 / 6, "spearman_rho": 0.8})


def test_confusion_and_human_ceiling() -> None:
    assert confusion(["a", "a", "b"], ["a", "b", "b"], ["a", "b"]) == [[1, 1], [0, 1]]
    assert pairwise_human_agreement([("x", "x", "y"), ("x", None, "x")]) == pytest.approx(2 / 4)
