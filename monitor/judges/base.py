"""The judge interface and the verdicts every judge returns.

    class MyJudge:
        name = "my-judge"
        async def judge(self, turn: AssistantTurn) -> JudgeResult: ...

Metrics and their labels (the metric contract in DESIGN.md):

    context_relevance   score = share of the turn's documents judged relevant (0..1)
    answer_relevance    label relevant | irrelevant
    completeness        label complete | incomplete | no_answer
    groundedness        score = inferable / (inferable + ungrounded) claims; generic claims
                        (greetings, hedges, "let me know if...") count neither way
    tool_use            score = share of tool calls judged needed and with supported arguments
                        (reference-free; per-call labels in details["calls"])
    tool_calls          score = reliability against the expected calls (reference-based; the
                        five metrics and the counts in details)
A judge leaves out a metric that does not apply (no documents, no answer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from monitor.model import AssistantTurn

Metric = Literal["context_relevance", "answer_relevance", "completeness", "groundedness",
                 "tool_use", "tool_calls"]

LABELS: dict[str, tuple[str, ...]] = {
    "answer_relevance": ("relevant", "irrelevant"),
    "completeness": ("complete", "incomplete", "no_answer"),
}
CLAIM_LABELS = ("inferable", "generic", "ungrounded")


T = TypeVar("T")


class JudgeError(Exception):
    """Judging this turn failed for a reason about the turn (the endpoint refuses its content,
    it alone keeps getting invalid replies); the turn is retried, up to judging.max_attempts."""


class JudgeUnavailable(JudgeError):
    """The judge cannot give verdicts now (down, answering garbage, circuit open): the turn
    waits and is judged later, no attempt is spent."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(slots=True)
class Verdict:
    metric: Metric
    label: str | None = None
    score: float | None = None
    rationale: str = ""
    details: dict[str, Any] = field(default_factory=dict)  # per-document / per-claim labels

    def __post_init__(self) -> None:
        valid = LABELS.get(self.metric)
        if valid is not None and self.label not in valid:
            raise ValueError(f"{self.metric} label {self.label!r} is not one of {valid}")
        if self.score is not None and not 0.0 <= self.score <= 1.0:
            raise ValueError(f"{self.metric} score {self.score} is outside 0..1")


@dataclass(slots=True)
class JudgeResult:
    judge: str
    verdicts: list[Verdict]
    calls: int = 0  # LLM calls made
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    prompt_version: str | None = None

    def get(self, metric: Metric) -> Verdict | None:
        return next((v for v in self.verdicts if v.metric == metric), None)


class Judge(Protocol):
    name: str

    async def judge(self, turn: AssistantTurn) -> JudgeResult: ...


async def gather_all(*calls: Awaitable[T]) -> list[T]:
    """The results of `calls`, run concurrently. When one fails, the others are cancelled and
    awaited before its exception is raised (as itself, not in a group), so no call of this
    judgement is left running once it returned (`asyncio.gather` would leave them running)."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(call) for call in calls]  # type: ignore[arg-type]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


async def close_judges(judges: list[Judge] | tuple[Judge, ...]) -> None:
    """Close the judges that hold connections (LLM judges); the others have nothing to close."""
    for judge in judges:
        close = getattr(judge, "aclose", None)
        if close is not None:
            await close()
