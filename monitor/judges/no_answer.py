"""The no-answer detector: does the assistant decline to answer?

An empty answer (nothing but whitespace, punctuation or list markers) is a no-answer without a
model. Otherwise a logistic regression on the answer's embedding (all-MiniLM-L6-v2) decides, trained by
bench/train_no_answer.py on bench/data/no_answer.jsonl (refusals in many phrasings against real
answers, many of them negative or apologetic; partial answers that decline one part, and reports
that a requested action failed, "Sorry, I could not cancel that order.", are answers).
It is trained on answers embedded one at a time, as the judge embeds them (the int8 embedder's
vectors shift slightly with the batch an answer is embedded in). Test figures (templates and
topics held out): balanced accuracy 0.959, refusal recall 0.927, no false positive on negative or
apologetic answers, partial answers or failed-action reports. It costs one dot product beyond the
answer's embedding. The weights ship in models/no_answer.json; nothing is downloaded.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

MODEL_PATH = Path(__file__).parent / "models" / "no_answer.json"

_LIST_MARKER = re.compile(r"^\s*(?:[-*•+>]|\d{1,3}[.)]|[a-zA-Z][.)])(?=\s|$)", re.MULTILINE)
_WORD_CHARACTER = re.compile(r"\w")


def is_empty(answer: str | None) -> bool:
    """Nothing to read: no answer, whitespace, punctuation or bare list markers ("- \\n1.")."""
    return answer is None or not _WORD_CHARACTER.search(_LIST_MARKER.sub("", answer))


class NoAnswerDetector:
    def __init__(self, path: Path | None = None) -> None:
        model = json.loads((path or MODEL_PATH).read_text())
        self.weights = np.asarray(model["weights"], dtype=np.float32)
        self.bias = float(model["bias"])
        if self.weights.shape != (384,):
            raise ValueError(f"no-answer model has {self.weights.shape} weights, wants 384")

    def probability(self, answer_vector: np.ndarray) -> float:
        """P(no answer) from the answer's embedding."""
        return 1.0 / (1.0 + math.exp(-(float(answer_vector @ self.weights) + self.bias)))
