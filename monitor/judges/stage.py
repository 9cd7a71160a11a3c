"""The judging stage: a fixed number of workers take sampled turns from the store and judge them.

    stage = JudgeStage(settings.judging, store, [LocalJudge(...)], metrics, on_verdicts)
    await stage.start()   # puts back turns a crash left half-judged, starts the workers
    stage.wake()          # a turn was enqueued
    await stage.stop()    # finishes the turns being judged (bounded), leaves the rest persisted

A failed judgement (JudgeError, or any exception) puts the turn back with a delay, up to
`max_attempts`; then it is marked failed and counted. A judge that is unavailable (endpoint
down, circuit open) spends no attempt: the turn goes back to the queue and the workers pause
until the judge may be back, so an outage loses no turn. Judge calls are rate-limited across
workers by `calls_per_minute`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from monitor.config import JudgingSettings
from monitor.emit.metrics import Metrics
from monitor.judges.base import Judge, JudgeResult, JudgeUnavailable, close_judges
from monitor.model import AssistantTurn
from monitor.store import Claimed, Store

log = logging.getLogger(__name__)

OnVerdicts = Callable[[AssistantTurn, float, list[JudgeResult]], None]
_IDLE_POLL_S = 1.0  # also picks up turns whose retry delay has passed


class RateLimiter:
    """At most `per_minute` acquisitions a minute, spread evenly (shared by all workers)."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            wait = self._next - now
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            await asyncio.sleep(wait)


class JudgeStage:
    def __init__(self, settings: JudgingSettings, store: Store, judges: list[Judge],
                 metrics: Metrics, on_verdicts: OnVerdicts,
                 on_failed: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.store = store
        self.judges = judges
        self.metrics = metrics
        self.on_verdicts = on_verdicts
        self.on_failed = on_failed  # a turn given up for good (its trace id)
        self.limiter = RateLimiter(settings.calls_per_minute)
        self._work = asyncio.Event()
        self._workers: list[asyncio.Task[None]] = []
        self._stopping = False
        self._busy = 0
        self._paused_until = 0.0  # monotonic; set while a judge is unavailable

    def wake(self) -> None:
        self._work.set()

    @property
    def idle(self) -> bool:
        return self._busy == 0 and self.store.backlog() == 0

    async def start(self) -> None:
        recovered = self.store.recover()
        if recovered:
            log.info("%d turns were being judged when the sidecar stopped; judging them again",
                     recovered)
        self.metrics.judge_backlog.set(self.store.backlog())
        self._stopping = False
        self._workers = [asyncio.create_task(self._worker(), name=f"judge-{i}")
                         for i in range(self.settings.workers)]
        self.wake()

    async def stop(self, timeout_s: float = 10.0) -> None:
        """Let workers finish the turn in hand (bounded); what is not judged stays persisted."""
        self._stopping = True
        self.wake()
        if self._workers:
            _, pending = await asyncio.wait(self._workers, timeout=timeout_s)
            for task in pending:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._workers = []
        await close_judges(self.judges)  # LLM judges hold HTTP connections

    async def _worker(self) -> None:
        while not self._stopping:
            pause = self._paused_until - time.monotonic()
            if pause > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopped(), pause)
                continue
            claimed = self.store.claim()
            if claimed is None:
                self._work.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._work.wait(), _IDLE_POLL_S)
                continue
            self._busy += 1
            try:
                await self._judge(claimed)
            finally:
                self._busy -= 1
            self.metrics.judge_backlog.set(self.store.backlog())

    async def _judge(self, claimed: Claimed) -> None:
        results = []
        for judge in self.judges:
            await self.limiter.acquire()
            try:
                results.append(await judge.judge(claimed.turn))
            except JudgeUnavailable as exc:
                self.metrics.judge_requests.labels(judge.name, "unavailable").inc()
                self.store.release(claimed.trace_id, retry_at=time.time() + exc.retry_after_s)
                self._paused_until = max(self._paused_until, time.monotonic() + exc.retry_after_s)
                log.warning("%s; %d turns wait in the store", exc, self.store.backlog())
                return
            except Exception as exc:  # noqa: BLE001 - any judge failure is retried, then counted
                # The type only: an exception's text may quote trace content.
                self.metrics.judge_requests.labels(judge.name, "error").inc()
                self._retry_or_fail(claimed, f"{judge.name}: {type(exc).__name__}")
                return
        results = [r for r in results if r.verdicts or r.calls]  # judges with nothing to say
        self.store.complete(claimed.trace_id, results)
        try:
            self.on_verdicts(claimed.turn, claimed.probability, results)
        except Exception as exc:  # noqa: BLE001 - the verdicts are stored; metrics must not stop us
            log.error("emitting verdict metrics failed: %s", type(exc).__name__)

    async def _stopped(self) -> None:
        while not self._stopping:
            await self._work.wait()
            self._work.clear()

    def _retry_or_fail(self, claimed: Claimed, error: str) -> None:
        if claimed.attempts >= self.settings.max_attempts:
            self.store.fail(claimed.trace_id, error, retry_at=None)
            self.metrics.turns_dropped.labels("judge_failed").inc()
            log.warning("giving up on a turn after %d attempts: %s", claimed.attempts, error)
            if self.on_failed is not None:
                self.on_failed(claimed.trace_id)
        else:
            backoff = self.settings.retry_backoff_s * 2 ** (claimed.attempts - 1)
            self.store.fail(claimed.trace_id, error, retry_at=time.time() + backoff)
