"""The command line as an operator uses it: `run --demo` (piped and on a terminal), `turns`,
SIGTERM, `--help`."""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
import urllib.request
from pathlib import Path

import pytest

from monitor.cli import build_parser
from monitor.demo import CHATS, SCENARIOS

pytestmark = pytest.mark.integration

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# What the demo's turns say: none of it may reach the logs.
DEMO_TEXTS = [text for s in [*SCENARIOS, *(turn for chat in CHATS for turn in chat)]
              for text in (s.question, s.answer) if text]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def demo_config(tmp_path: Path) -> tuple[Path, int]:
    grpc_port, http_port, admin_port = free_port(), free_port(), free_port()
    config = tmp_path / "monitor.yaml"
    config.write_text(
        f"receivers:\n  grpc: {{endpoint: '127.0.0.1:{grpc_port}'}}\n"
        f"  http: {{endpoint: '127.0.0.1:{http_port}'}}\n"
        f"admin: {{endpoint: '127.0.0.1:{admin_port}'}}\n"
        "assembly: {root_grace_s: 0.2}\n"
        f"store: {{path: '{tmp_path / 'store.db'}'}}\n")
    return config, admin_port


def test_run_demo_shows_turns_and_metrics_then_stops_cleanly(tmp_path: Path) -> None:
    config, admin_port = demo_config(tmp_path)
    admin = f"http://127.0.0.1:{admin_port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "monitor", "run", "--demo", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        metrics = ""
        while time.monotonic() < deadline:
            try:
                metrics = scrape(f"{admin}/metrics")
                if "assistant_turns_received_total{" in metrics:
                    break
            except OSError:
                pass
            time.sleep(0.3)
        assert "assistant_turns_received_total{" in metrics, metrics
        assert 'service="demo-assistant"' in metrics
        assert scrape(f"{admin}/readyz") == '{"ready": true}'

        shown = subprocess.run([sys.executable, "-m", "monitor", "turns", "--admin", admin],
                               capture_output=True, text=True, timeout=30)
        assert shown.returncode == 0, shown.stderr
        assert any(s.question[:30] in shown.stdout for s in SCENARIOS), shown.stdout
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "stopping" in output
    # Not a terminal: plain log lines, pointers once, and the summary of the run at the end.
    assert f"look next: metrics: http://127.0.0.1:{admin_port}/metrics" in output
    assert re.search(r"assistant-monitor ran \d+:\d\d:\d\d: \d+ turns received", output), output
    assert "\x1b[" not in output
    # Turn content stays out of the logs.
    assert not any(text in output for text in DEMO_TEXTS)


def read_terminal(fd: int, until: float, done: object = None) -> str:
    """What the program wrote to its terminal before `until`, or until `done(text)` is true."""
    chunks = []
    while time.monotonic() < until:
        ready, _, _ = select.select([fd], [], [], max(0.0, until - time.monotonic()))
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the program closed its terminal
            break
        if not data:
            break
        chunks.append(data.decode(errors="replace"))
        if callable(done) and done("".join(chunks)):
            break
    return "".join(chunks)


def test_run_demo_on_a_terminal_shows_a_live_status(tmp_path: Path) -> None:
    config, admin_port = demo_config(tmp_path)
    # The judge at the sidecar's own priority: at the default (idle) it gets no CPU while other
    # processes keep the cores busy, and this test watches the panel (the priority's own test is
    # in test_judge_worker.py).
    config.write_text(config.read_text() + "judging: {priority: normal}\n")
    master, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "monitor", "run", "--demo", "--config", str(config)],
        stdin=child, stdout=child, stderr=child, env={**os.environ, "TERM": "xterm-256color"})
    os.close(child)

    def judged(text: str) -> list[int]:
        return [int(n) for n in re.findall(r"judged (\d+)", ANSI.sub("", text))]

    try:
        # The panel is redrawn every second: the judged count climbs while we watch.
        seen = read_terminal(master, time.monotonic() + 120,
                             lambda text: len(set(judged(text))) >= 3 and max(judged(text)) >= 3)
        counts = judged(seen)
        assert len(set(counts)) >= 3 and counts == sorted(counts), ANSI.sub("", seen)[-3000:]
        screen = ANSI.sub("", seen)
        assert re.search(r"received \d+", screen) and "backlog" in screen
        assert "latency" in screen and "dropped" in screen
        assert f"http://127.0.0.1:{admin_port}/metrics" in screen
        # commands to paste: `assistant-monitor` is not on the PATH here, this interpreter is
        assert f"{sys.executable} -m monitor verdicts list --config {config}" in screen
        assert f"{sys.executable} -m monitor turns --admin http://127.0.0.1:{admin_port}" in screen
        assert "scores appear after 130 judged turns per stream" in screen
        assert "of embeddings from the cache" in screen  # beside the judge's latency
    finally:
        process.send_signal(signal.SIGINT)
        rest = read_terminal(master, time.monotonic() + 60)
        process.wait(timeout=30)
        os.close(master)
    assert process.returncode == 0, ANSI.sub("", rest)
    final = ANSI.sub("", rest)
    assert re.search(r"assistant-monitor ran \d+:\d\d:\d\d: \d+ turns received", final), final
    assert str((tmp_path / "store.db").resolve()) in " ".join(final.split())
    assert not any(text in seen + rest for text in DEMO_TEXTS)


def test_help_lists_every_command_and_explains_every_option() -> None:
    top = subprocess.run([sys.executable, "-m", "monitor", "--help"], capture_output=True,
                         text=True, timeout=60)
    assert top.returncode == 0
    parser = build_parser()
    undocumented = []

    def walk(p: argparse.ArgumentParser, name: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for command, child in action.choices.items():
                    walk(child, f"{name} {command}")
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                undocumented.append(f"{name} {action.dest}")

    walk(parser, "assistant-monitor")
    assert not undocumented
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command in commands.choices:
        assert f"assistant-monitor {command}" in top.stdout  # the usage block
        assert re.search(rf"^    {command}\b", top.stdout, re.M), command  # the command list


def test_turns_reports_an_unreachable_sidecar() -> None:
    done = subprocess.run([sys.executable, "-m", "monitor", "turns", "--admin",
                           f"http://127.0.0.1:{free_port()}"], capture_output=True, text=True)
    assert done.returncode == 1 and "cannot reach" in done.stderr
