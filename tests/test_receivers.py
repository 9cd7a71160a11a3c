"""OTLP receivers, driven by the real OpenTelemetry SDK exporters (gRPC and HTTP, with and without gzip)."""

from __future__ import annotations

import asyncio
import gzip
import json
import select
import threading
import time
import urllib.error
import urllib.request

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from prometheus_client import CollectorRegistry

from exporters import record
from monitor.config import GrpcReceiverSettings, TLSSettings
from monitor.ingest.grpc_receiver import GrpcReceiver
from monitor.ingest.intake import Intake
from monitor.ingest.otlp import OtlpDecoder
from monitor.ingest.telemetry import IngestTelemetry
from tests.conftest import RunningSidecar

DOCS = [
    {"id": "kb-1", "content": "Refunds are issued within 30 days of purchase.", "score": 0.91},
    {"id": "kb-2", "content": "Express shipping takes 1 day.", "score": 0.42},
]


def send_rag_turn(exporter: SpanExporter, resource: dict[str, str] | None = None) -> str:
    """One RAG turn (retrieval, a tool call, an answer) through a real SDK pipeline."""
    provider = TracerProvider(resource=Resource.create(resource or {"service.name": "shop-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("turn") as root:
        record.question("How long do refunds take?", route="support")
        with tracer.start_as_current_span("retrieve"):
            record.retrieval("refund time", DOCS, data_source="kb")
        with tracer.start_as_current_span("execute_tool lookup_order"):
            record.tool_call("lookup_order", {"order_id": "A-7"}, result={"status": "paid"},
                             call_id="call-1")
        record.answer("Refunds are issued within 30 days.", model="llama-3-8b")
        record.feedback(-1.0, comment="too vague")
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id


def assert_rag_turn(sidecar: RunningSidecar, trace_id: str) -> None:
    turns = [t for t in sidecar.wait_for_turns(1) if t.trace_id == trace_id]
    assert len(turns) == 1
    turn = turns[0]
    assert turn.service == "shop-bot"
    assert turn.route == "support"
    assert turn.question == "How long do refunds take?"
    assert turn.answer == "Refunds are issued within 30 days."
    assert turn.model == "llama-3-8b"
    assert [(d.id, d.content, d.score) for d in turn.documents] == [
        (d["id"], d["content"], d["score"]) for d in DOCS]
    assert len(turn.tool_calls) == 1
    call = turn.tool_calls[0]
    assert (call.name, call.arguments, call.result, call.call_id, call.error) == (
        "lookup_order", {"order_id": "A-7"}, {"status": "paid"}, "call-1", None)
    assert turn.feedback is not None and turn.feedback.score == -1.0
    assert turn.feedback.comment == "too vague"
    assert turn.span_count == 3
    assert turn.completion == "root_ended"
    assert turn.duration_ms > 0
    assert set(turn.conventions) == {"assistant", "genai"}


@pytest.mark.integration
@pytest.mark.parametrize("compression", [grpc.Compression.NoCompression, grpc.Compression.Gzip])
def test_grpc_exporter_turn(sidecar: RunningSidecar, compression: grpc.Compression) -> None:
    trace_id = send_rag_turn(GrpcExporter(endpoint=sidecar.grpc_endpoint, insecure=True,
                                          compression=compression))
    assert_rag_turn(sidecar, trace_id)
    assert sidecar.metric("assistant_spans_received_total", receiver="grpc") == 3
    assert sidecar.metric("assistant_turns_received_total", service="shop-bot", route="support") == 1


@pytest.mark.integration
@pytest.mark.parametrize("compression", [HttpCompression.NoCompression, HttpCompression.Gzip])
def test_http_exporter_turn(sidecar: RunningSidecar, compression: HttpCompression) -> None:
    trace_id = send_rag_turn(HttpExporter(endpoint=f"{sidecar.http_url}/v1/traces",
                                          compression=compression))
    assert_rag_turn(sidecar, trace_id)
    assert sidecar.metric("assistant_receiver_requests_total", receiver="http", signal="traces",
                          outcome="accepted") == 3


def _otlp_json_span(trace_id: str = "5b8efff798038103d269b633813fc60c",
                    span_id: str = "eee19b7ec3c1b174") -> dict:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "json-bot"}}]},
        "scopeSpans": [{"spans": [{
            "traceId": trace_id, "spanId": span_id, "name": "turn", "kind": 2,
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
            "attributes": [
                {"key": "assistant.question", "value": {"stringValue": "Where is my parcel?"}},
                {"key": "assistant.answer", "value": {"stringValue": "It ships tomorrow."}},
                {"key": "gen_ai.retrieval.documents", "value": {"stringValue": json.dumps(
                    [{"id": "d1", "content": "Parcels ship in 24h.", "score": 0.8}])}},
            ],
            "status": {"code": 1},
        }]}],
    }]}


