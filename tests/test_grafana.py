"""Dashboards, Grafana alert rules and Prometheus rules: generated, valid, and about real series."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from monitor.contract import QUALITIES
from monitor.judge_metrics import JUDGE_METRICS, Metric
from tests.conftest import RunningSidecar

ROOT = Path(__file__).resolve().parents[1]
GRAFANA = ROOT / "grafana"
RULES = ROOT / "deploy" / "prometheus"
SCHEMA_VERSION = "13.2.3"  # @grafana/schema, pinned

sys.path.insert(0, str(GRAFANA))
import generate  # noqa: E402


def dashboards() -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((GRAFANA / "dashboards").glob("*.json"))}


def expressions() -> list[tuple[str, str]]:
    """(where, PromQL) for every query of the dashboards, Grafana alerts and Prometheus rules."""
    found = []
    for name, board in dashboards().items():
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                found.append((f"dashboard {name}: {panel['title']}", target["expr"]))
    alerting = yaml.safe_load((GRAFANA / "provisioning/alerting/assistant-monitor.yaml").read_text())
    for group in alerting["groups"]:
        for rule in group["rules"]:
            for step in rule["data"]:
                if "expr" in step["model"]:
                    found.append((f"grafana alert {rule['title']}", step["model"]["expr"]))
    for group in yaml.safe_load((RULES / "rules.yml").read_text())["groups"]:
        for rule in group["rules"]:
            found.append((f"rule {rule.get('record') or rule.get('alert')}", rule["expr"]))
    return found


def concrete(expr: str) -> str:
    """Grafana's variables replaced by values Prometheus accepts."""
    return (expr.replace("$__rate_interval", "5m").replace("${datasource}", "prometheus")
            .replace("$service", ".*").replace("$route", ".*"))


_KEYWORDS = {
    "sum", "min", "max", "avg", "count", "rate", "irate", "increase", "histogram_quantile",
    "round", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "and",
    "or", "unless", "bool", "label_values", "abs", "clamp_min", "clamp_max", "topk", "bottomk",
    "sqrt", "Inf", "max_over_time",
}


def metric_names(expr: str) -> set[str]:
    text = re.sub(r'"(?:[^"\\]|\\.)*"', "", concrete(expr))  # strings
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    tokens = set(re.findall(r"(?<![\w:.])[a-zA-Z_:][\w:]*", text))
    return {t for t in tokens if t not in _KEYWORDS}


@pytest.mark.unit
def test_generated_files_are_up_to_date(tmp_path: Path) -> None:
    for written in generate.render(tmp_path):
        committed = GRAFANA / written.relative_to(tmp_path)
        assert committed.exists(), f"{committed} missing: run python grafana/generate.py"
        assert written.read_text() == committed.read_text(), \
            f"{committed} is stale: run python grafana/generate.py"


@pytest.mark.integration  # promtool
def test_every_expression_is_valid_promql(tmp_path: Path) -> None:
    rules = {"groups": [{"name": "check", "rules": [
        {"record": f"check:expr_{i}", "expr": concrete(expr)}
        for i, (_, expr) in enumerate(expressions())]}]}
    path = tmp_path / "exprs.yml"
    path.write_text(yaml.safe_dump(rules))
    done = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.integration
def test_every_metric_is_one_the_sidecar_exposes(sidecar: RunningSidecar) -> None:
    with urllib.request.urlopen(f"{sidecar.admin_url}/metrics", timeout=10) as response:
        exposition = response.read().decode()
    exposed = {"up"}
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", exposition, re.MULTILINE):
        exposed.add(name)
        if kind == "histogram":
            exposed |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    recorded = {rule["record"] for group in yaml.safe_load((RULES / "rules.yml").read_text())
                ["groups"] for rule in group["rules"] if "record" in rule}
    unknown = {(where, name) for where, expr in expressions()
               for name in metric_names(expr) - exposed - recorded}
    assert not unknown, sorted(unknown)
    assert len(expressions()) > 40


@pytest.mark.unit
def test_recording_rules_follow_the_quality_contract() -> None:
    """Each recorded quality estimates what the contract says feeds it, with its 95% bounds."""
    rules = {rule["record"]: " ".join(rule["expr"].split())
             for group in yaml.safe_load((RULES / "rules.yml").read_text())["groups"]
             for rule in group["rules"] if "record" in rule}
    assert {q.verdict for q in QUALITIES if q.verdict} <= set(get_args(Metric))
    recorded = [q for q in QUALITIES if q.recorded]  # as monitor/judge_metrics.py declares
    assert recorded
    for q in recorded:
        expr = rules[q.recording]
        if q.is_rate:
            assert (f'assistant_weighted_verdicts_total{{metric="{q.verdict}", '
                    f'verdict="{q.label}"}}') in expr, (q.name, expr)
        else:
            assert f'assistant_weighted_score_total{{metric="{q.verdict}"}}' in expr, (q.name, expr)
        assert f'assistant_weighted_turns_total{{metric="{q.verdict}"}}' in expr, (q.name, expr)
        for bound in ("lower95", "upper95"):
            assert q.recording.replace("_rate1h", f"_{bound}_rate1h") in rules


