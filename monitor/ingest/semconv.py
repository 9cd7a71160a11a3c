"""Semantic conventions: what a span says about a turn, whichever instrumentation wrote it.

One mapper per convention, each a small function over a span's attributes that fills a
`SpanFacts` and says whether it recognised anything. All mappers run (a span may carry the
project's own `assistant.*` attributes next to GenAI ones); the first value found wins, in the
order of `MAPPERS`. Nothing here raises on odd input: what cannot be read is counted in `issues`
by reason and the rest of the span is kept.

Conventions understood:
- ``assistant``: this project's attributes (exporters/attributes.py).
- ``genai``: OpenTelemetry GenAI (gen_ai.operation.name, gen_ai.input/output.messages with parts,
  gen_ai.retrieval.*, gen_ai.tool.*), plus the GenAI events (gen_ai.user.message, gen_ai.choice,
  ...) that instrumentations emit as span events or as log records.
- ``openinference``: Arize OpenInference (openinference.span.kind, llm.input_messages.N.message.*,
  retrieval.documents.N.document.*, tool.*, input.value/output.value).
- ``openllmetry``: Traceloop's legacy attributes (gen_ai.prompt.N.*, gen_ai.completion.N.*,
  traceloop.span.kind / entity.*, vector-DB `db.query.result` events).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from exporters import attributes as A
from monitor.model import Feedback, Message, RetrievedDocument, SpanFacts, SpanRole, ToolCall

Attrs = Mapping[str, Any]
Event = tuple[str, Attrs]  # (name, attributes or body)


# ----------------------------------------------------------------------------- small readers

def _json(value: Any, issues: Counter[str], reason: str) -> Any:
    """Decode a JSON-encoded attribute; structured values pass through; garbage is counted."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        issues[reason] += 1
        return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content given as parts: keep the text ones
        texts = [_text(v.get("content") or v.get("text")) if isinstance(v, dict) else _text(v)
                 for v in value]
        return "\n".join(t for t in texts if t) or None
    return json.dumps(value, ensure_ascii=False, default=str)


