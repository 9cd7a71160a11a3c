"""Ground-truth datasets from scenario templates and business data (CSV).

    assistant-monitor generate-dataset --templates scenarios.yaml --out golden.jsonl

A template names the CSV whose rows become cases, related CSVs joined on a key (a ticket and its
action items), the user's instructions, the completion condition and the expected calls.
`{column}` fills a value from the row, `{<join>_count}` the number of related rows, and an
expected call with `for_each: <join>` repeats once per related row (its columns in scope):

    scenarios:
      - type: close_ticket
        rows: tickets.csv
        join: {items: {csv: action_items.csv, key: ticket_id}}
        instructions: "Close ticket {ticket_id} ({title}) after its {items_count} action items."
        completion: "ticket {ticket_id} is closed"
        expected_calls:
          - {name: get_ticket, arguments: {ticket_id: "{ticket_id}"}}
          - {for_each: items, name: complete_action_item, arguments: {item_id: "{item_id}"}}
          - {name: close_ticket, arguments: {ticket_id: "{ticket_id}"}}

Paths are relative to the template file. Each output line is a scenario for the simulator and a
golden turn for `eval` (`expected_tool_calls`), with the rows it came from under `context`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml


class _Values(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        raise KeyError(f"template refers to {{{key}}}, which is no column here "
                       f"(columns: {', '.join(sorted(self))})")


def _fill(value: Any, values: _Values) -> Any:
    if isinstance(value, str):
        return value.format_map(values)
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    return value


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def generate(templates: Path) -> Iterator[dict[str, Any]]:
    spec = yaml.safe_load(templates.read_text())
    base = templates.parent
    for scenario in spec.get("scenarios", []):
        kind = scenario["type"]
        joins = {name: (_rows(base / j["csv"]), j["key"])
                 for name, j in (scenario.get("join") or {}).items()}
        for number, row in enumerate(_rows(base / scenario["rows"]), 1):
            related = {name: [r for r in rows if r.get(key) == row.get(key)]
                       for name, (rows, key) in joins.items()}
            values = _Values(row)
            values.update({f"{name}_count": len(items) for name, items in related.items()})
            expected = []
            try:
                for call in scenario["expected_calls"]:
                    if "for_each" in call:
                        for item in related[call["for_each"]]:
                            scoped = _Values({**values, **item})
                            expected.append({"name": call["name"],
                                             "arguments": _fill(call.get("arguments", {}), scoped)})
                    else:
                        expected.append({"name": call["name"],
                                         "arguments": _fill(call.get("arguments", {}), values)})
                instructions = _fill(scenario["instructions"], values)
                completion = _fill(scenario.get("completion", ""), values)
            except KeyError as exc:
                raise ValueError(f"{templates}: scenario {kind!r}, row {number}: "
                                 f"{exc.args[0]}") from None
            yield {"id": f"{kind}-{number}", "scenario_type": kind, "instructions": instructions,
                   "completion": completion, "expected_tool_calls": expected,
                   "context": {**row, **related}}


def write(rows: Iterator[dict[str, Any]], out: Path) -> int:
    count = 0
    with out.open("w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
            count += 1
    return count
