"""Kafka consume throughput: spans per second (and per CPU-second of the sidecar) from a
pre-filled topic, through decode + mapping + assembly + sampling.

    python bench/kafka_consume.py [--traces 6000] [--rate 0.0]

Starts a real single-node Kafka broker (tests/kafka_broker.py), fills a 4-partition topic with
one message per trace (the bench/ingest.py RAG mix, keyed by trace id, as the Collector's
`partition_traces_by_id` writes it), then times a sidecar process consuming all of it.
`--rate` is the sampling rate (0: measure consumption without judging).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from aiokafka import AIOKafkaProducer  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient, NewTopic  # noqa: E402
from ingest import cpu_seconds, free_port, make_requests, peak_rss_mib  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

from tests.kafka_broker import KafkaBroker  # noqa: E402


def per_trace_messages(traces: int) -> list[tuple[bytes, bytes]]:
    messages = []
    for request in make_requests(traces, 100):
        rs = request.resource_spans[0]
        spans = rs.scope_spans[0].spans
        for start in range(0, len(spans), 5):  # 5 spans a trace, contiguous
            one = ExportTraceServiceRequest()
            out = one.resource_spans.add()
            out.resource.CopyFrom(rs.resource)
            out.scope_spans.add().spans.extend(spans[start:start + 5])
            messages.append((spans[start].trace_id.hex().encode(), one.SerializeToString()))
    return messages


async def fill(bootstrap: str, topic: str, messages: list[tuple[bytes, bytes]]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, num_partitions=4, replication_factor=1)])
    await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    await producer.start()
    for key, value in messages:
        await producer.send(topic, value, key=key)
    await producer.flush()
    await producer.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=6000)
    parser.add_argument("--rate", type=float, default=0.0)
    args = parser.parse_args()
    broker = KafkaBroker()
    try:
        messages = per_trace_messages(args.traces)
        spans = args.traces * 5
        asyncio.run(fill(broker.bootstrap, "bench", messages))
        with tempfile.TemporaryDirectory() as tmp:
            admin = free_port()
            config = Path(tmp) / "bench.yaml"
            config.write_text(
                "receivers: {grpc: {enabled: false}, http: {enabled: false}}\n"
                f"admin: {{endpoint: '127.0.0.1:{admin}', recent_turns: 10}}\n"
                f"store: {{path: '{Path(tmp) / 'store.db'}'}}\nlog_level: WARNING\n"
                f"sampling: {{default_rate: {args.rate}, always_keep: []}}\n"
                "assembly: {root_grace_s: 0, max_traces: 100000, max_spans: 1000000}\n"
                f"kafka: {{enabled: true, brokers: ['{broker.bootstrap}'], topic: bench, "
                "initial_offset: earliest, group_id: bench, max_poll_records: 2000}\n")
            sidecar = subprocess.Popen([sys.executable, "-m", "monitor", "run", "--config",
                                        str(config)])
            try:
                url = f"http://127.0.0.1:{admin}/metrics"
                cpu0 = start = None
                while True:
                    try:
                        text = urllib.request.urlopen(url, timeout=2).read().decode()
                    except OSError:
                        time.sleep(0.05)
                        continue
                    if start is None:
                        start, cpu0 = time.perf_counter(), cpu_seconds(sidecar.pid)
                    match = re.search(r'assistant_spans_received_total\{receiver="kafka"\} (\S+)',
                                      text)
                    if match and float(match.group(1)) >= spans:
                        break
                    time.sleep(0.05)
                wall = time.perf_counter() - start
                cpu = cpu_seconds(sidecar.pid) - cpu0
                print(f"{args.traces} traces, {spans} spans in {len(messages)} messages on 4 "
                      f"partitions; sampling rate {args.rate}")
                print(f"consumed {spans / wall:,.0f} spans/s wall, {spans / cpu:,.0f} spans per "
                      f"CPU-second of the sidecar; peak RSS {peak_rss_mib(sidecar.pid):.0f} MiB")
                print("(wall includes the consumer joining its group and the first fetches)")
            finally:
                sidecar.terminate()
                sidecar.wait(timeout=60)
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
