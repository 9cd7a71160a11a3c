"""Hostile input (issue 12): wrong-typed values, parser-breaking bodies, lying encodings and
failing background tasks never stop the sidecar, never answer 5xx, and never log content."""

from __future__ import annotations

import copy
import gzip
import json
import logging
import socket
import sqlite3
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import status_pb2

from monitor.cli import ContentFreeFormatter
from monitor.model import ToolCall
from tests import traffic
from tests.conftest import RunningSidecar, SidecarProcess
from tests.hostile import (
    SURROGATES,
    TRACE,
    TRACE_METHOD,
    WRONG_TYPES,
    GrpcSender,
    json_body,
    to_protobuf,
)
from tests.test_pipeline import provider_for
from tests.test_receivers import post
from tests.waiting import wait_until

# Only the valid trace sent afterwards is judged: hostile turns are assembled, not sampled.
JUDGE_ONLY_SHOP_BOT = {"default_rate": 0.0, "service_rates": {"shop-bot": 1.0},
                       "always_keep": []}


def _with_trace(body: dict[str, Any], n: int) -> dict[str, Any]:
    body = copy.deepcopy(body)
    for rs in body["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                span["traceId"] = f"{n + 1:032x}"
    return body


def _total(sidecar: RunningSidecar, name: str) -> float:
    return sum(s.value for m in sidecar.registry.collect() for s in m.samples if s.name == name)


def _ready(sidecar: RunningSidecar) -> bool:
    try:
        with urllib.request.urlopen(f"{sidecar.admin_url}/readyz", timeout=5):
            return True
    except urllib.error.HTTPError as err:
        assert err.code == 503
        return False


def _judged_after(sidecar: RunningSidecar) -> None:
    """A valid trace sent now, through the real SDK exporter, is assembled and judged."""
    provider = provider_for(sidecar.grpc_endpoint)
    traffic.send(provider, traffic.GROUNDED[0])
    provider.shutdown()
    wait_until(lambda: _total(sidecar, "assistant_turns_judged_total") >= 1, timeout_s=90,
               what="the valid trace judged")


@pytest.mark.integration
@pytest.mark.parametrize("receiver", ["http", "grpc"])
def test_wrong_typed_values_are_counted_and_assembly_goes_on(start_sidecar, receiver: str
                                                             ) -> None:
    sidecar = start_sidecar(sampling=JUDGE_ONLY_SHOP_BOT)
    grpc_send = GrpcSender(sidecar.grpc_endpoint)
    for n, (name, body) in enumerate(WRONG_TYPES):
        body = _with_trace(body, n)
        if receiver == "http":
            status, reply, _ = post(f"{sidecar.http_url}/v1/traces", json_body(body),
                                    "application/json")
            assert status == 200, (name, reply)
        else:
            assert grpc_send(TRACE_METHOD, to_protobuf(body), False) == grpc.StatusCode.OK, name
    grpc_send.close()
    turns = {t.trace_id: t for t in sidecar.wait_for_turns(len(WRONG_TYPES))}
    assert len(turns) == len(WRONG_TYPES)

    def turn(name: str) -> Any:
        n = next(i for i, (case, _) in enumerate(WRONG_TYPES) if case == name)
        return turns[f"{n + 1:032x}"]

    assert turn("integer gen_ai.response.model").model == "5"  # coerced
    assert turn("array gen_ai.conversation.id").conversation_id is None  # dropped
    assert turn("integer OpenInference session.id").conversation_id == "7"
    assert turn("integer GenAI tool-call ids").tool_calls[0].call_id == "3"
    assert turn("integer OpenInference tool-call id").tool_calls[0].call_id == "9"
    assert turn("Infinity token counts").input_tokens == 0
    assert turn("tool arguments nested thousands deep").tool_calls[0].arguments is not None
    issues = "assistant_span_mapping_issues_total"
    for reason, at_least in (("model_coerced", 1), ("conversation_id_wrong_type", 1),
                             ("conversation_id_coerced", 1), ("tool_call_id_wrong_type", 2),
                             ("tool_call_id_coerced", 4), ("invalid_token_count", 2),
                             ("value_too_deep", 1)):
        assert sidecar.metric(issues, reason=reason) >= at_least, reason
    assert sidecar.metric("assistant_spans_refused_total", reason="mapping_error") == 0
    assert _total(sidecar, "assistant_background_task_failures_total") == 0
    assert _ready(sidecar)
    _judged_after(sidecar)


@pytest.mark.integration
def test_a_lone_surrogate_escaped_in_json_content_is_replaced_and_its_batch_judged(
        sidecar: RunningSidecar) -> None:
    """An assistant that cut an emoji in half: json.dumps writes the lone surrogate as \\ud83d,
    so the span is valid UTF-8, but the mapper's JSON reader brings the surrogate back. UTF-8
    cannot encode it: storing the sampled turn raised, and the turns passed on with it in one
    batch were never judged."""
    provider = provider_for(sidecar.grpc_endpoint)
    tracer = provider.get_tracer("cut-emoji")
    with tracer.start_as_current_span("chat") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.input.messages", json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": "Is the \ud83d plan free?"}]}]))
        span.set_attribute("gen_ai.output.messages", json.dumps([
            {"role": "assistant", "parts": [{"type": "text", "content": "Yes \udc4d"}]}]))
        span.set_attribute("gen_ai.tool.name", "lookup")
        span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"plan\udfff": "\ud83d"}))
        cut = format(span.get_span_context().trace_id, "032x")
    others = [traffic.send(provider, case) for case in traffic.GROUNDED[:3]]
    provider.shutdown()  # one export: the four turns arrive, and are passed on, together
    wait_until(lambda: _total(sidecar, "assistant_turns_judged_total") == 4, timeout_s=90,
               what="the cut-emoji turn and the three sent with it judged")
    turn = {t.trace_id: t for t in sidecar.turns()}[cut]
    assert turn.question == "Is the \ufffd plan free?"  # each lone surrogate: U+FFFD
    assert turn.answer == "Yes \ufffd"
    assert turn.tool_calls[0].arguments == {"plan\ufffd": "\ufffd"}
    assert sidecar.metric("assistant_span_mapping_issues_total", reason="lone_surrogate") == 3
    assert {t.trace_id for t in sidecar.turns()} >= {cut, *others}
    assert sidecar.metric("assistant_turns_lost_total") == 0


