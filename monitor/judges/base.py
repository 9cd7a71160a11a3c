"""The judge interface and the verdicts every judge returns.

    class MyJudge:
        name = "my-judge"
        async def judge(self, turn: AssistantTurn) -> JudgeResult: ...

The verdict metrics, their labels and how each is scored: monitor/judge_metrics.py declares them.
A judge leaves out a metric that does not apply (no documents, no answer). What a verdict rests
on is typed (monitor/verdict.py): per-document and per-claim labels, per-call labels, reference
counts, agreement.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Protocol, TypeVar

from monitor.model import AssistantTurn
from monitor.verdict import JudgeResult

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


class Judge(Protocol):
    name: str

    async def judge(self, turn: AssistantTurn) -> JudgeResult: ...


async def gather_all(*calls: Awaitable[T]) -> list[T]:
    """The results of `calls`, run concurrently. When one fails, the others are cancelled and
    awaited before its exception is raised (as itself, not in a group), so no call of this
    judgement is left running once it returned (`asyncio.gather` would leave them running)."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks: list[asyncio.Task[T]] = [
                group.create_task(call) for call in calls]  # type: ignore[arg-type]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


async def close_judges(judges: list[Judge] | tuple[Judge, ...]) -> None:
    """Close the judges that hold connections (LLM judges); the others have nothing to close."""
    for judge in judges:
        close = getattr(judge, "aclose", None)
        if close is not None:
            await close()
