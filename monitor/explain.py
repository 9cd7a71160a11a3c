"""`assistant-monitor turns --explain TRACE_ID`: where each field of one turn came from.

Assembly records, per field, the span it was taken from and which of that span's facts
(`AssistantTurn.sources`, see monitor/assemble.py for which source wins); this module names the
attributes or events each convention writes that fact in, so a user whose field looks wrong
knows which span and attribute to look at in their tracing backend.
"""

from __future__ import annotations

from typing import Any

# (the span's fact, convention) -> where that convention writes it
ATTRIBUTES: dict[tuple[str, str], str] = {
    ("question", "assistant"): "assistant.question",
    ("answer", "assistant"): "assistant.answer",
    ("input_text", "openinference"): "input.value (a RETRIEVER span's query, a CHAIN's input)",
    ("input_text", "openllmetry"): "traceloop.entity.input",
    ("input_text", "genai"): "gen_ai.retrieval.query.text",
    ("output_text", "openinference"): "output.value",
    ("output_text", "openllmetry"): "traceloop.entity.output",
    ("input_messages", "openinference"): "llm.input_messages.N.message.*",
    ("input_messages", "openllmetry"): "gen_ai.prompt.N.*",
    ("input_messages", "genai"): "gen_ai.input.messages",
    ("input_events", "genai"): "gen_ai.*.message log events (gen_ai.user.message, ...)",
    ("output_messages", "openinference"): "llm.output_messages.N.message.*",
    ("output_messages", "openllmetry"): "gen_ai.completion.N.*",
    ("output_messages", "genai"): "gen_ai.output.messages",
    ("output_events", "genai"): "gen_ai.choice log events",
    ("documents", "openinference"): "retrieval.documents.N.document.* (id: document.id, else "
                                    "the id in document.metadata)",
    ("documents", "genai"): "gen_ai.retrieval.documents",
    ("documents", "openllmetry"): "db.query.result events",
    ("tool", "openinference"): "tool.name, input.value, output.value",
    ("tool", "openllmetry"): "traceloop.entity.name, traceloop.entity.input/output",
    ("tool", "genai"): "gen_ai.tool.name, gen_ai.tool.call.arguments, gen_ai.tool.call.result",
    ("requested_call", "openinference"): "llm.*_messages.N.message.tool_calls.N.tool_call.*",
    ("requested_call", "openllmetry"): "gen_ai.completion.N.tool_calls.N.*",
    ("requested_call", "genai"): "tool_call parts of gen_ai.output.messages / gen_ai.choice",
    ("tool_message", "openinference"): "llm.input_messages.N.message (role tool)",
    ("tool_message", "openllmetry"): "gen_ai.prompt.N (role tool)",
    ("tool_message", "genai"): "tool_call_response parts of gen_ai.input.messages, "
                               "gen_ai.tool.message events",
    ("model", "openinference"): "llm.model_name",
    ("model", "openllmetry"): "gen_ai.response.model, gen_ai.request.model",
    ("model", "genai"): "gen_ai.response.model, gen_ai.request.model",
}

FIELDS = ("question", "answer", "documents", "tool_calls", "model")


def attribute(fact: str, conventions: list[str]) -> str:
    """Where the span's conventions write `fact`; the first convention that has it."""
    for convention in sorted(conventions, key=lambda c: c == "genai"):  # genai: the fallback
        if (fact, convention) in ATTRIBUTES:
            return ATTRIBUTES[(fact, convention)]
    return fact


def _field_order(key: str) -> tuple[int, str]:
    head = key.split(".")[0]
    return (FIELDS.index(head) if head in FIELDS else len(FIELDS), key)


def explain(turn: dict[str, Any]) -> list[str]:
    """Lines for a person: each field, the span it came from, and the attribute it was in."""
    sources: dict[str, list[str]] = turn.get("sources") or {}
    lines = [f"turn {turn['trace_id']} (service {turn.get('service')}, "
             f"{turn.get('span_count', 0)} spans)",
             f"conventions seen: {', '.join(turn.get('conventions') or []) or 'none'}"]
    width = max((len(k) for k in sources), default=8)
    for key in sorted(sources, key=_field_order):
        span_id, span_name, fact, conventions = (sources[key] + ["", "", "", ""])[:4]
        where = attribute(fact, [c for c in conventions.split(",") if c])
        lines.append(f"  {key:{width}}  span {span_id} {span_name!r}: {where}")
    for field in ("question", "answer", "model"):
        if turn.get(field) is None and field not in sources:
            lines.append(f"  {field:{width}}  not found in any span")
    return lines
