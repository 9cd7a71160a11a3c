"""What `assistant-monitor run` shows while it runs.

    status = StatusReporter(sidecar.metrics.registry, pointers(settings, config_path))
    status.start()          # a live panel on a terminal, else a log line every 30 s
    ...
    await status.stop()
    print(status.summary()) # after the sidecar stopped: the figures of the whole run

Both read the sidecar's own Prometheus registry, so they show exactly what /metrics shows, and
neither ever shows trace content.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from monitor.config import Settings

log = logging.getLogger("monitor.status")


@dataclass(frozen=True)
class Figures:
    """Totals since start, summed over every label but the ones kept apart (drop reasons)."""

    received: float = 0.0
    sampled: float = 0.0
    judged: float = 0.0
    backlog: float = 0.0
    judge_seconds: float = 0.0
    judge_runs: float = 0.0
    judge_errors: float = 0.0
    dropped: dict[str, float] = field(default_factory=dict)
    drift_streams: int = 0
    drift_alerts: int = 0
    at: float = 0.0

    @classmethod
    def read(cls, registry: CollectorRegistry) -> Figures:
        sums: dict[str, float] = {}
        dropped: dict[str, float] = {}
        judged: dict[str, float] = {}
        errors = drift_streams = drift_alerts = 0
        for family in registry.collect():
            for s in family.samples:
                sums[s.name] = sums.get(s.name, 0.0) + s.value
                if s.name == "assistant_turns_dropped_total":
                    dropped[s.labels["reason"]] = dropped.get(s.labels["reason"], 0.0) + s.value
                elif s.name == "assistant_judge_requests_total" and s.labels["outcome"] != "ok":
                    errors += s.value
                elif s.name == "assistant_turns_judged_total":  # per judge: a turn counts once
                    judged[s.labels["judge"]] = judged.get(s.labels["judge"], 0.0) + s.value
                elif s.name == "assistant_drift_score":
                    drift_streams += 1
                elif s.name == "assistant_drift_alert":
                    drift_alerts += s.value >= 1
        return cls(received=sums.get("assistant_turns_received_total", 0.0),
                   sampled=sums.get("assistant_turns_sampled_total", 0.0),
                   judged=max(judged.values(), default=0.0),
                   backlog=sums.get("assistant_judge_backlog", 0.0),
                   judge_seconds=sums.get("assistant_judge_latency_seconds_sum", 0.0),
                   judge_runs=sums.get("assistant_judge_latency_seconds_count", 0.0),
                   judge_errors=errors, dropped={k: v for k, v in dropped.items() if v},
                   drift_streams=drift_streams, drift_alerts=drift_alerts, at=time.monotonic())

    @property
    def latency(self) -> str:
        return f"{self.judge_seconds / self.judge_runs:.2f} s" if self.judge_runs else "-"

    @property
    def drops(self) -> str:
        return ", ".join(f"{k} {v:.0f}" for k, v in sorted(self.dropped.items())) or "none"


def pointers(settings: Settings, config: str | None) -> list[tuple[str, str]]:
    """Where to look next, as (what, where) pairs."""
    admin = f"http://{settings.admin.endpoint}"
    with_config = f" --config {config}" if config else ""
    return [("last turns", f"assistant-monitor turns --admin {admin}"),
            ("verdicts", f"assistant-monitor verdicts list{with_config}"),
            ("one verdict", f"assistant-monitor verdicts show TRACE_ID{with_config}"),
            ("metrics", f"{admin}/metrics"),
            ("store", str(settings.store.path.resolve()))]


def drift_note(settings: Settings, figures: Figures) -> str:
    if not settings.drift.enabled:
        return "off (drift.enabled: false)"
    if figures.drift_streams:
        return f"{figures.drift_streams} streams scored, {figures.drift_alerts} alerting"
    needed = settings.drift.recent_size + settings.drift.min_samples
    return (f"scores appear after {needed} judged turns per stream (metric × service × route); "
            f"{figures.judged:.0f} judged so far")


def _uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


class StatusReporter:
    def __init__(self, registry: CollectorRegistry, settings: Settings,
                 where: list[tuple[str, str]], interactive: bool | None = None,
                 interval_s: float | None = None, console: Console | None = None) -> None:
        self.registry = registry
        self.settings = settings
        self.where = where
        self.interactive = sys.stdout.isatty() if interactive is None else interactive
        self.interval_s = interval_s or (1.0 if self.interactive else 30.0)
        self.console = console or Console()
        self.started = time.monotonic()
        self.history: deque[Figures] = deque(maxlen=11)  # for the rate over the last ~10 s
        self._task: asyncio.Task[None] | None = None
        self._live: Live | None = None
        self._handlers: list[tuple[logging.StreamHandler[Any], Any]] = []

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self.interactive:
            stderr_here = sys.stderr.isatty()  # `2>file` keeps its logs in the file
            self._live = Live(self.render(Figures.read(self.registry)), console=self.console,
                              auto_refresh=False, redirect_stdout=True,
                              redirect_stderr=stderr_here, transient=False)
            self._live.start()
            if stderr_here:
                self._route_logs_above_the_panel()
        else:
            for what, where in self.where:
                log.info("look next: %s: %s", what, where)
        self._task = asyncio.create_task(self._loop(), name="status")

    async def stop(self) -> None:
        """Stop updating (idempotent); the terminal keeps the last panel drawn."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._live is not None:
            self._live.update(self.render(Figures.read(self.registry)), refresh=True)
            self._live.stop()
            self._live = None
            for handler, stream in self._handlers:
                handler.setStream(stream)
            self._handlers = []

    def _route_logs_above_the_panel(self) -> None:
        # Live replaced sys.stderr with a proxy that prints above the panel; log handlers
        # created earlier still hold the real stream and would scribble over it.
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and \
                    getattr(handler, "stream", None) in (sys.__stderr__, sys.__stdout__):
                self._handlers.append((handler, handler.setStream(sys.stderr)))

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            figures = Figures.read(self.registry)
            self.history.append(figures)
            if self._live is not None:
                self._live.update(self.render(figures), refresh=True)
            else:
                log.info("status: %s", self.line(figures))

    # -- what is shown ---------------------------------------------------------------------

    def rate(self, figures: Figures) -> str:
        if not self.history or figures.at - self.history[0].at < 1e-3:
            return ""
        first = self.history[0]
        return f" ({(figures.received - first.received) / (figures.at - first.at):.1f}/s)"

    def line(self, f: Figures) -> str:
        return (f"turns received {f.received:.0f}, sampled {f.sampled:.0f}, judged "
                f"{f.judged:.0f}, backlog {f.backlog:.0f}; judge latency {f.latency} (mean), "
                f"errors {f.judge_errors:.0f}; dropped: {f.drops}")

    def render(self, f: Figures) -> Group:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold cyan", no_wrap=True)
        grid.add_column()
        grid.add_row("turns", Text.assemble(
            "received ", (f"{f.received:.0f}", "bold"), self.rate(f),
            "   sampled ", (f"{f.sampled:.0f}", "bold"),
            "   judged ", (f"{f.judged:.0f}", "bold green"),
            "   backlog ", (f"{f.backlog:.0f}", "bold yellow" if f.backlog else "bold")))
        grid.add_row("judge", f"latency {f.latency} (mean)   errors {f.judge_errors:.0f}")
        grid.add_row("dropped", f.drops)
        grid.add_row("drift", drift_note(self.settings, f))
        for i, (what, where) in enumerate(self.where):
            grid.add_row("look next" if i == 0 else "", Text.assemble((where, "magenta"),
                                                                     f"  ({what})"))
        title = Text.assemble(("assistant-monitor", "bold"),
                              f" · up {_uptime(time.monotonic() - self.started)}")
        return Group(title, grid, Text("Ctrl-C stops: turns being assembled are finished "
                                       "first; the backlog is judged on the next start", "dim"))

    def summary(self) -> str:
        f = Figures.read(self.registry)
        left = f" ({f.backlog:.0f} waiting in the store for the next start)" if f.backlog else ""
        return (f"assistant-monitor ran {_uptime(time.monotonic() - self.started)}: "
                f"{f.received:.0f} turns received, {f.sampled:.0f} sampled, {f.judged:.0f} "
                f"judged{left}; judge latency {f.latency} (mean); dropped: {f.drops}.\n"
                f"Verdicts: {dict(self.where).get('verdicts', 'assistant-monitor verdicts list')}"
                f" (store {self.settings.store.path.resolve()})")
