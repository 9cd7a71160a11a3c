"""Calibrate the local judge's thresholds on labelled data, and report how well each evaluator agrees.

    python bench/calibrate_local.py --bigbench bigbench-1.0.0.tar.gz [--pairs 1500]

Data (offline, from the `bigbench` sdist; extract, never pip-install it; get the file with
`python bench/calibrate_local.py --fetch`):
- VitaminC (claim + evidence): topical relevance for context relevance (a claim against its own
  evidence vs another article's). Claim support is the cross-encoder's, trained and tested by
  training/claim_support/.
- TruthfulQA (questions with answer choices): answer relevance (a question against one of its
  own choices vs a choice of another question), and the no-answer detector ("I have no comment";
  the claim-support model's no-answer task and the answer's embedding, as the local judge reads
  them, trained on bench/data/no_answer.jsonl, not on TruthfulQA).
- bench/data/short_replies_blind.jsonl: the no-answer detector on 220 replies of at most 8 words
  with a negation or apology ("Don't know." against "None, shipping is free."), written on
  2026-12-01 by a helper who read nothing of the repository.
- bench/data/no_answer_blind_eval.jsonl: the detector on 400 replies (200 refusals, 200 answers; a
  quarter short, 30 % two to four sentences) of many products' assistants, written the same way by
  another helper, for evaluation only: nothing is fitted on it.

Train and test are split by article title (VitaminC) or question (TruthfulQA) so that no text is
on both sides. Thresholds are fitted on train; balanced accuracy is
reported on test. The printed values are the defaults in monitor/config.py (LocalJudgeSettings:
the thresholds and the context relevance cosine's band; the answer relevance cosine's band in
CascadeSettings).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tarfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.config import LocalJudgeSettings  # noqa: E402
from monitor.judges.cascade import TARGET_ACCURACY, uncertainty_band  # noqa: E402
from monitor.judges.local import LocalJudge  # noqa: E402
from monitor.judges.no_answer import is_empty  # noqa: E402

DATA = Path(__file__).parent / "data"
BLIND_REPLIES = {"short": DATA / "short_replies_blind.jsonl",
                 "blind set": DATA / "no_answer_blind_eval.jsonl"}

BIGBENCH_VERSION = "1.0.0"
TASKS = f"bigbench-{BIGBENCH_VERSION}/bigbench/benchmark_tasks"


def load(bigbench: Path, task: str, key: str = "examples") -> Any:
    if bigbench.is_dir():
        return json.loads((bigbench / task).read_text())[key]
    with tarfile.open(bigbench) as archive:
        member = archive.extractfile(f"{TASKS}/{task}")
        assert member is not None, f"{task} not in {bigbench}"
        return json.load(member)[key]


def is_train(key: str) -> bool:
    return hashlib.sha256(key.encode()).digest()[0] < 128


def balanced_accuracy(labels: np.ndarray, predicted: np.ndarray) -> float:
    positives, negatives = labels == 1, labels == 0
    return float(((predicted[positives] == 1).mean() + (predicted[negatives] == 0).mean()) / 2)


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    candidates = np.unique(np.round(scores, 3))
    return float(max(candidates, key=lambda t: balanced_accuracy(labels, (scores >= t).astype(int))))


def vitaminc(bigbench: Path, pairs: int, seed: int) -> list[tuple[str, str, str, int]]:
    """(title, evidence, claim, supported) from VitaminC, a balanced random subset."""
    rows = []
    for example in load(bigbench, "vitaminc_fact_verification/task.json"):
        head, _, claim = example["input"].rpartition("\nClaim: ")
        title, _, evidence = head.partition(": ")
        label = max(example["target_scores"], key=example["target_scores"].get)
        rows.append((title, evidence, claim, int(label == "True")))
    rng = random.Random(seed)
    rng.shuffle(rows)
    supported = [r for r in rows if r[3] == 1][: pairs // 2]
    other = [r for r in rows if r[3] == 0][: pairs // 2]
    return supported + other


def same_article(bigbench: Path, questions: int, seed: int) -> list[tuple[str, str, str, int]]:
    """(title, question, paragraph, relevant) from SQuAD-shifts' Wikipedia articles: a question
    against its own paragraph, and against another paragraph of the same article (same topic,
    no help: the hard case of context relevance, which VitaminC's other articles lack)."""
    rng = random.Random(seed)
    rows = []
    for article in load(bigbench, "squad_shifts/new_wiki_v1.0.json", "data"):
        paragraphs = [p for p in article["paragraphs"] if p["qas"]]
        if len(paragraphs) < 2:
            continue
        for i, paragraph in enumerate(paragraphs):
            question = rng.choice(paragraph["qas"])["question"]
            other = rng.choice([p for j, p in enumerate(paragraphs) if j != i])["context"]
            rows += [(article["title"], question, paragraph["context"], 1),
                     (article["title"], question, other, 0)]
    rng.shuffle(rows)
    return rows[:questions * 2]


def report(name: str, train: tuple[np.ndarray, np.ndarray], test: tuple[np.ndarray, np.ndarray],
           threshold: float) -> None:
    train_ba = balanced_accuracy(train[1], (train[0] >= threshold).astype(int))
    test_ba = balanced_accuracy(test[1], (test[0] >= threshold).astype(int))
    print(f"{name:22} threshold {threshold:.3f}   balanced accuracy train {train_ba:.3f}  "
          f"test {test_ba:.3f}   (test n={len(test[1])}, {int(test[1].sum())} positive)")


def report_band(name: str, train: tuple[np.ndarray, np.ndarray],
                test: tuple[np.ndarray, np.ndarray], accuracy: float) -> None:
    """The cascade's uncertainty band fitted on train, and on test the share decided locally
    (outside the band) and how often those decisions are right."""
    band = uncertainty_band(train[0], train[1], accuracy)
    scores, labels = test
    outside = (scores >= band.high) | (scores < band.low)
    right = (scores >= band.high) == (labels == 1)
    print(f"{'':22} cascade band [{band.low:.3f}, {band.high:.3f}): test {outside.mean():.1%} "
          f"decided locally, accuracy {right[outside].mean():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bigbench", type=Path, help="the bigbench sdist (.tar.gz) or its "
                        "benchmark_tasks folder")
    parser.add_argument("--fetch", action="store_true", help="download the bigbench sdist "
                        "(358 MB) from the package index into the current folder, then exit")
    parser.add_argument("--pairs", type=int, default=1500, help="VitaminC pairs to use")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--accuracy", type=float, default=TARGET_ACCURACY,
                        help="the cascade bands' accuracy on each local decision")
    args = parser.parse_args()
    if args.fetch:
        fetch()
        return
    if args.bigbench is None:
        parser.error("--bigbench is required (or --fetch first)")
    judge = LocalJudge(LocalJudgeSettings(threads=2))
    embedder = judge.embedder  # the local judge's own, for the no-answer detector below too

    # VitaminC claims and their evidence (claim support itself is training/claim_support/'s).
    rows = vitaminc(args.bigbench, args.pairs, args.seed)
    evidence = embedder.passage([r[1] for r in rows])
    train = np.array([is_train(r[0]) for r in rows])

    # Context relevance: a claim (as a query) against its own evidence vs another article's.
    queries = embedder.query([r[2] for r in rows])
    rng = random.Random(args.seed)
    other = [rng.choice([j for j in rng.sample(range(len(rows)), 8) if rows[j][0] != r[0]])
             for r in rows]
    relevance = np.concatenate([np.sum(queries * evidence, axis=1),
                                np.sum(queries * evidence[other], axis=1)])
    relevance_labels = np.concatenate([np.ones(len(rows)), np.zeros(len(rows))]).astype(int)
    split = np.concatenate([train, train])
    t = best_threshold(relevance[split], relevance_labels[split])
    report("context relevance", (relevance[split], relevance_labels[split]),
           (relevance[~split], relevance_labels[~split]), t)
    # The cascade's band also sees the hard case: a paragraph of the question's own article.
    hard = same_article(args.bigbench, args.pairs // 2, args.seed)
    hard_scores = np.sum(embedder.query([r[1] for r in hard]) * embedder.passage([r[2] for r in hard]),
                         axis=1)
    hard_labels = np.array([r[3] for r in hard])
    hard_split = np.array([is_train(r[0]) for r in hard])
    report("  same-article paragraphs", (hard_scores[hard_split], hard_labels[hard_split]),
           (hard_scores[~hard_split], hard_labels[~hard_split]), t)
    both = (np.concatenate([relevance[split], hard_scores[hard_split]]),
            np.concatenate([relevance_labels[split], hard_labels[hard_split]]))
    report_band("context relevance", both,
                (np.concatenate([relevance[~split], hard_scores[~hard_split]]),
                 np.concatenate([relevance_labels[~split], hard_labels[~hard_split]])),
                args.accuracy)

    # Answer relevance and the no-answer detector on TruthfulQA.
    qa = load(args.bigbench, "truthful_qa/task_mc.json")
    questions = [e["input"] for e in qa]
    own = [rng.choice(list(e["target_scores"])) for e in qa]
    foreign = [rng.choice(list(qa[(i + rng.randrange(1, len(qa))) % len(qa)]["target_scores"]))
               for i in range(len(qa))]
    q = embedder.query(questions)
    answer_scores = np.concatenate([np.sum(q * embedder.passage(own), axis=1),
                                    np.sum(q * embedder.passage(foreign), axis=1)])
    answer_labels = np.concatenate([np.ones(len(qa)), np.zeros(len(qa))]).astype(int)
    qa_train = np.array([is_train(x) for x in questions] * 2)
    t = best_threshold(answer_scores[qa_train], answer_labels[qa_train])
    report("answer relevance", (answer_scores[qa_train], answer_labels[qa_train]),
           (answer_scores[~qa_train], answer_labels[~qa_train]), t)
    report_band("answer relevance", (answer_scores[qa_train], answer_labels[qa_train]),
                (answer_scores[~qa_train], answer_labels[~qa_train]), args.accuracy)

    choices = [c for e in qa for c in e["target_scores"]]
    declines = np.array(["no comment" in c.lower() or "don't know the answer" in c.lower()
                         for c in choices])
    detected = np.array([is_empty(c) or judge.declines(c) >= judge.no_answer_threshold
                         for c in choices])
    print(f"{'no-answer detector':22} recall {detected[declines].mean():.3f} "
          f"({int(declines.sum())} declining choices), false positives "
          f"{detected[~declines].mean():.3%} of {int((~declines).sum())} other choices")

    for name, path in BLIND_REPLIES.items():
        replies = [json.loads(line) for line in path.read_text().splitlines()]
        declines = np.array([r["label"] == 1 for r in replies])
        detected = np.array([judge.declines(r["text"]) >= judge.no_answer_threshold
                             for r in replies])
        print(f"{'no-answer, ' + name:22} balanced accuracy "
              f"{balanced_accuracy(declines.astype(int), detected.astype(int)):.3f}: recall "
              f"{detected[declines].mean():.3f} ({int(declines.sum())} refusals), false positives "
              f"{detected[~declines].mean():.3%} of {int((~declines).sum())} answers")


def fetch() -> None:
    """The sdist cannot be `pip download`ed (its metadata step needs a URL dependency). The version is
    pinned: every figure of this repository was read on it, and an index may serve another or none."""
    import shutil
    import urllib.request

    from pip._internal.models.index import PyPI  # the index pip itself uses

    with urllib.request.urlopen(f"{PyPI.pypi_url}/bigbench/json", timeout=60) as response:
        releases = json.load(response)["releases"]
    sdist = next((f for f in releases.get(BIGBENCH_VERSION, []) if f["packagetype"] == "sdist"), None)
    if sdist is None:
        raise SystemExit(f"{PyPI.pypi_url} serves no sdist of bigbench {BIGBENCH_VERSION} (it lists "
                         f"{', '.join(sorted(releases)) or 'no release'}): copy "
                         f"bigbench-{BIGBENCH_VERSION}.tar.gz from a machine that has it and pass it "
                         "as --bigbench")
    with urllib.request.urlopen(sdist["url"], timeout=600) as response, \
            open(sdist["filename"], "wb") as out:
        shutil.copyfileobj(response, out)
    print(f"saved {sdist['filename']}")


if __name__ == "__main__":
    main()
