"""`turns --explain`: which span and attribute each field of a turn came from."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from monitor.explain import explain
from tests.conftest import RunningSidecar
from tests.corpus import capture
from tests.test_corpus import turn_from


@pytest.mark.unit
def test_the_question_of_a_prompt_with_documents_is_traced_to_the_retrieval_query() -> None:
    turn = turn_from(capture.FIXTURES / "openai-v2" / "rag_docs_in_prompt.json")
    lines = explain(turn.model_dump())
    assert "conventions seen: genai" in lines
    (question,) = [line for line in lines if line.strip().startswith("question")]
    assert "'retrieve'" in question and "gen_ai.retrieval.query.text" in question
    (answer,) = [line for line in lines if line.strip().startswith("answer")]
    assert "gen_ai.choice" in answer and answer.endswith(" events")  # GenAI log events
    assert turn.question not in "\n".join(lines)  # it names sources, not content


@pytest.mark.unit
def test_tool_arguments_are_traced_to_the_models_request() -> None:
    turn = turn_from(capture.FIXTURES / "openinference-langchain" / "tool_agent.json")
    lines = explain(turn.model_dump())
    arguments = [line for line in lines if line.split()[0].endswith(".arguments")]
    assert len(arguments) == 2
    assert all("'ChatOpenAI'" in line and "tool_call" in line for line in arguments)
    (documents_line,) = [line for line in lines if "conventions seen" in line]
    assert documents_line.endswith("openinference")


@pytest.mark.integration
def test_turns_explain_through_a_running_sidecar(sidecar: RunningSidecar) -> None:
    export = json.loads((capture.FIXTURES / "openllmetry-openai" / "streaming.json").read_text())
    request = urllib.request.Request(f"{sidecar.http_url}/v1/traces",
                                     data=json.dumps(export["traces"]).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    (turn,) = sidecar.wait_for_turns(1)
    done = subprocess.run([sys.executable, "-m", "monitor", "turns", "--admin", sidecar.admin_url,
                           "--explain", turn.trace_id.upper()],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "conventions seen: genai, openllmetry" in done.stdout
    assert "traceloop.entity.input" in done.stdout  # the workflow span's input: the question
    assert "db.query.result events" in done.stdout
    missing = subprocess.run([sys.executable, "-m", "monitor", "turns", "--admin",
                              sidecar.admin_url, "--explain", "0" * 32],
                             capture_output=True, text=True, timeout=30)
    assert missing.returncode == 1 and "no recent turn" in missing.stderr
