"""Readers shared by the convention mappers: JSON, text, numbers, ids, indexed keys.

Every value read from a span passes through one of these, so a wrong type (an integer model
name, an array where an id belongs, Infinity as a token count, JSON nested thousands deep) is
coerced or dropped here and counted in `issues`, never raised later in assembly or judging.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from monitor.model import SpanFacts, SpanRole, utf8_value

try:  # native/: the compiled trace decoder, and `_indexed` compiled
    import assistant_monitor_native as _compiled
except ImportError:
    _compiled = None

# "python": decode and map in Python only, even where native/ is installed (the reference the
# compiled path is tested against, and a way out should it ever misbehave).
DECODER_ENV = "ASSISTANT_MONITOR_DECODER"
_native_indexed: Any = None


def use_compiled(enabled: bool) -> None:
    """The compiled `_indexed` on or off (at import: on unless $ASSISTANT_MONITOR_DECODER is
    "python"); the bench and the tests compare both."""
    global _native_indexed
    _native_indexed = _compiled.indexed if enabled and _compiled is not None else None


use_compiled(os.environ.get(DECODER_ENV) != "python")

Attrs = Mapping[str, Any]
Event = tuple[str, Attrs]  # (name, attributes or body)

MAX_JSON_DEPTH = 32  # tool arguments and message parts nested deeper are dropped and counted
MAX_TOKENS = 1 << 31  # a token count beyond this is not a count


def _too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a decoded JSON value nests deeper than `limit` (iterative: no recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _may_nest_deeply(text: str) -> bool:
    """Cheap bound first: JSON text with few brackets cannot nest deeply (no walk needed)."""
    return text.count("[") + text.count("{") > MAX_JSON_DEPTH


# JSON's escape of a UTF-16 surrogate: only text holding one can decode to a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _loads(text: str, issues: Counter[str] | None) -> Any:
    """json.loads (and its errors), lone surrogates mended in every string and key (counted
    `lone_surrogate` once per value)."""
    decoded = json.loads(text)
    if "\\u" not in text or not _SURROGATE_ESCAPE.search(text):
        return decoded
    decoded, mended = utf8_value(decoded)
    if mended and issues is not None:
        issues["lone_surrogate"] += 1
    return decoded


def _json(value: Any, issues: Counter[str], reason: str) -> Any:
    """Decode a JSON-encoded attribute; structured values pass through; garbage is counted."""
    if isinstance(value, str):
        try:
            decoded = _loads(value, issues)
        except (ValueError, RecursionError):
            issues[reason] += 1
            return None
        if not _may_nest_deeply(value):
            return decoded
        value = decoded
    if isinstance(value, (Mapping, list)) and _too_deep(value):
        issues["value_too_deep"] += 1
        return None
    return value


def _text(value: Any, depth: int = 0) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and depth < MAX_JSON_DEPTH:  # content given as parts: keep text
        texts = [_text(v.get("content") or v.get("text"), depth + 1) if isinstance(v, Mapping)
                 else _text(v, depth + 1) for v in value]
        return "\n".join(t for t in texts if t) or None
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError):
        return None


def _maybe_json(value: Any, issues: Counter[str] | None = None) -> Any:
    """Tool arguments and results: a dict/list when they are JSON, else the value as given.
    Values nested deeper than MAX_JSON_DEPTH are dropped (counted): nothing downstream
    (pydantic, the store, the judges) has to survive them."""
    if isinstance(value, str):
        try:
            decoded = _loads(value, issues)
        except (ValueError, RecursionError):
            return value
        if isinstance(decoded, (Mapping, list)) and _may_nest_deeply(value) and _too_deep(decoded):
            if issues is not None:
                issues["value_too_deep"] += 1
            return value  # kept as the text it was
        return decoded
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (Mapping, list)) and _too_deep(value):
        if issues is not None:
            issues["value_too_deep"] += 1
        return None
    return value


def _float(value: Any) -> float | None:
    """A finite float, or None (NaN and Infinity are not scores)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _int(value: Any, issues: Counter[str] | None = None) -> int:
    """A token count: a non-negative integer below MAX_TOKENS, else 0 (counted)."""
    if value is None:
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        value = -1
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        number = -1
    if 0 <= number < MAX_TOKENS:
        return number
    if issues is not None:
        issues["invalid_token_count"] += 1
    return 0


def _scalar(value: Any) -> bool:
    """A finite number of sane size: something an id or a name may be coerced from."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 10 ** 64
    return isinstance(value, float) and math.isfinite(value)


def _str(value: Any, issues: Counter[str], name: str) -> str | None:
    """A string-typed field (model, ids): strings pass, numbers are coerced (counted
    `<name>_coerced`), anything else is dropped (counted `<name>_wrong_type`)."""
    if value is None or isinstance(value, str):
        return value
    if _scalar(value):
        issues[f"{name}_coerced"] += 1
        return str(value)
    issues[f"{name}_wrong_type"] += 1
    return None


def _indexed(attrs: Attrs, prefix: str) -> list[dict[str, Any]]:
    """Unflatten `prefix.N.rest = v` keys into [{rest: v}, ...] ordered by N."""
    if _native_indexed is not None:
        found = _native_indexed(attrs, prefix)  # the same lists (tests/test_native_decoder.py)
        if found is not None:
            return found
    return _indexed_python(attrs, prefix)


def _indexed_python(attrs: Attrs, prefix: str) -> list[dict[str, Any]]:
    groups: dict[int, dict[str, Any]] = {}
    plen = len(prefix)
    for key in attrs:
        if not isinstance(key, str) or not key.startswith(prefix):
            continue
        index, _, rest = key[plen:].partition(".")
        # ASCII digits only: "²".isdigit() is true, but int("²") raises.
        if rest and index.isascii() and index.isdigit() and len(index) <= 9:
            groups.setdefault(int(index), {})[rest] = attrs[key]
    return [groups[i] for i in sorted(groups)]


def _first(facts: SpanFacts, name: str, value: Any) -> None:
    if value is not None and getattr(facts, name) is None:
        setattr(facts, name, value)


def _role(facts: SpanFacts, role: SpanRole) -> None:
    if facts.role == "other":
        facts.role = role


def metadata_id(metadata: Any) -> str | None:
    """The id frameworks (LangChain's retrievers, vector stores) keep in a document's metadata."""
    if isinstance(metadata, dict):
        value = next((metadata[k] for k in ("id", "doc_id", "document_id")
                      if isinstance(metadata.get(k), (str, int))), None)
        return None if value is None else str(value)
    return None


def tool_message(value: Any) -> tuple[Any, str | None] | None:
    """A tool's output logged as the LangChain ToolMessage it became, in either serialised form
    ({"type": "tool", "data": {...}} or {"lc": 1, "id": [..., "ToolMessage"], "kwargs": {...}}):
    its content, and the error when its status says the tool failed. A failure the tool handled
    leaves the span's own status OK, so this is the only sign of it. None: not a tool message."""
    if not isinstance(value, dict):
        return None
    if set(value) <= {"output", "kwargs"} and "output" in value:  # a LangChain callback's payload
        value = value["output"]
        if not isinstance(value, dict):
            return None
    if value.get("type") == "tool" and isinstance(value.get("data"), dict):
        body = value["data"]
    elif (value.get("lc") == 1 and isinstance(value.get("id"), list) and value["id"]
          and value["id"][-1] == "ToolMessage" and isinstance(value.get("kwargs"), dict)):
        body = value["kwargs"]
    else:
        return None
    content = body.get("content")
    return content, (str(content or "tool error") if body.get("status") == "error" else None)
