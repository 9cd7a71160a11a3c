"""What `assistant-monitor run` shows while it runs.

    status = StatusReporter(sidecar.metrics.registry, settings, pointers(settings, config_path),
                            cache=judge_cache(sidecar.judging.judges))
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
import shlex
import shutil
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from monitor.config import Settings
from monitor.contract import FAMILY, QUALITIES

log = logging.getLogger("monitor.status")

# The drift stream (a quality) each verdict metric feeds; tool_failure_rate has no verdict.
_STREAM = {q.verdict: q.name for q in QUALITIES if q.verdict}
_WEIGHTED = FAMILY["assistant_weighted_turns"].total
_SQ_WEIGHTED = FAMILY["assistant_sq_weighted_turns"].total

Stream = tuple[str, str, str]  # (quality, service, route): what drift scores
CacheStats = Callable[[], tuple[int, int]]


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
    # judged turns per drift stream (Kish's effective count where sampling weights differ:
    # what drift counts), and the streams scored already
    streams: dict[Stream, float] = field(default_factory=dict)
    scored: frozenset[Stream] = frozenset()
    at: float = 0.0

    @classmethod
    def read(cls, registry: CollectorRegistry) -> Figures:
        sums: dict[str, float] = {}
        dropped: dict[str, float] = {}
        judged: dict[str, float] = {}
        weights: dict[tuple[str, Stream, str], float] = {}  # (family, stream, judge)
        scored: set[Stream] = set()
        errors: float
        errors = drift_alerts = 0
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
                    scored.add((s.labels["metric"], s.labels["service"], s.labels["route"]))
                elif s.name == "assistant_drift_alert":
                    drift_alerts += s.value >= 1
                elif s.name in (_WEIGHTED, _SQ_WEIGHTED) and s.labels["metric"] in _STREAM:
                    stream = (_STREAM[s.labels["metric"]], s.labels["service"], s.labels["route"])
                    weights[(s.name, stream, s.labels["judge"])] = s.value
        streams: dict[Stream, float] = {}  # the judge that judged most of it
        for (name, stream, judge), total in weights.items():
            squares = weights.get((_SQ_WEIGHTED, stream, judge))
            if name == _WEIGHTED and squares:
                streams[stream] = max(streams.get(stream, 0.0), total * total / squares)
        return cls(received=sums.get("assistant_turns_received_total", 0.0),
                   sampled=sums.get("assistant_turns_sampled_total", 0.0),
                   judged=max(judged.values(), default=0.0),
                   backlog=sums.get("assistant_judge_backlog", 0.0),
                   judge_seconds=sums.get("assistant_judge_latency_seconds_sum", 0.0),
                   judge_runs=sums.get("assistant_judge_latency_seconds_count", 0.0),
                   judge_errors=errors, dropped={k: v for k, v in dropped.items() if v},
                   drift_streams=len(scored), drift_alerts=drift_alerts, streams=streams,
                   scored=frozenset(scored), at=time.monotonic())

    @property
    def latency(self) -> str:
        return f"{self.judge_seconds / self.judge_runs:.2f} s" if self.judge_runs else "-"

    @property
    def drops(self) -> str:
        return ", ".join(f"{k} {v:.0f}" for k, v in sorted(self.dropped.items())) or "none"


def command() -> str:
    """How to run this program from another shell: `assistant-monitor` where that name on the
    PATH is this program, else its absolute path (a venv not activated), or `python -m monitor`."""
    argv0 = sys.argv[0]
    if Path(argv0).name == "__main__.py":  # python -m monitor: this interpreter (a venv's)
        return f"{shlex.quote(sys.executable)} -m monitor"
    this = Path(shutil.which(argv0) or argv0).resolve()
    on_path = shutil.which("assistant-monitor")
    if on_path is not None and Path(on_path).resolve() == this:
        return "assistant-monitor"
    return shlex.quote(str(this))


def pointers(settings: Settings, config: str | None) -> list[tuple[str, str]]:
    """Where to look next, as (what, where) pairs: commands to paste into another shell."""
    admin = f"http://{settings.admin.endpoint}"
    program = command()
    with_config = f" --config {shlex.quote(str(Path(config).resolve()))}" if config else ""
    return [("last turns", f"{program} turns --admin {admin}"),
            ("verdicts", f"{program} verdicts list{with_config}"),
            ("one verdict", f"{program} verdicts show TRACE_ID{with_config}"),
            ("worst turns", f"{settings.admin.public_url or admin}/ui/turns"),
            ("metrics", f"{admin}/metrics"),
            ("store", store_location(settings))]


def store_location(settings: Settings) -> str:
    """The store's file, or its PostgreSQL URL with the password masked."""
    from monitor.store import shown_url

    url = settings.store.url
    return shown_url(url.get_secret_value()) if url else str(settings.store.path.resolve())


