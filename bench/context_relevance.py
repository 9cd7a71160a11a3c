"""Context relevance on whole documents: the local judge's decision against the cosine's.

    python bench/context_relevance.py --bigbench bigbench-1.0.0.tar.gz [--pairs 3000]

The claim-support model's relevance test pairs (training/claim_support/export.py) are 60-word
windows; a retrieved document is longer. Here each pair is a SQuAD-shifts question (Wikipedia,
New York Times, Reddit, Amazon reviews) against a whole paragraph: its own (relevant) or another
paragraph of the same article or thread (irrelevant: same topic, no answer), only paragraphs the
claim-support model never trained on (its dev and test splits, build_data.split_of). Three rules
on the same pairs, balanced accuracy by split and by set:
- the local judge: the model reads the question against the paragraph's window sharing most
  words with it, at its card's threshold (`LocalJudge`, its default settings);
- the rule before 2026-11-30: the cosine of the paragraph's first 128 tokens decides where it is
  sure (outside `context_relevance_band`), the model in between;
- the cosine alone at `context_relevance_threshold`.
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
sys.path[:0] = [str(ROOT), str(ROOT / "training" / "claim_support")]

from build_data import split_of  # noqa: E402
from figures import balanced_accuracy  # noqa: E402

from monitor.config import LocalJudgeSettings  # noqa: E402
from monitor.judges.cascade import Band, decide  # noqa: E402
from monitor.judges.local import LocalJudge  # noqa: E402

TASKS = "bigbench-1.0.0/bigbench/benchmark_tasks/squad_shifts"
SETS = ["new_wiki_v1.0", "nyt_v1.0", "reddit_v1.0", "amazon_reviews_v1.0"]


def pairs(bigbench: Path, seed: int) -> list[tuple[str, str, str, str, int]]:
    """(set, split, question, paragraph, relevant), two a paragraph the model never trained on."""
    rng = random.Random(seed)
    rows = []
    with tarfile.open(bigbench) as archive:
        for name in SETS:
            member = archive.extractfile(f"{TASKS}/{name}.json")
            assert member is not None
            for article in json.load(member)["data"]:
                kept = [(p, split_of(f"squad:{p['context']}")) for p in article["paragraphs"]
                        if p["qas"]]
                kept = [(p, split) for p, split in kept if split != "train"]
                if len(kept) < 2:
                    continue
                for i, (paragraph, split) in enumerate(kept):
                    question = rng.choice(paragraph["qas"])["question"]
                    other = rng.choice([p for j, (p, _) in enumerate(kept) if j != i])["context"]
                    rows += [(name, split, question, paragraph["context"], 1),
                             (name, split, question, other, 0)]
    rng.shuffle(rows)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bigbench", type=Path, required=True, help="the bigbench sdist")
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    rows = pairs(args.bigbench, args.seed)[:args.pairs]
    judge = LocalJudge(LocalJudgeSettings())
    settings, threshold = judge.settings, judge.claim_support.relevance_threshold
    assert threshold is not None
    cosines = np.array([float(judge.embedder.query([q])[0] @ judge.embedder.passage([d])[0])
                        for _, _, q, d, _ in rows])
    model = np.array([judge._relevance(q, [d])[0] for _, _, q, d, _ in rows])
    band = Band(*settings.context_relevance_band)
    rules = {
        "local judge (model)": model >= threshold,
        "before (cosine where sure)": np.array([
            sure if (sure := decide(float(c), band)) is not None else m >= threshold
            for c, m in zip(cosines, model, strict=True)]),
        "cosine alone": cosines >= settings.context_relevance_threshold,
    }
    labels = np.array([r[4] for r in rows])
    words = np.median([len(r[3].split()) for r in rows])
    print(f"{len(rows)} pairs (paragraphs of median {words:.0f} words), balanced accuracy:")
    groups = [("all", np.ones(len(rows), bool))] + [
        (f"split {s}", np.array([r[1] == s for r in rows])) for s in ("dev", "test")] + [
        (name, np.array([r[0] == name for r in rows])) for name in SETS]
    print(f"  {'':22}" + "".join(f"{name:>28}" for name in rules))
    for group, chosen in groups:
        print(f"  {group:22}" + "".join(
            f"{balanced_accuracy(labels[chosen], decided[chosen].astype(int)):>28.4f}"
            for decided in rules.values()) + f"   (n={int(chosen.sum())})")


if __name__ == "__main__":
    main()
