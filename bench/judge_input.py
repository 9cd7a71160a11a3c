"""Time to judge one turn with a long question, as received and as judges get it (cut to
`judging.input`), side by side, with the local judge on this machine's CPU.

    python bench/judge_input.py                 # questions of 1, 4 and 16 KiB, best of 3
    python bench/judge_input.py --kib 4 64 --repeat 1

The uncut time grows faster than the question (the embedding model attends over all of it);
the cut one stays flat. A 1 MiB question uncut took over 9 minutes (issue 12): not run here.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitor.config import JudgeInputSettings, LocalJudgeSettings  # noqa: E402
from monitor.judges.local import LocalJudge  # noqa: E402
from monitor.judges.stage import judge_input  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402

SENTENCE = "How long do refunds take for orders placed online and paid by card? "


def turn(kib: int) -> AssistantTurn:
    question = (SENTENCE * (kib * 1024 // len(SENTENCE) + 1))[:kib * 1024]
    return AssistantTurn(trace_id="a" * 32, question=question, answer="Refunds take 30 days.",
                         documents=[RetrievedDocument(content="Refunds are issued within 30 "
                                                               "days of purchase.")])


def timed(judge: LocalJudge, turn: AssistantTurn, repeat: int) -> float:
    """The best of `repeat` runs (a busy machine only ever adds time)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        judge.judge_sync(turn)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kib", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    limits = JudgeInputSettings()
    judge = LocalJudge(LocalJudgeSettings())
    judge.embedder._cache_size = 0  # every run computes its embeddings
    print(f"judging.input.question_bytes = {limits.question_bytes}")
    print(f"{'question':>10} {'as received':>12} {'as judged':>10}")
    for kib in args.kib:
        full = turn(kib)
        cut = judge_input(full, limits, lambda field: None)
        print(f"{kib:>7} KiB {timed(judge, full, args.repeat):>10.2f} s "
              f"{timed(judge, cut, args.repeat):>8.2f} s", flush=True)


if __name__ == "__main__":
    main()
