"""Reference-based tool-call evaluation: the calls an assistant made against the calls it should
have made (the line-of-business framework's five metrics).

    scores = match(expected, actual, MatchOptions(ignored={"get_time"}))
    scores.name_precision, scores.name_recall, scores.argument_precision,
    scores.argument_recall, scores.reliability          # each 0..1

- function names are compared case-insensitively; utility functions listed in `ignored` are left
  out on both sides;
- calls are paired order-insensitively by an optimal assignment (Hungarian algorithm) that
  maximises same-name pairs and then matching arguments;
- argument values are compared after normalisation: strings trimmed, whitespace collapsed and
  case-folded; numbers and numeric strings as numbers ("1,000" == 1000 == 1000.0); booleans
  from "true"/"false"; dates in common formats as ISO dates; lists element by element, dicts key
  by key. Optionally, strings that still differ match when their embedding similarity reaches
  `semantic_threshold`. An expected value `{"$any_of": [...]}` accepts any of the values, and
  `{"$any_of": [...], "$optional": true}` also accepts the argument being absent;
- precision counts what was called (name precision = same-name pairs / calls made; argument
  precision = matching arguments / arguments given), recall what should have been
  (name recall = same-name pairs / expected calls; argument recall = matching arguments /
  required expected arguments), reliability = mean(name recall, argument recall). With nothing
  expected and nothing called, every metric is 1.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from monitor.model import AssistantTurn, ToolCall
from monitor.verdict import JudgeResult, ReferenceCounts, Verdict

log = logging.getLogger(__name__)

# Calls a side that a sidecar pairs for a turn: pairing compares every expected call with every
# call made, in Python, then solves the assignment (cubic): 2,000 a side took 19 s of CPU.
MAX_CALLS = 256

_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y",
                 "%B %d %Y", "%b %d %Y")


def normalise(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return int(value) if float(value).is_integer() else float(value)
    if isinstance(value, str):
        text = " ".join(value.split())
        lowered = text.casefold()
        if lowered in ("true", "false"):
            return lowered == "true"
        if _NUMBER.match(text):
            return normalise(float(text.replace(",", "")))
        for fmt in _DATE_FORMATS:
            try:
                return datetime.strptime(text, fmt).date().isoformat()
            except ValueError:
                pass
        try:
            parsed = datetime.fromisoformat(text)
            return parsed.date().isoformat() if parsed.time() == datetime.min.time() \
                else parsed.isoformat()
        except ValueError:
            return lowered
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {str(k).casefold(): normalise(v) for k, v in value.items()}
    return value


def _alternatives(expected: Any) -> tuple[list[Any], bool]:
    """(accepted values, may be absent)."""
    if isinstance(expected, dict) and "$any_of" in expected:
        return list(expected["$any_of"]), bool(expected.get("$optional"))
    return [expected], False


@dataclass
class MatchOptions:
    ignored: set[str] = field(default_factory=set)  # utility functions, any case
    semantic_threshold: float | None = None
    similarity: Callable[[str, str], float] | None = None  # e.g. embedding cosine

    def values_equal(self, expected: Any, actual: Any) -> bool:
        accepted, _ = _alternatives(expected)
        return any(self._equal(normalise(e), normalise(actual)) for e in accepted)

    def _equal(self, expected: Any, actual: Any) -> bool:
        if expected == actual:
            return True
        if isinstance(expected, list) and isinstance(actual, list):
            return len(expected) == len(actual) and all(
                self._equal(e, a) for e, a in zip(expected, actual, strict=True))
        if isinstance(expected, dict) and isinstance(actual, dict):
            return expected.keys() == actual.keys() and all(
                self._equal(expected[k], actual[k]) for k in expected)
        if (self.semantic_threshold is not None and self.similarity is not None
                and isinstance(expected, str) and isinstance(actual, str)):
            return self.similarity(expected, actual) >= self.semantic_threshold
        return False


@dataclass
class ToolCallScores:
    expected_calls: int = 0
    actual_calls: int = 0
    matched_names: int = 0
    expected_arguments: int = 0
    actual_arguments: int = 0
    matched_arguments: int = 0  # given and matching (precision)
    matched_required: int = 0  # expected, required and matching (recall)
    pairs: list[dict[str, Any]] = field(default_factory=list)

    @staticmethod
    def _ratio(part: int, whole: int) -> float:
        return part / whole if whole else 1.0

    @property
    def name_precision(self) -> float:
        return self._ratio(self.matched_names, self.actual_calls)

    @property
    def name_recall(self) -> float:
        return self._ratio(self.matched_names, self.expected_calls)

    @property
    def argument_precision(self) -> float:
        return self._ratio(self.matched_arguments, self.actual_arguments)

    @property
    def argument_recall(self) -> float:
        return self._ratio(self.matched_required, self.expected_arguments)

    @property
    def reliability(self) -> float:
        return (self.name_recall + self.argument_recall) / 2

    @property
    def perfect(self) -> bool:
        return min(self.name_precision, self.name_recall, self.argument_precision,
                   self.argument_recall) == 1.0

    COUNTS = ReferenceCounts.COUNTS

    def counts(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.COUNTS}

    def add(self, other: ToolCallScores) -> None:
        """Micro-average: sum the counts of another turn into this one."""
        for name in self.COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, float]:
        return {"name_precision": self.name_precision, "name_recall": self.name_recall,
                "argument_precision": self.argument_precision,
                "argument_recall": self.argument_recall, "reliability": self.reliability}


def _arguments(call: ToolCall) -> dict[str, Any]:
    args = call.arguments
    return {str(k).casefold(): v for k, v in args.items()} if isinstance(args, dict) else {}


def _matching(expected: dict[str, Any], actual: dict[str, Any], options: MatchOptions
              ) -> tuple[int, int]:
    """(matching arguments, of which required)."""
    keys = [k for k, v in expected.items() if k in actual and options.values_equal(v, actual[k])]
    return len(keys), sum(1 for k in keys if not _alternatives(expected[k])[1])


def _required(expected: dict[str, Any]) -> int:
    return sum(1 for value in expected.values() if not _alternatives(value)[1])


def paired(calls: Iterable[ToolCall], options: MatchOptions) -> list[ToolCall]:
    """The calls `match` pairs: all but those of the ignored utility functions."""
    ignored = {name.casefold() for name in options.ignored}
    return [c for c in calls if c.name.casefold() not in ignored]


def match(expected: Iterable[ToolCall], actual: Iterable[ToolCall],
          options: MatchOptions | None = None) -> ToolCallScores:
    options = options or MatchOptions()
    want, got = paired(expected, options), paired(actual, options)
    scores = ToolCallScores(expected_calls=len(want), actual_calls=len(got))
    want_args = [_arguments(c) for c in want]
    got_args = [_arguments(c) for c in got]
    scores.expected_arguments = sum(_required(a) for a in want_args)
    scores.actual_arguments = sum(len(a) for a in got_args)
    if not want or not got:
        return scores
    # Score of pairing expected i with actual j: same name first, then matching arguments.
    gain = np.zeros((len(want), len(got)))
    for i, w in enumerate(want):
        for j, g in enumerate(got):
            if w.name.casefold() == g.name.casefold():
                gain[i, j] = 1 + _matching(want_args[i], got_args[j], options)[0] / (
                    len(want_args[i]) + 1)
    rows, cols = linear_sum_assignment(-gain)
    for i, j in zip(rows, cols, strict=True):
        if gain[i, j] <= 0:
            continue
        matched, required = _matching(want_args[i], got_args[j], options)
        scores.matched_names += 1
        scores.matched_arguments += matched
        scores.matched_required += required
        scores.pairs.append({"expected": want[i].name, "actual": got[j].name,
                             "matched_arguments": matched,
                             "expected_arguments": _required(want_args[i]),
                             "actual_arguments": len(got_args[j])})
    return scores


def load_golden(path: Path) -> dict[str, list[ToolCall]]:
    """scenario id -> expected calls, from JSONL rows {"scenario_id", "expected_tool_calls"}."""
    golden = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            try:
                golden[str(row["scenario_id"])] = [ToolCall(**c) for c in row["expected_tool_calls"]]
            except (KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: expected scenario_id and "
                                 f"expected_tool_calls ({exc})") from None
    return golden


class ReferenceToolJudge:
    """A `Judge` for turns with expected calls (on the turn, or by scenario id in a golden
    file); other turns get no verdict from it. Deterministic, no model, no cost."""

    name = "reference"

    def __init__(self, options: MatchOptions, golden: dict[str, list[ToolCall]] | None = None
                 ) -> None:
        self.options = options
        self.golden = golden or {}

    def expected(self, turn: AssistantTurn) -> list[ToolCall] | None:
        if turn.expected_tool_calls is not None:
            return turn.expected_tool_calls
        return self.golden.get(turn.scenario_id) if turn.scenario_id else None

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        expected = self.expected(turn)
        if expected is None:
            return JudgeResult(self.name, [])
        want, made = (len(paired(calls, self.options)) for calls in (expected, turn.tool_calls))
        if max(want, made) > MAX_CALLS:
            log.warning("a turn's %d expected and %d made tool calls are more than the %d a side "
                        "the reference judge pairs: no tool-call verdict for it", want, made,
                        MAX_CALLS)
            return JudgeResult(self.name, [])
        # In a thread: up to 65,000 pairs compared, the event loop serving the receivers meanwhile.
        scores = await asyncio.to_thread(match, expected, turn.tool_calls, self.options)
        counts = scores.counts()
        return JudgeResult(self.name, [Verdict(
            "tool_calls", score=scores.reliability,
            rationale=f"{scores.matched_names} of {scores.expected_calls} expected calls made "
                      f"({scores.actual_calls} made), {scores.matched_required} of "
                      f"{scores.expected_arguments} expected arguments right",
            reference=ReferenceCounts(**scores.as_dict(), **counts, pairs=tuple(scores.pairs)))])
