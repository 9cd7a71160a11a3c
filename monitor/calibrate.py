"""How well do the judges agree with people? And the cheap evaluators, fused without an LLM?

    assistant-monitor calibrate --dataset labelled.jsonl [--config judges.yaml] --out calibration/

Or, with `--from-store`, the stored turns people corrected on the turn pages (their labels: the
verdict's when they marked it right, theirs when wrong), with a section on how often they found
the stored verdicts right (monitor/corrections.py).

Each line is an `eval` dataset turn with human `labels`, one value or one per rater:

    {"question": "...", "documents": [...], "answer": "...",
     "labels": {"completeness": ["complete", "incomplete"], "answer_relevance": "relevant",
                "groundedness": [1.0, 0.5], "context_relevance": 0.5}}

Every configured judge is run alone (and as a panel when there are several; self-consistency
samples as configured), and the assistant evaluators are computed with the local judge. For each
metric the report gives, per judge: agreement rate, Cohen's kappa and the confusion matrix
against the human majority (labels), Kendall tau and Spearman rho against the human mean
(scores and ordered labels), Krippendorff's alpha with the judge as one more rater; the humans'
own alpha and pairwise agreement (the ceiling); and the Fusion-Eval baselines without an LLM:
AVG (mean of the plan's evaluators), LLMSel (the evaluator the plan selects) and CorrW
(all evaluators weighted by their Spearman correlation with the human labels; the weights are
reported). For completeness, each judge's no-answer detection is also scored as a yes/no
question (recall of the people's no_answer items, false positives among their answers, and
balanced accuracy); the local judge (its no-answer detector is a trained model) is always one of
the judges. Each agreement figure carries its 95% interval ("intervals": Wilson for agreement,
a bootstrap for kappa, Fisher's z for the correlations), shown beside it in the reports.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from scipy import stats

from monitor.agreement import (
    agreement_interval,
    agreement_rate,
    cohen_kappa,
    confusion,
    correlation_interval,
    kappa_interval,
    krippendorff_alpha,
    pairwise_human_agreement,
    rank_correlations,
)
from monitor.emit.intervals import wilson
from monitor.evaluate import Case, svg_bars
from monitor.judge_metrics import JUDGE_METRIC, LABELS
from monitor.judges.base import Judge, close_judges
from monitor.judges.factory import judge_variants
from monitor.judges.fusion import EVALUATORS, PLAN, evaluator_scores
from monitor.verdict import JudgeResult


def _human(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _majority(values: list[Any]) -> Any:
    return Counter(values).most_common(1)[0][0]


def _numeric(metric: str, value: Any) -> float:
    """A label as its place in the metric's declared order (best 1, worst 0), or a score."""
    return JUDGE_METRIC[metric].order(value) if isinstance(value, str) else float(value)


def _judge_value(result: JudgeResult, metric: str) -> Any:
    verdict = result.get(metric)  # type: ignore[arg-type]
    if verdict is None:
        return None
    return verdict.label if verdict.label is not None else verdict.score


def _percentiles(values: list[float]) -> list[float]:
    ranks = stats.rankdata(values)
    return [float((r - 1) / (len(values) - 1)) if len(values) > 1 else 0.5 for r in ranks]


def with_intervals(row: dict[str, Any], n: int) -> dict[str, Any]:
    """The row's rank correlations with their 95% intervals added under "intervals"."""
    found = {k: list(correlation_interval(row[k], n, k)) for k in ("kendall_tau", "spearman_rho")}
    return {**row, "intervals": {**row.get("intervals", {}), **found}}


def no_answer_figures(truth: tuple[Any, ...], judged: tuple[Any, ...]) -> dict[str, Any]:
    """Detecting no_answer as a yes/no question: recall, false positives, balanced accuracy."""
    said = [t == "no_answer" for t in truth]
    found = [j == "no_answer" for j in judged]
    refusals = sum(said)
    answers = len(said) - refusals
    caught = sum(s and f for s, f in zip(said, found, strict=True))
    false = sum(f and not s for s, f in zip(said, found, strict=True))
    recall = caught / refusals if refusals else math.nan
    false_positives = false / answers if answers else math.nan
    return {"refusals": refusals, "answers": answers, "recall": recall,
            "false_positive_rate": false_positives,
            "balanced_accuracy": (recall + 1 - false_positives) / 2,
            "intervals": {"recall": list(wilson(recall, refusals)) if refusals else [math.nan] * 2,
                          "false_positive_rate": list(wilson(false_positives, answers))
                          if answers else [math.nan] * 2}}


