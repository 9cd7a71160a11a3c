"""The labelled agent set (bench/data/agent_sessions.jsonl) as spans, as an agent's
instrumentation writes them, assembled into turns: what bench/agent_labels.py and
tests/test_trajectory.py read it as.

Per turn: a root agent span carrying the question, answer, feedback, error and conversation id,
an LLM span per model call, a tool span per call (its arguments, result, error) and a hand-off
span, each inside the root, 1 ms apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from monitor.assemble import TurnAssembler
from monitor.config import AssemblySettings
from monitor.model import AssistantTurn, Feedback, SpanFacts, ToolCall
from monitor.telemetry import Metrics

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "agent_sessions.jsonl"
MS = 1_000_000


def turn_spans(item: int, number: int, turn: dict[str, Any], conversation: str | None
               ) -> list[SpanFacts]:
    """One turn of the set as an agent's spans: a root agent span, its steps inside it, 1 ms
    apart."""
    trace_id = (item * 100 + number + 1).to_bytes(16, "big")

    def span(span_id: int, parent: int, **fields: Any) -> SpanFacts:
        start, end = (span_id * MS, span_id * MS + MS // 2) if parent else (MS, 1000 * MS)
        return SpanFacts(trace_id=trace_id, span_id=span_id.to_bytes(8, "big"),
                         parent_span_id=parent.to_bytes(8, "big") if parent else b"",
                         is_root=not parent, start_ns=start, end_ns=end, **fields)

    root: dict[str, Any] = {"role": "agent", "name": "invoke_agent support",
                            "question": turn["question"], "answer": turn["answer"],
                            "error": turn["error"], "conversation_id": conversation,
                            "session_end": turn["end"]}
    if turn["feedback"] is not None:
        root["feedback"] = Feedback(score=turn["feedback"])
    spans = [span(1, 0, **root)]
    for n, step in enumerate(turn["steps"], 2):
        if step["kind"] == "llm":
            # tokens, no text: the turn's answer is the root's (none where the agent gave none)
            spans.append(span(n, 1, role="llm", name="chat", output_tokens=10))
        elif step["kind"] == "tool":
            call = ToolCall(name=step["name"], arguments=step["arguments"],
                            result=step.get("result"), error=step["error"])
            spans.append(span(n, 1, role="tool", name=f"execute_tool {step['name']}", tool=call,
                              error=step["error"]))
        else:
            spans.append(span(n, 1, role="tool", name=step["name"]))
    return spans


def assembled(spans: list[SpanFacts]) -> tuple[AssistantTurn, list[Any]]:
    assembler = TurnAssembler(AssemblySettings(root_grace_s=0), Metrics(CollectorRegistry()))
    assembler.add(spans)
    done = assembler.expire()
    [(turn, _, _)] = done.passed
    return turn, done.sessions


def items(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
