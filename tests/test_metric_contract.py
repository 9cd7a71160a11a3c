"""The metric contract (monitor/contract.py's FAMILIES) is what /metrics publishes, and typed
verdicts keep the store's JSON: rows written before them still load and show the same."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console

from monitor.admin import AdminServer, RecentTurns
from monitor.assemble import AssemblyTelemetry
from monitor.contract import FAMILIES, FAMILY
from monitor.emit.metrics import LabelGuard
from monitor.emit.verdicts import VerdictMetrics
from monitor.ingest.telemetry import IngestTelemetry
from monitor.judges.telemetry import JudgeTelemetry
from monitor.model import AssistantTurn, RetrievedDocument
from monitor.sample.telemetry import SamplingTelemetry
from monitor.sessions import SessionTelemetry
from monitor.store import Store
from monitor.telemetry import Metrics
from monitor.verdict import JudgeResult, Verdict
from monitor.verdicts_view import turn_report

# Verdict details as the store kept them before verdicts were typed (the local judge's, an LLM
# judge's with its samples' agreement, a panel's, the reference tool-call judge's).
LOCAL = {
    "context_relevance": {"empty_documents_skipped": 1, "documents": [
        {"id": "kb-1", "label": "relevant", "similarity": 0.91},
        {"id": None, "label": "irrelevant", "similarity": 0.2}]},
    "answer_relevance": {"similarity": 0.83},
    "completeness": {"no_answer_probability": 0.01},
    "groundedness": {"claims": [
        {"claim": "Hello!", "label": "generic"},
        {"claim": "In May.", "label": "inferable", "support": 0.91, "lexical": 1.0,
         "similarity": 0.88, "evidence": "kb-1", "window": [0, 24],
         "passage": "The store opens in May.", "checked_as": "When does it open? In May."},
        {"claim": "It costs less than 5 euros.", "label": "ungrounded", "support": 0.08,
         "lexical": 0.2, "similarity": 0.41, "evidence": "document 2", "window": [0, 20],
         "passage": "Tickets cost 8 euros.", "contradicts": "“less than 5 euros” against “8 euros”"}]},
}
LLM = {
    "context_relevance": {"documents": [
        {"index": 1, "label": "relevant", "reasoning": "names the opening"},
        {"index": 2, "label": "irrelevant", "reasoning": "about prices"}]},
    "answer_relevance": {"votes": {"a": "relevant", "b": "irrelevant", "c": "relevant"},
                         "agreement": 2 / 3},
    "completeness": {"agreement": 1.0},
    "groundedness": {"claims": [{"claim": "In May.", "label": "inferable",
                                 "reasoning": "document 1 says so"}],
                     "sample_scores": [1.0, 1.0]},
    "tool_use": {"calls": [
        {"name": "lookup", "needed": "yes", "arguments_supported": "no",
         "reasoning": "the order id is invented"}]},
    "goal_completion": {"agreement": 1.0},
}
REFERENCE = {"tool_calls": {
    "name_precision": 0.5, "name_recall": 1.0, "argument_precision": 0.5,
    "argument_recall": 0.5, "reliability": 0.75, "expected_calls": 1, "actual_calls": 2,
    "matched_names": 1, "expected_arguments": 2, "actual_arguments": 2,
    "matched_arguments": 1, "matched_required": 1,
    "pairs": [{"expected": "lookup", "actual": "lookup", "matched_arguments": 1,
               "expected_arguments": 2, "actual_arguments": 1}]}}
ROWS = [("local", metric, d) for metric, d in LOCAL.items()] + [
    ("llm", metric, d) for metric, d in LLM.items()] + [
    ("reference", metric, d) for metric, d in REFERENCE.items()]
VALUES = {"answer_relevance": ("relevant", None), "completeness": ("complete", None),
          "goal_completion": ("partial", None)}


def verdict(metric: str, details: dict[str, Any]) -> Verdict:
    label, score = VALUES.get(metric, (None, 0.5 if metric != "tool_calls" else 0.75))
    return Verdict.from_details(metric, label, score, "why", details)  # type: ignore[arg-type]


@pytest.mark.unit
@pytest.mark.parametrize(("judge", "metric", "details"), ROWS,
                         ids=[f"{j}-{m}" for j, m, _ in ROWS])
def test_stored_details_read_back_typed_and_write_the_same_json(
        judge: str, metric: str, details: dict[str, Any]) -> None:
    typed = verdict(metric, details)
    assert json.dumps(typed.details()) == json.dumps(details)  # same keys, same order
    assert Verdict.from_dict(typed.to_dict()) == typed


@pytest.mark.unit
def test_details_are_attributes() -> None:
    local = verdict("groundedness", LOCAL["groundedness"])
    generic, supported, unsupported = local.claims  # type: ignore[misc]
    assert (generic.label, generic.support) == ("generic", None)
    assert supported.window == (0, 24) and supported.evidence == "kb-1"
    assert unsupported.label == "ungrounded" and unsupported.checked_as is None
    assert unsupported.contradicts == "“less than 5 euros” against “8 euros”"
    documents = verdict("context_relevance", LOCAL["context_relevance"])
    assert [d.id for d in documents.documents] == ["kb-1", None]  # type: ignore[union-attr]
    assert documents.signals.empty_documents_skipped == 1  # type: ignore[union-attr]
    panel = verdict("answer_relevance", LLM["answer_relevance"])
    assert panel.agreement.share == pytest.approx(2 / 3)  # type: ignore[union-attr]
    assert panel.agreement.votes["b"] == "irrelevant"  # type: ignore[union-attr]
    reference = verdict("tool_calls", REFERENCE["tool_calls"]).reference
    assert reference.counts()["actual_calls"] == 2 and reference.pairs[0].expected == "lookup"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="label"):  # a claim label outside the vocabulary
        verdict("groundedness", {"claims": [{"claim": "x", "label": "maybe"}]})


@pytest.mark.unit
def test_a_store_written_before_typed_verdicts_shows_its_verdicts(tmp_path: Any) -> None:
    """Rows inserted as the previous release wrote them: `verdicts show` reads them typed and
    prints every per-document and per-claim explanation."""
    store = Store(tmp_path / "old.db")
    turn = AssistantTurn(trace_id="ab" * 16, service="bot", question="When does it open?",
                         answer="Hello! In May. It costs less than 5 euros.",
                         documents=[RetrievedDocument(id="kb-1", content="The store opens in May."),
                                    RetrievedDocument(content="Tickets cost 8 euros.")])
    shown_text = []
    for number, judges in enumerate((("local",), ("llm", "reference"))):
        trace_id = f"{number:032x}"
        store.enqueue(turn.model_copy(update={"trace_id": trace_id}), "rate", 1.0)
        store.claim()
        store.complete(trace_id, [])
        rows = [row for row in ROWS if row[0] in judges]
        for judge, metric, details in rows:
            label, score = VALUES.get(metric, (None, 0.5))
            store.db.execute(
                "INSERT INTO verdicts (trace_id, judge, metric, label, score, rationale,"
                " details_json, prompt_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (trace_id, judge, metric, label, score, "why", json.dumps(details), None,
                 time.time()))
        shown = store.show(trace_id)
        assert [v["details"] for v in shown["verdicts"]] == [  # what --json prints: unchanged
            d for _, _, d in sorted(rows, key=lambda row: (row[0], row[1]))]
        console = Console(record=True, width=200, color_system=None)
        console.print(turn_report(shown))
        shown_text.append(console.export_text())
    store.close()
    local, llm = shown_text
    for expected in ("relevant    [kb-1] The store opens in May.  (similarity 0.91)",
                     "support 0.91 (lexical 1.0, similarity 0.88) in kb-1; checked as “When does "
                     "it open? In May.”; deciding passage “The store opens in May.”",
                     "the passage contradicts its bound: “less than 5 euros” against “8 euros”",
                     "greeting, hedge or offer: not checked"):
        assert expected in local, expected
    for expected in ("irrelevant  [-] Tickets cost 8 euros.  (about prices)", "← document 1 says so",
                     "lookup: needed yes, arguments supported no ← the order id is invented"):
        assert expected in llm, expected


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def every_kind_of_verdict() -> list[JudgeResult]:
    local = [verdict(m, d) for m, d in LOCAL.items()]
    llm = [verdict(m, d) for m, d in LLM.items()]
    return [JudgeResult("local", local, latency_s=0.05),
            JudgeResult("llm", llm, calls=2, input_tokens=120, output_tokens=30, latency_s=1.5),
            JudgeResult("reference", [verdict("tool_calls", REFERENCE["tool_calls"])])]


@pytest.mark.integration
async def test_metrics_publishes_exactly_the_contracts_verdict_families() -> None:
    """/metrics over HTTP: the families the emit stage adds to the other stages' are the
    contract's, with its types, help texts and labels; each reader feeds its family."""
    metrics = Metrics(CollectorRegistry())
    VerdictMetrics(metrics, LabelGuard([], 10), LabelGuard([], 10)).record(
        AssistantTurn(trace_id="cd" * 16, service="bot", route="billing"), 0.5,
        every_kind_of_verdict())
    metrics.drift_score.labels("groundedness", "bot", "billing").set(0.0)
    metrics.drift_alert.labels("groundedness", "bot", "billing").set(0.0)
    metrics.evaluation_events.labels("emitted").inc()
    admin = AdminServer("127.0.0.1:0", metrics.registry, RecentTurns(1, 1 << 20), ready=lambda: True)
    await admin.start()
    try:
        text = await asyncio.to_thread(scrape, f"http://127.0.0.1:{admin.port}/metrics")
        published = {f.name: f for f in text_string_to_metric_families(text)}
        for name in [n for n in published
                     if n.endswith("_created") and n.removesuffix("_created") in published]:
            del published[name]  # the text format's `_created` samples: a family's own
    finally:
        await admin.stop()

    others = CollectorRegistry()
    for stage in (IngestTelemetry, AssemblyTelemetry, SessionTelemetry, SamplingTelemetry,
                  JudgeTelemetry):
        stage(others)
    others_names = {f.name for f in others.collect()}
    emitted = set(published) - others_names - {"assistant_queue_depth", "assistant_turns_lost",
                                               "assistant_background_task_failures",
                                               "assistant_monitor_info"}
    assert emitted == {f.name for f in FAMILIES}
    for name in emitted:
        family, declared = published[name], FAMILY[name]
        assert (family.type, family.documentation) == (declared.type, declared.help), name
        assert family.samples, f"{name}: no reader fed it"
        for sample in family.samples:
            assert set(sample.labels) - {"le"} == set(declared.labels), (name, sample.labels)

    def value(name: str, **labels: str) -> float:
        return next(s.value for s in published[name].samples if s.labels == labels)

    turn = {"service": "bot", "route": "billing"}
    assert value("assistant_claims", **turn, judge="local", verdict="ungrounded") == 1
    assert value("assistant_tool_calls_arguments_supported", **turn, judge="llm",
                 verdict="no") == 1
    assert value("assistant_tool_call_arguments_reference", **turn, judge="reference",
                 kind="matched_required") == 1
    assert value("assistant_weighted_turns", **turn, judge="llm", metric="tool_use") == 2
    assert value("assistant_judge_tokens", judge="llm", kind="output") == 30
    assert not any(s.labels.get("judge") == "local" for s in
                   published["assistant_judge_tokens"].samples)  # no tokens: no series
