"""Hostile OTLP input: the bodies from issue 12, and a seeded mutator over real SDK payloads.

    bodies = [body for _, body in WRONG_TYPES]            # OTLP/JSON dicts
    fuzz = Mutator(seed=7)                                 # mutations of real SDK payloads
    request = fuzz.http_request()                          # (path, body, headers)
    send = HttpSender(url); status = send(*request)

Seeds are encoded by the OpenTelemetry SDK exporters' own encoder (`encode_spans`), from spans
recorded with the real SDK in this project's conventions and in GenAI, OpenInference and
OpenLLMetry shapes. Used by tests/test_hostile_input.py, tests/test_fuzz.py and
bench/fuzz_soak.py.
"""

from __future__ import annotations

import base64
import copy
import gzip
import http.client
import json
import random
from collections import defaultdict
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from monitor.ingest.grpc_receiver import LOGS_METHOD, TRACE_METHOD
from tests import traffic

TRACE = "0102030405060708090a0b0c0d0e0f12"


def _kv(key: str, **value: Any) -> dict[str, Any]:
    return {"key": key, "value": value}


def _span(attrs: list[dict[str, Any]], trace_id: str = TRACE, span_id: str = "0102030405060708",
          parent: str = "") -> dict[str, Any]:
    span = {"traceId": trace_id, "spanId": span_id, "name": "n", "attributes": attrs}
    if parent:
        span["parentSpanId"] = parent
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def _messages(*messages: dict[str, Any]) -> dict[str, Any]:
    return _kv("gen_ai.input.messages", stringValue=json.dumps(list(messages)))


_DEEP = 5000
# (name, OTLP/JSON body): each once raised inside assembly, or answered 500 / UNKNOWN.
WRONG_TYPES: list[tuple[str, dict[str, Any]]] = [
    ("integer gen_ai.response.model", _span([  # the issue's own example, verbatim
        _kv("gen_ai.operation.name", stringValue="chat"),
        _kv("gen_ai.response.model", intValue="5")])),
    ("array gen_ai.conversation.id", _span([
        _kv("gen_ai.operation.name", stringValue="chat"),
        _kv("gen_ai.conversation.id", arrayValue={"values": [{"stringValue": "a"}]})])),
    ("integer OpenInference session.id", _span([
        _kv("openinference.span.kind", stringValue="LLM"), _kv("session.id", intValue="7")])),
    ("array tool_call_id in a tool message", _span([
        _kv("gen_ai.operation.name", stringValue="chat"),
        _messages({"role": "tool", "parts": [{"type": "tool_call_response", "id": ["x", 1],
                                              "response": "ok"}]},
                  {"role": "user", "parts": [{"type": "text", "content": "hi"}]})])),
    ("array OpenInference tool_call_id", _span([
        _kv("openinference.span.kind", stringValue="LLM"),
        _kv("llm.input_messages.0.message.role", stringValue="tool"),
        _kv("llm.input_messages.0.message.tool_call_id",
            arrayValue={"values": [{"intValue": "1"}]})])),
    ("integer GenAI tool-call ids", _span([
        _kv("gen_ai.tool.name", stringValue="search"), _kv("gen_ai.tool.call.id", intValue="3"),
        _messages({"role": "assistant", "parts": [{"type": "tool_call", "id": 4,
                                                   "name": "search", "arguments": {}}]})])),
    ("integer OpenInference tool-call id", _span([
        _kv("openinference.span.kind", stringValue="TOOL"), _kv("tool.name", stringValue="s"),
        _kv("tool_call.id", intValue="9")])),
    ("integer OpenLLMetry tool-call id", _span([
        _kv("gen_ai.prompt.0.role", stringValue="assistant"),
        _kv("gen_ai.prompt.0.tool_calls.0.name", stringValue="search"),
        _kv("gen_ai.prompt.0.tool_calls.0.id", intValue="11")])),
    ("Infinity token counts", _span([
        _kv("gen_ai.operation.name", stringValue="chat"),
        _kv("gen_ai.usage.input_tokens", doubleValue="Infinity"),
        _kv("gen_ai.usage.output_tokens", doubleValue="NaN"),
        _kv("llm.token_count.prompt", doubleValue="-Infinity")])),
    ("tool arguments nested thousands deep", _span([
        _kv("gen_ai.tool.name", stringValue="search"),
        _kv("gen_ai.tool.call.arguments", stringValue="[" * _DEEP + "]" * _DEEP)])),
    ("message content nested thousands deep", _span([
        _kv("gen_ai.operation.name", stringValue="chat"),
        _kv("gen_ai.output.messages", stringValue='[{"role": "assistant", "content": '
            + "[" * 900 + "]" * 900 + ', "parts": [{"type": "tool_call", "name": "f", '
            '"arguments": ' + '{"a":' * 900 + "1" + "}" * 900 + "}]}]")])),
    ("OpenLLMetry entity args that are not a list", _span([
        _kv("traceloop.span.kind", stringValue="tool"),
        _kv("traceloop.entity.input", stringValue='{"args": 5}'),
        _kv("traceloop.entity.output", stringValue='{"args": {"a": 1}}')])),
    ("non-ASCII digit in an indexed key", _span([
        _kv("gen_ai.prompt.\u00b2.role", stringValue="user"),
        _kv("gen_ai.prompt.0.content", stringValue="hi")])),
]

