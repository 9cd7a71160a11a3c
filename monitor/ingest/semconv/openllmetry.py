"""Traceloop OpenLLMetry (legacy): indexed prompts and completions, entities, vector-DB events."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from monitor.ingest.semconv._common import (
    Attrs,
    Event,
    _first,
    _float,
    _indexed,
    _int,
    _json,
    _maybe_json,
    _role,
    _str,
    _text,
    metadata_id,
    tool_message,
)
from monitor.model import Message, RetrievedDocument, SpanFacts, SpanRole, ToolCall

_TRACELOOP_ROLES: dict[str, SpanRole] = {
    "workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool",
}


def _ll_messages(attrs: Attrs, prefix: str, issues: Counter[str]) -> list[Message] | None:
    groups = _indexed(attrs, prefix)
    if not groups:
        return None
    messages = []
    for group in groups:
        message = Message(role=str(group.get("role", "")), content=_text(group.get("content")),
                          tool_call_id=_str(group.get("tool_call_id"), issues, "tool_call_id"))
        for call in _indexed(group, "tool_calls."):
            if call.get("name"):
                message.tool_calls.append(ToolCall(
                    name=str(call["name"]), call_id=_str(call.get("id"), issues, "tool_call_id"),
                    arguments=_maybe_json(call.get("arguments"), issues)))
        if group.get("function_call.name"):
            message.tool_calls.append(ToolCall(
                name=str(group["function_call.name"]),
                arguments=_maybe_json(group.get("function_call.arguments"), issues)))
        messages.append(message)
    return messages


# LangChain callbacks' payloads, as OpenLLMetry's LangChain instrumentation logs them:
# {"inputs" | "outputs" | "query" | "input_str" | "output": ..., "tags", "metadata", "kwargs"}
_LANGCHAIN_PAYLOAD = {"inputs", "outputs", "query", "input_str", "output", "tags", "metadata",
                      "kwargs"}


def _entity_payload(raw: Any, issues: Counter[str]) -> Any:
    """traceloop.entity.input/output: JSON, often {"args": [...], "kwargs": {...}}, or a LangChain
    callback's payload (its value: the chain's inputs, the retriever's query, the tool's)."""
    data = _json(raw, issues, "malformed_entity")
    if isinstance(data, Mapping) and "kwargs" in data and set(data) <= _LANGCHAIN_PAYLOAD:
        key = next((k for k in ("inputs", "query", "outputs", "output", "input_str")
                    if k in data), None)
        if key is not None:
            return data[key]
    if isinstance(data, Mapping) and set(data) <= {"args", "kwargs"}:
        args, kwargs = data.get("args") or [], data.get("kwargs") or {}
        if not isinstance(args, list) or not isinstance(kwargs, Mapping):
            issues["malformed_entity"] += 1
            return data
        if not args:
            return dict(kwargs)
        if len(args) == 1 and not kwargs:
            return args[0]
    return data


def _has_indexed(attrs: Attrs, prefix: str) -> bool:
    return f"{prefix}0.role" in attrs or f"{prefix}0.content" in attrs


def map_openllmetry(attrs: Attrs, facts: SpanFacts, issues: Counter[str]) -> bool:
    span_kind = attrs.get("traceloop.span.kind")
    # Cheap guards first: a full key scan per prefix is the costly part of this mapper.
    prompts = _ll_messages(attrs, "gen_ai.prompt.", issues) if _has_indexed(attrs, "gen_ai.prompt.") else None
    completions = (_ll_messages(attrs, "gen_ai.completion.", issues)
                   if _has_indexed(attrs, "gen_ai.completion.") else None)
    if span_kind is None and prompts is None and completions is None:
        return False
    if prompts is not None or completions is not None:
        _role(facts, "llm")
        _first(facts, "input_messages", prompts)
        _first(facts, "output_messages", completions)
        _first(facts, "model", _str(attrs.get("gen_ai.response.model")
                                    or attrs.get("gen_ai.request.model")
                                    or attrs.get("llm.response.model"), issues, "model"))
        facts.input_tokens = facts.input_tokens or _int(
            attrs.get("gen_ai.usage.prompt_tokens", attrs.get("llm.usage.prompt_tokens")), issues)
        facts.output_tokens = facts.output_tokens or _int(
            attrs.get("gen_ai.usage.completion_tokens", attrs.get("llm.usage.completion_tokens")), issues)
    if span_kind is not None:
        role = _TRACELOOP_ROLES.get(str(span_kind), "other")
        _role(facts, role)
        entity_input = _entity_payload(attrs.get("traceloop.entity.input"), issues)
        entity_output = _entity_payload(attrs.get("traceloop.entity.output"), issues)
        documents = (entity_output.get("documents") if isinstance(entity_output, Mapping)
                     else None)
        if role == "tool":
            message = tool_message(entity_output)
            call_id = _str(attrs.get("gen_ai.tool.call.id"), issues, "tool_call_id")
            _first(facts, "tool", ToolCall(name=str(attrs.get("traceloop.entity.name", "tool")),
                                           arguments=entity_input, call_id=call_id,
                                           result=message[0] if message else entity_output,
                                           error=message[1] if message else None))
        elif isinstance(documents, list):  # a LangChain retriever: Document objects
            facts.role = "retrieval"
            facts.documents = facts.documents or [
                RetrievedDocument(id=metadata_id(d.get("metadata")),
                                  content=_text(d.get("page_content")))
                for d in documents if isinstance(d, Mapping)]
            _first(facts, "input_text", entity_input if isinstance(entity_input, str) else None)
        elif isinstance(entity_input, str) or isinstance(entity_output, str):
            _first(facts, "input_text", entity_input if isinstance(entity_input, str) else None)
            _first(facts, "output_text", entity_output if isinstance(entity_output, str) else None)
    return True


def vector_db_events(events: list[Event], facts: SpanFacts, issues: Counter[str]) -> bool:
    """OpenLLMetry's vector-DB instrumentations: one `db.query.result` event per document."""
    docs = []
    for name, attrs in events:
        if name != "db.query.result":
            continue
        doc = RetrievedDocument()
        for key, value in attrs.items():
            if key.endswith(".id"):
                doc.id = str(value)
            elif key.endswith(".document"):
                doc.content = _text(value)
            elif key.endswith(".score"):  # a distance is not a relevance score: left out
                doc.score = _float(value)
        docs.append(doc)
    if docs and not facts.documents:
        facts.documents = docs
        _role(facts, "retrieval")
    return bool(docs)


