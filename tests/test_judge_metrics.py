"""The judge metrics are declared once (monitor/judge_metrics.py): what derives from the table
follows it, and what is written by hand (the Literals mypy reads, the recording and alert rules)
is held to it, so that a new metric cannot be forgotten anywhere."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from string import Template
from typing import Any, get_args

import pytest
import yaml
from prometheus_client import CollectorRegistry

from monitor import judge_metrics
from monitor.config import LLMEndpointSettings, LLMJudgingSettings
from monitor.contract import FAMILIES, QUALITIES
from monitor.judge_metrics import JUDGE_METRIC, JUDGE_METRICS, LABELS, METRICS, JudgeMetric, Panel
from monitor.judges import llm
from monitor.judges.prompts import PROMPTS, ParseError, Prompt, one_verdict_output, parse
from monitor.model import AssistantTurn
from monitor.telemetry import Metrics
from monitor.verdict import Verdict
from tests.fakes.judge_model import judge_model

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "grafana"))
import generate  # noqa: E402

# A metric as docs/judging.md's "Adding a judge metric" declares it.
CONCISENESS = JudgeMetric(
    "conciseness", "concise", labels=("concise", "verbose"),  # type: ignore[arg-type]
    bad_labels=("verbose",), prompt="conciseness", quality="verbosity_rate",
    quality_label="verbose", higher_is_worse=True,
    panels=(Panel("answers", "Answers judged verbose"),))


def test_the_metric_literal_is_the_declared_metrics() -> None:
    assert get_args(judge_metrics.Metric) == METRICS
    assert len(set(METRICS)) == len(METRICS)


def test_each_declaration_is_consistent() -> None:
    for m in JUDGE_METRICS:
        assert set(m.bad_labels) <= set(m.labels) | set(m.item_labels), m.name
        assert (m.quality_label is not None) == bool(m.labels), m.name  # a rate of a label
        assert m.quality_label is None or m.quality_label in m.labels, m.name
        assert m.family is None or m.family.startswith("assistant_"), m.name
        assert all(p.dashboard in generate.DASHBOARDS for p in m.panels), m.name
        assert m.short_name and len(m.short_name) <= len(m.name), m.name
    assert LABELS == {m.name: m.labels for m in JUDGE_METRICS if not m.scored}


def test_labels_are_ordered_best_first() -> None:
    completeness = JUDGE_METRIC["completeness"]
    assert [completeness.order(label) for label in completeness.labels] == [1.0, 0.5, 0.0]


def test_each_metric_is_in_the_contract() -> None:
    """Every metric is on the weighted sums by `metric`; one with a family of its own, there too."""
    every_metric = {f.name for f in FAMILIES if f.per_verdict is not None and f.verdict is None}
    assert {"assistant_weighted_turns", "assistant_weighted_verdicts",
            "assistant_weighted_score"} <= every_metric
    for m in JUDGE_METRICS:
        quality = next(q for q in QUALITIES if q.verdict == m.name)
        assert (quality.name, quality.label, quality.higher_is_worse, quality.recorded,
                quality.reference) == (m.quality, m.quality_label, m.higher_is_worse,
                                       m.recorded, m.reference)
        if m.family is not None:
            family = next(f for f in FAMILIES if f.name == m.family)
            assert family.verdict == m.name
            assert family.type == ("counter" if m.labels else "histogram")


def _enums(schema: Any) -> list[tuple[str, ...]]:
    """Every `enum` of a JSON schema."""
    if isinstance(schema, dict):
        found = [tuple(schema["enum"])] if "enum" in schema else []
        return found + [e for value in schema.values() for e in _enums(value)]
    if isinstance(schema, list):
        return [e for value in schema for e in _enums(value)]
    return []


def test_each_prompt_asks_for_the_declared_labels() -> None:
    """A metric's labels, and those of what it rests on, are what its prompt's output allows."""
    for m in JUDGE_METRICS:
        if m.prompt is None:
            continue
        enums = _enums(PROMPTS[m.prompt].output.model_json_schema())
        for labels in (m.labels, m.item_labels):
            assert not labels or labels in enums, (m.name, labels, enums)


def test_a_prompt_of_its_own_gets_its_output_from_the_declaration() -> None:
    output = one_verdict_output(CONCISENESS)
    assert parse(output, '{"reasoning": "one line", "label": "concise"}').label == "concise"
    with pytest.raises(ParseError, match="label"):
        parse(output, '{"reasoning": "one line", "label": "short"}')
    scored = one_verdict_output(replace(CONCISENESS, labels=(), bad_labels=(), quality_label=None))
    assert parse(scored, '{"reasoning": "r", "score": 0.25}').score == 0.25
    with pytest.raises(ParseError, match="score"):
        parse(scored, '{"reasoning": "r", "score": 2}')


def test_the_scripted_llm_answers_a_metric_asked_alone() -> None:
    """The LLM integration tests' model answers a new metric's prompt: they need no edit."""
    prompt = Prompt("conciseness", "1", Template("Judge."), Template("<data-$nonce>$answer"
                                                                    "</data-$nonce>"),
                    one_verdict_output(CONCISENESS), CONCISENESS)
    reply = judge_model({"messages": prompt.render(answer="Yes."),
                         "response_format": prompt.response_format("json_schema")})
    assert parse(prompt.output, reply.content).label == "concise"


async def test_the_llm_judge_asks_a_metric_with_a_prompt_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = Prompt("conciseness", "1", Template("Judge."), Template("$question $answer"),
                    one_verdict_output(CONCISENESS), CONCISENESS)
    settings = LLMJudgingSettings(endpoints=[LLMEndpointSettings(
        name="judge-a", base_url="http://127.0.0.1:9/v1", model="m")])
    judge = llm.LLMJudge(settings.endpoints[0], settings, Metrics(CollectorRegistry()))
    replies = ['{"reasoning": "padded", "label": "verbose"}',
               '{"reasoning": "fine", "label": "concise"}',
               '{"reasoning": "long", "label": "verbose"}']

    async def sampled(*args: Any, **values: str) -> list[Any]:
        assert set(values) == {"question", "documents", "answer", "trajectory"}
        return [parse(prompt.output, reply) for reply in replies]

    monkeypatch.setattr(judge, "_sampled", sampled)
    try:
        turn = AssistantTurn(trace_id="0" * 32, question="Why?", answer="Because.")
        [verdict] = await judge._alone(prompt, turn, [], llm.Usage())
    finally:
        await judge.aclose()
    assert (verdict.metric, verdict.label, verdict.rationale) == ("conciseness", "verbose",
                                                                   "padded")
    assert verdict.agreement is not None and verdict.agreement.share == pytest.approx(2 / 3)


def test_verdicts_keep_to_the_declared_labels() -> None:
    with pytest.raises(ValueError, match="completeness label"):
        Verdict("completeness", label="relevant")


def _generated_panels() -> set[tuple[str, str, str]]:
    return {(path.stem, panel["title"], panel["type"])
            for path in (ROOT / "grafana/dashboards").glob("*.json")
            for panel in json.loads(path.read_text())["panels"]}


def test_each_declared_panel_is_on_its_dashboard() -> None:
    panels = _generated_panels()
    for m in JUDGE_METRICS:
        for p in m.panels:
            assert (p.dashboard, p.title, "stat" if p.stat else "timeseries") in panels, (m.name, p)
        # A quality worth recording is worth a panel.
        assert m.panels or not m.recorded, f"{m.name} is recorded but on no dashboard"


def test_a_new_metrics_panel_needs_no_edit_of_the_generator(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A declared panel the layout does not place goes at the end of its dashboard."""
    quality = replace(next(q for q in QUALITIES if q.name == "answer_irrelevance_rate"),
                      name="verbosity_rate", verdict="conciseness", label="verbose")  # type: ignore[arg-type]
    monkeypatch.setattr(generate, "JUDGE_METRICS", (*JUDGE_METRICS, CONCISENESS))
    monkeypatch.setitem(generate.QUALITY, "verbosity_rate", quality)
    last = generate.model("answers")["panels"][-1]
    assert last["title"] == "Answers judged verbose"
    assert 'metric="conciseness", verdict="verbose"' in last["targets"][0]["expr"]
    assert "metric=conciseness&label=verbose" in json.dumps(last)


