"""The sidecar: the one place where the stages are wired together.

    sidecar = Sidecar(load_settings())
    await sidecar.start()      # binds the receivers and the admin endpoint
    ...
    await sidecar.stop()       # refuses new data, completes pending turns, drains the queue

It builds the stages, starts and stops them in order, and restarts a background loop that
fails. What happens to the data lives in the stages: spans to turns to the turn queue in
monitor/pipeline.py, sampling in monitor/sample/, judging in monitor/judges/, metrics in
monitor/emit/. OTLP requests are logged (monitor/ingest/wal.py) before they are acknowledged, and
the log is replayed on start.

receivers ──SpanSink──> TurnAssembler ──turn queue──> SamplingStage ──store──> JudgeStage
                        (takes the sampler's decision)                           └─> VerdictMetrics
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from monitor.admin import AdminServer, RecentTurns
from monitor.config import Settings
from monitor.emit.drift import DriftMonitor
from monitor.emit.evaluation_export import EvaluationExporter
from monitor.emit.metrics import LabelGuard
from monitor.emit.verdicts import VerdictMetrics
from monitor.ingest.grpc_receiver import GrpcReceiver
from monitor.ingest.http_receiver import HttpReceiver
from monitor.ingest.intake import Intake
from monitor.ingest.kafka_source import KafkaSource
from monitor.ingest.otlp import OtlpDecoder
from monitor.ingest.wal import WriteAheadLog
from monitor.judges.base import Judge, JudgeError, JudgeUnavailable
from monitor.judges.factory import build_judges
from monitor.judges.redact import shared_analyzer
from monitor.judges.stage import JudgeStage
from monitor.model import AssistantTurn, SampledConsumer, TurnConsumer
from monitor.pipeline import PassAll, TurnPipeline
from monitor.queue.kafka import JudgeQueueTelemetry, SampledTurnPublisher, SampledTurnSource
from monitor.sample.stage import SamplingStage
from monitor.sessions import Closed, Outcome, Session
from monitor.store import Store, ThreadedStore
from monitor.telemetry import Metrics
from monitor.verdict import JudgeResult

if TYPE_CHECKING:
    from monitor.canary import Canary
    from monitor.judges.llm import LLMJudge

log = logging.getLogger(__name__)

RETENTION_EVERY_S = 3600.0
SESSIONS_WAITING = 10_000  # closed sessions waiting to be written to the store; the oldest go
SESSIONS_EVERY_S = 1.0
SESSION_SETTLE_S = 5.0  # a session is judged this long after it closed: its last turns are stored
HUMAN_AGREEMENT_EVERY_S = 30.0  # people's corrections into assistant_judge_human_agreement
RESTART_PAUSE_S = (1.0, 30.0)  # a failed background task restarts after 1 s, doubling to 30 s


# Ingest allocates container objects by the million (attribute dicts, facts, messages), nearly
# all freed by reference counting at once. Python's default, a young-generation pass every 700
# allocations, spent a sixth of the sidecar's ingest CPU re-walking the assembler's live spans
# (bench/ingest.py); a pass every 50,000 left peak RSS where it was.
GC_THRESHOLDS = (50_000, 50, 100)


def tune_gc() -> None:
    """For a process that runs the sidecar (not a library's caller: it is process-wide)."""
    gc.set_threshold(*GC_THRESHOLDS)


class Sidecar:
    def __init__(self, settings: Settings, registry: CollectorRegistry | None = None,
                 judges: list[Judge] | None = None, downstream: TurnConsumer | None = None) -> None:
        """`judges` default to the local judge; `downstream` replaces sampling and judging."""
        self.settings = settings
        self.metrics = Metrics(registry)
        self.recent = RecentTurns(settings.admin.recent_turns,
                                  settings.admin.recent_turns_max_mib << 20)
        self.services = LabelGuard(settings.labels.services, settings.labels.max_values)
        self.routes = LabelGuard(settings.labels.routes, settings.labels.max_values)
        self.store: ThreadedStore | None = None  # its database calls on a thread of its own
        self.session_judge: LLMJudge | None = None  # reads closed sessions whole
        self.judging: JudgeStage | None = None
        self.evaluations: EvaluationExporter | None = None
        self.canary: Canary | None = None  # with LLM judges
        queue = settings.judging.queue
        self.publisher: SampledTurnPublisher | None = None  # ingest replicas of a Kafka queue
        self.turn_source: SampledTurnSource | None = None  # judge replicas of a Kafka queue
        if downstream is None and queue.judges:
            if judges is None:
                judges = build_judges(settings, self.metrics)
            # The conversation judge: the first LLM judge (of a panel, its first endpoint).
            self.session_judge = next((one for judge in judges
                                       for one in getattr(judge, "judges", [judge])
                                       if hasattr(one, "judge_session")), None)
            self.store = ThreadedStore(Store.open(settings.store))
            verdicts = VerdictMetrics(self.metrics, self.services, self.routes)
            drift = (DriftMonitor(settings.drift, self.metrics, self.services, self.routes)
                     if settings.drift.enabled else None)
            export = settings.evaluation_export
            if export.endpoint:
                self.evaluations = EvaluationExporter(
                    export, self.metrics, shared_analyzer(settings.redaction)
                    if export.include_explanation and export.redact else None)
            evaluations = self.evaluations

            def on_verdicts(turn: AssistantTurn, probability: float,
                            results: list[JudgeResult]) -> None:
                self._judged(turn.trace_id)
                if turn.revision:  # counted at its first judgement; the store keeps this one
                    return
                verdicts.record(turn, probability, results)
                if drift is not None:
                    drift.observe(turn, results, probability)
                if evaluations is not None:
                    evaluations.record(turn, results)

            canary = settings.judging.canary
            if canary.enabled and settings.judging.llm.endpoints:
                from monitor.canary import Canary  # only with LLM judges: it loads the eval tools

                self.canary = Canary(settings, self.metrics)
            self.judging = JudgeStage(
                settings.judging, self.store, judges, self.metrics, on_verdicts,
                on_failed=self._judged, store_redaction=shared_analyzer(settings.redaction)
                if settings.store.redact else None)
        self.downstream: SampledConsumer = (
            self._sampling(settings) if downstream is None else PassAll(downstream))
        self._tasks: list[asyncio.Task[None]] = []
        self._down: set[str] = set()  # background tasks failed and waiting to restart

        receivers = settings.receivers
        token = receivers.bearer_token.get_secret_value() if receivers.bearer_token else None
        self.decoder = decoder = OtlpDecoder(max_attribute_length=receivers.max_attribute_length,
                                             max_value_depth=receivers.max_value_depth,
                                             tenant_id=settings.tenant_id)
        grpc, http = (queue.ingests and r.enabled for r in (receivers.grpc, receivers.http))
        self.wal = None
        if settings.wal.enabled and (grpc or http):
            directory = settings.wal.directory or settings.store.path.with_name(
                settings.store.path.name + ".ingest-wal")
            self.wal = WriteAheadLog(directory, settings.wal, self.metrics)
        # closed sessions, for the store's sessions page (the session-store task writes them)
        self._closed_sessions: deque[dict[str, Any]] = deque(maxlen=SESSIONS_WAITING)
        self.pipeline = pipeline = TurnPipeline(
            settings, self.metrics, self.downstream, self.recent, decoder, self.wal, self.services,
            self.routes, session_closed=self._session_closed if self.store is not None else None)
        self.grpc = (GrpcReceiver(receivers.grpc, receivers.tls, Intake(
            "grpc", decoder, pipeline, self.metrics, token=token)) if grpc else None)
        self.http = (HttpReceiver(receivers.http, receivers.tls, Intake(
            "http", decoder, pipeline, self.metrics, token=token)) if http else None)
        self.kafka = pipeline.kafka = (
            KafkaSource(settings.kafka, Intake("kafka", decoder, pipeline, self.metrics,
                                               log_requests=False),
                        self.metrics, holds=pipeline.holds, discard=pipeline.discard,
                        drain=pipeline.passed_on, store=None if queue.publishes else self.store)
            if settings.kafka.enabled else None)
        if downstream is not None:
            no_store = ("it hands its turns to another consumer (a custom downstream), not to "
                        "sampling and judging.")
        elif not queue.judges:
            no_store = (f"it is an ingest replica of the Kafka judge queue (judging.queue.role "
                        f"ingest): its sampled turns go to the topic {queue.topic}, and the judge "
                        "replicas (role judge or both) judge and store them. Open their pages.")
        else:
            no_store = "the sidecar is stopping: its store is closed."
        self.admin = AdminServer(settings.admin.endpoint, self.metrics.registry, self.recent,
                                 ready=lambda: pipeline.accepting and not self._down,
                                 bearer_token=token, store=lambda: self.store, no_store=no_store,
                                 public_url=settings.admin.public_url, tls=settings.admin.tls)

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
            self.metrics.monitor_info.labels(self.settings.admin.public_url or self.admin.url).set(1)
            self.pipeline.replay_wal()
            for receiver in (self.grpc, self.http):
                if receiver is not None:
                    await receiver.start()
            tasks = [("assembly-tick", self.pipeline.tick), ("turn-pump", self.pipeline.pump),
                     ("retention", self._retention)]
            if self.canary is not None:
                tasks.append(("judge-canary", self.canary.run))
            if self.store is not None:
                tasks += [("human-agreement", self._human_agreement),
                          ("session-store", self._store_sessions)]
            if self.store is not None and self.session_judge is not None:
                tasks.append(("session-judge", self._judge_sessions))
            self._tasks = [asyncio.create_task(self._supervise(name, run), name=name)
                           for name, run in tasks]
            self.pipeline.accepting = True
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
        self.pipeline.accepting = False
        for receiver in (self.grpc, self.http):
            if receiver is not None:
                await receiver.stop()
        self.pipeline.flush()
        if self._tasks:
            await self.pipeline.drain()
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
        if self.canary is not None:
            await self.canary.aclose()
        if self.evaluations is not None:  # flushes, bounded by its exporter's timeout
            await asyncio.to_thread(self.evaluations.shutdown)
        if self.store is not None:
            await self._write_sessions()
            await self.store.close()
            self.store = None
        if self.wal is not None:
            await self.wal.close()
        await self.admin.stop()

    async def settle(self, timeout_s: float = 600.0) -> None:
        """Complete every pending turn and wait until the judges are done (replay, tests)."""
        self.pipeline.flush()
        async with asyncio.timeout(timeout_s):
            while self.pipeline.busy or (self.judging is not None and not self.judging.idle):
                await asyncio.sleep(0.05)

    # -- internals -----------------------------------------------------------------------------

    def _judged(self, trace_id: str) -> None:
        if self.kafka is not None:  # judged or failed for good: its offsets may commit
            self.kafka.judged(bytes.fromhex(trace_id))
        if self.turn_source is not None:
            self.turn_source.judged(bytes.fromhex(trace_id))

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

    async def refresh_human_agreement(self) -> None:
        """How often people found each judge's stored verdicts right, from the corrections they
        made on the turn pages (each person's last word), with its 95% interval."""
        from monitor.corrections import judge_agreement

        if self.store is None:
            return
        m = self.metrics
        for (judge, metric), agreed in judge_agreement(await self.store.corrections()).items():
            low, high = agreed.interval
            m.judge_human_agreement.labels(judge, metric).set(agreed.share)
            m.judge_human_agreement_lower.labels(judge, metric).set(low)
            m.judge_human_agreement_upper.labels(judge, metric).set(high)

    async def _human_agreement(self) -> None:
        while True:
            await self.refresh_human_agreement()
            await asyncio.sleep(HUMAN_AGREEMENT_EVERY_S)

    def _session_closed(self, session: Session, closed: Closed, outcome: Outcome) -> None:
        now = time.time()
        self._closed_sessions.append({
            "conversation_id": session.conversation_id, "service": session.service,
            "route": session.route, "outcome": outcome, "closed": closed, "turns": session.turns,
            "turns_to_resolution": session.resolved_at if outcome == "resolved" else None,
            "rephrasings": session.rephrasings, "negative_feedback": session.negative_feedback,
            "person_requests": session.person_requests, "closed_at": now,
            "started_at": now - (time.monotonic() - session.first_seen),
            "judge_state": "pending" if self.session_judge is not None else ""})

    async def _store_sessions(self) -> None:
        while True:
            await self._write_sessions()
            await asyncio.sleep(SESSIONS_EVERY_S)

    async def _write_sessions(self) -> None:
        while self._closed_sessions and self.store is not None:
            batch = [self._closed_sessions.popleft()
                     for _ in range(min(500, len(self._closed_sessions)))]
            await self.store.add_sessions(batch)

    async def _judge_sessions(self) -> None:
        """Closed sessions whose turns the store holds, each read whole by the session judge."""
        assert self.session_judge is not None
        while self.store is not None:
            session = await self.store.claim_session(time.time() - SESSION_SETTLE_S)
            if session is None:
                await asyncio.sleep(SESSIONS_EVERY_S)
                continue
            turns = await self.store.session_turns(session, session["closed_at"] + SESSION_SETTLE_S)
            if not turns:  # none of its turns was sampled
                await self.store.judged_session(session["id"], "no_turns")
                continue
            try:
                verdict = await self.session_judge.judge_session(turns, session["closed"])
            except JudgeUnavailable as exc:
                await self.store.judged_session(session["id"], "pending")
                await asyncio.sleep(exc.retry_after_s)
                continue
            except JudgeError as exc:  # the type only: its text may quote the conversation
                log.warning("the session judge failed on a session: %s", type(exc).__name__)
                await self.store.judged_session(session["id"], "failed")
                continue
            await self.store.judged_session(session["id"], "judged", verdict)
            self.metrics.session_verdicts.labels(
                session["service"], session["route"], verdict.judge, verdict.outcome,
                verdict.frustration).inc()

    async def _retention(self) -> None:
        while True:
            if self.store is not None:
                cutoff = time.time() - self.settings.store.retention_days * 86400
                purged = await self.store.purge(cutoff)  # batches, off the loop
                if purged:
                    log.info("retention: purged %d judged turns", purged)
            await asyncio.sleep(RETENTION_EVERY_S)
