"""The AUC every bench and the model card report: the chance a positive scores above a negative,
a tie counting half (a turn score takes few values, so ties are common)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training" / "claim_support"))
from figures import auc  # noqa: E402

pytestmark = pytest.mark.unit


def test_a_tie_between_a_positive_and_a_negative_counts_half() -> None:
    assert auc(np.array([1, 0]), np.array([0.5, 0.5])) == 0.5
    # one positive above both negatives, the other tied with one and above the other
    assert auc(np.array([1, 1, 0, 0]), np.array([1.0, 0.5, 0.5, 0.0])) == (1 + 1 + 0.5 + 1) / 4


def test_it_is_the_pairwise_share_whatever_the_order() -> None:
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 4, 60).astype(float)  # few values: many ties
    labels = np.arange(60) % 2
    positives, negatives = scores[labels == 1], scores[labels == 0]
    pairwise = ((positives[:, None] > negatives).mean()
                + 0.5 * (positives[:, None] == negatives).mean())
    for order in (np.arange(60), rng.permutation(60)):
        assert auc(labels[order], scores[order]) == pairwise