def baselines(metric: str, evaluators: list[dict[str, float]], human: list[float]
              ) -> dict[str, Any]:
    """AVG, LLMSel and CorrW scores for one criterion, and their rank correlation with people."""
    usable = [i for i, e in enumerate(evaluators) if all(k in e for k in PLAN[metric])]
    if len(usable) < 3:
        return {}
    normal = {name: _percentiles([evaluators[i].get(name, 0.0) for i in usable])
              for name in EVALUATORS}
    truth = [human[i] for i in usable]
    weights = {}
    for name in EVALUATORS:
        values = normal[name]
        rho = rank_correlations(values, truth)["spearman_rho"]
        weights[name] = max(rho, 0.0) if not math.isnan(rho) else 0.0
    total = sum(weights.values()) or 1.0
    scored = {
        "AVG": [sum(normal[n][j] for n in PLAN[metric]) / len(PLAN[metric])
                for j in range(len(usable))],
        "LLMSel": normal[PLAN[metric][0]],
        "CorrW": [sum(weights[n] * normal[n][j] for n in EVALUATORS) / total
                  for j in range(len(usable))],
    }
    return {"items": len(usable),
            "corrw_weights": {n: round(w / total, 4) for n, w in weights.items()},
            **{name: with_intervals(rank_correlations(values, truth), len(usable))
               for name, values in scored.items()}}


def metric_report(metric: str, cases: list[Case], results: dict[str, list[JudgeResult]],
                  evaluators: list[dict[str, float]]) -> dict[str, Any]:
    rated = [i for i, c in enumerate(cases) if metric in c.labels]
    humans = [_human(cases[i].labels[metric]) for i in rated]
    labelled = metric in LABELS
    truth = [_majority(h) if labelled else sum(map(float, h)) / len(h) for h in humans]
    out: dict[str, Any] = {"items": len(rated)}
    if any(len(h) > 1 for h in humans):
        width = max(len(h) for h in humans)
        padded = [h + [None] * (width - len(h)) for h in humans]
        out["humans"] = {"krippendorff_alpha": krippendorff_alpha(padded) if labelled else None,
                         "pairwise_agreement": pairwise_human_agreement(padded)
                         if labelled else None}
    out["judges"] = {}
    for name, per_case in results.items():
        pairs = [(truth[k], _judge_value(per_case[i], metric)) for k, i in enumerate(rated)]
        pairs = [(t, j) for t, j in pairs if j is not None]
        if not pairs:
            continue
        t, j = zip(*pairs, strict=True)
        row: dict[str, Any] = {"items": len(pairs),
                               **rank_correlations([_numeric(metric, x) for x in j],
                                                   [_numeric(metric, x) for x in t])}
        if labelled:
            row |= {"agreement": agreement_rate(t, j), "cohen_kappa": cohen_kappa(t, j),
                    "labels": list(LABELS[metric]),
                    "confusion": confusion(t, j, LABELS[metric]),
                    "intervals": {"agreement": list(agreement_interval(t, j)),
                                  "cohen_kappa": list(kappa_interval(t, j))}}
            with_judge = [h + [per_case[i].get(metric).label]  # type: ignore[union-attr]
                          for h, i in zip(humans, rated, strict=True)
                          if per_case[i].get(metric) is not None]  # type: ignore[arg-type]
            row["krippendorff_alpha_with_humans"] = krippendorff_alpha(
                [h + [None] * (max(map(len, with_judge)) - len(h)) for h in with_judge])
            if metric == "completeness":
                row["no_answer"] = no_answer_figures(t, j)
        out["judges"][name] = with_intervals(row, len(pairs))
    fused = baselines(metric, [evaluators[i] for i in rated], [_numeric(metric, x) for x in truth])
    if fused:
        out["baselines"] = fused
    return out


async def run_judges(cases: list[Case], judges: dict[str, Judge]) -> dict[str, list[JudgeResult]]:
    return {name: [await judge.judge(case.turn) for case in cases]
            for name, judge in judges.items()}


def calibration_report(cases: list[Case], results: dict[str, list[JudgeResult]],
                       local: list[JudgeResult]) -> dict[str, Any]:
    evaluators = [evaluator_scores(r) for r in local]
    metrics = sorted({m for c in cases for m in c.labels})
    return {"items": len(cases), "judges": list(results), "plan": PLAN,
            "metrics": {m: metric_report(m, cases, results, evaluators) for m in metrics}}


def _fmt(value: Any, row: dict[str, Any] | None = None, key: str = "") -> str:
    """A figure, with its 95% interval beside it when the row has one."""
    if not isinstance(value, float):
        return str(value)
    low, high = (row or {}).get("intervals", {}).get(key, (math.nan, math.nan))
    if math.isnan(low) or math.isnan(high):
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.2f}, {high:.2f}]"