def post(url: str, body: bytes, content_type: str, headers: dict[str, str] | None = None
         ) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": content_type, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read(), dict(err.headers)


@pytest.mark.integration
def test_http_otlp_json_with_hex_ids(sidecar: RunningSidecar) -> None:
    body = json.dumps(_otlp_json_span()).encode()
    status, reply, headers = post(f"{sidecar.http_url}/v1/traces", gzip.compress(body),
                                  "application/json", {"Content-Encoding": "gzip"})
    assert status == 200, reply
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(reply) == {"partialSuccess": {}}
    turn = sidecar.wait_for_turns(1)[0]
    assert turn.trace_id == "5b8efff798038103d269b633813fc60c"
    assert (turn.service, turn.question, turn.answer) == (
        "json-bot", "Where is my parcel?", "It ships tomorrow.")
    assert turn.documents[0].model_dump() == {"id": "d1", "content": "Parcels ship in 24h.",
                                              "score": 0.8}


@pytest.mark.integration
def test_partial_success_counts_invalid_spans(sidecar: RunningSidecar) -> None:
    payload = _otlp_json_span()
    spans = payload["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans.append(dict(spans[0], traceId="00000000000000000000000000000000"))
    spans.append(dict(spans[0], spanId="abcd"))
    status, reply, _ = post(f"{sidecar.http_url}/v1/traces", json.dumps(payload).encode(),
                            "application/json")
    assert status == 200
    partial = json.loads(reply)["partialSuccess"]
    assert partial["rejectedSpans"] == "2"  # int64 is a string in proto3 JSON
    assert "trace_id must be 16 non-zero bytes" in partial["errorMessage"]
    assert "span_id must be 8 non-zero bytes" in partial["errorMessage"]
    assert sidecar.wait_for_turns(1)[0].span_count == 1
    assert sidecar.metric("assistant_spans_refused_total", reason="invalid_trace_id") == 1
    assert sidecar.metric("assistant_spans_refused_total", reason="invalid_span_id") == 1


def _bad_bodies() -> list[tuple[str, bytes, str, int, str]]:
    good = ExportTraceServiceRequest()
    good.resource_spans.add().scope_spans.add().spans.add(
        trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)), name="x" * 50)
    raw = good.SerializeToString()
    return [
        ("truncated protobuf", raw[:-7], "application/x-protobuf", 400, "malformed protobuf"),
        ("wrong JSON", b'{"resourceSpans": [', "application/json", 400, "malformed JSON"),
        ("JSON of the wrong shape", b'{"resourceSpans": {"a": 1}}', "application/json", 400,
         "resourceSpans: expected an array"),
        ("JSON with a bad field", b'{"resourceSpans": [{"scopeSpans": [{"spans": '
         b'[{"traceId": "5b8efff798038103d269b633813fc60c", "startTimeUnixNano": "soon"}]}]}]}',
         "application/json", 400, "JSON is not an OTLP ExportTraceServiceRequest"),
        ("non-hex ids", b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}',
         "application/json", 400, "spans[0].traceId: not a hex string"),
        ("deeply nested JSON", b"[" * 100_000 + b"]" * 100_000, "application/json", 400,
         "nested too deeply"),
        ("wrong content type", raw, "text/plain", 415, "unsupported Content-Type 'text/plain'"),
    ]


@pytest.mark.integration
@pytest.mark.parametrize("case", _bad_bodies(), ids=lambda c: c[0])
def test_http_malformed_bodies(sidecar: RunningSidecar, case: tuple) -> None:
    _, body, content_type, expected_status, expected_message = case
    status, reply, headers = post(f"{sidecar.http_url}/v1/traces", body, content_type)
    assert status == expected_status
    if headers["Content-Type"].startswith("application/x-protobuf"):
        message = status_pb2.Status.FromString(reply).message
    else:
        message = json.loads(reply)["message"]
    assert expected_message in message
    # The server keeps serving.
    status, _, _ = post(f"{sidecar.http_url}/v1/traces", json.dumps(_otlp_json_span()).encode(),
                        "application/json")
    assert status == 200
    assert sidecar.wait_for_turns(1)


