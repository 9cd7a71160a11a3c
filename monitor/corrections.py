"""People's corrections of stored verdicts: what they say the right label or score is, and how
often the judges agree with them.

    labels = human_labels(store.corrections())   # {trace_id: {metric: [value per person]}}
    agreement = judge_agreement(store.corrections())  # {(judge, metric): Agreed(n, agreed)}

A correction says a verdict is right (the person's value is the verdict's) or wrong, with the
right label (labelled metrics) or score (scored ones). When one person corrects the same verdict
again, the latest correction counts. The corrected turns, with their labels, are a golden dataset
(`verdicts export-failing`) and what `calibrate --from-store` measures the judges against.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from monitor.emit.intervals import wilson


def _latest(corrections: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each person's last word on each verdict."""
    latest: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for c in sorted(corrections, key=lambda c: c["id"]):
        latest[(c["trace_id"], c["judge"], c["metric"], c["author"])] = c
    return list(latest.values())


def human_value(correction: dict[str, Any]) -> Any:
    """The label or score the person says is right."""
    if correction["correct"]:
        return correction["verdict_label"] if correction["verdict_label"] is not None \
            else correction["verdict_score"]
    return correction["label"] if correction["label"] is not None else correction["score"]


def human_labels(corrections: Iterable[dict[str, Any]]) -> dict[str, dict[str, list[Any]]]:
    """trace id -> metric -> the value each person gave (the `labels` of a calibrate dataset:
    one value per rater). A person who corrected two judges' verdicts of one metric counts once,
    with their last word."""
    per_person: dict[tuple[str, str, str], Any] = {}
    for c in _latest(corrections):
        per_person[(c["trace_id"], c["metric"], c["author"])] = human_value(c)
    labels: dict[str, dict[str, list[Any]]] = {}
    for (trace_id, metric, _), value in sorted(per_person.items()):
        labels.setdefault(trace_id, {}).setdefault(metric, []).append(value)
    return labels


@dataclass(frozen=True)
class Agreed:
    corrections: int
    agreed: int

    @property
    def share(self) -> float:
        return self.agreed / self.corrections

    @property
    def interval(self) -> tuple[float, float]:
        """Wilson's 95% interval of the share."""
        return wilson(self.share, self.corrections)


def judge_agreement(corrections: Iterable[dict[str, Any]]) -> dict[tuple[str, str], Agreed]:
    """(judge, metric) -> how many of its verdicts people corrected, and found right."""
    counts: dict[tuple[str, str], list[int]] = {}
    for c in _latest(corrections):
        seen = counts.setdefault((c["judge"], c["metric"]), [0, 0])
        seen[0] += 1
        seen[1] += bool(c["correct"])
    return {key: Agreed(n, agreed) for key, (n, agreed) in sorted(counts.items())}


def corrected_cases(store: Any) -> list[Any]:
    """The stored turns people corrected, as `calibrate`/`eval` cases with their labels."""
    from monitor.evaluate import Case
    from monitor.model import AssistantTurn

    cases = []
    for trace_id, labels in human_labels(store.corrections()).items():
        shown = store.show(trace_id)
        if shown is not None:  # purged since: nothing to judge
            cases.append(Case(trace_id, "corrected", AssistantTurn.model_validate(shown["turn"]),
                              labels))
    return cases


def agreement_report(corrections: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """"judge/metric" -> corrections, agreed, share and its interval: the stored verdicts as
    people judged them (calibrate's report, the sidecar's gauge)."""
    return {f"{judge}/{metric}": {"corrections": a.corrections, "agreed": a.agreed,
                                   "share": a.share, "interval": a.interval}
            for (judge, metric), a in judge_agreement(corrections).items()}
