"""Real instrumentors around the real `openai` client, in a RAG flow, through the sidecar.

Each flavour runs as its own process (as an assistant would), against a scripted
OpenAI-compatible server, and exports over real OTLP to a running sidecar.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from tests.apps import rag_app
from tests.conftest import RunningSidecar
from tests.fakes.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.integration

ANSWER = "The refund window is 30 days."


def assistant_model(request: dict[str, Any]) -> Reply:
    """First call: ask for the policy tool; once its result is in the conversation: answer."""
    if any(message["role"] == "tool" for message in request["messages"]):
        return Reply(content=ANSWER, prompt_tokens=120, completion_tokens=9)
    return Reply(tool_calls=[{"name": "lookup_policy", "arguments": rag_app.TOOL_ARGS}],
                 prompt_tokens=100, completion_tokens=12)


@pytest.mark.parametrize("flavour, transport, conventions, scored, docs_in_prompt", [
    ("openinference", "http", {"openinference"}, True, False),
    ("openai-v2", "grpc", {"genai"}, True, False),
    ("openllmetry", "http", {"openllmetry", "genai"}, False, False),  # Chroma: distances
    # The question is not the user message that wraps the documents: the retrieval's query is.
    ("openai-v2", "http", {"genai"}, True, True),
    ("openllmetry", "grpc", {"openllmetry", "genai"}, False, True),
])
def test_instrumented_rag_flow(sidecar: RunningSidecar, flavour: str, transport: str,
                               conventions: set[str], scored: bool, docs_in_prompt: bool) -> None:
    with ScriptedOpenAIServer(assistant_model) as llm:
        target = (["--otlp-grpc", sidecar.grpc_endpoint] if transport == "grpc"
                  else ["--otlp-http", sidecar.http_url])
        done = subprocess.run(
            [sys.executable, "-m", "tests.apps.rag_app", "--flavour", flavour,
             "--openai-base-url", llm.base_url, *target,
             *(["--docs-in-prompt"] if docs_in_prompt else [])],
            capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert len(llm.requests) == 2
    trace_id = done.stdout.strip().splitlines()[-1]
    turns = [t for t in sidecar.wait_for_turns(1) if t.trace_id == trace_id]
    assert len(turns) == 1, [t.trace_id for t in sidecar.turns()]
    turn = turns[0]

    assert turn.service == f"rag-{flavour}"
    assert turn.question == rag_app.QUESTION
    assert turn.answer == ANSWER
    assert [(d.id, d.content) for d in turn.documents] == [(i, c) for i, c, _ in rag_app.DOCS]
    if scored:
        assert [d.score for d in turn.documents] == [s for _, _, s in rag_app.DOCS]
    assert len(turn.tool_calls) == 1, turn.tool_calls
    call = turn.tool_calls[0]
    assert call.name == "lookup_policy"
    assert call.arguments == rag_app.TOOL_ARGS
    assert call.result == rag_app.TOOL_RESULT
    assert call.call_id == "call_0"  # the executed span was matched to the model's request
    assert turn.model == "m1"
    assert turn.input_tokens == 220 and turn.output_tokens == 21
    assert conventions <= set(turn.conventions)
    assert turn.span_count == 5  # root, retrieval, two LLM calls, tool
    assert turn.error is None


def test_langchain_documents_and_tool_calls_come_out_right(sidecar: RunningSidecar) -> None:
    """OpenInference's LangChain instrumentation, around real LangChain parts: document ids live
    in the documents' metadata, the TOOL span logs the bare argument value and the serialised
    ToolMessage; the model's request and the tool message carry the call as it was."""
    from tests.apps import langchain_app

    with ScriptedOpenAIServer(assistant_model) as llm:
        done = subprocess.run(
            [sys.executable, "-m", "tests.apps.langchain_app", "--otlp-http", sidecar.http_url,
             "--openai-base-url", llm.base_url], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert len(llm.requests) == 2
    trace_id = done.stdout.strip().splitlines()[-1]
    (turn,) = [t for t in sidecar.wait_for_turns(1) if t.trace_id == trace_id]
    assert turn.question == langchain_app.QUESTION  # the chain's input, not the built prompt
    assert [(d.id, d.content) for d in turn.documents] == langchain_app.DOCS
    assert turn.answer == ANSWER
    assert [(c.name, c.call_id, c.arguments, c.result) for c in turn.tool_calls] == [
        ("lookup_policy", "call_0", langchain_app.TOOL_ARGS, langchain_app.TOOL_RESULT)]
