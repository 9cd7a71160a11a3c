"""The ingest stage's own instruments (receivers, Kafka, write-ahead log), on an injected registry.

The sidecar's `Metrics` (monitor/telemetry.py) is the union of every stage's telemetry; a stage
asks only for its own class.
"""

from __future__ import annotations

import functools

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from monitor import _native
from monitor.ingest.otlp import Batch, Signal


class IngestTelemetry:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.receiver_requests = Counter(
            "assistant_receiver_requests", "OTLP export requests by receiver, signal and outcome "
            "(accepted, partial, malformed, unsupported_media_type, unsupported_encoding, "
            "bad_encoding, too_large, unauthenticated, overloaded, unavailable, internal_error).",
            ["receiver", "signal", "outcome"], registry=r)
        self.spans_received = Counter(
            "assistant_spans_received", "Spans received, before validation.", ["receiver"],
            registry=r)
        self.spans_refused = Counter(
            "assistant_spans_refused", "Spans refused or dropped, by reason (invalid_trace_id, "
            "invalid_span_id, tenant_mismatch, late, trace_too_large, mapping_error).", ["reason"],
            registry=r)
        self.mapping_issues = Counter(
            "assistant_span_mapping_issues", "Things in spans the semantic-convention mapping could "
            "not use, by reason; the rest of the span is kept.", ["reason"], registry=r)
        self.spans_by_convention = Counter(
            "assistant_spans_by_convention", "Spans by the semantic convention recognised.",
            ["convention"], registry=r)
        # The children counted on every request, looked up once: labels() costs about 1 µs, and
        # both label sets are small and fixed (receivers, conventions).
        self._spans_received = functools.cache(self.spans_received.labels)
        self._spans_by_convention = functools.cache(self.spans_by_convention.labels)

        self.kafka_messages = Counter(
            "assistant_kafka_messages", "Kafka messages by outcome (received, dead_lettered).",
            ["outcome"], registry=r)
        self.kafka_lag = Gauge(
            "assistant_kafka_consumer_lag", "Messages not read yet, per assigned partition.",
            ["topic", "partition"], registry=r)
        self.kafka_spans_skipped = Counter(
            "assistant_kafka_spans_skipped", "Spans re-read after a crash or a rebalance whose "
            "turn the previous reader had already settled (not judged again).", registry=r)
        self.kafka_pauses = Counter(
            "assistant_kafka_pauses", "Times the consumer paused its partitions because the "
            "pipeline was full.", registry=r)
        self.turns_discarded = Counter(
            "assistant_turns_discarded", "Turns being assembled that were dropped unfinished "
            "because their Kafka partitions moved to another consumer (it re-reads them).",
            registry=r)

        self.wal_bytes = Gauge(
            "assistant_wal_bytes", "Bytes in the write-ahead log of accepted OTLP requests.",
            registry=r)
        self.wal_refusals = Counter(
            "assistant_wal_refusals", "OTLP requests refused (429) because the write-ahead log "
            "was full.", registry=r)
        self.wal_records_skipped = Counter(
            "assistant_wal_records_skipped", "Write-ahead log records skipped at replay, by reason "
            "(torn: a crash mid-write, corrupt, undecodable, unprocessable).", ["reason"],
            registry=r)
        self.wal_fsync_seconds = Histogram(
            "assistant_wal_fsync_seconds", "Time of one group commit of the write-ahead log.",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
            registry=r)

    def count_batch(self, batch: Batch, receiver: str, signal: Signal) -> None:
        """One decoded request or message: spans received, refused, mapping issues, and the
        conventions recognised."""
        if signal == "traces":
            self._spans_received(receiver).inc(batch.received)
        for reason, count in batch.rejected.items():
            self.spans_refused.labels(reason).inc(count)
        for reason, count in batch.issues.items():
            self.mapping_issues.labels(reason).inc(count)
        for name, count in _native.count_conventions(batch.facts):
            self._spans_by_convention(name).inc(count)
