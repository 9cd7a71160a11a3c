"""Kafka, against a real single-node Apache Kafka broker (KRaft) started for the session."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from exporters.kafka import KafkaSpanExporter, to_otlp_json
from tests import traffic
from tests.conftest import SidecarProcess
from tests.kafka_broker import KafkaBroker, read_topic
from tests.waiting import wait_until

Start = Callable[[str, str], SidecarProcess]


@pytest.fixture
def sidecars(tmp_path: Path) -> Iterator[Start]:
    """Starts sidecars (each in tmp_path/<name>) and kills any still running when the test ends,
    passed or failed, so none is left logging against a broker that is gone."""
    started: list[SidecarProcess] = []

    class Tracked(SidecarProcess):
        def wait_ready(self, timeout_s: float = 60.0) -> None:
            started.append(self)  # before it can fail: a sidecar that never got ready is killed too
            super().wait_ready(timeout_s)

    yield lambda name, extra_yaml: Tracked(tmp_path / name, extra_yaml)
    for sidecar in started:
        if sidecar.process.poll() is None:
            sidecar.kill()


def new_topic(kafka: KafkaBroker, partitions: int = 4) -> str:
    name = f"otlp-{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(name, num_partitions=partitions,
                                                replication_factor=1)])
        finally:
            await admin.close()

    asyncio.run(create())
    return name


def kafka_yaml(kafka: KafkaBroker, topic: str, encoding: str = "otlp_proto",
               group: str | None = None) -> str:
    return (f"kafka: {{enabled: true, brokers: ['{kafka.bootstrap}'], topic: '{topic}', "
            f"encoding: {encoding}, group_id: '{group or topic}', initial_offset: earliest, "
            f"dead_letter_topic: '{topic}.dlq', commit_interval_s: 0.2}}\n")


SLOW_JUDGE = "judging: {workers: 1, calls_per_minute: 120}\n"  # about one turn a second


def store_rows(path: Path, sql: str) -> list[Any]:
    if not path.exists():
        return []
    with contextlib.closing(sqlite3.connect(path)) as db:  # closed: see the shutdown test
        try:
            return db.execute(sql).fetchall()
        except sqlite3.OperationalError:  # not created yet
            return []


def exporter_provider(kafka: KafkaBroker, topic: str, encoding: str, compression: str | None
                      ) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "kafka-bot"}))
    provider.add_span_processor(BatchSpanProcessor(KafkaSpanExporter(
        [kafka.bootstrap], topic, encoding=encoding, compression=compression),  # type: ignore[arg-type]
        schedule_delay_millis=100))  # a stream, not bursts five seconds apart
    return provider


def split_trace_messages(encoding: str) -> tuple[str, list[bytes]]:
    """One turn whose spans travel in two messages: children first, then the root."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "kafka-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace_id = traffic.send(provider, traffic.GROUNDED[0], route="split")
    spans = memory.get_finished_spans()
    children = [s for s in spans if s.parent is not None]
    roots = [s for s in spans if s.parent is None]
    encode = (lambda group: encode_spans(group).SerializeToString()) if encoding == "otlp_proto" \
        else (lambda group: to_otlp_json(encode_spans(group)))
    return trace_id, [encode(children), encode(roots)]


async def produce(kafka: KafkaBroker, topic: str, messages: list[tuple[bytes | None, bytes]],
                  compression: str | None = None) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, compression_type=compression)
    await producer.start()
    try:
        for key, value in messages:
            await producer.send_and_wait(topic, value, key=key)
    finally:
        await producer.stop()


