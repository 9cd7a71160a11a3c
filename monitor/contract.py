"""The metric contract: each verdict metric family and each quality the sidecar publishes,
declared once, as data. A judge metric's own family and its quality derive from its declaration
(monitor/judge_metrics.py); the families of what verdicts rest on (claims, tool calls) and of
the judge results are declared here.

`FAMILIES` is every metric family the emit stage publishes on /metrics: its name, type, labels
and help, and what feeds it (a small reader of the judge result, or of one verdict and its
typed details). monitor/emit/metrics.py builds the instruments from it and
monitor/emit/verdicts.py records each judged turn through it; tests/test_metric_contract.py holds
/metrics to it.

    family = FAMILY["assistant_claims"]  # counter, labels service, route, judge, verdict
    family.per_verdict(verdict, weight)   # [(("inferable",), 1.0), (("ungrounded",), 1.0)]

`QUALITIES` are the quality numbers read from every judged turn: a rate (the share of turns whose
verdict carries a label: a no-answer, an irrelevant answer) or a mean (a verdict's score:
groundedness). Drift detection, the `eval` gates, the Grafana dashboards (grafana/generate.py)
and the Prometheus recording rules (held to it by tests/test_grafana.py) take their names, their
sources and their direction from that table.

    values = turn_values(turn, results)   # {"no_answer_rate": 0.0, "groundedness": 0.75, ...}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from monitor.judge_metrics import JUDGE_METRICS, JudgeMetric, Metric
from monitor.judges.telemetry import LATENCY_BUCKETS
from monitor.model import AssistantTurn
from monitor.verdict import JudgeResult, Verdict

# -- the verdict metric families --------------------------------------------------------------

SCORE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
VERDICT_LABELS = ("service", "route", "judge")
# Label values the judged turn gives (bounded: LabelGuard for service and route, the configured
# judges, the verdict metrics); a family's other labels are given by its reader.
TURN_LABELS = ("service", "route", "judge", "metric")

# A reader's output: the values of the family's labels the turn does not give, and the amount
# (an increment, or an observation).
Sample = tuple[tuple[str, ...], float]


@dataclass(frozen=True)
class Family:
    name: str  # as declared (a counter's samples add `_total` on /metrics)
    type: Literal["counter", "histogram", "gauge"]
    help: str
    labels: tuple[str, ...]
    per_result: Callable[[JudgeResult], Iterable[Sample]] | None = None  # once per judge result
    per_verdict: Callable[[Verdict, float], Iterable[Sample]] | None = None  # (verdict, 1/p)
    verdict: Metric | None = None  # per_verdict reads only this metric's verdicts; None: all
    exemplar: bool = False  # observations carry the turn's trace id
    buckets: tuple[float, ...] = ()  # histograms
    recorded_by: str = "monitor/emit/verdicts.py"

    @property
    def attribute(self) -> str:
        """Its instrument's name on `VerdictTelemetry` (and on the sidecar's `Metrics`)."""
        return self.name.removeprefix("assistant_").removesuffix("_seconds")

    @property
    def total(self) -> str:
        """A counter's series on /metrics (and in PromQL)."""
        assert self.type == "counter", f"{self.name} is a {self.type}"
        return f"{self.name}_total"

    def label_values(self, given: dict[str, str], rest: tuple[str, ...]) -> list[str]:
        """The values of all its labels: the turn's, then the reader's in order."""
        others = iter(rest)
        return [given[name] if name in TURN_LABELS else next(others) for name in self.labels]


def _once(result: JudgeResult) -> list[Sample]:
    return [((), 1.0)]


def _latency(result: JudgeResult) -> list[Sample]:
    return [((), result.latency_s)]


def _tokens(result: JudgeResult) -> list[Sample]:
    return [((kind,), float(n)) for kind, n in (("input", result.input_tokens),
                                                 ("output", result.output_tokens)) if n]


def _score(v: Verdict, weight: float) -> list[Sample]:
    return [] if v.score is None else [((), v.score)]


def _label(v: Verdict, weight: float) -> list[Sample]:
    return [] if v.label is None else [((v.label,), 1.0)]


def _agreement(v: Verdict, weight: float) -> list[Sample]:
    return [] if v.agreement is None else [((), v.agreement.share)]


def _claims(v: Verdict, weight: float) -> list[Sample]:
    return [((claim.label,), 1.0) for claim in v.claims or ()]


def _calls_needed(v: Verdict, weight: float) -> list[Sample]:
    return [((call.needed,), 1.0) for call in v.calls or ()]


def _calls_arguments_supported(v: Verdict, weight: float) -> list[Sample]:
    return [((call.arguments_supported,), 1.0) for call in v.calls or ()]