# Lone surrogates: json.dumps escapes them (\ud800), which Python's JSON reader accepts.
SURROGATES: list[tuple[str, dict[str, Any]]] = [
    ("lone surrogate in a value", _span([_kv("assistant.question", stringValue="q\ud800")])),
    ("lone surrogate in a key", _span([_kv("k\udfff", stringValue="v")])),
    ("lone surrogate in a field name", {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": TRACE, "spanId": "0102030405060708", "n\ud800": 1}]}]}]}),
]


def json_body(data: Any) -> bytes:
    return json.dumps(data).encode()  # ensure_ascii: surrogates and Infinity as JSON allows


def to_protobuf(data: dict[str, Any]) -> bytes:
    """An OTLP/JSON dict (hex ids) as the protobuf bytes a gRPC exporter would send."""
    data = copy.deepcopy(data)
    for rs in data.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(data, ExportTraceServiceRequest()).SerializeToString()


# -- seeds: real SDK spans, encoded by the exporters' encoder ------------------------------

def _genai_spans(provider: TracerProvider) -> None:
    tracer = provider.get_tracer("fuzz")
    with tracer.start_as_current_span("invoke_agent", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "c-1"}):
        with tracer.start_as_current_span("chat", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.response.model": "m-1",
                "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30,
                "gen_ai.input.messages": json.dumps([
                    {"role": "user", "parts": [{"type": "text", "content": "Where is it?"}]},
                    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                                "response": {"status": "shipped"}}]}]),
                "gen_ai.output.messages": json.dumps([
                    {"role": "assistant", "parts": [
                        {"type": "tool_call", "id": "c2", "name": "track",
                         "arguments": {"order": 42}},
                        {"type": "text", "content": "It ships tomorrow."}]}])}) as chat:
            chat.add_event("gen_ai.user.message", {"content": "Where is it?"})
        with tracer.start_as_current_span("execute_tool track", attributes={
                "gen_ai.tool.name": "track", "gen_ai.tool.call.id": "c2",
                "gen_ai.tool.call.arguments": '{"order": 42}'}):
            pass


def _openinference_spans(provider: TracerProvider) -> None:
    tracer = provider.get_tracer("fuzz")
    with tracer.start_as_current_span("agent", attributes={
            "openinference.span.kind": "AGENT", "input.value": "Where is it?",
            "output.value": "Tomorrow.", "session.id": "s-1"}):
        with tracer.start_as_current_span("llm", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "m-2",
                "llm.token_count.prompt": 10, "llm.token_count.completion": 3,
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "Where is it?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "t1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "track",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}"}):
            pass
        with tracer.start_as_current_span("retriever", attributes={
                "openinference.span.kind": "RETRIEVER", "input.value": "parcel",
                "retrieval.documents.0.document.id": "d1",
                "retrieval.documents.0.document.content": "Parcels ship in 24h.",
                "retrieval.documents.0.document.score": 0.9}):
            pass