@pytest.mark.integration  # promtool, amtool
def test_prometheus_rules_check_and_unit_tests() -> None:
    checked = subprocess.run(["promtool", "check", "rules", "rules.yml"], cwd=RULES,
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run(["promtool", "test", "rules", "rules_test.yml"], cwd=RULES,
                            capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    config = subprocess.run(["promtool", "check", "config", "prometheus.yml"], cwd=RULES,
                            capture_output=True, text=True)
    assert config.returncode == 0, config.stdout + config.stderr
    alertmanager = subprocess.run(["amtool", "check-config",
                                   str(ROOT / "deploy/alertmanager/alertmanager.yml")],
                                  capture_output=True, text=True)
    assert alertmanager.returncode == 0, alertmanager.stdout + alertmanager.stderr


@pytest.fixture(scope="session")
def grafana_schema() -> Path:
    """@grafana/schema and TypeScript from the npm registry, cached outside the repository."""
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    folder = base / "assistant-monitor" / f"grafana-schema-{SCHEMA_VERSION}"
    if not (folder / "node_modules" / ".bin" / "tsc").exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"private": true}')
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund",
                        f"@grafana/schema@{SCHEMA_VERSION}", "typescript@5"],
                       cwd=folder, check=True, timeout=600)
    return folder


@pytest.mark.integration  # @grafana/schema and tsc from npm
def test_dashboards_validate_against_grafana_schema(grafana_schema: Path, tmp_path: Path) -> None:
    check = grafana_schema / f"check-{os.getpid()}"
    shutil.rmtree(check, ignore_errors=True)
    check.mkdir()
    try:
        for name, board in dashboards().items():
            (check / f"{name}.ts").write_text(
                'import type { Dashboard } from "@grafana/schema";\n'
                f"export const dashboard: Dashboard = {json.dumps(board, indent=1)};\n")
        (check / "tsconfig.json").write_text(json.dumps({
            "compilerOptions": {"strict": True, "noEmit": True, "moduleResolution": "node",
                                "module": "commonjs", "target": "es2020", "skipLibCheck": True},
            "include": ["*.ts"]}))
        done = subprocess.run([str(grafana_schema / "node_modules/.bin/tsc"), "-p", str(check)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        shutil.rmtree(check, ignore_errors=True)


@pytest.mark.unit
def test_weighted_rates_and_means_are_drawn_with_their_interval_band() -> None:
    """Every time series of a sampling-weighted rate or mean has a 95% band: a lower and an
    upper series from the squared-weight sums, the upper filled down to the lower."""
    banded = 0
    for name, board in dashboards().items():
        for panel in board["panels"]:
            exprs = [t["expr"] for t in panel.get("targets", [])]
            if panel["type"] != "timeseries" or not any("assistant_weighted_" in e for e in exprs):
                continue
            if panel["title"] == "Completeness":
                continue  # three verdicts' shares; the no-answer band is on the overview
            legends = {t["legendFormat"]: t["expr"] for t in panel["targets"]}
            low, high = generate.BAND
            assert "assistant_sq_weighted_turns_total" in legends[low], (name, panel["title"])
            assert "sqrt" in legends[high], (name, panel["title"])
            fills = {o["matcher"]["options"]: {p["id"]: p["value"] for p in o["properties"]}
                     for o in panel["fieldConfig"]["overrides"]}
            assert fills[high]["custom.fillBelowTo"] == low
            assert fills[low]["custom.fillOpacity"] == 0  # the band, not down to zero
            banded += 1
    assert banded == sum(not p.stat for m in JUDGE_METRICS for p in m.panels)


@pytest.mark.integration  # promtool
def test_band_promql_computes_the_documented_interval(tmp_path: Path) -> None:
    """The dashboards' band queries, run by promtool's PromQL engine on known counters, give the
    interval monitor/emit/intervals.py computes (5 of 60 turns an hour at weight 100)."""
    from monitor.emit.intervals import WeightedSums

    labels = 'service="bot",route="faq",judge="local"'
    per_minute = {  # counter increase a minute
        f'assistant_weighted_turns_total{{metric="completeness",{labels}}}': 9.25,
        f'assistant_sq_weighted_turns_total{{metric="completeness",{labels}}}': 834.25,
        f'assistant_weighted_verdicts_total{{metric="completeness",verdict="no_answer",{labels}}}':
            2.3125,
        f'assistant_sq_weighted_verdicts_total{{metric="completeness",verdict="no_answer",'
        f'{labels}}}': 167.3125,
        f'assistant_weighted_turns_total{{metric="groundedness",{labels}}}': 10,
        f'assistant_sq_weighted_turns_total{{metric="groundedness",{labels}}}': 40,
        f'assistant_weighted_score_total{{metric="groundedness",{labels}}}': 7,
        f'assistant_sq_weighted_score_total{{metric="groundedness",{labels}}}': 31,
        f'assistant_sq_weighted_score_squared_total{{metric="groundedness",{labels}}}': 27,
    }
    expected = {
        ("completeness", "no_answer"): WeightedSums(555, 138.75, 50055, 10038.75, 10038.75),
        ("groundedness", None): WeightedSums(600, 420, 2400, 1860, 1620),
    }
    tests = []
    for (metric, verdict), sums in expected.items():
        estimate = sums.estimate()
        for sign, value in (("-", estimate.low), ("+", estimate.high)):
            expr = concrete(generate.weighted_bound(metric, verdict, sign)
                            .replace("$__rate_interval", "1h"))
            tests.append({"expr": f"round({expr}, 0.0001)", "eval_time": "90m",
                          "exp_samples": [{"labels": "{}", "value": round(value, 4)}]})
    (tmp_path / "empty.yml").write_text("groups: []\n")
    (tmp_path / "test.yml").write_text(yaml.safe_dump({
        "rule_files": ["empty.yml"], "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "promql_expr_test": tests, "input_series": [
            {"series": name, "values": f"0+{step}x120"} for name, step in per_minute.items()]}]}))
    done = subprocess.run(["promtool", "test", "rules", "test.yml"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