@pytest.mark.integration  # a real Kafka broker
@pytest.mark.parametrize("encoding, exporter_compression, producer_compression", [
    ("otlp_proto", "gzip", "lz4"),
    ("otlp_json", "zstd", "snappy"),
])
def test_exporter_and_plain_producer_are_consumed_assembled_and_judged(
        kafka: KafkaBroker, sidecars: Start, encoding: str, exporter_compression: str,
        producer_compression: str) -> None:
    topic = new_topic(kafka)
    sidecar = sidecars("a", kafka_yaml(kafka, topic, encoding))
    provider = exporter_provider(kafka, topic, encoding, exporter_compression)
    sent = [traffic.send(provider, case, route=case.kind) for case in traffic.ALL[:6]]
    provider.shutdown()
    split_id, messages = split_trace_messages(encoding)
    asyncio.run(produce(kafka, topic, [(split_id.encode(), m) for m in messages],
                        producer_compression))

    store = sidecar.store_path
    judged = lambda: {r[0] for r in store_rows(store, "SELECT trace_id FROM turns "  # noqa: E731
                                                      "WHERE state = 'judged'")}
    wait_until(lambda: judged() == {*sent, split_id}, what="every trace judged")
    [(span_count,)] = store_rows(store, f"SELECT json_extract(turn_json, '$.span_count') "
                                        f"FROM turns WHERE trace_id = '{split_id}'")
    assert span_count == 2  # both messages assembled into one turn
    metrics = sidecar.scrape()
    assert sidecar.stop() == 0
    assert 'assistant_spans_received_total{receiver="kafka"} 14.0' in metrics
    assert "assistant_kafka_consumer_lag{" in metrics


@pytest.mark.integration  # a real Kafka broker
def test_poison_messages_go_to_the_dead_letter_topic(kafka: KafkaBroker, sidecars: Start) -> None:
    topic = new_topic(kafka, partitions=1)
    sidecar = sidecars("a", kafka_yaml(kafka, topic))
    trace_id, messages = split_trace_messages("otlp_proto")
    asyncio.run(produce(kafka, topic, [(b"k", b"\x0a\xff\xff garbage"), (b"k", b"{not json"),
                                       *((trace_id.encode(), m) for m in messages)]))
    wait_until(lambda: store_rows(sidecar.store_path, "SELECT trace_id FROM turns WHERE "
                                                      "state = 'judged'") == [(trace_id,)],
               what="the message after the poison ones judged")

    letters = read_topic(kafka.bootstrap, f"{topic}.dlq", 2)
    assert [m.value for m in letters] == [b"\x0a\xff\xff garbage", b"{not json"]
    headers = dict(letters[0].headers)
    assert b"malformed protobuf" in headers["error"]
    assert (headers["source.topic"], headers["source.partition"], headers["source.offset"]) == (
        topic.encode(), b"0", b"0")
    assert 'assistant_kafka_messages_total{outcome="dead_lettered"} 2.0' in sidecar.scrape()
    sidecar.stop()


@pytest.mark.integration  # a real Kafka broker
def test_kill_9_mid_stream_then_restart_judges_every_trace_once(kafka: KafkaBroker,
                                                                sidecars: Start) -> None:
    topic = new_topic(kafka)
    slow = kafka_yaml(kafka, topic) + SLOW_JUDGE
    sidecar = sidecars("a", slow)
    provider = exporter_provider(kafka, topic, "otlp_proto", None)
    cases = list(itertools.islice(itertools.cycle(traffic.ALL), 40))
    sent = [traffic.send(provider, case, route="r") for case in cases]
    provider.shutdown()
    store = sidecar.store_path
    wait_until(lambda: len(store_rows(store, "SELECT 1 FROM turns WHERE state = 'judged'")) >= 5,
               what="a few judged")
    sidecar.kill()
    assert len(store_rows(store, "SELECT 1 FROM turns WHERE state = 'judged'")) < len(sent)

    restarted = sidecars("a", kafka_yaml(kafka, topic))
    wait_until(lambda: len(store_rows(store, "SELECT 1 FROM turns WHERE state = 'judged'"))
               == len(sent), what="every trace judged after the restart")
    assert restarted.stop() == 0  # a stop judges or hands back whatever was re-read
    judged = [r[0] for r in store_rows(store, "SELECT trace_id FROM judge_costs")]
    assert sorted(judged) == sorted(sent)  # each exactly once


