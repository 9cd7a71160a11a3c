"""The judging stage: a fixed number of workers take sampled turns from the store and judge them.

    stage = JudgeStage(settings.judging, store, [LocalJudge(...)], metrics, on_verdicts)
    await stage.start()   # puts back turns a crash left half-judged, starts the workers
    stage.wake()          # a turn was enqueued
    await stage.stop()    # finishes the turns being judged (bounded), leaves the rest persisted

Before any judge sees a turn, its question, answer and documents are cut to `judging.input`'s
byte limits (counted), so one huge turn cannot stall judging. A failed judgement (JudgeError,
or any exception) puts the turn back with a delay, up to `max_attempts`; then it is marked
failed and counted. A judge that is unavailable (endpoint down or answering garbage, circuit
open) spends no attempt: the turn goes back to the queue and the workers pause until the judge
may be back, so an outage loses no turn. Judge calls are rate-limited across workers by
`calls_per_minute`. `stop()` returns within its timeout even when a judge call does not end;
a turn cut short goes back to the store, judged after restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from monitor.config import JudgeInputSettings, JudgingSettings
from monitor.judges.base import Judge, JudgeUnavailable, close_judges
from monitor.judges.redact import PiiAnalyzer, Redactor, redact_judged
from monitor.judges.telemetry import JudgeTelemetry
from monitor.model import AssistantTurn
from monitor.store import Claimed, NotClaimed, Store, ThreadedStore
from monitor.verdict import JudgeResult

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


def cut_text(text: str | None, limit: int) -> tuple[str | None, bool]:
    """`text` cut to at most `limit` UTF-8 bytes (on a character boundary), and whether it was."""
    if text is None or len(text) * 4 <= limit:  # no character is longer than 4 bytes
        return text, False
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", "ignore"), True


def judge_input(turn: AssistantTurn, limits: JudgeInputSettings,
                on_cut: Callable[[str], None]) -> AssistantTurn:
    """The turn as judges see it: question, answer and documents within `limits`;
    `on_cut(field)` once per field cut."""
    update: dict[str, object] = {}
    for name, limit in (("question", limits.question_bytes), ("answer", limits.answer_bytes)):
        text, cut = cut_text(getattr(turn, name), limit)
        if cut:
            update[name] = text
            on_cut(name)
    documents = turn.documents[:limits.documents]
    changed = len(documents) < len(turn.documents)
    if changed:
        on_cut("documents")
    kept = []
    for document in documents:
        content, cut = cut_text(document.content, limits.document_bytes)
        if cut:
            document = document.model_copy(update={"content": content})
            on_cut("document")
            changed = True
        kept.append(document)
    if changed:
        update["documents"] = kept
    return turn.model_copy(update=update) if update else turn


class JudgeStage:
    def __init__(self, settings: JudgingSettings, store: Store | ThreadedStore, judges: list[Judge],
                 metrics: JudgeTelemetry, on_verdicts: OnVerdicts,
                 on_failed: Callable[[str], None] | None = None,
                 store_redaction: PiiAnalyzer | None = None) -> None:
        """`store_redaction`: with it, judged turns and their verdicts are stored redacted."""
        self.settings = settings
        self.store_redaction = store_redaction
        # Its SQLite calls off the event loop (a plain Store: this stage gives it a thread).
        self.store = store if isinstance(store, ThreadedStore) else ThreadedStore(store)
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
        recovered = await self.store.recover()
        if recovered:
            log.info("%d turns were being judged when the sidecar stopped; judging them again",
                     recovered)
        self.metrics.judge_backlog.set(self.store.backlog())
        self._stopping = False
        self._workers = [asyncio.create_task(self._worker(), name=f"judge-{i}")
                         for i in range(self.settings.workers)]
        self.wake()

    async def stop(self, timeout_s: float = 10.0) -> None:
        """Let workers finish the turn in hand for half of `timeout_s`, then cancel them (their
        turns go back to the store untouched); returns within `timeout_s` even when a judge call
        does not end (a request, a CPU-bound judge in a thread, which is left to finish)."""
        deadline = time.monotonic() + timeout_s
        self._stopping = True
        self.wake()
        if self._workers:
            _, pending = await asyncio.wait(self._workers, timeout=timeout_s / 2)
            for task in pending:
                task.cancel()
            if pending:
                _, stuck = await asyncio.wait(pending, timeout=timeout_s / 4)
                if stuck:  # their turns stay `judging`; recover() puts them back at start-up
                    log.warning("%d judge workers did not stop in time", len(stuck))
            self._workers = []
        try:  # LLM judges hold HTTP connections
            await asyncio.wait_for(close_judges(self.judges), max(deadline - time.monotonic(), 0))
        except TimeoutError:
            log.warning("closing the judges' connections timed out")

    async def _worker(self) -> None:
        while not self._stopping:
            pause = self._paused_until - time.monotonic()
            if pause > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopped(), pause)
                continue
            claimed = await self.store.claim()
            if claimed is None:
                self._work.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._work.wait(), _IDLE_POLL_S)
                continue
            self._busy += 1
            try:
                await self._judge(claimed)
            except asyncio.CancelledError:  # stopped mid-judgement: judged after restart
                await self.store.release(claimed.trace_id, retry_at=0.0)
                raise
            except Exception as exc:  # noqa: BLE001 - say, verdicts the store refused: the
                # worker lives on and the turn is retried, then failed, never left `judging`.
                # The type only: an exception's text may quote trace content.
                log.error("judging a turn failed: %s", type(exc).__name__)
                await self._retry_or_fail(claimed, type(exc).__name__)
            finally:
                self._busy -= 1
            self.metrics.judge_backlog.set(self.store.backlog())

    async def _judge(self, claimed: Claimed) -> None:
        turn = judge_input(claimed.turn, self.settings.input,
                           lambda field: self.metrics.judge_input_truncated.labels(field).inc())
        results = []
        for judge in self.judges:
            await self.limiter.acquire()
            try:
                results.append(await judge.judge(turn))
            except JudgeUnavailable as exc:
                self.metrics.judge_requests.labels(judge.name, "unavailable").inc()
                await self.store.release(claimed.trace_id,
                                         retry_at=time.time() + exc.retry_after_s)
                self._paused_until = max(self._paused_until, time.monotonic() + exc.retry_after_s)
                log.warning("%s; %d turns wait in the store", exc, self.store.backlog())
                return
            except Exception as exc:  # noqa: BLE001 - any judge failure is retried, then counted
                # The type only: an exception's text may quote trace content.
                self.metrics.judge_requests.labels(judge.name, "error").inc()
                await self._retry_or_fail(claimed, f"{judge.name}: {type(exc).__name__}")
                return
        results = [r for r in results if r.verdicts or r.calls]  # judges with nothing to say
        try:
            if self.store_redaction is not None:  # the store keeps the turn and verdicts redacted
                kept, stored = await asyncio.to_thread(redact_judged, turn, results,
                                                       Redactor(self.store_redaction))
                await self.store.complete(claimed.trace_id, stored, kept, turn.revision)
            else:
                await self.store.complete(claimed.trace_id, results, revision=turn.revision)
        except NotClaimed:  # another replica stored the turn again and judges it, or late spans
            # made a revision of it, judged next: the verdicts of what it was are not kept
            log.info("a turn was taken over by another replica, or revised while judged; its "
                     "verdicts are left to the next judgement")
            return
        try:
            self.on_verdicts(claimed.turn, claimed.probability, results)
        except Exception as exc:  # noqa: BLE001 - the verdicts are stored; metrics must not stop us
            log.error("emitting verdict metrics failed: %s", type(exc).__name__)

    async def _stopped(self) -> None:
        while not self._stopping:
            await self._work.wait()
            self._work.clear()

    async def _retry_or_fail(self, claimed: Claimed, error: str) -> None:
        if claimed.attempts >= self.settings.max_attempts:
            await self.store.fail(claimed.trace_id, error, retry_at=None)
            self.metrics.turns_dropped.labels("judge_failed").inc()
            log.warning("giving up on a turn after %d attempts: %s", claimed.attempts, error)
            if self.on_failed is not None:
                self.on_failed(claimed.trace_id)
        else:
            backoff = self.settings.retry_backoff_s * 2 ** (claimed.attempts - 1)
            await self.store.fail(claimed.trace_id, error, retry_at=time.time() + backoff)
