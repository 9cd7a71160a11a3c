"""CPU share of the local judge: CPU-seconds and wall time per judged turn, by engine threads.

    python bench/local_judge_threads.py [--turns 40] [--threads 1,2] [--busy]

Each setting runs in its own process (the engine reads its thread count once, when it loads),
judging the same turns (3 documents of ~120 words, a 2-sentence answer), interleaved over three
rounds; medians printed side by side. `--busy` keeps one core spinning meanwhile, as ingest
would.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = """
import json, resource, sys, time
from monitor.config import LocalJudgeSettings
from monitor.judges.local import LocalJudge
from monitor.model import AssistantTurn, RetrievedDocument
threads, turns = int(sys.argv[1]), int(sys.argv[2])
judge = LocalJudge(LocalJudgeSettings(threads=threads))
filler = "The policy covers annual and monthly plans, invoices, taxes and regional rules. " * 10
def turn(i):
    docs = [RetrievedDocument(id=f"kb-{i}-{k}", content=f"Document {k} of case {i}. " + filler)
            for k in range(3)]
    return AssistantTurn(trace_id=f"{i:032x}", question=f"How are invoices for case {i} taxed?",
                         answer=f"Invoices for case {i} include regional taxes. Annual plans are "
                                f"billed once a year.", documents=docs)
judge.judge_sync(turn(10_000))  # warm-up: the engine's first call allocates
cpu0, wall0 = time.process_time(), time.perf_counter()
for i in range(turns):
    judge.judge_sync(turn(i))
print(json.dumps({"cpu_s": (time.process_time() - cpu0) / turns,
                  "wall_s": (time.perf_counter() - wall0) / turns}))
"""


def spin(stop: multiprocessing.Event) -> None:
    while not stop.is_set():
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--busy", action="store_true", help="keep one core busy meanwhile")
    args = parser.parse_args()
    settings = [int(t) for t in args.threads.split(",")]
    stop = multiprocessing.Event()
    spinner = multiprocessing.Process(target=spin, args=(stop,)) if args.busy else None
    if spinner:
        spinner.start()
    results: dict[int, list[dict]] = {t: [] for t in settings}
    try:
        for _ in range(3):
            for threads in settings:
                done = subprocess.run([sys.executable, "-c", WORKER, str(threads), str(args.turns)],
                                      capture_output=True, text=True, check=True, cwd=ROOT)
                results[threads].append(json.loads(done.stdout))
    finally:
        stop.set()
        if spinner:
            spinner.join()
    print(f"{args.turns} turns a run, medians of 3 runs{', one core kept busy' if args.busy else ''}")
    print(f"{'threads':>8} {'CPU ms/turn':>12} {'wall ms/turn':>13}")
    for threads, runs in results.items():
        cpu = statistics.median(r["cpu_s"] for r in runs) * 1000
        wall = statistics.median(r["wall_s"] for r in runs) * 1000
        print(f"{threads:>8} {cpu:>12.0f} {wall:>13.0f}")


if __name__ == "__main__":
    main()