def stream(kafka: KafkaBroker, topic: str, sent: list[str], count: int = 120,
           until: threading.Event | None = None) -> None:
    """Traces at a steady pace, one in ten split across two messages (route 'split'). With
    `until`, it goes on until that is set and then sends `count` more: whatever happens when it
    is set happens mid-stream, however slow the machine."""
    provider = exporter_provider(kafka, topic, "otlp_proto", None)
    cases = itertools.cycle(traffic.ALL)

    def send(i: int) -> None:
        sent.append(traffic.send(provider, next(cases), route="r"))
        if i % 10 == 0:
            trace_id, messages = split_trace_messages("otlp_proto")
            asyncio.run(produce(kafka, topic, [(trace_id.encode(), m) for m in messages]))
            sent.append(trace_id)
        time.sleep(0.05)  # pacing: a steady stream, not a burst

    i = 0
    while until is not None and not until.is_set() and i < 5000:
        send(i)
        i += 1
    for j in range(i, i + count):
        send(j)
    provider.shutdown()


def judged_ids(store: Path) -> list[str]:
    return [r[0] for r in store_rows(store, "SELECT trace_id FROM judge_costs")]


def count(store: Path, state: str) -> int:
    return len(store_rows(store, f"SELECT 1 FROM turns WHERE state = '{state}'"))


def two_members(kafka: KafkaBroker, sidecars: Start, topic: str, first_yaml: str = ""
                ) -> tuple[SidecarProcess, SidecarProcess]:
    group = f"group-{topic}"
    first = sidecars("a", kafka_yaml(kafka, topic, group=group) + first_yaml)
    wait_until(lambda: "partitions assigned" in first.log.read_text(), what="the first joined")
    second = sidecars("b", kafka_yaml(kafka, topic, group=group))
    # The second is assigned partitions only once the group has rebalanced around both.
    wait_until(lambda: "partitions assigned" in second.log.read_text(), what="both joined")
    return first, second


@pytest.mark.integration  # a real Kafka broker
@pytest.mark.parametrize("leave", ["stop", "kill"])
def test_a_member_leaving_for_good_mid_stream_strands_nothing(
        kafka: KafkaBroker, sidecars: Start, leave: str) -> None:
    """Scale-down: the first member, with turns sampled but not yet judged, leaves the group
    and never comes back; the second judges everything the first did not."""
    topic = new_topic(kafka, partitions=4)
    first, second = two_members(kafka, sidecars, topic, first_yaml=SLOW_JUDGE)
    sent: list[str] = []
    left = threading.Event()
    producer = threading.Thread(target=stream, args=(kafka, topic, sent, 40, left))
    producer.start()
    try:
        wait_until(lambda: len(judged_ids(first.store_path)) >= 1
                   and count(first.store_path, "pending") >= 3,
                   what="the first judging, with a backlog")
        if leave == "stop":
            assert first.stop() == 0
        else:
            first.kill()
    finally:
        left.set()  # the stream goes on a while, then ends
        producer.join()

    wait_until(lambda: set(judged_ids(first.store_path)) | set(judged_ids(second.store_path))
               >= set(sent), what="every trace judged by one of the two")
    assert second.stop() == 0
    a, b = judged_ids(first.store_path), judged_ids(second.store_path)
    assert a and b
    assert set(a) | set(b) == set(sent)  # nothing stranded in the first's store
    assert len(b) == len(set(b))
    if leave == "stop":
        assert sorted(a + b) == sorted(sent)  # and nothing judged twice
        # What the first had not judged went back to the group, not into a store nobody reads.
        assert count(first.store_path, "pending") == count(first.store_path, "judging") == 0
    # (After a kill -9, a turn judged in the last commit interval may be judged again: at least
    # once. Its offsets were not committed, so it is never lost.)
    for store in (first.store_path, second.store_path):
        for (span_count,) in store_rows(store, "SELECT json_extract(turn_json, '$.span_count') "
                                               "FROM turns WHERE route = 'split'"):
            assert span_count == 2


