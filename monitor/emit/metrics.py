"""The emit stage's instruments: verdict metrics, drift, sampling-weighted sums.

Every stage declares its own instruments (`IngestTelemetry`, `AssemblyTelemetry`,
`SamplingTelemetry`, `JudgeTelemetry`, this `VerdictTelemetry`); monitor/telemetry.py's `Metrics`
is their union on one registry. Names have the prefix `assistant_`. Label values come only from
bounded sets: fixed reason vocabularies, or `LabelGuard` for service and route names.
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from monitor.judges.telemetry import LATENCY_BUCKETS

SCORE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
VERDICT_LABELS = ["service", "route", "judge"]



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
    sampling-weighted sums."""

    judge_requests: Counter  # declared by JudgeTelemetry: its outcome "ok" is counted here

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.turns_judged = Counter(
            "assistant_turns_judged", "Turns with a verdict.", VERDICT_LABELS, registry=r)
        self.judge_tokens = Counter(
            "assistant_judge_tokens", "Tokens spent by judges (kind: input, output).",
            ["judge", "kind"], registry=r)
        self.judge_latency = Histogram(
            "assistant_judge_latency_seconds", "Time to judge one turn.", ["judge"],
            buckets=LATENCY_BUCKETS, registry=r)

        self.judge_agreement = Histogram(
            "assistant_judge_agreement", "Share of a panel's judges (or of a judge's samples) "
            "that agree with the verdict, per turn.", ["judge", "metric"], buckets=SCORE_BUCKETS,
            registry=r)

        self.context_relevance = Histogram(
            "assistant_context_relevance", "Share of a turn's retrieved documents judged relevant.",
            VERDICT_LABELS, buckets=SCORE_BUCKETS, registry=r)
        self.answer_relevance = Counter(
            "assistant_answer_relevance", "Answer relevance verdicts (relevant, irrelevant).",
            [*VERDICT_LABELS, "verdict"], registry=r)
        self.completeness = Counter(
            "assistant_answer_completeness", "Completeness verdicts (complete, incomplete, "
            "no_answer); the no-answer rate is no_answer / all.", [*VERDICT_LABELS, "verdict"],
            registry=r)
        self.groundedness = Histogram(
            "assistant_groundedness", "Grounded share of a turn's checkable claims.",
            VERDICT_LABELS, buckets=SCORE_BUCKETS, registry=r)
        self.claims = Counter(
            "assistant_claims", "Answer claims by verdict (inferable, generic, ungrounded).",
            [*VERDICT_LABELS, "verdict"], registry=r)

        self.tool_calls_needed = Counter(
            "assistant_tool_calls_needed", "Tool calls judged needed (yes) or not (no), "
            "reference-free.", [*VERDICT_LABELS, "verdict"], registry=r)
        self.tool_calls_arguments_supported = Counter(
            "assistant_tool_calls_arguments_supported", "Tool calls whose arguments the "
            "conversation supports (yes) or that invent some (no), reference-free.",
            [*VERDICT_LABELS, "verdict"], registry=r)

        self.evaluation_events = Counter(
            "assistant_evaluation_events", "gen_ai.evaluation.result events sent back over OTLP "
            "(evaluation_export), by outcome (emitted, exported, failed); emitted - exported - "
            "failed are queued or were dropped.", ["outcome"], registry=r)
        self.drift_score = Gauge(
            "assistant_drift_score", "Drift of a judged metric stream, z-like, positive = worse "
            "(see monitor/emit/drift.py).", ["metric", "service", "route"], registry=r)
        self.drift_alert = Gauge(
            "assistant_drift_alert", "1 while the drift score is at or above its threshold.",
            ["metric", "service", "route"], registry=r)

        self.tool_calls_reference = Counter(
            "assistant_tool_calls_reference", "Reference-based tool-call counts over judged "
            "turns with expected calls (kind: expected, actual, matched); name precision = "
            "matched / actual, name recall = matched / expected.",
            [*VERDICT_LABELS, "kind"], registry=r)
        self.tool_call_arguments_reference = Counter(
            "assistant_tool_call_arguments_reference", "Reference-based argument counts (kind: "
            "expected, actual, matched, matched_required); argument precision = matched / "
            "actual, argument recall = matched_required / expected.",
            [*VERDICT_LABELS, "kind"], registry=r)
        self.tool_calls_reliability = Histogram(
            "assistant_tool_calls_reliability", "Per turn: mean of name recall and argument "
            "recall against the expected calls.", VERDICT_LABELS, buckets=SCORE_BUCKETS,
            registry=r)

        # Sampling-weighted sums (each judged turn counts 1/p, p its inclusion probability), for
        # estimates of the whole traffic when rates differ by service, route or rule:
        #   rate = weighted_verdicts{verdict=v} / weighted_turns;  mean = weighted_score / weighted_turns
        self.weighted_turns = Counter(
            "assistant_weighted_turns", "Sum of 1/p over judged turns with a verdict on `metric`.",
            [*VERDICT_LABELS, "metric"], registry=r)
        self.weighted_verdicts = Counter(
            "assistant_weighted_verdicts", "Sum of 1/p over judged turns, by `metric` and label.",
            [*VERDICT_LABELS, "metric", "verdict"], registry=r)
        self.weighted_score = Counter(
            "assistant_weighted_score", "Sum of score/p over judged turns, by `metric`.",
            [*VERDICT_LABELS, "metric"], registry=r)
        # The same sums with squared weights (1/p²): what a 95% interval needs (the variance of
        # the ratio, see monitor/emit/intervals.py and the README's PromQL).
        self.sq_weighted_turns = Counter(
            "assistant_sq_weighted_turns", "Sum of 1/p² over judged turns with a verdict on "
            "`metric`.", [*VERDICT_LABELS, "metric"], registry=r)
        self.sq_weighted_verdicts = Counter(
            "assistant_sq_weighted_verdicts", "Sum of 1/p² over judged turns, by `metric` and "
            "label.", [*VERDICT_LABELS, "metric", "verdict"], registry=r)
        self.sq_weighted_score = Counter(
            "assistant_sq_weighted_score", "Sum of score/p² over judged turns, by `metric`.",
            [*VERDICT_LABELS, "metric"], registry=r)
        self.sq_weighted_score_squared = Counter(
            "assistant_sq_weighted_score_squared", "Sum of score²/p² over judged turns, by "
            "`metric`.", [*VERDICT_LABELS, "metric"], registry=r)
