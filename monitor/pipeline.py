"""Spans in, turns out: the span sink the receivers and the Kafka source feed, the turn queue,
and the pump that passes turns downstream (the sampling stage, then the store or the judge
queue's publisher).

    pipeline = TurnPipeline(settings, metrics, sampling, recent, decoder, wal, services, routes)
    pipeline.accepting = True
    pipeline.consume(batch, "grpc", "traces")   # spans → assembler → completed turns queued
    await pipeline.tick()                       # runs for ever: completes turns that are due
    await pipeline.pump()                       # runs for ever: passes queued turns on, in batches

The assembler takes the sampler's decision as it completes each turn (`SampledConsumer`), so the
queue holds the kept turns, and of the others only their trace ids. A turn is settled (its
write-ahead-log records freed, its Kafka offsets committable) once downstream has taken it:
stored or published for a judge, or decided against.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, deque
from collections.abc import Sequence
from typing import cast

from monitor import _native
from monitor.admin import RecentTurns
from monitor.assemble import Completed, TurnAssembler
from monitor.config import Settings
from monitor.emit.metrics import LabelGuard
from monitor.errors import PermanentError, RetryableError
from monitor.ingest import Signal
from monitor.ingest.kafka_source import KafkaSource
from monitor.ingest.otlp import Batch, Format, OtlpDecoder
from monitor.ingest.wal import WriteAheadLog
from monitor.model import AssistantTurn, Sampled, SampledConsumer, TurnConsumer
from monitor.sessions import SessionClosed, SessionTracker
from monitor.telemetry import Metrics

log = logging.getLogger(__name__)

TICK_S = 0.1  # how often due turns are completed
# Turns passed downstream at once: what queued while the last batch was stored goes as one
# store transaction and one hand-off to the store's thread (or one batch of sends to the judge
# queue's broker), so the pump keeps up with ingest instead of paying a round trip per turn.
BATCH = 256


class PassAll:
    """A custom `TurnConsumer` in the sampling stage's place: every turn is passed on to it."""

    sampler: _native.TurnSampler | None = None

    def __init__(self, consumer: TurnConsumer) -> None:
        self.consumer = consumer

    def backlog(self) -> int:
        return 0

    async def consume(self, sampled: Sequence[Sampled], not_sampled: int) -> None:
        if sampled:  # with no sampler, assembly passes on every turn built (no records)
            await self.consumer.consume([cast(AssistantTurn, turn) for turn, _, _ in sampled])


