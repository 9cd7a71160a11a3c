"""The quality contract: each quality number the sidecar publishes, declared once.

A quality is read from every judged turn: a rate (the share of turns whose verdict carries a
label: a no-answer, an irrelevant answer) or a mean (a verdict's score: groundedness). Drift
detection, the `eval` gates, the Grafana dashboards (grafana/generate.py) and the Prometheus
recording rules (held to it by tests/test_grafana.py) take their names, their sources and their
direction from this table.

    values = turn_values(turn, results)   # {"no_answer_rate": 0.0, "groundedness": 0.75, ...}
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.judges.base import JudgeResult
from monitor.model import AssistantTurn


@dataclass(frozen=True)
class Quality:
    name: str  # drift's `metric` label, the eval report's key, the recording rules' middle part
    verdict: str | None  # the verdict metric that feeds it; None: the turn's own tool calls
    label: str | None  # a rate of this verdict label; None: the mean of the verdict's score
    higher_is_worse: bool
    reference: bool = False  # from the reference-based tool-call judge, not the quality judge
    recorded: bool = False  # deploy/prometheus/rules.yml records its sampling-weighted estimate

    @property
    def recording(self) -> str:
        """The recording rule of its 1-hour estimate (its 95% bounds: `_lower95_`, `_upper95_`)."""
        return f"assistant:{self.name}:{'ratio' if self.is_rate else 'mean'}_rate1h"

    @property
    def is_rate(self) -> bool:
        return self.label is not None or self.verdict is None


QUALITIES = (
    Quality("no_answer_rate", "completeness", "no_answer", higher_is_worse=True, recorded=True),
    Quality("answer_irrelevance_rate", "answer_relevance", "irrelevant", higher_is_worse=True,
            recorded=True),
    # A turn with a failed call. (Prometheus records the failed share of all calls instead,
    # assistant:tool_call_failure_rate, from the unsampled assistant_tool_calls_total.)
    Quality("tool_failure_rate", None, None, higher_is_worse=True),
    Quality("groundedness", "groundedness", None, higher_is_worse=False, recorded=True),
    Quality("context_relevance", "context_relevance", None, higher_is_worse=False,
            recorded=True),
    Quality("tool_use", "tool_use", None, higher_is_worse=False),
    Quality("tool_call_reliability", "tool_calls", None, higher_is_worse=False, reference=True),
)
QUALITY = {q.name: q for q in QUALITIES}


def turn_values(turn: AssistantTurn, results: list[JudgeResult]) -> dict[str, float]:
    """The value of each quality that applies to one judged turn. `results[0]` is the quality
    judge's (the LLM judge, a panel, or the local judge); the reference judge's is found by its
    verdict."""
    out: dict[str, float] = {}
    if not results:
        return out
    for q in QUALITIES:
        if q.verdict is None:
            if turn.tool_calls:
                out[q.name] = float(any(call.error for call in turn.tool_calls))
            continue
        if q.reference:
            verdict = next((r.get(q.verdict) for r in results if r.get(q.verdict)), None)
        else:
            verdict = results[0].get(q.verdict)  # type: ignore[arg-type]
        if verdict is None:
            continue
        if q.label is not None:
            if verdict.label is not None:
                out[q.name] = float(verdict.label == q.label)
        elif verdict.score is not None:
            out[q.name] = verdict.score
    return out
