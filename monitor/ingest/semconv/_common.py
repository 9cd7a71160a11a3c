"""Readers shared by the convention mappers: JSON, text, numbers, indexed keys."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from monitor.model import SpanFacts, SpanRole

Attrs = Mapping[str, Any]
Event = tuple[str, Attrs]  # (name, attributes or body)


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


