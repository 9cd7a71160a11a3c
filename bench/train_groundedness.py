"""Train the local judge's claim-support classifier, reproducibly, on VitaminC.

    python bench/train_groundedness.py --bigbench bigbench-1.0.0.tar.gz [--pairs 4000]

Features of a (claim, evidence) pair, all cheap on CPU: lexical support, e5 cosine, the share of
the claim's numbers missing from the evidence, and a negation mismatch. A class-balanced
logistic regression is fitted on the articles of the train split (split by title hash, seed
fixed) and written to monitor/judges/models/claim_support.json with its held-out balanced
accuracy; the local judge loads it. VitaminC is contrastive (refuting claims share most words
with their evidence), which is what makes this hard for surface features.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from calibrate_local import balanced_accuracy, fit_logistic, is_train, vitaminc  # noqa: E402

from monitor.judges.embeddings import Embedder  # noqa: E402
from monitor.judges.text import lexical_support, negation_mismatch, number_mismatch  # noqa: E402

FEATURES = ["lexical", "cosine", "number_mismatch", "negation_mismatch"]
MODEL = ROOT / "monitor" / "judges" / "models" / "claim_support.json"


def features(embedder: Embedder, claims: list[str], evidence: list[str]) -> np.ndarray:
    cosine = np.sum(embedder.passage(claims) * embedder.passage(evidence), axis=1)
    return np.column_stack([
        [lexical_support(c, e) for c, e in zip(claims, evidence, strict=True)], cosine,
        [number_mismatch(c, e) for c, e in zip(claims, evidence, strict=True)],
        [negation_mismatch(c, e) for c, e in zip(claims, evidence, strict=True)]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bigbench", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    rows = vitaminc(args.bigbench, args.pairs, args.seed)
    x = features(Embedder(), [r[2] for r in rows], [r[1] for r in rows])
    y = np.array([r[3] for r in rows])
    train = np.array([is_train(r[0]) for r in rows])
    w = fit_logistic(x[train], y[train])
    p = 1 / (1 + np.exp(-(w[0] + x @ w[1:])))
    predicted = (p >= 0.5).astype(int)
    train_ba = balanced_accuracy(y[train], predicted[train])
    test_ba = balanced_accuracy(y[~train], predicted[~train])
    MODEL.parent.mkdir(parents=True, exist_ok=True)
    MODEL.write_text(json.dumps({
        "features": FEATURES, "bias": round(float(w[0]), 4),
        "weights": [round(float(v), 4) for v in w[1:]],
        "trained_on": f"VitaminC (bigbench sdist), {int(train.sum())} train / "
                      f"{int((~train).sum())} test pairs, split by title, seed {args.seed}",
        "balanced_accuracy": {"train": round(train_ba, 4), "test": round(test_ba, 4)}}, indent=2)
        + "\n")
    print(f"weights {dict(zip(['bias', *FEATURES], np.round(w, 3), strict=True))}")
    print(f"balanced accuracy: train {train_ba:.3f}, test {test_ba:.3f} "
          f"(test n={int((~train).sum())}); written to {MODEL.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
