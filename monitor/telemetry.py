"""Every Prometheus metric of the sidecar: the union of each stage's own instruments on one
injected registry. Only composition code (the sidecar, the CLI, the offline tools) builds it; a
stage asks for its own telemetry class and never imports a later stage.

    metrics = Metrics(CollectorRegistry())
    metrics.turns_received.labels(service="rag", route="billing").inc()
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from monitor.assemble import AssemblyTelemetry
from monitor.emit.metrics import VerdictTelemetry
from monitor.ingest.telemetry import IngestTelemetry
from monitor.judges.telemetry import JudgeTelemetry
from monitor.sample.telemetry import SamplingTelemetry
from monitor.sessions import SessionTelemetry


class Metrics(IngestTelemetry, AssemblyTelemetry, SessionTelemetry, SamplingTelemetry,
              JudgeTelemetry, VerdictTelemetry):
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        for stage in (IngestTelemetry, AssemblyTelemetry, SessionTelemetry, SamplingTelemetry,
                      JudgeTelemetry, VerdictTelemetry):
            stage.__init__(self, r)
        # the sidecar's own: its turn queue and supervised background tasks
        self.queue_depth = Gauge(
            "assistant_queue_depth", "Items waiting in a stage's queue.", ["stage"], registry=r)
        self.turns_lost = Counter(
            "assistant_turns_lost", "Turns passed on together to a stage (sampling, the judge "
            "queue) that failed on them: logged by exception type; not judged (0 expected).",
            registry=r)
        self.monitor_info = Gauge(
            "assistant_monitor_info", "Always 1; public_url: where the sidecar's pages are "
            "(admin.public_url), for Grafana's links and the alerts' annotations.",
            ["public_url"], registry=r)
        self.task_failures = Counter(
            "assistant_background_task_failures", "Background tasks (assembly-tick, turn-pump, "
            "retention) that failed and were restarted, by task.", ["task"], registry=r)
