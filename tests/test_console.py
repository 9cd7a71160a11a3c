"""The run status: figures read from the sidecar's own registry, a panel on a terminal, plain
log lines elsewhere, and a summary."""

from __future__ import annotations

import asyncio
import io
import logging
import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from rich.console import Console

from monitor.config import Settings
from monitor.console import Figures, StatusReporter, pointers
from monitor.telemetry import Metrics


def traffic(metrics: Metrics) -> None:
    """Three turns in, two sampled, one dropped, two judged by each of two judges."""
    metrics.turns_received.labels("bot", "billing").inc(2)
    metrics.turns_received.labels("bot", "support").inc()
    metrics.turns_sampled.labels("rate").inc(2)
    metrics.turns_dropped.labels("not_sampled").inc()
    for judge in ("local", "tool-match"):
        metrics.turns_judged.labels("bot", "billing", judge).inc(2)
    metrics.judge_latency.labels("local").observe(0.1)
    metrics.judge_latency.labels("local").observe(0.3)
    metrics.judge_requests.labels("local", "error").inc()
    metrics.judge_backlog.set(1)


def test_figures_count_each_turn_once() -> None:
    metrics = Metrics(CollectorRegistry())
    traffic(metrics)
    f = Figures.read(metrics.registry)
    assert (f.received, f.sampled, f.judged, f.backlog, f.judge_errors) == (3, 2, 2, 1, 1)
    assert f.latency == "0.20 s"
    assert f.drops == "not_sampled 1"


def test_the_panel_shows_figures_drift_readiness_and_where_to_look(tmp_path: Path) -> None:
    metrics = Metrics(CollectorRegistry())
    traffic(metrics)
    settings = Settings(store={"path": tmp_path / "store.db"}, admin={"endpoint": "127.0.0.1:9999"})
    out = Console(file=io.StringIO(), width=160, record=True)
    status = StatusReporter(metrics.registry, settings, pointers(settings, "monitor.yaml"),
                            interactive=True, console=out)
    out.print(status.render(Figures.read(metrics.registry)))
    screen = out.export_text()
    assert "received 3" in screen and "sampled 2" in screen and "judged 2" in screen
    assert "backlog 1" in screen and "latency 0.20 s" in screen and "not_sampled 1" in screen
    assert "scores appear after 130 judged turns per stream" in screen
    assert "http://127.0.0.1:9999/metrics" in screen
    assert "assistant-monitor verdicts list --config monitor.yaml" in screen
    assert str((tmp_path / "store.db").resolve()) in screen

    metrics.drift_score.labels("groundedness", "bot", "billing").set(3.5)
    metrics.drift_alert.labels("groundedness", "bot", "billing").set(1)
    out.print(status.render(Figures.read(metrics.registry)))
    assert "1 streams scored, 1 alerting" in out.export_text()


async def test_plain_log_lines_when_not_a_terminal(caplog: pytest.LogCaptureFixture,
                                                   tmp_path: Path) -> None:
    caplog.set_level(logging.INFO, logger="monitor.status")
    metrics = Metrics(CollectorRegistry())
    settings = Settings(store={"path": tmp_path / "store.db"})
    status = StatusReporter(metrics.registry, settings, pointers(settings, None),
                            interactive=False, interval_s=0.02)
    status.start()
    assert any(r.getMessage().startswith("look next: verdicts: assistant-monitor verdicts list")
               for r in caplog.records)
    traffic(metrics)
    deadline = time.monotonic() + 10
    while not any("judged 2" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, caplog.text
        await asyncio.sleep(0.02)
    await status.stop()
    line = next(r.getMessage() for r in caplog.records if "judged 2" in r.getMessage())
    assert line == ("status: turns received 3, sampled 2, judged 2, backlog 1; judge latency "
                    "0.20 s (mean), errors 1; dropped: not_sampled 1")
    summary = status.summary()
    assert "3 turns received, 2 sampled, 2 judged (1 waiting in the store" in summary
    assert "assistant-monitor verdicts list" in summary
