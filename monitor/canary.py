"""The judges' canary: a small labelled set, re-judged on a schedule by each LLM judge.

A judge endpoint can change under the sidecar (a new deployment, another quantisation behind the
same URL) and its verdicts with it, while the quality figures it produces look like the
assistant's. Every `judging.canary.interval_s`, each LLM judge (each endpoint alone, and their
panel) judges the canary set afresh (no verdict cache), and its agreement with the set's labels
is exported per metric with its 95% Wilson interval:

    assistant_judge_canary_agreement{judge, metric}          (and _lower, _upper)

The alert AssistantJudgeCanaryDisagrees (deploy/prometheus/rules.yml, and its Grafana-managed
twin) fires when a run's upper bound falls below the best lower bound of the last week: the
agreement fell by more than its interval. The set is the shipped one
(monitor/judges/data/canary.jsonl: grounded, invented, refused and irrelevant answers) or the
tenant's own (`judging.canary.dataset`, the `eval`/`calibrate` format with `labels`). Labels are
compared as they are; scores (groundedness, context relevance) by their side of 0.5.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from monitor.config import Settings
from monitor.emit.intervals import wilson
from monitor.errors import ConfigError
from monitor.evaluate import Case, load_dataset
from monitor.judges.base import Judge, JudgeError, JudgeUnavailable, close_judges
from monitor.judges.factory import judge_variants
from monitor.judges.telemetry import JudgeTelemetry
from monitor.verdict import JudgeResult

log = logging.getLogger(__name__)

SHIPPED = Path(__file__).parent / "judges" / "data" / "canary.jsonl"
FIRST_RUN_AFTER_S = 30.0  # after start: the judges are up, and the first figure comes soon


def _value(value: object) -> object:
    """A label as it is; a score (or a human mean) by its side of 0.5."""
    return value if isinstance(value, str) else float(value) >= 0.5  # type: ignore[arg-type]


def _truth(label: object) -> object:
    if isinstance(label, list):  # several raters: their majority, or their mean for scores
        if all(isinstance(x, str) for x in label):
            return max(set(label), key=label.count)
        label = sum(map(float, label)) / len(label)
    return _value(label)


def agreement(cases: Sequence[Case], results: Sequence[JudgeResult]
              ) -> dict[str, tuple[float, float, float]]:
    """Per metric: the judge's agreement with the labels, and its 95% interval."""
    out = {}
    for metric in sorted({m for case in cases for m in case.labels}):
        pairs = []
        for case, result in zip(cases, results, strict=True):
            verdict = result.get(metric) if metric in case.labels else None  # type: ignore[arg-type]
            if verdict is not None:
                judged = verdict.label if verdict.label is not None else verdict.score
                pairs.append((_truth(case.labels[metric]), _value(judged)))
        if pairs:  # (monitor.agreement's rate and interval, without importing scipy.stats)
            rate = sum(t == j for t, j in pairs) / len(pairs)
            out[metric] = (rate, *wilson(rate, len(pairs)))
    return out


class Canary:
    def __init__(self, settings: Settings, metrics: JudgeTelemetry) -> None:
        dataset = settings.judging.canary.dataset or SHIPPED
        try:
            self.cases = load_dataset(dataset)
        except (OSError, ValueError) as exc:
            raise ConfigError([f"judging.canary.dataset: {exc}"]) from None
        self.interval_s = settings.judging.canary.interval_s
        self.metrics = metrics
        # Judges of their own, without the verdict cache: a changed model must be asked again.
        fresh = settings.model_copy(deep=True)
        fresh.judging.llm.cache_size = 0
        fresh.judging.llm.fusion = False
        self.judges = judge_variants(fresh, metrics)

    async def run_once(self) -> None:
        for name, judge in self.judges.items():
            try:
                results = [await self._judge(judge, case) for case in self.cases]
            except JudgeUnavailable as exc:
                self.metrics.judge_canary_runs.labels(name, "unavailable").inc()
                log.warning("canary: judge %s unavailable (%s)", name, type(exc).__name__)
                continue
            for metric, (rate, lower, upper) in agreement(self.cases, results).items():
                self.metrics.judge_canary_agreement.labels(name, metric).set(rate)
                self.metrics.judge_canary_agreement_lower.labels(name, metric).set(lower)
                self.metrics.judge_canary_agreement_upper.labels(name, metric).set(upper)
            self.metrics.judge_canary_runs.labels(name, "ok").inc()

    @staticmethod
    async def _judge(judge: Judge, case: Case) -> JudgeResult:
        """Its verdicts; none where the judge's replies to this case were no verdict (counted
        as no agreement: the case drops out)."""
        try:
            return await judge.judge(case.turn)
        except JudgeUnavailable:
            raise
        except JudgeError:
            return JudgeResult(judge.name, [])

    async def run(self) -> None:
        """For good: a run soon after start, then one every interval."""
        await asyncio.sleep(FIRST_RUN_AFTER_S if self.interval_s > FIRST_RUN_AFTER_S else 0)
        while True:
            await self.run_once()
            await asyncio.sleep(self.interval_s)

    async def aclose(self) -> None:
        await close_judges(list(self.judges.values()))
