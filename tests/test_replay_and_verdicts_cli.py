"""`replay` judges recorded OTLP through the same pipeline; `verdicts` reads the store back."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from monitor.replay import write_requests
from tests import traffic

pytestmark = pytest.mark.integration


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


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], Path]:
    """The labelled traffic, recorded then replayed once into a store: (config, trace ids)."""
    tmp_path = tmp_path_factory.mktemp("replayed")
    config = tmp_path / "monitor.yaml"
    config.write_text(f"store: {{path: '{tmp_path / 'store.db'}'}}\n")
    trace_ids = recorded(tmp_path / "traces.pb")
    done = run("replay", str(tmp_path / "traces.pb"), "--config", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "turns assembled 16, judged 16" in done.stdout
    assert "no_answer 25.0%" in done.stdout
    return config, trace_ids, tmp_path


def test_replay_then_inspect_and_export(replayed: tuple[Path, list[str], Path]) -> None:
    config, trace_ids, tmp_path = replayed
    listed = run("verdicts", "list", "--config", str(config), "--limit", "50", cwd=tmp_path)
    assert listed.returncode == 0 and sum(t in listed.stdout for t in trace_ids) == 16

    refusal = trace_ids[traffic.ALL.index(traffic.REFUSALS[0])]
    shown = json.loads(run("verdicts", "show", refusal, "--json", "--config", str(config),
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


def test_verdicts_list_shows_each_metric_and_filters(replayed: tuple[Path, list[str], Path]
                                                     ) -> None:
    config, trace_ids, tmp_path = replayed

    def verdicts(*args: str) -> subprocess.CompletedProcess[str]:
        return run("verdicts", *args, "--config", str(config), cwd=tmp_path)

    table = verdicts("list", "--limit", "50").stdout
    header = table.splitlines()[0].split()
    assert header[:5] == ["trace", "id", "received", "(UTC)", "service/route"], table
    for metric in ("context_relevance", "answer_relevance", "completeness", "groundedness"):
        assert metric in header
    refusal = trace_ids[traffic.ALL.index(traffic.REFUSALS[0])]
    assert "no_answer" in next(line for line in table.splitlines() if refusal in line)
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", table)

    rows = json.loads(verdicts("list", "--limit", "50", "--json").stdout)
    low = {r["trace_id"] for r in rows if r["verdicts"].get("groundedness", [None, 1.0])[1] < 0.5}
    assert trace_ids[traffic.ALL.index(traffic.INVENTED[0])] in low
    below = verdicts("list", "--metric", "groundedness", "--below", "0.5", "--limit", "50").stdout
    assert {t for t in trace_ids if t in below} == low
    assert "completeness" not in below.splitlines()[0]  # only the metric asked for

    refusals = verdicts("list", "--route", "refusal", "--json").stdout
    assert {r["trace_id"] for r in json.loads(refusals)} == {
        trace_ids[traffic.ALL.index(c)] for c in traffic.REFUSALS}
    assert verdicts("list", "--route", "recorded-bot/refusal", "--json").stdout == refusals

    label_metric = verdicts("list", "--metric", "completeness", "--below", "0.5")
    assert label_metric.returncode == 2 and "scored metric" in label_metric.stderr


def test_verdicts_show_is_a_readable_rationale(replayed: tuple[Path, list[str], Path]) -> None:
    config, trace_ids, tmp_path = replayed
    case = traffic.INVENTED[0]
    shown = run("verdicts", "show", trace_ids[traffic.ALL.index(case)], "--config", str(config),
                cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())  # rich wraps long lines
    assert case.question in text and case.answer.split()[0] in text
    assert case.documents[0][:40] in text
    assert re.search(r"received \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", text)
    # each document with its relevance label, each claim with its label and evidence
    assert re.search(r"1\. (relevant|irrelevant) \[", text), text
    assert re.search(r"ungrounded .*← support 0\.\d+ \(lexical", text), text
    for metric in ("context_relevance", "answer_relevance", "completeness", "groundedness"):
        assert metric in text
    assert "not_before" not in text and "seq" not in text.split()

    missing = run("verdicts", "show", "--config", str(config), cwd=tmp_path)
    assert missing.returncode == 2 and "TRACE_ID" in missing.stderr
    unknown = run("verdicts", "show", "0" * 32, "--config", str(config), cwd=tmp_path)
    assert unknown.returncode == 1 and "no stored turn with trace id 000" in unknown.stderr


def test_replay_names_a_corrupt_file(tmp_path: Path) -> None:
    (tmp_path / "bad.pb").write_bytes(b"\x00\x00\x10\x00garbage")
    done = run("replay", str(tmp_path / "bad.pb"), "--config", "/dev/null", cwd=tmp_path)
    assert done.returncode == 1
    assert "runs past the end" in done.stderr