def _openllmetry_spans(provider: TracerProvider) -> None:
    tracer = provider.get_tracer("fuzz")
    with tracer.start_as_current_span("workflow", attributes={
            "traceloop.span.kind": "workflow", "traceloop.entity.input": '{"args": ["q?"]}',
            "traceloop.entity.output": '"a."'}):
        with tracer.start_as_current_span("openai.chat", attributes={
                "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "q?",
                "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "a.",
                "gen_ai.completion.0.tool_calls.0.name": "f",
                "gen_ai.completion.0.tool_calls.0.id": "x1",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"k": [1, 2]}',
                "gen_ai.usage.prompt_tokens": 5, "gen_ai.usage.completion_tokens": 2}):
            pass


def seed_requests(service: str = "fuzz-bot") -> list[ExportTraceServiceRequest]:
    """One export request per trace, as the SDK's OTLP exporters encode them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    for case in traffic.ALL[::4]:
        traffic.send(provider, case)
    _genai_spans(provider)
    _openinference_spans(provider)
    _openllmetry_spans(provider)
    provider.shutdown()
    by_trace: dict[int, list[Any]] = defaultdict(list)
    for span in exporter.get_finished_spans():
        by_trace[span.context.trace_id].append(span)
    return [encode_spans(spans) for spans in by_trace.values()]


def log_request(trace_id: bytes, span_id: bytes) -> ExportLogsServiceRequest:
    """GenAI content events as log records, as opentelemetry-instrumentation-openai-v2 sends."""
    request = ExportLogsServiceRequest()
    records = request.resource_logs.add().scope_logs.add().log_records
    for name, body in (("gen_ai.user.message", {"content": "Where is it?"}),
                       ("gen_ai.tool.message", {"id": "c1", "content": "shipped"}),
                       ("gen_ai.choice", {"index": 0, "message": {
                           "role": "assistant", "content": "Tomorrow.",
                           "tool_calls": [{"id": "c2", "type": "function", "function": {
                               "name": "track", "arguments": '{"order": 42}'}}]}})):
        record = records.add(event_name=name, trace_id=trace_id, span_id=span_id)
        json_format.ParseDict({"kvlistValue": {"values": _kvlist(body)}}, record.body)
    return request


def _kvlist(body: dict[str, Any]) -> list[dict[str, Any]]:
    def any_value(value: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            return {"kvlistValue": {"values": _kvlist(value)}}
        if isinstance(value, list):
            return {"arrayValue": {"values": [any_value(v) for v in value]}}
        if isinstance(value, int):
            return {"intValue": str(value)}
        return {"stringValue": str(value)}

    return [{"key": k, "value": any_value(v)} for k, v in body.items()]


def to_otlp_json(request: Message) -> dict[str, Any]:
    """protobuf JSON with the hex ids OTLP/JSON uses."""
    data = json_format.MessageToDict(request)
    stack = [data]
    while stack:
        item = stack.pop()
        for key, value in item.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                item[key] = base64.b64decode(value).hex()
            elif isinstance(value, dict):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, dict))
    return data


# -- mutations ------------------------------------------------------------------------------

_DEEP_MARK = "\x00deep\x00"


def _hostile(rng: random.Random) -> Any:
    """A value of a wrong type, size, depth or encoding."""
    return rng.choice([
        lambda: rng.choice([0, 5, -1, 2**63, -(2**63) - 1, 10**30]),
        lambda: rng.choice([float("inf"), float("-inf"), float("nan"), 1e308, -0.0]),
        lambda: rng.choice(["5", "Infinity", "NaN", "", "-1", "1e999", "0x10", "9" * 5000]),
        lambda: rng.choice([True, False, None, [], {}, [1, "a", None], {"a": {"b": [1]}}]),
        lambda: rng.choice(["\ud800", "x\udfffy", "\u0000", "\u00b2", "\U0001f600" * 3,
                            '[{"role": "user", "content": "\\ud83d", "k\\udfff": 1}]']),
        lambda: "A" * rng.choice([1, 100, 70_000]),
        lambda: _DEEP_MARK + str(rng.choice([40, 500, 3000])),  # nesting, spliced in as text
        lambda: "[" * 3000 + "]" * 3000,  # deep JSON inside a string attribute
        lambda: {rng.choice(["stringValue", "intValue", "doubleValue", "boolValue",
                             "bytesValue", "arrayValue", "kvlistValue"]): _hostile(rng)},
    ])()


def _nodes(data: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every value in a JSON tree (iterative)."""
    found, stack = [], [data]
    while stack:
        item = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, value in pairs:
            found.append((item, key))
            if isinstance(value, (dict, list)):
                stack.append(value)
    return found


