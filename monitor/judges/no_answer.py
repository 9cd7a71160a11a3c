"""What decides whether an answer declines, before a model reads it.

An empty answer (nothing but whitespace, punctuation or list markers) is a no-answer without a
model, and a few words with no negation or apology ("Google.", "1600.") are an answer without it
(`may_decline`). Otherwise the claim-support model, asked whether the answer declines to answer
(monitor/judges/claim_support.py, `declines_pair`), decides: it was trained on
bench/data/no_answer.jsonl (refusals in many phrasings against real answers, many of them
negative or apologetic; partial answers that decline one part, reports that a requested action
failed, "Sorry, I could not cancel that order.", small talk, names, places or figures alone, and
how-to answers in steps are answers), split by template and topic; its test figures are in the
model's card (models/claim_support.json, `no_answer`).
"""

from __future__ import annotations

import re

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
    """Whether the model is asked at all: a few words with no negation or apology ("Google.",
    "1600.", "It is Jon Voight.") assert something, and groundedness checks them."""
    return len(answer.split()) > SHORT_WORDS or bool(_DECLINING.search(answer))


def is_empty(answer: str | None) -> bool:
    """Nothing to read: no answer, whitespace, punctuation or bare list markers ("- \\n1.")."""
    return answer is None or not _WORD_CHARACTER.search(_LIST_MARKER.sub("", answer))
