"""The emit stage's instruments: verdict metrics, drift, sampling-weighted sums, built from the
metric contract (monitor/contract.py's `FAMILIES`).

Every stage declares its own instruments (`IngestTelemetry`, `AssemblyTelemetry`,
`SamplingTelemetry`, `JudgeTelemetry`, this `VerdictTelemetry`); monitor/telemetry.py's `Metrics`
is their union on one registry. Names have the prefix `assistant_`. Label values come only from
bounded sets: fixed reason vocabularies, or `LabelGuard` for service and route names.
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics import MetricWrapperBase

from monitor.contract import FAMILIES, Family


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


class VerdictTelemetry:
    """The verdict metrics (the metric contract), what each judged turn cost, drift, and the
    sampling-weighted sums: one instrument per family of `FAMILIES` (`verdict_families[name]`),
    also an attribute named by `Family.attribute` (`turns_judged`, `drift_score`, ...)."""

    judge_requests: Counter  # declared by JudgeTelemetry: its outcome "ok" is counted here
    turns_judged: Counter
    judge_latency: Histogram
    evaluation_events: Counter
    drift_score: Gauge
    drift_alert: Gauge

    def __init__(self, registry: CollectorRegistry) -> None:
        self.verdict_families: dict[str, MetricWrapperBase] = {}
        for family in FAMILIES:
            instrument = _instrument(family, registry)
            self.verdict_families[family.name] = instrument
            setattr(self, family.attribute, instrument)


def _instrument(family: Family, registry: CollectorRegistry) -> MetricWrapperBase:
    if family.type == "histogram":
        return Histogram(family.name, family.help, family.labels, buckets=family.buckets,
                         registry=registry)
    kind = Counter if family.type == "counter" else Gauge
    return kind(family.name, family.help, family.labels, registry=registry)