@pytest.mark.integration
def test_an_integer_python_cannot_read_stays_text_and_its_batch_is_judged(
        sidecar: RunningSidecar) -> None:
    """Tool arguments holding an integer of 5,000 digits: the mapper's JSON reader took it,
    where Python refuses integers of more than 4,300 digits. Building the turn for /api/turns
    raised, and every turn completed with it was lost; a kept turn was stored as JSON that no
    judge could read. Refused as json.loads refuses it, the arguments stay the text they were."""
    arguments = '{"order": ' + "9" * 5000 + "}"
    provider = provider_for(sidecar.grpc_endpoint)
    with provider.get_tracer("huge-int").start_as_current_span("execute_tool lookup") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", "lookup")
        span.set_attribute("gen_ai.tool.call.arguments", arguments)
        huge = format(span.get_span_context().trace_id, "032x")
    others = [traffic.send(provider, case) for case in traffic.GROUNDED[:3]]
    provider.shutdown()  # one export: the four turns arrive, and are passed on, together
    wait_until(lambda: _total(sidecar, "assistant_turns_judged_total") == 4, timeout_s=90,
               what="the huge-integer turn and the three sent with it judged")
    turns = {t.trace_id: t for t in sidecar.turns()}
    assert turns[huge].tool_calls[0].arguments == arguments
    assert set(turns) >= {huge, *others}
    assert _total(sidecar, "assistant_background_task_failures_total") == 0
    assert sidecar.metric("assistant_turns_lost_total") == 0


