"""How well the redactor finds personal data, and what it costs per turn.

    python bench/pii_redaction.py [--set pii|fresh|blind|blind2] [--split dev|test]
                                  [--bigbench bigbench-1.0.0.tar.gz --turns 40]

Quality, on the labelled set bench/data/pii.jsonl (hand-written support questions, documents and
answers; bench/data/PII.md; `--set fresh` reads bench/data/pii_fresh.jsonl, a later set written
blind, `--set blind` and `blind2` pii_blind*.jsonl, test sets written after it): per entity type, recall
is the share of labelled values left with no letter or digit unredacted (by a placeholder of any
type: what matters is that the value does not reach the judge; partly covered ones are counted
apart), and precision the share of
placeholders that cover some labelled value. Placeholders over a labelled negative (a product,
a place that is not an address, an order date) are counted by kind. Tune on dev; read test once.

Cost, with --bigbench: the redactor's CPU per realistic turn (3 documents of 120-200 words, a
question and a 2-3 sentence answer, as bench/local_judge_cost.py builds them) beside the local
judge's on the same turns, in this process on one thread: with every text new, and with the
documents seen before (retrieval returns the same documents again; findings are cached by text).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitor.config import LocalJudgeSettings, RedactionSettings  # noqa: E402
from monitor.judges.redact import PiiAnalyzer, Redactor  # noqa: E402

# The set's type names -> the redactor's entity types.
ENTITY = {"PERSON": "PERSON", "ADDRESS": "STREET_ADDRESS", "EMAIL": "EMAIL_ADDRESS",
          "PHONE": "PHONE_NUMBER", "CREDIT_CARD": "CREDIT_CARD", "IBAN": "IBAN_CODE",
          "IP_ADDRESS": "IP_ADDRESS", "US_SSN": "US_SSN", "UK_NINO": "UK_NINO",
          "DATE_OF_BIRTH": "DATE_OF_BIRTH", "SECRET": "SECRET"}


def covered(text: str, start: int, end: int, runs: list[tuple[int, int]]) -> str:
    """'all', 'part' or 'none' of the letters and digits in text[start:end] under `runs`."""
    chars = [i for i in range(start, end) if text[i].isalnum()]
    hit = sum(any(a <= i < b for a, b in runs) for i in chars)
    return "all" if hit == len(chars) else "part" if hit else "none"


SETS = {"pii": "bench/data/pii.jsonl", "fresh": "bench/data/pii_fresh.jsonl",
        "blind": "bench/data/pii_blind.jsonl", "blind2": "bench/data/pii_blind2.jsonl"}


def quality(analyzer: PiiAnalyzer, split: str, labelled: str = "pii") -> None:
    records = [json.loads(line) for line in (ROOT / SETS[labelled]).open(encoding="utf-8")]
    splits = sorted({r["split"] for r in records})
    records = [r for r in records if r["split"] == split]
    if not records:
        sys.exit(f"{SETS[labelled]} has no {split} records: --split {' or '.join(splits)}")
    print(f"{split}: {len(records)} records")
    score(analyzer, [[r] for r in records], "each text alone")
    if all("thread" in r for r in records):
        threads: dict[int, list[dict[str, Any]]] = {}
        for r in records:
            threads.setdefault(r["thread"], []).append(r)
        score(analyzer, list(threads.values()),
              f"each thread as one turn ({len(threads)}: a value found in one text is replaced "
              "in the others, as redact_turn does)")


def score(analyzer: PiiAnalyzer, turns: list[list[dict[str, Any]]], unit: str) -> None:
    recall: dict[str, Counter[str]] = {}
    precision: dict[str, Counter[str]] = {}
    negatives: Counter[str] = Counter()
    missed = []
    for turn in turns:
        found = Redactor(analyzer).findings([r["text"] for r in turn])
        for record, findings in zip(turn, found, strict=True):
            text = record["text"]
            runs = [(f.start, f.end, f.entity) for f in findings]
            spans = [(a, b) for a, b, _ in runs]
            for entity in record["entities"]:
                how = covered(text, entity["start"], entity["end"], spans)
                recall.setdefault(ENTITY[entity["type"]], Counter())[how] += 1
                if how != "all":
                    missed.append((entity["type"], how, entity["text"]))
            for start, end, kind in runs:
                hit = any(e["start"] < end and start < e["end"] for e in record["entities"])
                precision.setdefault(kind, Counter())["right" if hit else "wrong"] += 1
                if not hit:
                    kinds = [n["kind"] for n in record["negatives"]
                             if n["start"] < end and start < n["end"]]
                    negatives[kinds[0] if kinds else "unlabelled text"] += 1
                    missed.append(("FALSE POSITIVE", kind, text[start:end]))
    print(f"  {unit}:")
    print(f"  {'entity':16} {'labelled':>8} {'recall':>7} {'partly':>7}   "
          f"{'placeholders':>12} {'precision':>9}")
    for entity in sorted(set(recall) | set(precision)):
        r, p = recall.get(entity, Counter()), precision.get(entity, Counter())
        n, placed = sum(r.values()), sum(p.values())
        print(f"  {entity:16} {n:8} {r['all'] / n if n else float('nan'):7.3f} {r['part']:7}   "
              f"{placed:12} {p['right'] / placed if placed else float('nan'):9.3f}")
    n = sum(sum(c.values()) for c in recall.values())
    placed = sum(sum(c.values()) for c in precision.values())
    right = sum(c["right"] for c in precision.values())
    print(f"  {'all':16} {n:8} {sum(c['all'] for c in recall.values()) / n:7.3f} "
          f"{sum(c['part'] for c in recall.values()):7}   {placed:12} {right / placed:9.3f}")
    print("  placeholders over no labelled value, by what was under them: "
          + ", ".join(f"{kind} {count}" for kind, count in negatives.most_common()))
    if os.environ.get("PII_BENCH_VERBOSE"):  # what was missed, and what was wrongly redacted
        for row in missed:
            print("   ", *row)


def cost(analyzer_settings: RedactionSettings, bigbench: Path, count: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from local_judge_cost import turns

    from monitor.judges.local import LocalJudge
    from monitor.model import AssistantTurn

    sample = [AssistantTurn.model_validate(t) for t in turns(bigbench, count, seed=7)]
    judge = LocalJudge(LocalJudgeSettings())
    cold = PiiAnalyzer(analyzer_settings.model_copy(update={"cache_size": 0}))
    warm = PiiAnalyzer(analyzer_settings)
    for turn in sample:  # the documents retrieved before
        Redactor(warm).many([d.content for d in turn.documents])
    times: dict[str, list[float]] = {"local judge": [], "redaction, all text new": [],
                                     "redaction, documents seen before": []}
    for turn in sample:
        texts = [turn.question, *(d.content for d in turn.documents), turn.answer]
        for name, run in (("local judge", lambda: judge.judge_sync(turn)),  # noqa: B023
                          ("redaction, all text new", lambda: Redactor(cold).many(texts)),  # noqa: B023
                          ("redaction, documents seen before",
                           lambda: Redactor(warm).many(texts))):  # noqa: B023
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    words = statistics.median(
        len(" ".join([t.question or "", t.answer or "", *(d.content or "" for d in t.documents)])
            .split()) for t in sample)
    print(f"{count} realistic turns (median {words:.0f} words), one thread, CPU a turn:")
    for name, values in times.items():
        print(f"  {name:34} median {statistics.median(values[1:]) * 1000:6.1f} ms   "
              f"p90 {sorted(values)[int(len(values) * 0.9)] * 1000:6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="pii", dest="labelled",
                        help="which labelled set: pii (pii.jsonl), fresh (pii_fresh.jsonl), "
                             "blind or blind2 (pii_blind*.jsonl, test splits only)")
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--bigbench", type=Path, help="the bigbench sdist: also measure cost")
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    settings = RedactionSettings()
    start = time.process_time()
    analyzer = PiiAnalyzer(settings)
    print(f"loaded in {time.process_time() - start:.1f} s CPU ({settings.spacy_model}, "
          f"{len(settings.entities)} entity types, score threshold {settings.score_threshold})")
    quality(analyzer, args.split, args.labelled)
    if args.bigbench:
        cost(settings, args.bigbench, args.turns)


if __name__ == "__main__":
    main()