def _maybe_json(value: Any) -> Any:
    """Tool arguments and results: a dict/list when they are JSON, else the value as given."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _float(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _int(value: Any) -> int:
    try:
        return int(value) if value is not None else 0
    except (TypeError, ValueError):
        return 0


def _indexed(attrs: Attrs, prefix: str) -> list[dict[str, Any]]:
    """Unflatten `prefix.N.rest = v` keys into [{rest: v}, ...] ordered by N."""
    groups: dict[int, dict[str, Any]] = {}
    plen = len(prefix)
    for key in attrs:
        if not key.startswith(prefix):
            continue
        index, _, rest = key[plen:].partition(".")
        if index.isdigit() and rest:
            groups.setdefault(int(index), {})[rest] = attrs[key]
    return [groups[i] for i in sorted(groups)]


def _first(facts: SpanFacts, name: str, value: Any) -> None:
    if value is not None and getattr(facts, name) is None:
        setattr(facts, name, value)


def _role(facts: SpanFacts, role: SpanRole) -> None:
    if facts.role == "other":
        facts.role = role


# ----------------------------------------------------------------------------- assistant.*

def _assistant(attrs: Attrs, facts: SpanFacts, issues: Counter[str]) -> bool:
    found = False
    for key, name in ((A.ASSISTANT_QUESTION, "question"), (A.ASSISTANT_ANSWER, "answer"),
                      (A.ASSISTANT_ROUTE, "route"), (A.ASSISTANT_SCENARIO_ID, "scenario_id")):
        value = attrs.get(key)
        if value is not None:
            _first(facts, name, str(value))
            found = True
    expected = attrs.get(A.ASSISTANT_EXPECTED_TOOL_CALLS)
    if expected is not None:
        found = True
        data = _json(expected, issues, "malformed_expected_tool_calls")
        calls = [ToolCall(name=str(c["name"]), arguments=c.get("arguments"))
                 for c in data if isinstance(c, Mapping) and c.get("name")] \
            if isinstance(data, list) else None
        if calls is None:
            issues["malformed_expected_tool_calls"] += data is not None
        _first(facts, "expected_tool_calls", calls)
    score = attrs.get(A.ASSISTANT_FEEDBACK_SCORE)
    if score is not None:
        found = True
        value = _float(score)
        if value is None or not -1.0 <= value <= 1.0:
            issues["bad_feedback_score"] += 1
        else:
            comment = attrs.get(A.ASSISTANT_FEEDBACK_COMMENT)
            _first(facts, "feedback", Feedback(score=value, comment=_text(comment)))
    return found


# ----------------------------------------------------------------------------- GenAI

_GENAI_ROLES: dict[str, SpanRole] = {
    "chat": "llm", "text_completion": "llm", "generate_content": "llm",
    "retrieval": "retrieval", "execute_tool": "tool",
    "invoke_agent": "agent", "create_agent": "agent", "invoke_workflow": "chain",
}


def _genai_tool_call(part: Mapping[str, Any]) -> ToolCall | None:
    name = part.get("name")
    if not name and isinstance(part.get("function"), Mapping):  # OpenAI-shaped tool_calls
        name = part["function"].get("name")
        arguments = part["function"].get("arguments")
    else:
        arguments = part.get("arguments")
    if not name:
        return None
    return ToolCall(name=str(name), arguments=_maybe_json(arguments), call_id=part.get("id"))


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
                    call = _genai_tool_call(part)
                    if call:
                        message.tool_calls.append(call)
                elif kind == "tool_call_response":
                    message.tool_call_id = part.get("id")
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


def _genai(attrs: Attrs, facts: SpanFacts, issues: Counter[str]) -> bool:
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
    _first(facts, "model", model)
    facts.input_tokens = facts.input_tokens or _int(
        attrs.get(A.GEN_AI_USAGE_INPUT_TOKENS, attrs.get("gen_ai.usage.prompt_tokens")))
    facts.output_tokens = facts.output_tokens or _int(
        attrs.get(A.GEN_AI_USAGE_OUTPUT_TOKENS, attrs.get("gen_ai.usage.completion_tokens")))
    _first(facts, "conversation_id", attrs.get(A.GEN_AI_CONVERSATION_ID))
    if documents is not None or op == A.OPERATION_RETRIEVAL:
        _role(facts, "retrieval")
        if not facts.documents:
            facts.documents = _genai_documents(documents, issues) if documents is not None else []
        _first(facts, "input_text", _text(attrs.get(A.GEN_AI_RETRIEVAL_QUERY_TEXT)))
    if tool_name is not None:
        _role(facts, "tool")
        _first(facts, "tool", ToolCall(
            name=str(tool_name),
            arguments=_maybe_json(attrs.get(A.GEN_AI_TOOL_CALL_ARGUMENTS)),
            result=_maybe_json(attrs.get(A.GEN_AI_TOOL_CALL_RESULT)),
            call_id=attrs.get(A.GEN_AI_TOOL_CALL_ID),
        ))
    return True


# GenAI events (gen_ai.*.message, gen_ai.choice), as span events or log records with a body.
_EVENT_ROLES = {
    "gen_ai.system.message": "system", "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool",
}


def _event_message(role: str, body: Mapping[str, Any]) -> Message:
    message = Message(role=str(body.get("role") or role), content=_text(body.get("content")))
    calls = body.get("tool_calls")
    if isinstance(calls, list):
        message.tool_calls = [c for c in (_genai_tool_call(x) for x in calls
                                          if isinstance(x, Mapping)) if c]
    if role == "tool":
        message.tool_call_id = body.get("id") or body.get("tool_call_id")
    return message


def genai_events(events: list[Event], facts: SpanFacts, issues: Counter[str]) -> bool:
    """Read GenAI content events into the facts' event_inputs / event_outputs."""
    found = False
    for name, body in events:
        if name in _EVENT_ROLES:
            facts.event_inputs.append(_event_message(_EVENT_ROLES[name], body))
        elif name == "gen_ai.choice":
            message = body.get("message")
            facts.event_outputs.append(_event_message(
                "assistant", message if isinstance(message, Mapping) else body))
        elif name == "gen_ai.content.prompt":  # older SDKs: the whole prompt as one JSON attribute
            facts.event_inputs.extend(_legacy_json_messages(body.get("gen_ai.prompt"), issues))
        elif name == "gen_ai.content.completion":
            facts.event_outputs.extend(_legacy_json_messages(body.get("gen_ai.completion"), issues))
        elif name == "gen_ai.client.inference.operation.details":
            _genai(body, facts, issues)
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
    return [_event_message(str(m.get("role", "")), m) for m in data if isinstance(m, Mapping)]


