"""Offline evaluation: judge a golden dataset with the configured judges, report, and gate CI.

    assistant-monitor eval --dataset golden.jsonl --out report/ [--baseline old/report.json]
                           [--min groundedness=0.8 --min tool_calls.reliability=0.9]
                           [--max-drop 0.05]

Dataset: JSONL, one turn a line (docs/judging.md lists the fields):

    {"id": "t1", "scenario_type": "refund", "question": "...",
     "documents": [{"id": "kb-1", "content": "..."}], "answer": "...",
     "tool_calls": [{"name": "refund", "arguments": {"order_id": "42"}, "result": "ok"}],
     "expected_tool_calls": [{"name": "refund", "arguments": {"order_id": "42"}}],
     "labels": {"completeness": "complete"}}

Writes report.json (every metric, per scenario type, the worst cases, every turn's verdicts),
report.md and report.html (the same, with bar charts; each figure with its 95% interval, see
`intervals`), and returns the gate failures: a metric
under its minimum, or more than `max_drop` (relative, default 5%) worse than the baseline's.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from monitor.contract import QUALITIES, QUALITY, Quality
from monitor.emit.intervals import WeightedSums, wilson
from monitor.judges.base import Judge
from monitor.judges.tool_match import ToolCallScores
from monitor.model import AssistantTurn, RetrievedDocument, ToolCall, utf8_value
from monitor.verdict import JudgeResult

# Metrics where a lower value is better (the gates turn them around).
LOWER_IS_BETTER = {q.name for q in QUALITIES if q.higher_is_worse}
# The rates of a turn: the contract's, and the complete share (eval's own, not a drift stream).
RATES = (Quality("complete_rate", "completeness", "complete", higher_is_worse=False),
         *(q for q in QUALITIES if q.label is not None))
# The worst turns are those with the lowest sum of these (the rates turned around).
WORST_BY = (QUALITY["groundedness"].name, "tool_calls.reliability", QUALITY["no_answer_rate"].name,
            QUALITY["context_relevance"].name)


@dataclass
class Case:
    id: str
    scenario_type: str
    turn: AssistantTurn
    labels: dict[str, Any] = field(default_factory=dict)


def load_dataset(path: Path) -> list[Case]:
    cases = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row, _ = utf8_value(json.loads(line))  # an unpaired \ud83d: U+FFFD, as in ingest
            turn = AssistantTurn(
                trace_id=f"{number:032x}", service="eval", question=row.get("question"),
                answer=row.get("answer"),
                documents=[RetrievedDocument(**d) if isinstance(d, dict)
                           else RetrievedDocument(content=str(d))
                           for d in row.get("documents", [])],
                tool_calls=[ToolCall(**c) for c in row.get("tool_calls", [])],
                expected_tool_calls=[ToolCall(**c) for c in row["expected_tool_calls"]]
                if row.get("expected_tool_calls") is not None else None,
                scenario_id=row.get("scenario_id"))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        cases.append(Case(str(row.get("id", number)), str(row.get("scenario_type", "all")), turn,
                          row.get("labels", {})))
    if not cases:
        raise ValueError(f"{path}: no turns")
    return cases


def turn_metrics(results: list[JudgeResult]) -> dict[str, float]:
    """One number per metric for one turn."""
    out: dict[str, float] = {}
    for result in results:
        for v in result.verdicts:
            rates = {q.name: float(v.label == q.label) for q in RATES if q.verdict == v.metric}
            if rates:
                out |= rates
            elif v.reference is not None:
                for key in v.reference.SCORES:
                    out[f"tool_calls.{key}"] = getattr(v.reference, key)
            elif v.score is not None:
                out[v.metric] = v.score
    return out


def aggregate(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Means per metric; tool-call metrics micro-averaged over every expected call."""
    sums: dict[str, list[float]] = defaultdict(list)
    tools = ToolCallScores()
    seen_tools = False
    for row in rows:
        for metric, value in row["metrics"].items():
            if not metric.startswith("tool_calls."):
                sums[metric].append(value)
        if row.get("tool_counts"):
            seen_tools = True
            tools.add(ToolCallScores(**row["tool_counts"]))
    out = {metric: sum(values) / len(values) for metric, values in sorted(sums.items())}
    if seen_tools:
        out |= {f"tool_calls.{k}": v for k, v in tools.as_dict().items()}
    return out


