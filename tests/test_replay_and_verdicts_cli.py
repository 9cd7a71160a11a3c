"""`replay` judges recorded OTLP through the same pipeline; `verdicts` reads the store back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from monitor.replay import write_requests
from tests import traffic


def recorded(path: Path) -> list[str]:
    """Record the labelled traffic the way the Collector's file exporter (proto) writes it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "recorded-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace_ids = [traffic.send(provider, case, route=case.kind) for case in traffic.ALL]
    spans = exporter.get_finished_spans()
    write_requests(path, [encode_spans(spans[i:i + 5]).SerializeToString()
                          for i in range(0, len(spans), 5)])
    return trace_ids


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "monitor", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_replay_then_inspect_and_export(tmp_path: Path) -> None:
    config = tmp_path / "monitor.yaml"
    config.write_text(f"store: {{path: '{tmp_path / 'store.db'}'}}\n")
    trace_ids = recorded(tmp_path / "traces.pb")

    done = run("replay", str(tmp_path / "traces.pb"), "--config", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "turns assembled 16, judged 16" in done.stdout
    assert "no_answer 25.0%" in done.stdout

    listed = run("verdicts", "list", "--config", str(config), "--limit", "50", cwd=tmp_path)
    assert listed.returncode == 0 and sum(t in listed.stdout for t in trace_ids) == 16

    refusal = trace_ids[traffic.ALL.index(traffic.REFUSALS[0])]
    shown = json.loads(run("verdicts", "show", refusal, "--config", str(config),
                           cwd=tmp_path).stdout)
    assert shown["turn"]["question"] == traffic.REFUSALS[0].question
    completeness = next(v for v in shown["verdicts"] if v["metric"] == "completeness")
    assert completeness["label"] == "no_answer" and completeness["rationale"]

    out = tmp_path / "failing.jsonl"
    exported = run("verdicts", "export-failing", "--out", str(out), "--config", str(config),
                   cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    failing = {json.loads(line)["trace_id"] for line in out.read_text().splitlines()}
    expected = {trace_ids[traffic.ALL.index(c)]
                for c in traffic.REFUSALS + traffic.INVENTED + traffic.IRRELEVANT_DOCS}
    assert failing == expected

    again = run("replay", str(tmp_path / "traces.pb"), "--config", str(config), cwd=tmp_path)
    assert "judged 0" in again.stdout  # idempotent by trace id: nothing is judged twice


def test_replay_names_a_corrupt_file(tmp_path: Path) -> None:
    (tmp_path / "bad.pb").write_bytes(b"\x00\x00\x10\x00garbage")
    done = run("replay", str(tmp_path / "bad.pb"), "--config", "/dev/null", cwd=tmp_path)
    assert done.returncode == 1
    assert "runs past the end" in done.stderr