# ----------------------------------------------------------------------------- OpenInference

_OI_ROLES: dict[str, SpanRole] = {
    "LLM": "llm", "RETRIEVER": "retrieval", "RERANKER": "retrieval", "TOOL": "tool",
    "CHAIN": "chain", "AGENT": "agent",
}


def _oi_messages(attrs: Attrs, prefix: str) -> list[Message] | None:
    groups = _indexed(attrs, prefix)
    if not groups:
        return None
    messages = []
    for group in groups:
        content = group.get("message.content")
        if content is None:  # multimodal: message.contents.M.message_content.text
            texts = [g.get("message_content.text") for g in _indexed(group, "message.contents.")]
            content = "\n".join(t for t in texts if t) or None
        message = Message(role=str(group.get("message.role", "")), content=_text(content),
                          tool_call_id=group.get("message.tool_call_id"))
        for call in _indexed(group, "message.tool_calls."):
            name = call.get("tool_call.function.name")
            if name:
                message.tool_calls.append(ToolCall(
                    name=str(name), call_id=call.get("tool_call.id"),
                    arguments=_maybe_json(call.get("tool_call.function.arguments"))))
        messages.append(message)
    return messages


def _oi_documents(attrs: Attrs, prefix: str) -> list[RetrievedDocument]:
    return [
        RetrievedDocument(id=None if d.get("document.id") is None else str(d["document.id"]),
                          content=_text(d.get("document.content")),
                          score=_float(d.get("document.score")))
        for d in _indexed(attrs, prefix)
    ]


def _openinference(attrs: Attrs, facts: SpanFacts, issues: Counter[str]) -> bool:
    kind = attrs.get("openinference.span.kind")
    if kind is None:
        return False
    role = _OI_ROLES.get(str(kind).upper(), "other")
    _role(facts, role)
    is_json = lambda key: str(attrs.get(key, "")).startswith("application/json")  # noqa: E731
    input_value, output_value = attrs.get("input.value"), attrs.get("output.value")
    if role == "llm":
        _first(facts, "input_messages", _oi_messages(attrs, "llm.input_messages."))
        _first(facts, "output_messages", _oi_messages(attrs, "llm.output_messages."))
        _first(facts, "model", attrs.get("llm.model_name"))
        facts.input_tokens = facts.input_tokens or _int(attrs.get("llm.token_count.prompt"))
        facts.output_tokens = facts.output_tokens or _int(attrs.get("llm.token_count.completion"))
    elif role == "retrieval":
        if not facts.documents:
            facts.documents = (_oi_documents(attrs, "reranker.output_documents.")
                               or _oi_documents(attrs, "retrieval.documents."))
        _first(facts, "input_text", _text(attrs.get("reranker.query") or input_value))
    elif role == "tool":
        name = attrs.get("tool.name") or attrs.get("tool_call.function.name")
        if name:
            arguments = attrs.get("tool_call.function.arguments", input_value)
            _first(facts, "tool", ToolCall(name=str(name), arguments=_maybe_json(arguments),
                                           result=_maybe_json(output_value),
                                           call_id=attrs.get("tool_call.id")))
        else:
            issues["tool_without_name"] += 1
    else:  # chain / agent: plain-text input and output are the turn's question and answer
        if input_value is not None and not is_json("input.mime_type"):
            _first(facts, "input_text", _text(input_value))
        if output_value is not None and not is_json("output.mime_type"):
            _first(facts, "output_text", _text(output_value))
    _first(facts, "conversation_id", attrs.get("session.id"))
    return True


# ----------------------------------------------------------------------------- OpenLLMetry

_TRACELOOP_ROLES: dict[str, SpanRole] = {
    "workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool",
}


