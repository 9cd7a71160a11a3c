"""How much CPU a busy judge worker takes from a machine whose cores are all busy, by the
worker's scheduling priority.

    python bench/judge_priority.py [--seconds 4]

One busy loop per core at nice 0 (ingest, on a machine short of cores) and one more at the
priority under test (the local judge's worker, judging): the CPU seconds each got. What the
foreground loses is what a judge burning CPU costs ingest there; idle cores the worker gets whole
whatever its priority. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time

PRIORITIES = {"nice 0": 0, "nice 10": 10, "nice 19": 19}


def busy(niceness: int, seconds: float, results: multiprocessing.Queue) -> None:
    os.nice(niceness)
    end, spins = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        spins += 1
    results.put((niceness, time.process_time()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(f"{cores} busy loops at nice 0, and one more at each priority, for {args.seconds} s\n")
    print(f"{'the extra loop':15} {'foreground CPU-s':>17} {'its CPU-s':>10} {'its share':>10}")
    for name, niceness in PRIORITIES.items():
        results: multiprocessing.Queue = multiprocessing.Queue()
        loops = [multiprocessing.Process(target=busy, args=(n, args.seconds, results))
                 for n in [0] * cores + [niceness]]
        for loop in loops:
            loop.start()
        got = [results.get() for _ in loops]  # before join: a full queue would block the child
        for loop in loops:
            loop.join()
        # The extra loop is the last to report its niceness; with nice 0 any one is "it".
        extra = max(range(len(got)), key=lambda i: got[i][0])
        foreground = sum(cpu for i, (_, cpu) in enumerate(got) if i != extra)
        its = got[extra][1]
        print(f"{name:15} {foreground:>17.2f} {its:>10.2f} {its / (foreground + its):>10.1%}")


if __name__ == "__main__":
    main()
