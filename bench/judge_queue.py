"""The Kafka judge queue: sampled turns published per second by one ingest replica, and judged
per second by one and by two judge replicas, side by side in one run.

    python bench/judge_queue.py [--turns 2000] [--latency-ms 20] [--workers 4]

Starts a real single-node Kafka broker (tests/kafka_broker.py). Publishing: the ingest side's
`SampledTurnPublisher`, given batches of up to `BATCH` turns (all waiting for their
acknowledgements at once), as the sidecar's turn pump calls it. Judging: each replica is its own
process (a `Sidecar` with `judging.queue: {kind: kafka, role: judge}`) whose judge waits
`--latency-ms` per turn and burns no CPU (an LLM endpoint's latency, the judge replicas' usual
bottleneck); the rate is taken from the 10th to the last percent of the turns judged, so group
joins are left out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import sqlite3
import sys
import tempfile
import time
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from aiokafka import AIOKafkaProducer  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient, NewTopic  # noqa: E402
from aiokafka.errors import KafkaError  # noqa: E402
from ingest import cpu_seconds  # noqa: E402

from monitor.config import JudgeQueueSettings, KafkaSettings, Settings  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402
from monitor.pipeline import BATCH  # noqa: E402
from monitor.queue.kafka import (  # noqa: E402
    JudgeQueueTelemetry,
    SampledTurnPublisher,
    encode_turn,
)
from monitor.verdict import JudgeResult, Verdict  # noqa: E402
from tests.kafka_broker import KafkaBroker  # noqa: E402


def turns(count: int) -> list[AssistantTurn]:
    return [AssistantTurn(
        trace_id=uuid.uuid4().hex, service="shop-bot", route="support",
        question=f"Question {n}: how long do refunds take?",
        answer="Refunds are issued within 30 days of purchase.",
        documents=[RetrievedDocument(id="d1", content="Refunds are issued within 30 days of "
                                                      "purchase to the original payment method.")])
        for n in range(count)]


class Waiting:
    """A judge that waits, as for a remote endpoint, and burns no CPU."""

    name = "waiting"

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        await asyncio.sleep(self.latency_s)
        return JudgeResult(self.name, [Verdict("completeness", label="complete")])


def replica(settings: dict[str, Any], latency_s: float, stop: Any) -> None:
    from prometheus_client import CollectorRegistry

    from monitor.app import Sidecar

    async def run() -> None:
        sidecar = Sidecar(Settings(**settings), registry=CollectorRegistry(),
                          judges=[Waiting(latency_s)])
        await sidecar.start()
        while not stop.is_set():
            await asyncio.sleep(0.1)
        await sidecar.stop()

    asyncio.run(run())


def judged(stores: list[Path]) -> int:
    total = 0
    for store in stores:
        if store.exists():
            with closing(sqlite3.connect(store)) as db:
                try:
                    total += db.execute("SELECT count(*) FROM turns WHERE state = 'judged'"
                                        ).fetchone()[0]
                except sqlite3.OperationalError:  # not created yet
                    pass
    return total


async def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, replication_factor=1)])
    finally:
        await admin.close()


async def joined(bootstrap: str, group: str, members: int) -> None:
    """Until the group is stable with `members` members."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        async with asyncio.timeout(120):
            while True:
                with contextlib.suppress(KafkaError):  # no coordinator before the first join
                    [response] = await admin.describe_consumer_groups([group])
                    _, _, state, _, _, described, *_ = response.groups[0]
                    if state == "Stable" and len(described) == members:
                        return
                await asyncio.sleep(0.2)
    finally:
        await admin.close()


async def publish(bootstrap: str, topic: str, batch: list[AssistantTurn]) -> tuple[float, float]:
    """Turns a second and CPU-seconds a turn, through the ingest side's publisher."""
    from prometheus_client import CollectorRegistry

    publisher = SampledTurnPublisher(KafkaSettings(brokers=[bootstrap]),
                                     JudgeQueueSettings(kind="kafka", topic=topic),
                                     JudgeQueueTelemetry(CollectorRegistry()))
    await publisher.start()
    cpu, wall = time.process_time(), time.perf_counter()
    for start in range(0, len(batch), BATCH):  # as the sidecar's turn pump passes turns on
        await publisher.enqueue_many([(turn, "rate", 1.0) for turn in batch[start:start + BATCH]])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await publisher.stop()
    return len(batch) / wall, cpu / len(batch)


async def fill(bootstrap: str, topic: str, batch: list[AssistantTurn]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    await producer.start()
    for turn in batch:
        await producer.send(topic, encode_turn(turn, "rate", 1.0), key=turn.trace_id.encode())
    await producer.stop()


def judge_rate(bootstrap: str, replicas: int, count: int, args: argparse.Namespace,
               work: Path) -> tuple[float, float]:
    """Turns judged a second by `replicas` judge processes, and their CPU-seconds a turn."""
    topic = f"sampled-{uuid.uuid4().hex[:8]}"
    asyncio.run(create_topic(bootstrap, topic, partitions=4))
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    stores, processes = [], []
    for n in range(replicas):
        store = work / f"{topic}-{n}.db"
        stores.append(store)
        settings = {
            "admin": {"endpoint": "127.0.0.1:0"}, "store": {"path": str(store)},
            "kafka": {"brokers": [bootstrap]}, "drift": {"enabled": False},
            "judging": {"workers": args.workers, "queue": {
                "kind": "kafka", "role": "judge", "topic": topic, "group_id": topic}}}
        process = context.Process(target=replica, args=(settings, args.latency_ms / 1000, stop))
        process.start()
        processes.append(process)
    asyncio.run(joined(bootstrap, topic, replicas))  # no rebalance while timed
    asyncio.run(fill(bootstrap, topic, turns(count)))
    start = None
    deadline = time.monotonic() + 600
    while (done := judged(stores)) < count:
        if start is None and done >= count // 10:
            start = (time.perf_counter(), done, sum(cpu_seconds(p.pid) for p in processes))
        assert time.monotonic() < deadline, f"{done} of {count} judged in 600 s"
        time.sleep(0.05)
    end = time.perf_counter(), sum(cpu_seconds(p.pid) for p in processes)
    stop.set()
    for process in processes:
        process.join(60)
    assert start is not None
    turns_judged = count - start[1]
    return turns_judged / (end[0] - start[0]), (end[1] - start[2]) / turns_judged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    broker = KafkaBroker()
    try:
        with tempfile.TemporaryDirectory() as work:
            topic = f"publish-{uuid.uuid4().hex[:8]}"
            asyncio.run(create_topic(broker.bootstrap, topic, partitions=4))
            rate, cpu = asyncio.run(publish(broker.bootstrap, topic, turns(args.turns)))
            print(f"published by one ingest replica: {rate:,.0f} turns/s, "
                  f"{cpu * 1e3:.2f} ms CPU a turn (acks=all, batches of {BATCH})")
            bound = args.workers / (args.latency_ms / 1000)
            for replicas in (1, 2):
                rate, cpu = judge_rate(broker.bootstrap, replicas, args.turns, args, Path(work))
                print(f"judged by {replicas} replica(s): {rate:,.0f} turns/s "
                      f"(latency bound {bound * replicas:,.0f}), {cpu * 1e3:.2f} ms CPU a turn")
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
