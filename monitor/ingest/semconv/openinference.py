"""Arize OpenInference: span kinds, flattened messages, documents, tools."""

from __future__ import annotations

from collections import Counter

from monitor.ingest.semconv._common import (
    Attrs,
    _first,
    _float,
    _indexed,
    _int,
    _maybe_json,
    _role,
    _str,
    _text,
    metadata_id,
    tool_message,
)
from monitor.ingest.semconv.genai import genai_messages
from monitor.model import Message, RetrievedDocument, SpanFacts, SpanRole, ToolCall

_OI_ROLES: dict[str, SpanRole] = {
    "LLM": "llm", "RETRIEVER": "retrieval", "RERANKER": "retrieval", "TOOL": "tool",
    "CHAIN": "chain", "AGENT": "agent",
}


def _oi_messages(attrs: Attrs, prefix: str, issues: Counter[str]) -> list[Message] | None:
    groups = _indexed(attrs, prefix)
    if not groups:
        return None
    messages = []
    for group in groups:
        content = group.get("message.content")
        if content is None:  # multimodal: message.contents.M.message_content.text
            texts = [_text(g.get("message_content.text"))
                     for g in _indexed(group, "message.contents.")]
            content = "\n".join(t for t in texts if t) or None
        message = Message(role=str(group.get("message.role", "")), content=_text(content),
                          tool_call_id=_str(group.get("message.tool_call_id"), issues,
                                            "tool_call_id"))
        for call in _indexed(group, "message.tool_calls."):
            name = call.get("tool_call.function.name")
            if name:
                message.tool_calls.append(ToolCall(
                    name=str(name), call_id=_str(call.get("tool_call.id"), issues, "tool_call_id"),
                    arguments=_maybe_json(call.get("tool_call.function.arguments"), issues)))
        messages.append(message)
    return messages


def _payload_messages(attrs: Attrs, key: str, issues: Counter[str]) -> list[Message] | None:
    """An LLM span that logs no flattened messages: its JSON value as chat messages, or as an
    OpenAI Responses object whose `output` items are the messages (what the OpenAI Agents SDK
    logs for a streamed Chat Completions call)."""
    if not str(attrs.get(f"{key}.mime_type", "")).startswith("application/json"):
        return None
    data = _maybe_json(attrs.get(f"{key}.value"), issues)
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0] if data[0].get("object") == "response" else data
    if isinstance(data, dict) and data.get("object") == "response":
        data = [item for item in data.get("output") or [] if isinstance(item, dict)
                and item.get("type") == "message"]
    if not isinstance(data, list) or not all(isinstance(m, dict) and "role" in m for m in data):
        return None
    return genai_messages(data, issues) or None


def _oi_documents(attrs: Attrs, prefix: str) -> list[RetrievedDocument]:
    return [
        RetrievedDocument(id=_document_id(d), content=_text(d.get("document.content")),
                          score=_float(d.get("document.score")))
        for d in _indexed(attrs, prefix)
    ]


def _document_id(document: Attrs) -> str | None:
    """`document.id`; else the id LangChain's retrievers keep in the document's metadata."""
    value = document.get("document.id")
    if value is None:
        return metadata_id(_maybe_json(document.get("document.metadata")))
    return str(value)


def map_openinference(attrs: Attrs, facts: SpanFacts, issues: Counter[str]) -> bool:
    kind = attrs.get("openinference.span.kind")
    if kind is None:
        return False
    role = _OI_ROLES.get(str(kind).upper(), "other")
    _role(facts, role)
    is_json = lambda key: str(attrs.get(key, "")).startswith("application/json")  # noqa: E731
    input_value, output_value = attrs.get("input.value"), attrs.get("output.value")
    if role == "llm":
        _first(facts, "input_messages", _oi_messages(attrs, "llm.input_messages.", issues))
        _first(facts, "output_messages", _oi_messages(attrs, "llm.output_messages.", issues)
               or _payload_messages(attrs, "output", issues))
        _first(facts, "model", _str(attrs.get("llm.model_name"), issues, "model"))
        facts.input_tokens = facts.input_tokens or _int(attrs.get("llm.token_count.prompt"), issues)
        facts.output_tokens = facts.output_tokens or _int(attrs.get("llm.token_count.completion"), issues)
    elif role == "retrieval":
        if not facts.documents:
            facts.documents = (_oi_documents(attrs, "reranker.output_documents.")
                               or _oi_documents(attrs, "retrieval.documents."))
        _first(facts, "input_text", _text(attrs.get("reranker.query") or input_value))
    elif role == "tool":
        name = attrs.get("tool.name") or attrs.get("tool_call.function.name")
        if name:
            arguments = attrs.get("tool_call.function.arguments", input_value)
            result = _maybe_json(output_value, issues)
            _first(facts, "tool", ToolCall(
                name=str(name), arguments=_maybe_json(arguments, issues), result=result,
                error=(tool_message(result) or (None, None))[1],
                call_id=_str(attrs.get("tool_call.id"), issues, "tool_call_id")))
        else:
            issues["tool_without_name"] += 1
    else:  # chain / agent: plain-text input and output are the turn's question and answer
        if input_value is not None and not is_json("input.mime_type"):
            _first(facts, "input_text", _text(input_value))
        if output_value is not None and not is_json("output.mime_type"):
            _first(facts, "output_text", _text(output_value))
    _first(facts, "conversation_id", _str(attrs.get("session.id"), issues, "conversation_id"))
    return True


