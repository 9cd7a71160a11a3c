"""The run status: figures read from the sidecar's own registry, a panel on a terminal, plain
log lines elsewhere, and a summary."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import sys
import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from rich.console import Console

from monitor.config import Settings
from monitor.console import Figures, StatusReporter, command, judge_cache, pointers
from monitor.telemetry import Metrics

pytestmark = pytest.mark.unit


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
    out = Console(file=io.StringIO(), width=200, record=True)
    status = StatusReporter(metrics.registry, settings, pointers(settings, "monitor.yaml"),
                            interactive=True, console=out, cache=lambda: (97, 100))
    out.print(status.render(Figures.read(metrics.registry)))
    screen = out.export_text()
    assert "received 3" in screen and "sampled 2" in screen and "judged 2" in screen
    assert "backlog 1" in screen and "not_sampled 1" in screen
    assert "latency 0.20 s (mean, 97% of embeddings from the cache)" in screen
    assert "scores appear after 130 judged turns per stream" in screen
    assert "http://127.0.0.1:9999/metrics" in screen
    # a command to paste into another shell, with the configuration's absolute path
    assert f"{command()} verdicts list --config {Path('monitor.yaml').resolve()}" in screen
    assert str((tmp_path / "store.db").resolve()) in screen


def judged(metrics: Metrics, stream: tuple[str, str, str], turns: int, p: float = 1.0) -> None:
    """`turns` judged turns with a verdict on `metric`, each kept with probability p."""
    metric, service, route = stream
    for _ in range(turns):
        metrics.weighted_turns.labels(service, route, "local", metric).inc(1 / p)
        metrics.sq_weighted_turns.labels(service, route, "local", metric).inc(1 / p / p)


def test_the_drift_line_says_how_far_each_stream_is(tmp_path: Path) -> None:
    metrics = Metrics(CollectorRegistry())
    settings = Settings(store={"path": tmp_path / "store.db"})
    status = StatusReporter(metrics.registry, settings, [], interactive=True)
    out = Console(file=io.StringIO(), width=200, record=True)

    def screen() -> str:
        out.print(status.render(Figures.read(metrics.registry)))
        return out.export_text()

    assert "130 judged turns per stream (metric × service × route); none judged yet" in screen()
    judged(metrics, ("completeness", "bot", "billing"), 40)
    judged(metrics, ("groundedness", "bot", "billing"), 25)
    judged(metrics, ("completeness", "bot", "support"), 10, p=0.5)  # 10 turns, weighing 20
    text = screen()
    assert "judged so far, of 130:" in text
    assert "bot/billing: no_answer_rate 40, groundedness 25" in text
    assert "bot/support: no_answer_rate 10" in text
    assert text.index("bot/billing") < text.index("bot/support")  # the closest first

    judged(metrics, ("completeness", "bot", "billing"), 90)
    metrics.drift_score.labels("no_answer_rate", "bot", "billing").set(3.5)
    metrics.drift_alert.labels("no_answer_rate", "bot", "billing").set(1)
    text = screen().split("scores appear")[-1]  # the latest panel
    assert "1 of 3 streams scored, 1 alerting; judged so far, of 130:" in text
    assert "bot/billing: groundedness 25" in text and "no_answer_rate 130" not in text


def test_command_is_one_a_person_can_paste(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    monkeypatch.setattr(sys, "argv", [str(Path("monitor/__main__.py").resolve())])
    assert command() == f"{sys.executable} -m monitor"
    program = tmp_path / "venv bin" / "assistant-monitor"  # a path that needs quoting
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(program)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert command() == f"'{program}'"  # not on the PATH: its absolute path
    monkeypatch.chdir(program.parent)
    monkeypatch.setattr(sys, "argv", ["./assistant-monitor"])
    assert command() == f"'{program}'"  # typed relative: absolute all the same
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}/usr/bin")
    assert command() == "assistant-monitor"  # this very program is on the PATH


async def test_the_judge_cache_hit_rate_comes_from_the_worker() -> None:
    from monitor.config import LocalJudgeSettings
    from monitor.judges.worker import ProcessJudge
    from tests.test_judge_worker import TURN

    judge = ProcessJudge(LocalJudgeSettings())
    stats = judge_cache([judge, object()])  # judges that keep no count are left out
    assert stats is not None and stats() == (0, 0)
    try:
        await judge.judge(TURN)
        hits, lookups = stats()
        assert lookups > 0 and hits < lookups
        await judge.judge(TURN)  # the same texts: every embedding from the cache
        assert stats() == (hits + lookups, 2 * lookups)
    finally:
        await judge.aclose()
    assert judge_cache([object()]) is None


async def test_plain_log_lines_when_not_a_terminal(caplog: pytest.LogCaptureFixture,
                                                   tmp_path: Path) -> None:
    caplog.set_level(logging.INFO, logger="monitor.status")
    metrics = Metrics(CollectorRegistry())
    settings = Settings(store={"path": tmp_path / "store.db"})
    status = StatusReporter(metrics.registry, settings, pointers(settings, None),
                            interactive=False, interval_s=0.02)
    status.start()
    assert any(r.getMessage().startswith(f"look next: verdicts: {command()} verdicts list")
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
    assert f"{command()} verdicts list" in summary
