"""Kafka, against a real single-node Apache Kafka broker (KRaft) started for the session."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from exporters.kafka import KafkaSpanExporter, to_otlp_json
from tests import traffic
from tests.conftest import SidecarProcess
from tests.kafka_broker import KafkaBroker


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaBroker]:
    broker = KafkaBroker()
    yield broker
    broker.stop()


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


def store_rows(path: Path, sql: str) -> list[Any]:
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        try:
            return db.execute(sql).fetchall()
        except sqlite3.OperationalError:  # not created yet
            return []


def wait_until(condition: Any, timeout_s: float = 90.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def exporter_provider(kafka: KafkaBroker, topic: str, encoding: str, compression: str | None
                      ) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "kafka-bot"}))
    provider.add_span_processor(BatchSpanProcessor(KafkaSpanExporter(
        [kafka.bootstrap], topic, encoding=encoding, compression=compression)))  # type: ignore[arg-type]
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


@pytest.mark.parametrize("encoding, exporter_compression, producer_compression", [
    ("otlp_proto", "gzip", "lz4"),
    ("otlp_json", "zstd", "snappy"),
])
def test_exporter_and_plain_producer_are_consumed_assembled_and_judged(
        kafka: KafkaBroker, tmp_path: Path, encoding: str, exporter_compression: str,
        producer_compression: str) -> None:
    topic = new_topic(kafka)
    sidecar = SidecarProcess(tmp_path, kafka_yaml(kafka, topic, encoding))
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


def test_poison_messages_go_to_the_dead_letter_topic(kafka: KafkaBroker, tmp_path: Path) -> None:
    topic = new_topic(kafka, partitions=1)
    sidecar = SidecarProcess(tmp_path, kafka_yaml(kafka, topic))
    trace_id, messages = split_trace_messages("otlp_proto")
    asyncio.run(produce(kafka, topic, [(b"k", b"\x0a\xff\xff garbage"), (b"k", b"{not json"),
                                       *((trace_id.encode(), m) for m in messages)]))
    wait_until(lambda: store_rows(sidecar.store_path, "SELECT trace_id FROM turns WHERE "
                                                      "state = 'judged'") == [(trace_id,)],
               what="the message after the poison ones judged")

    async def dead_letters() -> list[Any]:
        consumer = AIOKafkaConsumer(f"{topic}.dlq", bootstrap_servers=kafka.bootstrap,
                                    auto_offset_reset="earliest", group_id=None)
        await consumer.start()
        try:
            batch = await consumer.getmany(timeout_ms=5000)
            return [m for messages in batch.values() for m in messages]
        finally:
            await consumer.stop()

    letters = asyncio.run(dead_letters())
    assert [m.value for m in letters] == [b"\x0a\xff\xff garbage", b"{not json"]
    headers = dict(letters[0].headers)
    assert b"malformed protobuf" in headers["error"]
    assert (headers["source.topic"], headers["source.partition"], headers["source.offset"]) == (
        topic.encode(), b"0", b"0")
    assert 'assistant_kafka_messages_total{outcome="dead_lettered"} 2.0' in sidecar.scrape()
    sidecar.stop()


def test_kill_9_mid_stream_then_restart_judges_every_trace_once(kafka: KafkaBroker,
                                                                tmp_path: Path) -> None:
    topic = new_topic(kafka)
    slow = kafka_yaml(kafka, topic) + "judging: {workers: 1, calls_per_minute: 300}\n"
    sidecar = SidecarProcess(tmp_path, slow)
    provider = exporter_provider(kafka, topic, "otlp_proto", None)
    cases = list(itertools.islice(itertools.cycle(traffic.ALL), 40))
    sent = [traffic.send(provider, case, route="r") for case in cases]
    provider.shutdown()
    store = sidecar.store_path
    wait_until(lambda: len(store_rows(store, "SELECT 1 FROM turns WHERE state = 'judged'")) >= 5,
               what="a few judged")
    sidecar.kill()
    assert len(store_rows(store, "SELECT 1 FROM turns WHERE state = 'judged'")) < len(sent)

    restarted = SidecarProcess(tmp_path, kafka_yaml(kafka, topic))
    wait_until(lambda: len(store_rows(store, "SELECT 1 FROM turns WHERE state = 'judged'"))
               == len(sent), what="every trace judged after the restart")
    time.sleep(1.0)  # anything re-read after the restart has had time to show up
    restarted.stop()
    judged = [r[0] for r in store_rows(store, "SELECT trace_id FROM judge_costs")]
    assert sorted(judged) == sorted(sent)  # each exactly once


def test_rebalance_two_sidecars_one_stops_mid_stream(kafka: KafkaBroker, tmp_path: Path) -> None:
    topic = new_topic(kafka, partitions=4)
    group = f"group-{topic}"
    first = SidecarProcess(tmp_path / "a", kafka_yaml(kafka, topic, group=group))
    second = SidecarProcess(tmp_path / "b", kafka_yaml(kafka, topic, group=group))
    time.sleep(3)  # both members joined

    sent: list[str] = []
    split_ids: list[str] = []

    def stream() -> None:
        provider = exporter_provider(kafka, topic, "otlp_proto", None)
        for i, case in enumerate(itertools.islice(itertools.cycle(traffic.ALL), 120)):
            sent.append(traffic.send(provider, case, route="r"))
            if i % 10 == 0:
                trace_id, messages = split_trace_messages("otlp_proto")
                asyncio.run(produce(kafka, topic, [(trace_id.encode(), m) for m in messages]))
                split_ids.append(trace_id)
            time.sleep(0.05)
        provider.shutdown()

    ids = lambda p: [r[0] for r in store_rows(p, "SELECT trace_id FROM judge_costs")]  # noqa: E731
    producer = threading.Thread(target=stream)
    producer.start()
    wait_until(lambda: len(ids(first.store_path)) >= 3, what="the first sidecar judging")
    assert producer.is_alive(), "the stream ended before the stop: nothing moves mid-stream"
    assert first.stop() == 0  # mid-stream: its partitions move to the second sidecar
    producer.join()

    everything = {*sent, *split_ids}
    wait_until(lambda: set(ids(first.store_path)) | set(ids(second.store_path)) >= everything,
               what="every trace judged by one of the two")
    time.sleep(1.0)
    second.stop()
    a, b = ids(first.store_path), ids(second.store_path)
    assert sorted(a + b) == sorted(everything)  # nothing lost, nothing judged twice
    assert a and b
    for store in (first.store_path, second.store_path):
        for (span_count,) in store_rows(store, "SELECT json_extract(turn_json, '$.span_count') "
                                               "FROM turns WHERE route = 'split'"):
            assert span_count == 2
