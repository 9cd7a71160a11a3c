"""What the judge worker's scheduling priority does: to the processes beside it, and to how fast
it judges.

    python bench/judge_priority.py [--seconds 4] [--judge-seconds 8]

1. CPU share. One loop per core at nice 0 that works like a server's event loop (2 ms of work,
   then a 0.1 ms wait for the next request: ingest, on a machine short of cores), and one busy
   loop at the priority under test (the local judge's worker, judging): the CPU seconds each
   got, and how often the foreground loops were switched out while they could have run on (each
   time, their caches are the worker's). What the foreground loses is what a judge burning CPU
   costs ingest there; idle cores the worker gets whole whatever its priority. A foreground that
   never waits would not show it: nice 19 alone then leaves the worker under 1 %.

2. Judged turns per second. The real worker (`ProcessJudge`, the local judge) at each
   `judging.priority` (idle, low, normal) judges distinct turns (no cache hits) for
   --judge-seconds: alone, beside one server-like loop per core, and beside one loop per core
   that never waits (a saturated machine: a shared CI runner, a batch job). Beside each, the
   loops' CPU seconds: what that judging rate cost them.

Linux. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.config import LocalJudgeSettings  # noqa: E402
from monitor.judges.worker import ProcessJudge  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402

PRIORITIES = {"nice 0": (0, False), "nice 10": (10, False), "nice 19": (19, False),
              "nice 19, SCHED_IDLE": (19, True)}
JUDGE_PRIORITIES = ("idle", "low", "normal")  # judging.priority
BESIDE = {"nothing": None, "server-like loops": True, "loops that never wait": False}


def preempted() -> int:
    """How often this process was switched out while it could have run on."""
    for line in open("/proc/self/status"):
        if line.startswith("nonvoluntary_ctxt_switches"):
            return int(line.split()[1])
    return 0


def busy(extra: bool, niceness: int, idle: bool, seconds: float,
         results: multiprocessing.Queue, waits: bool = True) -> None:
    """A loop of 2 ms of work; with `waits`, each followed by a 0.1 ms wait (a server's loop)."""
    os.nice(niceness)
    if idle:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if waits and not extra:
            time.sleep(0.0001)
        stop = time.monotonic() + 0.002
        while time.monotonic() < stop:
            pass
    results.put((extra, time.process_time(), preempted()))


def cpu_share(seconds: float, cores: int) -> None:
    print(f"{cores} server-like loops at nice 0, and one busy loop at each priority, for "
          f"{seconds} s\n")
    print(f"{'the extra loop':20} {'foreground CPU-s':>17} {'its CPU-s':>10} {'its share':>10} "
          f"{'foreground preempted':>21}")
    for name, (niceness, idle) in PRIORITIES.items():
        results: multiprocessing.Queue = multiprocessing.Queue()
        loops = [multiprocessing.Process(target=busy, args=(extra, *priority, seconds, results))
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


def turn(i: int) -> AssistantTurn:
    """A RAG turn whose texts no earlier turn had: every embedding is computed."""
    return AssistantTurn(
        trace_id=f"{i:032x}", question=f"How many days does refund request {i} take?",
        answer=f"Refund request {i} is paid within {i % 27 + 3} days. Express orders ship in a "
               f"day. Ask again about ticket {i} if it is late.",
        documents=[RetrievedDocument(id="kb-1", content=f"Refunds ({i}) are paid within "
                                                        f"{i % 27 + 3} days of the request."),
                   RetrievedDocument(id="kb-2", content=f"Express shipping, lane {i}, takes "
                                                        "one business day.")])


async def judge_for(judge: ProcessJudge, seconds: float, first: int) -> int:
    end = time.monotonic() + seconds
    judged = 0
    while time.monotonic() < end:
        await judge.judge(turn(first + judged))
        judged += 1
    return judged


async def judging_rate(seconds: float, cores: int) -> None:
    print(f"\nthe local judge's worker at each judging.priority, judging distinct turns for "
          f"{seconds} s beside {cores} loops at nice 0\n")
    print(f"{'judging.priority':17} {'beside':24} {'turns/s':>8} {'loops CPU-s':>12}")
    first = 1
    for priority in JUDGE_PRIORITIES:
        judge = ProcessJudge(LocalJudgeSettings(), priority)  # type: ignore[arg-type]
        try:
            await judge.judge(turn(0))  # the child starts and loads the model first
            for beside, waits in BESIDE.items():
                results: multiprocessing.Queue = multiprocessing.Queue()
                loops = [multiprocessing.Process(target=busy, args=(
                    False, 0, False, seconds, results, waits)) for _ in range(cores)
                    if waits is not None]
                for loop in loops:
                    loop.start()
                judged = await judge_for(judge, seconds, first)
                first += judged
                got = [results.get() for _ in loops]
                for loop in loops:
                    loop.join()
                loops_cpu = f"{sum(cpu for _, cpu, _ in got):.2f}" if got else "-"
                print(f"{priority:17} {beside:24} {judged / seconds:>8.1f} {loops_cpu:>12}")
        finally:
            await judge.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="each CPU-share run")
    parser.add_argument("--judge-seconds", type=float, default=8.0,
                        help="each judged-turns-per-second run")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    cpu_share(args.seconds, cores)
    asyncio.run(judging_rate(args.judge_seconds, cores))


if __name__ == "__main__":
    main()
