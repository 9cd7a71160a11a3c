"""The local assistant evaluators against labelled data, train and test kept apart.

    pip install --no-deps bfcl-eval
    python bench/evaluators.py --bigbench bigbench-1.0.0.tar.gz

- summary factuality (bigbench factuality_of_summary, CNN/DM and XSum): each source comes with
  candidate summaries, one of them labelled factual; the evaluator is the local judge's
  groundedness of a candidate against its source (a turn: the source its one document). Beside
  it, the task's own framing: for each source of the test half, is the candidate labelled
  factual the one whose claims the documents support best (their mean support probability)?
- summary faithfulness (XSum with Maynez et al.'s human labels, bench/data/XSUM_FAITHFULNESS.md):
  a summary is faithful where a majority of its raters marked nothing the article does not
  support; the same groundedness, and the AUC of the mean claim support;
- tool relevance (BFCL's live_relevance: a function should be called; irrelevance and
  live_irrelevance: none should): the evaluator is the best embedding similarity between the user's
  question and an offered function's name and description;
- claim support and the no-answer detector (the same model's tasks):
  training/claim_support/export.py; context and answer relevance: bench/calibrate_local.py.
A threshold is fitted on the train half (by hash of the source or question) and balanced accuracy
is reported on the test half.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tarfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "training" / "claim_support")]

from bfcl_agreement import data_dir, load  # noqa: E402
from calibrate_local import TASKS, balanced_accuracy, best_threshold, is_train  # noqa: E402
from figures import auc  # noqa: E402

from monitor.config import LocalJudgeSettings  # noqa: E402
from monitor.judges.local import LocalJudge  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402


def task_items(bigbench: Path, name: str) -> list[dict]:
    """factuality_of_summary's `name` set, an item (source, candidates, label) a line."""
    with tarfile.open(bigbench) as archive:
        member = archive.extractfile(f"{TASKS}/factuality_of_summary/{name}.json")
        assert member is not None
        lines = member.read().decode().splitlines()[2:]  # two canary lines
    return [json.loads(line) for line in lines]


def summaries(bigbench: Path, name: str, limit: int) -> list[tuple[str, str, int]]:
    rows = []
    for item in task_items(bigbench, name)[:limit]:
        for i, candidate in enumerate(item["list_candidates"]):
            rows.append((item["source"], candidate, int(i == item["lbl"])))
    return rows


def faithfulness(bigbench: Path) -> list[tuple[str, str, int]]:
    """XSum summaries with human labels (bench/data/XSUM_FAITHFULNESS.md): (article, summary,
    1 where a majority of its three raters marked nothing the article does not support)."""
    items = task_items(bigbench, "xsum")
    return [(items[row["source_line"]]["source"], row["summary"], int(row["raters_marking_nothing"] >= 2))
            for row in map(json.loads, (ROOT / "bench/data/xsum_faithfulness.jsonl").open())]


def pairwise(rows: list[tuple[str, str, int]], support: list[float], train: np.ndarray) -> float:
    """The share of test-half sources whose candidate labelled factual has the highest support
    of its source's candidates (a tie counts half)."""
    by_source: dict[str, list[tuple[float, int]]] = {}
    for (source, _, label), s, is_train_row in zip(rows, support, train, strict=True):
        if not is_train_row:
            by_source.setdefault(source, []).append((s, label))
    won = []
    for candidates in by_source.values():
        factual = next(s for s, label in candidates if label)
        others = max(s for s, label in candidates if not label)
        won.append(1.0 if factual > others else 0.5 if factual == others else 0.0)
    return float(np.mean(won))


