"""Tool-call matching: reordering, case, ignored functions, extra and missing calls and
arguments, near-equal values."""

from __future__ import annotations

import asyncio
import time

import pytest

from monitor.judges.tool_match import (
    MAX_CALLS,
    MatchOptions,
    ReferenceToolJudge,
    match,
    normalise,
)
from monitor.model import AssistantTurn, ToolCall


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def scores(expected: list[ToolCall], actual: list[ToolCall], **options: object) -> dict:
    return match(expected, actual, MatchOptions(**options)).as_dict()  # type: ignore[arg-type]


PERFECT = {"name_precision": 1.0, "name_recall": 1.0, "argument_precision": 1.0,
           "argument_recall": 1.0, "reliability": 1.0}


@pytest.mark.unit
def test_reordered_calls_with_different_case_match_perfectly() -> None:
    expected = [call("close_ticket", ticket_id="T-1"), call("notify", user="ana", urgent=True)]
    actual = [call("Notify", user="Ana ", urgent="true"), call("CLOSE_TICKET", ticket_id="t-1")]
    assert scores(expected, actual) == PERFECT


@pytest.mark.unit
def test_ignored_utility_functions_do_not_count() -> None:
    expected = [call("close_ticket", ticket_id="T-1")]
    actual = [call("get_current_time"), call("close_ticket", ticket_id="T-1"), call("LOG")]
    assert scores(expected, actual, ignored={"get_current_time", "log"}) == PERFECT
    assert scores(expected, actual)["name_precision"] == pytest.approx(1 / 3)


@pytest.mark.unit
def test_extra_and_missing_calls() -> None:
    expected = [call("a", x=1), call("b", y=2)]
    extra = scores(expected, [call("a", x=1), call("b", y=2), call("c", z=3)])
    assert extra["name_precision"] == pytest.approx(2 / 3) and extra["name_recall"] == 1.0
    assert extra["argument_precision"] == pytest.approx(2 / 3)
    missing = scores(expected, [call("a", x=1)])
    assert missing["name_precision"] == 1.0 and missing["name_recall"] == 0.5
    assert missing["argument_recall"] == 0.5 and missing["reliability"] == 0.5
    assert scores([], []) == PERFECT
    should_not_call = scores([], [call("a", x=1)])
    assert should_not_call["name_precision"] == 0.0


@pytest.mark.unit
def test_extra_missing_and_wrong_arguments() -> None:
    expected = [call("book", date="2024-03-05", seats=2, city="Paris")]
    result = scores(expected, [call("book", date="March 5, 2024", seats="2", note="window")])
    assert result["argument_recall"] == pytest.approx(2 / 3)  # city missing
    assert result["argument_precision"] == pytest.approx(2 / 3)  # note extra
    wrong = scores(expected, [call("book", date="2024-03-06", seats=2, city="Paris")])
    assert wrong["argument_recall"] == pytest.approx(2 / 3) and wrong["name_recall"] == 1.0


@pytest.mark.unit
def test_near_equal_values_after_normalisation_and_by_similarity() -> None:
    assert normalise("1,000") == normalise(1000.0) == 1000
    assert normalise(" New   York ") == normalise("new york")
    assert normalise("5 January 2024") == normalise("2024-01-05") == "2024-01-05"
    assert normalise([1, "2"]) == [1, 2]
    expected = [call("search", query="cheap flights to Rome")]
    actual = [call("search", query="inexpensive flights to Rome")]
    assert scores(expected, actual)["argument_recall"] == 0.0
    similar = {"semantic_threshold": 0.8, "similarity": lambda a, b: 0.9}
    assert scores(expected, actual, **similar)["argument_recall"] == 1.0


@pytest.mark.unit
def test_optimal_pairing_of_same_name_calls() -> None:
    expected = [call("transfer", to="ana", amount=10), call("transfer", to="bo", amount=20)]
    actual = [call("transfer", to="bo", amount=20), call("transfer", to="ana", amount=10)]
    assert scores(expected, actual) == PERFECT  # greedy in-order pairing would score 0 arguments


