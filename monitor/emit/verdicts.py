"""Verdicts → Prometheus, through the metric contract (monitor/contract.py's `FAMILIES`): each
family's reader says what a judge result or a verdict adds to it; exemplars carry trace ids."""

from __future__ import annotations

from collections.abc import Iterable

from monitor.contract import RESULT_FAMILIES, VERDICT_FAMILIES, Family, Sample
from monitor.emit.metrics import LabelGuard, VerdictTelemetry
from monitor.model import AssistantTurn
from monitor.verdict import JudgeResult


class VerdictMetrics:
    def __init__(self, metrics: VerdictTelemetry, services: LabelGuard, routes: LabelGuard) -> None:
        self.m = metrics
        self.services = services
        self.routes = routes

    def record(self, turn: AssistantTurn, probability: float, results: list[JudgeResult]) -> None:
        weight = 1.0 / probability
        given = {"service": self.services(turn.service), "route": self.routes(turn.route)}
        for result in results:
            if not result.verdicts:
                continue
            given["judge"] = result.judge
            # Which turn, and who judged it: OpenMetrics allows an exemplar 128 characters of
            # label names and values, which the trace id and a model name of 64 fit.
            exemplar = {"trace_id": turn.trace_id}
            if result.model:
                exemplar["judge_model"] = result.model[:64]
            self.m.judge_requests.labels(result.judge, "ok").inc()
            for family in RESULT_FAMILIES:
                self._add(family, family.per_result(result), given, exemplar)  # type: ignore[misc]
            for verdict in result.verdicts:
                given["metric"] = verdict.metric
                for family in VERDICT_FAMILIES:
                    if family.verdict is None or family.verdict == verdict.metric:
                        self._add(family, family.per_verdict(verdict, weight),  # type: ignore[misc]
                                  given, exemplar)

    def _add(self, family: Family, samples: Iterable[Sample], given: dict[str, str],
             exemplar: dict[str, str]) -> None:
        instrument = self.m.verdict_families[family.name]
        with_exemplar = exemplar if family.exemplar else None
        for values, amount in samples:
            child = instrument.labels(*family.label_values(given, values))
            if family.type == "histogram":
                child.observe(amount, exemplar=with_exemplar)  # type: ignore[attr-defined]
            else:
                child.inc(amount, exemplar=with_exemplar)  # type: ignore[attr-defined]