def report(name: str, scores: np.ndarray, labels: np.ndarray, train: np.ndarray) -> None:
    threshold = best_threshold(scores[train], labels[train])
    predicted = (scores >= threshold).astype(int)
    print(f"{name:34} threshold {threshold:6.3f}  balanced accuracy train "
          f"{balanced_accuracy(labels[train], predicted[train]):.3f}  test "
          f"{balanced_accuracy(labels[~train], predicted[~train]):.3f}  "
          f"(test n={int((~train).sum())}, {int(labels[~train].sum())} positive)")
    # Which way it errs: the test positives it passes, and the negatives it flags.
    test_positive, test_negative = ~train & (labels == 1), ~train & (labels == 0)
    print(f"{'':34} test: {predicted[test_positive].mean():.3f} of positives pass, "
          f"{1 - predicted[test_negative].mean():.3f} of negatives are flagged")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bigbench", type=Path, required=True)
    parser.add_argument("--summaries", type=int, default=150, help="sources per dataset")
    parser.add_argument("--irrelevant", type=int, default=400, help="irrelevance items used")
    parser.add_argument("--no-tools", action="store_true", help="summaries only")
    args = parser.parse_args()
    judge = LocalJudge(LocalJudgeSettings())
    for dataset in ("cnn_dm", "xsum", "xsum_faithfulness"):
        rows = (faithfulness(args.bigbench) if dataset == "xsum_faithfulness"
                else summaries(args.bigbench, dataset, args.summaries))
        scores, support = [], []
        for source, candidate, _ in rows:
            result = judge.judge_sync(AssistantTurn(
                trace_id="0" * 32, question="Summarise the article.", answer=candidate,
                documents=[RetrievedDocument(content=source)]))
            grounded = result.get("groundedness")
            scores.append(grounded.score if grounded is not None else 1.0)
            read = [c.support for c in (grounded.claims or ()) if c.support is not None] if grounded else []
            support.append(float(np.mean(read)) if read else 1.0)  # nothing read: nothing unsupported
        labels, train = np.array([r[2] for r in rows]), np.array([is_train(r[0]) for r in rows])
        report(f"summary groundedness ({dataset})", np.array(scores), labels, train)
        if dataset == "xsum_faithfulness":
            print(f"{'':34} AUC of the mean claim support, test: "
                  f"{auc(labels[~train], np.array(support)[~train]):.3f}")
        else:
            print(f"{'':34} the candidate labelled factual best supported: "
                  f"{pairwise(rows, support, train):.3f} "
                  f"of {len({r[0] for r, t in zip(rows, train, strict=True) if not t})} test sources")

    print("latency, one core: 3 documents of about 1,300 words (8 KiB, the judge's input limit), "
          "a 2-sentence answer, no cached embeddings")
    for reading, reader in {"windows": judge}.items():
        seconds = []
        for rep in range(5):  # texts of their own: nothing cached
            words = [f"Clause {rep}.{i} of the {('travel', 'refund', 'warranty')[i % 3]} policy "
                     f"applies to orders placed in region {i % 11}." for i in range(3 * 110)]
            documents = [RetrievedDocument(id=f"d{d}", content=" ".join(words[d::3]))
                         for d in range(3)]
            result = reader.judge_sync(AssistantTurn(
                trace_id="0" * 32, question=f"What does clause {rep}.4 cover?", documents=documents,
                answer=f"Clause {rep}.4 is part of the travel policy. It applies to region 4."))
            seconds.append(result.latency_s)
        print(f"  {reading:18} median judged turn {1000 * np.median(seconds):.0f} ms")
    if args.no_tools:
        return
    data = data_dir()
    relevant = load(data / "BFCL_v4_live_relevance.json")
    irrelevant = load(data / "BFCL_v4_irrelevance.json") + load(
        data / "BFCL_v4_live_irrelevance.json")
    random.Random(5).shuffle(irrelevant)
    items = [(r, 1) for r in relevant] + [(r, 0) for r in irrelevant[: args.irrelevant]]
    items = [(item, label) for item, label in items if item.get("function")]
    scores = []
    for item, _ in items:
        question = " ".join(m["content"] for turn in item["question"] for m in turn
                            if m["role"] == "user")
        functions = [f"{f['name']}: {f.get('description', '')}" for f in item["function"]]
        scores.append(float(np.max(judge.embedder.passage(functions)
                                   @ judge.embedder.query([question])[0])))
    report("tool relevance (BFCL)", np.array(scores), np.array([label for _, label in items]),
           np.array([is_train(json.dumps(item["question"])) for item, _ in items]))


if __name__ == "__main__":
    main()
