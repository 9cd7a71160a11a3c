"""End to end: real OTel SDK exporters → the sidecar → sampling → the local judge → /metrics."""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from rich.console import Console

from exporters import record
from monitor.verdicts_view import turn_report
from tests import traffic
from tests.conftest import RunningSidecar, SidecarProcess
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


def provider_for(endpoint: str, service: str = "shop-bot") -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint,
                                                                    insecure=True)))
    return provider


def sample(text: str, name: str, **labels: str) -> float:
    """Sum of the samples of `name` in an exposition whose labels include `labels`."""
    total = 0.0
    for line in text.splitlines():
        match = re.match(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)", line)
        if not match or match.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            total += float(match.group(3))
    return total


def test_mixed_traffic_is_judged_per_class(sidecar: RunningSidecar) -> None:
    provider = provider_for(sidecar.grpc_endpoint)
    for case in traffic.ALL:
        traffic.send(provider, case, route=case.kind)
    provider.shutdown()
    wait_until(lambda: sum(sidecar.metric("assistant_turns_judged_total", service="shop-bot",
                                          route=c, judge="local")
                           for c in ("grounded", "invented", "refusal", "irrelevant_docs")) == 16,
               what="16 judged turns")
    with urllib.request.urlopen(f"{sidecar.admin_url}/metrics", timeout=10) as response:
        text = response.read().decode()

    def mean(name: str, route: str) -> float:
        return (sample(text, f"{name}_sum", route=route, judge="local")
                / sample(text, f"{name}_count", route=route, judge="local"))

    assert sample(text, "assistant_turns_sampled_total", reason="rate") == 16
    assert mean("assistant_groundedness", "grounded") == 1.0
    assert mean("assistant_groundedness", "invented") == 0.0
    assert mean("assistant_groundedness", "irrelevant_docs") == 0.0
    assert sample(text, "assistant_groundedness_count", route="refusal") == 0  # nothing to ground
    assert mean("assistant_context_relevance", "grounded") == 1.0
    assert mean("assistant_context_relevance", "irrelevant_docs") == 0.0
    assert sample(text, "assistant_answer_completeness_total", route="refusal",
                  verdict="no_answer") == 4
    assert sample(text, "assistant_answer_completeness_total", verdict="no_answer") == 4
    assert sample(text, "assistant_answer_relevance_total", route="grounded",
                  verdict="relevant") == 4
    assert sample(text, "assistant_claims_total", route="invented", verdict="ungrounded") == 4
    # The unbiased rate the README's PromQL computes (every turn kept with p = 1 here).
    no_answer = (sample(text, "assistant_weighted_verdicts_total", metric="completeness",
                        verdict="no_answer")
                 / sample(text, "assistant_weighted_turns_total", metric="completeness"))
    assert no_answer == 4 / 16

    lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                          text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    openmetrics = sidecar.openmetrics()
    exemplar = re.search(r'assistant_answer_completeness_total\{[^}]*verdict="no_answer"\} 4\.0 '
                         r'# \{([^}]*)\}', openmetrics)
    assert exemplar, "completeness counters carry an exemplar"
    # The turn's trace id, and who judged it: the local models by their checksums.
    assert re.search(r'trace_id="[0-9a-f]{32}"', exemplar.group(1)), exemplar.group(1)
    assert re.search(r'judge_model="claim_support@[0-9a-f]{8} second@[0-9a-f]{8} '
                     r'minilm_l6@[0-9a-f]{8}"', exemplar.group(1)), exemplar.group(1)


def _count(store: Path, sql: str) -> int:
    with sqlite3.connect(store) as db:
        return db.execute(sql).fetchone()[0]


