"""A claim that bounds a figure, against the passage's own figure: "more than 110 cases" where the
passage says 105 cases, "born after 15 January 1989" where it says January 12, 1989.

The claim-support model reads such pairs near its threshold (a small cross-encoder does not
compare numbers), and on VitaminC's dev split they are most of the refuted claims it takes for
supported. This check is exact where it speaks and silent elsewhere: it answers only when the
claim's bound sits on a figure of a unit the passage gives exactly one value of (itself not a
bound, an estimate or a range's end: "over 18 million volumes", "about 20", "50 dollars or more",
"the 2019–20 season"), or on a date or year where the passage has exactly one. It only ever
contradicts: a bound that holds says nothing about the rest of the claim.
"""

from __future__ import annotations

import re
from datetime import date

_GREATER = r"more than|over|above|greater than|higher than|in excess of|exceeding"
_LESS = r"less than|fewer than|under|below|lower than"
_NUMBER = r"(\d[\d,]*(?:\.\d+)?)"
_UNIT = r"(%|percent\b|[A-Za-z]+)"
# Words after a number that say nothing of what it counts ("33 and 20 in Sofia", "15 were").
_NOT_UNITS = frozenset("a an and as at by for from in into of on or than that the to with "
                       "is are was were be been has have had will would".split())
_CLAIM_FIGURE = re.compile(rf"\b({_GREATER}|{_LESS})\s+{_NUMBER}\s*{_UNIT}", re.I)
_PASSAGE_FIGURE = re.compile(rf"(?<![\w.,]){_NUMBER}\s*{_UNIT}", re.I)
# What makes a passage's figure a bound, an estimate or a range's end, before it ("over 18
# million", "about 20", "3 to 5 days") or after it ("50 dollars or more", "18 and over").
_BOUND_BEFORE = re.compile(rf"(?:\b(?:{_GREATER}|{_LESS}|about|around|nearly|almost|approximately|"
                           rf"roughly|some|up to|at least|at most)|\d\s*(?:-|–|to))\s*$", re.I)
_BOUND_AFTER = re.compile(r"\s*(?:or (?:more|less|fewer|over|under|above|below|longer|shorter|"
                          r"older|younger)|and (?:over|above|up|under|below)|\+)", re.I)

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = "(" + "|".join(_MONTHS) + ")"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(1[5-9]\d\d|20\d\d)"
_DATES = (  # (pattern, which groups are day, month, year)
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\s*,?\s+{_YEAR}\b", re.I), (1, 2, 3)),
    (re.compile(rf"\b{_MONTH}\s+{_DAY}\s*,?\s+{_YEAR}\b", re.I), (2, 1, 3)),
)
_CLAIM_TIME = re.compile(r"\b(before|after|prior to|earlier than|later than)\s+(?:the\s+)?", re.I)
_YEARS = re.compile(rf"\b{_YEAR}s?\b")


def contradicted_bound(claim: str, passage: str) -> str | None:
    """What of the claim the passage contradicts ("more than 110 cases" against "105 cases"),
    or None where it contradicts no bound of the claim, or cannot tell."""
    for found in _CLAIM_FIGURE.finditer(claim):
        unit = _unit(found.group(3))
        if unit in _NOT_UNITS:
            continue
        same_unit = [m for m in _PASSAGE_FIGURE.finditer(passage) if _unit(m.group(2)) == unit]
        values = {_value(m.group(1)) for m in same_unit}
        if len(values) != 1 or any(_BOUND_BEFORE.search(passage[max(0, m.start() - 40):m.start()])
                                   or _BOUND_AFTER.match(passage, m.end()) for m in same_unit):
            continue
        value, bound = values.pop(), _value(found.group(2))
        holds = value > bound if re.fullmatch(_GREATER, found.group(1), re.I) else value < bound
        if not holds:
            return f"“{found.group(0)}” against “{same_unit[0].group(0)}”"
    for found in _CLAIM_TIME.finditer(claim):
        ours = _when_at_start(claim[found.end():])
        if ours is None:
            continue
        theirs = _one_when(passage, full_date=ours[2])
        if theirs is None or theirs[0] == ours[0]:
            continue
        after = found.group(1).lower() in ("after", "later than")
        if (theirs[0] > ours[0]) != after:
            return f"“{found.group(0)}{ours[1]}” against “{theirs[1]}”"
    return None


def _value(number: str) -> float:
    return float(number.replace(",", ""))


def _unit(word: str) -> str:
    word = word.lower()
    return "%" if word in ("%", "percent") else word


def _dates(text: str) -> list[tuple[date, str]]:
    out = []
    for pattern, (day, month, year) in _DATES:
        for m in pattern.finditer(text):
            try:
                out.append((date(int(m.group(year)), _MONTHS.index(m.group(month).lower()) + 1,
                                  int(m.group(day))), m.group(0)))
            except ValueError:  # "31 February"
                continue
    return out


def _when_at_start(text: str) -> tuple[date, str, bool] | None:
    """The date or year `text` starts with: its value, its words, and whether it is a full date."""
    for when, shown in _dates(text):
        if text.startswith(shown):
            return when, shown, True
    year = re.match(rf"{_YEAR}s?\b", text)
    return (date(int(year.group(1)), 1, 1), year.group(0), False) if year else None


def _one_when(passage: str, full_date: bool) -> tuple[date, str] | None:
    """The passage's one full date (or year), and its words; None where it has none or several."""
    if full_date:
        found = _dates(passage)
        return found[0] if len({when for when, _ in found}) == 1 else None
    years = {int(y) for y in _YEARS.findall(passage)}
    if len(years) != 1:
        return None
    year = years.pop()
    return date(year, 1, 1), str(year)
