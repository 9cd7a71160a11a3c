"""The no-answer detector: does the assistant decline to answer?

An empty answer (nothing but whitespace, punctuation or list markers) is a no-answer without a
model, and a few words with no negation or apology ("Google.", "1600.") are an answer without it
(`may_decline`). Otherwise a logistic regression on the answer's embedding (all-MiniLM-L6-v2,
its framing stripped) decides, trained by bench/train_no_answer.py on
bench/data/no_answer.jsonl (refusals in many phrasings against real answers, many of them
negative or apologetic; partial answers that decline one part, reports that a requested action
failed, "Sorry, I could not cancel that order.", small talk, names, places or figures alone, and
how-to answers in steps are answers). It is trained on answers embedded one at a time, as the
judge embeds them (the int8 embedder's vectors shift slightly with the batch an answer is
embedded in). Test figures
(templates and topics held out): balanced accuracy 0.926, refusal recall 0.865, false positives
1 of 36 negative or apologetic answers, 1 of 24 failed-action reports, 0 of 12 how-to answers
(multilingual-e5-small, 10x the CPU, had 0.949 on the data before small talk, entity and how-to
answers were added). It costs one dot
product beyond the answer's embedding. The weights ship in models/no_answer.json.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np

MODEL_PATH = Path(__file__).parent / "models" / "no_answer.json"

_LIST_MARKER = re.compile(r"^\s*(?:[-*•+>]|\d{1,3}[.)]|[a-zA-Z][.)])(?=\s|$)", re.MULTILINE)
_WORD_CHARACTER = re.compile(r"\w")


# Words a refusal of a few words cannot do without: negations and apologies, in English and the
# other languages the data has (Portuguese, Spanish, French, German, Italian, Dutch).
_DECLINING = re.compile(
    r"\b(?:no|not|never|none|nothing|nobody|neither|nor|cannot|unable|unknown|unclear|unsure|"
    r"sorry|idea|comment|n[aã]o|nada|ning[uú]n\w*|pas|rien|aucun\w*|nicht|kein\w*|nessun\w*|"
    r"niet|geen)\b|n't\b", re.IGNORECASE)
SHORT_WORDS = 8


def may_decline(answer: str) -> bool:
    """Whether the detector is asked at all: a few words with no negation or apology ("Google.",
    "1600.", "It is Jon Voight.") assert something, and groundedness checks them. The embedding
    alone took a tenth of such short answers for refusals."""
    return len(answer.split()) > SHORT_WORDS or bool(_DECLINING.search(answer))


def is_empty(answer: str | None) -> bool:
    """Nothing to read: no answer, whitespace, punctuation or bare list markers ("- \\n1.")."""
    return answer is None or not _WORD_CHARACTER.search(_LIST_MARKER.sub("", answer))


class NoAnswerDetector:
    def __init__(self, path: Path | None = None) -> None:
        text = (path or MODEL_PATH).read_text()
        self.sha256 = hashlib.sha256(text.encode()).hexdigest()
        model = json.loads(text)
        self.weights = np.asarray(model["weights"], dtype=np.float32)
        self.bias = float(model["bias"])
        if self.weights.shape != (384,):
            raise ValueError(f"no-answer model has {self.weights.shape} weights, wants 384")

    def probability(self, answer_vector: np.ndarray) -> float:
        """P(no answer) from the answer's embedding."""
        return 1.0 / (1.0 + math.exp(-(float(answer_vector @ self.weights) + self.bias)))
