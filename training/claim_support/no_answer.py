"""Fit the local judge's no-answer detector: the claim-support model's no-answer reading joined
with a logistic regression on the answer's sentence embedding.

    python training/claim_support/no_answer.py --data DIR [--write]

DIR is build_data.py's output (for its VitaminC claims, below); --write writes
monitor/judges/models/no_answer.json.

The two read an answer differently: the cross-encoder its words in order, the embedding (which
the judge computes anyway, for answer relevance) what it is about. On dev, each misses refusals the
other catches, so the detector is the two logits mixed, at no CPU beyond the judge's own.

Data: bench/data/no_answer.jsonl in the claim-support model's splits (build_data.no_answer_pairs:
by template and topic), each answer read as the judge reads it (its framing stripped, embedded
alone). Beside them, VitaminC claims of DIR's train and dev splits stand as answers: plain
statements of fact, which a support assistant's templates do not teach the regression are answers
(without them it took 4.7 % of TruthfulQA's answer choices for refusals, bench/calibrate_local.py).
Stages, all fitted without test:
1. the logistic regression on the training answers' embeddings and the training claims'
   (class-balanced, its L2 penalty chosen by five-fold cross-validation grouped by template);
2. on dev, the mix of the two logits and the threshold, by balanced accuracy as the judge decides
   (a few words with no negation or apology are an answer without either model), and the
   cascade's band;
3. test read once: balanced accuracy beside the claim-support model alone at its card's threshold.
Refit it whenever either model, or how the card reads them, changes: the judge refuses a file
fitted with other models or another reading (ClaimSupportModel.identity).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).parent)]

from build_data import no_answer_pairs  # noqa: E402
from export import cascade_band, no_answer_figures  # noqa: E402
from figures import balanced_accuracy, balancing_threshold  # noqa: E402

from monitor.judges.claim_support import ClaimSupportModel  # noqa: E402
from monitor.judges.embeddings import Embedder  # noqa: E402
from monitor.judges.no_answer import DETECTOR, NoAnswerDetector  # noqa: E402

DATA = ROOT / "bench" / "data" / "no_answer.jsonl"
SEED = 30
MIXES = [round(0.1 * i, 1) for i in range(11)]  # 0: the claim-support model alone
# VitaminC claims drawn as answers, by split. 1,200 to train since the second opinion reads every
# no-answer pair (400 before): with it the models take more plain statements for refusals
# (TruthfulQA 3.3 % with 400, 2.2 % with 1,200; training README).
STATEMENTS = {"train": 1200, "dev": 150}


def statements(data: Path, split: str) -> list[dict[str, Any]]:
    """VitaminC claims of `split` as answers (label 0), their tokenised punctuation rejoined
    ("85 % on Rotten Tomatoes ." -> "85% on Rotten Tomatoes.")."""
    claims = sorted({row["text_a"] for row in map(json.loads, (data / f"{split}.jsonl").open())
                     if row["source"] == "vitaminc"})
    chosen = random.Random(SEED).sample(claims, STATEMENTS[split])
    return [{"text_b": re.sub(r" ([.,;:%!?')])", r"\1", c), "label": 0, "group": f"vitaminc:{c}"}
            for c in chosen]


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Class-balanced logistic regression with an L2 penalty on the weights, by Newton's method."""
    sample = np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))
    design = np.hstack([x, np.ones((len(x), 1))])
    penalty = np.diag([2 * l2] * x.shape[1] + [0.0])
    theta = np.zeros(design.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-design @ theta))
        gradient = design.T @ (sample * (p - y)) + penalty @ theta
        hessian = (design * (sample * p * (1 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    return theta[:-1], float(theta[-1])


def choose_l2(x: np.ndarray, y: np.ndarray, groups: list[str]) -> float:
    names = sorted(set(groups))
    random.Random(SEED).shuffle(names)
    fold = np.array([{g: i % 5 for i, g in enumerate(names)}[g] for g in groups])
    scores = {}
    for l2 in (0.01, 0.03, 0.1, 0.3, 1.0):
        found = []
        for k in range(5):
            w, b = fit(x[fold != k], y[fold != k], l2)
            found.append(balanced_accuracy(y[fold == k], (x[fold == k] @ w + b >= 0).astype(int)))
        scores[l2] = float(np.mean(found))
    print("train, cross-validated balanced accuracy by L2: "
          + ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))
    return max(scores, key=lambda k: scores[k])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="build_data.py's output folder (its VitaminC claims are answers)")
    parser.add_argument("--write", action="store_true", help=f"write {DETECTOR}")
    args = parser.parse_args()
    started = time.perf_counter()
    model, embedder = ClaimSupportModel(threads=2), Embedder(threads=2)
    rows: dict[str, list[dict[str, Any]]] = {"train": [], "dev": [], "test": []}
    for r in no_answer_pairs(DATA):
        rows[r["split"]].append(r)
    for split in STATEMENTS:
        rows[split] += statements(args.data, split)
    # As the judge reads an answer (text_b is the answer less its framing): the model's
    # probability (0 where it is not asked) and the embedding, one answer a run.
    declines, vectors, labels = {}, {}, {}
    for split, chosen in rows.items():
        declines[split] = np.array([model.declines(r["text_b"]) for r in chosen])
        vectors[split] = np.stack([embedder.passage([r["text_b"]])[0] for r in chosen]).astype(float)
        labels[split] = np.array([r["label"] for r in chosen])
    print(f"read {sum(map(len, rows.values()))} answers ({time.perf_counter() - started:.0f} s): "
          + ", ".join(f"{k} {len(v)}" for k, v in rows.items()))

    l2 = choose_l2(vectors["train"], labels["train"], [r["group"] for r in rows["train"]])
    weights, bias = fit(vectors["train"], labels["train"], l2)

    def probabilities(split: str, mix: float) -> np.ndarray:
        detector = NoAnswerDetector(weights, bias, mix, threshold=0.5, band=None)
        return np.array([detector.probability(r["text_b"], p, v) for r, p, v
                         in zip(rows[split], declines[split], vectors[split], strict=True)])

    found = {}
    for mix in MIXES:
        p = probabilities("dev", mix)
        threshold = balancing_threshold(labels["dev"], p)
        found[mix] = (balanced_accuracy(labels["dev"], (p >= threshold).astype(int)), threshold)
    print("dev balanced accuracy by mix (threshold): "
          + ", ".join(f"{m} {a:.4f} ({t:.3f})" for m, (a, t) in found.items()))
    mix = max(MIXES, key=lambda m: (found[m][0], -m))  # ties: the less the embedding weighs
    threshold = found[mix][1]
    band = cascade_band(labels["dev"], probabilities("dev", mix))

    test = no_answer_figures(rows["test"], probabilities("test", mix), threshold)
    alone = no_answer_figures(rows["test"], probabilities("test", 0.0), model.no_answer_threshold)
    print(f"test: mix {mix}, threshold {threshold:.3f}: balanced accuracy "
          f"{test['balanced_accuracy']:.4f}; the claim-support model alone at its card's "
          f"threshold ({model.no_answer_threshold}) {alone['balanced_accuracy']:.4f}")
    if not args.write:
        return
    DETECTOR.write_text(json.dumps({
        "kind": "the claim-support model's no-answer logit and a logistic regression on the "
                "answer's MiniLM-L6 embedding, mixed",
        "fitted_by": "training/claim_support/no_answer.py",
        "data": "bench/data/no_answer.jsonl, in the claim-support model's splits, and "
                f"VitaminC claims as answers ({STATEMENTS['train']} train, {STATEMENTS['dev']} dev)",
        "models": model.identity | {"embedder": embedder.sha256},
        "l2": l2, "mix": mix, "threshold": round(threshold, 4), "band": band,
        "dev": {"balanced_accuracy": round(found[mix][0], 4), "answers": len(rows["dev"]),
                "of_them_claims": STATEMENTS["dev"]},
        "test": test, "test_claim_support_alone": alone,
        "bias": bias, "weights": [round(float(w), 6) for w in weights],
    }, indent=1) + "\n")
    print(f"written to {DETECTOR.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
