"""The dashboards and Grafana-managed alerts in a real Grafana: sidecar with demo-like traffic →
real Prometheus (the shipped recording rules, 1 s scrapes) → Grafana OSS provisioned from
grafana/provisioning/. A second sidecar, judged by a scripted LLM endpoint, runs the judges'
canary for the canary alert.

What a user installs is used as shipped; the test changes only what an install must set (the
Prometheus address, the dashboards folder) and, as tests/test_alerting_e2e.py does for
Prometheus, shortens the alert group's interval (1m → 10s) and the drift rule's `for` (5m → 10s)
so the test runs in seconds. Everything a dashboard panel asks for goes through Grafana's own
query API, /api/ds/query, with the dashboard variables at their defaults (all services, all
routes), as a user opening the dashboard sees it.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from monitor import demo
from monitor.store import Store
from tests import traffic
from tests.conftest import RunningSidecar, free_port, test_settings
from tests.fakes.openai_server import ScriptedOpenAIServer
from tests.grafana_server import GrafanaServer
from tests.test_alerting_e2e import _wait_http
from tests.test_canary import Switchable

pytestmark = pytest.mark.e2e  # sidecars, real Prometheus and Grafana

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "grafana"

# Queries (panel title, legend) that may return no series in this test, and why; every other
# query must return data, and all must run without error.
MAY_BE_EMPTY = {
    ("Kafka consumer lag", "{{topic}}[{{partition}}]"): "no Kafka receiver in this test",
    ("Judge tokens", "{{judge}} {{kind}}"): "the local judge uses no tokens; LLM judges do",
    ("Judge model changes", "{{judge}}"): "no judge endpoint changes its model in this test",
    ("Decided locally by the cascade", "{{judge}} {{part}}"):
        "no sidecar of this test judges through the cascade (tests/test_cascade.py does)",
    ("Calls judged not needed / with unsupported arguments", "not needed"):
        "only LLM judges judge tool use; this test runs the local judge",
    ("Calls judged not needed / with unsupported arguments", "unsupported arguments"):
        "only LLM judges judge tool use; this test runs the local judge",
    ("Sessions as the LLM session judge read them", "{{outcome}}"):
        "only an LLM endpoint judges whole sessions (tests/test_sessions.py does)",
    ("Sessions as the LLM session judge read them", "high frustration"):
        "only an LLM endpoint judges whole sessions (tests/test_sessions.py does)",
    ("Turns dropped", "{{reason}}"): "the sampler keeps nearly every turn at this volume",
    ("Spans refused and mapping issues", "refused: {{reason}}"): "the traffic is well formed",
    ("Spans refused and mapping issues", "issue: {{reason}}"): "the traffic is well formed",
}
DRIFT_RULE = "Assistant quality drift"
CANARY_RULE = "Judge canary disagrees"
# Turns the demo lacks, so that every verdict a panel shows occurs: an answer off the question
# (irrelevant, hence incomplete) and a RAG turn whose retrieval found nothing.
OFF_TOPIC = traffic.Case(
    "off_topic", "How long do refunds take?",
    ("Refunds are issued within 30 days of purchase to the original payment method.",),
    "Our cafeteria serves pasta on Fridays and the lobby is painted blue.")
NOTHING_RETRIEVED = traffic.Case("no_documents", "Do you sell gift cards?", (),
                                 "I could not find anything about gift cards.")


@dataclass
class Stack:
    sidecar: RunningSidecar
    prometheus_url: str
    grafana: GrafanaServer
    started_ms: int
    canary_judge: Switchable  # the LLM judge of a second sidecar, which runs the canary


def _stage_provisioning(folder: Path, prometheus_url: str) -> Path:
    """grafana/provisioning and grafana/dashboards copied as an operator installs them."""
    shutil.copytree(SHIPPED / "provisioning", folder / "provisioning")
    shutil.copytree(SHIPPED / "dashboards", folder / "dashboards")
    edits = {
        "datasources/assistant-monitor.yaml": [("url: http://prometheus:9090",
                                                f"url: {prometheus_url}")],
        "dashboards/assistant-monitor.yaml": [("path: /var/lib/grafana/dashboards/assistant-monitor",
                                               f"path: {folder / 'dashboards'}")],
        "alerting/assistant-monitor.yaml": [("interval: 1m", "interval: 10s"),
                                            ("for: 5m\n    noDataState: OK\n    execErrState: Error\n"
                                             "    labels:\n      severity: page\n    annotations:\n"
                                             "      summary: '{{ $labels.metric }} drifted",
                                             "for: 10s\n    noDataState: OK\n    execErrState: Error\n"
                                             "    labels:\n      severity: page\n    annotations:\n"
                                             "      summary: '{{ $labels.metric }} drifted")],
    }
    for name, replacements in edits.items():
        path = folder / "provisioning" / name
        text = path.read_text()
        for old, new in replacements:
            assert text.count(old) == 1, f"{name}: expected {old!r} once"
            text = text.replace(old, new)
        path.write_text(text)
    return folder / "provisioning"


def _send_demo(sidecar: RunningSidecar, rounds: int) -> int:
    """Every scenario and chat of `assistant-monitor run --demo` (tool calls, refusals, feedback,
    an agent's loop and recovery, one that gives up, chats resolved and escalated), `rounds`
    times. How many turns."""
    provider = traffic.exporting_to(sidecar.grpc_endpoint, "demo-assistant")
    rng = random.Random(7)
    for round_ in range(rounds):
        for scenario in demo.SCENARIOS:
            demo.emit_turn(provider, scenario, rng)
        for number, chat in enumerate(demo.CHATS):
            demo.emit_chat(provider, chat, f"chat-{round_}-{number}", rng)
    provider.shutdown()
    return rounds * (len(demo.SCENARIOS) + sum(len(chat) for chat in demo.CHATS))


def _total(sidecar: RunningSidecar, name: str) -> float:
    return sum(sample.value for metric in sidecar.registry.collect() for sample in metric.samples
               if sample.name == name)


def _judged(sidecar: RunningSidecar) -> float:
    return _total(sidecar, "assistant_turns_judged_total")


def _wait_settled(sidecar: RunningSidecar, sent: int, timeout_s: float = 180) -> None:
    """Until all `sent` turns are assembled and each is judged or dropped by the sampler."""
    deadline = time.monotonic() + timeout_s
    while True:
        received = _total(sidecar, "assistant_turns_received_total")
        done = _judged(sidecar) + _total(sidecar, "assistant_turns_dropped_total")
        if received >= sent and done >= received:
            return
        assert time.monotonic() < deadline, f"{received} of {sent} turns in, {done} settled"
        time.sleep(0.2)


def _wait_scraped(prometheus_url: str, count: float, timeout_s: float = 60) -> None:
    """Until Prometheus has scraped `count` judged turns, and the sidecar a few times, and
    evaluated the rules after that."""
    query = urllib.parse.urlencode({"query": "sum(assistant_turns_judged_total)"})
    deadline = time.monotonic() + timeout_s
    while True:
        with urllib.request.urlopen(f"{prometheus_url}/api/v1/query?{query}", timeout=10) as r:
            result = json.load(r)["data"]["result"]
        if result and float(result[0]["value"][1]) >= count:
            break
        assert time.monotonic() < deadline, f"Prometheus did not scrape {count} judged turns"
        time.sleep(0.2)
    # At least 3 successful scrapes in the last minute: a panel's rate() needs two samples in
    # its window.
    query = urllib.parse.urlencode(
        {"query": 'sum_over_time(up{job="assistant-monitor"}[1m])'})
    while True:
        with urllib.request.urlopen(f"{prometheus_url}/api/v1/query?{query}", timeout=10) as r:
            result = json.load(r)["data"]["result"]
        if result and float(result[0]["value"][1]) >= 3:
            break
        assert time.monotonic() < deadline, "Prometheus did not scrape the sidecar 3 times"
        time.sleep(0.2)
    groups = f"{prometheus_url}/api/v1/rules"
    scraped = time.time()
    while True:
        with urllib.request.urlopen(groups, timeout=10) as r:
            evaluated = [g["lastEvaluation"] for g in json.load(r)["data"]["groups"]]
        if all(_timestamp(e) > scraped for e in evaluated):
            return
        assert time.monotonic() < deadline, "Prometheus did not evaluate its rules"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    folder = tmp_path_factory.mktemp("grafana-e2e")
    sidecar = RunningSidecar(test_settings(
        drift={"reference_size": 60, "recent_size": 30, "min_samples": 20},
        judging={"workers": 1}))
    # A second sidecar, judged by a scripted LLM endpoint, runs the judges' canary every 10 s.
    canary_judge = Switchable()
    endpoint = ScriptedOpenAIServer(canary_judge).__enter__()
    judged_by_llm = RunningSidecar(test_settings(judging={
        "canary": {"interval_s": 10},
        "llm": {"endpoints": [{"name": "judge-a", "base_url": endpoint.base_url,
                               "model": "judge-model", "max_retries": 0}]}}))
    prom_port = free_port()
    prometheus_url = f"http://127.0.0.1:{prom_port}"
    (folder / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ROOT / "deploy/prometheus/rules.yml")],
        "scrape_configs": [{"job_name": "assistant-monitor", "static_configs": [
            {"targets": [sidecar.admin_url.removeprefix("http://"),
                         judged_by_llm.admin_url.removeprefix("http://")]}]}]}))
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={folder / 'prometheus.yml'}",
         f"--storage.tsdb.path={folder / 'prom-data'}", "--enable-feature=exemplar-storage",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    grafana = None
    try:
        _wait_http(f"{prometheus_url}/-/ready", prometheus)
        started_ms = int(time.time() * 1000)
        grafana = GrafanaServer(_stage_provisioning(folder, prometheus_url))
        demo_turns = _send_demo(sidecar, rounds=3)
        traffic.send_all(sidecar.grpc_endpoint, "demo-assistant", [OFF_TOPIC, NOTHING_RETRIEVED] * 2)
        # Two reference streams for the drift detector: one about to drift, one that stays noisy
        # but stationary (one invented answer in ten, all along).
        traffic.send_all(sidecar.grpc_endpoint, "shop-bot", [traffic.GROUNDED[i % 4] for i in range(90)])
        steady = [traffic.GROUNDED[i % 4] for i in range(9)] + [traffic.INVENTED[0]]
        traffic.send_all(sidecar.grpc_endpoint, "steady-bot", steady * 16)
        _wait_settled(sidecar, demo_turns + 4 + 90 + 160)
        _wait_scraped(prometheus_url, _judged(sidecar))
        yield Stack(sidecar, prometheus_url, grafana, started_ms, canary_judge)
    finally:
        if grafana is not None:
            grafana.stop()
        prometheus.terminate()
        prometheus.wait(timeout=30)
        sidecar.stop()
        judged_by_llm.stop()
        endpoint.__exit__(None, None, None)


def _resolve(expr: str, datasource_uid: str) -> str:
    """The dashboard variables at their defaults: the Prometheus data source, all services and
    routes (`.*`, their `allValue`). Grafana's own `$__rate_interval` is left to Grafana."""
    return (expr.replace("${datasource}", datasource_uid).replace("$service", ".*")
            .replace("$route", ".*"))


def _query(grafana: GrafanaServer, target: dict[str, Any], datasource_uid: str,
           from_ms: int) -> dict[str, Any]:
    query = {**target, "expr": _resolve(target["expr"], datasource_uid),
             "datasource": {"type": "prometheus", "uid": datasource_uid},
             "intervalMs": 1000, "maxDataPoints": 500}
    body = {"queries": [query], "from": str(from_ms), "to": str(int(time.time() * 1000))}
    return grafana.post("/api/ds/query", body)["results"][target["refId"]]


def _has_data(result: dict[str, Any]) -> bool:
    return any(values for frame in result.get("frames", [])
               for values in frame.get("data", {}).get("values", [])[1:])


def test_every_dashboard_loads_and_every_panel_returns_data(stack: Stack) -> None:
    grafana = stack.grafana
    sources = grafana.get("/api/datasources")
    assert [(s["uid"], s["type"], s["isDefault"]) for s in sources] == [
        ("prometheus", "prometheus", True)]
    assert grafana.get("/api/datasources/uid/prometheus/health")["status"] == "OK"
    datasource_uid = sources[0]["uid"]  # what `${datasource}` resolves to by default
    services = grafana.get("/api/datasources/uid/prometheus/resources/api/v1/label/service/values")
    assert {"demo-assistant", "shop-bot", "steady-bot"} <= set(services["data"])  # `$service`

    files = sorted((SHIPPED / "dashboards").glob("*.json"))
    found = grafana.get("/api/search?type=dash-db")
    assert sorted(d["uid"] for d in found) == \
        sorted(json.loads(path.read_text())["uid"] for path in files)
    checked, empty = [], []
    for path in files:
        shipped = json.loads(path.read_text())
        loaded = grafana.get(f"/api/dashboards/uid/{shipped['uid']}")
        assert loaded["meta"]["provisioned"] and loaded["meta"]["folderTitle"] == "assistant-monitor"
        board = loaded["dashboard"]
        assert board["title"] == shipped["title"]
        assert [p.get("targets") for p in board["panels"]] == \
            [p.get("targets") for p in shipped["panels"]]
        for panel in board["panels"]:
            if panel["type"] == "row":
                continue
            for target in panel["targets"]:
                where = (panel["title"], target["legendFormat"])
                result = _query(grafana, target, datasource_uid, stack.started_ms)
                assert result.get("status") == 200 and "error" not in result, (where, result)
                checked.append(where)
                if not _has_data(result):
                    empty.append(where)
    print(f"\n{len(checked)} queries checked; empty: {empty}")
    rejected = [line for line in grafana.logs().splitlines() if "logger=provisioning" in line
                and "level=error" in line and "no such file or directory" not in line]
    assert rejected == [], rejected  # a provisioned file Grafana refused (absent folders aside)
    unexpected = [where for where in empty if where not in MAY_BE_EMPTY]
    assert unexpected == [], "queries without data: " + repr(unexpected)
    assert len(checked) >= 30


def _drift_alerts(grafana: GrafanaServer) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    groups = grafana.get("/api/prometheus/grafana/api/v1/rules")["data"]["groups"]
    rule = next(r for g in groups for r in g["rules"] if r["name"] == DRIFT_RULE)
    return rule, rule.get("alerts") or []


def test_drift_fires_the_grafana_alert(stack: Stack) -> None:
    deadline = time.monotonic() + 60
    while True:  # the rule's next evaluation after the fixture's scrape creates the instance
        _, alerts = _drift_alerts(stack.grafana)
        before = [a["state"] for a in alerts if a["labels"].get("service") == "shop-bot"]
        if before:
            break
        assert time.monotonic() < deadline, "the drift rule never evaluated shop-bot's series"
        time.sleep(0.5)
    assert all(state.startswith("Normal") for state in before), before
    drift_start = time.monotonic()
    traffic.send_all(stack.sidecar.grpc_endpoint, "shop-bot", [traffic.INVENTED[i % 4] for i in range(40)])
    deadline = time.monotonic() + 120
    while True:
        rule, alerts = _drift_alerts(stack.grafana)
        firing = [a for a in alerts if a["labels"].get("service") == "shop-bot"
                  and a["state"].startswith("Alerting")]
        if firing:
            break
        assert time.monotonic() < deadline, f"the drift alert never fired in Grafana: {rule}"
        time.sleep(0.5)
    fired = time.monotonic() - drift_start
    assert rule["state"] == "firing"
    alert = firing[0]
    assert alert["labels"]["severity"] == "page" and alert["labels"]["route"] == "support"
    assert alert["labels"]["metric"] in ("groundedness", "answer_irrelevance_rate")
    assert "drifted for shop-bot" in alert["annotations"]["summary"]
    print(f"\ntime from the drift's start to the Grafana alert firing: {fired:.1f}s")


def test_stationary_stream_keeps_grafana_quiet(stack: Stack) -> None:
    _wait_scraped(stack.prometheus_url, _judged(stack.sidecar))  # the final state, in Prometheus
    watch_from = time.time()
    evaluations: set[str] = set()
    deadline = time.monotonic() + 60
    while len(evaluations) < 3:  # three evaluations of the drift rule on the final state
        rule, alerts = _drift_alerts(stack.grafana)
        steady = [a for a in alerts if a["labels"].get("service") == "steady-bot"]
        loud = [a for a in steady if not a["state"].startswith("Normal")]
        assert loud == [], loud
        evaluated = rule["lastEvaluation"]
        if steady and _timestamp(evaluated) > watch_from:  # evaluations that saw the stream
            evaluations.add(evaluated)
        assert time.monotonic() < deadline, (
            "Grafana stopped evaluating the drift rule" if steady
            else "Grafana never saw the stationary stream's drift series")
        time.sleep(0.5)
    groups = stack.grafana.get("/api/prometheus/grafana/api/v1/rules")["data"]["groups"]
    rules = [r for g in groups for r in g["rules"]]
    assert len(rules) == 6
    assert [(r["name"], r.get("lastError", "")) for r in rules if r["health"] != "ok"] == []
    assert [r["name"] for r in rules if r["name"] != DRIFT_RULE and r["state"] != "inactive"] == []
    assert stack.sidecar.metric("assistant_drift_score", metric="groundedness",
                                service="steady-bot", route="support") < 3.0


def _timestamp(rfc3339: str) -> float:
    """Seconds since the epoch; Go writes up to nine fractional digits, Python reads six."""
    stamp = re.sub(r"(\.\d{6})\d+", r"\1", rfc3339.replace("Z", "+00:00"))
    return datetime.fromisoformat(stamp).timestamp()


def _canary_alerts(grafana: GrafanaServer) -> list[dict[str, Any]]:
    groups = grafana.get("/api/prometheus/grafana/api/v1/rules")["data"]["groups"]
    rule = next(r for g in groups for r in g["rules"] if r["name"] == CANARY_RULE)
    return [a for a in rule.get("alerts") or [] if a["labels"].get("judge") == "judge-a"]


def test_a_judge_that_starts_answering_wrong_fires_the_canary_alert(stack: Stack) -> None:
    """Last in this module: the judge stays wrong afterwards."""
    deadline = time.monotonic() + 180
    while not _canary_alerts(stack.grafana):  # evaluated on the stable judge's runs
        assert time.monotonic() < deadline, "the canary rule never evaluated judge-a's series"
        time.sleep(0.5)
    quiet = [a["state"] for a in _canary_alerts(stack.grafana)]
    assert all(state.startswith("Normal") for state in quiet), quiet
    stack.canary_judge.wrong = True
    deadline = time.monotonic() + 180
    while not any(a["state"].startswith("Alerting") for a in _canary_alerts(stack.grafana)):
        assert time.monotonic() < deadline, "the canary alert never fired in Grafana"
        time.sleep(0.5)
    firing = next(a for a in _canary_alerts(stack.grafana) if a["state"].startswith("Alerting"))
    assert firing["labels"]["severity"] == "page"
    assert "Judge judge-a agrees with the canary set" in firing["annotations"]["summary"]



def test_a_quality_series_links_to_its_worst_turns_on_the_sidecars_pages(stack: Stack) -> None:
    """A click on a series of "Groundedness by route": its data link, with the variables as
    Grafana fills them, opens the sidecar's page of that stream's turns scored below 0.5."""
    grafana = stack.grafana
    board = grafana.get("/api/dashboards/uid/assistant-answers")["dashboard"]
    panel = next(p for p in board["panels"] if p["title"] == "Groundedness by route")
    [link] = panel["fieldConfig"]["defaults"]["links"]
    # The hidden `monitor` variable's values: public_url, through the data source.
    pages = grafana.get("/api/datasources/uid/prometheus/resources/api/v1/label/public_url/values")
    assert stack.sidecar.admin_url in pages["data"]
    series = [field["labels"] for frame in _query(grafana, panel["targets"][0], "prometheus",
                                                  stack.started_ms)["frames"]
              for field in frame["schema"]["fields"] if field.get("labels")]
    labels = next(s for s in series if s["service"] == "steady-bot")
    to_ms = int(time.time() * 1000)
    url = link["url"]
    for name, value in (("${monitor}", stack.sidecar.admin_url),
                        ("${__field.labels.service}", labels["service"]),
                        ("${__field.labels.route}", labels["route"]),
                        ("${__from}", str(stack.started_ms)), ("${__to}", str(to_ms))):
        url = url.replace(name, urllib.parse.quote(value, safe=":/"))
    assert "$" not in url, url
    with urllib.request.urlopen(url, timeout=30) as response:
        page = response.read().decode()
    store = Store(stack.sidecar.sidecar.settings.store.path)
    expected = store.list_turns(limit=50, metric="groundedness", below=0.5,
                                route=f"steady-bot/{labels['route']}",
                                since=stack.started_ms / 1000, until=to_ms / 1000)
    everything = store.list_turns(limit=500, route=f"steady-bot/{labels['route']}")
    store.close()
    assert expected and len(expected) < len(everything)  # the invented answers, not the rest
    listed = set(re.findall(r'href="/ui/turns/([0-9a-f]{32})"', page))
    assert listed == {t["trace_id"] for t in expected}