def intervals(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """95% interval [low, high] of each aggregate: Wilson's for rates, Wilson's on the effective
    sample size for mean scores (monitor/emit/intervals.py); tool-call ratios as proportions of
    their calls or arguments, reliability as the mean of its two recalls' bounds."""
    values: dict[str, list[float]] = defaultdict(list)
    tools = ToolCallScores()
    for row in rows:
        for metric, value in row["metrics"].items():
            if not metric.startswith("tool_calls."):
                values[metric].append(value)
        if row.get("tool_counts"):
            tools.add(ToolCallScores(**row["tool_counts"]))
    out = {}
    for metric, found in sorted(values.items()):
        estimate = WeightedSums.of(found).estimate()
        out[metric] = [round(estimate.low, 4), round(estimate.high, 4)]
    if tools.expected_calls or tools.actual_calls:
        ratios = {"name_precision": (tools.matched_names, tools.actual_calls),
                  "name_recall": (tools.matched_names, tools.expected_calls),
                  "argument_precision": (tools.matched_arguments, tools.actual_arguments),
                  "argument_recall": (tools.matched_required, tools.expected_arguments)}
        for key, (part, whole) in ratios.items():
            low, high = wilson(part / whole, whole) if whole else (1.0, 1.0)
            out[f"tool_calls.{key}"] = [round(low, 4), round(high, 4)]
        out["tool_calls.reliability"] = [
            round((out["tool_calls.name_recall"][i] + out["tool_calls.argument_recall"][i]) / 2, 4)
            for i in (0, 1)]
    return out


async def judge_cases(cases: list[Case], judges: list[Judge], concurrency: int = 4
                      ) -> list[dict[str, Any]]:
    semaphore = asyncio.Semaphore(concurrency)
    progress = tqdm(total=len(cases), desc="judging", unit="turn", leave=False)

    async def one(case: Case) -> dict[str, Any]:
        async with semaphore:
            results = [await judge.judge(case.turn) for judge in judges]
        progress.update()
        counts = next((v.reference.counts() for r in results for v in r.verdicts
                       if v.reference is not None), None)
        return {"id": case.id, "scenario_type": case.scenario_type, "labels": case.labels,
                "metrics": turn_metrics(results), "tool_counts": counts,
                "verdicts": [{"judge": r.judge, "metric": v.metric, "label": v.label,
                              "score": v.score, "rationale": v.rationale}
                             for r in results for v in r.verdicts],
                "cost": {"calls": sum(r.calls for r in results),
                         "tokens": sum(r.input_tokens + r.output_tokens for r in results)}}

    try:
        return list(await asyncio.gather(*(one(case) for case in cases)))
    finally:
        progress.close()


def gate(metrics: dict[str, float], minimums: dict[str, float], baseline: dict[str, float] | None,
         max_drop: float) -> list[str]:
    failures = []
    for metric, minimum in minimums.items():
        value = metrics.get(metric)
        if value is None:
            failures.append(f"{metric}: no value (no turn had this metric)")
        elif metric in LOWER_IS_BETTER and value > minimum:
            failures.append(f"{metric} = {value:.3f}, above its maximum {minimum}")
        elif metric not in LOWER_IS_BETTER and value < minimum:
            failures.append(f"{metric} = {value:.3f}, below its minimum {minimum}")
    for metric, before in (baseline or {}).items():
        now = metrics.get(metric)
        if now is None:
            continue
        if metric in LOWER_IS_BETTER:  # compare the good share: 1 - rate
            worse = (1 - now) < (1 - before) * (1 - max_drop)
        else:
            worse = now < before * (1 - max_drop)
        if worse:
            failures.append(f"{metric} = {now:.3f}, down from {before:.3f} in the baseline "
                            f"(more than {max_drop:.0%} worse)")
    return failures


def build_report(rows: list[dict[str, Any]], dataset: Path, judges: list[str]) -> dict[str, Any]:
    by_scenario = {scenario: aggregate([r for r in rows if r["scenario_type"] == scenario])
                   for scenario in sorted({r["scenario_type"] for r in rows})}

    def badness(row: dict[str, Any]) -> float:
        m: dict[str, float] = row["metrics"]
        return sum(1 - m.get(k, 0) if k in LOWER_IS_BETTER else m.get(k, 1) for k in WORST_BY)

    worst = sorted(rows, key=badness)[:10]
    scenarios = sorted(by_scenario)
    return {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "dataset": str(dataset),
            "judges": judges, "turns": len(rows), "metrics": aggregate(rows),
            "intervals": intervals(rows), "by_scenario": by_scenario,
            "by_scenario_intervals": {s: intervals([r for r in rows if r["scenario_type"] == s])
                                      for s in scenarios},
            "cost": {"calls": sum(r["cost"]["calls"] for r in rows),
                     "tokens": sum(r["cost"]["tokens"] for r in rows)},
            "worst": [{"id": r["id"], "scenario_type": r["scenario_type"], "metrics": r["metrics"]}
                      for r in worst],
            "rows": rows}


def svg_bars(values: dict[str, float], intervals: dict[str, Any] | None = None,
             width: int = 360) -> str:
    """An inline SVG bar chart of 0..1 values (no plotting library needed); a black line across
    a bar spans its 95% interval where `intervals` gives one ([low, high])."""
    height = 22 * len(values) + 4
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 340}" height="{height}">']
    for i, (name, value) in enumerate(values.items()):
        value = max(value, 0.0)  # correlations can be negative; the bar starts at 0
        y = 22 * i + 2
        low, high = (intervals or {}).get(name, (math.nan, math.nan))
        known = not (math.isnan(low) or math.isnan(high))
        label = f"{value:.3f}" + (f" [{low:.2f}, {high:.2f}]" if known else "")
        parts.append(f'<text x="0" y="{y + 15}" font-size="13">{html.escape(name)}</text>'
                     f'<rect x="230" y="{y}" width="{value * width:.0f}" height="18" '
                     f'fill="#3b7dd8"/><text x="{236 + max(value, high if known else 0) * width:.0f}"'
                     f' y="{y + 15}" font-size="13">{label}</text>')
        if known:
            x1, x2 = 230 + max(low, 0) * width, 230 + max(high, 0) * width
            parts.append(f'<line x1="{x1:.0f}" x2="{x2:.0f}" y1="{y + 9}" y2="{y + 9}" '
                         'stroke="black" stroke-width="2"><title>95% interval</title></line>')
    return "".join(parts) + "</svg>"


