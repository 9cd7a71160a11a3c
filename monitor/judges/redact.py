"""Redaction before a prompt: personal data and secrets become consistent placeholders.

    redactor = Redactor()
    text = redactor("Mail jane@acme.com or jane@acme.com")   # "Mail <EMAIL_1> or <EMAIL_1>"

One `Redactor` per turn: the same value gets the same placeholder in the question, the documents
and the answer, so a claim about "<EMAIL_1>" can still be checked against its source. Patterns
run offline (no model, no download): e-mail addresses, payment card numbers (Luhn-checked),
IBANs, phone numbers, IP addresses, API keys and tokens (OpenAI, AWS, GitHub, Slack, Google,
JWTs, `Bearer ...`), and `password=...`-style secrets.
"""

from __future__ import annotations

import re
from collections.abc import Callable


def _luhn(number: str) -> bool:
    digits = [int(d) for d in re.sub(r"\D", "", number)]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# (kind, pattern, extra check). Order matters: secrets and cards before phone numbers.
_PATTERNS: list[tuple[str, re.Pattern[str], Callable[[str], bool] | None]] = [
    ("SECRET", re.compile(r"\b(?:sk|pk|rk)-(?:proj-|live-|test-)?[A-Za-z0-9_-]{16,}\b"), None),
    ("SECRET", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), None),
    ("SECRET", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), None),
    ("SECRET", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"), None),
    ("SECRET", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), None),
    ("SECRET", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"), None),
    ("SECRET", re.compile(r"(?i)\bbearer (?P<value>[A-Za-z0-9._~+/-]{16,}=*)"), None),
    ("SECRET", re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|token)\s*[=:]\s*"
                          r"(?P<value>[^\s,;]+)"), None),
    ("EMAIL", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"), None),
    ("IBAN", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"), None),
    ("CARD", re.compile(r"\b(?:\d[ -]?){12,18}\d\b"), _luhn),
    ("IP", re.compile(r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b"),
     None),
    ("PHONE", re.compile(r"(?<![\w+])(?:\+|00)?\d{1,3}[ .-]?\(?\d{2,4}\)?(?:[ .-]?\d{2,4}){2,4}\b"),
     lambda m: len(re.sub(r"\D", "", m)) >= 9),
]


class Redactor:
    def __init__(self) -> None:
        self.placeholders: dict[str, str] = {}  # original -> placeholder
        self._counts: dict[str, int] = {}

    def _placeholder(self, kind: str, value: str) -> str:
        if value not in self.placeholders:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self.placeholders[value] = f"<{kind}_{self._counts[kind]}>"
        return self.placeholders[value]

    def __call__(self, text: str | None) -> str | None:
        if not text:
            return text
        for kind, pattern, check in _PATTERNS:
            def replace(match: re.Match[str], kind: str = kind,
                        check: Callable[[str], bool] | None = check) -> str:
                whole = match.group(0)
                value = match.group("value") if "value" in match.re.groupindex else whole
                if check is not None and not check(value):
                    return whole
                return whole[: match.start("value") - match.start()] + self._placeholder(
                    kind, value) if value is not whole else self._placeholder(kind, value)
            text = pattern.sub(replace, text)
        return text
