"""The sampling stage: decide, and persist what is kept before anything else happens to it."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from monitor.config import SamplingSettings
from monitor.model import Sampled
from monitor.sample.sampler import Sampler
from monitor.sample.telemetry import SamplingTelemetry

_BUDGET_REFRESH_S = 5.0


class TurnQueue(Protocol):
    """Where sampled turns wait for a judge: this node's store (`ThreadedStore`), or the judge
    queue's topic (`SampledTurnPublisher`). `enqueue_many` returns once the turns are durable
    there (for each, False: this trace id is already queued); `backlog` is what waits for a judge
    here."""

    async def enqueue_many(self, sampled: Sequence[Sampled]) -> list[bool]: ...

    def backlog(self) -> int: ...

    async def tokens_since(self, since: float) -> int: ...


class SamplingStage:
    """A `SampledConsumer`: the turns the sampler kept go into the judge queue, within its
    bounds (`max_backlog`, the daily token budget); `on_enqueued` wakes judges."""

    def __init__(self, settings: SamplingSettings, store: TurnQueue, metrics: SamplingTelemetry,
                 on_enqueued: Callable[[], None], daily_token_budget: int | None = None) -> None:
        self.settings = settings
        self.sampler = Sampler(settings).compiled  # the assembler decides with it
        self.store = store
        self.metrics = metrics
        self.on_enqueued = on_enqueued
        self.daily_token_budget = daily_token_budget
        self._budget_checked_at = 0.0
        self._budget_exhausted = False

    async def _over_budget(self) -> bool:
        if self.daily_token_budget is None:
            return False
        now = time.monotonic()
        if now - self._budget_checked_at > _BUDGET_REFRESH_S:
            midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
            spent = await self.store.tokens_since(midnight.timestamp())
            self._budget_exhausted = spent >= self.daily_token_budget
            self._budget_checked_at = now
        return self._budget_exhausted

    def backlog(self) -> int:
        return self.store.backlog()

    async def consume(self, sampled: Sequence[Sampled], not_sampled: int) -> None:
        backlog = self.store.backlog()
        kept = list(sampled[:max(0, self.settings.max_backlog - backlog)])
        for reason, count in (("not_sampled", not_sampled),
                              ("backlog_full", len(sampled) - len(kept))):
            if count:
                self.metrics.turns_dropped.labels(reason).inc(count)
        self.metrics.sampling_factor.set(self.sampler.backlog_factor(backlog + len(kept)))
        if not kept:
            return
        if await self._over_budget():
            self.metrics.turns_dropped.labels("token_budget").inc(len(kept))
            return
        added = await self.store.enqueue_many(kept)
        # Tallied first: a labels() lookup costs more than the increment, per kept turn.
        stored = Counter(reason for (_, reason, _), new in zip(kept, added, strict=True) if new)
        for reason, count in stored.items():
            self.metrics.turns_sampled.labels(reason).inc(count)
        if duplicates := len(kept) - stored.total():  # already stored: judged once
            self.metrics.turns_dropped.labels("duplicate").inc(duplicates)
        self.metrics.judge_backlog.set(self.store.backlog())
        if any(added):
            self.on_enqueued()
