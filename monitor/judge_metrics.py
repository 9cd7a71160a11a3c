"""The judge metrics, each declared once: what a verdict on it says (labels or a score), which
prompt asks for it, the metric family and the quality it is published as, where the dashboards
show it and which alerts page on it.

    GROUNDEDNESS.scored, COMPLETENESS.labels, JUDGE_METRIC["completeness"].quality_label

Derived from this table: the verdict vocabulary (`Metric`, `LABELS`, checked by monitor/verdict.py),
the prompts' output models (monitor/judges/prompts.py; a metric with a prompt of its own is asked
by the LLM judge without code of its own), `calibrate` (the labels and their order),
`verdicts list|show` and the turn pages (columns, short names, the labels shown red), the metric
contract (monitor/contract.py: its family and its quality) and the dashboards (grafana/generate.py).
What is written by hand is held to it by tests/test_judge_metrics.py: the `Metric` Literal and the
label Literals below (mypy reads those), and the recording and alert rules of
deploy/prometheus/rules.yml. docs/judging.md, "Adding a judge metric", shows an example.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Metric = Literal["context_relevance", "answer_relevance", "completeness", "groundedness",
                 "tool_use", "tool_calls", "goal_completion"]
# The labels typed code reads (a verdict's details, the bespoke prompts' outputs), best first.
Relevance = Literal["relevant", "irrelevant"]
Completeness = Literal["complete", "incomplete", "no_answer"]
ClaimSupport = Literal["inferable", "generic", "ungrounded"]
YesNo = Literal["yes", "no"]
GoalCompletion = Literal["complete", "partial", "failed"]


@dataclass(frozen=True)
class Panel:
    """A dashboard panel of a metric's quality, estimated from the sampling-weighted sums."""

    dashboard: str  # a key of grafana/generate.py's DASHBOARDS
    title: str
    by: str = "service"  # a series per service, or per "service, route"
    stat: bool = False  # the current value (the overview's "Now" row), not a series with its band


@dataclass(frozen=True)
class JudgeMetric:
    name: Metric  # the verdict's `metric`, in the store, on /metrics and in PromQL
    short_name: str  # its column's header on a narrow terminal (`verdicts list`)
    labels: tuple[str, ...] = ()  # a labelled verdict's labels, best first; () for a score 0..1
    item_labels: tuple[str, ...] = ()  # the labels of what it rests on: documents, claims, calls
    bad_labels: tuple[str, ...] = ()  # of either, those shown red (`verdicts show`, the pages)
    # monitor/judges/prompts/<prompt>.yaml asks for it; a prompt no other metric shares asks for
    # its reasoning and label (or score) alone. None: no LLM judges it.
    prompt: str | None = None
    family: str | None = None  # its own family on /metrics: labels counted, or scores' histogram
    family_help: str = ""
    # The quality it is published as (drift, `eval` gates, dashboards, recording rules): the rate
    # of `quality_label` among its verdicts, or its mean score.
    quality: str = ""
    quality_label: str | None = None
    higher_is_worse: bool = False
    recorded: bool = False  # deploy/prometheus/rules.yml records its 1-hour estimate and bounds
    reference: bool = False  # judged against the expected tool calls, not by the quality judge
    # asked of an agent's turns only (tool calls or hand-offs), its prompt given the steps
    trajectory: bool = False
    panels: tuple[Panel, ...] = ()
    alerts: tuple[str, ...] = ()  # its alerts: Prometheus' (rules.yml) by name, Grafana's by uid

    @property
    def scored(self) -> bool:
        return not self.labels

    def order(self, label: str) -> float:
        """A label as a number, for rank correlations: the best 1, the worst 0, evenly between."""
        return 1.0 - self.labels.index(label) / (len(self.labels) - 1)


# score = share of the turn's documents judged relevant
CONTEXT_RELEVANCE = JudgeMetric(
    "context_relevance", "ctx_rel", item_labels=get_args(Relevance), bad_labels=("irrelevant",),
    prompt="context_relevance", family="assistant_context_relevance",
    family_help="Share of a turn's retrieved documents judged relevant.",
    quality="context_relevance", recorded=True,
    panels=(Panel("overview", "Context relevance", stat=True),
            Panel("retrieval", "Context relevance (share of documents relevant)", "service, route")),
    alerts=("AssistantContextRelevanceDrop",))
