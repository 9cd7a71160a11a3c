"""Every verdict says who judged it: the endpoint's name, the model the endpoint reported, the
prompt versions, the local models' checksums; and a change of the reported model is counted."""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from monitor.config import LLMEndpointSettings, LLMJudgingSettings
from monitor.judges.claim_support import MODELS
from monitor.judges.llm import LLMJudge
from monitor.model import AssistantTurn, RetrievedDocument
from monitor.store import Store
from monitor.telemetry import Metrics
from tests import traffic
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.test_evaluation_export import _send_turn, grpc_receiver  # noqa: F401 - a fixture
from tests.waiting import wait_until


def reporting(*models: str, every: int) -> Any:
    """The scripted judge, whose replies say which model answered: each of `models` in turn,
    for `every` requests each (then the last)."""
    served = []

    def script(body: dict[str, Any]) -> Reply:
        served.append(body)
        reply = judge_model(body)
        reply.model = models[min((len(served) - 1) // every, len(models) - 1)]
        return reply
    return script


def turn(n: int) -> AssistantTurn:
    return AssistantTurn(trace_id=f"{n:032x}", question="How long do refunds take?",
                         documents=[RetrievedDocument(content="Refunds are issued within 30 days.")],
                         answer=f"Refunds are issued within 30 days, order {n}.")


@pytest.mark.integration
async def test_a_change_of_the_reported_model_is_counted() -> None:
    metrics = Metrics(CollectorRegistry())
    with ScriptedOpenAIServer(reporting("llama-70b-q8", "llama-70b-q4", every=3)) as server:
        llm = LLMJudgingSettings(endpoints=[LLMEndpointSettings(
            name="judge-a", base_url=server.base_url, model="llama-70b", max_retries=0)])
        judge = LLMJudge(llm.endpoints[0], llm, metrics)
        first = await judge.judge(turn(1))  # two calls: context relevance and the answer
        # one: the question and document were judged (cached)
        second = await judge.judge(turn(2))
        changes = metrics.judge_model_changes.labels("judge-a")._value.get()
        assert changes == 0  # the same model all along, so far
        third = await judge.judge(turn(3))
        await judge.aclose()
    assert first.model == second.model == "llama-70b-q8"
    assert third.model == "llama-70b-q4"
    assert metrics.judge_model_changes.labels("judge-a")._value.get() == 1
    assert first.prompt_version == "answer@1;context_relevance@1"


@pytest.mark.integration
def test_verdicts_exemplars_and_events_name_who_judged(start_sidecar, grpc_receiver) -> None:  # noqa: F811
    endpoint, received = grpc_receiver
    with ScriptedOpenAIServer(reporting("llama-70b-q8", every=1)) as judge:
        sidecar = start_sidecar(
            evaluation_export={"endpoint": endpoint},
            judging={"llm": {"endpoints": [
                {"name": "judge-a", "base_url": judge.base_url, "model": "llama-70b"}]}})
        trace_id, _ = _send_turn(sidecar, traffic.GROUNDED[0])
        wait_until(lambda: len(received.for_trace(trace_id)) >= 4, 60, "the evaluation events")
    # The verdict store
    store = Store(sidecar.sidecar.settings.store.path)
    shown = store.show(trace_id)
    store.close()
    assert shown is not None and shown["verdicts"]
    assert {(v["judge"], v["model"], v["prompt_version"]) for v in shown["verdicts"]} == {
        ("judge-a", "llama-70b-q8", "answer@1;context_relevance@1")}
    # The evaluation events
    for _, _, _, attributes in received.for_trace(trace_id):
        assert attributes["assistant.judge"] == "judge-a"
        assert attributes["gen_ai.response.model"] == "llama-70b-q8"
        assert attributes["assistant.judge.prompt_version"] == "answer@1;context_relevance@1"
    # The exemplars
    exemplars = re.findall(r'assistant_groundedness_bucket\{[^}]*judge="judge-a"[^}]*\} \S+ '
                           r'# \{([^}]*)\}', sidecar.openmetrics())
    assert exemplars and all(f'trace_id="{trace_id}"' in e and 'judge_model="llama-70b-q8"' in e
                             for e in exemplars), exemplars


@pytest.mark.integration
def test_the_local_judge_names_its_models_by_checksum(start_sidecar) -> None:
    sidecar = start_sidecar()
    trace_id, _ = _send_turn(sidecar, traffic.GROUNDED[1])
    store = Store(sidecar.sidecar.settings.store.path)
    wait_until(lambda: store.state(trace_id) == "judged", 60, "the turn judged")
    models = {v["model"] for v in store.show(trace_id)["verdicts"]}  # type: ignore[index]
    store.close()
    card = json.loads((MODELS / "claim_support.json").read_text())
    assert models == {next(m for m in models)} and next(iter(models)).startswith(
        f"claim_support@{card['sha256'][:8]} second@{card['second_opinion']['sha256'][:8]} "
        "minilm_l6@")


@pytest.mark.unit
def test_a_store_from_before_gains_the_model_column(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the verdicts table as it was, with a verdict in it
        db.execute("CREATE TABLE verdicts (trace_id TEXT NOT NULL, judge TEXT NOT NULL,"
                   " metric TEXT NOT NULL, label TEXT, score REAL, rationale TEXT NOT NULL,"
                   " details_json TEXT NOT NULL, prompt_version TEXT, created_at REAL NOT NULL,"
                   " PRIMARY KEY (trace_id, judge, metric))")
        db.execute("INSERT INTO verdicts VALUES ('a', 'local', 'groundedness', NULL, 1.0, 'ok',"
                   " '{}', NULL, 0)")
    store = Store(path)
    rows = store.db.execute("SELECT judge, model FROM verdicts").fetchall()
    store.close()
    assert [tuple(r) for r in rows] == [("local", None)]  # kept, its model unknown
