"""Verdicts back into the trace: one OpenTelemetry `gen_ai.evaluation.result` event per verdict.

Follows the GenAI semantic conventions' evaluation event (open-telemetry/semantic-conventions-
genai, model/gen-ai/events.yaml; stability: development): an OTLP log record with event name
`gen_ai.evaluation.result`, in the context of the evaluated operation's span (here the turn's
root span, so a tracing backend shows it on the trace), with `gen_ai.evaluation.name` (required:
the metric), `gen_ai.evaluation.score.value` and/or `gen_ai.evaluation.score.label` (each where
the verdict has one), and the recommended `gen_ai.evaluation.explanation` only where privacy
settings allow (the rationale is trace content), with personal data replaced (`redact`).
`assistant.judge` says which judge decided.

The SDK's own provider and batch processor, never the global ones: this process's telemetry does
not loop back into itself. The batch queue is bounded (2,048 records); when the endpoint is down,
records past it are dropped by the SDK, and judging never waits for export.
`assistant_evaluation_events_total{outcome}` counts records emitted, exported and failed (the
endpoint refused them or was down after the exporter's retries): emitted - exported - failed is
what is queued or was dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

from monitor.config import EvaluationExportSettings
from monitor.emit.metrics import VerdictTelemetry
from monitor.judges.redact import PiiAnalyzer, Redactor
from monitor.model import AssistantTurn
from monitor.verdict import JudgeResult

log = logging.getLogger(__name__)

EVENT_NAME = "gen_ai.evaluation.result"


class _CountedExporter:
    """The OTLP log exporter, counting what it exported and what failed (the result's enum is
    named LogExportResult or LogRecordExportResult, by SDK version: compared by name)."""

    def __init__(self, exporter: Any, metrics: VerdictTelemetry) -> None:
        self.exporter = exporter
        self.metrics = metrics

    def export(self, batch: Any) -> Any:
        result = self.exporter.export(batch)
        outcome = "exported" if getattr(result, "name", None) == "SUCCESS" else "failed"
        self.metrics.evaluation_events.labels(outcome).inc(len(batch))
        return result

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self.exporter.force_flush(timeout_millis))


class EvaluationExporter:
    def __init__(self, settings: EvaluationExportSettings, metrics: VerdictTelemetry,
                 redaction: PiiAnalyzer | None = None) -> None:
        """`redaction`: with it, personal data in the explanations is replaced."""
        assert settings.endpoint is not None, "only built when an endpoint is configured"
        self.settings = settings
        self.redaction = redaction
        self.metrics = metrics
        if settings.protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
            exporter = OTLPLogExporter(endpoint=settings.endpoint, headers=settings.headers,
                                       timeout=settings.timeout_s,
                                       insecure=settings.endpoint.startswith("http://"))
        else:
            from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
            exporter = OTLPLogExporter(endpoint=settings.endpoint, headers=settings.headers,
                                       timeout=settings.timeout_s)
        self.provider = LoggerProvider(resource=Resource.create({"service.name": "assistant-monitor"}))
        self.provider.add_log_record_processor(BatchLogRecordProcessor(
            _CountedExporter(exporter, metrics), max_queue_size=2048))
        self.logger = self.provider.get_logger("assistant-monitor")

    def record(self, turn: AssistantTurn, results: list[JudgeResult]) -> None:
        """Queue one event per verdict of the turn (never blocks on the network)."""
        if not turn.root_span_id:
            return  # nothing to attach it to (a turn from a replayed file, say)
        parent = SpanContext(trace_id=int(turn.trace_id, 16), span_id=int(turn.root_span_id, 16),
                             is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
        context = set_span_in_context(NonRecordingSpan(parent))
        explanations: Iterator[str | None] = iter(())
        if self.settings.include_explanation:
            rationales = [v.rationale for r in results for v in r.verdicts]
            explanations = iter(Redactor(self.redaction).many(rationales)
                                if self.redaction is not None else rationales)
        for result in results:
            for verdict in result.verdicts:
                explanation = next(explanations, None)
                attributes: dict[str, str | float] = {"gen_ai.evaluation.name": verdict.metric,
                                                      "assistant.judge": result.judge}
                # Who judged: the model the judge endpoint reported (or the local models'
                # checksums) and the prompt versions.
                if result.model:
                    attributes["gen_ai.response.model"] = result.model
                if result.prompt_version:
                    attributes["assistant.judge.prompt_version"] = result.prompt_version
                if verdict.score is not None:
                    attributes["gen_ai.evaluation.score.value"] = verdict.score
                if verdict.label is not None:
                    attributes["gen_ai.evaluation.score.label"] = verdict.label
                if explanation:
                    attributes["gen_ai.evaluation.explanation"] = explanation
                self.logger.emit(event_name=EVENT_NAME, context=context, attributes=attributes)
                self.metrics.evaluation_events.labels("emitted").inc()

    def shutdown(self) -> None:
        """Flush what is queued (bounded by the exporter's timeout) and stop."""
        self.provider.shutdown()