def judge_cache(judges: list[Any]) -> CacheStats | None:
    """The judges' cache counts summed, where judges keep them (the local judge's worker)."""
    counted = [j.cache_stats for j in judges if callable(getattr(j, "cache_stats", None))]
    if not counted:
        return None

    def stats() -> tuple[int, int]:
        pairs = [c() for c in counted]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    return stats


MAX_DRIFT_ROUTES = 6  # routes listed under the drift line; the rest are counted


def drift_notes(settings: Settings, figures: Figures) -> list[str]:
    """The drift line, then per service/route how far each stream not scored yet has come."""
    if not settings.drift.enabled:
        return ["off (drift.enabled: false)"]
    needed = settings.drift.recent_size + settings.drift.min_samples
    streams = set(figures.streams) | figures.scored
    waiting = {k: v for k, v in figures.streams.items() if k not in figures.scored}
    if figures.scored:
        head = (f"{len(figures.scored)} of {len(streams)} streams scored, "
                f"{figures.drift_alerts} alerting")
    else:
        head = f"scores appear after {needed} judged turns per stream (metric × service × route)"
    if not streams:
        return [head + "; none judged yet"]
    if not waiting:
        return [head]
    routes: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for (quality, service, route), count in waiting.items():
        routes.setdefault((service, route), []).append((quality, count))
    ordered = sorted(routes.items(), key=lambda item: -max(n for _, n in item[1]))
    lines = [head + f"; judged so far, of {needed}:"]
    for (service, route), counts in ordered[:MAX_DRIFT_ROUTES]:
        lines.append(f"  {service}/{route}: " + ", ".join(
            f"{quality} {count:.0f}" for quality, count in sorted(counts, key=lambda c: -c[1])))
    if len(ordered) > MAX_DRIFT_ROUTES:
        lines.append(f"  and {len(ordered) - MAX_DRIFT_ROUTES} more routes")
    return lines


def cache_note(stats: tuple[int, int] | None) -> str:
    """The judge cache's hit rate: a latency near 0 is the cache answering repeated texts."""
    if stats is None or not stats[1]:
        return ""
    return f", {stats[0] / stats[1]:.0%} of embeddings from the cache"


def _uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


class StatusReporter:
    def __init__(self, registry: CollectorRegistry, settings: Settings,
                 where: list[tuple[str, str]], interactive: bool | None = None,
                 interval_s: float | None = None, console: Console | None = None,
                 cache: CacheStats | None = None) -> None:
        self.registry = registry
        self.settings = settings
        self.where = where
        self.cache = cache
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

    def latency(self, f: Figures) -> str:
        return f"{f.latency} (mean{cache_note(self.cache() if self.cache else None)})"

    def line(self, f: Figures) -> str:
        return (f"turns received {f.received:.0f}, sampled {f.sampled:.0f}, judged "
                f"{f.judged:.0f}, backlog {f.backlog:.0f}; judge latency {self.latency(f)}, "
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
        grid.add_row("judge", f"latency {self.latency(f)}   errors {f.judge_errors:.0f}")
        grid.add_row("dropped", f.drops)
        for i, note in enumerate(drift_notes(self.settings, f)):
            grid.add_row("drift" if i == 0 else "", note)
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
                f"judged{left}; judge latency {self.latency(f)}; dropped: {f.drops}.\n"
                f"Verdicts: {dict(self.where).get('verdicts', command() + ' verdicts list')}"
                f" (store {store_location(self.settings)})")