class TurnPipeline:
    def __init__(self, settings: Settings, metrics: Metrics, downstream: SampledConsumer,
                 recent: RecentTurns, decoder: OtlpDecoder, wal: WriteAheadLog | None,
                 services: LabelGuard, routes: LabelGuard,
                 session_closed: SessionClosed | None = None) -> None:
        """`session_closed`: called with each session closed idle or ended, and its outcome."""
        self.settings = settings
        self.metrics = metrics
        self.assembler = TurnAssembler(settings.assembly, metrics, recent=recent.size,
                                       sampler=downstream.sampler)
        self.downstream = downstream
        self.recent = recent
        self.decoder = decoder
        self.wal = wal
        self.services = services
        self.routes = routes
        self.sessions = SessionTracker(settings.sessions, metrics, services, routes,
                                       session_closed)
        self.kafka: KafkaSource | None = None  # set once built: it feeds this pipeline
        self.accepting = False
        self.waiting: deque[Completed] = deque()  # turns completed, waiting to be passed on
        self.waiting_turns = 0  # how many: admit() bounds it
        self.waiting_bytes = 0  # what they hold (Completed.size): admit() bounds it too
        self._waiting = asyncio.Event()  # set while turns wait: the pump's wake-up
        self._idle = asyncio.Event()  # no turn waits or is being passed on
        self._idle.set()
        self._queued: set[bytes] = set()  # trace ids of turns waiting in the turn queue
        self._passing = 0  # turns the pump is passing on
        self._kept_passing = 0  # of them, kept for judging

    @property
    def busy(self) -> bool:
        """Turns wait in the queue or are being passed on."""
        return bool(self.waiting) or self._passing > 0

    # -- SpanSink ----------------------------------------------------------------------------

    def admit(self) -> None:
        if not self.accepting:
            raise RetryableError("the sidecar is not accepting data (starting or stopping)",
                                 overloaded=False)
        limits = self.settings.pipeline
        if self.waiting_turns >= limits.turn_queue_size:
            raise RetryableError("turn queue is full; retry later")
        if self.waiting_bytes >= limits.turn_queue_max_mib << 20:
            raise RetryableError(f"turn queue is full ({limits.turn_queue_max_mib} MiB of turns); "
                                 "retry later")
        if self.wal is not None and self.wal.full:
            self.metrics.wal_refusals.inc()
            raise RetryableError("write-ahead log is full; retry later")

    def accept(self, batch: Batch, receiver: str, signal: Signal, body: bytes,
               fmt: Format) -> asyncio.Future[None] | None:
        """An OTLP receiver's request, logged and consumed; on disk once the future is done
        (None: already)."""
        if self.wal is None or not batch.facts:
            self.consume(batch, receiver, signal)
            return None
        lsn = self.wal.append(signal, fmt, body)
        self.consume(batch, receiver, signal)
        self.wal.track(lsn, {f.trace_id for f in batch.facts}, self.holds)
        return self.wal.on_disk(lsn)

    def consume(self, batch: Batch, receiver: str, signal: Signal) -> None:
        self.metrics.count_batch(batch, receiver, signal)
        self._emit(self.assembler.add(batch.facts, self._backlog()))
        self._update_gauges()

    # -- what the sidecar calls ------------------------------------------------------------------

    def flush(self) -> None:
        """Complete every pending turn now (a stop, a replay's end)."""
        self._emit(self.assembler.flush_all(self._backlog()))

    async def drain(self, timeout_s: float = 10.0) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while self.busy:
                    await asyncio.sleep(0.01)

    async def passed_on(self) -> None:
        """Until every turn queued so far has been passed on (a Kafka hand-back waits so)."""
        await self._idle.wait()

    def holds(self, trace_id: bytes) -> bool:
        return self.assembler.holds(trace_id) or trace_id in self._queued

    def discard(self, trace_ids: set[bytes]) -> None:
        self.metrics.turns_discarded.inc(self.assembler.discard(trace_ids))

    def replay_wal(self) -> None:
        """Requests logged before a crash whose turns were not settled go through assembly again."""
        wal = self.wal
        if wal is None:
            return
        records = spans = 0
        for record in wal.replay():
            try:
                batch = self.decoder.decode(record.signal, record.body, record.fmt)
            except PermanentError:  # it decoded when it was accepted: a changed configuration
                wal.metrics.wal_records_skipped.labels("undecodable").inc()
                continue
            batch.facts = [f for f in batch.facts if not wal.settled_after(f.trace_id, record.lsn)]
            if not batch.facts:
                continue
            batch.received, batch.rejected, batch.issues = len(batch.facts), Counter(), Counter()
            try:
                self.consume(batch, "wal", record.signal)
            except Exception as exc:  # a request that breaks assembly must not stop every start
                log.error("write-ahead log: replaying a request failed: %s", type(exc).__name__)
                wal.metrics.wal_records_skipped.labels("unprocessable").inc()
                continue
            wal.track(record.lsn, {f.trace_id for f in batch.facts}, self.holds)
            records, spans = records + 1, spans + len(batch.facts)
        wal.start()
        if records:
            log.info("write-ahead log: replayed %d requests (%d spans) not settled before the "
                     "last stop", records, spans)

    # -- the background loops ----------------------------------------------------------------------

    async def tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self._emit(self.assembler.expire(self._backlog()))
            self.sessions.expire(time.monotonic())
            if self.wal is not None:
                self.wal.trim()
            self._update_gauges()

    async def pump(self) -> None:
        """Queued turns downstream in order, up to BATCH kept turns at a time (more when one
        tick kept more). Stopped mid-batch, the batch is not settled, so replayed from the
        write-ahead log at start."""
        while True:
            await self._waiting.wait()
            batch = [self.waiting.popleft()]
            kept = len(batch[0].passed)
            while self.waiting and kept + len(self.waiting[0].passed) <= BATCH:
                kept += len(self.waiting[0].passed)
                batch.append(self.waiting.popleft())
            if not self.waiting:
                self._waiting.clear()
            self._passing = sum(len(done.trace_ids) for done in batch)
            self._kept_passing = kept
            self.waiting_turns -= self._passing
            self.waiting_bytes -= sum(done.size for done in batch)
            try:
                await self._pass_on(batch)
            finally:
                self._passing = self._kept_passing = 0
                if not self.waiting:
                    self._idle.set()

    # -- internals -----------------------------------------------------------------------------

    def _backlog(self) -> int:
        """Sampled turns waiting for a judge: stored, and kept but not stored yet."""
        return (self.downstream.backlog() + self._kept_passing
                + sum(len(done.passed) for done in self.waiting))

    def _emit(self, done: Completed) -> None:
        if not done.trace_ids:
            return
        self.metrics.count_completed(done, self.services, self.routes)
        if done.sessions:
            self.sessions.add(done.sessions, time.monotonic())
        self._queued.update(done.trace_ids)
        self.waiting.append(done)
        self.waiting_turns += len(done.trace_ids)
        self.waiting_bytes += done.size
        self._idle.clear()
        self._waiting.set()

    def _update_gauges(self) -> None:
        self.metrics.observe_assembler(self.assembler)
        self.sessions.observe()
        self.metrics.queue_depth.labels("turns").set(self.waiting_turns)

    async def _pass_on(self, batch: list[Completed]) -> None:
        trace_ids = [trace_id for done in batch for trace_id in done.trace_ids]
        sampled = [kept for done in batch for kept in done.passed]
        try:
            for done in batch:
                self.recent.extend(done.recent)
            await self.downstream.consume(sampled, sum(done.not_sampled for done in batch))
            if self.kafka is not None or self.wal is not None:
                for trace_id in trace_ids:
                    if self.kafka is not None:  # decided against: its offsets may commit
                        await self.kafka.passed_on(trace_id)
                    if self.wal is not None:  # its logged requests need not be replayed
                        self.wal.settle(trace_id)
        except Exception as exc:  # a failing stage must not stop the pipeline
            # Only the type: an exception's text may quote trace content.
            log.error("downstream stage failed on %d turns: %s", len(sampled), type(exc).__name__)
            self.metrics.turns_lost.inc(len(sampled))
            if self.wal is not None:  # nor pin the log for ever
                for trace_id in trace_ids:
                    self.wal.settle(trace_id)
        finally:
            self._queued.difference_update(trace_ids)
