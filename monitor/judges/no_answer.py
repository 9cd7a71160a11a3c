"""What decides whether an answer declines to answer.

An empty answer (nothing but whitespace, punctuation or list markers) is a no-answer without a
model, and a few words with no negation or apology ("Google.", "1600.") are an answer without it
(`may_decline`); a few words with one ("Don't know.") the claim-support model decides alone.
Otherwise two readings of the answer decide together (`NoAnswerDetector`): the
claim-support model's, asked whether the answer declines to answer
(monitor/judges/claim_support.py, `declines_pair`), and a logistic regression on the answer's
sentence embedding, which the judge computes anyway; their logits are mixed. Both were trained on
bench/data/no_answer.jsonl (refusals in many phrasings against real answers, many of them
negative or apologetic; partial answers that decline one part, reports that a requested action
failed, "Sorry, I could not cancel that order.", small talk, names, places or figures alone, and
how-to answers in steps are answers), split by template and topic; the mix, the threshold and
the test figures are in models/no_answer.json (training/claim_support/no_answer.py, which also
reads VitaminC claims as answers: plain statements of fact).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DETECTOR = Path(__file__).parent / "models" / "no_answer.json"

_LIST_MARKER = re.compile(r"^\s*(?:[-*•+>]|\d{1,3}[.)]|[a-zA-Z][.)])(?=\s|$)", re.MULTILINE)
_WORD_CHARACTER = re.compile(r"\w")


# Words a refusal of a few words cannot do without: negations and apologies ("N/A", "Dunno.",
# "Unavailable." among them), in English and the other languages the data has (Portuguese,
# Spanish, French, German, Italian, Dutch).
_DECLINING = re.compile(
    r"\b(?:no|not|never|none|nothing|nobody|neither|nor|cannot|unable|unknown|unclear|unsure|"
    r"n/a|dunno|unavailable|sorry|idea|comment|n[aã]o|nada|ning[uú]n\w*|pas|rien|aucun\w*|nicht|"
    r"kein\w*|nessun\w*|niet|geen)\b|n't\b", re.IGNORECASE)
SHORT_WORDS = 8


def is_short(answer: str) -> bool:
    return len(answer.split()) <= SHORT_WORDS


def may_decline(answer: str) -> bool:
    """Whether the model is asked at all: a few words with no negation or apology ("Google.",
    "1600.", "It is Jon Voight.") assert something, and groundedness checks them."""
    return not is_short(answer) or bool(_DECLINING.search(answer))


def is_empty(answer: str | None) -> bool:
    """Nothing to read: no answer, whitespace, punctuation or bare list markers ("- \\n1.")."""
    return answer is None or not _WORD_CHARACTER.search(_LIST_MARKER.sub("", answer))


@dataclass(frozen=True)
class NoAnswerDetector:
    """P(an answer declines to answer) from the claim-support model's probability and the
    answer's embedding: sigmoid((1 - mix) * logit(model) + mix * (embedding . weights + bias))."""

    weights: np.ndarray
    bias: float
    mix: float  # how much the embedding's logit weighs
    threshold: float  # P(declines) at or above: no answer
    band: dict[str, Any] | None  # the cascade's band on P(declines), fitted on dev

    @classmethod
    def beside(cls, card: Path, claim_support: dict[str, Any],
               models: dict[str, str]) -> NoAnswerDetector:
        """The detector fitted for the claim-support model whose card (`claim_support`) is at
        `card`: no_answer.json beside it, which must have been fitted with the models the judge
        runs (`models`: each one's checksum by name, and the digest of how the claim-support card
        reads its files, `claim_support_reading`). Where there is none, that model alone
        decides, at its card's threshold."""
        path = card.parent / DETECTOR.name
        if not path.exists():
            alone = claim_support["no_answer"]
            return cls(np.zeros(0, dtype=np.float32), 0.0, 0.0, float(alone["threshold"]),
                       alone.get("band"))
        fitted = json.loads(path.read_text())
        for name in sorted(set(models) | set(fitted["models"])):
            was, loaded = fitted["models"].get(name, "none"), models.get(name, "none")
            if was != loaded:
                raise ValueError(
                    f"{path} was fitted with another {name} model ({was[:8]}; this one is "
                    f"{loaded[:8]}): refit it with training/claim_support/no_answer.py")
        return cls(np.array(fitted["weights"], dtype=np.float32), float(fitted["bias"]),
                   float(fitted["mix"]), float(fitted["threshold"]), fitted.get("band"))

    def probability(self, answer: str, declines: float, embedding: np.ndarray) -> float:
        """`answer` as the models read it; `declines`: the claim-support model's P(declines), 0.0
        where it was not asked (a few words with no negation or apology: an answer, whatever the
        embedding says). A few words the model was asked about it decides alone: the regression
        learnt what sentences are about, and its 0.02 for "Don't know." outweighed the model's
        0.98."""
        if declines <= 0.0 or self.mix == 0.0 or is_short(answer):
            return declines
        declines = min(max(declines, 1e-6), 1 - 1e-6)
        z = ((1 - self.mix) * np.log(declines / (1 - declines))
             + self.mix * (float(embedding @ self.weights) + self.bias))
        return float(1 / (1 + np.exp(-z)))
