"""The sampling decision for one turn."""

from __future__ import annotations

from dataclasses import dataclass

from monitor import _native
from monitor.config import SamplingSettings
from monitor.model import AssistantTurn


@dataclass(frozen=True, slots=True)
class Decision:
    keep: bool
    reason: str  # an always-keep rule, "rate", or why it was not kept
    probability: float  # inclusion probability of a kept turn (1.0 for always-keep rules)


class Sampler:
    def __init__(self, settings: SamplingSettings) -> None:
        self.settings = settings
        adaptive = settings.adaptive
        self.compiled = _native.TurnSampler(
            always_keep=list(settings.always_keep), default_rate=settings.default_rate,
            service_rates=settings.service_rates, route_rates=settings.route_rates,
            low_watermark=adaptive.low_watermark, high_watermark=adaptive.high_watermark,
            min_factor=adaptive.min_factor, whole_conversations=settings.whole_conversations)

    def backlog_factor(self, backlog: int) -> float:
        """1 below the low watermark, falling linearly to `min_factor` at the high watermark."""
        factor: float = self.compiled.backlog_factor(backlog)
        return factor

    def decide(self, turn: AssistantTurn, backlog: int = 0) -> Decision:
        return Decision(*self.compiled.decide(turn, backlog))