def _with_interval(value: float, interval: list[float] | None) -> str:
    return f"{value:.3f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def write_reports(report: dict[str, Any], failures: list[str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps({**report, "gate_failures": failures}, indent=2))
    lines = [f"# Evaluation of {report['dataset']}", "",
             f"{report['turns']} turns, judges: {', '.join(report['judges'])}, "
             f"{report['cost']['calls']} LLM calls, {report['cost']['tokens']} tokens.", "",
             "## Gates", ""]
    lines += [f"- FAILED: {f}" for f in failures] or ["- passed"]
    lines += ["", "## Metrics", "", "| metric | value | 95% interval |", "|---|---|---|"]
    lines += [f"| {k} | {v:.3f} | " + ("{:.3f} to {:.3f}".format(*report["intervals"][k])
                                        if k in report["intervals"] else "-") + " |"
              for k, v in report["metrics"].items()]
    lines += ["", "## Per scenario type (95% intervals in brackets)", ""]
    for scenario, metrics in report["by_scenario"].items():
        bounds = report["by_scenario_intervals"].get(scenario, {})
        lines.append(f"- **{scenario}**: " + ", ".join(
            f"{k} {_with_interval(v, bounds.get(k))}" for k, v in metrics.items()))
    lines += ["", "## Worst cases", "", "| id | scenario | metrics |", "|---|---|---|"]
    lines += [f"| {w['id']} | {w['scenario_type']} | "
              + ", ".join(f"{k} {v:.2f}" for k, v in w["metrics"].items()) + " |"
              for w in report["worst"]]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    sections = [f"<h1>Evaluation of {html.escape(report['dataset'])}</h1>",
                f"<p>{report['turns']} turns; judges {html.escape(', '.join(report['judges']))}</p>",
                "<h2>Gates</h2><ul>" + ("".join(f"<li><b>FAILED</b> {html.escape(f)}</li>"
                                                for f in failures) or "<li>passed</li>") + "</ul>",
                "<h2>Metrics</h2><p>Lines across the bars: 95% intervals.</p>"
                + svg_bars(report["metrics"], report["intervals"])]
    for scenario, metrics in report["by_scenario"].items():
        sections.append(f"<h3>{html.escape(scenario)}</h3>"
                        + svg_bars(metrics, report["by_scenario_intervals"].get(scenario)))
    sections.append("<h2>Worst cases</h2><table><tr><th>id</th><th>scenario</th><th>metrics</th>"
                    "</tr>" + "".join(
                        f"<tr><td>{html.escape(w['id'])}</td><td>{html.escape(w['scenario_type'])}"
                        f"</td><td>{html.escape(json.dumps(w['metrics']))}</td></tr>"
                        for w in report["worst"]) + "</table>")
    (out / "report.html").write_text("<!doctype html><meta charset='utf-8'><title>Evaluation"
                                     "</title><body style='font-family:sans-serif'>"
                                     + "".join(sections) + "</body>")
