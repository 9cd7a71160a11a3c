"""Train the no-answer detector: a logistic regression on the answer's MiniLM embedding.

    python bench/make_no_answer_data.py   # (re)writes bench/data/no_answer.jsonl
    python bench/train_no_answer.py [--write]

Data: bench/data/no_answer.jsonl (hand-written templates x topics, see make_no_answer_data.py).
Each answer is embedded alone, as the judge embeds it: the int8 model quantises its activations
per batch, so an answer embedded in a batch of 16 gets a slightly different vector (up to 0.03
per dimension), and a model trained and tested on batched vectors is measured on vectors the judge
never sees (test balanced accuracy 0.933 that way, 0.959 on the judge's own vectors).
Split (seed 16): within each kind, 30% of the templates are test templates; test = every row of a
test template; train = rows of the other templates whose topic is not one of the 30% test topics.
So no test answer shares its wording with a training answer, and the test rows on test topics
share neither wording nor subject. Regularisation is chosen by 5-fold cross-validation grouped by
template on train only. Prints test balanced accuracy, the false-positive rate on the negative or
apologetic real answers, on partial answers and on reports of a failed action, and writes
monitor/judges/models/no_answer.json with --write (then the test in tests/test_no_answer.py needs
its checksum updated).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.judges.cascade import TARGET_ACCURACY, uncertainty_band  # noqa: E402
from monitor.judges.embeddings import Embedder  # noqa: E402
from monitor.judges.no_answer import MODEL_PATH, may_decline  # noqa: E402
from monitor.judges.text import strip_framing  # noqa: E402

DATA = Path(__file__).parent / "data" / "no_answer.jsonl"
# The phrase list the model replaced (monitor/judges/text.py until issue 16), for comparison.
PHRASE_LIST = re.compile(
    r"\b(?:i (?:could|can|was unable to|am unable to|'m unable to)(?:n't| not)?\s*(?:find|locate|"
    r"answer|help with|access)|i (?:do not|don't|did not|didn't) (?:know|have (?:enough |any )?"
    r"(?:information|details|data|context))|(?:there is|there's|i have) no (?:information|"
    r"details|data|mention|record)|(?:no|not enough) (?:relevant )?(?:information|context) "
    r"(?:is |was )?(?:available|provided|found)|(?:is|are) not (?:mentioned|covered|"
    r"included|available|specified) in (?:the|our|my)|unable to (?:find|answer|determine)|"
    r"cannot (?:answer|find|determine|help)|can't (?:answer|find|determine|help)|"
    r"i have no comment|outside (?:of )?(?:my|the) (?:scope|knowledge))",
    re.IGNORECASE)
SEED = 16
NEGATIVE_REAL = {"negative", "apologetic_yes"}


# Kinds added to the data later, each split by a random stream of its own (its seed), so that
# the rows before keep their side and the figures stay comparable.
ADDED_KINDS = {"how_to": 19}


def split(rows: list[dict[str, str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boolean masks: train, test, and test rows whose topic is unseen in training."""
    test_templates: set[str] = set()
    test_topics: set[str] = set()
    for seed, chosen in [(SEED, [r for r in rows if r["kind"] not in ADDED_KINDS])] + [
            (seed, [r for r in rows if r["kind"] == kind]) for kind, seed in ADDED_KINDS.items()]:
        rng = random.Random(seed)
        for kind in sorted({r["kind"] for r in chosen}):
            templates = sorted({r["template"] for r in chosen if r["kind"] == kind})
            test_templates |= set(rng.sample(templates, max(1, round(0.3 * len(templates)))))
        topics = sorted({r["topic"] for r in chosen})
        test_topics |= set(rng.sample(topics, round(0.3 * len(topics))))
    test = np.array([r["template"] in test_templates for r in rows])
    unseen = test & np.array([r["topic"] in test_topics for r in rows])
    train = ~test & np.array([r["topic"] not in test_topics for r in rows])
    return train, test, unseen


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Class-balanced logistic regression with an L2 penalty on the weights (L-BFGS)."""
    w_pos, w_neg = len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum()))
    sample = np.where(y == 1, w_pos, w_neg)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ theta[:-1] + theta[-1]
        p = 1 / (1 + np.exp(-z))
        nll = -np.sum(sample * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))
        grad_z = sample * (p - y)
        grad = np.append(x.T @ grad_z + 2 * l2 * theta[:-1], grad_z.sum())
        return float(nll + l2 * theta[:-1] @ theta[:-1]), grad

    theta = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B").x
    return theta[:-1], float(theta[-1])


def balanced_accuracy(y: np.ndarray, predicted: np.ndarray) -> float:
    return float(((predicted[y == 1] == 1).mean() + (predicted[y == 0] == 0).mean()) / 2)


def folds_of(groups: list[str]) -> np.ndarray:
    """Five folds, by group (template), so no template is on both sides."""
    names = sorted(set(groups))
    random.Random(SEED).shuffle(names)
    fold = {g: i % 5 for i, g in enumerate(names)}
    return np.array([fold[g] for g in groups])


def choose_l2(x: np.ndarray, y: np.ndarray, groups: list[str]) -> float:
    folds = folds_of(groups)
    scores = {}
    for l2 in (0.001, 0.01, 0.1, 1.0, 10.0):
        found = []
        for k in range(5):
            w, b = fit(x[folds != k], y[folds != k], l2)
            found.append(balanced_accuracy(y[folds == k], (x[folds == k] @ w + b >= 0).astype(int)))
        scores[l2] = float(np.mean(found))
    print("cross-validated balanced accuracy by L2: " + ", ".join(f"{k} {v:.3f}"
                                                                  for k, v in scores.items()))
    return max(scores, key=lambda k: scores[k])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {MODEL_PATH}")
    parser.add_argument("--accuracy", type=float, default=TARGET_ACCURACY,
                        help="the cascade band's accuracy on each local decision")
    args = parser.parse_args()
    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    start = time.perf_counter()
    embedder = Embedder(cache_size=0)
    # As the judge embeds an answer: alone, its framing stripped.
    x = np.stack([embedder.passage([strip_framing(r["answer"])])[0] for r in rows]).astype(np.float64)
    print(f"embedded {len(rows)} answers in {time.perf_counter() - start:.1f} s")
    y = np.array([r["label"] == "no_answer" for r in rows]).astype(float)
    kinds = np.array([r["kind"] for r in rows])
    train, test, unseen = split(rows)
    print(f"train {int(train.sum())} rows ({int(y[train].sum())} refusals), test "
          f"{int(test.sum())} ({int(y[test].sum())} refusals; {int(unseen.sum())} on unseen topics)")
    l2 = choose_l2(x[train], y[train], [r["template"] for r, t in zip(rows, train, strict=True)
                                        if t])
    # The cascade's band (monitor/judges/cascade.py) on out-of-fold probabilities of train:
    # the model's probabilities on its own training rows would look surer than they are.
    groups = [r["template"] for r, t in zip(rows, train, strict=True) if t]
    folds, held = folds_of(groups), np.zeros(int(train.sum()))
    for k in range(5):
        w, b = fit(x[train][folds != k], y[train][folds != k], l2)
        held[folds == k] = 1 / (1 + np.exp(-(x[train][folds == k] @ w + b)))
    asked_train = np.array([may_decline(r["answer"]) for r, t in zip(rows, train, strict=True) if t])
    band = uncertainty_band(held[asked_train], y[train][asked_train], args.accuracy)
    w, b = fit(x[train], y[train], l2)
    w, b = np.round(w, 5), round(b, 5)  # what is shipped, so the figures are the shipped model's
    # As the judge decides: a few words without a negation or apology never reach the model.
    asked = np.array([may_decline(r["answer"]) for r in rows])
    predicted = ((x @ w + b >= 0) & asked).astype(int)
    figures = {
        "l2": l2,
        "train_rows": int(train.sum()), "test_rows": int(test.sum()),
        "test_balanced_accuracy": balanced_accuracy(y[test], predicted[test]),
        "test_unseen_topics_balanced_accuracy": balanced_accuracy(y[unseen], predicted[unseen]),
        "test_refusal_recall": float(predicted[test & (y == 1)].mean()),
        "test_false_positives_negative_real": float(
            predicted[test & np.isin(kinds, list(NEGATIVE_REAL))].mean()),
        "test_false_positives_partial": float(predicted[test & (kinds == "partial")].mean()),
        "test_false_positives_action_failed": float(
            predicted[test & (kinds == "action_failed")].mean()),
        "test_false_positives_all_real": float(predicted[test & (y == 0)].mean()),
    }
    old = np.array([bool(PHRASE_LIST.search(r["answer"])) for r in rows]).astype(int)
    print(f"{'':40} model   phrase list (before)")
    for name, mask in (("test balanced accuracy", test), ("unseen topics", unseen)):
        print(f"{name:40} {balanced_accuracy(y[mask], predicted[mask]):.3f}   "
              f"{balanced_accuracy(y[mask], old[mask]):.3f}")
    for name, mask in (("test refusal recall", test & (y == 1)),
                       ("test false positives, negative real", test & np.isin(
                           kinds, list(NEGATIVE_REAL))),
                       ("test false positives, partial", test & (kinds == "partial")),
                       ("test false positives, action failed", test & (kinds == "action_failed"))):
        print(f"{name:40} {predicted[mask].mean():.3f}   {old[mask].mean():.3f}")
    for name, value in figures.items():
        print(f"{name:40} {value:.4g}" if isinstance(value, float) else f"{name:40} {value}")
    test_probability = 1 / (1 + np.exp(-(x @ w + b)))
    outside = test & asked & ((test_probability >= band.high) | (test_probability < band.low))
    right = (test_probability >= band.high) == (y == 1)
    print(f"cascade band [{band.low}, {band.high}) (judging.cascade.no_answer): of the test "
          f"answers the model reads, {outside.sum() / (test & asked).sum():.1%} decided locally, "
          f"accuracy {right[outside].mean():.4f}")
    for kind in sorted(set(kinds)):
        mask = test & (kinds == kind)
        print(f"  test {kind:22} n={int(mask.sum()):3}  called no_answer "
              f"{predicted[mask].mean():.3f}")
    for r, p in zip(np.array(rows, dtype=object)[test], predicted[test], strict=True):
        if p != (r["label"] == "no_answer"):
            print(f"  miss: {r['kind']}: {r['answer'][:100]!r}")
    if args.write:
        model = {"kind": "logistic regression on the sentence embedding of the answer",
                 "embedding": "all-MiniLM-L6-v2 (int8 ONNX, models/minilm_l6.onnx), mean-pooled, "
                              "normalised, 384-d; each answer embedded alone, as the judge does",
                 "trained_by": "bench/train_no_answer.py", "data": "bench/data/no_answer.jsonl",
                 "figures": {k: round(v, 4) if isinstance(v, float) else v
                             for k, v in figures.items()},
                 "bias": b, "weights": w.tolist()}
        MODEL_PATH.write_text(json.dumps(model) + "\n")
        print(f"wrote {MODEL_PATH} sha256 {hashlib.sha256(MODEL_PATH.read_bytes()).hexdigest()}")


if __name__ == "__main__":
    main()
