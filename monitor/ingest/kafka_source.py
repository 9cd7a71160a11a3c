"""Kafka source: OTLP from a topic, as a well-behaved member of a consumer group.

Messages are what the OpenTelemetry Collector's kafka exporter writes: an
ExportTraceServiceRequest per message, `otlp_proto` (default) or `otlp_json`, compressed or not
(gzip, snappy, lz4, zstd: the client decompresses). They feed the same decoding, assembly and
sampling as the OTLP receivers.

The group membership, offsets and handovers are `GroupMember`'s (monitor/queue/group.py): an
offset is committed only when every trace its message carried has been assembled into a turn
*and* that turn is settled: judged (or failed for good), decided against by the sampler, or
acknowledged by the judge queue's broker. On a stop or a rebalance, turns still being assembled
from partitions given up are dropped, not flushed half-done (their next owner reads them again).
When the pipeline is full, partitions are paused rather than buffered.
"""

from __future__ import annotations

from typing import Any

from aiokafka import TopicPartition

from monitor.config import KafkaSettings
from monitor.errors import PermanentError, RetryableError
from monitor.ingest.intake import Intake
from monitor.ingest.otlp import Batch, Format
from monitor.ingest.telemetry import IngestTelemetry
from monitor.queue.group import GroupInstruments, GroupMember, JudgedTurns

ENCODINGS: dict[str, Format] = {"otlp_proto": "proto", "otlp_json": "json"}


class KafkaSource(GroupMember):
    """Wired by the app: `intake` takes its messages into the sidecar (a way in that logs
    nothing: the topic is the log); `holds(trace_id)` says whether
    a turn is still being assembled or queued; `discard` drops turns still being assembled;
    `drain` waits until assembled turns have been sampled; `store` is where sampled turns wait
    for a judge. The app calls `passed_on` once a turn has been sampled (or not), and `judged`
    once it is judged or failed for good."""

    task_name = "kafka-source"

    def __init__(self, settings: KafkaSettings, intake: Intake,
                 metrics: IngestTelemetry, holds: Any, discard: Any, drain: Any,
                 store: JudgedTurns | None = None) -> None:
        super().__init__(settings, GroupInstruments(
            metrics.kafka_messages, metrics.kafka_pauses, metrics.kafka_lag,
            metrics.turns_discarded), store)
        self.format = ENCODINGS[settings.encoding]
        self.intake = intake
        self.metrics = metrics
        self.holds = holds
        self.discard = discard
        self.drain = drain

    async def _drain(self) -> None:
        await self.drain()

    def _discard(self, trace_ids: set[bytes]) -> None:
        self.discard(trace_ids)

    def _full(self) -> bool:
        try:
            self.intake.admit()
        except RetryableError:
            return True
        return False

    async def _handle(self, tp: TopicPartition, message: Any) -> None:
        self.metrics.kafka_messages.labels("received").inc()
        skip = self.judged_before(tp)

        def not_judged_before(batch: Batch) -> None:
            kept = [f for f in batch.facts if f.trace_id not in skip]
            if len(kept) < len(batch.facts):
                self.metrics.kafka_spans_skipped.inc(len(batch.facts) - len(kept))
                batch.facts = kept

        try:
            if message.value is None:
                raise PermanentError("empty message")
            batch, _ = self.intake.take("traces", message.value, self.format,
                                        not_judged_before if skip else None)
        except PermanentError as exc:
            await self._dead_letter(tp, message, str(exc))
            return
        # Wait only for turns not settled yet (being assembled, sampled, or judged): spans of a
        # turn already settled (late) or refused leave nothing to wait for.
        self.tracker.add(tp, message.offset, {f.trace_id for f in batch.facts
                                              if self.holds(f.trace_id)
                                              or self.tracker.waits_for(f.trace_id)})

    async def passed_on(self, trace_id: bytes) -> None:
        """The turn went through sampling: settled now, unless it waits in the store for a
        judge (sampled now, or earlier by this replica and re-read)."""
        if not self.tracker.waits_for(trace_id):
            return
        state = await self.store.state(trace_id.hex()) if self.store is not None else None
        if state not in ("pending", "judging"):
            self.tracker.settle(trace_id, judged=state is not None)
