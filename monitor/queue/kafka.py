"""The judge queue on Kafka: ingest replicas publish sampled turns, judge replicas consume them.

    publisher = SampledTurnPublisher(settings.kafka, settings.judging.queue, telemetry)
    await publisher.start()
    await publisher.enqueue(turn, reason, probability)   # returns once the broker has it

    source = SampledTurnSource(settings.kafka, settings.judging.queue, store, telemetry, wake)
    await source.start()        # joins the group; read turns go into `store`, judged from there
    source.judged(trace_id)     # its offset may commit
    await source.stop()         # hands back what no judge started

A message is one sampled turn as JSON (the turn, the sampling rule that kept it and its
inclusion probability), keyed by trace id. The publisher is idempotent and waits for every
in-sync replica (acks=all); `enqueue` returns only once the broker acknowledged the turn, so the
write-ahead log or the OTLP Kafka source settles a turn only then. A broker that does not answer
is retried until it does: the turn pump waits, the turn queue fills, and the receivers refuse
new data (429/503) as they do when judging falls behind, so nothing accepted is lost.

A judge replica reads at most `prefetch` turns ahead into its own store (its verdicts and
rationales live there), and commits a message's offset only once its turn is judged or failed
for good (`GroupMember`). A turn it already holds (same trace id: published twice) is judged
once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError
from prometheus_client import CollectorRegistry, Counter, Gauge
from pydantic import BaseModel, Field, ValidationError, field_validator

from monitor.config import JudgeQueueSettings, KafkaSettings
from monitor.errors import PermanentError
from monitor.model import AssistantTurn, KeptTurn, Sampled, turn_json
from monitor.queue.group import (
    GroupInstruments,
    GroupMember,
    JudgedTurns,
    _bounded,
    client_options,
)

log = logging.getLogger(__name__)

_RETRY_PAUSE_S = (0.5, 10.0)  # a failed publish is retried after 0.5 s, doubling to 10 s
_WAITING = ("pending", "judging")
_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_ROOM_CHECK_S = 0.1  # paused, the backlog is checked this often (and at once when a turn is judged)


class SampledTurn(BaseModel):
    """One message of the sampled-turns topic."""

    turn: AssistantTurn
    reason: str
    probability: float = Field(gt=0, le=1)

    @field_validator("turn")
    @classmethod
    def _trace_id(cls, turn: AssistantTurn) -> AssistantTurn:
        if not _TRACE_ID.fullmatch(turn.trace_id):
            raise ValueError("trace_id is not 32 hex digits")
        return turn


def encode_turn(turn: KeptTurn, reason: str, probability: float) -> bytes:
    """A `SampledTurn` message: the turn's JSON as the store keeps it, in its envelope."""
    return (f'{{"turn":{turn_json(turn)},"reason":{json.dumps(reason)},'
            f'"probability":{json.dumps(probability)}}}').encode()


