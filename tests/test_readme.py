"""The README and docs/ as a newcomer reads them: every `assistant-monitor` command in them
parses, every configuration block validates, the metric table is the metrics the sidecar
registers, the README's contents link to headings that exist, the README stays short, and the
`exporters.record` program gets a turn judged."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from monitor.cli import build_parser
from monitor.config import Settings
from monitor.queue.kafka import JudgeQueueTelemetry
from monitor.telemetry import Metrics
from tests.conftest import SidecarProcess
from tests.waiting import wait_until

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
DOCS = {path.relative_to(ROOT).as_posix(): path.read_text()
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
ALL = "\n".join(DOCS.values())
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", ALL, re.M | re.S)


def commands() -> list[str]:
    """`assistant-monitor ...` in shell blocks (continuations joined) and in inline code."""
    found = []
    for language, body in BLOCKS:
        if language in ("sh", "bash", "shell"):
            for line in body.replace("\\\n", " ").splitlines():
                found += re.split(r"&&|\|\||;|\|", line)
    # inline code: the examples (with options), not a command named in passing
    found += [c for c in re.findall(r"`([^`]*assistant-monitor [^`]*)`", " ".join(ALL.split()))
              if "--" in c]
    words = (shlex.split(part, comments=True) for part in found)
    return [shlex.join(w[1:]) for w in words if w and w[0].endswith("assistant-monitor")
            and len(w) > 1 and not w[1].startswith(("·", "ran"))]


@pytest.mark.unit
@pytest.mark.parametrize("command", commands())
def test_each_command_in_the_readme_parses(command: str) -> None:
    try:
        build_parser().parse_args(shlex.split(command))
    except SystemExit as exc:
        if exc.code == 0:  # --help
            return
        pytest.fail(f"`assistant-monitor {command}` does not parse (exit {exc.code})")


@pytest.mark.unit
def test_the_readme_shows_every_command() -> None:
    used = {shlex.split(c)[0] for c in commands()}
    assert used >= {"run", "check-config", "turns", "replay", "verdicts", "eval", "calibrate",
                    "generate-dataset", "simulate"}


def configuration_blocks() -> list[dict[str, Any]]:
    """YAML blocks whose top-level keys are all configuration sections."""
    sections = set(Settings.model_fields)
    blocks = [yaml.safe_load(body) for language, body in BLOCKS if language == "yaml"]
    return [b for b in blocks if isinstance(b, dict) and set(b) <= sections]


@pytest.mark.unit
def test_configuration_blocks_validate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # relative paths (the store) resolve here
    blocks = configuration_blocks()
    assert len(blocks) >= 3  # the full example, Kafka, the LLM judges
    full = max(blocks, key=len)
    assert set(full) >= set(Settings.model_fields) - {"kafka"}, "the full example lacks sections"
    for block in blocks:
        Settings(**block)


def documented_metrics() -> dict[str, set[str]]:
    """Metric name -> labels named in its row of the metric table (rows may name several)."""
    rows = re.findall(r"^\| (`assistant_[^|]*)\|([^|]*)\|", ALL, re.M)
    table: dict[str, set[str]] = {}
    for names, labels in rows:
        for name in re.findall(r"`(assistant_\w+)`", names):
            table[name] = set(re.findall(r"[a-z_]+", labels))
    return table


def registered_metrics() -> dict[str, set[str]]:
    """Exposed name (counters with `_total`) -> label names, as /metrics shows them."""
    registry = CollectorRegistry()
    Metrics(registry)
    JudgeQueueTelemetry(registry)  # registered only with judging.queue.kind: kafka
    out = {}
    for collector in list(registry._collector_to_names):
        for family in collector.describe():
            name = family.name + ("_total" if family.type == "counter" else "")
            out[name] = set(getattr(collector, "_labelnames", ()))
    return out


@pytest.mark.unit
def test_the_metric_table_is_the_registered_metrics() -> None:
    documented, registered = documented_metrics(), registered_metrics()
    assert sorted(set(registered) - set(documented)) == [], "metrics missing from the README"
    assert sorted(set(documented) - set(registered)) == [], "the README names unknown metrics"
    for name, labels in registered.items():
        assert labels <= documented[name], f"{name}: labels {sorted(labels - documented[name])} " \
                                           "are not in its README row"


def anchors(markdown: str) -> set[str]:
    """Its headings' anchors, as GitHub makes them."""
    outside_code = re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
            for title in re.findall(r"^#{1,4} (.+)$", outside_code, re.M)}