@pytest.mark.unit
def test_alternatives_and_optional_arguments() -> None:
    expected = [call("weather", city={"$any_of": ["NYC", "New York"]},
                     unit={"$any_of": ["celsius"], "$optional": True})]
    assert scores(expected, [call("weather", city="new york")]) == PERFECT
    assert scores(expected, [call("weather", city="NYC", unit="Celsius")]) == PERFECT


@pytest.mark.unit
def test_a_turn_past_the_calls_a_side_it_pairs_gets_no_reference_verdict(
        caplog: pytest.LogCaptureFixture) -> None:
    """Pairing compares every expected call with every call made: a turn of 2,000 a side held a
    sidecar's event loop for 19 s. Past MAX_CALLS a side (not counting ignored functions' calls)
    the reference judge gives that turn no verdict and says why in the log; at the limit it
    judges."""
    judge = ReferenceToolJudge(MatchOptions())

    def turn(calls: int) -> AssistantTurn:
        made = [call("lookup", q=str(n)) for n in range(calls)]
        return AssistantTurn(trace_id="ab" * 16, service="s", question="q?", answer="a.",
                             tool_calls=made, expected_tool_calls=made[::-1])

    [verdict] = asyncio.run(judge.judge(turn(MAX_CALLS))).verdicts
    assert verdict.score == 1.0
    with_utilities = turn(MAX_CALLS)  # calls of ignored functions are not paired: not counted
    with_utilities.tool_calls.append(call("get_time"))
    ignoring = ReferenceToolJudge(MatchOptions(ignored={"get_time"}))
    assert asyncio.run(ignoring.judge(with_utilities)).verdicts[0].score == 1.0
    with caplog.at_level("WARNING", logger="monitor.judges.tool_match"):
        assert asyncio.run(judge.judge(turn(MAX_CALLS + 1))).verdicts == []
    assert f"{MAX_CALLS + 1} expected and {MAX_CALLS + 1} made tool calls" in caplog.text


@pytest.mark.integration
def test_online_reference_metrics_from_attributes_and_golden_scenarios(start_sidecar, tmp_path
                                                                       ) -> None:
    import json

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from exporters import record

    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"scenario_id": "refund-42", "expected_tool_calls": [
        {"name": "refund", "arguments": {"order_id": "42"}}]}) + "\n")
    sidecar = start_sidecar(judging={"tool_calls": {"golden_file": str(golden),
                                                     "ignored_functions": ["get_time"]}})
    provider = TracerProvider(resource=Resource.create({"service.name": "desk"}))
    provider.add_span_processor(SimpleSpanProcessor(
        OTLPSpanExporter(endpoint=f"{sidecar.http_url}/v1/traces")))
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("turn"):  # expected calls set by the assistant's test rig
        record.question("Close ticket T-1 and notify Ana", route="desk")
        record.expected_tool_calls([{"name": "close_ticket", "arguments": {"id": "T-1"}},
                                    {"name": "notify", "arguments": {"user": "ana"}}])
        for name, args in (("get_time", {}), ("close_ticket", {"id": "t-1"})):
            with tracer.start_as_current_span(f"execute_tool {name}"):
                record.tool_call(name, args)
        record.answer("Closed T-1.")
    with tracer.start_as_current_span("turn"):  # expected calls from the golden scenario
        record.question("Refund order 42", route="desk")
        record.scenario("refund-42")
        with tracer.start_as_current_span("execute_tool refund"):
            record.tool_call("refund", {"order_id": 42})
        record.answer("Refunded.")
    provider.shutdown()
    labels = {"service": "desk", "route": "desk", "judge": "reference"}
    deadline = time.monotonic() + 30
    while sidecar.metric("assistant_tool_calls_reliability_count", **labels) < 2:
        assert time.monotonic() < deadline, "reference verdicts never arrived"
        time.sleep(0.1)
    m = sidecar.metric
    assert m("assistant_tool_calls_reference_total", **labels, kind="expected") == 3
    assert m("assistant_tool_calls_reference_total", **labels, kind="actual") == 2
    assert m("assistant_tool_calls_reference_total", **labels, kind="matched") == 2
    assert m("assistant_tool_calls_reliability_sum", **labels) == pytest.approx(0.5 + 1.0)
