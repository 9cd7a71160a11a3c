"""Build bench/data/xsum_faithfulness.jsonl: XSum summaries with human faithfulness labels, for
the articles BIG-bench's factuality_of_summary ships (bench/data/XSUM_FAITHFULNESS.md).

    git clone https://github.com/google-research-datasets/xsum_hallucination_annotations
    python bench/data/make_xsum_faithfulness.py \\
        --annotations xsum_hallucination_annotations/hallucination_annotations_xsum_summaries.csv \\
        --bigbench bigbench-1.0.0.tar.gz

Maynez et al. (ACL 2020) had three raters mark, in each of 500 x 5 summaries (four systems' and
the reference, "Gold"), the spans the article does not support. BIG-bench's XSum file holds 444
of those articles, each with the reference and one system summary among its candidates: an
article is matched by its candidates' text (case and punctuation aside), and every summary of its
`bbcid` is written with the number of raters who marked nothing in it. The article itself stays
in the bigbench sdist: a row names it by its line in xsum.json (after the two canary lines).
Standard library only; rewrites the file identically on every run.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import tarfile
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent / "xsum_faithfulness.jsonl"
XSUM = "bigbench-1.0.0/bigbench/benchmark_tasks/factuality_of_summary/xsum.json"
SYSTEMS = ("Gold", "PtGen", "TConvS2S", "TranS2S", "BERTS2S")


def key(summary: str) -> str:
    """A summary as matched: lower case, punctuation and spacing ignored (the systems' outputs
    are lower-cased and tokenised; BIG-bench re-quoted some)."""
    return re.sub(r"[^a-z0-9]+", " ", summary.lower()).strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=Path, required=True,
                        help="hallucination_annotations_xsum_summaries.csv")
    parser.add_argument("--bigbench", type=Path, required=True)
    args = parser.parse_args()

    summaries: dict[tuple[str, str], str] = {}
    marked: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)  # rater -> marked a span
    kinds: dict[tuple[str, str], set[str]] = defaultdict(set)
    with args.annotations.open(newline="") as rows:
        for row in csv.DictReader(rows):
            summary = (row["bbcid"], row["system"])
            summaries.setdefault(summary, row["summary"].replace("\\'", "'"))  # the CSV escapes apostrophes
            spans = row["hallucination_type"] != "NULL"
            marked[summary][row["worker_id"]] = marked[summary].get(row["worker_id"], False) or spans
            if spans:
                kinds[summary].add(row["hallucination_type"])
    by_text: dict[str, set[str]] = defaultdict(set)
    for (bbcid, _), summary in summaries.items():
        by_text[key(summary)].add(bbcid)

    with tarfile.open(args.bigbench) as archive:
        member = archive.extractfile(XSUM)
        assert member is not None
        lines = member.read().decode().splitlines()[2:]  # two canary lines
    out, unmatched = [], 0
    for line, text in enumerate(lines):
        candidates = json.loads(text)["list_candidates"]
        found = set().union(*(by_text.get(key(c), set()) for c in candidates))
        if len(found) != 1:
            unmatched += 1  # a candidate cut short or re-quoted past matching, or shared by others
            continue
        bbcid = found.pop()
        for system in SYSTEMS:
            raters = marked[(bbcid, system)]
            assert len(raters) == 3, (bbcid, system, raters)
            out.append({"source_line": line, "bbcid": bbcid, "system": system,
                        "summary": summaries[(bbcid, system)],
                        "raters_marking_nothing": sum(not m for m in raters.values()),
                        "marked": sorted(kinds[(bbcid, system)])})
    OUT.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in out))
    faithful = sum(row["raters_marking_nothing"] >= 2 for row in out)
    print(f"{len(lines) - unmatched} of {len(lines)} articles matched, {len(out)} summaries, "
          f"{faithful} faithful by a majority of raters: written to {OUT.name}")


if __name__ == "__main__":
    main()
