"""An OpenTelemetry SDK span exporter that publishes OTLP to Kafka, as the Collector does.

    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from exporters.kafka import KafkaSpanExporter

    provider.add_span_processor(BatchSpanProcessor(
        KafkaSpanExporter(brokers=["kafka:9092"], topic="otlp_spans", compression="zstd")))

Messages are exactly what the OpenTelemetry Collector's kafka exporter writes: one
ExportTraceServiceRequest each, `otlp_proto` (default) or `otlp_json`, and with
`partition_traces_by_id` (default on) one message per trace keyed by its trace id, so all spans of
a trace land on one partition, hence on one consumer of a group. Either can feed the sidecar.

Synchronous on the outside (the SDK's batch processor calls `export` from its thread); inside, an
aiokafka producer runs on its own event loop thread. The number of unacknowledged exports is
bounded: past `max_in_flight`, `export` fails fast (the batch is dropped, logged once and
counted in `dropped_spans`) instead of growing memory.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import threading
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

log = logging.getLogger(__name__)

Encoding = Literal["otlp_proto", "otlp_json"]


def to_otlp_json(request: Any) -> bytes:
    """OTLP/JSON: protobuf JSON mapping, but trace and span ids in hex (OTLP spec)."""
    data = json_format.MessageToDict(request)
    for rs in data.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for item in (span, *span.get("links", [])):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if item.get(key):
                            item[key] = base64.b64decode(item[key]).hex()
    return json.dumps(data, separators=(",", ":")).encode()


class KafkaSpanExporter(SpanExporter):
    def __init__(self, brokers: list[str], topic: str = "otlp_spans",
                 encoding: Encoding = "otlp_proto", compression: str | None = None,
                 partition_traces_by_id: bool = True, max_in_flight: int = 1000,
                 timeout_s: float = 30.0, **producer_options: Any) -> None:
        if encoding not in ("otlp_proto", "otlp_json"):
            raise ValueError(f"encoding must be otlp_proto or otlp_json, got {encoding!r}")
        self.topic = topic
        self.encoding = encoding
        self.partition_traces_by_id = partition_traces_by_id
        self.timeout_s = timeout_s
        self.dropped_spans = 0
        self._warned = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kafka-exporter",
                                        daemon=True)
        self._thread.start()
        self._in_flight = threading.BoundedSemaphore(max_in_flight)
        self._closed = False

        async def start() -> Any:
            from aiokafka import AIOKafkaProducer

            producer = AIOKafkaProducer(bootstrap_servers=brokers, compression_type=compression,
                                        acks="all", **producer_options)
            await producer.start()
            return producer

        self._producer = self._call(start())

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(self.timeout_s)

    def _messages(self, spans: Sequence[ReadableSpan]) -> list[tuple[bytes | None, bytes]]:
        groups: dict[bytes | None, list[ReadableSpan]] = defaultdict(list)
        for span in spans:
            key = (format(span.context.trace_id, "032x").encode()
                   if self.partition_traces_by_id else None)
            groups[key].append(span)
        out = []
        for key, group in groups.items():
            request = encode_spans(group)
            body = (request.SerializeToString() if self.encoding == "otlp_proto"
                    else to_otlp_json(request))
            out.append((key, body))
        return out

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._closed:
            return SpanExportResult.FAILURE
        if not self._in_flight.acquire(blocking=False):
            self.dropped_spans += len(spans)
            if not self._warned:
                log.warning("Kafka exporter buffer full: dropping spans (counted in dropped_spans)")
                self._warned = True
            return SpanExportResult.FAILURE
        try:
            messages = self._messages(spans)

            async def send() -> None:
                sent = [await self._producer.send(self.topic, body, key=key)
                        for key, body in messages]
                await asyncio.gather(*sent)  # acknowledged by the brokers (acks=all)

            self._call(send())
            return SpanExportResult.SUCCESS
        except Exception as exc:  # noqa: BLE001 - the hot path never raises to the caller
            self.dropped_spans += len(spans)
            log.warning("Kafka export failed: %s", type(exc).__name__)
            return SpanExportResult.FAILURE
        finally:
            self._in_flight.release()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        if self._closed:
            return True
        try:
            self._call(self._producer.flush())
            return True
        except Exception:  # noqa: BLE001
            return False

    def shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._producer.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
