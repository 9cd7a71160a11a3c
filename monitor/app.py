"""The sidecar: the one place where the stages are wired together.

    sidecar = Sidecar(load_settings())
    await sidecar.start()      # binds the receivers and the admin endpoint
    ...
    await sidecar.stop()       # refuses new data, completes pending turns, drains the queue

OTLP requests are logged (monitor/ingest/wal.py) before they are acknowledged; a turn is settled
once the sampling stage has stored it or decided against it, and the log is replayed on start.

receivers ──SpanSink──> TurnAssembler ──turn queue──> SamplingStage ──store──> JudgeStage
                                                                                  └─> VerdictMetrics
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry

from monitor.admin import AdminServer, RecentTurns
from monitor.assemble import TurnAssembler
from monitor.config import Settings
from monitor.emit.drift import DriftMonitor
from monitor.emit.evaluation_export import EvaluationExporter
from monitor.emit.metrics import LabelGuard
from monitor.emit.verdicts import VerdictMetrics
from monitor.errors import PermanentError, RetryableError
from monitor.ingest import Signal
from monitor.ingest.grpc_receiver import GrpcReceiver
from monitor.ingest.http_receiver import HttpReceiver
from monitor.ingest.kafka_source import KafkaSource
from monitor.ingest.otlp import Batch, Format, OtlpDecoder
from monitor.ingest.wal import WriteAheadLog
from monitor.judges.base import Judge, JudgeResult
from monitor.judges.factory import build_judges
from monitor.judges.stage import JudgeStage
from monitor.model import AssistantTurn, TurnConsumer
from monitor.queue.kafka import JudgeQueueTelemetry, SampledTurnPublisher, SampledTurnSource
from monitor.sample.stage import SamplingStage
from monitor.store import Store, ThreadedStore
from monitor.telemetry import Metrics

log = logging.getLogger(__name__)

TICK_S = 0.1  # how often due turns are completed
RETENTION_EVERY_S = 3600.0
RESTART_PAUSE_S = (1.0, 30.0)  # a failed background task restarts after 1 s, doubling to 30 s
PUBLISHING = 256  # sampled turns waiting at once for the judge queue's broker to acknowledge


class Sidecar:
    def __init__(self, settings: Settings, registry: CollectorRegistry | None = None,
                 judges: list[Judge] | None = None, downstream: TurnConsumer | None = None) -> None:
        """`judges` default to the local judge; `downstream` replaces sampling and judging."""
        self.settings = settings
        self.metrics = Metrics(registry)
        self.recent = RecentTurns(settings.admin.recent_turns)
        self.assembler = TurnAssembler(settings.assembly, self.metrics)
        self.services = LabelGuard(settings.labels.services, settings.labels.max_values)
        self.routes = LabelGuard(settings.labels.routes, settings.labels.max_values)
        self.store: ThreadedStore | None = None  # its SQLite calls on a thread of its own
        self.judging: JudgeStage | None = None
        self.evaluations: EvaluationExporter | None = None
        queue = settings.judging.queue
        self.publisher: SampledTurnPublisher | None = None  # ingest replicas of a Kafka queue
        self.turn_source: SampledTurnSource | None = None  # judge replicas of a Kafka queue
        if downstream is None and queue.judges:
            if judges is None:
                judges = build_judges(settings, self.metrics)
            self.store = ThreadedStore(Store(settings.store.path))
            verdicts = VerdictMetrics(self.metrics, self.services, self.routes)
            drift = (DriftMonitor(settings.drift, self.metrics, self.services, self.routes)
                     if settings.drift.enabled else None)
            if settings.evaluation_export.endpoint:
                self.evaluations = EvaluationExporter(settings.evaluation_export, self.metrics)
            evaluations = self.evaluations

            def on_verdicts(turn: AssistantTurn, probability: float,
                            results: list[JudgeResult]) -> None:
                self._judged(turn.trace_id)
                verdicts.record(turn, probability, results)
                if drift is not None:
                    drift.observe(turn, results, probability)
                if evaluations is not None:
                    evaluations.record(turn, results)

            self.judging = JudgeStage(settings.judging, self.store, judges, self.metrics,
                                      on_verdicts, on_failed=self._judged)
        if downstream is None:
            downstream = self._sampling(settings)
        self.downstream = downstream
        self.turns: asyncio.Queue[AssistantTurn] = asyncio.Queue()  # bounded by admit()
        self._tasks: list[asyncio.Task[None]] = []
        self._accepting = False
        self._down: set[str] = set()  # background tasks failed and waiting to restart

        receivers = settings.receivers
        token = receivers.bearer_token.get_secret_value() if receivers.bearer_token else None
        self.decoder = decoder = OtlpDecoder(max_attribute_length=receivers.max_attribute_length,
                                             max_value_depth=receivers.max_value_depth,
                                             tenant_id=settings.tenant_id)
        self.grpc = (GrpcReceiver(receivers.grpc, receivers.tls, decoder, self, self.metrics, token)
                     if receivers.grpc.enabled and queue.ingests else None)
        self.http = (HttpReceiver(receivers.http, receivers.tls, decoder, self, self.metrics, token)
                     if receivers.http.enabled and queue.ingests else None)
        self._queued: set[bytes] = set()  # trace ids of turns waiting in the turn queue
        self._passing: set[asyncio.Task[None]] = set()  # turns the pump is passing on
        self.kafka = (KafkaSource(settings.kafka, decoder, self, self.metrics,
                                  holds=self._holds, discard=self._discard, drain=self.turns.join,
                                  store=None if queue.publishes else self.store)
                      if settings.kafka.enabled else None)
        self.wal = None
        if settings.wal.enabled and (self.grpc or self.http):
            directory = settings.wal.directory or settings.store.path.with_name(
                settings.store.path.name + ".ingest-wal")
            self.wal = WriteAheadLog(directory, settings.wal, self.metrics)
        self.admin = AdminServer(settings.admin.endpoint, self.metrics.registry, self.recent,
                                 ready=lambda: self._accepting and not self._down,
                                 bearer_token=token)

    def _sampling(self, settings: Settings) -> SamplingStage:
        """Sampled turns go to this node's store, or to the judge queue's topic; a judge
        replica of that topic reads them into its store."""
        queue = settings.judging.queue
        telemetry = JudgeQueueTelemetry(self.metrics.registry) if queue.kind == "kafka" else None
        if queue.consumes:
            assert self.store is not None and self.judging is not None and telemetry is not None
            self.turn_source = SampledTurnSource(settings.kafka, queue, self.store, telemetry,
                                                 self.judging.wake)
        if queue.publishes:
            assert telemetry is not None
            self.publisher = SampledTurnPublisher(settings.kafka, queue, telemetry)
            return SamplingStage(settings.sampling, self.publisher, self.metrics, lambda: None)
        assert self.store is not None and self.judging is not None
        return SamplingStage(settings.sampling, self.store, self.metrics, self.judging.wake,
                             settings.judging.daily_token_budget)

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        try:
            if self.turn_source is not None:
                left = await self.turn_source.hand_back_leftovers()
                if left:
                    log.info("%d sampled turns left unjudged by the last run are left to the "
                             "judge queue's group", left)
            if self.judging is not None:
                await self.judging.start()
            if self.publisher is not None:
                await self.publisher.start()
            await self.admin.start()
            if self.wal is not None:
                self._replay_wal(self.wal)
            for receiver in (self.grpc, self.http):
                if receiver is not None:
                    await receiver.start()
            self._tasks = [asyncio.create_task(self._supervise(name, run), name=name)
                           for name, run in (("assembly-tick", self._tick),
                                             ("turn-pump", self._pump),
                                             ("retention", self._retention))]
            self._accepting = True
            if self.kafka is not None:
                await self.kafka.start()
            if self.turn_source is not None:
                await self.turn_source.start()
        except BaseException:
            await self.stop()  # a failed start undoes what it began
            raise

    async def stop(self) -> None:
        """Idempotent. New data is refused (503) while pending turns are completed and drained."""
        if self.turn_source is not None:  # first: what no judge started goes back to the group
            await self.turn_source.stop()
        if self.kafka is not None:  # first: it settles and commits, and leaves its partitions'
            await self.kafka.stop()  # unfinished turns to the group instead of flushing them
        self._accepting = False
        for receiver in (self.grpc, self.http):
            if receiver is not None:
                await receiver.stop()
        for turn in self.assembler.flush_all():
            self._emit(turn)
        if self._tasks:
            await self._drain()
            for task in self._tasks:
                task.cancel()
            for task in self._tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._tasks = []
        if self.publisher is not None:  # after the pump: it was publishing the last turns
            await self.publisher.stop()
        if self.judging is not None:
            await self.judging.stop()
        if self.evaluations is not None:  # flushes, bounded by its exporter's timeout
            await asyncio.to_thread(self.evaluations.shutdown)
        if self.store is not None:
            await self.store.close()
            self.store = None
        if self.wal is not None:
            await self.wal.close()
        await self.admin.stop()

    async def _drain(self, timeout_s: float = 10.0) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while not self.turns.empty() or self._passing:
                    await asyncio.sleep(0.01)

    # -- SpanSink ----------------------------------------------------------------------------

    def admit(self) -> None:
        if not self._accepting:
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
        self.wal.track(lsn, {f.trace_id for f in batch.facts}, self._holds)
        await self.wal.sync(lsn)

    def consume(self, batch: Batch, receiver: str, signal: Signal) -> None:
        self.metrics.count_batch(batch, receiver, signal)
        for turn in self.assembler.add(batch.facts):
            self._emit(turn)
        self._update_gauges()

    async def settle(self, timeout_s: float = 600.0) -> None:
        """Complete every pending turn and wait until the judges are done (replay, tests)."""
        for turn in self.assembler.flush_all():
            self._emit(turn)
        async with asyncio.timeout(timeout_s):
            while (not self.turns.empty() or self._passing
                   or (self.judging is not None and not self.judging.idle)):
                await asyncio.sleep(0.05)

    # -- internals -----------------------------------------------------------------------------

    def _replay_wal(self, wal: WriteAheadLog) -> None:
        """Requests logged before a crash whose turns were not settled go through assembly again."""
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
            wal.track(record.lsn, {f.trace_id for f in batch.facts}, self._holds)
            records, spans = records + 1, spans + len(batch.facts)
        wal.start()
        if records:
            log.info("write-ahead log: replayed %d requests (%d spans) not settled before the "
                     "last stop", records, spans)

    def _holds(self, trace_id: bytes) -> bool:
        return self.assembler.holds(trace_id) or trace_id in self._queued

    def _judged(self, trace_id: str) -> None:
        if self.kafka is not None:  # judged or failed for good: its offsets may commit
            self.kafka.judged(bytes.fromhex(trace_id))
        if self.turn_source is not None:
            self.turn_source.judged(bytes.fromhex(trace_id))

    def _discard(self, trace_ids: set[bytes]) -> None:
        self.metrics.turns_discarded.inc(self.assembler.discard(trace_ids))

    def _emit(self, turn: AssistantTurn) -> None:
        self.metrics.count_turn(turn, self.services(turn.service), self.routes(turn.route))
        self._queued.add(bytes.fromhex(turn.trace_id))
        self.turns.put_nowait(turn)

    def _update_gauges(self) -> None:
        self.metrics.observe_assembler(self.assembler)
        self.metrics.queue_depth.labels("turns").set(self.turns.qsize())

    async def _supervise(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        """Run a background task for good: a failure is logged (its type only: an exception's
        text may quote trace content), counted, and the task restarted after a pause during
        which /readyz answers not ready."""
        pause = RESTART_PAUSE_S[0]
        while True:
            started = time.monotonic()
            try:
                await run()
                return  # the tasks loop forever: only a failure or stop() ends one
            except Exception as exc:  # noqa: BLE001  CancelledError (stop) is not an Exception
                if time.monotonic() - started > 60:
                    pause = RESTART_PAUSE_S[0]  # it ran a while: not a crash loop
                log.error("background task %s failed (%s); restarting in %.0f s", name,
                          type(exc).__name__, pause)
                self.metrics.task_failures.labels(name).inc()
                self._down.add(name)
                try:
                    await asyncio.sleep(pause)
                finally:
                    self._down.discard(name)
                pause = min(pause * 2, RESTART_PAUSE_S[1])

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            for turn in self.assembler.expire():
                self._emit(turn)
            if self.wal is not None:
                self.wal.trim()
            self._update_gauges()

    async def _retention(self) -> None:
        while True:
            if self.store is not None:
                cutoff = time.time() - self.settings.store.retention_days * 86400
                purged = await self.store.purge(cutoff)  # batches, off the loop
                if purged:
                    log.info("retention: purged %d judged turns", purged)
            await asyncio.sleep(RETENTION_EVERY_S)

    async def _pump(self) -> None:
        """Turns to sampling one at a time; to the Kafka judge queue up to PUBLISHING at a time,
        each waiting for the broker's acknowledgement (the producer batches them)."""
        if self.publisher is None:
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
