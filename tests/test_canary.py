"""The judges' canary: a stable judge keeps its agreement with the canary set; a judge that starts
answering wrong shows it at the next run, below its own interval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from monitor.canary import SHIPPED, agreement
from monitor.errors import ConfigError
from monitor.evaluate import load_dataset
from monitor.verdict import JudgeResult, Verdict
from tests.conftest import test_settings
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.waiting import wait_until

FLIP = {"complete": "no_answer", "no_answer": "complete", "incomplete": "complete",
        "relevant": "irrelevant", "irrelevant": "relevant",
        "inferable": "ungrounded", "ungrounded": "inferable", "generic": "generic"}


class Switchable:
    """The scripted judge, until `wrong` is set: then every label it gives is the opposite."""

    def __init__(self) -> None:
        self.wrong = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = judge_model(body)
        if not self.wrong:
            return reply
        out = json.loads(reply.content or "{}")

        def flip(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: FLIP.get(v, v) if k == "label" else flip(v) for k, v in value.items()}
            if isinstance(value, list):
                return [flip(v) for v in value]
            return value
        reply.content = json.dumps(flip(out))
        return reply


@pytest.mark.unit
def test_agreement_per_metric_with_its_interval() -> None:
    cases = load_dataset(SHIPPED)
    right = [JudgeResult("j", [Verdict(m, **({"label": v} if isinstance(v, str) else
                                              {"score": float(v)}))
                               for m, v in case.labels.items()]) for case in cases]
    found = agreement(cases, right)
    assert set(found) == {"answer_relevance", "completeness", "context_relevance",
                          "groundedness"}
    for rate, lower, upper in found.values():
        assert rate == 1.0 and 0.7 < lower < 1.0 and upper == 1.0
    wrong = [JudgeResult("j", [Verdict("completeness", label="no_answer" if c.labels.get(
        "completeness") == "complete" else "complete")]) for c in cases]
    rate, lower, upper = agreement(cases, wrong)["completeness"]
    assert rate == 0.0 and upper < 0.25


@pytest.mark.integration
def test_a_judge_that_starts_answering_wrong_shows_at_the_next_run(start_sidecar) -> None:  # noqa: ANN001
    script = Switchable()
    with ScriptedOpenAIServer(script) as server:
        sidecar = start_sidecar(judging={
            "canary": {"interval_s": 10},
            "llm": {"endpoints": [{"name": "judge-a", "base_url": server.base_url,
                                   "model": "judge-model", "max_retries": 0}]}})

        def runs() -> float:
            return sidecar.metric("assistant_judge_canary_runs_total", judge="judge-a",
                                  outcome="ok")

        def figure(suffix: str = "") -> float:
            return sidecar.metric(f"assistant_judge_canary_agreement{suffix}", judge="judge-a",
                                  metric="completeness")

        wait_until(lambda: runs() >= 1, 180, "the first canary run")
        stable, stable_lower = figure(), figure("_lower")
        assert stable >= 0.9, stable  # the scripted judge agrees with the shipped labels
        wait_until(lambda: runs() >= 2, 180, "a second canary run")
        assert figure() == stable  # a stable judge: the same agreement, run after run
        calls = len(server.requests)
        script.wrong = True
        wait_until(lambda: runs() >= 4, 180, "the runs after the judge changed")
        assert len(server.requests) > calls  # asked again: no verdict cache for the canary
        assert figure("_upper") < stable_lower, (figure(), figure("_upper"), stable_lower)


@pytest.mark.unit
def test_an_unreadable_canary_set_stops_start_up(tmp_path: Path) -> None:
    from monitor.canary import Canary
    from monitor.telemetry import Metrics

    (tmp_path / "canary.jsonl").write_text("not json\n")
    settings = test_settings(judging={
        "canary": {"dataset": str(tmp_path / "canary.jsonl")},
        "llm": {"endpoints": [{"name": "judge-a", "base_url": "http://127.0.0.1:9/v1",
                               "model": "m"}]}})
    with pytest.raises(ConfigError, match="judging.canary.dataset: .*canary.jsonl:1"):
        Canary(settings, Metrics())