@pytest.mark.integration
def test_turns_a_failing_stage_loses_are_counted_and_the_pipeline_goes_on(
        start_sidecar, caplog: pytest.LogCaptureFixture) -> None:
    class FailsOnFirstBatch:  # fault injection: a stage that raises, quoting content
        def __init__(self) -> None:
            self.batches: list[int] = []

        async def consume(self, turns: list[Any]) -> None:
            self.batches.append(len(turns))
            if len(self.batches) == 1:
                raise ValueError(f"cannot take {turns[0].question} CANARY-4b1c")

    stage = FailsOnFirstBatch()
    sidecar = start_sidecar(downstream=stage)
    provider = provider_for(sidecar.grpc_endpoint)
    traffic.send(provider, traffic.GROUNDED[0])
    provider.force_flush()
    wait_until(lambda: sidecar.metric("assistant_turns_lost_total") == 1, what="a lost turn")
    traffic.send(provider, traffic.GROUNDED[1])
    provider.shutdown()
    wait_until(lambda: len(stage.batches) == 2, what="the next turn passed on")
    assert sidecar.metric("assistant_turns_lost_total") == 1
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "downstream stage failed on 1 turns: ValueError" in logged
    assert "CANARY" not in logged


@pytest.mark.integration
def test_parser_breaking_bodies_answer_4xx_without_echoing_the_value(sidecar: RunningSidecar
                                                                     ) -> None:
    canary = "CANARY-3b1d"
    bodies = [body for _, body in SURROGATES] + [
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": TRACE, "spanId": "01" * 8,
                                                       "attributes": [{"key": "k", "value": {
                                                           "intValue": canary}}]}]}]}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": canary}]}]}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": TRACE, "spanId": "01" * 8,
                                                       "startTimeUnixNano": float("inf")}]}]}]},
    ]
    for body in bodies:
        status, reply, headers = post(f"{sidecar.http_url}/v1/traces", json_body(body),
                                      "application/json")
        assert status == 400, reply
        message = json.loads(reply)["message"]
        assert "JSON is not an OTLP" in message or "not a hex string" in message
        assert canary not in message and "\\ud800" not in message
    # gRPC: a string that is not UTF-8 (an encoded lone surrogate) in the protobuf.
    body = to_protobuf(WRONG_TYPES[0][1]).replace(b"chat", b"c\xed\xa0\x80")
    sender = GrpcSender(sidecar.grpc_endpoint)
    assert sender(TRACE_METHOD, body, False) == grpc.StatusCode.INVALID_ARGUMENT
    sender.close()
    status, _, _ = post(f"{sidecar.http_url}/v1/traces",
                        json_body(_with_trace(WRONG_TYPES[0][1], 99)), "application/json")
    assert status == 200
    assert sidecar.wait_for_turns(1)