@pytest.mark.integration
def test_http_gzip_that_is_not_gzip(sidecar: RunningSidecar) -> None:
    status, reply, _ = post(f"{sidecar.http_url}/v1/traces", b"plain bytes", "application/json",
                            {"Content-Encoding": "gzip"})
    assert status == 400
    assert "body is not valid gzip" in json.loads(reply)["message"]


@pytest.mark.integration
def test_http_body_too_large(start_sidecar) -> None:
    sidecar = start_sidecar(receivers={"http": {"endpoint": "127.0.0.1:0",
                                                "max_request_body_size_mib": 1}})
    status, reply, _ = post(f"{sidecar.http_url}/v1/traces", b"{" + b" " * (2 << 20) + b"}",
                            "application/json")
    assert status == 413
    assert "exceeds 1 MiB" in json.loads(reply)["message"]


@pytest.mark.integration
def test_huge_and_deep_attribute_values_are_cut_and_counted(start_sidecar) -> None:
    sidecar = start_sidecar(receivers={"max_attribute_length": 1000, "max_value_depth": 4})
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add(
        trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)), name="turn")
    span.attributes.add(key="assistant.answer").value.string_value = "A" * 5000
    span.attributes.add(key="gen_ai.tool.name").value.string_value = "search"
    nested = span.attributes.add(key="gen_ai.tool.call.arguments").value
    for _ in range(20):
        nested = nested.array_value.values.add()
    nested.string_value = "bottom"
    status, _, _ = post(f"{sidecar.http_url}/v1/traces", request.SerializeToString(),
                        "application/x-protobuf")
    assert status == 200
    turn = sidecar.wait_for_turns(1)[0]
    assert turn.answer == "A" * 1000
    assert turn.tool_calls[0].arguments == [[[[None]]]]  # cut at max_value_depth
    assert sidecar.metric("assistant_span_mapping_issues_total", reason="value_truncated") == 1
    assert sidecar.metric("assistant_span_mapping_issues_total", reason="value_too_deep") == 1


def _grpc_export(endpoint: str, body: bytes, metadata: tuple = ()) -> bytes:
    with grpc.insecure_channel(endpoint) as channel:
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
            request_serializer=lambda b: b, response_deserializer=lambda b: b)
        return export(body, metadata=metadata, timeout=10)


@pytest.mark.integration
def test_grpc_truncated_protobuf_is_invalid_argument(sidecar: RunningSidecar) -> None:
    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.add(
        trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)), name="turn")
    raw = request.SerializeToString()
    with pytest.raises(grpc.RpcError) as err:
        _grpc_export(sidecar.grpc_endpoint, raw[:-5])
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "malformed protobuf" in err.value.details()
    reply = ExportTraceServiceResponse.FromString(_grpc_export(sidecar.grpc_endpoint, raw))
    assert reply.partial_success.rejected_spans == 0
    assert sidecar.wait_for_turns(1)


@pytest.mark.integration
def test_grpc_message_over_the_limit_is_not_retried(start_sidecar) -> None:
    """RESOURCE_EXHAUSTED without RetryInfo: OTLP exporters give the request up. (tonic's own
    answer, OUT_OF_RANGE, is one they retry for ever.) Then the next request is served."""
    sidecar = start_sidecar(receivers={"grpc": {"endpoint": "127.0.0.1:0",
                                                "max_recv_msg_size_mib": 1}})
    with pytest.raises(grpc.RpcError) as err:
        _grpc_export(sidecar.grpc_endpoint, b"\n" + b"\xff" * (2 << 20))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "grpc-status-details-bin" not in dict(err.value.trailing_metadata() or ())
    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.add(
        trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)), name="turn")
    _grpc_export(sidecar.grpc_endpoint, request.SerializeToString())
    assert sidecar.wait_for_turns(1)