def _mutate_tree(data: Any, rng: random.Random) -> None:
    nodes = _nodes(data)
    for _ in range(rng.randint(1, 4)):
        if not nodes:
            return
        container, key = rng.choice(nodes)
        value = container[key]
        roll = rng.random()
        if isinstance(value, str) and value[:1] in "[{" and roll < 0.5:
            try:  # a JSON-encoded attribute (messages, arguments): mutate inside it
                inner = json.loads(value)
            except (ValueError, RecursionError):
                inner = None
            if isinstance(inner, (dict, list)) and inner:
                _mutate_tree(inner, rng)
                container[key] = _dumps(inner)
                continue
        if roll < 0.1 and isinstance(container, dict):
            del container[key]
            nodes = _nodes(data)
        elif roll < 0.2 and isinstance(value, list) and value:
            value.append(copy.deepcopy(rng.choice(value)))  # duplicate a span or attribute
        else:
            container[key] = _hostile(rng)


def _dumps(data: Any) -> str:
    text = json.dumps(data)
    while '"\\u0000deep\\u0000' in text:
        start = text.index('"\\u0000deep\\u0000')
        end = text.index('"', start + 1)
        depth = int(text[start + len('"\\u0000deep\\u0000'):end])
        text = text[:start] + "[" * depth + "1" + "]" * depth + text[end + 1:]
    return text


def _set_any(value: AnyValue, rng: random.Random, depth: int = 0) -> None:
    kind = rng.randrange(8)
    if kind == 0:
        value.int_value = rng.choice([0, -1, 2**63 - 1, -(2**63), 7])
    elif kind == 1:
        value.double_value = rng.choice([float("inf"), float("nan"), -float("inf"), 1e308])
    elif kind == 2:
        value.bool_value = rng.random() < 0.5
    elif kind == 3:
        value.bytes_value = rng.randbytes(rng.choice([0, 8, 300]))
    elif kind == 4 and depth < 80:
        for _ in range(rng.randint(0, 2)):
            _set_any(value.array_value.values.add(), rng, depth + 1)
        if not value.array_value.values:
            value.array_value.SetInParent()
    elif kind == 5 and depth < 80:
        kv = value.kvlist_value.values.add(key=rng.choice(["id", "content", "", "role"]))
        _set_any(kv.value, rng, depth + 1)
    elif kind == 6:
        value.string_value = rng.choice(["[" * 2000 + "]" * 2000, "{", "null", "1e999"])
    else:
        value.Clear()  # an empty AnyValue


def _any_values(message: Message) -> list[AnyValue]:
    """Every AnyValue in a request (attribute values, log bodies), at any depth."""
    found, stack = [], [message]
    while stack:
        item = stack.pop()
        if isinstance(item, AnyValue):
            found.append(item)
        for field, value in item.ListFields():
            if field.message_type is None:
                continue
            if isinstance(value, Message):
                stack.append(value)
            else:  # a repeated field of messages
                stack.extend(value)
    return found


def _mutate_proto(request: Message, rng: random.Random) -> bytes:
    request = copy.deepcopy(request)
    values = _any_values(request)
    for _ in range(rng.randint(1, 4)):
        if values:
            _set_any(rng.choice(values), rng)
    body = bytearray(request.SerializeToString())
    roll = rng.random()
    if roll < 0.3 and body:  # byte-level damage
        for _ in range(rng.randint(1, 8)):
            body[rng.randrange(len(body))] = rng.randrange(256)
    elif roll < 0.4:
        body = body[: rng.randrange(len(body) + 1)]
    elif roll < 0.5:
        at = rng.randrange(len(body) + 1)
        body[at:at] = rng.randbytes(rng.randint(1, 64))
    return bytes(body)