def write_calibration(report: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration.json").write_text(json.dumps(report, indent=2, default=str))
    lines = [f"# Judge calibration: {report['items']} labelled items", ""]
    if report.get("stored_verdicts"):
        lines += ["## The stored verdicts, as people corrected them", "",
                  "| judge / metric | corrections | found right [95% interval] |", "|---|---|---|"]
        for name, row in report["stored_verdicts"].items():
            low, high = row["interval"]
            lines.append(f"| {name} | {row['corrections']} | {row['share']:.3f} "
                         f"[{low:.2f}, {high:.2f}] |")
        lines.append("")
    for metric, m in report["metrics"].items():
        lines += [f"## {metric} ({m['items']} items)", ""]
        if "humans" in m and m["humans"]["krippendorff_alpha"] is not None:
            lines.append(f"Humans: Krippendorff's alpha {_fmt(m['humans']['krippendorff_alpha'])}, "
                         f"pairwise agreement {_fmt(m['humans']['pairwise_agreement'])} "
                         "(the ceiling).")
            lines.append("")
        lines += ["| judge | agreement [95% interval] | kappa | alpha with humans | Kendall tau "
                  "| Spearman |", "|---|---|---|---|---|---|"]
        for name, row in m["judges"].items():
            lines.append(f"| {name} | {_fmt(row.get('agreement', '-'), row, 'agreement')} | "
                         f"{_fmt(row.get('cohen_kappa', '-'), row, 'cohen_kappa')} | "
                         f"{_fmt(row.get('krippendorff_alpha_with_humans', '-'))} | "
                         f"{_fmt(row['kendall_tau'], row, 'kendall_tau')} | "
                         f"{_fmt(row['spearman_rho'], row, 'spearman_rho')} |")
        for name, b in m.get("baselines", {}).items():
            if isinstance(b, dict) and "spearman_rho" in b:
                lines.append(f"| {name} (no LLM) | - | - | - | "
                             f"{_fmt(b['kendall_tau'], b, 'kendall_tau')} | "
                             f"{_fmt(b['spearman_rho'], b, 'spearman_rho')} |")
        if "baselines" in m:
            lines += ["", "CorrW weights: " + ", ".join(
                f"{k} {v}" for k, v in m["baselines"]["corrw_weights"].items())]
        for name, row in m["judges"].items():
            if "no_answer" in row:
                d = row["no_answer"]
                lines += ["", f"No-answer detection ({name}): recall "
                          f"{_fmt(d['recall'], d, 'recall')} of {d['refusals']} no_answer items, "
                          f"false positives {_fmt(d['false_positive_rate'], d, 'false_positive_rate')}"
                          f" of {d['answers']} answers, balanced accuracy "
                          f"{_fmt(d['balanced_accuracy'])}"]
        for name, row in m["judges"].items():
            if "confusion" in row:
                lines += ["", f"Confusion ({name}; rows: people, columns: judge; "
                          f"{' / '.join(row['labels'])}): {row['confusion']}"]
        lines.append("")
    (out / "calibration.md").write_text("\n".join(lines) + "\n")
    sections = [f"<h1>Judge calibration: {report['items']} labelled items</h1>"]
    for metric, m in report["metrics"].items():
        bars = {f"{name} agreement": row["agreement"] for name, row in m["judges"].items()
                if "agreement" in row}
        whiskers = {f"{name} agreement": row["intervals"]["agreement"]
                    for name, row in m["judges"].items() if "agreement" in row}
        bars |= {f"{name} Spearman": row["spearman_rho"] for name, row in m["judges"].items()
                 if not math.isnan(row["spearman_rho"])}
        whiskers |= {f"{name} Spearman": row["intervals"]["spearman_rho"]
                     for name, row in m["judges"].items()}
        for name, b in m.get("baselines", {}).items():
            if isinstance(b, dict) and "spearman_rho" in b and not math.isnan(b["spearman_rho"]):
                bars[f"{name} Spearman (no LLM)"] = b["spearman_rho"]
                whiskers[f"{name} Spearman (no LLM)"] = b["intervals"]["spearman_rho"]
        if "humans" in m and m["humans"]["pairwise_agreement"] is not None:
            bars["humans pairwise agreement (ceiling)"] = m["humans"]["pairwise_agreement"]
        sections.append(f"<h2>{html.escape(metric)}</h2>" + svg_bars(bars, whiskers))
    sections.append("<p>Lines across the bars: 95% intervals. Details and confusion matrices: "
                    "calibration.md, calibration.json.</p>")
    (out / "calibration.html").write_text("<!doctype html><meta charset='utf-8'><title>"
                                          "Calibration</title><body style='font-family:sans-serif'>"
                                          + "".join(sections) + "</body>")


def run(cases: list[Case], settings: Any, metrics: Any) -> dict[str, Any]:
    from monitor.judges.local import LocalJudge

    judges = judge_variants(settings, metrics)
    local = judges.get("local") or LocalJudge(settings.judging.local)

    async def go() -> tuple[dict[str, list[JudgeResult]], list[JudgeResult]]:
        try:
            results = await run_judges(cases, judges)
            if "local" not in results:  # its evaluators feed the baselines; it is a judge too
                results["local"] = [await local.judge(c.turn) for c in cases]
            local_results = results["local"]
            return results, local_results
        finally:
            await close_judges(list(judges.values()))

    results, local_results = asyncio.run(go())
    return calibration_report(cases, results, local_results)