def _ll_messages(attrs: Attrs, prefix: str) -> list[Message] | None:
    groups = _indexed(attrs, prefix)
    if not groups:
        return None
    messages = []
    for group in groups:
        message = Message(role=str(group.get("role", "")), content=_text(group.get("content")),
                          tool_call_id=group.get("tool_call_id"))
        for call in _indexed(group, "tool_calls."):
            if call.get("name"):
                message.tool_calls.append(ToolCall(name=str(call["name"]), call_id=call.get("id"),
                                                   arguments=_maybe_json(call.get("arguments"))))
        if group.get("function_call.name"):
            message.tool_calls.append(ToolCall(
                name=str(group["function_call.name"]),
                arguments=_maybe_json(group.get("function_call.arguments"))))
        messages.append(message)
    return messages


def _entity_payload(raw: Any, issues: Counter[str]) -> Any:
    """traceloop.entity.input/output: JSON, often {"args": [...], "kwargs": {...}}."""
    data = _json(raw, issues, "malformed_entity")
    if isinstance(data, Mapping) and set(data) <= {"args", "kwargs"}:
        args, kwargs = data.get("args") or [], data.get("kwargs") or {}
        if not args and isinstance(kwargs, Mapping):
            return dict(kwargs)
        if len(args) == 1 and not kwargs:
            return args[0]
    return data


def _has_indexed(attrs: Attrs, prefix: str) -> bool:
    return f"{prefix}0.role" in attrs or f"{prefix}0.content" in attrs


def _openllmetry(attrs: Attrs, facts: SpanFacts, issues: Counter[str]) -> bool:
    span_kind = attrs.get("traceloop.span.kind")
    # Cheap guards first: a full key scan per prefix is the costly part of this mapper.
    prompts = _ll_messages(attrs, "gen_ai.prompt.") if _has_indexed(attrs, "gen_ai.prompt.") else None
    completions = (_ll_messages(attrs, "gen_ai.completion.")
                   if _has_indexed(attrs, "gen_ai.completion.") else None)
    if span_kind is None and prompts is None and completions is None:
        return False
    if prompts is not None or completions is not None:
        _role(facts, "llm")
        _first(facts, "input_messages", prompts)
        _first(facts, "output_messages", completions)
        _first(facts, "model", attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
               or attrs.get("llm.response.model"))
        facts.input_tokens = facts.input_tokens or _int(
            attrs.get("gen_ai.usage.prompt_tokens", attrs.get("llm.usage.prompt_tokens")))
        facts.output_tokens = facts.output_tokens or _int(
            attrs.get("gen_ai.usage.completion_tokens", attrs.get("llm.usage.completion_tokens")))
    if span_kind is not None:
        role = _TRACELOOP_ROLES.get(str(span_kind), "other")
        _role(facts, role)
        entity_input = _entity_payload(attrs.get("traceloop.entity.input"), issues)
        entity_output = _entity_payload(attrs.get("traceloop.entity.output"), issues)
        if role == "tool":
            _first(facts, "tool", ToolCall(name=str(attrs.get("traceloop.entity.name", "tool")),
                                           arguments=entity_input, result=entity_output))
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


# ----------------------------------------------------------------------------- the table

Mapper = Callable[[Attrs, SpanFacts, Counter[str]], bool]
MAPPERS: tuple[tuple[str, Mapper], ...] = (
    ("assistant", _assistant),
    ("genai", _genai),
    ("openinference", _openinference),
    ("openllmetry", _openllmetry),
)
EVENT_MAPPERS = (("genai", genai_events), ("openllmetry", vector_db_events))
INTERESTING_EVENT_PREFIXES = ("gen_ai.", "db.query.result")


def extract(facts: SpanFacts, attrs: Attrs, events: list[Event], issues: Counter[str]) -> SpanFacts:
    """Fill `facts` from a span's attributes and (already filtered) events."""
    for name, mapper in MAPPERS:
        if mapper(attrs, facts, issues):
            facts.conventions.add(name)
    if events:
        for name, event_mapper in EVENT_MAPPERS:
            if event_mapper(events, facts, issues):
                facts.conventions.add(name)
    if not facts.conventions:
        issues["unknown_convention"] += 1
    return facts
