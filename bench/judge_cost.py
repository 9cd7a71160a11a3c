"""LLM calls and tokens per judged turn: our LLM judge against RAGAS, on the same 50 turns.

    python bench/judge_cost.py [--ragas-python /tmp/ragas-venv/bin/python]

Both sides talk to a recording OpenAI-compatible server (bench/recording_llm.py) that counts
calls and tokens the same way (ceil(characters / 4)); our side gets verdict-shaped answers from
the scripted judge model of the tests. RAGAS runs in its own virtualenv (see bench/ragas_side.py
for how to make it; it is not a dependency of this project) and its figures are read from its
output. Ours: context relevance + answer relevance + completeness + claim-level groundedness;
RAGAS: faithfulness + answer relevancy + context precision (reference-free), the equivalents.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from prometheus_client import CollectorRegistry  # noqa: E402
from ragas_side import make_turns  # noqa: E402
from recording_llm import RecordingLLM  # noqa: E402

from monitor.config import LLMEndpointSettings, LLMJudgingSettings  # noqa: E402
from monitor.judges.llm import LLMJudge  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402
from monitor.telemetry import Metrics  # noqa: E402
from tests.fakes.judge_model import judge_model  # noqa: E402


async def ours(turns: list[dict], base_url: str, cache: bool) -> None:
    settings = LLMJudgingSettings(
        endpoints=[LLMEndpointSettings(name="bench", base_url=base_url, model="judge")],
        cache_size=20_000 if cache else 0)
    judge = LLMJudge(settings.endpoints[0], settings, Metrics(CollectorRegistry()))
    for i, t in enumerate(turns):
        await judge.judge(AssistantTurn(
            trace_id=f"{i + 1:032x}", question=t["question"], answer=t["answer"],
            documents=[RetrievedDocument(content=c) for c in t["contexts"]]))
    await judge.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--ragas-python", default="/tmp/ragas-venv/bin/python")
    args = parser.parse_args()
    turns = make_turns(args.turns)
    n = len(turns)
    rows = {}
    with RecordingLLM(lambda request: judge_model(request).content) as llm:
        for label, cache in (("assistant-monitor (no cache)", False),
                             ("assistant-monitor (cache)", True)):
            llm.reset()
            asyncio.run(ours(turns, llm.base_url, cache))
            tokens = llm.tokens("chat")
            rows[label] = (llm.calls("chat") / n, tokens["prompt_tokens"] / n,
                           tokens["completion_tokens"] / n)
    if Path(args.ragas_python).exists():
        done = subprocess.run([args.ragas_python, str(ROOT / "bench/ragas_side.py"),
                               "--turns", str(n)], capture_output=True, text=True, cwd=ROOT)
        total = re.search(r"^total\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", done.stdout, re.MULTILINE)
        if total:
            rows["RAGAS " + done.stdout.split(";")[0].split()[-1]] = tuple(
                float(x) for x in total.groups())
        else:
            print(f"RAGAS run failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    else:
        print(f"(no RAGAS virtualenv at {args.ragas_python}: see bench/ragas_side.py)")

    print(f"{n} turns, {sum(len(t['contexts']) for t in turns) / n:.2f} contexts a turn; "
          "per judged turn:")
    print(f"{'':32}{'LLM calls':>10}{'prompt tok':>12}{'compl. tok':>12}{'total tok':>11}")
    for label, (calls, prompt, completion) in rows.items():
        print(f"{label:32}{calls:>10.2f}{prompt:>12.0f}{completion:>12.0f}"
              f"{prompt + completion:>11.0f}")
    ragas = next((v for k, v in rows.items() if k.startswith("RAGAS")), None)
    if ragas:
        mine = rows["assistant-monitor (no cache)"]
        print(f"\nours / RAGAS: calls {mine[0] / ragas[0]:.2f}, tokens "
              f"{(mine[1] + mine[2]) / (ragas[1] + ragas[2]):.2f}")


if __name__ == "__main__":
    main()