def _reference_calls(v: Verdict, weight: float) -> list[Sample]:
    r = v.reference
    return [] if r is None else [(("expected",), r.expected_calls), (("actual",), r.actual_calls),
                                 (("matched",), r.matched_names)]


def _reference_arguments(v: Verdict, weight: float) -> list[Sample]:
    r = v.reference
    return [] if r is None else [
        (("expected",), r.expected_arguments), (("actual",), r.actual_arguments),
        (("matched",), r.matched_arguments), (("matched_required",), r.matched_required)]


# The sampling-weighted sums: each judged turn counts 1/p (p its inclusion probability), and
# 1/p² for the variance a 95% interval needs (monitor/emit/intervals.py).
def _weighted_turns(v: Verdict, weight: float) -> list[Sample]:
    return [((), weight)]


def _weighted_verdicts(v: Verdict, weight: float) -> list[Sample]:
    return [] if v.label is None else [((v.label,), weight)]


def _weighted_score(v: Verdict, weight: float) -> list[Sample]:
    return [] if v.score is None else [((), v.score * weight)]


def _sq_weighted_turns(v: Verdict, weight: float) -> list[Sample]:
    return [((), weight * weight)]


def _sq_weighted_verdicts(v: Verdict, weight: float) -> list[Sample]:
    return [] if v.label is None else [((v.label,), weight * weight)]


def _sq_weighted_score(v: Verdict, weight: float) -> list[Sample]:
    return [] if v.score is None else [((), v.score * weight * weight)]


def _sq_weighted_score_squared(v: Verdict, weight: float) -> list[Sample]:
    return [] if v.score is None else [((), (v.score * weight) ** 2)]


_V = VERDICT_LABELS


def _verdict_family(metric: JudgeMetric) -> Family:
    """A judge metric's own family: its labels counted, or a histogram of its scores."""
    if metric.labels:
        return Family(metric.family or "", "counter", metric.family_help, (*_V, "verdict"),
                      per_verdict=_label, verdict=metric.name, exemplar=True)
    return Family(metric.family or "", "histogram", metric.family_help, _V, per_verdict=_score,
                  verdict=metric.name, exemplar=True, buckets=SCORE_BUCKETS)


FAMILIES = (
    Family("assistant_turns_judged", "counter", "Turns with a verdict.", _V,
           per_result=_once, exemplar=True),
    Family("assistant_judge_tokens", "counter", "Tokens spent by judges (kind: input, output).",
           ("judge", "kind"), per_result=_tokens),
    Family("assistant_judge_latency_seconds", "histogram", "Time to judge one turn.", ("judge",),
           per_result=_latency, exemplar=True, buckets=LATENCY_BUCKETS),
    Family("assistant_judge_agreement", "histogram", "Share of a panel's judges (or of a "
           "judge's samples) that agree with the verdict, per turn.", ("judge", "metric"),
           per_verdict=_agreement, buckets=SCORE_BUCKETS),
    *(_verdict_family(m) for m in JUDGE_METRICS if m.family is not None),
    # What a metric's verdicts rest on, counted: read from their typed details.
    Family("assistant_claims", "counter", "Answer claims by verdict (inferable, generic, "
           "ungrounded).", (*_V, "verdict"), per_verdict=_claims, verdict="groundedness"),
    Family("assistant_tool_calls_needed", "counter", "Tool calls judged needed (yes) or not "
           "(no), reference-free.", (*_V, "verdict"), per_verdict=_calls_needed,
           verdict="tool_use"),
    Family("assistant_tool_calls_arguments_supported", "counter", "Tool calls whose arguments "
           "the conversation supports (yes) or that invent some (no), reference-free.",
           (*_V, "verdict"), per_verdict=_calls_arguments_supported, verdict="tool_use"),
    Family("assistant_evaluation_events", "counter", "gen_ai.evaluation.result events sent back "
           "over OTLP (evaluation_export), by outcome (emitted, exported, failed); emitted - "
           "exported - failed are queued or were dropped.", ("outcome",),
           recorded_by="monitor/emit/evaluation_export.py"),
    Family("assistant_drift_score", "gauge", "Drift of a judged metric stream, z-like, positive "
           "= worse (see monitor/emit/drift.py).", ("metric", "service", "route"),
           recorded_by="monitor/emit/drift.py"),
    Family("assistant_drift_alert", "gauge", "1 while the drift score is at or above its "
           "threshold.", ("metric", "service", "route"), recorded_by="monitor/emit/drift.py"),
    Family("assistant_tool_calls_reference", "counter", "Reference-based tool-call counts over "
           "judged turns with expected calls (kind: expected, actual, matched); name precision "
           "= matched / actual, name recall = matched / expected.", (*_V, "kind"),
           per_verdict=_reference_calls, verdict="tool_calls"),
    Family("assistant_tool_call_arguments_reference", "counter", "Reference-based argument "
           "counts (kind: expected, actual, matched, matched_required); argument precision = "
           "matched / actual, argument recall = matched_required / expected.", (*_V, "kind"),
           per_verdict=_reference_arguments, verdict="tool_calls"),
    Family("assistant_weighted_turns", "counter", "Sum of 1/p over judged turns with a verdict "
           "on `metric`.", (*_V, "metric"), per_verdict=_weighted_turns),
    Family("assistant_weighted_verdicts", "counter", "Sum of 1/p over judged turns, by `metric` "
           "and label.", (*_V, "metric", "verdict"), per_verdict=_weighted_verdicts),
    Family("assistant_weighted_score", "counter", "Sum of score/p over judged turns, by "
           "`metric`.", (*_V, "metric"), per_verdict=_weighted_score),
    Family("assistant_sq_weighted_turns", "counter", "Sum of 1/p² over judged turns with a "
           "verdict on `metric`.", (*_V, "metric"), per_verdict=_sq_weighted_turns),
    Family("assistant_sq_weighted_verdicts", "counter", "Sum of 1/p² over judged turns, by "
           "`metric` and label.", (*_V, "metric", "verdict"), per_verdict=_sq_weighted_verdicts),
    Family("assistant_sq_weighted_score", "counter", "Sum of score/p² over judged turns, by "
           "`metric`.", (*_V, "metric"), per_verdict=_sq_weighted_score),
    Family("assistant_sq_weighted_score_squared", "counter", "Sum of score²/p² over judged "
           "turns, by `metric`.", (*_V, "metric"), per_verdict=_sq_weighted_score_squared),
)
FAMILY = {f.name: f for f in FAMILIES}
RESULT_FAMILIES = tuple(f for f in FAMILIES if f.per_result is not None)
VERDICT_FAMILIES = tuple(f for f in FAMILIES if f.per_verdict is not None)


