"""This project's own `assistant.*` attributes (exporters/attributes.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from exporters import attributes as A
from monitor.ingest.semconv._common import (
    Attrs,
    _first,
    _float,
    _json,
    _text,
)
from monitor.model import Feedback, SpanFacts, ToolCall


def map_assistant(attrs: Attrs, facts: SpanFacts, issues: Counter[str]) -> bool:
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


