"""OTLP payloads in, `SpanFacts` out: the decoding every receiver (gRPC, HTTP, Kafka, replay) shares.

    decoder = OtlpDecoder(settings.receivers, tenant_id="acme")
    request = decoder.parse_traces(body, "json")       # PermanentError naming what is wrong
    batch = decoder.traces(request)                    # facts, rejected count, issues by reason

Traces carry most of what a turn needs. Logs matter too: the official OpenAI instrumentation
(opentelemetry-instrumentation-openai-v2) records message content as GenAI log events, so
`decoder.logs` turns those into fragments of the span they belong to.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from exporters import attributes as A
from monitor import _native
from monitor.errors import PermanentError
from monitor.ingest import semconv
from monitor.model import SpanFacts

log = logging.getLogger(__name__)

# "python": decode protobuf in Python (upb), not in native/ (the reference the compiled decoder
# is tested against, and a way out should it ever misbehave); the rules are the same.
DECODER_ENV = "ASSISTANT_MONITOR_DECODER"

Format = Literal["proto", "json"]
Signal = Literal["traces", "logs"]
STATUS_ERROR = 2
# Span.flags bits 8 and 9: "has is_remote" and "parent is remote" (OTLP trace.proto).
_PARENT_IS_REMOTE = 0x300
_MAX_MESSAGES = 3  # rejection messages quoted back to the client


@dataclass(slots=True)
class Batch:
    """The outcome of decoding one request."""

    facts: list[SpanFacts] = field(default_factory=list)
    received: int = 0
    rejected: Counter[str] = field(default_factory=Counter)  # reason -> spans refused
    issues: Counter[str] = field(default_factory=Counter)  # reason -> things not understood
    messages: list[str] = field(default_factory=list)

    def reject(self, reason: str, count: int, message: str) -> None:
        self.rejected[reason] += count
        if len(self.messages) < _MAX_MESSAGES:
            self.messages.append(message)

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())

    @property
    def error_message(self) -> str:
        return "; ".join(self.messages)

    def response(self, signal: Signal) -> Any:
        """The OTLP Export*ServiceResponse for this batch, with its partial success."""
        if signal == "traces":
            return ExportTraceServiceResponse(partial_success=ExportTracePartialSuccess(
                rejected_spans=self.rejected_total, error_message=self.error_message))
        return ExportLogsServiceResponse(partial_success=ExportLogsPartialSuccess(
            rejected_log_records=self.rejected_total, error_message=self.error_message))


# OTLP/JSON encodes ids as hex where protobuf JSON expects base64 (OTLP spec, JSON encoding).
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids_to_base64(obj: dict[str, Any], where: str) -> None:
    for key in _ID_FIELDS:
        value = obj.get(key)
        if isinstance(value, str) and value:
            try:
                obj[key] = base64.b64encode(bytes.fromhex(value)).decode()
            except ValueError:
                raise PermanentError(f"{where}.{key}: not a hex string") from None


def _walk(data: Any, outer: str, middle: str, inner: str) -> None:
    for i, resource in enumerate(_list(data, outer, outer)):
        for j, scope in enumerate(_list(resource, middle, f"{outer}[{i}]")):
            where = f"{outer}[{i}].{middle}[{j}]"
            for k, item in enumerate(_list(scope, inner, where)):
                if not isinstance(item, dict):
                    raise PermanentError(f"{where}.{inner}[{k}]: expected an object")
                _hex_ids_to_base64(item, f"{where}.{inner}[{k}]")
                links = item.get("links")
                for n, link in enumerate(links if isinstance(links, list) else []):
                    if isinstance(link, dict):
                        _hex_ids_to_base64(link, f"{where}.{inner}[{k}].links[{n}]")


def _list(obj: Any, key: str, where: str) -> list[Any]:
    if not isinstance(obj, dict):
        raise PermanentError(f"{where}: expected an object")
    value = obj.get(key) or []
    if not isinstance(value, list):
        raise PermanentError(f"{where}.{key}: expected an array")
    return value


_PATH = re.compile(r" at ([A-Za-z0-9_.\[\]]+)")
_FIELD = re.compile(r"Failed to parse ([A-Za-z0-9_]+) field")


def _field_path(exc: Exception) -> str:
    """Where protobuf's JSON parser failed, without its text: that quotes the offending value."""
    text = str(exc)
    found = _PATH.search(text)
    if found:
        return found.group(1)
    return ".".join(_FIELD.findall(text)) or "the request"


