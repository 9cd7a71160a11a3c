"""A panel (jury) of judges: every judge judges the turn; labels by majority, scores by mean.

The panel's verdicts carry each judge's vote and the share that agreed (`agreement.votes`,
`agreement.share`), so disagreement is visible per turn and as a metric. Ties go to the
judge listed first. One judge failing fails the panel's judgement (the turn is retried, and
the other judges' calls are cancelled): a verdict from part of a panel would not be comparable
with the others.
"""

from __future__ import annotations

import time
from dataclasses import replace

from monitor.judges.base import Judge, close_judges, gather_all
from monitor.judges.llm import majority
from monitor.model import AssistantTurn
from monitor.verdict import Agreement, JudgeResult, Verdict


class PanelJudge:
    def __init__(self, judges: list[Judge], aggregate: str = "majority", name: str = "panel") -> None:
        self.judges = judges
        self.aggregate = aggregate
        self.name = name

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        start = time.perf_counter()
        results = await gather_all(*(j.judge(turn) for j in self.judges))
        metrics = dict.fromkeys(v.metric for r in results for v in r.verdicts)  # ordered, unique
        verdicts = []
        for metric in metrics:
            votes = [(r.judge, v) for r in results if (v := r.get(metric)) is not None]
            verdicts.append(self._combine(votes))
        return JudgeResult(
            self.name, verdicts, calls=sum(r.calls for r in results),
            input_tokens=sum(r.input_tokens for r in results),
            output_tokens=sum(r.output_tokens for r in results),
            latency_s=time.perf_counter() - start,
            prompt_version=";".join(sorted({r.prompt_version for r in results
                                            if r.prompt_version})) or None,
            model=";".join(f"{r.judge}={r.model}" for r in results if r.model) or None)

    async def aclose(self) -> None:
        await close_judges(self.judges)

    def _combine(self, votes: list[tuple[str, Verdict]]) -> Verdict:
        first = votes[0][1]
        ballots = {judge: (v.label if v.label is not None else v.score) for judge, v in votes}
        if first.label is not None:
            label, share = majority([v.label for _, v in votes if v.label is not None])
            chosen = next(v for _, v in votes if v.label == label)
            # The chosen judge's own labels (documents, claims, ...) explain the verdict.
            return replace(chosen, score=None, agreement=Agreement(share=share, votes=ballots))
        scores = [v.score for _, v in votes if v.score is not None]
        mean = sum(scores) / len(scores)
        share = 1.0 - (max(scores) - min(scores))  # 1: all equal, 0: opposite ends of 0..1
        return replace(first, score=mean, agreement=Agreement(share=share, votes=ballots))
