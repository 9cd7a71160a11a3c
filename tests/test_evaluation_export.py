"""Verdicts back into the trace: `gen_ai.evaluation.result` events reach a real OTLP receiver,
in the context of the judged turn's root span."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.sdk.trace import SpanProcessor

from monitor.config import EvaluationExportSettings
from tests import traffic
from tests.conftest import free_port
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import ScriptedOpenAIServer
from tests.test_pipeline import provider_for
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


class Received:
    """Log records a receiver got, as (trace id, span id, event name, attributes)."""

    def __init__(self) -> None:
        self.records: list[tuple[str, str, str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def add(self, request: logs_service_pb2.ExportLogsServiceRequest) -> None:
        with self.lock:
            for resource_logs in request.resource_logs:
                for scope_logs in resource_logs.scope_logs:
                    for r in scope_logs.log_records:
                        attributes = {a.key: getattr(a.value, a.value.WhichOneof("value"))
                                      for a in r.attributes}
                        self.records.append((r.trace_id.hex(), r.span_id.hex(), r.event_name,
                                             attributes))

    def for_trace(self, trace_id: str) -> list[tuple[str, str, str, dict[str, Any]]]:
        with self.lock:
            return [r for r in self.records if r[0] == trace_id]


class _LogsService(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, received: Received) -> None:
        self.received = received

    def Export(self, request, context):  # noqa: N802 - the generated service's name
        self.received.add(request)
        return logs_service_pb2.ExportLogsServiceResponse()


@pytest.fixture
def grpc_receiver() -> Iterator[tuple[str, Received]]:
    received = Received()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_LogsService(received), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"http://127.0.0.1:{port}", received
    server.stop(grace=None)


@pytest.fixture
def http_receiver() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = logs_service_pb2.ExportLogsServiceRequest()
            request.ParseFromString(body)
            received.add(request)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()
            self.wfile.write(logs_service_pb2.ExportLogsServiceResponse().SerializeToString())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1/logs", received
    server.shutdown()


def _send_turn(sidecar, case: traffic.Case) -> tuple[str, str]:
    """One turn over real OTLP; its trace id and root span id."""
    provider = provider_for(sidecar.grpc_endpoint)
    spans = []

    class Keep(SpanProcessor):
        def on_end(self, span) -> None:
            spans.append(span)

    provider.add_span_processor(Keep())
    trace_id = traffic.send(provider, case)
    provider.shutdown()
    root = next(s for s in spans if s.parent is None)
    return trace_id, format(root.context.span_id, "016x")


@pytest.mark.parametrize("protocol", ["grpc", "http"])
def test_each_verdict_arrives_as_an_event_on_the_root_span(start_sidecar, protocol: str,
                                                           grpc_receiver, http_receiver) -> None:
    endpoint, received = grpc_receiver if protocol == "grpc" else http_receiver
    sidecar = start_sidecar(evaluation_export={"endpoint": endpoint, "protocol": protocol})
    trace_id, root_span_id = _send_turn(sidecar, traffic.GROUNDED[0])
    wait_until(lambda: len({r[3]["gen_ai.evaluation.name"] for r in received.for_trace(trace_id)})
               >= 4, 60, "the turn's evaluation events")
    events = received.for_trace(trace_id)
    assert {r[1] for r in events} == {root_span_id}
    assert {r[2] for r in events} == {"gen_ai.evaluation.result"}
    by_name = {r[3]["gen_ai.evaluation.name"]: r[3] for r in events}
    assert set(by_name) == {"context_relevance", "answer_relevance", "completeness",
                            "groundedness"}
    assert by_name["completeness"]["gen_ai.evaluation.score.label"] == "complete"
    assert 0.0 <= by_name["groundedness"]["gen_ai.evaluation.score.value"] <= 1.0
    assert all(r[3]["assistant.judge"] == "local" for r in events)
    assert not any("gen_ai.evaluation.explanation" in r[3] for r in events)  # trace content
    wait_until(lambda: _events(sidecar, "exported") >= len(events), 30,
               "exports counted " + str([_events(sidecar, o) for o in OUTCOMES]))
    assert _events(sidecar, "emitted") >= len(events) and _events(sidecar, "failed") == 0


def test_explanations_only_when_allowed(start_sidecar, grpc_receiver) -> None:
    endpoint, received = grpc_receiver
    sidecar = start_sidecar(evaluation_export={"endpoint": endpoint, "include_explanation": True})
    trace_id, _ = _send_turn(sidecar, traffic.GROUNDED[1])
    wait_until(lambda: len(received.for_trace(trace_id)) >= 4, 60, "the turn's evaluation events")
    groundedness = next(r[3] for r in received.for_trace(trace_id)
                        if r[3]["gen_ai.evaluation.name"] == "groundedness")
    assert "claims supported" in groundedness["gen_ai.evaluation.explanation"]
    with pytest.raises(ValueError, match="outside allowed_hosts"):
        EvaluationExportSettings(endpoint="https://collector.example.com:4317",
                                 include_explanation=True)


def test_explanations_carry_placeholders_not_personal_data(start_sidecar, grpc_receiver) -> None:
    """An LLM judge shown the turn unredacted (judging.llm.redact off) quotes it in its
    rationale; the explanations sent out are redacted all the same (evaluation_export.redact)."""
    endpoint, received = grpc_receiver
    with ScriptedOpenAIServer(judge_model) as judge:
        sidecar = start_sidecar(
            evaluation_export={"endpoint": endpoint, "include_explanation": True},
            judging={"llm": {"redact": False, "endpoints": [
                {"name": "judge", "base_url": judge.base_url, "model": "judge-model"}]}})
        trace_id, _ = _send_turn(sidecar, traffic.PERSONAL)
        wait_until(lambda: len(received.for_trace(trace_id)) >= 4, 60,
                   "the turn's evaluation events")
        assert "Jonas Lindqvist" in json.dumps(judge.requests)  # what the judge was shown
    completeness = next(r[3]["gen_ai.evaluation.explanation"] for r in received.for_trace(trace_id)
                        if r[3]["gen_ai.evaluation.name"] == "completeness")
    assert completeness.startswith("covers the question: <PERSON_1>'s refund was issued")
    explanations = json.dumps([r[3] for r in received.for_trace(trace_id)])
    for value in ("Amara", "Nwosu", "Jonas", "Lindqvist"):
        assert value not in explanations, value


def test_an_endpoint_that_is_down_does_not_hold_judging(start_sidecar) -> None:
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    sidecar = start_sidecar(evaluation_export={"endpoint": down, "timeout_s": 1.0})
    trace_id, _ = _send_turn(sidecar, traffic.GROUNDED[2])
    wait_until(lambda: _judged(sidecar) >= 1, 60, "the turn judged")
    assert trace_id  # and the fixture's stop returns: the flush is bounded by timeout_s
    # what could not be sent is counted, not only logged by the SDK
    wait_until(lambda: _events(sidecar, "failed") >= 4, 60, "failed exports counted")
    assert _events(sidecar, "exported") == 0 and _events(sidecar, "emitted") >= 4


def _judged(sidecar) -> float:
    return sum(s.value for m in sidecar.registry.collect() if m.name == "assistant_turns_judged"
               for s in m.samples if s.name.endswith("_total"))


OUTCOMES = ("emitted", "exported", "failed")


def _events(sidecar, outcome: str) -> float:
    return sum(s.value for m in sidecar.registry.collect()
               if m.name == "assistant_evaluation_events" for s in m.samples
               if s.name.endswith("_total") and s.labels["outcome"] == outcome)
