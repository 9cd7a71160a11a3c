"""The claim-support model's figures: balanced accuracy and AUC per source and kind, and the
temperature and threshold the dev split fixes. train.py selects epochs with them, export.py
calibrates and tests the exported model with them. Numpy only: they also run on a GPU machine
that has torch but not this package."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# The sources that are not claims (build_data.py --relevance, --no-answer): each task has its own
# threshold and cascade band, fitted on its own dev pairs.
TASKS = ["relevance", "no_answer"]


def balanced_accuracy(labels: np.ndarray, predicted: np.ndarray) -> float:
    return float(((predicted[labels == 1] == 1).mean() + (predicted[labels == 0] == 0).mean()) / 2)


def auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """P(a positive scores above a negative), a tie counting half: tied scores share their mean
    rank (a turn score takes few values)."""
    _, tied, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[tied]
    positives = labels == 1
    n_pos, n_neg = positives.sum(), (~positives).sum()
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def expected_calibration_error(labels: np.ndarray, probabilities: np.ndarray, bins: int = 10) -> float:
    edges = np.minimum((probabilities * bins).astype(int), bins - 1)
    return float(sum(abs(probabilities[edges == b].mean() - labels[edges == b].mean())
                     * (edges == b).mean() for b in range(bins) if (edges == b).any()))


def fit_temperature(labels: np.ndarray, logits: np.ndarray) -> float:
    def nll(t: float) -> float:
        p = np.clip(1 / (1 + np.exp(-logits / t)), 1e-7, 1 - 1e-7)
        return float(-(labels * np.log(p) + (1 - labels) * np.log(1 - p)).mean())
    return float(min(np.exp(np.linspace(np.log(0.25), np.log(8), 200)), key=nll))


def report(rows: list[dict[str, Any]], probabilities: np.ndarray, threshold: float,
           relevance_threshold: float = 0.5, no_answer_threshold: float = 0.5) -> dict[str, Any]:
    labels = np.array([r["label"] for r in rows])
    source = np.array([r["source"] for r in rows])
    # question-document relevance and no-answer have their own thresholds
    predicted = (probabilities >= np.select(
        [source == "relevance", source == "no_answer"],
        [relevance_threshold, no_answer_threshold], threshold)).astype(int)
    figures: dict[str, Any] = {}

    def add(name: str, chosen: np.ndarray) -> None:
        y, p = labels[chosen], probabilities[chosen]
        if len(set(y)) < 2:
            return
        figures[name] = {"balanced_accuracy": round(balanced_accuracy(y, predicted[chosen]), 4),
                         "auc": round(auc(y, p), 4), "pairs": int(chosen.sum())}
        print(f"  {name:28} balanced accuracy {figures[name]['balanced_accuracy']:.3f}  "
              f"AUC {figures[name]['auc']:.3f}  (n={int(chosen.sum())})")

    kind = np.array([r["kind"] for r in rows])
    form = np.array([r.get("form", "") for r in rows])
    add("vitaminc", source == "vitaminc")
    # where the build made them: VitaminC under open questions, sentence claims less a modifier
    add("asked", source == "asked")
    add("trimmed", source == "trimmed")
    add("reworded", source == "reworded")
    qa = source == "qa"
    add("qa", qa)
    supported = qa & (kind == "supported")
    for k in ("distractor", "swapped", "absent", "unrelated"):
        # Each kind against the supported pairs of the same forms it was built in.
        forms = set(form[qa & (kind == k)])
        add(f"qa/{k}", (qa & (kind == k)) | (supported & np.isin(form, list(forms))))
    for f in ("short", "sentence", "second"):
        add(f"qa/form={f}", qa & (form == f))
    relevance = source == "relevance"
    add("relevance", relevance)
    for k in ("same_article", "other_article"):  # each against all the relevant windows
        add(f"relevance/{k}", relevance & np.isin(kind, [k, "relevant"]))
    snippets = relevance & np.char.startswith(kind.astype(str), "snippet_")
    add("relevance/snippet", snippets)  # one or two sentences, three questions in ten shortened
    for k in ("same_article", "other_article"):
        add(f"relevance/snippet_{k}", relevance & np.isin(kind, [f"snippet_{k}", "snippet_relevant"]))
    no_answer = source == "no_answer"  # label 1: the answer declines its question
    add("no_answer", no_answer)
    add("no_answer/unseen_topic", no_answer & np.array([bool(r.get("unseen_topic")) for r in rows]))
    return figures


def mean_over_kinds(figures: dict[str, Any]) -> float:
    """VitaminC and each question-answer kind's balanced accuracy, averaged: what models are
    compared by."""
    return float(np.mean([figures[k]["balanced_accuracy"] for k in figures
                          if k == "vitaminc" or k.startswith("qa/") and "form=" not in k]))


def balancing_threshold(labels: np.ndarray, probabilities: np.ndarray) -> float:
    """The threshold that balances the accuracy of these pairs."""
    return float(max(np.unique(np.round(probabilities, 3)), key=lambda t: balanced_accuracy(
        labels, (probabilities >= t).astype(int))))



@dataclass
class DevChoice:
    temperature: float
    threshold: float
    relevance_threshold: float  # for question-document relevance, fitted on its dev pairs
    no_answer_threshold: float  # for the no-answer task, fitted on its dev pairs
    calibration_error: tuple[float, float]  # expected calibration error, raw and calibrated
    figures: dict[str, Any]  # on the whole dev split
    mean_over_kinds: float  # VitaminC and each question-answer kind: what models are compared by


def dev_choice(rows: list[dict[str, Any]], logits: np.ndarray, fit_pairs: int = 4000) -> DevChoice:
    """Temperature and threshold fitted on the first `fit_pairs` dev pairs (the threshold that
    balances their accuracy), then the figures on all of dev under them."""
    labels = np.array([r["label"] for r in rows[:fit_pairs]])
    fit_logits = logits[:fit_pairs]
    temperature = fit_temperature(labels, fit_logits)
    raw, calibrated = 1 / (1 + np.exp(-fit_logits)), 1 / (1 + np.exp(-fit_logits / temperature))
    threshold = balancing_threshold(labels, calibrated)
    ece = (expected_calibration_error(labels, raw), expected_calibration_error(labels, calibrated))
    print(f"dev ({len(labels)} pairs): temperature {temperature:.3f}, expected calibration error "
          f"{ece[0]:.4f} → {ece[1]:.4f}; threshold {threshold:.3f}", flush=True)
    probabilities = 1 / (1 + np.exp(-logits / temperature))
    task_thresholds = {}
    for task in TASKS:
        chosen = np.array([r["source"] == task for r in rows])
        task_thresholds[task] = 0.5
        if chosen.any():
            task_labels = np.array([r["label"] for r in rows])[chosen]
            task_thresholds[task] = balancing_threshold(task_labels, probabilities[chosen])
            print(f"dev {task} ({int(chosen.sum())} pairs): threshold {task_thresholds[task]:.3f}, "
                  "expected calibration error "
                  f"{expected_calibration_error(task_labels, probabilities[chosen]):.4f}")
    relevance_threshold, no_answer_threshold = task_thresholds["relevance"], task_thresholds["no_answer"]
    print(f"dev, all {len(rows)} pairs (for comparing models):")
    figures = report(rows, probabilities, threshold, relevance_threshold, no_answer_threshold)
    mean = mean_over_kinds(figures)
    print(f"  mean over vitaminc and the kinds: {mean:.4f}", flush=True)
    return DevChoice(temperature, threshold, relevance_threshold, no_answer_threshold, ece,
                     figures, mean)
