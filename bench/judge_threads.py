"""CPU cost of the local judge by onnxruntime intra-op thread count.

    python bench/judge_threads.py [--turns 30]

Side by side in one run: each turn (3 documents, a 2-sentence answer, new text every time so the
embedding cache never answers) is judged by a judge with 1 engine thread and one with 2, in
alternating order; prints median wall time and median CPU-seconds (all the process's threads,
onnxruntime's included) per judged turn.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.config import LocalJudgeSettings  # noqa: E402
from monitor.judges.local import LocalJudge  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402

WORDS = ("plan refund invoice shipping order account support customer delivery warranty fee "
         "days euros weekly office policy contract access upgrade travel booking").split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def turn(rng: random.Random, n: int, document_words: int = 60) -> AssistantTurn:
    return AssistantTurn(
        trace_id=f"{n:032x}", question=sentence(rng, 9).rstrip(".") + "?",
        answer=f"{sentence(rng, 12)} {sentence(rng, 10)}",
        documents=[RetrievedDocument(content=" ".join(sentence(rng, 12)
                                                     for _ in range(document_words // 12)))
                   for _ in range(3)])


def cost(judge: LocalJudge, t: AssistantTurn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    judge.judge_sync(t)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    rng = random.Random(6)
    judges = {threads: LocalJudge(LocalJudgeSettings(threads=threads)) for threads in (1, 2)}
    for judge in judges.values():
        judge.judge_sync(turn(rng, 0))  # warm up
    figures: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    for n in range(args.turns):
        order = (1, 2) if n % 2 == 0 else (2, 1)
        for threads in order:
            figures[threads].append(cost(judges[threads], turn(rng, n + 1)))
    print(f"judged turn (3 documents of 60 words, 2-sentence answer), {args.turns} turns each, "
          "medians:")
    for threads, rows in figures.items():
        print(f"  threads={threads}: wall {statistics.median(r[0] for r in rows) * 1000:7.1f} ms"
              f"   CPU {statistics.median(r[1] for r in rows) * 1000:7.1f} ms per turn")


if __name__ == "__main__":
    main()