def _parse(body: bytes, fmt: Format, message: Any, path: tuple[str, str, str]) -> Any:
    kind = type(message).__name__
    if fmt == "proto":
        try:
            message.ParseFromString(body)
        except (DecodeError, RecursionError):
            raise PermanentError(f"malformed protobuf {kind}") from None
        return message
    try:
        data = json.loads(body)
    except UnicodeDecodeError:
        raise PermanentError("JSON body is not UTF-8") from None
    except RecursionError:
        raise PermanentError("JSON body is nested too deeply") from None
    except ValueError as exc:  # the position only: json's message never quotes the input
        raise PermanentError(f"malformed JSON at line {getattr(exc, 'lineno', '?')} "
                             f"column {getattr(exc, 'colno', '?')}") from None
    _walk(data, *path)
    try:
        return json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except Exception as exc:  # noqa: BLE001  ParseError, and upb's SystemError on odd keys
        raise PermanentError(f"JSON is not an OTLP {kind}: wrong type or value at "
                             f"{_field_path(exc)}") from None


def _bad_id(batch: Batch, reason: str, name: str) -> None:
    what, size = ("trace_id", 16) if reason == "invalid_trace_id" else ("span_id", 8)
    batch.reject(reason, 1, f"span {name!r}: {what} must be {size} non-zero bytes")


def _wrong_tenant(batch: Batch, count: int, noun: str, tenant: str | None) -> None:
    reason = "missing tenant.id" if tenant is None else "tenant.id"  # its value is not echoed
    batch.reject("tenant_mismatch", count,
                 f"{count} {noun} refused: {reason} is not this sidecar's tenant")


def _mapping_failed(batch: Batch, error: str) -> None:
    """The mappers validate every value, so this is a bug; counted, and logged by the error's
    type only (an exception's text, pydantic's `input_value=` above all, may quote trace
    content)."""
    log.warning("semantic-convention mapping failed on a span: %s", error)
    batch.reject("mapping_error", 1, "a span could not be mapped (counted as mapping_error)")


