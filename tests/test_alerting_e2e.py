"""The page, end to end: sidecar → real Prometheus (scraping, the project's rules) → real
Alertmanager → a webhook receiver. Groundedness drops: the drift alert reaches the webhook.
Stationary traffic: nothing does.

The rules are the shipped deploy/prometheus/rules.yml with the drift alert's `for:` shortened
from 5m to 2s, and the detector's windows are small, so the test runs in seconds.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import traffic
from tests.conftest import RunningSidecar, free_port

pytestmark = pytest.mark.e2e  # sidecar, real Prometheus and Alertmanager

ROOT = Path(__file__).resolve().parents[1]


class Webhook:
    def __init__(self) -> None:
        self.alerts: list[tuple[float, dict[str, Any]]] = []
        received = self.alerts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                received.extend((time.monotonic(), alert) for alert in body["alerts"])
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def firing(self, name: str) -> list[tuple[float, dict[str, Any]]]:
        return [(t, a) for t, a in self.alerts
                if a["labels"]["alertname"] == name and a["status"] == "firing"]


def _wait_http(url: str, process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        assert process.poll() is None, f"{url}: process exited"
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except OSError:
            assert time.monotonic() < deadline, f"{url} did not come up"
            time.sleep(0.2)


@pytest.fixture
def paging(start_sidecar: Any, tmp_path: Path) -> Iterator[tuple[RunningSidecar, Webhook]]:
    sidecar = start_sidecar(drift={"reference_size": 60, "recent_size": 30, "min_samples": 20},
                            judging={"workers": 1})
    webhook = Webhook()
    am_port, prom_port = free_port(), free_port()
    (tmp_path / "am.yml").write_text(yaml.safe_dump({
        "route": {"receiver": "hook", "group_by": ["alertname"], "group_wait": "1s",
                  "group_interval": "1s", "repeat_interval": "1h"},
        "receivers": [{"name": "hook", "webhook_configs": [{"url": webhook.url}]}]}))
    rules = (ROOT / "deploy/prometheus/rules.yml").read_text()
    fast = rules.replace("expr: max by (metric, service, route) (assistant_drift_alert) == 1\n"
                         "        for: 5m", "expr: max by (metric, service, route) "
                         "(assistant_drift_alert) == 1\n        for: 2s")
    assert fast != rules
    (tmp_path / "rules.yml").write_text(fast)
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(tmp_path / "rules.yml")],
        "alerting": {"alertmanagers": [{"static_configs": [
            {"targets": [f"127.0.0.1:{am_port}"]}]}]},
        "scrape_configs": [{"job_name": "assistant-monitor", "static_configs": [
            {"targets": [sidecar.admin_url.removeprefix("http://")]}]}]}))
    alertmanager = subprocess.Popen(
        ["prometheus-alertmanager", f"--config.file={tmp_path / 'am.yml'}",
         f"--storage.path={tmp_path / 'am-data'}", f"--web.listen-address=127.0.0.1:{am_port}",
         "--cluster.listen-address="], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'prom-data'}",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_http(f"http://127.0.0.1:{am_port}/-/ready", alertmanager)
        _wait_http(f"http://127.0.0.1:{prom_port}/-/ready", prometheus)
        yield sidecar, webhook
    finally:
        for process in (prometheus, alertmanager):
            process.terminate()
            process.wait(timeout=30)
        webhook.server.shutdown()


def _send(sidecar: RunningSidecar, cases: list[traffic.Case]) -> None:
    traffic.send_all(sidecar.grpc_endpoint, "shop-bot", cases)


def _judged(sidecar: RunningSidecar) -> float:
    return sidecar.metric("assistant_turns_judged_total", service="shop-bot", route="support",
                          judge="local")


def _wait_judged(sidecar: RunningSidecar, count: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while _judged(sidecar) < count:
        assert time.monotonic() < deadline, f"only {_judged(sidecar)} of {count} judged"
        time.sleep(0.2)


def test_groundedness_drop_pages_the_on_call(paging: tuple[RunningSidecar, Webhook]) -> None:
    sidecar, webhook = paging
    healthy = [traffic.GROUNDED[i % 4] for i in range(90)]
    _send(sidecar, healthy)
    _wait_judged(sidecar, 90)
    time.sleep(3)  # a few scrapes of the healthy state
    assert webhook.firing("AssistantQualityDrift") == []

    drift_start = time.monotonic()
    _send(sidecar, [traffic.INVENTED[i % 4] for i in range(40)])
    deadline = time.monotonic() + 60
    while not webhook.firing("AssistantQualityDrift"):
        assert time.monotonic() < deadline, "the drift alert never reached Alertmanager's webhook"
        time.sleep(0.2)
    received, alert = webhook.firing("AssistantQualityDrift")[0]
    assert alert["labels"]["severity"] == "page"
    assert alert["labels"]["service"] == "shop-bot" and alert["labels"]["route"] == "support"
    assert alert["labels"]["metric"] in ("groundedness", "answer_irrelevance_rate")
    print(f"\ntime from the drift's start to the page: {received - drift_start:.1f}s")


def test_stationary_noise_pages_nobody(paging: tuple[RunningSidecar, Webhook]) -> None:
    sidecar, webhook = paging
    # One invented answer in every ten, all along: noisy, but nothing changes.
    pattern = [traffic.GROUNDED[i % 4] for i in range(9)] + [traffic.INVENTED[0]]
    _send(sidecar, pattern * 16)
    _wait_judged(sidecar, 160)
    time.sleep(6)  # scrapes, rule evaluations and Alertmanager's group wait
    assert sidecar.metric("assistant_drift_score", metric="groundedness", service="shop-bot",
                          route="support") < 3.0
    assert webhook.alerts == []
