"""`assistant-monitor turns --explain TRACE_ID`: where each field of one turn came from.

Assembly records, per field, the span it was taken from and which of that span's facts
(`AssistantTurn.sources`, see monitor/assemble.py for which source wins); this module names the
attributes or events each convention reads that fact from, as the convention's rules declare them
(`monitor._native.CONVENTIONS`), so a user whose field looks wrong knows which span and attribute
to look at in their tracing backend.
"""

from __future__ import annotations

from typing import Any

from monitor import _native

FIELDS = ("question", "answer", "documents", "tool_calls", "model")


def attribute(fact: str, conventions: list[str]) -> str:
    """Where the span's conventions write `fact`; the first convention that reads it."""
    for name in sorted(conventions, key=lambda c: c == "genai"):  # genai: the fallback
        convention = _native.CONVENTIONS.get(name)
        if convention is None:
            continue
        where = []
        if fact in convention.attributes:
            where.append(", ".join(convention.attributes[fact]))
        if fact in convention.events:
            where.append(", ".join(convention.events[fact]) + " events")
        if where:
            return "; ".join(where)
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
