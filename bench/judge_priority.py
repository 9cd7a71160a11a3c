"""How much CPU a busy judge worker takes from a machine whose cores are all busy, by the
worker's scheduling priority.

    python bench/judge_priority.py [--seconds 4]

One loop per core at nice 0 that works like a server's event loop (2 ms of work, then a 0.1 ms
wait for the next request: ingest, on a machine short of cores), and one busy loop at the
priority under test (the local judge's worker, judging): the CPU seconds each got, and how often
the foreground loops were switched out while they could have run on (each time, their caches
are the worker's). What the foreground loses is what a judge burning CPU costs ingest there; idle
cores the worker gets whole whatever its priority. A foreground that never waits would not show
it: nice 19 alone then leaves the worker under 1 %. Linux. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time

PRIORITIES = {"nice 0": (0, False), "nice 10": (10, False), "nice 19": (19, False),
              "nice 19, SCHED_IDLE": (19, True)}


def preempted() -> int:
    """How often this process was switched out while it could have run on."""
    for line in open("/proc/self/status"):
        if line.startswith("nonvoluntary_ctxt_switches"):
            return int(line.split()[1])
    return 0


def busy(extra: bool, niceness: int, idle: bool, seconds: float,
         results: multiprocessing.Queue) -> None:
    os.nice(niceness)
    if idle:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not extra:  # a server's loop: a request's work, then a short wait for the next
            time.sleep(0.0001)
        stop = time.monotonic() + 0.002
        while time.monotonic() < stop:
            pass
    results.put((extra, time.process_time(), preempted()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(f"{cores} busy loops at nice 0, and one more at each priority, for {args.seconds} s\n")
    print(f"{'the extra loop':20} {'foreground CPU-s':>17} {'its CPU-s':>10} {'its share':>10} "
          f"{'foreground preempted':>21}")
    for name, (niceness, idle) in PRIORITIES.items():
        results: multiprocessing.Queue = multiprocessing.Queue()
        loops = [multiprocessing.Process(target=busy, args=(extra, *priority, args.seconds,
                                                            results))
                 for extra, priority in [(False, (0, False))] * cores + [(True, (niceness, idle))]]
        for loop in loops:
            loop.start()
        got = [results.get() for _ in loops]  # before join: a full queue would block the child
        for loop in loops:
            loop.join()
        foreground = sum(cpu for extra, cpu, _ in got if not extra)
        its = sum(cpu for extra, cpu, _ in got if extra)
        switched = sum(count for extra, _, count in got if not extra)
        print(f"{name:20} {foreground:>17.2f} {its:>10.2f} {its / (foreground + its):>10.1%} "
              f"{switched:>21,}")


if __name__ == "__main__":
    main()
