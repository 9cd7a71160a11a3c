"""The command line as an operator uses it: `run --demo`, `turns`, SIGTERM."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from monitor.demo import SCENARIOS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def test_run_demo_shows_turns_and_metrics_then_stops_cleanly(tmp_path: Path) -> None:
    grpc_port, http_port, admin_port = free_port(), free_port(), free_port()
    config = tmp_path / "monitor.yaml"
    config.write_text(
        f"receivers:\n  grpc: {{endpoint: '127.0.0.1:{grpc_port}'}}\n"
        f"  http: {{endpoint: '127.0.0.1:{http_port}'}}\n"
        f"admin: {{endpoint: '127.0.0.1:{admin_port}'}}\n"
        "assembly: {root_grace_s: 0.2}\n"
        f"store: {{path: '{tmp_path / 'store.db'}'}}\n")
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
    # Turn content stays out of the logs.
    assert not any(s.question in output or s.answer in output for s in SCENARIOS)


def test_turns_reports_an_unreachable_sidecar() -> None:
    done = subprocess.run([sys.executable, "-m", "monitor", "turns", "--admin",
                           f"http://127.0.0.1:{free_port()}"], capture_output=True, text=True)
    assert done.returncode == 1 and "cannot reach" in done.stderr
