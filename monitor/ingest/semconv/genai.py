"""OpenTelemetry GenAI: attributes, typed message parts, and the GenAI events."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from exporters import attributes as A
from monitor.ingest.semconv._common import (
    Attrs,
    Event,
    _first,
    _float,
    _int,
    _json,
    _maybe_json,
    _role,
    _str,
    _text,
    tool_message,
)
from monitor.model import Message, RetrievedDocument, SpanFacts, SpanRole, ToolCall

_GENAI_ROLES: dict[str, SpanRole] = {
    "chat": "llm", "text_completion": "llm", "generate_content": "llm",
    "retrieval": "retrieval", "execute_tool": "tool",
    "invoke_agent": "agent", "create_agent": "agent", "invoke_workflow": "chain",
}


def _genai_tool_call(part: Mapping[str, Any], issues: Counter[str]) -> ToolCall | None:
    name = part.get("name")
    if not name and isinstance(part.get("function"), Mapping):  # OpenAI-shaped tool_calls
        name = part["function"].get("name")
        arguments = part["function"].get("arguments")
    else:
        arguments = part.get("arguments")
    if not name:
        return None
    return ToolCall(name=str(name), arguments=_maybe_json(arguments, issues),
                    call_id=_str(part.get("id"), issues, "tool_call_id"))


def genai_messages(raw: Any, issues: Counter[str]) -> list[Message] | None:
    """Parse gen_ai.input.messages / gen_ai.output.messages (JSON with typed parts)."""
    data = _json(raw, issues, "malformed_messages")
    if data is None:
        return None
    if not isinstance(data, list):
        issues["malformed_messages"] += 1
        return None
    messages = []
    for item in data:
        if not isinstance(item, Mapping):
            issues["malformed_messages"] += 1
            continue
        message = Message(role=str(item.get("role", "")))
        texts: list[str] = []
        parts = item.get("parts")
        if isinstance(parts, list):
            for part in parts:
                if not isinstance(part, Mapping):
                    continue
                kind = part.get("type")
                if kind == "text" and part.get("content") is not None:
                    texts.append(str(part["content"]))
                elif kind == "tool_call":
                    call = _genai_tool_call(part, issues)
                    if call:
                        message.tool_calls.append(call)
                elif kind == "tool_call_response":
                    message.tool_call_id = _str(part.get("id"), issues, "tool_call_id")
                    texts.append(_text(part.get("response", part.get("result"))) or "")
        elif "content" in item:  # pre-parts shape: {"role", "content"}
            text = _text(item.get("content"))
            if text:
                texts.append(text)
        message.content = "\n".join(texts) if texts else None
        messages.append(message)
    return messages


def _genai_documents(raw: Any, issues: Counter[str]) -> list[RetrievedDocument]:
    data = _json(raw, issues, "malformed_documents")
    if not isinstance(data, list):
        if data is not None:
            issues["malformed_documents"] += 1
        return []
    docs = []
    for item in data:
        if isinstance(item, Mapping):
            content = item.get("content", item.get("text", item.get("page_content")))
            doc_id = item.get("id")
            docs.append(RetrievedDocument(id=None if doc_id is None else str(doc_id),
                                          content=_text(content), score=_float(item.get("score"))))
        elif isinstance(item, str):
            docs.append(RetrievedDocument(content=item))
    return docs


def map_genai(attrs: Attrs, facts: SpanFacts, issues: Counter[str]) -> bool:
    op = attrs.get(A.GEN_AI_OPERATION_NAME)
    inputs = attrs.get(A.GEN_AI_INPUT_MESSAGES)
    outputs = attrs.get(A.GEN_AI_OUTPUT_MESSAGES)
    tool_name = attrs.get(A.GEN_AI_TOOL_NAME)
    documents = attrs.get(A.GEN_AI_RETRIEVAL_DOCUMENTS)
    model = attrs.get(A.GEN_AI_RESPONSE_MODEL) or attrs.get(A.GEN_AI_REQUEST_MODEL)
    if (op is None and inputs is None and outputs is None and tool_name is None
            and documents is None and model is None):
        return False
    if op is not None:
        _role(facts, _GENAI_ROLES.get(str(op), "other"))
    if inputs is not None:
        _first(facts, "input_messages", genai_messages(inputs, issues))
    if outputs is not None:
        _first(facts, "output_messages", genai_messages(outputs, issues))
    if facts.role == "other" and (inputs is not None or outputs is not None):
        facts.role = "llm"
    _first(facts, "model", _str(model, issues, "model"))
    facts.input_tokens = facts.input_tokens or _int(
        attrs.get(A.GEN_AI_USAGE_INPUT_TOKENS, attrs.get("gen_ai.usage.prompt_tokens")), issues)
    facts.output_tokens = facts.output_tokens or _int(
        attrs.get(A.GEN_AI_USAGE_OUTPUT_TOKENS, attrs.get("gen_ai.usage.completion_tokens")), issues)
    _first(facts, "conversation_id",
           _str(attrs.get(A.GEN_AI_CONVERSATION_ID), issues, "conversation_id"))
    if documents is not None or op == A.OPERATION_RETRIEVAL:
        _role(facts, "retrieval")
        if not facts.documents:
            facts.documents = _genai_documents(documents, issues) if documents is not None else []
        _first(facts, "input_text", _text(attrs.get(A.GEN_AI_RETRIEVAL_QUERY_TEXT)))
    if tool_name is not None:
        _role(facts, "tool")
        result = _maybe_json(attrs.get(A.GEN_AI_TOOL_CALL_RESULT), issues)
        message = tool_message(result)  # a framework's serialised tool message: its content
        _first(facts, "tool", ToolCall(
            name=str(tool_name),
            arguments=_maybe_json(attrs.get(A.GEN_AI_TOOL_CALL_ARGUMENTS), issues),
            result=message[0] if message else result,
            error=message[1] if message else None,
            call_id=_str(attrs.get(A.GEN_AI_TOOL_CALL_ID), issues, "tool_call_id"),
        ))
    return True


# GenAI events (gen_ai.*.message, gen_ai.choice), as span events or log records with a body.
_EVENT_ROLES = {
    "gen_ai.system.message": "system", "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool",
}


def _event_message(role: str, body: Mapping[str, Any], issues: Counter[str]) -> Message:
    message = Message(role=str(body.get("role") or role), content=_text(body.get("content")))
    calls = body.get("tool_calls")
    if isinstance(calls, list):
        message.tool_calls = [c for c in (_genai_tool_call(x, issues) for x in calls
                                          if isinstance(x, Mapping)) if c]
    if role == "tool":
        message.tool_call_id = _str(body.get("id") or body.get("tool_call_id"), issues,
                                    "tool_call_id")
    return message


def genai_events(events: list[Event], facts: SpanFacts, issues: Counter[str]) -> bool:
    """Read GenAI content events into the facts' event_inputs / event_outputs."""
    found = False
    for name, body in events:
        if name in _EVENT_ROLES:
            facts.event_inputs.append(_event_message(_EVENT_ROLES[name], body, issues))
        elif name == "gen_ai.choice":
            message = body.get("message")
            facts.event_outputs.append(_event_message(
                "assistant", message if isinstance(message, Mapping) else body, issues))
        elif name == "gen_ai.content.prompt":  # older SDKs: the whole prompt as one JSON attribute
            facts.event_inputs.extend(_legacy_json_messages(body.get("gen_ai.prompt"), issues))
        elif name == "gen_ai.content.completion":
            facts.event_outputs.extend(_legacy_json_messages(body.get("gen_ai.completion"), issues))
        elif name == "gen_ai.client.inference.operation.details":
            map_genai(body, facts, issues)
        else:
            continue
        found = True
    if found:
        _role(facts, "llm")
    return found


def _legacy_json_messages(raw: Any, issues: Counter[str]) -> list[Message]:
    data = _json(raw, issues, "malformed_messages")
    if not isinstance(data, list):
        return []
    return [_event_message(str(m.get("role", "")), m, issues) for m in data
            if isinstance(m, Mapping)]


