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

from collections import Counter
from collections.abc import Callable

from monitor.ingest.semconv._common import Attrs, Event
from monitor.ingest.semconv.assistant import map_assistant
from monitor.ingest.semconv.genai import genai_events, genai_messages, map_genai
from monitor.ingest.semconv.openinference import map_openinference
from monitor.ingest.semconv.openllmetry import map_openllmetry, vector_db_events
from monitor.model import SpanFacts

__all__ = ["INTERESTING_EVENT_PREFIXES", "extract", "genai_events", "genai_messages"]


Mapper = Callable[[Attrs, SpanFacts, Counter[str]], bool]
MAPPERS: tuple[tuple[str, Mapper], ...] = (
    ("assistant", map_assistant),
    ("genai", map_genai),
    ("openinference", map_openinference),
    ("openllmetry", map_openllmetry),
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