_ENCODINGS = ["gzip", "gzip-lying", "gzip-truncated", "br", "zstd", "compress", "gzip, gzip"]


class Mutator:
    """Seeded, so a failing input can be regenerated from (seed, index)."""

    def __init__(self, seed: int, fresh_trace_ids: bool = False) -> None:
        """`fresh_trace_ids`: each request's traces get new ids, so each becomes a turn of its
        own (the seeds' ids repeat: most spans would be merged into, or late for, one turn)."""
        self.rng = random.Random(seed)
        self.ids = random.Random(seed) if fresh_trace_ids else None  # apart: same mutations
        self.seeds = {"traces": seed_requests()}
        span = self.seeds["traces"][0].resource_spans[0].scope_spans[0].spans[0]
        self.seeds["logs"] = [log_request(span.trace_id, span.span_id)]

    def _seed(self, signal: str) -> Message:
        """A seed request; with fresh trace ids, a copy under new ones."""
        request = self.rng.choice(self.seeds[signal])
        if self.ids is None or signal != "traces":
            return request
        request = copy.deepcopy(request)
        fresh: dict[bytes, bytes] = {}
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    span.trace_id = fresh.setdefault(span.trace_id, self.ids.randbytes(16))
        return request

    def protobuf(self, signal: str = "traces") -> bytes:
        return _mutate_proto(self._seed(signal), self.rng)

    def json(self, signal: str = "traces") -> bytes:
        data = to_otlp_json(self._seed(signal))
        _mutate_tree(data, self.rng)
        return _dumps(data).encode()

    def http_request(self) -> tuple[str, bytes, dict[str, str]]:
        rng = self.rng
        signal = "logs" if rng.random() < 0.1 else "traces"
        if rng.random() < 0.5:
            body, content_type = self.json(signal), "application/json"
        else:
            body, content_type = self.protobuf(signal), "application/x-protobuf"
        headers = {"Content-Type": content_type}
        if rng.random() < 0.15:
            encoding = rng.choice(_ENCODINGS)
            packed = gzip.compress(body)
            if encoding == "gzip":
                body = packed
            elif encoding == "gzip-truncated":
                body = packed[: rng.randrange(len(packed))]
            headers["Content-Encoding"] = encoding.replace("-lying", "").replace("-truncated", "")
        if rng.random() < 0.03:  # a body sent to the other signal's path
            signal = "traces" if signal == "logs" else "logs"
        return f"/v1/{signal}", body, headers

    def grpc_request(self) -> tuple[str, bytes, bool]:
        signal = "logs" if self.rng.random() < 0.1 else "traces"
        body = self.protobuf(signal) if self.rng.random() < 0.9 else self.json(signal)  # JSON: junk
        method = LOGS_METHOD if signal == "logs" else TRACE_METHOD
        return method, body, self.rng.random() < 0.1


class HttpSender:
    """POSTs over one keep-alive connection (re-opened when the server closes it)."""

    def __init__(self, host: str, port: int) -> None:
        self.connection = http.client.HTTPConnection(host, port, timeout=30)

    def __call__(self, path: str, body: bytes, headers: dict[str, str]) -> int:
        try:
            self.connection.request("POST", path, body, headers)
            response = self.connection.getresponse()
            response.read()
            return response.status
        except (ConnectionError, http.client.HTTPException):
            self.connection.close()
            return -1  # the connection broke: counted as a failure by callers

    def close(self) -> None:
        self.connection.close()


class GrpcSender:
    def __init__(self, target: str) -> None:
        self.channel = grpc.insecure_channel(target)
        self.calls = {m: self.channel.unary_unary(m) for m in (TRACE_METHOD, LOGS_METHOD)}
        self.details = ""  # of the last call

    def __call__(self, method: str, body: bytes, compress: bool) -> grpc.StatusCode:
        try:
            self.calls[method](body, timeout=30,
                               compression=grpc.Compression.Gzip if compress else None)
        except grpc.RpcError as err:
            self.details = err.details() or ""
            return err.code()  # type: ignore[no-any-return]
        self.details = ""
        return grpc.StatusCode.OK

    def close(self) -> None:
        self.channel.close()
