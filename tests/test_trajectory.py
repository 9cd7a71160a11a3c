"""A turn's trajectory: its steps in order, nested and timed, and the signals read from them for
every turn (monitor.model.Step, TrajectorySignals; native/src/assemble/steps.rs), exported as the
agent metrics over all traffic."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from monitor.assemble import TurnAssembler
from monitor.config import AssemblySettings, LLMEndpointSettings, LLMJudgingSettings, SamplingSettings
from monitor.judges.llm import LLMJudge
from monitor.model import Message, ToolCall
from monitor.sample.sampler import Sampler
from monitor.telemetry import Metrics
from tests.agent_turns import assembled, items, turn_spans
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import ScriptedOpenAIServer
from tests.test_assemble import count, make, passed, span

MS = 1_000_000  # nanoseconds


def agent_turn() -> list:
    """A support agent: asks for a lookup that fails, repeats it alike (a loop), retries with
    other arguments (a recovery), hands off to a billing agent, whose model asks for a refund
    tool that no span records, then answers."""
    failing = ToolCall(name="lookup_order", arguments={"order_id": "A-404"}, call_id="c1")
    retried = ToolCall(name="lookup_order", arguments={"order_id": "A-404"}, call_id="c2")
    fixed = ToolCall(name="lookup_order", arguments={"order_id": "A-40"}, call_id="c3")
    refund = ToolCall(name="refund", arguments={"order_id": "A-40"}, call_id="c4")
    asked = Message("assistant", None, tool_calls=[failing, retried, fixed])
    return [
        span(1, 1, role="agent", name="invoke_agent support", input_text="Refund order A-40",
             start_ns=1 * MS, end_ns=100 * MS),
        span(1, 2, parent=1, role="llm", name="chat", start_ns=2 * MS, end_ns=10 * MS,
             input_tokens=100, output_tokens=20, output_messages=[asked]),
        span(1, 3, parent=1, role="tool", name="execute_tool lookup_order", start_ns=11 * MS,
             end_ns=13 * MS, tool=failing, error="order A-404 not found"),
        span(1, 4, parent=1, role="tool", name="execute_tool lookup_order", start_ns=14 * MS,
             end_ns=16 * MS, tool=retried, error="order A-404 not found"),
        span(1, 5, parent=1, role="tool", name="execute_tool lookup_order", start_ns=17 * MS,
             end_ns=21 * MS, tool=fixed),
        span(1, 6, parent=1, role="tool", name="handoff to billing", start_ns=22 * MS,
             end_ns=23 * MS),
        span(1, 7, parent=1, role="agent", name="billing", start_ns=24 * MS, end_ns=99 * MS),
        # the app's own span between the agent and its model: not a step, seen through
        span(1, 8, parent=7, name="billing.plan", start_ns=25 * MS, end_ns=98 * MS),
        span(1, 9, parent=8, role="llm", name="chat", start_ns=26 * MS, end_ns=40 * MS,
             input_tokens=150, output_tokens=10,
             output_messages=[Message("assistant", None, tool_calls=[refund])]),
        span(1, 10, parent=8, role="llm", name="chat", start_ns=50 * MS, end_ns=60 * MS,
             input_tokens=200, output_tokens=15,
             output_messages=[Message("assistant", "Refunded order A-40.")]),
    ]


@pytest.mark.unit
def test_an_agents_steps_come_in_order_nested_timed_with_its_tool_calls() -> None:
    assembler, _, _ = make(root_grace_s=0)
    assembler.add(agent_turn())
    [turn] = passed(assembler.expire())
    got = [(s.kind, s.name, s.parent, s.tool_call, s.error) for s in turn.steps]
    assert got == [
        ("agent", "invoke_agent support", None, None, None),
        ("llm", "chat", 0, None, None),
        ("tool", "lookup_order", 0, 0, "order A-404 not found"),
        ("tool", "lookup_order", 0, 1, "order A-404 not found"),
        ("tool", "lookup_order", 0, 2, None),
        ("handoff", "billing", 0, None, None),  # the agent handed to
        ("agent", "billing", 0, None, None),
        ("llm", "chat", 6, None, None),
        ("tool", "refund", 6, 3, None),  # asked for, run where no span saw: beside the call
        ("llm", "chat", 6, None, None),
    ]
    assert [c.name for c in turn.tool_calls] == ["lookup_order"] * 3 + ["refund"]
    assert turn.steps[2].span_id == (3).to_bytes(8, "big").hex()
    assert turn.steps[8].span_id is None
    assert (turn.steps[2].start_ms, turn.steps[2].duration_ms) == (10.0, 2.0)
    assert (turn.steps[8].start_ms, turn.steps[8].duration_ms) == (39.0, 0.0)  # at the call's end

    signals = turn.signals
    assert (signals.steps, signals.tool_errors, signals.loops, signals.recoveries) == (8, 2, 1, 2)
    assert signals.tool_ms == 8.0  # the three lookups' spans


@pytest.mark.unit
def test_the_agent_metrics_count_every_turn_sampled_or_not() -> None:
    # Nothing sampled: the turns are counted all the same, never built.
    metrics = Metrics(CollectorRegistry())
    assembler = TurnAssembler(AssemblySettings(root_grace_s=0), metrics, sampler=Sampler(
        SamplingSettings(default_rate=0.0, always_keep=[])).compiled)
    plain = [span(2, 1, role="llm", name="chat", start_ns=MS, end_ns=2 * MS, input_tokens=7,
                  output_tokens=3, output_messages=[Message("assistant", "Hello.")])]
    assembler.add(agent_turn() + plain)
    done = assembler.expire()
    assert (done.passed, done.not_sampled) == ([], 2)
    metrics.count_completed(done, lambda service: service or "none", lambda route: route or "none")
    labels = {"service": "unknown", "route": "none"}
    assert count(metrics, "assistant_agent_steps_count", **labels) == 2
    assert count(metrics, "assistant_agent_steps_sum", **labels) == 8 + 1
    assert count(metrics, "assistant_agent_steps_bucket", le="1.0", **labels) == 1
    assert count(metrics, "assistant_agent_loops_total", **labels) == 1
    assert count(metrics, "assistant_agent_recoveries_total", **labels) == 2
    assert count(metrics, "assistant_agent_tool_seconds_total", **labels) == pytest.approx(0.008)
    assert count(metrics, "assistant_tool_calls_total", outcome="error", **labels) == 2
    for direction, tokens in (("input", 100 + 150 + 200 + 7), ("output", 20 + 10 + 15 + 3)):
        assert count(metrics, "assistant_llm_tokens_total", direction=direction,
                     **labels) == tokens


@pytest.mark.unit
def test_hostile_parents_make_no_cycle_and_a_deep_trace_one_walk() -> None:
    """Spans that are their own parent, two agents each the other's parent, and an LLM call
    under 20,000 spans of the app's own: every step's parent is an earlier step (or none), and
    the deep chain is walked once, not once a span."""
    assembler, _, _ = make(root_grace_s=0, max_spans_per_trace=30_000)
    cycle = [span(3, 2, parent=3, role="agent", name="a", start_ns=2, end_ns=9),
             span(3, 3, parent=2, role="agent", name="b", start_ns=3, end_ns=8),
             span(3, 4, parent=4, role="llm", name="self", start_ns=4, end_ns=5, output_tokens=1)]
    depth = 20_000
    chain = [span(3, 10 + n, parent=9 + n if n else 1, name="wrap", start_ns=10 + n,
                  end_ns=100_000 - n) for n in range(depth)]
    deep_llm = span(3, 10 + depth, parent=9 + depth, role="llm", name="deep",
                    start_ns=50_000, end_ns=50_001, output_tokens=1)
    root = span(3, 1, role="agent", name="root", start_ns=1, end_ns=200_000)
    assembler.add([root, *cycle, *chain, deep_llm])
    [turn] = passed(assembler.expire())
    assert all(s.parent is None or s.parent < n for n, s in enumerate(turn.steps))
    by_name = {s.name: s for s in turn.steps}
    assert turn.steps[by_name["deep"].parent].name == "root"
    # "a" and "b" each the other's parent: "b" is nested under "a", started first; not "a" under "b"
    assert (by_name["a"].parent, turn.steps[by_name["b"].parent].name) == (None, "a")
    assert by_name["self"].parent is None


@pytest.mark.integration
async def test_the_llm_judge_reads_whole_trajectories_and_gives_every_goal_label() -> None:
    """The labelled set's trajectories (bench/data/agent_sessions.jsonl) that called tools,
    judged through a scripted OpenAI-compatible server: one trajectory prompt per turn, carrying
    its steps, and every goal label comes back; the looping ones are failed, which the scripted
    model reads off the repeated calls in the steps. (A turn without tool calls or hand-offs is
    no agent's: its answer is judged as any other.)"""
    labelled = [(item["label"]["trajectory"], assembled(turn_spans(n, 0, item["turns"][0], None))[0])
                for n, item in enumerate(items()) if item["kind"] == "trajectory"]
    trajectories = [(label, turn) for label, turn in labelled if turn.agentic]
    assert len(trajectories) > 40
    settings = LLMJudgingSettings(endpoints=[LLMEndpointSettings(
        name="judge-a", base_url="http://127.0.0.1:9/v1", model="judge-model", max_retries=0)])
    judged: list[tuple[str, str]] = []  # (the set's label, the goal's)
    with ScriptedOpenAIServer(judge_model) as server:
        settings.endpoints[0].base_url = server.base_url
        judge = LLMJudge(settings.endpoints[0], settings, Metrics(CollectorRegistry()))
        try:
            for label, turn in trajectories:
                judged.append((label, (await judge.judge(turn)).get("goal_completion").label))
        finally:
            await judge.aclose()
        asked = [r for r in server.requests if "AI agent's work" in r["messages"][0]["content"]]
    assert {goal for _, goal in judged} == {"complete", "partial", "failed"}, judged
    assert {goal for label, goal in judged if label == "looping"} == {"failed"}, judged
    assert len(asked) == len(trajectories)
    first = trajectories[0][1]
    assert f"tool {first.tool_calls[0].name}(" in asked[0]["messages"][1]["content"]
