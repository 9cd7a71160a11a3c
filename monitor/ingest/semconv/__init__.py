"""Semantic conventions: what a span says about a turn, whichever instrumentation wrote it.

The rules live in one place, compiled: native/src/conventions/ (one module per convention:
`assistant`, OpenTelemetry `genai` and its events, Arize `openinference`, Traceloop
`openllmetry` and its vector-DB events), over the readers of native/src/readers.rs that coerce or
drop what is wrongly typed and count it. The compiled trace decoder applies them to each span it
reads; this module applies them to attributes Python decoded (the Python decoder, OTLP/JSON, log
records), so every path maps alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from monitor import _native
from monitor.model import SpanFacts

__all__ = ["EVENT_PREFIXES", "extract", "extract_log_events"]

Attrs = Mapping[str, Any]
Event = tuple[str, Attrs]  # (name, attributes or body)

EVENT_PREFIXES: tuple[str, ...] = tuple(_native.EVENT_PREFIXES)  # span events the rules read


def _count(found: list[tuple[str, int]], issues: Counter[str]) -> None:
    for reason, count in found:
        issues[reason] += count


def extract(facts: SpanFacts, attrs: Attrs, events: list[Event], issues: Counter[str]) -> SpanFacts:
    """Fill fresh `facts` from a span's attributes and (already filtered) events."""
    _count(_native.map_span(facts, attrs, events), issues)
    return facts


def extract_log_events(facts: SpanFacts, events: list[Event], issues: Counter[str]) -> SpanFacts:
    """Fill fresh `facts` from the GenAI events of log records about one span, in order."""
    _count(_native.map_log_events(facts, events), issues)
    return facts
