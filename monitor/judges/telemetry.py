"""The judges' own instruments (calls, failures, input cut), on an injected registry. What a
judged turn cost (latency, tokens) is recorded with its verdicts, by the emit stage."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


def _agreement(registry: CollectorRegistry, name: str, what: str, help_text: str
               ) -> tuple[Gauge, Gauge, Gauge]:
    """An agreement per judge and metric, and the bounds of its 95% Wilson interval."""
    labels = ["judge", "metric"]
    return (Gauge(name, f"{help_text}; _lower and _upper: its 95% Wilson interval.", labels,
                  registry=registry),
            Gauge(f"{name}_lower", f"The {what}'s 95% lower bound.", labels, registry=registry),
            Gauge(f"{name}_upper", f"The {what}'s 95% upper bound.", labels, registry=registry))


class JudgeTelemetry:
    # declared by the sampling stage (SamplingTelemetry), which this stage follows
    judge_backlog: Gauge
    turns_dropped: Counter

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.judge_requests = Counter(
            "assistant_judge_requests", "Judge invocations by outcome (ok, error).",
            ["judge", "outcome"], registry=r)
        self.judge_input_truncated = Counter(
            "assistant_judge_input_truncated", "Turn fields cut to judging.input's limits before "
            "judging (field: question, answer, document, documents).", ["field"], registry=r)
        self.llm_calls = Counter(
            "assistant_judge_llm_calls", "LLM calls by judge and outcome (ok, unavailable: after "
            "the client's retries, refused: a 4xx, unparseable: a reply that is not a verdict).",
            ["judge", "outcome"], registry=r)
        self.judge_canary_agreement, self.judge_canary_agreement_lower, \
            self.judge_canary_agreement_upper = _agreement(
                r, "assistant_judge_canary_agreement", "canary agreement", "Agreement of a judge "
                "with the canary set's labels at its last run (0..1)")
        self.judge_canary_runs = Counter(
            "assistant_judge_canary_runs", "Canary runs by judge and outcome (ok; unavailable: "
            "the judge could not be reached; the agreement keeps its last value).",
            ["judge", "outcome"], registry=r)
        self.judge_human_agreement, self.judge_human_agreement_lower, \
            self.judge_human_agreement_upper = _agreement(
                r, "assistant_judge_human_agreement", "human agreement", "Share of a judge's "
                "stored verdicts that people who corrected them on the turn pages found right "
                "(each person's last word)")
        self.judge_model_changes = Counter(
            "assistant_judge_model_changes", "Times an LLM judge endpoint reported a model other "
            "than the one it reported before: the judge itself changed.", ["judge"], registry=r)
        self.cascade_decisions = Counter(
            "assistant_judge_cascade_decisions", "With judging.cascade: each document, answer and "
            "claim (part) by who decided it (decided_by: local, outside its uncertainty band; "
            "llm, inside it).", ["judge", "part", "decided_by"], registry=r)
        self.llm_call_latency = Histogram(
            "assistant_judge_llm_call_seconds", "Latency of one LLM judge call.", ["judge"],
            buckets=LATENCY_BUCKETS, registry=r)
