"""Turn assembly: completion by root + grace or decision wait, bounds, evictions, late spans."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from monitor.assemble import TurnAssembler
from monitor.config import AssemblySettings
from monitor.emit.metrics import Metrics
from monitor.model import Message, SpanFacts


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(**settings) -> tuple[TurnAssembler, Clock, Metrics]:
    clock, metrics = Clock(), Metrics(CollectorRegistry())
    defaults = {"root_grace_s": 1.0, "decision_wait_s": 10.0}
    return TurnAssembler(AssemblySettings(**{**defaults, **settings}), metrics, clock), clock, metrics


def span(trace: int, span: int, parent: int = 0, **fields) -> SpanFacts:
    return SpanFacts(trace_id=trace.to_bytes(16, "big"), span_id=span.to_bytes(8, "big"),
                     parent_span_id=parent.to_bytes(8, "big") if parent else b"",
                     is_root=not parent, **fields)


def count(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


def test_root_end_plus_grace_completes_and_late_log_events_are_merged() -> None:
    assembler, clock, metrics = make()
    assert assembler.add([span(1, 2, parent=1, role="llm"), span(1, 1, question="q?")]) == []
    clock.now += 0.5
    # The official OpenAI instrumentation's log events arrive after the spans.
    fragment = SpanFacts(trace_id=(1).to_bytes(16, "big"), span_id=(2).to_bytes(8, "big"),
                         is_log_fragment=True, event_outputs=[Message("assistant", "a!")])
    assembler.add([fragment])
    assert assembler.expire() == []
    clock.now += 0.6
    [turn] = assembler.expire()
    assert (turn.question, turn.answer, turn.span_count, turn.completion) == (
        "q?", "a!", 2, "root_ended")
    assert count(metrics, "assistant_turn_completions_total", reason="root_ended") == 1
    assert assembler.trace_count == 0 and assembler.span_count == 0


def test_no_root_completes_after_decision_wait() -> None:
    assembler, clock, metrics = make()
    assembler.add([span(1, 2, parent=99)])
    clock.now += 9.9
    assert assembler.expire() == []
    clock.now += 0.2
    [turn] = assembler.expire()
    assert turn.completion == "decision_wait"


def test_late_spans_are_counted_not_reassembled() -> None:
    assembler, clock, metrics = make(root_grace_s=0)
    assembler.add([span(1, 1)])
    assert len(assembler.expire()) == 1
    assembler.add([span(1, 5, parent=1)])
    assert assembler.trace_count == 0
    assert count(metrics, "assistant_spans_refused_total", reason="late") == 1


def test_buffer_is_bounded_and_evictions_flush_the_oldest() -> None:
    assembler, clock, metrics = make(max_traces=2, max_spans=100)
    assert assembler.add([span(1, 1, parent=9)]) == []
    clock.now += 1
    assert assembler.add([span(2, 1, parent=9)]) == []
    [evicted] = assembler.add([span(3, 1, parent=9)])
    assert evicted.trace_id == (1).to_bytes(16, "big").hex() and evicted.completion == "evicted"
    assert assembler.trace_count == 2
    assert count(metrics, "assistant_turn_completions_total", reason="evicted") == 1

    assembler, _, metrics = make(max_traces=100, max_spans=3)
    flushed = assembler.add([span(1, s, parent=9) for s in range(1, 3)] + [span(2, 1), span(2, 2)])
    assert [t.span_count for t in flushed] == [2] and assembler.span_count == 2


def test_spans_beyond_the_per_trace_limit_are_dropped_and_counted() -> None:
    assembler, _, metrics = make(max_spans_per_trace=3, root_grace_s=0)
    assembler.add([span(1, s, parent=1) for s in range(2, 7)] + [span(1, 1)])
    [turn] = assembler.expire()  # the root still arrived and ended the turn
    assert turn.span_count == 4 and turn.completion == "root_ended"
    assert count(metrics, "assistant_spans_refused_total", reason="trace_too_large") == 2


def test_agent_trace_with_several_llm_calls_is_one_turn() -> None:
    assembler, clock, _ = make(root_grace_s=0)
    root = span(1, 1, role="agent", input_text="Book a table for two", start_ns=1, end_ns=100)
    calls = [
        span(1, 2, parent=1, role="retrieval", start_ns=2, end_ns=3),
        span(1, 3, parent=1, role="llm", start_ns=4, end_ns=10, model="m",
             output_messages=[Message("assistant", None, tool_calls=[])]),
        span(1, 4, parent=1, role="llm", start_ns=20, end_ns=30, model="m",
             output_messages=[Message("assistant", "Booked for 8pm.")]),
    ]
    assembler.add(calls + [root])
    [turn] = assembler.expire()
    assert (turn.question, turn.answer, turn.span_count) == ("Book a table for two",
                                                             "Booked for 8pm.", 4)