# -- the qualities --------------------------------------------------------------------------


@dataclass(frozen=True)
class Quality:
    name: str  # drift's `metric` label, the eval report's key, the recording rules' middle part
    verdict: Metric | None  # the verdict metric that feeds it; None: `read` from the turn
    label: str | None  # a rate of this verdict label; None: the mean of the verdict's score
    higher_is_worse: bool
    reference: bool = False  # from the reference-based tool-call judge, not the quality judge
    recorded: bool = False  # deploy/prometheus/rules.yml records its sampling-weighted estimate
    read: Callable[[AssistantTurn], float | None] | None = None  # of the turn (verdict None)

    @property
    def recording(self) -> str:
        """The recording rule of its 1-hour estimate (its 95% bounds: `_lower95_`, `_upper95_`)."""
        return f"assistant:{self.name}:{'ratio' if self.is_rate else 'mean'}_rate1h"

    @property
    def is_rate(self) -> bool:
        return self.label is not None or self.verdict is None


QUALITIES = (
    *(Quality(m.quality, m.name, m.quality_label, m.higher_is_worse, m.reference, m.recorded)
      for m in JUDGE_METRICS),
    # A turn with a failed call. (Prometheus records the failed share of all calls instead,
    # assistant:tool_call_failure_rate, from the unsampled assistant_tool_calls_total.)
    Quality("tool_failure_rate", None, None, higher_is_worse=True,
            read=lambda t: float(any(c.error for c in t.tool_calls)) if t.tool_calls else None),
    # A turn that repeated a tool call alike (the agent looped). (Prometheus records loops per
    # call, assistant:agent_loop_rate, from the unsampled assistant_agent_loops_total.)
    Quality("agent_loop_rate", None, None, higher_is_worse=True,
            read=lambda t: float(t.signals.loops > 0) if t.tool_calls else None),
)
QUALITY = {q.name: q for q in QUALITIES}


def turn_values(turn: AssistantTurn, results: list[JudgeResult]) -> dict[str, float]:
    """The value of each quality that applies to one judged turn. `results[0]` is the quality
    judge's (the LLM judge, a panel, or the local judge); the reference judge's is found by its
    verdict."""
    out: dict[str, float] = {}
    if not results:
        return out
    for q in QUALITIES:
        if q.verdict is None:
            value = q.read(turn) if q.read is not None else None
            if value is not None:
                out[q.name] = value
            continue
        if q.reference:
            verdict = next((r.get(q.verdict) for r in results if r.get(q.verdict)), None)
        else:
            verdict = results[0].get(q.verdict)
        if verdict is None:
            continue
        if q.label is not None:
            if verdict.label is not None:
                out[q.name] = float(verdict.label == q.label)
        elif verdict.score is not None:
            out[q.name] = verdict.score
    return out