ANSWER_RELEVANCE = JudgeMetric(
    "answer_relevance", "ans_rel", labels=get_args(Relevance), bad_labels=("irrelevant",),
    prompt="answer", family="assistant_answer_relevance",
    family_help="Answer relevance verdicts (relevant, irrelevant).",
    quality="answer_irrelevance_rate", quality_label="irrelevant", higher_is_worse=True,
    recorded=True, panels=(Panel("answers", "Answers judged irrelevant"),))
COMPLETENESS = JudgeMetric(
    "completeness", "complete", labels=get_args(Completeness),
    bad_labels=("incomplete", "no_answer"), prompt="answer",
    family="assistant_answer_completeness",
    family_help="Completeness verdicts (complete, incomplete, no_answer); the no-answer rate is "
                "no_answer / all.",
    quality="no_answer_rate", quality_label="no_answer", higher_is_worse=True, recorded=True,
    panels=(Panel("overview", "No-answer rate", stat=True), Panel("overview", "No-answer rate")),
    alerts=("AssistantNoAnswerRateRising", "assistant-no-answer"))
# score = inferable / (inferable + ungrounded) claims; generic claims (greetings, hedges, "let
# me know if...") count neither way
GROUNDEDNESS = JudgeMetric(
    "groundedness", "grounded", item_labels=get_args(ClaimSupport), bad_labels=("ungrounded",),
    prompt="answer", family="assistant_groundedness",
    family_help="Grounded share of a turn's checkable claims.",
    quality="groundedness", recorded=True,
    panels=(Panel("overview", "Groundedness", stat=True), Panel("overview", "Groundedness"),
            Panel("answers", "Groundedness by route", "service, route")),
    alerts=("AssistantGroundednessBelowBaseline", "assistant-groundedness"))
# score = share of tool calls judged needed and with supported arguments (reference-free;
# per-call labels in `calls`, counted by monitor/contract.py's own families)
TOOL_USE = JudgeMetric(
    "tool_use", "tool_use", item_labels=get_args(YesNo), bad_labels=("no",), prompt="tool_use",
    quality="tool_use")
# score = reliability against the expected calls (reference-based: monitor/judges/tool_match.py;
# the five metrics and the counts in `reference`)
TOOL_CALLS = JudgeMetric(
    "tool_calls", "tool_ref", family="assistant_tool_calls_reliability",
    family_help="Per turn: mean of name recall and argument recall against the expected calls.",
    quality="tool_call_reliability", reference=True)

# an agent's turn judged on its whole trajectory: did it do what the user asked?
GOAL_COMPLETION = JudgeMetric(
    "goal_completion", "goal", labels=get_args(GoalCompletion), bad_labels=("partial", "failed"),
    prompt="trajectory", trajectory=True, family="assistant_agent_goal_completion",
    family_help="Goal completion verdicts on agents' turns, judged on the whole trajectory "
                "(complete, partial, failed).",
    quality="goal_failure_rate", quality_label="failed", higher_is_worse=True, recorded=True,
    panels=(Panel("tools", "Agent turns failing their goal"),),
    alerts=("AssistantAgentGoalsFailing",))
JUDGE_METRICS = (CONTEXT_RELEVANCE, ANSWER_RELEVANCE, COMPLETENESS, GROUNDEDNESS, TOOL_USE,
                 TOOL_CALLS, GOAL_COMPLETION)
JUDGE_METRIC: dict[str, JudgeMetric] = {m.name: m for m in JUDGE_METRICS}
METRICS: tuple[Metric, ...] = tuple(m.name for m in JUDGE_METRICS)
LABELS: dict[str, tuple[str, ...]] = {m.name: m.labels for m in JUDGE_METRICS if m.labels}
SCORED = tuple(m.name for m in JUDGE_METRICS if m.scored)
BAD_LABELS = frozenset(label for m in JUDGE_METRICS for label in m.bad_labels)
