"""Record what a RAG assistant did on its OpenTelemetry spans, in the conventions the sidecar reads.

    from opentelemetry import trace
    from exporters import record

    tracer = trace.get_tracer("my-assistant")
    with tracer.start_as_current_span("turn") as root:
        record.question(question, route="billing")
        with tracer.start_as_current_span("retrieve"):
            record.retrieval(question, [{"id": "kb-1", "content": text, "score": 0.82}])
        with tracer.start_as_current_span("execute_tool lookup_invoice"):
            record.tool_call("lookup_invoice", {"invoice_id": "INV-7"}, result={"status": "paid"})
        record.answer(answer_text, model="llama-3-8b")

Each helper writes on the given span, or on the current one. Values are JSON-encoded where the
conventions say so; nothing here talks to the network.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from exporters import attributes as A


def _span(span: Span | None) -> Span:
    return span if span is not None else trace.get_current_span()


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def question(text: str, *, route: str | None = None, span: Span | None = None) -> None:
    """The user's question for this turn; call it on the turn's root span."""
    s = _span(span)
    s.set_attribute(A.ASSISTANT_QUESTION, text)
    if route is not None:
        s.set_attribute(A.ASSISTANT_ROUTE, route)


def retrieval(
    query: str,
    documents: Iterable[Mapping[str, Any]],
    *,
    data_source: str | None = None,
    span: Span | None = None,
) -> None:
    """A retrieval step: the query and the documents found (`id`, `content`, `score`)."""
    s = _span(span)
    docs = [{k: d[k] for k in ("id", "content", "score") if d.get(k) is not None} for d in documents]
    s.set_attribute(A.GEN_AI_OPERATION_NAME, A.OPERATION_RETRIEVAL)
    s.set_attribute(A.GEN_AI_RETRIEVAL_QUERY_TEXT, query)
    s.set_attribute(A.GEN_AI_RETRIEVAL_DOCUMENTS, _json(docs))
    if data_source is not None:
        s.set_attribute(A.GEN_AI_DATA_SOURCE_ID, data_source)


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str,
    *,
    result: Any = None,
    error: str | None = None,
    call_id: str | None = None,
    span: Span | None = None,
) -> None:
    """One tool execution; an `error` marks the span failed (a failed tool call)."""
    s = _span(span)
    s.set_attribute(A.GEN_AI_OPERATION_NAME, A.OPERATION_EXECUTE_TOOL)
    s.set_attribute(A.GEN_AI_TOOL_NAME, name)
    s.set_attribute(A.GEN_AI_TOOL_CALL_ARGUMENTS, _json(arguments))
    if call_id is not None:
        s.set_attribute(A.GEN_AI_TOOL_CALL_ID, call_id)
    if result is not None:
        s.set_attribute(A.GEN_AI_TOOL_CALL_RESULT, _json(result))
    if error is not None:
        s.set_attribute(A.ERROR_TYPE, "tool_error")
        s.set_status(Status(StatusCode.ERROR, error))


def answer(text: str, *, model: str | None = None, span: Span | None = None) -> None:
    """The final answer shown to the user; call it on the turn's root span."""
    s = _span(span)
    s.set_attribute(A.ASSISTANT_ANSWER, text)
    if model is not None:
        s.set_attribute(A.GEN_AI_RESPONSE_MODEL, model)


def feedback(score: float, *, comment: str | None = None, span: Span | None = None) -> None:
    """User feedback on the turn: -1.0 (thumbs down) .. 1.0 (thumbs up).

    Feedback often comes after the turn: record it on a span of the same trace (for example a
    span started with the turn's span context as parent) before the sidecar's decision wait ends.
    """
    if not -1.0 <= score <= 1.0:
        raise ValueError(f"feedback score must be within -1.0..1.0, got {score}")
    s = _span(span)
    s.set_attribute(A.ASSISTANT_FEEDBACK_SCORE, float(score))
    if comment is not None:
        s.set_attribute(A.ASSISTANT_FEEDBACK_COMMENT, comment)


def session(conversation_id: str, *, end: bool = False, span: Span | None = None) -> None:
    """The conversation this turn belongs to (`gen_ai.conversation.id`); `end`: the app closed
    it with this turn (the user ended the chat, the ticket was closed), so the sidecar judges the
    session now instead of after its idle timeout."""
    s = _span(span)
    s.set_attribute(A.GEN_AI_CONVERSATION_ID, conversation_id)
    if end:
        s.set_attribute(A.ASSISTANT_SESSION_END, True)


def scenario(scenario_id: str, *, span: Span | None = None) -> None:
    """Link the turn to a golden scenario (used by reference-based tool-call metrics)."""
    _span(span).set_attribute(A.ASSISTANT_SCENARIO_ID, scenario_id)


def expected_tool_calls(calls: Iterable[Mapping[str, Any]], *, span: Span | None = None) -> None:
    """The calls this turn should make (`[{"name": ..., "arguments": {...}}]`), for the sidecar's
    reference-based tool-call metrics (test traffic, canaries, replayed golden scenarios)."""
    _span(span).set_attribute(A.ASSISTANT_EXPECTED_TOOL_CALLS, _json(
        [{"name": c["name"], "arguments": c.get("arguments", {})} for c in calls]))
