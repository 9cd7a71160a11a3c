"""How often the tool-call matcher agrees with BFCL's gold, on BFCL's own data.

    pip install --no-deps bfcl-eval        # the Berkeley Function Calling Leaderboard's data
    python bench/bfcl_agreement.py

For every item of BFCL's AST categories, candidate call lists are built from the gold answer
("possible answers": each argument lists its acceptable values, "" meaning it may be omitted):
ones that satisfy the gold (exact, reordered, differently formatted values) and ones that do not
(a wrong value, a missing argument, a wrong function, an extra call). For BFCL's relevance sets
(nothing should be called), not calling is right and calling anything is wrong. A candidate is
judged right by the matcher when all four precisions and recalls are 1. Agreement is the share
of candidates where the matcher's verdict equals the label; printed per perturbation.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.judges.tool_match import match  # noqa: E402
from monitor.model import ToolCall  # noqa: E402

AST_CATEGORIES = ["simple_python", "multiple", "parallel", "parallel_multiple", "live_simple",
                  "live_multiple", "live_parallel", "live_parallel_multiple"]
RELEVANCE = ["irrelevance", "live_irrelevance"]


def data_dir() -> Path:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bfcl-eval is not installed: pip install --no-deps bfcl-eval")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def expected_calls(gold: list[dict[str, Any]]) -> list[ToolCall]:
    calls = []
    for entry in gold:
        (name, params), = entry.items()
        arguments = {}
        for param, accepted in params.items():
            values = [v for v in accepted if v != ""]
            arguments[param] = {"$any_of": values, "$optional": "" in accepted}
        calls.append(ToolCall(name=name, arguments=arguments))
    return calls


def pick(expected: list[ToolCall]) -> list[ToolCall]:
    """A call list that satisfies the gold: first acceptable value, optional ones left out."""
    return [ToolCall(name=c.name, arguments={k: v["$any_of"][0] for k, v in c.arguments.items()
                                             if v["$any_of"] and not v["$optional"]})
            for c in expected]


def reformat(value: Any) -> Any:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return f"  {value.upper()} "
    return value


def altered(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 7
    if isinstance(value, str):
        return value + " (other)"
    if isinstance(value, list):
        return [*value, "extra"]
    if isinstance(value, dict):
        return {**value, "extra": 1}
    return "other"


def candidates(expected: list[ToolCall]) -> list[tuple[str, list[ToolCall], bool]]:
    base = pick(expected)
    out = [("exact", base, True)]
    if len(base) > 1:
        out.append(("reordered", list(reversed(base)), True))
    formatted = copy.deepcopy(base)
    for c in formatted:
        c.name = c.name.upper()
        c.arguments = {k: reformat(v) for k, v in c.arguments.items()}
    out.append(("reformatted (case, spaces, number as text)", formatted, True))
    first_with_args = next((i for i, c in enumerate(base) if c.arguments), None)
    if first_with_args is not None:
        wrong = copy.deepcopy(base)
        key = next(iter(wrong[first_with_args].arguments))
        wrong[first_with_args].arguments[key] = altered(wrong[first_with_args].arguments[key])
        out.append(("a wrong value", wrong, False))
        missing = copy.deepcopy(base)
        missing[first_with_args].arguments.pop(key)
        out.append(("a missing argument", missing, False))
    renamed = copy.deepcopy(base)
    renamed[0].name += "_v2"
    out.append(("a wrong function", renamed, False))
    out.append(("an extra call", [*base, copy.deepcopy(base[0])], False))
    return out


def main() -> None:
    data = data_dir()
    tally: Counter[tuple[str, bool]] = Counter()
    totals: Counter[str] = Counter()
    items = 0
    for category in AST_CATEGORIES:
        gold = {g["id"]: g["ground_truth"] for g in load(data / "possible_answer" /
                                                        f"BFCL_v4_{category}.json")}
        for answer in gold.values():
            items += 1
            expected = expected_calls(answer)
            for kind, actual, right in candidates(expected):
                verdict = match(expected, actual).perfect
                tally[(kind, verdict == right)] += 1
                totals[kind] += 1
    for category in RELEVANCE:
        for item in load(data / f"BFCL_v4_{category}.json"):
            items += 1
            if not item.get("function"):
                continue  # nothing offered to call
            function = item["function"][0]["name"]
            for kind, actual, right in (("relevance: no call", [], True),
                                        ("relevance: a call", [ToolCall(name=function)], False)):
                verdict = match([], actual).perfect
                tally[(kind, verdict == right)] += 1
                totals[kind] += 1
    print(f"BFCL v4 from bfcl-eval: {items} items ({', '.join(AST_CATEGORIES + RELEVANCE)})\n")
    print(f"{'candidate':46} {'n':>6} {'agreement':>10} {'disagree':>9}")
    for kind, n in totals.items():
        print(f"{kind:46} {n:>6} {tally[(kind, True)] / n:>10.2%} {tally[(kind, False)]:>9}")
    agreed = sum(v for (k, ok), v in tally.items() if ok)
    print(f"{'all':46} {sum(totals.values()):>6} {agreed / sum(totals.values()):>10.2%} "
          f"{sum(totals.values()) - agreed:>9}")


if __name__ == "__main__":
    main()