def test_kill_9_while_turns_are_queued_loses_none_and_judges_none_twice(tmp_path: Path) -> None:
    slow = "judging: {workers: 1, calls_per_minute: 240}\n"  # 4 turns a second: a queue builds
    sidecar = SidecarProcess(tmp_path, slow)
    provider = provider_for(sidecar.grpc_endpoint)
    sent = [traffic.send(provider, case, route="r") for case in traffic.ALL * 2]
    provider.shutdown()
    store = sidecar.store_path
    wait_until(lambda: _count(store, "SELECT count(*) FROM turns") == len(sent),
               what="every turn persisted")
    # Killed while a turn is claimed (the worker holds one while its rate limiter waits): the
    # restart must find that turn and judge it again. Killed between two claims, it would not.
    wait_until(lambda: _count(store, "SELECT count(*) FROM turns WHERE state = 'judged'") >= 3
               and _count(store, "SELECT count(*) FROM turns WHERE state = 'judging'") >= 1,
               what="a few judged, one being judged")
    sidecar.kill()
    judged_before = _count(store, "SELECT count(*) FROM turns WHERE state = 'judged'")
    assert judged_before < len(sent), "the kill must land while turns are still queued"

    restarted = SidecarProcess(tmp_path, "judging: {workers: 2}\n")
    wait_until(lambda: _count(store, "SELECT count(*) FROM turns WHERE state = 'judged'")
               == len(sent), what="every turn judged after the restart")
    assert restarted.stop() == 0
    with sqlite3.connect(store) as db:
        judged = [row[0] for row in db.execute("SELECT trace_id FROM judge_costs")]
        assert sorted(judged) == sorted(sent)  # each trace exactly once
        assert db.execute("SELECT count(*) FROM turns WHERE state != 'judged'").fetchone()[0] == 0
    assert "judging them again" in restarted.log.read_text() or judged_before + 1 == len(sent)


