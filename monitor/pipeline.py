"""Spans in, turns out: the span sink the receivers and the Kafka source feed, the turn queue,
and the pump that passes each turn downstream (sampling, or the judge queue's publisher).

    pipeline = TurnPipeline(settings, metrics, sampling, recent, decoder, wal, services, routes)
    pipeline.accepting = True
    pipeline.consume(batch, "grpc", "traces")   # spans → assembler → completed turns queued
    await pipeline.tick()                       # runs for ever: completes turns that are due
    await pipeline.pump()                       # runs for ever: passes queued turns on

A turn is settled (its write-ahead-log records freed, its Kafka offsets committable) once
downstream has taken it: stored or published for a judge, or decided against.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter

from monitor.admin import RecentTurns
from monitor.assemble import TurnAssembler
from monitor.config import Settings
from monitor.emit.metrics import LabelGuard
from monitor.errors import PermanentError, RetryableError
from monitor.ingest import Signal
from monitor.ingest.kafka_source import KafkaSource
from monitor.ingest.otlp import Batch, Format, OtlpDecoder
from monitor.ingest.wal import WriteAheadLog
from monitor.model import AssistantTurn, TurnConsumer
from monitor.telemetry import Metrics

log = logging.getLogger(__name__)

TICK_S = 0.1  # how often due turns are completed
PUBLISHING = 256  # sampled turns waiting at once for the judge queue's broker to acknowledge


class TurnPipeline:
    def __init__(self, settings: Settings, metrics: Metrics, downstream: TurnConsumer,
                 recent: RecentTurns, decoder: OtlpDecoder, wal: WriteAheadLog | None,
                 services: LabelGuard, routes: LabelGuard, concurrent: bool = False) -> None:
        """`concurrent`: downstream waits on a broker, so up to PUBLISHING turns are passed on
        at once (the producer batches them); otherwise one at a time, in order."""
        self.settings = settings
        self.metrics = metrics
        self.assembler = TurnAssembler(settings.assembly, metrics)
        self.downstream = downstream
        self.recent = recent
        self.decoder = decoder
        self.wal = wal
        self.services = services
        self.routes = routes
        self.concurrent = concurrent
        self.kafka: KafkaSource | None = None  # set once built: it feeds this pipeline
        self.accepting = False
        self.turns: asyncio.Queue[AssistantTurn] = asyncio.Queue()  # bounded by admit()
        self._queued: set[bytes] = set()  # trace ids of turns waiting in the turn queue
        self._passing: set[asyncio.Task[None]] = set()  # turns the pump is passing on

    @property
    def busy(self) -> bool:
        """Turns wait in the queue or are being passed on."""
        return not self.turns.empty() or bool(self._passing)

    # -- SpanSink ----------------------------------------------------------------------------

    def admit(self) -> None:
        if not self.accepting:
            raise RetryableError("the sidecar is not accepting data (starting or stopping)",
                                 overloaded=False)
        if self.turns.qsize() >= self.settings.pipeline.turn_queue_size:
            raise RetryableError("turn queue is full; retry later")
        if self.wal is not None and self.wal.full:
            self.metrics.wal_refusals.inc()
            raise RetryableError("write-ahead log is full; retry later")

    async def accept(self, batch: Batch, receiver: str, signal: Signal, body: bytes,
                     fmt: Format) -> None:
        """An OTLP receiver's request: logged, consumed, and on disk before this returns."""
        if self.wal is None or not batch.facts:
            self.consume(batch, receiver, signal)
            return
        lsn = self.wal.append(signal, fmt, body)
        self.consume(batch, receiver, signal)
        self.wal.track(lsn, {f.trace_id for f in batch.facts}, self.holds)
        await self.wal.sync(lsn)

    def consume(self, batch: Batch, receiver: str, signal: Signal) -> None:
        self.metrics.count_batch(batch, receiver, signal)
        for turn in self.assembler.add(batch.facts):
            self._emit(turn)
        self._update_gauges()

    # -- what the sidecar calls ------------------------------------------------------------------

    def flush(self) -> None:
        """Complete every pending turn now (a stop, a replay's end)."""
        for turn in self.assembler.flush_all():
            self._emit(turn)

    async def drain(self, timeout_s: float = 10.0) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while self.busy:
                    await asyncio.sleep(0.01)

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
            for turn in self.assembler.expire():
                self._emit(turn)
            if self.wal is not None:
                self.wal.trim()
            self._update_gauges()

    async def pump(self) -> None:
        """Turns downstream one at a time, or up to PUBLISHING at a time when `concurrent`."""
        if not self.concurrent:
            while True:
                await self._pass_on(await self.turns.get())
        slots = asyncio.Semaphore(PUBLISHING)
        try:
            while True:
                await slots.acquire()
                turn = await self.turns.get()
                task = asyncio.create_task(self._pass_on(turn))
                self._passing.add(task)
                task.add_done_callback(self._passing.discard)
                task.add_done_callback(lambda _: slots.release())
        finally:  # stopped: the turns being passed on are not settled, so replayed at start
            passing = list(self._passing)
            for task in passing:
                task.cancel()
            await asyncio.gather(*passing, return_exceptions=True)

    # -- internals -----------------------------------------------------------------------------

    def _emit(self, turn: AssistantTurn) -> None:
        self.metrics.count_turn(turn, self.services(turn.service), self.routes(turn.route))
        self._queued.add(bytes.fromhex(turn.trace_id))
        self.turns.put_nowait(turn)

    def _update_gauges(self) -> None:
        self.metrics.observe_assembler(self.assembler)
        self.metrics.queue_depth.labels("turns").set(self.turns.qsize())

    async def _pass_on(self, turn: AssistantTurn) -> None:
        trace_id = bytes.fromhex(turn.trace_id)
        try:
            await self.recent.consume(turn)
            await self.downstream.consume(turn)
            if self.kafka is not None:
                await self.kafka.passed_on(trace_id)  # decided against: its offsets may commit
            if self.wal is not None:
                self.wal.settle(trace_id)  # its logged requests need not be replayed
        except Exception as exc:  # a failing stage must not stop the pipeline
            # Only the type: an exception's text may quote trace content.
            log.error("downstream stage failed on a turn: %s", type(exc).__name__)
            if self.wal is not None:  # nor pin the log for ever
                self.wal.settle(trace_id)
        finally:
            self._queued.discard(trace_id)
            self.turns.task_done()