@pytest.mark.unit
def test_a_call_queued_as_the_grpc_receiver_stops_is_still_answered() -> None:
    """The server's thread hands calls over until it has stopped: one that arrived just before
    `stop` is served, so the stop does not wait out its grace period for it."""

    class Sink:  # the pipeline's interface, taking everything
        def __init__(self) -> None:
            self.accepted = 0

        def admit(self) -> None: ...

        def accept(self, batch: object, *_: object) -> None:
            self.accepted += 1

    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.add(
        trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9)), name="turn")
    replies: list[bytes] = []
    sink = Sink()

    async def scenario() -> float:
        decoder = OtlpDecoder(max_attribute_length=1000, max_value_depth=8)
        intake = Intake("grpc", decoder, sink,  # type: ignore[arg-type]
                        IngestTelemetry(CollectorRegistry()))
        receiver = GrpcReceiver(GrpcReceiverSettings(endpoint="127.0.0.1:0"), TLSSettings(),
                                intake)
        await receiver.start()
        client = threading.Thread(target=lambda: replies.append(_grpc_export(
            f"127.0.0.1:{receiver.port}", request.SerializeToString())))
        client.start()
        # The loop held (no await) until the call is queued, then told to stop first.
        assert receiver._server is not None
        assert select.select([receiver._server.wake_fd], [], [], 30)[0], "no call arrived"
        started = time.monotonic()
        await receiver.stop(grace_s=30)
        await asyncio.to_thread(client.join, 30)
        return time.monotonic() - started

    took = asyncio.run(scenario())
    assert sink.accepted == 1 and len(replies) == 1
    assert ExportTraceServiceResponse.FromString(replies[0]).partial_success.rejected_spans == 0
    assert took < 15, f"the stop waited {took:.1f} s for a call it held"


@pytest.mark.integration
def test_grpc_unknown_method_is_unimplemented(sidecar: RunningSidecar) -> None:
    with grpc.insecure_channel(sidecar.grpc_endpoint) as channel:
        for method in ("/opentelemetry.proto.collector.trace.v1.TraceService/Import",
                       "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"):
            call = channel.unary_unary(method, request_serializer=lambda b: b,
                                       response_deserializer=lambda b: b)
            with pytest.raises(grpc.RpcError) as err:
                call(b"", timeout=10)
            assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED, method


@pytest.mark.integration
def test_bearer_token_required(start_sidecar) -> None:
    sidecar = start_sidecar(receivers={"bearer_token": "s3cret"})
    body = json.dumps(_otlp_json_span()).encode()
    status, reply, _ = post(f"{sidecar.http_url}/v1/traces", body, "application/json")
    assert status == 401 and "bearer token" in json.loads(reply)["message"]
    with pytest.raises(grpc.RpcError) as err:
        _grpc_export(sidecar.grpc_endpoint, b"", (("authorization", "Bearer wrong"),))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    status, _, _ = post(f"{sidecar.http_url}/v1/traces", body, "application/json",
                        {"Authorization": "Bearer s3cret"})
    assert status == 200
    trace_id = send_rag_turn(GrpcExporter(endpoint=sidecar.grpc_endpoint, insecure=True,
                                          headers={"authorization": "Bearer s3cret"}))
    assert any(t.trace_id == trace_id for t in sidecar.wait_for_turns(2))
    with pytest.raises(urllib.error.HTTPError) as http_err:
        sidecar.get_json("/api/turns")
    assert http_err.value.code == 401
    assert len(sidecar.get_json("/api/turns", {"Authorization": "Bearer s3cret"})) == 2


