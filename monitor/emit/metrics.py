"""Every Prometheus metric of the sidecar, defined once against an injected registry.

    metrics = Metrics(CollectorRegistry())
    metrics.turns_received.labels(service="rag", route="billing").inc()

Names follow the metric contract in DESIGN.md (prefix `assistant_`). Label values come only from
bounded sets: fixed reason vocabularies, or `LabelGuard` for service and route names.
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge


class LabelGuard:
    """Bounds a label's values: the configured ones, or the first `max_values` seen; else "other"."""

    OTHER = "other"

    def __init__(self, allowed: list[str], max_values: int) -> None:
        self._fixed = bool(allowed)
        self._values = set(allowed)
        self._max = max_values
        self._lock = threading.Lock()

    def __call__(self, value: str | None) -> str:
        if value is None or value == "":
            return "none"
        if value in self._values:
            return value
        if self._fixed:
            return self.OTHER
        with self._lock:
            if len(self._values) < self._max:
                self._values.add(value)
                return value
        return self.OTHER


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry

        # ingest
        self.receiver_requests = Counter(
            "assistant_receiver_requests", "OTLP export requests by receiver, signal and outcome "
            "(accepted, partial, malformed, unsupported_media_type, too_large, unauthenticated, "
            "overloaded, unavailable).", ["receiver", "signal", "outcome"], registry=r)
        self.spans_received = Counter(
            "assistant_spans_received", "Spans received, before validation.", ["receiver"],
            registry=r)
        self.spans_refused = Counter(
            "assistant_spans_refused", "Spans refused or dropped, by reason (invalid_trace_id, "
            "invalid_span_id, tenant_mismatch, late, trace_too_large).", ["reason"], registry=r)
        self.mapping_issues = Counter(
            "assistant_span_mapping_issues", "Things in spans the semantic-convention mapping could "
            "not use, by reason; the rest of the span is kept.", ["reason"], registry=r)
        self.spans_by_convention = Counter(
            "assistant_spans_by_convention", "Spans by the semantic convention recognised.",
            ["convention"], registry=r)

        # assembly
        self.turns_received = Counter(
            "assistant_turns_received", "Turns assembled.", ["service", "route"], registry=r)
        self.turn_completions = Counter(
            "assistant_turn_completions", "Why turns were completed (root_ended, decision_wait, "
            "evicted: flushed early because the buffer was full, shutdown).", ["reason"],
            registry=r)
        self.turns_incomplete = Counter(
            "assistant_turns_incomplete", "Assembled turns missing a part (no_question, no_answer).",
            ["part"], registry=r)
        self.assembly_traces = Gauge(
            "assistant_assembly_traces", "Turns being assembled.", registry=r)
        self.assembly_spans = Gauge(
            "assistant_assembly_spans", "Spans held by the assembler.", registry=r)
        self.queue_depth = Gauge(
            "assistant_queue_depth", "Items waiting in a stage's queue.", ["stage"], registry=r)
