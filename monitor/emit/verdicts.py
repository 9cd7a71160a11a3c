"""Verdicts → Prometheus: the metric contract, the sampling-weighted sums, exemplars with trace ids."""

from __future__ import annotations

from monitor.emit.metrics import LabelGuard, VerdictTelemetry
from monitor.judges.base import JudgeResult
from monitor.model import AssistantTurn


class VerdictMetrics:
    def __init__(self, metrics: VerdictTelemetry, services: LabelGuard, routes: LabelGuard) -> None:
        self.m = metrics
        self.services = services
        self.routes = routes

    def record(self, turn: AssistantTurn, probability: float, results: list[JudgeResult]) -> None:
        m = self.m
        exemplar = {"trace_id": turn.trace_id}
        weight = 1.0 / probability
        for result in results:
            if not result.verdicts:
                continue
            labels = (self.services(turn.service), self.routes(turn.route), result.judge)
            m.turns_judged.labels(*labels).inc(exemplar=exemplar)
            m.judge_requests.labels(result.judge, "ok").inc()
            m.judge_latency.labels(result.judge).observe(result.latency_s, exemplar=exemplar)
            if result.input_tokens:
                m.judge_tokens.labels(result.judge, "input").inc(result.input_tokens)
            if result.output_tokens:
                m.judge_tokens.labels(result.judge, "output").inc(result.output_tokens)
            for verdict in result.verdicts:
                metric = verdict.metric
                m.weighted_turns.labels(*labels, metric).inc(weight)
                m.sq_weighted_turns.labels(*labels, metric).inc(weight * weight)
                if verdict.label is not None:
                    m.weighted_verdicts.labels(*labels, metric, verdict.label).inc(weight)
                    m.sq_weighted_verdicts.labels(*labels, metric, verdict.label).inc(
                        weight * weight)
                if verdict.score is not None:
                    score = verdict.score
                    m.weighted_score.labels(*labels, metric).inc(score * weight)
                    m.sq_weighted_score.labels(*labels, metric).inc(score * weight * weight)
                    m.sq_weighted_score_squared.labels(*labels, metric).inc(
                        (score * weight) ** 2)
                if metric == "context_relevance":
                    m.context_relevance.labels(*labels).observe(verdict.score, exemplar=exemplar)
                elif metric == "answer_relevance":
                    m.answer_relevance.labels(*labels, verdict.label).inc(exemplar=exemplar)
                elif metric == "completeness":
                    m.completeness.labels(*labels, verdict.label).inc(exemplar=exemplar)
                elif metric == "groundedness":
                    m.groundedness.labels(*labels).observe(verdict.score, exemplar=exemplar)
                    for claim in verdict.details.get("claims", []):
                        m.claims.labels(*labels, claim["label"]).inc()
                elif metric == "tool_calls":
                    d = verdict.details
                    m.tool_calls_reliability.labels(*labels).observe(verdict.score,
                                                                     exemplar=exemplar)
                    for kind in ("expected", "actual"):
                        m.tool_calls_reference.labels(*labels, kind).inc(d[f"{kind}_calls"])
                        m.tool_call_arguments_reference.labels(*labels, kind).inc(
                            d[f"{kind}_arguments"])
                    m.tool_calls_reference.labels(*labels, "matched").inc(d["matched_names"])
                    m.tool_call_arguments_reference.labels(*labels, "matched").inc(
                        d["matched_arguments"])
                    m.tool_call_arguments_reference.labels(*labels, "matched_required").inc(
                        d["matched_required"])
                elif metric == "tool_use":
                    for call in verdict.details.get("calls", []):
                        m.tool_calls_needed.labels(*labels, call["needed"]).inc()
                        m.tool_calls_arguments_supported.labels(
                            *labels, call["arguments_supported"]).inc()
                if "agreement" in verdict.details:
                    m.judge_agreement.labels(result.judge, metric).observe(
                        verdict.details["agreement"])