@pytest.mark.integration
def test_other_tenants_spans_are_refused(start_sidecar) -> None:
    sidecar = start_sidecar(tenant_id="acme")
    exporter = HttpExporter(endpoint=f"{sidecar.http_url}/v1/traces")
    send_rag_turn(exporter, {"service.name": "shop-bot", "tenant.id": "globex"})
    ours = send_rag_turn(HttpExporter(endpoint=f"{sidecar.http_url}/v1/traces"),
                         {"service.name": "shop-bot", "tenant.id": "acme"})
    turns = sidecar.wait_for_turns(1)
    assert [t.trace_id for t in turns] == [ours] and turns[0].tenant == "acme"
    assert sidecar.metric("assistant_spans_refused_total", reason="tenant_mismatch") == 3
    status, reply, _ = post(f"{sidecar.http_url}/v1/traces", json.dumps(_otlp_json_span()).encode(),
                            "application/json")
    partial = json.loads(reply)["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "missing tenant.id" in partial["errorMessage"]


class BlockedStage:
    """A downstream stage that takes a batch of turns and then waits until released (a stuck
    judge)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.taken = 0

    async def consume(self, turns: object) -> None:
        self.taken += 1
        await self.release.wait()


def _wait(condition, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


@pytest.mark.integration
def test_backpressure_is_retryable(start_sidecar) -> None:
    stage = BlockedStage()
    sidecar = start_sidecar(downstream=stage, pipeline={"turn_queue_size": 1})
    url = f"{sidecar.http_url}/v1/traces"
    trace_ids = [f"{n:032x}" for n in range(1, 4)]
    assert post(url, json.dumps(_otlp_json_span(trace_ids[0])).encode(), "application/json")[0] == 200
    _wait(lambda: stage.taken == 1)  # the stage holds turn 1
    assert post(url, json.dumps(_otlp_json_span(trace_ids[1])).encode(), "application/json")[0] == 200
    _wait(lambda: sidecar.metric("assistant_queue_depth", stage="turns") == 1)  # turn 2 waits

    body = json.dumps(_otlp_json_span(trace_ids[2])).encode()
    status, reply, headers = post(url, body, "application/json")
    assert status == 429 and headers["Retry-After"] == "1"
    assert "queue is full" in json.loads(reply)["message"]
    with pytest.raises(grpc.RpcError) as err:
        _grpc_export(sidecar.grpc_endpoint, b"")
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    details = dict(err.value.trailing_metadata())["grpc-status-details-bin"]
    retry = error_details_pb2.RetryInfo()
    assert status_pb2.Status.FromString(details).details[0].Unpack(retry)
    assert retry.retry_delay.seconds == 1
    assert sidecar.metric("assistant_receiver_requests_total", receiver="http", signal="traces",
                          outcome="overloaded") == 1

    sidecar.call(_set(stage.release))  # the stage recovers; the client's retry is accepted
    _wait(lambda: sidecar.metric("assistant_queue_depth", stage="turns") == 0)
    assert post(url, body, "application/json")[0] == 200
    assert [t.trace_id for t in sidecar.wait_for_turns(3)] == trace_ids


@pytest.mark.integration
def test_the_turn_queue_is_bounded_by_its_bytes_too(start_sidecar) -> None:
    """A stalled stage and large turns: the queue refuses new requests once it holds its byte
    budget, far below its count (10,000 turns), and a retry is accepted once the stage recovers."""
    stage = BlockedStage()
    sidecar = start_sidecar(downstream=stage, pipeline={"turn_queue_max_mib": 2})
    url = f"{sidecar.http_url}/v1/traces"

    # A 600 KB answer: a turn waits as the stage's turn and as /api/turns' record, 1.2 MB.
    def large_turn(n: int) -> bytes:
        request = _otlp_json_span(f"{n:032x}")
        span = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        span["attributes"][1]["value"]["stringValue"] = "It ships tomorrow. " * 32_000
        return json.dumps(request).encode()

    assert post(url, large_turn(1), "application/json")[0] == 200
    _wait(lambda: stage.taken == 1)  # the stage holds turn 1
    for n, depth in ((2, 1), (3, 2)):  # under 2 MiB waiting: accepted
        assert post(url, large_turn(n), "application/json")[0] == 200
        _wait(lambda depth=depth: sidecar.metric("assistant_queue_depth", stage="turns") == depth)

    status, reply, headers = post(url, large_turn(4), "application/json")
    assert status == 429 and headers["Retry-After"] == "1"
    assert "turn queue is full (2 MiB of turns)" in json.loads(reply)["message"]

    sidecar.call(_set(stage.release))
    _wait(lambda: sidecar.metric("assistant_queue_depth", stage="turns") == 0)
    assert post(url, large_turn(4), "application/json")[0] == 200
    assert [t.trace_id for t in sidecar.wait_for_turns(4)] == [f"{n:032x}" for n in range(1, 5)]


async def _set(event: asyncio.Event) -> None:
    event.set()


@pytest.mark.integration
def test_tls_on_both_receivers(start_sidecar, tmp_path, monkeypatch) -> None:
    import subprocess

    # requests prefers these over the exporter's certificate_file; this machine sets them.
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    sidecar = start_sidecar(receivers={"tls": {"cert_file": str(cert), "key_file": str(key)}})
    trace_id = send_rag_turn(GrpcExporter(endpoint=sidecar.grpc_endpoint, insecure=False,
                                          credentials=grpc.ssl_channel_credentials(
                                              cert.read_bytes())))
    https = HttpExporter(endpoint=f"{sidecar.http_url.replace('http:', 'https:')}/v1/traces",
                         certificate_file=str(cert))
    second = send_rag_turn(https)
    assert {t.trace_id for t in sidecar.wait_for_turns(2)} == {trace_id, second}
    with pytest.raises((urllib.error.URLError, ConnectionError)):  # plain HTTP is not served
        urllib.request.urlopen(f"{sidecar.http_url}/v1/traces", data=b"{}", timeout=5)
