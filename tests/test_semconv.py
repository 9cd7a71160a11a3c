"""The semantic-convention mapping, one convention at a time, on attributes as instrumentations write them."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from monitor import _native
from monitor.ingest import semconv
from monitor.model import SpanFacts

pytestmark = pytest.mark.unit


def extract(attrs: dict, events: list | None = None, **facts_fields) -> tuple[SpanFacts, Counter]:
    issues: Counter[str] = Counter()
    facts = SpanFacts(**{"span_id": b"\x01" * 8, "trace_id": b"\x02" * 16, **facts_fields})
    return semconv.extract(facts, attrs, events or [], issues), issues


def test_openllmetry_legacy_indexed_prompts_and_completions() -> None:
    facts, issues = extract({
        "llm.request.type": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "Be brief.",
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "What is 2+2?",
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "c1", "gen_ai.prompt.2.tool_calls.0.name": "calc",
        "gen_ai.prompt.2.tool_calls.0.arguments": '{"expr": "2+2"}',
        "gen_ai.prompt.3.role": "tool", "gen_ai.prompt.3.tool_call_id": "c1",
        "gen_ai.prompt.3.content": "4",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "4.",
        "gen_ai.completion.0.finish_reason": "stop",
        "gen_ai.usage.prompt_tokens": 31, "gen_ai.usage.completion_tokens": 2,
    })
    assert facts.role == "llm" and facts.conventions == {"openllmetry", "genai"}
    assert [m.role for m in facts.input_messages] == ["system", "user", "assistant", "tool"]
    assert facts.input_messages[2].tool_calls[0].arguments == {"expr": "2+2"}
    assert facts.input_messages[3].tool_call_id == "c1"
    assert facts.output_messages[0].content == "4."
    assert (facts.model, facts.input_tokens, facts.output_tokens) == ("gpt-4o-mini", 31, 2)
    assert not issues
    turn = _native.testing.build_turn(facts.trace_id, [facts], "root_ended")
    assert (turn.question, turn.answer) == ("What is 2+2?", "4.")
    assert [(c.name, c.arguments, c.result) for c in turn.tool_calls] == [
        ("calc", {"expr": "2+2"}, "4")]


def test_openinference_multimodal_contents_and_reranker() -> None:
    facts, _ = extract({
        "openinference.span.kind": "LLM", "llm.model_name": "m",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "Describe",
        "llm.input_messages.0.message.contents.1.message_content.text": "this image",
    })
    assert facts.input_messages[0].content == "Describe\nthis image"
    reranked, _ = extract({
        "openinference.span.kind": "RERANKER", "reranker.query": "q",
        "reranker.input_documents.0.document.id": "a",
        "reranker.output_documents.0.document.id": "b",
        "reranker.output_documents.0.document.content": "kept",
        "reranker.output_documents.0.document.score": "0.5",
    })
    assert reranked.role == "retrieval" and reranked.input_text == "q"
    assert [(d.id, d.content, d.score) for d in reranked.documents] == [("b", "kept", 0.5)]


def test_genai_parts_with_tool_calls_and_responses() -> None:
    facts, issues = extract({
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "t1", "name": "weather",
                                              "arguments": {"city": "Paris"}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "t1",
                                         "response": {"temp_c": 21}}]},
        ]),
        "gen_ai.output.messages": json.dumps([
            {"role": "assistant", "parts": [{"type": "reasoning", "content": "think"},
                                            {"type": "text", "content": "21 °C and sunny."}],
             "finish_reason": "stop"}]),
    })
    assert not issues
    turn = _native.testing.build_turn(facts.trace_id, [facts], "root_ended")
    assert turn.question == "Weather in Paris?" and turn.answer == "21 °C and sunny."
    assert [(c.name, c.arguments, c.call_id) for c in turn.tool_calls] == [
        ("weather", {"city": "Paris"}, "t1")]


def test_genai_span_events_of_older_sdks() -> None:
    facts, _ = extract({"gen_ai.operation.name": "chat"}, events=[
        ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(
            [{"role": "user", "content": "Hi there"}])}),
        ("gen_ai.content.completion", {"gen_ai.completion": json.dumps(
            [{"role": "assistant", "content": "Hello!"}])}),
    ])
    turn = _native.testing.build_turn(facts.trace_id, [facts], "root_ended")
    assert (turn.question, turn.answer) == ("Hi there", "Hello!")


def test_unknown_and_malformed_input_is_kept_and_counted() -> None:
    facts, issues = extract({"http.method": "GET"}, name="GET /health")
    assert facts.role == "other" and issues == Counter(unknown_convention=1)

    facts, issues = extract({
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": "{not json",
        "gen_ai.output.messages": json.dumps({"role": "assistant"}),  # not a list
        "gen_ai.request.model": "m",
        "assistant.feedback.score": 7,
    })
    assert facts.role == "llm" and facts.model == "m"  # the rest of the span is kept
    assert facts.feedback is None
    assert issues == Counter(malformed_messages=2, bad_feedback_score=1)

    facts, issues = extract({"gen_ai.operation.name": "retrieval",
                             "gen_ai.retrieval.documents": json.dumps({"id": 1})})
    assert facts.role == "retrieval" and facts.documents == []
    assert issues == Counter(malformed_documents=1)


def test_only_unpaired_surrogate_escapes_are_mended() -> None:
    def user_text(content: str) -> tuple[str | None, Counter]:
        parts = '[{"role": "user", "parts": [{"type": "text", "content": "' + content + '"}]}]'
        facts, issues = extract({"gen_ai.input.messages": parts})
        return facts.input_messages[0].content, issues

    assert user_text(r"cut \ud83d here") == ("cut \ufffd here", Counter(lone_surrogate=1))
    assert user_text(r"a \udc4d low one") == ("a \ufffd low one", Counter(lone_surrogate=1))
    assert user_text(r"a pair \ud83d\ude00") == ("a pair \U0001f600", Counter())
    assert user_text(r"escaped \\ud83d") == (r"escaped \ud83d", Counter())  # text, not a code

    facts, issues = extract({"gen_ai.tool.name": "t",
                             "gen_ai.tool.call.arguments": r'{"k\udfff": ["\ud800", {"x": 1}]}'})
    assert facts.tool.arguments == {"k\ufffd": ["\ufffd", {"x": 1}]}
    assert issues == Counter(lone_surrogate=1)
    facts, issues = extract({"gen_ai.tool.name": "t", "gen_ai.tool.call.arguments": r'"\ud800"'})
    assert (facts.tool.arguments, issues) == ("\ufffd", Counter(lone_surrogate=1))


def test_tool_requested_but_not_recorded_takes_result_from_the_conversation() -> None:
    first, _ = extract({
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
            {"type": "text", "content": "Order 7?"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "tool_call", "id": "x", "name": "order_status", "arguments": {"id": 7}}]}]),
    }, start_ns=1, end_ns=2)
    second, _ = extract({
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": "Order 7?"}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "x",
                                         "response": "shipped"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "text", "content": "It shipped."}]}]),
    }, span_id=b"\x03" * 8, start_ns=3, end_ns=4)
    turn = _native.testing.build_turn(first.trace_id, [second, first], "root_ended")
    assert turn.answer == "It shipped."
    assert [(c.name, c.arguments, c.result) for c in turn.tool_calls] == [
        ("order_status", {"id": 7}, "shipped")]


def test_openinference_llm_output_value_stands_in_for_missing_output_messages() -> None:
    """An LLM span with no llm.output_messages: its JSON output value, as chat messages or as an
    OpenAI Responses object (message items only); flattened messages win; text is not read."""
    response = {"object": "response", "output": [
        {"type": "reasoning", "summary": []},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "It takes 1 day."}]}]}
    base = {"openinference.span.kind": "LLM", "output.mime_type": "application/json"}
    for value in ([response], response):
        facts, issues = extract({**base, "output.value": json.dumps(value)})
        assert [(m.role, m.content) for m in facts.output_messages] == [
            ("assistant", "It takes 1 day.")]
        assert not issues
    chat = [{"role": "assistant", "content": "Plain chat."}]
    facts, _ = extract({**base, "output.value": json.dumps(chat)})
    assert facts.output_messages[0].content == "Plain chat."
    facts, _ = extract({**base, "output.value": json.dumps(chat),
                        "llm.output_messages.0.message.role": "assistant",
                        "llm.output_messages.0.message.content": "Flattened."})
    assert facts.output_messages[0].content == "Flattened."
    for attrs in ({"output.value": json.dumps(chat), "output.mime_type": "text/plain"},
                  {**base, "output.value": '{"messages": ["ChatMessage(role=...)"]}'},
                  {**base, "output.value": "not json"}):
        facts, _ = extract({"openinference.span.kind": "LLM", **attrs})
        assert not facts.output_messages