@pytest.mark.unit
def test_the_readme_is_short_and_its_links_lead_somewhere() -> None:
    """A page a newcomer reads through; every link of it, and of the docs, to a file of the
    repository (and a heading in it) that exists."""
    assert len(README.splitlines()) <= 200
    checked = 0
    for name, text in DOCS.items():
        for target in re.findall(r"\]\(([^)#:]*)(?:#([^)]+))?\)", text):
            path, anchor = target
            file = (ROOT / name).parent / path if path else ROOT / name
            assert file.exists(), f"{name} links to {path}, which is not there"
            if anchor and file.suffix == ".md":
                assert anchor in anchors(file.read_text()), f"{name}: no #{anchor} in {path}"
            checked += 1
    assert checked >= 15
    assert {"docs/sending-traces.md", "docs/judging.md", "docs/privacy.md"} <= set(
        re.findall(r"\]\((docs/[\w-]+\.md)", README))


@pytest.mark.integration
def test_the_recording_example_is_a_program_whose_turn_is_judged(tmp_path: Path) -> None:
    """The `exporters.record` example, run as written against a sidecar process: its turn is
    judged, and the claim it invents is marked ungrounded with the passage that decided it."""
    program = next(body for language, body in BLOCKS
                   if language == "python" and "from exporters import record" in body)
    (tmp_path / "turn.py").write_text(program)
    sidecar = SidecarProcess(tmp_path / "sidecar")
    try:
        env = {**os.environ, "OTEL_SERVICE_NAME": "my-assistant",
               "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sidecar.ports['http']}"}
        sent = subprocess.run([sys.executable, "turn.py"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert sent.returncode == 0, sent.stderr

        def verdicts(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "monitor", "verdicts", *args, "--config",
                                   str(sidecar.config)], capture_output=True, text=True,
                                  timeout=120)

        def judged() -> list[dict[str, Any]]:
            done = verdicts("list", "--json", "--state", "judged")
            return json.loads(done.stdout) if done.returncode == 0 else []

        wait_until(judged, what="the example's turn judged")
        (row,) = judged()
        assert row["service"] == "my-assistant" and row["route"] == "billing"
        assert row["tool_calls"] == [{"name": "lookup_invoice", "error": None}]
        shown = json.loads(verdicts("show", row["trace_id"], "--json").stdout)
        assert shown["turn"]["feedback"]["score"] == -1.0
        grounded = next(v for v in shown["verdicts"] if v["metric"] == "groundedness")
        claims = {c["claim"]: c for c in grounded["details"]["claims"]}
        invented = claims["Each refund also earns 500 bonus miles."]
        assert invented["label"] == "ungrounded" and invented["evidence"] == "kb-1"
        assert claims["Refunds are paid within 30 days."]["label"] == "inferable"
        assert grounded["score"] == 0.5
    finally:
        assert sidecar.stop() == 0


@pytest.mark.unit
def test_every_alert_links_to_its_runbook() -> None:
    rules = yaml.safe_load((ROOT / "deploy/prometheus/rules.yml").read_text())
    urls = {rule["annotations"]["runbook_url"] for group in rules["groups"]
            for rule in group["rules"] if "alert" in rule}
    assert urls
    for url in urls:
        path, _, anchor = url.partition("#")
        assert anchor in anchors((ROOT / path).read_text()), url