def _raw_post(port: int, body: bytes, headers: dict[str, str]) -> tuple[int, str, bool]:
    """POST on a raw socket: (status, response head, whether the server then closed)."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
                  f"{head}\r\n".encode() + body)
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head_text, _, rest = data.partition(b"\r\n\r\n")
        length = int(next(line.split(":")[1] for line in head_text.decode().split("\r\n")
                          if line.lower().startswith("content-length")))
        while len(rest) < length:
            rest += s.recv(65536)
        closed = s.recv(1) == b""
    return int(head_text.split()[1]), head_text.decode(), closed


@pytest.mark.integration
def test_content_encodings(sidecar: RunningSidecar, caplog: pytest.LogCaptureFixture) -> None:
    body = json_body(_with_trace(WRONG_TYPES[0][1], 0))
    port = sidecar.sidecar.http.port  # type: ignore[union-attr]
    caplog.set_level(logging.INFO)
    # A body that lies about being gzip: 400, and the connection is closed cleanly.
    status, head, closed = _raw_post(port, body, {"Content-Type": "application/json",
                                                  "Content-Encoding": "gzip"})
    assert (status, closed) == (400, True)
    # Truncated gzip is refused, not accepted.
    status, reply, _ = post(f"{sidecar.http_url}/v1/traces", gzip.compress(body)[:-12],
                            "application/json", {"Content-Encoding": "gzip"})
    assert status == 400 and "truncated" in json.loads(reply)["message"]
    # Unknown encodings, br and zstd included: 415 in the OTLP Status format, counted.
    for encoding in ("br", "zstd", "compress", "x-unknown"):
        status, reply, _ = post(f"{sidecar.http_url}/v1/traces", body,
                                "application/x-protobuf", {"Content-Encoding": encoding})
        assert status == 415
        assert "unsupported Content-Encoding" in status_pb2.Status.FromString(reply).message
    assert sidecar.metric("assistant_receiver_requests_total", receiver="http", signal="traces",
                          outcome="unsupported_encoding") == 4
    assert sidecar.metric("assistant_receiver_requests_total", receiver="http", signal="traces",
                          outcome="bad_encoding") == 2
    # A gzip bomb (64 MiB of zeros in 64 KiB) stops at the 16 MiB limit, and closes.
    bomb = gzip.compress(bytes(64 << 20), compresslevel=1)
    status, head, closed = _raw_post(port, bomb, {"Content-Type": "application/x-protobuf",
                                                  "Content-Encoding": "gzip"})
    assert (status, closed) == (413, True)
    # Good gzip still works, and nothing was logged at ERROR.
    status, _, _ = post(f"{sidecar.http_url}/v1/traces", gzip.compress(body),
                        "application/json", {"Content-Encoding": "gzip"})
    assert status == 200
    assert sidecar.wait_for_turns(1)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.integration
def test_a_failed_background_task_is_logged_counted_and_restarted(
        start_sidecar, caplog: pytest.LogCaptureFixture) -> None:
    sidecar = start_sidecar(sampling=JUDGE_ONLY_SHOP_BOT)
    assembler = sidecar.sidecar.pipeline.assembler
    expire = assembler.expire
    failures = []

    def failing_once(backlog: int = 0) -> Any:  # fault injection: the tick's stage fails once
        if not failures:
            failures.append(1)
            ToolCall(name="x", call_id=["CANARY-9d2e"])  # a pydantic error quoting content
        return expire(backlog)

    assembler.expire = failing_once  # type: ignore[method-assign]
    wait_until(lambda: not _ready(sidecar), timeout_s=10, what="/readyz false while down")
    wait_until(lambda: _ready(sidecar), timeout_s=10, what="/readyz true once restarted")
    assert sidecar.metric("assistant_background_task_failures_total",
                          task="assembly-tick") == 1
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "background task assembly-tick failed (ValidationError)" in logged
    assert "CANARY" not in logged
    _judged_after(sidecar)  # the restarted tick completes turns again


@pytest.mark.unit
def test_tracebacks_are_logged_without_exception_text() -> None:
    try:
        ToolCall(name="x", call_id=["CANARY-51aa"])
    except Exception:
        record = logging.LogRecord("t", logging.ERROR, __file__, 1, "failed", None,
                                   sys.exc_info())
    text = ContentFreeFormatter("%(message)s").format(record)
    assert "ValidationError (message withheld)" in text
    assert "test_hostile_input.py" in text  # the frames are kept
    assert "CANARY" not in text


@pytest.mark.integration
def test_sigterm_persists_buffered_turns_after_hostile_input(tmp_path: Path) -> None:
    sidecar = SidecarProcess(tmp_path, "assembly: {root_grace_s: 0.2, decision_wait_s: 300}\n"
                                       "judging: {workers: 1}\n")
    url = f"http://127.0.0.1:{sidecar.ports['http']}/v1/traces"
    for n, (_, body) in enumerate(WRONG_TYPES):
        assert post(url, json_body(_with_trace(body, n)), "application/json")[0] == 200
    # A root-less turn: it waits in the assembly buffer until SIGTERM completes it.
    buffered = _with_trace(WRONG_TYPES[0][1], 500)
    buffered["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["parentSpanId"] = "0a" * 8
    assert post(url, json_body(buffered), "application/json")[0] == 200
    wait_until(lambda: "assistant_turns_received_total" in sidecar.scrape() and sum(
        float(line.split()[-1]) for line in sidecar.scrape().splitlines()
        if line.startswith("assistant_turns_received_total")) >= len(WRONG_TYPES),
        what="the hostile turns assembled")
    assert sidecar.stop() == 0
    with sqlite3.connect(sidecar.store_path) as db:
        stored = {row[0] for row in db.execute("SELECT trace_id FROM turns")}
    assert f"{501:032x}" in stored
    assert len(stored) == len(WRONG_TYPES) + 1
    log = sidecar.log.read_text()
    assert "Traceback" not in log and "failed" not in log
