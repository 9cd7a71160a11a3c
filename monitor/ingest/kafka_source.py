"""Kafka source: OTLP from a topic, as a well-behaved member of a consumer group.

Messages are what the OpenTelemetry Collector's kafka exporter writes: an
ExportTraceServiceRequest per message, `otlp_proto` (default) or `otlp_json`, compressed or not
(gzip, snappy, lz4, zstd: the client decompresses). They feed the same decoding, assembly and
sampling as the OTLP receivers.

At least once, judged once. An offset is committed only when every trace its message carried has
been assembled into a turn *and* that turn is settled: persisted in the store (sampled) or
decided against (not sampled; the decision is deterministic, so it is the same after a replay).
After a crash or a rebalance, messages past the committed offset are read again; their turns are
recognised by trace id in the store and not judged twice. On a rebalance (or a stop) the turns
still being assembled from the partitions given up are dropped, not flushed half-done: the next
owner reads those messages again from the committed offset.

Undecodable messages go to the dead-letter topic, with headers saying why and where they came
from, and never stop their partition. When the pipeline is full, partitions are paused rather
than buffered, and resumed when it has room.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections import OrderedDict
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition

from monitor.config import KafkaSettings
from monitor.emit.metrics import Metrics
from monitor.errors import PermanentError, RetryableError
from monitor.ingest import SpanSink
from monitor.ingest.otlp import Format, OtlpDecoder

log = logging.getLogger(__name__)

ENCODINGS: dict[str, Format] = {"otlp_proto": "proto", "otlp_json": "json"}
_PAUSE_CHECK_S = 0.1


_METADATA_BYTES = 4000  # Kafka's offset.metadata.max.bytes defaults to 4096


class OffsetTracker:
    """Which offsets of each partition are safe to commit.

    Each message is pending until every trace it carried is settled; the committable offset of
    a partition is one past the longest run of settled messages from the start. Traces settled in
    messages past that offset are committed along with it, as the offset's metadata, so the
    next reader of the partition (this process after a crash, or another member after a
    rebalance) skips them instead of judging them again.
    """

    def __init__(self) -> None:
        self.pending: dict[TopicPartition, OrderedDict[int, set[bytes]]] = {}
        self.carried: dict[tuple[TopicPartition, int], set[bytes]] = {}
        self.by_trace: dict[bytes, list[tuple[TopicPartition, int]]] = {}
        self.committed: dict[TopicPartition, int] = {}

    def add(self, tp: TopicPartition, offset: int, trace_ids: set[bytes]) -> None:
        self.pending.setdefault(tp, OrderedDict())[offset] = set(trace_ids)
        self.carried[(tp, offset)] = set(trace_ids)
        for trace_id in trace_ids:
            self.by_trace.setdefault(trace_id, []).append((tp, offset))

    def settle(self, trace_id: bytes) -> None:
        for tp, offset in self.by_trace.pop(trace_id, ()):
            waiting = self.pending.get(tp, {}).get(offset)
            if waiting is not None:
                waiting.discard(trace_id)

    def committable(self) -> dict[TopicPartition, tuple[int, str]]:
        """Partitions whose settled prefix grew: (next offset to commit, metadata listing the
        trace ids already settled past it)."""
        out = {}
        for tp, messages in self.pending.items():
            nxt = None
            while messages:
                offset, waiting = next(iter(messages.items()))
                if waiting:
                    break
                messages.popitem(last=False)
                self.carried.pop((tp, offset), None)
                nxt = offset + 1
            if nxt is not None and nxt > self.committed.get(tp, -1):
                out[tp] = (nxt, self._settled_beyond(tp, messages))
        return out

    def _settled_beyond(self, tp: TopicPartition, messages: OrderedDict[int, set[bytes]]) -> str:
        ids = dict.fromkeys(trace_id.hex() for offset, waiting in messages.items()
                            for trace_id in self.carried.get((tp, offset), set()) - waiting)
        # Beyond the limit the rest are not listed: the next reader may judge those again.
        return ",".join(list(ids)[: _METADATA_BYTES // 33])

    def mark_committed(self, offsets: dict[TopicPartition, tuple[int, str]]) -> None:
        self.committed.update({tp: offset for tp, (offset, _) in offsets.items()})

    def forget(self, partitions: set[TopicPartition]) -> set[bytes]:
        """Drop what is tracked for partitions given up; return their unsettled trace ids."""
        traces: set[bytes] = set()
        for tp in partitions:
            for offset, waiting in self.pending.pop(tp, {}).items():
                traces |= waiting
                self.carried.pop((tp, offset), None)
            self.committed.pop(tp, None)
        for trace_id in traces:
            self.by_trace.pop(trace_id, None)
        return traces


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


class KafkaSource:
    """Wired by the app: `sink` is the sidecar (admit / consume); `holds(trace_id)` says whether
    a turn is still being assembled or waiting to be settled; `discard` drops turns still being
    assembled; `drain` waits until assembled turns are settled; the app calls `settled`."""

    def __init__(self, settings: KafkaSettings, decoder: OtlpDecoder, sink: SpanSink,
                 metrics: Metrics, holds: Any, discard: Any, drain: Any) -> None:
        self.settings = settings
        self.format = ENCODINGS[settings.encoding]
        self.decoder = decoder
        self.sink = sink
        self.metrics = metrics
        self.holds = holds
        self.discard = discard
        self.drain = drain
        self.tracker = OffsetTracker()
        self.consumer: AIOKafkaConsumer | None = None
        self.producer: AIOKafkaProducer | None = None
        self._task: asyncio.Task[None] | None = None
        self._paused = False
        self._positions: dict[TopicPartition, int] = {}
        self._skip: dict[TopicPartition, set[bytes]] = {}  # settled by the previous reader

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
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
        self._task = asyncio.create_task(self._run(), name="kafka-source")
        log.info("consuming %s (%s) from %s as group %s", s.topic, s.encoding, s.brokers,
                 s.group_id)

    async def stop(self) -> None:
        """Stop reading, settle what was assembled, commit, leave the group. Idempotent."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.consumer is not None:
            await self.drain()
            await self._commit()
            self.discard(self.tracker.forget(set(self.tracker.pending)))
            await self.consumer.stop()
            self.consumer = None
        if self.producer is not None:
            await self.producer.stop()
            self.producer = None

    # -- the loop ----------------------------------------------------------------------------

    async def _run(self) -> None:
        assert self.consumer is not None
        last_commit = time.monotonic()
        while True:
            if not self._room():
                await asyncio.sleep(_PAUSE_CHECK_S)
                if await self._maybe_commit(last_commit):
                    last_commit = time.monotonic()
                continue
            batches = await self.consumer.getmany(timeout_ms=200,
                                                  max_records=self.settings.max_poll_records)
            for tp, messages in batches.items():
                for message in messages:
                    await self._handle(tp, message)
            self._lag()
            if await self._maybe_commit(last_commit):
                last_commit = time.monotonic()

    def _room(self) -> bool:
        """Pause every assigned partition while the pipeline is full; resume after."""
        assert self.consumer is not None
        try:
            self.sink.admit()
        except RetryableError:
            if not self._paused:
                self.consumer.pause(*self.consumer.assignment())
                self._paused = True
                self.metrics.kafka_pauses.inc()
            return False
        if self._paused:
            self.consumer.resume(*self.consumer.paused())
            self._paused = False
        return True

    async def _handle(self, tp: TopicPartition, message: Any) -> None:
        self.metrics.kafka_messages.labels("received").inc()
        self._positions[tp] = message.offset + 1
        try:
            if message.value is None:
                raise PermanentError("empty message")
            batch = self.decoder.decode("traces", message.value, self.format)
        except PermanentError as exc:
            await self._dead_letter(tp, message, str(exc))
            self.tracker.add(tp, message.offset, set())  # nothing to wait for
            return
        skip = self._skip.get(tp)
        if skip:
            kept = [f for f in batch.facts if f.trace_id not in skip]
            if len(kept) < len(batch.facts):
                self.metrics.kafka_spans_skipped.inc(len(batch.facts) - len(kept))
                batch.facts = kept
        self.sink.consume(batch, "kafka", "traces")
        # Wait only for turns still in the pipeline: spans of a turn already settled (late)
        # or refused leave nothing to wait for.
        self.tracker.add(tp, message.offset,
                         {f.trace_id for f in batch.facts if self.holds(f.trace_id)})

    async def _dead_letter(self, tp: TopicPartition, message: Any, reason: str) -> None:
        self.metrics.kafka_messages.labels("dead_lettered").inc()
        log.warning("undecodable message at %s[%d]@%d: %s", tp.topic, tp.partition,
                    message.offset, reason)
        if self.producer is None:
            return
        headers = [("error", reason.encode()), ("source.topic", tp.topic.encode()),
                   ("source.partition", str(tp.partition).encode()),
                   ("source.offset", str(message.offset).encode())]
        await self.producer.send_and_wait(self.settings.dead_letter_topic, message.value,
                                          key=message.key, headers=headers)

    async def load_settled(self, partitions: set[TopicPartition]) -> None:
        """Read the traces the previous reader settled past the committed offsets."""
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

    def settled(self, trace_id: bytes) -> None:
        self.tracker.settle(trace_id)

    async def _maybe_commit(self, last_commit: float) -> bool:
        if time.monotonic() - last_commit < self.settings.commit_interval_s:
            return False
        await self._commit()
        return True

    async def _commit(self) -> None:
        offsets = self.tracker.committable()
        if offsets and self.consumer is not None:
            await self.consumer.commit(offsets)
            self.tracker.mark_committed(offsets)

    def _lag(self) -> None:
        """Messages on each partition not read yet (log end offset - next offset to read)."""
        assert self.consumer is not None
        for tp in self.consumer.assignment():
            highwater = self.consumer.highwater(tp)
            position = self._positions.get(tp)
            if highwater is not None and position is not None:
                self.metrics.kafka_lag.labels(tp.topic, str(tp.partition)).set(
                    max(0, highwater - position))


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, source: KafkaSource) -> None:
        self.source = source

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        # Settle what is assembled, commit it, and drop the rest: the next owner re-reads it.
        await self.source.drain()
        await self.source._commit()
        dropped = self.source.tracker.forget(set(revoked))
        for tp in revoked:
            self.source._skip.pop(tp, None)
        self.source.discard(dropped)
        if revoked:
            log.info("partitions revoked: %s; %d unfinished turns left to the next owner",
                     sorted(tp.partition for tp in revoked), len(dropped))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        if assigned:
            await self.source.load_settled(assigned)
            log.info("partitions assigned: %s", sorted(tp.partition for tp in assigned))
