"""The sampling decision for one turn."""

from __future__ import annotations

from dataclasses import dataclass

from monitor.config import SamplingSettings
from monitor.model import AssistantTurn
from monitor.sample.rules import ALWAYS_KEEP

_LOW_64_BITS = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class Decision:
    keep: bool
    reason: str  # an always-keep rule, "rate", or why it was not kept
    probability: float  # inclusion probability of a kept turn (1.0 for always-keep rules)


def trace_id_ratio_keep(trace_id_hex: str, rate: float) -> bool:
    """OpenTelemetry's TraceIdRatioBased: keep when the low 64 bits < round(rate * 2^64)."""
    return int(trace_id_hex[-16:], 16) & _LOW_64_BITS < round(rate * (1 << 64))


class Sampler:
    def __init__(self, settings: SamplingSettings) -> None:
        self.settings = settings
        self.rules = [(name, ALWAYS_KEEP[name]) for name in settings.always_keep]

    def rate_for(self, turn: AssistantTurn) -> float:
        s = self.settings
        if turn.route is not None and f"{turn.service}/{turn.route}" in s.route_rates:
            return s.route_rates[f"{turn.service}/{turn.route}"]
        return s.service_rates.get(turn.service, s.default_rate)

    def backlog_factor(self, backlog: int) -> float:
        """1 below the low watermark, falling linearly to `min_factor` at the high watermark."""
        s = self.settings.adaptive
        if backlog <= s.low_watermark:
            return 1.0
        if backlog >= s.high_watermark:
            return s.min_factor
        span = s.high_watermark - s.low_watermark
        return max(s.min_factor, 1.0 - (backlog - s.low_watermark) / span * (1.0 - s.min_factor))

    def decide(self, turn: AssistantTurn, backlog: int = 0) -> Decision:
        for name, rule in self.rules:
            if rule(turn):
                return Decision(True, name, 1.0)
        rate = self.rate_for(turn) * self.backlog_factor(backlog)
        if rate > 0 and trace_id_ratio_keep(turn.trace_id, rate):
            return Decision(True, "rate", rate)
        return Decision(False, "not_sampled", rate)