def _send_hostile_canaries(sidecar: SidecarProcess, canary: str) -> str:
    """The error paths of issue 12, each carrying the canary: wrong types, parser errors, lone
    surrogates, lying and truncated gzip, over HTTP and gRPC. Returns the replies' text."""
    from tests.hostile import TRACE_METHOD, GrpcSender, to_protobuf
    from tests.test_receivers import post

    def span(attrs: list[dict], trace: str = "0102030405060708090a0b0c0d0e0f12") -> dict:
        return {"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": trace, "spanId": "0102030405060708", "name": "n", "attributes": attrs}]}]}]}

    kv = lambda key, **value: {"key": key, "value": value}  # noqa: E731
    wrong_types = span([
        kv("gen_ai.operation.name", stringValue="chat"),
        kv("gen_ai.conversation.id", arrayValue={"values": [{"stringValue": canary}]}),
        kv("gen_ai.response.model", kvlistValue={"values": [kv(canary, stringValue=canary)]}),
        kv("gen_ai.input.messages", stringValue=json.dumps([
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": [canary],
                                        "response": canary}]}]))])
    bodies = [
        json.dumps(wrong_types).encode(),
        json.dumps(span([kv("k", intValue=canary)])).encode(),
        json.dumps(span([kv("k", stringValue=canary + "\ud800")])).encode(),
        json.dumps(span([kv(canary + "\udfff", stringValue="v")])).encode(),
        json.dumps(span([], trace=canary)).encode(),
    ]
    url = f"http://127.0.0.1:{sidecar.ports['http']}/v1/traces"
    replies = [post(url, body, "application/json")[1] for body in bodies]
    gzipped = gzip.compress(bodies[1])
    for body in (bodies[1], gzipped[: len(gzipped) // 2]):  # lying, then truncated gzip
        replies.append(post(url, body, "application/json", {"Content-Encoding": "gzip"})[1])
    grpc_send = GrpcSender(sidecar.grpc_endpoint)
    for body in (bodies[1], to_protobuf(wrong_types),
                 to_protobuf(span([kv("k", stringValue=canary + "~~~")])).replace(
                     b"~~~", b"\xed\xa0\x80")):
        grpc_send(TRACE_METHOD, body, False)
        replies.append(grpc_send.details.encode())
    grpc_send.close()
    return "".join(r.decode("utf-8", "replace") for r in replies)


def test_canary_never_reaches_metrics_or_logs(tmp_path: Path) -> None:
    canary = "CANARY-7f3a9e"
    sidecar = SidecarProcess(tmp_path)
    provider = provider_for(sidecar.grpc_endpoint)
    planted = [traffic.Case(case.kind, f"{case.question} {canary}",
                            tuple(f"{d} {canary}" for d in case.documents),
                            f"{case.answer} {canary}") for case in traffic.ALL]
    for case in planted:
        traffic.send(provider, case, route="support")
    provider.shutdown()
    wait_until(lambda: sample(sidecar.scrape(), "assistant_turns_judged_total") == len(planted),
               what="every canary turn judged")
    replies = _send_hostile_canaries(sidecar, canary)
    assert canary not in replies  # error details name the field, never the value
    metrics = sidecar.scrape() + sidecar.scrape("application/openmetrics-text")
    assert sidecar.stop() == 0
    logs = sidecar.log.read_text()
    assert "OTLP/gRPC receiver listening" in logs  # the logs at the default level were read
    assert canary not in metrics
    assert canary not in logs


def test_overload_keeps_memory_bounded_and_counts_every_drop(start_sidecar) -> None:
    sidecar = start_sidecar(
        judging={"workers": 1, "calls_per_minute": 120},
        sampling={"adaptive": {"low_watermark": 5, "high_watermark": 20, "min_factor": 0.1},
                  "max_backlog": 25})
    provider = provider_for(sidecar.grpc_endpoint)
    for i in range(300):
        traffic.send(provider, traffic.GROUNDED[i % 4], route="support")
    provider.shutdown()
    received = 300.0
    wait_until(lambda: sidecar.metric("assistant_turns_received_total", service="shop-bot",
                                      route="support") == received, what="all turns assembled")
    wait_until(lambda: not sidecar.sidecar.pipeline.busy, what="the turn queue drained")
    m = sidecar.metric
    sampled = m("assistant_turns_sampled_total", reason="rate")
    dropped = {r: m("assistant_turns_dropped_total", reason=r)
               for r in ("not_sampled", "backlog_full", "token_budget", "duplicate")}
    assert sampled + sum(dropped.values()) == received
    assert dropped["not_sampled"] > 0  # the sampler shed load as the backlog grew
    assert sampled <= 60  # far fewer than received: the judge could never keep up with 300
    assert sidecar.sidecar.store.backlog() <= 25
    assert m("assistant_sampling_factor") < 1.0


def test_turns_decided_against_are_counted_and_the_latest_still_shown(start_sidecar) -> None:
    """Sampling decides as turns are assembled, and a turn decided against never becomes a
    Python object, except the latest few, which /api/turns still shows. Nothing sampled here:
    every turn must be counted as received and as not sampled, none stored, and the admin
    endpoint must list the last `recent_turns` of them, newest last."""
    sidecar = start_sidecar(sampling={"default_rate": 0.0, "always_keep": []},
                            admin={"recent_turns": 3})
    provider = provider_for(sidecar.grpc_endpoint)
    sent = [traffic.send(provider, traffic.GROUNDED[i % 4]) for i in range(8)]
    provider.shutdown()
    wait_until(lambda: sidecar.metric("assistant_turns_dropped_total", reason="not_sampled") == 8,
               what="every turn decided against")
    assert sidecar.metric("assistant_turns_received_total", service="shop-bot",
                          route="support") == 8
    assert sidecar.metric("assistant_turns_sampled_total", reason="rate") == 0
    assert sidecar.sidecar.store.backlog() == 0
    shown = sidecar.get_json("/api/turns")
    assert [turn["trace_id"] for turn in shown] == sent[-3:]
    assert all(turn["answer"] for turn in shown)


def test_a_late_span_that_changes_a_judged_turn_has_it_judged_again(sidecar: RunningSidecar
                                                                     ) -> None:
    """A tool's span exported after its turn was judged (another process, a slow exporter): the
    turn is judged again as its next revision; `verdicts show` gives both judgements, and the
    metrics count the turn once."""
    provider = traffic.exporting_to(sidecar.grpc_endpoint, "shop-bot")
    tracer = provider.get_tracer("late")
    case = traffic.GROUNDED[0]
    with tracer.start_as_current_span("turn") as root:
        record.question(case.question, route="support")
        with tracer.start_as_current_span("retrieve"):
            record.retrieval(case.question, [{"id": "refunds", "content": case.documents[0]}])
        record.answer(case.answer, model="assistant-llm")
    trace_id = format(root.get_span_context().trace_id, "032x")
    store = Path(sidecar.sidecar.settings.store.path)
    wait_until(lambda: _count(store, "SELECT count(*) FROM turns WHERE state = 'judged'") == 1,
               what="the turn judged")
    with tracer.start_as_current_span("execute_tool lookup_refund",
                                      context=trace.set_span_in_context(root)):
        record.tool_call("lookup_refund", {"order": 7}, error="timeout")
    provider.shutdown()
    wait_until(lambda: _count(store, "SELECT count(*) FROM turns WHERE state = 'judged'"
                                     " AND revision = 1") == 1, what="revision 1 judged")

    assert sidecar.metric("assistant_turn_revisions_total", result="revised") == 1
    assert sidecar.metric("assistant_turns_received_total", service="shop-bot",
                          route="support") == 1
    assert sidecar.metric("assistant_turns_judged_total", service="shop-bot", route="support",
                          judge="local") == 1
    shown = sidecar.sidecar.store.sync.show(trace_id)
    assert [(c["name"], c["error"]) for c in shown["turn"]["tool_calls"]] == [
        ("lookup_refund", "timeout")]
    metrics = {v["metric"] for v in shown["verdicts"]}
    assert "groundedness" in metrics
    assert {v["metric"] for v in shown["earlier"] if v["revision"] == 0} == metrics - {
        "tool_calls", "goal_completion"}  # the first judgement read no tool call
    console = Console(width=200, record=True)
    console.print(turn_report(shown))
    report = console.export_text()
    assert "revision 1: late spans changed it after it was judged" in report
    assert "verdicts of earlier revisions" in report and "revision 0  groundedness" in report
    with urllib.request.urlopen(f"{sidecar.admin_url}/ui/turns/{trace_id}", timeout=10) as page:
        html = page.read().decode()
    assert '<dd id="revision">1: late spans changed the turn' in html
    assert "Verdicts of earlier revisions" in html and "revision 0 · groundedness" in html


def test_a_closed_session_is_listed_with_its_outcome_and_leads_to_its_turns(
        sidecar: RunningSidecar, tmp_path: Path) -> None:
    """A chat the app ends after the user asked for a person: the sessions page and `verdicts
    sessions` list it as escalated, and its stored turns are one link away."""
    provider = traffic.exporting_to(sidecar.grpc_endpoint, "shop-bot")
    tracer = provider.get_tracer("chat")
    for question, answer, end in (
            ("My card was charged twice for order 7.", "One of the two charges is a hold; it "
             "drops within 3 days.", False),
            ("That is not it. Let me talk to a human please.", "I am handing you to an agent.",
             True)):
        with tracer.start_as_current_span("turn"):
            record.question(question, route="billing")
            record.session("chat-77", end=end)
            record.answer(answer)
    provider.shutdown()

    def page(path: str) -> str:
        with urllib.request.urlopen(f"{sidecar.admin_url}{path}", timeout=10) as response:
            return str(response.read().decode())

    link = '<a href="/ui/turns?conversation=chat-77">2</a>'
    wait_until(lambda: link in page("/ui/sessions"), what="the session and its 2 stored turns")
    row = page("/ui/sessions?outcome=escalated").split('<td class="mono">chat-77</td>')[1]
    assert '<td class="bad">escalated</td>' in row.split("</tr>")[0]
    assert "chat-77" not in page("/ui/sessions?outcome=resolved")
    turns = page("/ui/turns?conversation=chat-77")
    assert len(re.findall(r'<a href="/ui/turns/[0-9a-f]{32}"', turns)) == 2
    with pytest.raises(urllib.error.HTTPError) as refused:
        page("/ui/sessions?outcome=happy")
    assert refused.value.code == 400 and "is not one of resolved" in refused.value.read().decode()

    config = tmp_path / "monitor.yaml"
    config.write_text(f"store: {{path: '{sidecar.sidecar.settings.store.path}'}}\n")

    def listed(*flags: str) -> list[dict[str, Any]]:
        done = subprocess.run([sys.executable, "-m", "monitor", "verdicts", "sessions", *flags,
                               "--json", "--config", str(config)],
                              capture_output=True, text=True, timeout=120, check=True)
        return list(json.loads(done.stdout))

    [session] = listed("--outcome", "escalated")
    assert (session["conversation_id"], session["turns"], session["person_requests"],
            session["closed"], session["stored"]) == ("chat-77", 2, 1, "ended", 2)
    assert [s["conversation_id"] for s in listed("--outcome", "escalated", "--service",
                                                 "shop-bot")] == ["chat-77"]
    assert listed("--service", "another-bot") == []
