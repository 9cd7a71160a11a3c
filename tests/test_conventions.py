"""What each convention reads is declared once, beside its rules (native/src/conventions/), and
the turn's schema is one: the docs' convention table and `turns --explain` read the declaration,
and the compiled turn's two outputs (its JSON, its AssistantTurn) hold AssistantTurn's fields."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from monitor import _native
from monitor.explain import attribute
from monitor.model import AssistantTurn, Feedback, ToolCall

pytestmark = pytest.mark.unit

DOCS = Path(__file__).parent.parent / "docs" / "sending-traces.md"

# The span's facts that assembly records a field's source as (native/src/assemble/): the
# SpanFacts' own, and those read off its messages.
ASSEMBLY_FACTS = {"input_events", "output_events", "requested_call", "tool_message"}


def declared(name: str) -> set[str]:
    convention = _native.CONVENTIONS[name]
    return {key for reads in (convention.attributes, convention.events)
            for keys in reads.values() for key in keys}


def test_the_docs_convention_table_lists_what_each_convention_declares() -> None:
    section = DOCS.read_text().split("### Conventions understood", 1)[1]
    rows = re.findall(r"^\| `(\w+)`: [^|]*\|[^|]*\|([^|]*)\|$", section, re.M)
    table: dict[str, set[str]] = {}
    for name, reads in rows:
        table.setdefault(name, set()).update(re.findall(r"`([^`]+)`", reads))
    assert set(table) == set(_native.CONVENTIONS)
    for name, listed in table.items():
        assert listed == declared(name), (name, listed ^ declared(name))


def test_each_convention_declares_facts_of_a_span() -> None:
    facts = {name for name in dir(_native.SpanFacts) if not name.startswith("_")} | ASSEMBLY_FACTS
    assert list(_native.CONVENTIONS) == ["assistant", "genai", "openinference", "openllmetry"]
    for name, convention in _native.CONVENTIONS.items():
        assert convention.name == name
        assert set(convention.attributes) | set(convention.events) <= facts, name


def test_explain_names_the_declared_attributes_and_events() -> None:
    assert attribute("documents", ["openllmetry"]) == (
        "traceloop.entity.output; db.query.result events")
    assert attribute("model", ["openinference"]) == "llm.model_name"
    # genai is the fallback where a span used another convention as well
    assert attribute("input_text", ["genai", "openllmetry"]) == "traceloop.entity.input"
    assert attribute("input_text", ["genai"]) == "gen_ai.retrieval.query.text"
    assert attribute("question", ["unknown"]) == "question"


def test_the_turns_json_and_object_hold_the_assistant_turns_fields() -> None:
    """AssistantTurn (monitor/model.py) is the schema; the compiled turn is written twice, as its
    JSON (`Turn::to_json`, what the judge queue stores) and as the object (`Turn::to_py`): both
    hold its fields, in its order, and the same values."""
    span = _native.SpanFacts(
        trace_id=bytes(range(16)), span_id=b"\x01" * 8, name="turn", start_ns=1_000_000,
        end_ns=3_500_000, is_root=True, error="boom", conventions=["assistant"],
        question="Where is my refund?", answer="On its way.", route="billing", model="m",
        scenario_id="s1", conversation_id="c1", input_tokens=3, output_tokens=5,
        feedback=Feedback(score=-0.5, comment="slow"),
        tool=ToolCall(name="lookup", arguments={"id": 7}, result=["ok"], call_id="call-1"),
        expected_tool_calls=[ToolCall(name="lookup", arguments={"id": 7})])
    assembler = _native.Assembler(
        max_traces=10, max_spans=10, max_spans_per_trace=10, max_size=1 << 20, root_grace_s=0,
        decision_wait_s=60, remember_completed=0, recent=1)
    assembler.add([span], 0.0)
    done = assembler.flush_all()
    ((built, reason, _),) = done.passed  # no sampler: every turn, as an AssistantTurn
    (record,) = done.recent  # the last turns of a batch, as their JSON
    assert reason == "all" and isinstance(built, AssistantTurn)
    fields = list(AssistantTurn.model_fields)
    assert list(json.loads(record.json)) == fields
    assert list(vars(built)) == fields
    assert AssistantTurn.model_validate_json(record.json).model_dump() == built.model_dump()
