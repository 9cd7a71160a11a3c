"""Every Prometheus metric of the sidecar, defined once against an injected registry.

    metrics = Metrics(CollectorRegistry())
    metrics.turns_received.labels(service="rag", route="billing").inc()

Names follow the metric contract in DESIGN.md (prefix `assistant_`). Label values come only from
bounded sets: fixed reason vocabularies, or `LabelGuard` for service and route names.
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

SCORE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
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


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry

        # ingest
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

        # assembly
        self.turns_received = Counter(
            "assistant_turns_received", "Turns assembled.", ["service", "route"], registry=r)
        self.turn_completions = Counter(
            "assistant_turn_completions", "Why turns were completed (root_ended, decision_wait, "
            "evicted: flushed early because the buffer was full, shutdown).", ["reason"],
            registry=r)
        self.tool_calls = Counter(
            "assistant_tool_calls", "Tool calls in assembled turns (all traffic, not a sample), "
            "by outcome (ok, error).", ["service", "route", "outcome"], registry=r)
        self.turns_incomplete = Counter(
            "assistant_turns_incomplete", "Assembled turns missing a part (no_question, no_answer).",
            ["part"], registry=r)
        self.assembly_traces = Gauge(
            "assistant_assembly_traces", "Turns being assembled.", registry=r)
        self.assembly_spans = Gauge(
            "assistant_assembly_spans", "Spans held by the assembler.", registry=r)
        self.assembly_bytes = Gauge(
            "assistant_assembly_bytes", "Bytes of span facts held by the assembler (accounted "
            "as they enter).", registry=r)
        self.assembly_evictions = Counter(
            "assistant_assembly_evictions", "Turns flushed early because the assembly buffer hit "
            "a limit (traces, spans, bytes).", ["limit"], registry=r)
        self.queue_depth = Gauge(
            "assistant_queue_depth", "Items waiting in a stage's queue.", ["stage"], registry=r)
        self.task_failures = Counter(
            "assistant_background_task_failures", "Background tasks (assembly-tick, turn-pump, "
            "retention) that failed and were restarted, by task.", ["task"], registry=r)

        # sampling
        self.turns_sampled = Counter(
            "assistant_turns_sampled", "Turns kept for judging, by the rule that kept them "
            "(an always-keep rule, or rate).", ["reason"], registry=r)
        self.turns_dropped = Counter(
            "assistant_turns_dropped", "Turns not judged, by reason (not_sampled, duplicate, "
            "backlog_full, token_budget, judge_failed).", ["reason"], registry=r)
        self.sampling_factor = Gauge(
            "assistant_sampling_factor", "Adaptive factor applied to the sampling rates "
            "(1: as configured; lower while the judge backlog is high).", registry=r)
        self.judge_backlog = Gauge(
            "assistant_judge_backlog", "Sampled turns waiting for a judge (persisted).",
            registry=r)

        # judging: cost and health
        self.turns_judged = Counter(
            "assistant_turns_judged", "Turns with a verdict.", VERDICT_LABELS, registry=r)
        self.judge_requests = Counter(
            "assistant_judge_requests", "Judge invocations by outcome (ok, error).",
            ["judge", "outcome"], registry=r)
        self.judge_input_truncated = Counter(
            "assistant_judge_input_truncated", "Turn fields cut to judging.input's limits before "
            "judging (field: question, answer, document, documents).", ["field"], registry=r)
        self.judge_tokens = Counter(
            "assistant_judge_tokens", "Tokens spent by judges (kind: input, output).",
            ["judge", "kind"], registry=r)
        self.judge_latency = Histogram(
            "assistant_judge_latency_seconds", "Time to judge one turn.", ["judge"],
            buckets=LATENCY_BUCKETS, registry=r)

        self.llm_calls = Counter(
            "assistant_judge_llm_calls", "LLM calls by judge and outcome (ok, unavailable: after "
            "the client's retries, refused: a 4xx, unparseable: a reply that is not a verdict).",
            ["judge", "outcome"], registry=r)
        self.llm_call_latency = Histogram(
            "assistant_judge_llm_call_seconds", "Latency of one LLM judge call.", ["judge"],
            buckets=LATENCY_BUCKETS, registry=r)
        self.judge_agreement = Histogram(
            "assistant_judge_agreement", "Share of a panel's judges (or of a judge's samples) "
            "that agree with the verdict, per turn.", ["judge", "metric"], buckets=SCORE_BUCKETS,
            registry=r)

        # verdicts (the metric contract)
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