class OtlpDecoder:
    """`native`: decode protobuf traces with the compiled decoder (None: unless
    $ASSISTANT_MONITOR_DECODER is "python"). Both give the same batches, by the same rules."""

    def __init__(self, *, max_attribute_length: int, max_value_depth: int,
                 tenant_id: str | None = None, native: bool | None = None) -> None:
        self.max_len = max_attribute_length
        self.max_depth = max_value_depth
        self.tenant_id = tenant_id
        if native is None:
            native = os.environ.get(DECODER_ENV, "") != "python"
        self.native = (_native.TraceDecoder(
            max_attribute_length=max_attribute_length, max_value_depth=max_value_depth,
            tenant_id=tenant_id, service_key=A.SERVICE_NAME, tenant_key=A.TENANT_ID)
            if native else None)

    def decode(self, signal: Signal, body: bytes, fmt: Format) -> Batch:
        """Parse and map one request body; PermanentError naming what is wrong."""
        if signal == "traces":
            if self.native is not None and fmt == "proto":
                return self.traces_native(body)
            return self.traces(self.parse_traces(body, fmt))
        return self.logs(self.parse_logs(body, fmt))

    def parse_traces(self, body: bytes, fmt: Format) -> ExportTraceServiceRequest:
        return _parse(body, fmt, ExportTraceServiceRequest(),
                      ("resourceSpans", "scopeSpans", "spans"))

    def parse_logs(self, body: bytes, fmt: Format) -> ExportLogsServiceRequest:
        return _parse(body, fmt, ExportLogsServiceRequest(),
                      ("resourceLogs", "scopeLogs", "logRecords"))

    # -- values ------------------------------------------------------------------------------

    def _value(self, v: AnyValue, depth: int, issues: Counter[str]) -> Any:
        kind = v.WhichOneof("value")
        if kind == "string_value":
            s = v.string_value
            if len(s) > self.max_len:
                issues["value_truncated"] += 1
                return s[: self.max_len]
            return s
        if kind is None:
            return None
        if kind in ("array_value", "kvlist_value"):
            if depth >= self.max_depth:
                issues["value_too_deep"] += 1
                return None
            if kind == "array_value":
                return [self._value(x, depth + 1, issues) for x in v.array_value.values]
            return {kv.key: self._value(kv.value, depth + 1, issues)
                    for kv in v.kvlist_value.values}
        if kind == "bytes_value":
            return base64.b64encode(v.bytes_value).decode()
        return getattr(v, kind)

    def _attrs(self, kvs: Any, issues: Counter[str]) -> dict[str, Any]:
        out = {}
        max_len = self.max_len
        for kv in kvs:
            v = kv.value
            s = v.string_value  # fast path: most values are short strings
            out[kv.key] = s if s and len(s) <= max_len else self._value(v, 0, issues)
        return out

    def _owned(self, batch: Batch, resources: Iterable[Any], noun: str,
               count: Callable[[Any], int]) -> Iterator[tuple[Any, str | None, str | None]]:
        """(resource entry, service, tenant) of each resource whose items are accepted; all are
        counted as received, the refused ones as refused."""
        for entry in resources:
            n = count(entry)
            batch.received += n
            owner = self._resource(entry.resource.attributes, batch, n, noun)
            if owner is not None:
                yield entry, *owner

    def _resource(self, kvs: list[KeyValue], batch: Batch, count: int, noun: str
                  ) -> tuple[str | None, str | None] | None:
        """(service, tenant) of a resource, or None if its items are refused."""
        service = tenant = None
        for kv in kvs:
            if kv.key == A.SERVICE_NAME:
                service = kv.value.string_value or None
            elif kv.key == A.TENANT_ID:
                tenant = kv.value.string_value or None
        if self.tenant_id is not None and tenant != self.tenant_id:
            _wrong_tenant(batch, count, noun, tenant)
            return None
        return service, tenant

    # -- traces --------------------------------------------------------------------------------

    def traces(self, request: ExportTraceServiceRequest) -> Batch:
        batch = Batch()
        issues = batch.issues
        owned = self._owned(batch, request.resource_spans, "spans",
                            lambda rs: sum(len(ss.spans) for ss in rs.scope_spans))
        for rs, service, tenant in owned:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    trace_id, span_id = span.trace_id, span.span_id
                    if len(trace_id) != 16 or trace_id == bytes(16):
                        _bad_id(batch, "invalid_trace_id", span.name)
                        continue
                    if len(span_id) != 8 or span_id == bytes(8):
                        _bad_id(batch, "invalid_span_id", span.name)
                        continue
                    parent = span.parent_span_id
                    facts = SpanFacts(
                        span_id=span_id, trace_id=trace_id, parent_span_id=parent,
                        service=service, tenant=tenant, name=span.name,
                        start_ns=span.start_time_unix_nano, end_ns=span.end_time_unix_nano,
                        is_root=not parent or span.flags & _PARENT_IS_REMOTE == _PARENT_IS_REMOTE,
                        error=(span.status.message or "error")
                        if span.status.code == STATUS_ERROR else None,
                    )
                    try:
                        events = [(e.name, self._attrs(e.attributes, issues)) for e in span.events
                                  if e.name.startswith(semconv.EVENT_PREFIXES)]
                        semconv.extract(facts, self._attrs(span.attributes, issues), events,
                                        issues)
                    except Exception as exc:  # noqa: BLE001  a mapper bug: refuse the span
                        _mapping_failed(batch, type(exc).__name__)
                        continue
                    batch.facts.append(facts)
        return batch

    def traces_native(self, body: bytes) -> Batch:
        """`traces(parse_traces(body, "proto"))` by the compiled decoder: the same batch."""
        try:
            decoded = self.native.traces(bytes(body))
        except ValueError:
            raise PermanentError("malformed protobuf ExportTraceServiceRequest") from None
        batch = Batch(facts=decoded.facts, received=decoded.received)
        for reason, count in decoded.issues:
            batch.issues[reason] += count
        for refusal in decoded.refused:
            if refusal.reason == "tenant_mismatch":
                _wrong_tenant(batch, refusal.spans, "spans", None if refusal.tenant_missing else "")
            elif refusal.reason == "mapping_error":  # the compiled rules panicked (a bug)
                _mapping_failed(batch, "panic")
            else:
                _bad_id(batch, refusal.reason, refusal.span_name or "")
        return batch

    # -- logs ----------------------------------------------------------------------------------

    def logs(self, request: ExportLogsServiceRequest) -> Batch:
        """GenAI content events in log records, as fragments of the spans they belong to.

        Log records without a span context, or that are not GenAI events, are ignored (counted
        in `issues["log_not_genai"]`): the sidecar is not a log pipeline.
        """
        batch = Batch()
        issues = batch.issues
        owned = self._owned(batch, request.resource_logs, "log records",
                            lambda rl: sum(len(sl.log_records) for sl in rl.scope_logs))
        for rl, service, tenant in owned:
            fragments: dict[bytes, tuple[SpanFacts, list[semconv.Event]]] = {}
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    attrs = self._attrs(record.attributes, issues)
                    name = record.event_name or str(attrs.get("event.name", ""))
                    if (not name.startswith("gen_ai.") or len(record.trace_id) != 16
                            or len(record.span_id) != 8):
                        issues["log_not_genai"] += 1
                        continue
                    body = self._value(record.body, 0, issues)
                    if not isinstance(body, dict):
                        body = {"content": body} if body is not None else {}
                    if record.span_id not in fragments:
                        facts = SpanFacts(span_id=record.span_id, trace_id=record.trace_id,
                                          service=service, tenant=tenant, is_log_fragment=True)
                        fragments[record.span_id] = (facts, [])
                        batch.facts.append(facts)
                    fragments[record.span_id][1].append((name, body))
            for facts, events in fragments.values():  # each span's events, read in order
                try:
                    semconv.extract_log_events(facts, events, issues)
                except Exception as exc:  # noqa: BLE001  a bug in the rules: counted
                    _mapping_failed(batch, type(exc).__name__)
        return batch
