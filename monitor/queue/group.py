"""A well-behaved member of a Kafka consumer group, whose messages become turns to judge.

Shared by the OTLP source (monitor/ingest/kafka_source.py: spans, assembled into turns, sampled)
and the judge queue's source (monitor/queue/kafka.py: sampled turns, ready to judge).

At least once, judged once. An offset is committed only when everything its message carried is
settled: judged (or failed for good), or decided against. A turn waiting for its judge keeps its
offsets uncommitted, so a member that leaves the group for good strands nothing: on a stop or a
rebalance, the turns of the partitions given up that no judge has started are withdrawn from the
store, and their next owner reads them again and judges them. Turns judged in messages past the
committed offset are listed in the commit's metadata, and their next reader skips them; a
member's store also recognises by trace id what it has already judged. A stop is bounded in time,
even with the broker gone: each step that needs it gives up after a few seconds, and the rest of
the shutdown runs.

Undecodable messages go to the dead-letter topic, with headers saying why and where they came
from, and never stop their partition. When the member has no room, partitions are paused rather
than buffered, and resumed when it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections import OrderedDict
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import KafkaError
from prometheus_client import Counter, Gauge

from monitor.config import KafkaSettings

log = logging.getLogger(__name__)

_PAUSE_CHECK_S = 0.1
_COMMIT_TIMEOUT_S = 5.0
_STEP_TIMEOUT_S = 5.0  # each step of a stop or a handover, should the broker be gone
_FINISH_JUDGING_S = 5.0  # on a stop or a rebalance, for the turns being judged to finish


_METADATA_BYTES = 4000  # Kafka's offset.metadata.max.bytes defaults to 4096


class OffsetTracker:
    """Which offsets of each partition are safe to commit.

    Each message is pending until every trace it carried is settled; the committable offset of
    a partition is that of its first pending message (or one past the last message, when none
    is pending). Traces judged in messages past that offset are committed along with it, as the
    offset's metadata, so the next reader of the partition (this process after a crash, or
    another member after a rebalance) skips them instead of judging them again.
    """

    def __init__(self) -> None:
        self.pending: dict[TopicPartition, OrderedDict[int, set[bytes]]] = {}
        self.judged: dict[tuple[TopicPartition, int], set[bytes]] = {}  # listed in the metadata
        self.by_trace: dict[bytes, list[tuple[TopicPartition, int]]] = {}
        self.next: dict[TopicPartition, int] = {}
        self.committed: dict[TopicPartition, tuple[int, str]] = {}

    def add(self, tp: TopicPartition, offset: int, trace_ids: set[bytes]) -> None:
        self.pending.setdefault(tp, OrderedDict())[offset] = set(trace_ids)
        self.next.setdefault(tp, offset)
        for trace_id in trace_ids:
            self.by_trace.setdefault(trace_id, []).append((tp, offset))

    def waits_for(self, trace_id: bytes) -> bool:
        return trace_id in self.by_trace

    def settle(self, trace_id: bytes, judged: bool) -> None:
        """The trace's turn is done with: judged (or failed for good), or never to be judged."""
        for tp, offset in self.by_trace.pop(trace_id, ()):
            waiting = self.pending.get(tp, {}).get(offset)
            if waiting is not None:
                waiting.discard(trace_id)
                if judged:
                    self.judged.setdefault((tp, offset), set()).add(trace_id)

    def exclusive(self, partitions: set[TopicPartition]) -> set[bytes]:
        """Unsettled traces carried only by messages of these partitions."""
        traces = {trace_id for tp in partitions for waiting in self.pending.get(tp, {}).values()
                  for trace_id in waiting}
        return {t for t in traces if all(tp in partitions for tp, _ in self.by_trace.get(t, ()))}

    def committable(self) -> dict[TopicPartition, tuple[int, str]]:
        """Partitions whose (next offset, metadata listing traces judged past it) changed since
        the last commit."""
        out = {}
        for tp, messages in self.pending.items():
            while messages:
                offset, waiting = next(iter(messages.items()))
                if waiting:
                    self.next[tp] = offset
                    break
                messages.popitem(last=False)
                self.judged.pop((tp, offset), None)
                self.next[tp] = offset + 1
            position = (self.next[tp], self._judged_beyond(tp, messages))
            if position != self.committed.get(tp):
                out[tp] = position
        return out

    def _judged_beyond(self, tp: TopicPartition, messages: OrderedDict[int, set[bytes]]) -> str:
        ids = dict.fromkeys(trace_id.hex() for offset in messages
                            for trace_id in self.judged.get((tp, offset), ()))
        # Beyond the limit the rest are not listed: the next reader may judge those again.
        return ",".join(list(ids)[: _METADATA_BYTES // 33])

    def mark_committed(self, offsets: dict[TopicPartition, tuple[int, str]]) -> None:
        self.committed.update(offsets)

    def forget(self, partitions: set[TopicPartition]) -> set[bytes]:
        """Drop what is tracked for partitions given up; return the unsettled traces they alone
        carried (a trace also carried by a partition kept is still waited for there)."""
        alone = self.exclusive(partitions)
        traces: set[bytes] = set()
        for tp in partitions:
            for offset, waiting in self.pending.pop(tp, {}).items():
                traces |= waiting
                self.judged.pop((tp, offset), None)
            self.next.pop(tp, None)
            self.committed.pop(tp, None)
        for trace_id in traces:
            kept = [m for m in self.by_trace.pop(trace_id, ()) if m[0] not in partitions]
            if kept:
                self.by_trace[trace_id] = kept
        return alone


def _ssl_context(settings: KafkaSettings) -> ssl.SSLContext | None:
    if settings.security_protocol not in ("SSL", "SASL_SSL"):
        return None
    tls = settings.tls
    context = ssl.create_default_context(cafile=str(tls.ca_file) if tls.ca_file else None)
    if tls.cert_file:
        context.load_cert_chain(str(tls.cert_file), str(tls.key_file) if tls.key_file else None)
    return context


def client_options(settings: KafkaSettings) -> dict[str, Any]:
    """Connection options shared by the consumer and the dead-letter producer."""
    options: dict[str, Any] = {
        "bootstrap_servers": settings.brokers, "client_id": settings.client_id,
        "security_protocol": settings.security_protocol, "ssl_context": _ssl_context(settings)}
    if settings.sasl_mechanism:
        options |= {"sasl_mechanism": settings.sasl_mechanism,
                    "sasl_plain_username": settings.sasl_username,
                    "sasl_plain_password": settings.sasl_password.get_secret_value()
                    if settings.sasl_password else None}
    return options


class JudgedTurns(Protocol):
    """What a member asks of the judge queue (the store, injected by the sidecar): whether a
    turn is being judged, and to hand back sampled turns of partitions it no longer owns."""

    async def state(self, trace_id: str) -> str | None: ...

    async def withdraw(self, trace_ids: set[str]) -> set[str]: ...


@dataclass(frozen=True, slots=True)
class GroupInstruments:
    """A member's own instruments: messages by outcome (received, dead_lettered, ...), pauses,
    lag per partition (topic, partition), and turns handed back to the group."""

    messages: Counter
    pauses: Counter
    lag: Gauge
    handed_back: Counter


class GroupMember:
    """Subclasses say what a message is (`_handle`) and when there is no room (`_full`); they
    call `tracker.add` for each message with the trace ids it waits for. The app calls `judged`
    once a turn is judged or failed for good."""

    task_name = "kafka-consumer"

    def __init__(self, settings: KafkaSettings, instruments: GroupInstruments,
                 store: JudgedTurns | None = None) -> None:
        self.settings = settings
        self.instruments = instruments
        self.store = store
        self.tracker = OffsetTracker()
        self.consumer: AIOKafkaConsumer | None = None
        self.producer: AIOKafkaProducer | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._paused = False
        self._positions: dict[TopicPartition, int] = {}
        self._skip: dict[TopicPartition, set[bytes]] = {}  # judged by the previous reader

    # -- what a subclass says --------------------------------------------------------------

    async def _handle(self, tp: TopicPartition, message: Any) -> None:
        raise NotImplementedError

    def _full(self) -> bool:
        """No room for more messages now: the partitions are paused until there is."""
        raise NotImplementedError

    async def _wait_for_room(self) -> None:
        """Paused: until it may have room again."""
        await asyncio.sleep(_PAUSE_CHECK_S)

    async def _drain(self) -> None:
        """Before a handover: wait until what was read has reached the store."""

    def _discard(self, trace_ids: set[bytes]) -> None:
        """Before a handover: drop what is held of these traces short of the store."""

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        self._stopping = False
        s = self.settings
        options = client_options(s)
        if s.dead_letter_topic:
            self.producer = AIOKafkaProducer(acks="all", **options)
            await self.producer.start()
        self.consumer = AIOKafkaConsumer(
            group_id=s.group_id, enable_auto_commit=False, auto_offset_reset=s.initial_offset,
            max_poll_records=s.max_poll_records, **options)
        self.consumer.subscribe([s.topic], listener=_Rebalance(self))
        try:
            await self.consumer.start()
        except BaseException:
            await self.stop()
            raise
        self._task = asyncio.create_task(self._run(), name=self.task_name)
        self._task.add_done_callback(_report_death)
        log.info("consuming %s from %s as group %s", s.topic, s.brokers, s.group_id)

    async def stop(self) -> None:
        """Stop reading, hand the partitions back (commit what is judged, withdraw what is not),
        leave the group. Idempotent, and bounded in time even when the broker is gone."""
        # The loop checks this too: a cancellation can be lost (Python 3.11's wait_for returns
        # its awaitable's result when that finishes in the step the cancellation lands in), and
        # a loop reading on past the hand-back would have its turns judged twice.
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            # A death is logged (_report_death); bounded, as each step below, should the task
            # be inside a call that swallows the cancellation.
            await asyncio.wait({self._task}, timeout=_STEP_TIMEOUT_S)
            if not self._task.done():
                log.warning("the Kafka consumer's task did not stop in time")
            self._task = None
        if self.consumer is not None:
            await self._give_up(set(self.tracker.pending))
            await _bounded(_stop_consumer(self.consumer), "leaving the consumer group")
            self.consumer = None
        if self.producer is not None:
            await _bounded(self.producer.stop(), "closing the dead-letter producer")
            self.producer = None

    async def _give_up(self, partitions: set[TopicPartition]) -> None:
        """Before partitions go to another member: their turns not judged yet are withdrawn from
        the store and left uncommitted, so the next owner reads them again and judges them."""
        await _bounded(self._drain(), "passing on what was read")
        ours = self.tracker.exclusive(partitions)
        # Dropped before the next await, or the assembly tick would pass them on to this
        # member's judge while the next owner reads them again.
        self._discard(ours)  # withdrawn turns among them: read again if re-read here
        withdrawn: set[str] = set()
        if self.store is not None and ours:
            withdrawn = await self.store.withdraw({t.hex() for t in ours})
            in_flight = {t for t in ours if t.hex() not in withdrawn
                         and await self.store.state(t.hex()) == "judging"}
            # Finish them (bounded); one not finished in time is left uncommitted, to the
            # group: committed as judged before it is, it would be lost should this member die
            # (kill -9) before its judge answers, the next owner skipping it.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_FINISH_JUDGING_S):
                    while any(self.tracker.waits_for(t) for t in in_flight):
                        await asyncio.sleep(_PAUSE_CHECK_S)
        await self._commit()
        dropped = self.tracker.forget(partitions)
        for tp in partitions:
            self._skip.pop(tp, None)
        self.instruments.handed_back.inc(len(withdrawn))
        if partitions:
            log.info("partitions %s given up; %d unfinished turns (%d sampled) left to the group",
                     sorted(tp.partition for tp in partitions), len(dropped), len(withdrawn))

    # -- the loop ----------------------------------------------------------------------------

    async def _run(self) -> None:
        assert self.consumer is not None
        last_commit = time.monotonic()
        while not self._stopping:
            if not self._room():
                await self._wait_for_room()
                if await self._maybe_commit(last_commit):
                    last_commit = time.monotonic()
                continue
            batches = await self.consumer.getmany(timeout_ms=200,
                                                  max_records=self.settings.max_poll_records)
            for tp, messages in batches.items():
                for message in messages:
                    # not revoked, nor the member stopped, while handling the batch
                    if tp in self.consumer.assignment() and not self._stopping:
                        self._positions[tp] = message.offset + 1
                        await self._handle(tp, message)
            self._lag()
            if await self._maybe_commit(last_commit):
                last_commit = time.monotonic()

    def _room(self) -> bool:
        """Pause every assigned partition while there is no room; resume after."""
        assert self.consumer is not None
        if self._full():
            if not self._paused:
                self.consumer.pause(*self.consumer.assignment())
                self._paused = True
                self.instruments.pauses.inc()
            return False
        if self._paused:
            self.consumer.resume(*self.consumer.paused())
            self._paused = False
        return True

    async def _dead_letter(self, tp: TopicPartition, message: Any, reason: str) -> None:
        """An undecodable message: to the dead-letter topic, and nothing to wait for."""
        self.instruments.messages.labels("dead_lettered").inc()
        self.tracker.add(tp, message.offset, set())
        log.warning("undecodable message at %s[%d]@%d: %s", tp.topic, tp.partition,
                    message.offset, reason)
        if self.producer is None:
            return
        headers = [("error", reason.encode()), ("source.topic", tp.topic.encode()),
                   ("source.partition", str(tp.partition).encode()),
                   ("source.offset", str(message.offset).encode())]
        try:
            await self.producer.send_and_wait(self.settings.dead_letter_topic, message.value,
                                              key=message.key, headers=headers)
        except KafkaError as exc:  # the broker is unwell: the partition goes on all the same
            log.error("dead-lettering %s[%d]@%d failed: %s", tp.topic, tp.partition,
                      message.offset, type(exc).__name__)

    def judged_before(self, tp: TopicPartition) -> set[bytes]:
        """Traces the previous reader of `tp` judged past its committed offset: skip them."""
        return self._skip.get(tp, set())

    async def load_settled(self, partitions: set[TopicPartition]) -> None:
        """Read the traces the previous reader judged past the committed offsets."""
        from aiokafka.admin import AIOKafkaAdminClient

        admin = AIOKafkaAdminClient(**client_options(self.settings))
        await admin.start()
        try:
            committed = await admin.list_consumer_group_offsets(self.settings.group_id,
                                                                partitions=list(partitions))
        finally:
            await admin.close()
        for tp in partitions:
            metadata = committed.get(tp)
            ids = metadata.metadata if metadata is not None else ""
            self._skip[tp] = {bytes.fromhex(x) for x in ids.split(",") if x}

    # -- settling --------------------------------------------------------------------------

    def judged(self, trace_id: bytes) -> None:
        """Judged, or failed for good: its offsets may commit."""
        self.tracker.settle(trace_id, judged=True)

    async def _maybe_commit(self, last_commit: float) -> bool:
        if time.monotonic() - last_commit < self.settings.commit_interval_s:
            return False
        await self._commit()
        return True

    async def _commit(self) -> None:
        """Commit what is settled; a failure (broker gone, group rebalancing) is retried at the
        next commit, and never stops the consumer."""
        offsets = self.tracker.committable()
        if not offsets or self.consumer is None:
            return
        try:
            async with asyncio.timeout(_COMMIT_TIMEOUT_S):
                await self.consumer.commit(offsets)
        except (KafkaError, TimeoutError) as exc:
            log.warning("offset commit failed, retried later: %s", type(exc).__name__)
            return
        self.tracker.mark_committed(offsets)

    def _lag(self) -> None:
        """Messages on each partition not read yet (log end offset - next offset to read)."""
        assert self.consumer is not None
        for tp in self.consumer.assignment():
            highwater = self.consumer.highwater(tp)
            position = self._positions.get(tp)
            if highwater is not None and position is not None:
                self.instruments.lag.labels(tp.topic, str(tp.partition)).set(
                    max(0, highwater - position))


async def _bounded(work: Awaitable[Any], what: str, timeout_s: float = _STEP_TIMEOUT_S) -> None:
    """One step of a shutdown or a handover: bounded in time, and a failure does not stop the
    steps after it (the broker may be gone). The step runs as a task of its own, cancelled at
    the bound and not waited for: a timeout around an `await` cannot bound a step that swallows
    its cancellation, as aiokafka's close paths do (`with suppress(CancelledError): await
    self._sync_task` in AIOKafkaClient.close, the same in Fetcher.close) when it lands there."""
    step = asyncio.ensure_future(work)
    try:
        await asyncio.wait({step}, timeout=timeout_s)
    except asyncio.CancelledError:
        step.cancel()
        raise
    if not step.done():
        step.cancel()  # left to end in the background; a later failure of it is not reported
        step.add_done_callback(_consume_outcome)
        log.warning("%s did not complete: %s", what, TimeoutError.__name__)
    elif not step.cancelled() and isinstance(step.exception(), KafkaError):
        log.warning("%s did not complete: %s", what, type(step.exception()).__name__)
    else:
        step.result()  # anything else is a bug: raised here, as before


def _consume_outcome(task: asyncio.Future[Any]) -> None:
    """An abandoned step's end: retrieved, so asyncio logs no 'exception never retrieved'."""
    if not task.cancelled():
        task.exception()


def _report_death(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        # The type only: an exception's text may quote trace content.
        log.error("a Kafka consumer stopped: %s", type(task.exception()).__name__)


async def _stop_consumer(consumer: AIOKafkaConsumer) -> None:
    try:
        await consumer.stop()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # this stop is cancelled (or timed out), not a task inside it
        # With the broker unreachable, aiokafka's fetcher re-raises the cancellation of its own
        # fetch tasks (aio-libs/aiokafka#647) before closing its connections: close them here.
        await consumer._client.close()


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, source: GroupMember) -> None:
        self.source = source

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self.source._give_up(set(revoked))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        if assigned:
            await self.source.load_settled(assigned)
            log.info("partitions assigned: %s", sorted(tp.partition for tp in assigned))