def decode_turn(value: bytes | None) -> SampledTurn:
    """The message's sampled turn; PermanentError naming what is wrong (never its content)."""
    if value is None:
        raise PermanentError("empty message")
    try:
        return SampledTurn.model_validate_json(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        # Field names only: a deeper location may be a key taken from the message's content.
        loc = error["loc"]
        where = [str(part) for part in loc[:1]]
        if len(loc) > 1 and loc[1] in AssistantTurn.model_fields:
            where.append(str(loc[1]))
        raise PermanentError(f"not a sampled turn: {'.'.join(where) or 'message'}: "
                             f"{error['type']}") from None


def queue_settings(kafka: KafkaSettings, queue: JudgeQueueSettings) -> KafkaSettings:
    """The kafka section's connection, with the judge queue's topic, group and offsets."""
    return kafka.model_copy(update={
        "topic": queue.topic, "group_id": queue.group_id,
        "dead_letter_topic": queue.dead_letter_topic, "initial_offset": "earliest",
        "commit_interval_s": queue.commit_interval_s, "max_poll_records": queue.prefetch})


class JudgeQueueTelemetry:
    """The Kafka judge queue's instruments; registered only where it is configured."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.published = Counter(
            "assistant_judge_queue_published", "Sampled turns sent to the judge queue's topic, "
            "by outcome (acknowledged; failed: an attempt that failed, or `publish_timeout_s` "
            "without an acknowledgement; it is retried).",
            ["outcome"], registry=r)
        self.messages = Counter(
            "assistant_judge_queue_messages", "Sampled-turn messages read by this judge replica, "
            "by outcome (received, dead_lettered, duplicate, skipped: judged by the previous "
            "reader of the partition).", ["outcome"], registry=r)
        self.lag = Gauge(
            "assistant_judge_queue_lag", "Sampled turns not read yet, per assigned partition.",
            ["topic", "partition"], registry=r)
        self.pauses = Counter(
            "assistant_judge_queue_pauses", "Times this judge replica paused its partitions "
            "because `prefetch` turns were waiting for its judges.", registry=r)
        self.handed_back = Counter(
            "assistant_judge_queue_handed_back", "Sampled turns this replica had read but not "
            "started, handed back to the group on a stop or a rebalance (another judges them).",
            registry=r)


class SampledTurnPublisher:
    """The `TurnQueue` of an ingest replica: sampled turns go to the topic."""

    def __init__(self, kafka: KafkaSettings, queue: JudgeQueueSettings,
                 telemetry: JudgeQueueTelemetry) -> None:
        self.settings = queue_settings(kafka, queue)
        self.timeout_s = queue.publish_timeout_s
        self.telemetry = telemetry
        self.producer: AIOKafkaProducer | None = None
        self._sending = 0

    async def start(self) -> None:
        self.producer = AIOKafkaProducer(
            acks="all", enable_idempotence=True, request_timeout_ms=int(self.timeout_s * 1000),
            **client_options(self.settings))
        try:
            await self.producer.start()
        except BaseException:
            await self.stop()
            raise
        log.info("publishing sampled turns to %s on %s", self.settings.topic,
                 self.settings.brokers)

    async def stop(self) -> None:
        if self.producer is not None:
            await _bounded(self.producer.stop(), "closing the sampled-turns producer")
            self.producer = None

    def backlog(self) -> int:
        """Turns sent and not acknowledged yet (the judges' backlog is the topic's lag)."""
        return self._sending

    async def tokens_since(self, since: float) -> int:
        return 0  # spent on the judge replicas (a token budget needs queue.kind: store)

    async def enqueue_many(self, sampled: Sequence[Sampled]) -> list[bool]:
        """Sent at once (the producer batches them); returns once the broker acknowledged all."""
        return list(await asyncio.gather(*(self.enqueue(*s) for s in sampled)))

    async def enqueue(self, turn: KeptTurn, reason: str, probability: float) -> bool:
        """Returns once the broker acknowledged the turn; waits (retrying) until it does."""
        assert self.producer is not None, "start() first"
        value = encode_turn(turn, reason, probability)
        pause = _RETRY_PAUSE_S[0]
        self._sending += 1
        try:
            while True:
                try:
                    delivery = await self.producer.send(self.settings.topic, value,
                                                        key=turn.trace_id.encode())
                    # The producer retries on its own (idempotent: no copy is written twice);
                    # each `publish_timeout_s` without an acknowledgement is counted.
                    while True:
                        try:
                            await asyncio.wait_for(asyncio.shield(delivery), self.timeout_s)
                            break
                        except TimeoutError:
                            self._failed(f"no acknowledgement in {self.timeout_s:.0f} s, waiting on")
                    self.telemetry.published.labels("acknowledged").inc()
                    return True
                except KafkaError as exc:
                    self._failed(f"{type(exc).__name__}, retrying in {pause:.1f} s")
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, _RETRY_PAUSE_S[1])
        finally:
            self._sending -= 1

    def _failed(self, why: str) -> None:
        self.telemetry.published.labels("failed").inc()
        log.warning("publishing a sampled turn: %s", why)


class LocalQueue(JudgedTurns, Protocol):
    """What a judge replica's store does for the source: hold read turns for its judges."""

    def backlog(self) -> int: ...

    async def enqueue(self, turn: KeptTurn, reason: str, probability: float) -> bool: ...

    async def recover(self) -> int: ...

    async def waiting(self) -> set[str]: ...


class SampledTurnSource(GroupMember):
    """A judge replica's member of the group: read turns go into its store, `wake` its judges."""

    task_name = "judge-queue"

    def __init__(self, kafka: KafkaSettings, queue: JudgeQueueSettings, store: LocalQueue,
                 telemetry: JudgeQueueTelemetry, wake: Callable[[], None]) -> None:
        super().__init__(queue_settings(kafka, queue), GroupInstruments(
            telemetry.messages, telemetry.pauses, telemetry.lag, telemetry.handed_back), store)
        self.local = store
        self.prefetch = queue.prefetch
        self.telemetry = telemetry
        self.wake = wake
        self._room_made = asyncio.Event()  # a turn judged: a paused replica reads on at once

    async def hand_back_leftovers(self) -> int:
        """Before judging starts: turns a crash (kill -9) left in this store unjudged are
        dropped; their offsets were not committed, so their partition's owner reads them again
        (this replica, or another). Judging them here as well would judge them twice."""
        await self.local.recover()
        return len(await self.local.withdraw(await self.local.waiting()))

    def _full(self) -> bool:
        return self.local.backlog() >= self.prefetch

    async def _wait_for_room(self) -> None:
        self._room_made.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._room_made.wait(), _ROOM_CHECK_S)

    def judged(self, trace_id: bytes) -> None:
        super().judged(trace_id)
        self._room_made.set()

    async def _handle(self, tp: TopicPartition, message: Any) -> None:
        self.telemetry.messages.labels("received").inc()
        try:
            sampled = decode_turn(message.value)
        except PermanentError as exc:
            await self._dead_letter(tp, message, str(exc))
            return
        trace_id = bytes.fromhex(sampled.turn.trace_id)
        # (a revision of a judged turn is new: the store tells a copy of it by its number)
        if trace_id in self.judged_before(tp) and not sampled.turn.revision:
            self.telemetry.messages.labels("skipped").inc()
            self.tracker.add(tp, message.offset, set())
            return
        # Tracked before it is stored: a judge may finish it before `enqueue` returns here.
        self.tracker.add(tp, message.offset, {trace_id})
        if await self.local.enqueue(sampled.turn, sampled.reason, sampled.probability):
            self.wake()
            return
        self.telemetry.messages.labels("duplicate").inc()  # judged once, by its first copy
        state = await self.local.state(sampled.turn.trace_id)
        if state not in _WAITING:
            self.tracker.settle(trace_id, judged=state is not None)
