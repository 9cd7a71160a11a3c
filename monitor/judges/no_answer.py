"""The no-answer detector: does the assistant decline to answer?

A logistic regression over the answer's e5 embeddings (as a passage and as a query), trained by
bench/train_no_answer.py on bench/data/no_answer.jsonl: refusals in many wordings (blaming the
sources, "the context is not enough", declining without "sorry", "nothing came up") against real
answers of which most are negative or apologetic ("No, the plan does not include…") or partial.
An answer with no word at all (empty, whitespace, list markers) is a no-answer without the model.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from monitor.judges.embeddings import Embedder

NO_ANSWER_MODEL = Path(__file__).parent / "models" / "no_answer.json"
_LIST_MARKER = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|[a-z][.)])(?=\s|$)", re.MULTILINE)
_WORD = re.compile(r"\w", re.UNICODE)


def has_words(answer: str | None) -> bool:
    """False for None, whitespace, punctuation and bare list markers ("- \n1.\n*")."""
    return answer is not None and _WORD.search(_LIST_MARKER.sub("", answer)) is not None


class NoAnswerDetector:
    def __init__(self, embedder: Embedder, model: Path = NO_ANSWER_MODEL) -> None:
        spec = json.loads(model.read_text())
        if spec["features"] != "e5-passage+query-embedding":
            raise ValueError(f"no-answer model has unknown features {spec['features']!r}")
        self.embedder = embedder
        self.weights = np.asarray(spec["weights"], dtype=np.float32)
        self.bias = float(spec["bias"])
        self.threshold = float(spec["threshold"])

    def probability(self, answer: str | None) -> float:
        """How likely the answer declines to answer (1.0 when it has no words)."""
        if not has_words(answer):
            return 1.0
        x = np.concatenate([self.embedder.passage([answer])[0], self.embedder.query([answer])[0]])
        return 1.0 / (1.0 + math.exp(-(float(x @ self.weights) + self.bias)))

    def __call__(self, answer: str | None) -> bool:
        return self.probability(answer) >= self.threshold