@pytest.mark.integration  # a real Kafka broker
def test_a_member_joining_mid_stream_takes_its_share_of_the_backlog_once(
        kafka: KafkaBroker, sidecars: Start) -> None:
    """Scale-up: the first member's partitions are revoked while sampled turns wait for its
    judge; those of the partitions that move are judged once, by their new owner."""
    topic = new_topic(kafka, partitions=4)
    group = f"group-{topic}"
    first = sidecars("a", kafka_yaml(kafka, topic, group=group) + SLOW_JUDGE)
    wait_until(lambda: "partitions assigned" in first.log.read_text(), what="the first joined")
    sent: list[str] = []
    enough = threading.Event()
    producer = threading.Thread(target=stream, args=(kafka, topic, sent, 10, enough))
    producer.start()
    try:
        wait_until(lambda: count(first.store_path, "pending") >= 10, what="a backlog on the first")
    finally:
        enough.set()
        producer.join()
    second = sidecars("b", kafka_yaml(kafka, topic, group=group))
    wait_until(lambda: "partitions assigned" in second.log.read_text(), what="both joined")
    handed = re.search(r"given up; \d+ unfinished turns \((\d+) sampled\)", first.log.read_text())
    assert handed and int(handed[1]) > 0  # the revoke found turns waiting for the first's judge
    wait_until(lambda: set(judged_ids(first.store_path)) | set(judged_ids(second.store_path))
               >= set(sent), what="every trace judged by one of the two")
    assert first.stop() == 0 and second.stop() == 0
    a, b = judged_ids(first.store_path), judged_ids(second.store_path)
    assert a and b
    assert sorted(a + b) == sorted(sent)  # nothing lost, nothing judged twice


@pytest.mark.integration  # a real Kafka broker
def test_sigterm_after_the_broker_is_gone_shuts_down_cleanly(sidecars: Start) -> None:
    broker = KafkaBroker()  # its own: this one is killed
    try:
        topic = new_topic(broker, partitions=1)
        sidecar = sidecars("a", kafka_yaml(broker, topic) + SLOW_JUDGE)
        sent: list[str] = []
        stream(broker, topic, sent, count=10)
        wait_until(lambda: len(judged_ids(sidecar.store_path)) >= 1, what="a trace judged")
    finally:
        broker.kill()
    code = sidecar.stop()  # within SidecarProcess.stop's 60 s: the stop is bounded
    log = sidecar.log.read_text()
    assert code == 0, log[-4000:]
    assert "Traceback" not in log and "CancelledError" not in log
    # The store was closed (its write-ahead log checkpointed and removed on close) ...
    assert not sidecar.store_path.with_name("store.db-wal").exists()
    # ... with every verdict written, and no turn left half-judged.
    assert count(sidecar.store_path, "judging") == 0
    for trace_id in judged_ids(sidecar.store_path):
        assert store_rows(sidecar.store_path,
                          f"SELECT 1 FROM verdicts WHERE trace_id = '{trace_id}'")


@pytest.mark.unit
def test_a_stop_step_that_swallows_its_cancellation_still_ends_at_its_bound(
        caplog: pytest.LogCaptureFixture) -> None:
    """aiokafka's close paths await their own tasks' ends inside `suppress(CancelledError)`
    (AIOKafkaClient.close, Fetcher.close): a stop's timeout that lands there is swallowed, and
    the close goes on for as long as what follows takes. A member's stop steps end at their
    bound all the same, so a stop stays bounded (the 60 s a test gives a sidecar's stop)."""
    from monitor.queue.group import _bounded

    async def close_like_aiokafka() -> None:
        sync_task = asyncio.create_task(asyncio.sleep(3600))
        with contextlib.suppress(asyncio.CancelledError):
            await sync_task  # the step's cancellation lands here, and is swallowed
        await asyncio.sleep(30)  # then its connections close, for as long as that takes

    async def stop() -> float:
        started = time.monotonic()
        await _bounded(close_like_aiokafka(), "closing the client", timeout_s=0.2)
        return time.monotonic() - started

    with caplog.at_level("WARNING", logger="monitor.queue.group"):
        elapsed = asyncio.run(asyncio.wait_for(stop(), 20))
    assert elapsed < 5
    assert "closing the client did not complete: TimeoutError" in caplog.text
