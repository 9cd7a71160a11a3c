"""The sampling stage's own instruments, on an injected registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge


class SamplingTelemetry:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
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

