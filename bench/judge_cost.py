"""LLM calls and tokens per judged turn: our LLM judge, alone and in the cascade, against RAGAS,
on the same 50 turns.

    python bench/judge_cost.py [--ragas-python /tmp/ragas-venv/bin/python]

Both sides talk to a recording OpenAI-compatible server (bench/recording_llm.py) that counts
calls and tokens the same way (ceil(characters / 4)); our side gets verdict-shaped answers from
the scripted judge model of the tests. RAGAS runs in its own virtualenv (see bench/ragas_side.py
for how to make it; it is not a dependency of this project) and its figures are read from its
output. Ours: context relevance + answer relevance + completeness + claim-level groundedness;
RAGAS: faithfulness + answer relevancy + context precision (reference-free), the equivalents.
The cascade (judging.cascade with its defaults) is compared with the LLM judge alone: the share of
its verdicts that agree (labels equal, scores within 0.1, a verdict missing on one side
disagrees) and of the documents' labels; then what the cascade asked the LLM about.
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

from monitor.config import (  # noqa: E402
    CascadeSettings,
    LLMEndpointSettings,
    LLMJudgingSettings,
    LocalJudgeSettings,
)
from monitor.judges.cascade import LOCAL  # noqa: E402
from monitor.judges.llm import LLMJudge  # noqa: E402
from monitor.judges.local import LocalJudge  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402
from monitor.telemetry import Metrics  # noqa: E402
from monitor.verdict import JudgeResult  # noqa: E402
from tests.fakes.judge_model import judge_model  # noqa: E402

SCORE_TOLERANCE = 0.1


async def ours(turns: list[dict], base_url: str, cache: bool, cascade: CascadeSettings | None = None
               ) -> list[JudgeResult]:
    settings = LLMJudgingSettings(
        endpoints=[LLMEndpointSettings(name="bench", base_url=base_url, model="judge")],
        cache_size=20_000 if cache else 0)
    judge = LLMJudge(settings.endpoints[0], settings, Metrics(CollectorRegistry()),
                     evaluators=LocalJudge(LocalJudgeSettings(), read_relevance=True)
                     if cascade else None,
                     cascade=cascade)
    results = [await judge.judge(AssistantTurn(
        trace_id=f"{i + 1:032x}", question=t["question"], answer=t["answer"],
        documents=[RetrievedDocument(content=c) for c in t["contexts"]]))
        for i, t in enumerate(turns)]
    await judge.aclose()
    return results


def agreement(alone: list[JudgeResult], cascade: list[JudgeResult]) -> tuple[float, float, list[str]]:
    """The share of the LLM judge's verdicts the cascade repeats, of its documents' labels, and
    what differs."""
    same, verdicts, same_docs, docs, differ = 0, 0, 0, 0, []
    for turn, (a, c) in enumerate(zip(alone, cascade, strict=True), 1):
        for verdict in a.verdicts:
            other = c.get(verdict.metric)
            verdicts += 1
            agrees = other is not None and (
                verdict.label == other.label if verdict.label is not None
                else abs(verdict.score - other.score) <= SCORE_TOLERANCE)  # type: ignore[operator]
            same += agrees
            if not agrees:
                differ.append(f"turn {turn} {verdict.metric}: {verdict.label or verdict.score} / "
                              f"{other and (other.label or other.score)}")
            if verdict.documents and other and other.documents:
                for x, y in zip(verdict.documents, other.documents, strict=True):
                    docs += 1
                    same_docs += x.label == y.label
    return same / verdicts, same_docs / max(docs, 1), differ


def asked(cascade: list[JudgeResult]) -> str:
    """What the cascade left to the LLM, turn by turn: a turn asked anything costs a call."""
    def by_llm(decided_by: str | None) -> bool:
        return decided_by is not None and decided_by != LOCAL

    turns = {"anything": 0, "claims": 0, "documents": 0, "documents alone": 0,
             "the answer, no claim": 0}
    claims = documents = 0
    for result in cascade:
        asked_claims = sum(by_llm(c.decided_by) for v in result.verdicts for c in v.claims or ())
        asked_documents = sum(by_llm(d.decided_by)
                              for v in result.verdicts for d in v.documents or ())
        asked_answer = any(by_llm(v.signals.decided_by) for v in result.verdicts
                           if v.metric in ("answer_relevance", "completeness") and v.signals)
        claims += asked_claims
        documents += asked_documents
        turns["anything"] += bool(asked_claims or asked_documents or asked_answer)
        turns["claims"] += bool(asked_claims)
        turns["documents"] += bool(asked_documents)
        turns["documents alone"] += bool(asked_documents and not asked_claims and not asked_answer)
        turns["the answer, no claim"] += bool(asked_answer and not asked_claims)
    return (", ".join(f"{part} {n}" for part, n in turns.items()) +
            f" (of {len(cascade)} turns; {claims} claims and {documents} documents in all)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--ragas-python", default="/tmp/ragas-venv/bin/python")
    parser.add_argument("--band", action="append", default=[], metavar="PART=LOW,HIGH",
                        help="a cascade band other than the shipped one, e.g. "
                             "groundedness=0.12,0.93 (parts: judging.cascade's)")
    args = parser.parse_args()
    bands = {part: tuple(float(x) for x in edges.split(","))
             for part, edges in (band.split("=") for band in args.band)}
    cascade = CascadeSettings(enabled=True, **bands)
    if bands:
        print(f"cascade bands: {bands}")
    turns = make_turns(args.turns)
    n = len(turns)
    rows, results = {}, {}
    with RecordingLLM(lambda request: judge_model(request).content) as llm:
        for label, cache, settings in (("assistant-monitor (no cache)", False, None),
                                       ("assistant-monitor (cache)", True, None),
                                       ("assistant-monitor (cascade)", False, cascade)):
            llm.reset()
            results[label] = asyncio.run(ours(turns, llm.base_url, cache, settings))
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
        for label in ("assistant-monitor (no cache)", "assistant-monitor (cascade)"):
            mine = rows[label]
            print(f"{label} / RAGAS: calls {mine[0] / ragas[0]:.2f}, tokens "
                  f"{(mine[1] + mine[2]) / (ragas[1] + ragas[2]):.3f}")
    verdicts, documents, differ = agreement(results["assistant-monitor (no cache)"],
                                            results["assistant-monitor (cascade)"])
    print(f"cascade against the LLM judge alone: {verdicts:.3f} of verdicts agree (scores within "
          f"{SCORE_TOLERANCE}), {documents:.3f} of document labels")
    for line in differ:
        print(f"  differs: {line}")
    print(f"the cascade asked the LLM about: {asked(results['assistant-monitor (cascade)'])}")


if __name__ == "__main__":
    main()
