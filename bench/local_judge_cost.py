"""CPU per realistic turn of the local judge: this tree's against another revision's, in one run.

    python bench/local_judge_cost.py --bigbench bigbench-1.0.0.tar.gz [--turns 40] [--baseline REV]

A realistic turn: three documents of 120-200 words (SQuAD-shifts passages: Wikipedia, news,
Reddit, reviews), a question asked of the first, and a two- or three-sentence answer from it.
Every turn's text is new, so no cache answers. Each judge runs in a process of its own on one
core's worth of threads (the sidecar's default), and the two are given the same turns in turn,
alternating which goes first; each reports the CPU-seconds (all its threads) of every
judge_sync call and its peak RSS before and after judging. Prints medians and the ratio.
The baseline is `git archive REV monitor` unpacked in a temporary folder (default: HEAD).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TASKS = "bigbench-1.0.0/bigbench/benchmark_tasks"

# The child: judge the turns it is given on stdin, one JSON line each, answering with its CPU.
CHILD = r"""
import json, resource, sys, time
from monitor.config import LocalJudgeSettings
from monitor.judges.local import LocalJudge
from monitor.model import AssistantTurn
judge = LocalJudge(LocalJudgeSettings())
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    turn = AssistantTurn.model_validate_json(line)
    start = time.process_time()
    result = judge.judge_sync(turn)
    cpu = time.process_time() - start
    print(json.dumps({"cpu": cpu, "verdicts": len(result.verdicts), "rss_loaded_kb": loaded,
                      "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}), flush=True)
"""


def passages(bigbench: Path) -> list[dict[str, Any]]:
    name = f"{TASKS}/squad_shifts/new_wiki_v1.0.json"
    if bigbench.is_dir():
        data = json.loads((bigbench / "squad_shifts/new_wiki_v1.0.json").read_text())
    else:
        with tarfile.open(bigbench) as archive:
            member = archive.extractfile(name)
            assert member is not None
            data = json.load(member)
    out = []
    for article in data["data"]:
        for p in article["paragraphs"]:
            if 120 <= len(p["context"].split()) <= 200 and p["qas"]:
                out.append(p)
    return out


def turns(bigbench: Path, count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    pool = passages(bigbench)
    rng.shuffle(pool)
    out = []
    for n in range(count):
        first, *others = pool[3 * n:3 * n + 3]
        sentences = [s.strip() + "." for s in first["context"].split(". ") if len(s.split()) > 5]
        answer = " ".join(sentences[:rng.choice([2, 3])])
        out.append({"trace_id": f"{n + 1:032x}", "question": first["qas"][0]["question"],
                    "answer": answer, "documents": [
                        {"id": f"doc-{i}", "content": p["context"].strip()}
                        for i, p in enumerate([first, *others])]})
    return out


def start(source: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(source), "OMP_NUM_THREADS": "1"}
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env, cwd=source)
    assert child.stdout is not None
    assert json.loads(child.stdout.readline())["ready"]
    return child


def judge(child: subprocess.Popen[str], turn: dict[str, Any]) -> dict[str, Any]:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps(turn) + "\n")
    child.stdin.flush()
    return json.loads(child.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bigbench", type=Path, required=True)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--baseline", default="HEAD", help="a git revision of this repository")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sample = turns(args.bigbench, args.turns, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "archive", args.baseline, "monitor"], cwd=ROOT,
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        # The compiled core is built, not committed: the baseline borrows this tree's (it
        # assembles turns; the judge under measurement is Python and onnxruntime).
        for built in (ROOT / "monitor").glob("_native*.so"):
            shutil.copy(built, Path(folder) / "monitor" / built.name)
        judges = {args.baseline: start(Path(folder)), "this tree": start(ROOT)}
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in judges}
        for n, turn in enumerate(sample):
            order = list(judges) if n % 2 == 0 else list(judges)[::-1]
            for name in order:
                results[name].append(judge(judges[name], turn))
        for child in judges.values():
            assert child.stdin is not None
            child.stdin.close()
            child.wait()
    print(f"{args.turns} realistic turns (3 documents of 120-200 words, 2-3 sentence answers), "
          "one thread each, alternating:")
    medians = {}
    for name, rows in results.items():
        medians[name] = statistics.median(r["cpu"] for r in rows[1:])  # the first warms up
        print(f"  {name:12} median {medians[name] * 1000:7.1f} ms CPU a turn   "
              f"(p90 {sorted(r['cpu'] for r in rows)[int(len(rows) * 0.9)] * 1000:.1f} ms)   "
              f"peak RSS {rows[-1]['rss_loaded_kb'] / 1024:.0f} MiB loaded, "
              f"{rows[-1]['rss_kb'] / 1024:.0f} MiB after judging")
    old, new = medians[args.baseline], medians["this tree"]
    print(f"  this tree / {args.baseline}: {new / old:.3f} of the CPU ({old / new:.1f}x faster)")


if __name__ == "__main__":
    main()