def _rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load((ROOT / "deploy/prometheus/rules.yml").read_text())
            ["groups"] for rule in group["rules"]]


def _grafana_alerts() -> dict[str, str]:
    """Grafana-managed alert uid -> its query."""
    path = ROOT / "grafana/provisioning/alerting/assistant-monitor.yaml"
    return {rule["uid"]: rule["data"][0]["model"]["expr"]
            for group in yaml.safe_load(path.read_text())["groups"] for rule in group["rules"]}


def test_recording_rules_are_those_of_the_recorded_metrics() -> None:
    """rules.yml records each recorded metric's estimate with its 95% bounds, and no other judge
    metric's (the estimate's form is tests/test_grafana.py's to check)."""
    recorded = {rule["record"] for rule in _rules() if "record" in rule}
    for q in QUALITIES:
        if q.verdict is None:
            continue
        rules = {q.recording.replace("_rate1h", f"{bound}_rate1h")
                 for bound in ("", "_lower95", "_upper95")}
        assert (rules <= recorded) == JUDGE_METRIC[q.verdict].recorded, q.name
        assert rules <= recorded or not rules & recorded, q.name


def test_alerts_are_those_the_metrics_declare() -> None:
    """Each declared alert exists and reads its metric's recorded estimate (its turns link, if
    it has one, leads to that metric's turns); an alert on a metric's estimate is declared."""
    alerts = {rule["alert"]: rule for rule in _rules() if "alert" in rule}
    grafana = _grafana_alerts()
    for m in JUDGE_METRICS:
        quality = next(q for q in QUALITIES if q.verdict == m.name)
        recording = quality.recording.removesuffix("_rate1h")
        for name in m.alerts:
            assert name in alerts or name in grafana, f"{m.name}: no alert {name}"
            assert m.recorded, f"{m.name}: alert {name} needs its recorded estimate"
            expr = alerts[name]["expr"] if name in alerts else grafana[name]
            assert recording in expr, (m.name, name, expr)
            url = alerts.get(name, {}).get("annotations", {}).get("turns_url", "")
            assert not url or f"metric={m.name}&" in url, (m.name, name, url)
        reading = {name for name, rule in alerts.items() if recording in rule["expr"]}
        reading |= {uid for uid, expr in grafana.items() if recording in expr}
        assert reading == set(m.alerts), (m.name, reading)


def test_the_docs_show_adding_a_metric_as_declared_here() -> None:
    """docs/judging.md's example declaration is this module's CONCISENESS, in the files it names."""
    text = (ROOT / "docs/judging.md").read_text()
    section = text[text.index("## Adding a judge metric"):]
    section = section[:section.index("\n## ", 1)]
    assert re.search(r'JudgeMetric\(\s*"conciseness", "concise"', section)
    for path in ("monitor/judge_metrics.py", "monitor/judges/prompts/conciseness.yaml",
                 "monitor/judges/local.py"):
        assert path in section, path
