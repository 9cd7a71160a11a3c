"""The local agent signals against a labelled set: trajectories and sessions, through the
sidecar's own assembly (native/src/assemble/steps.rs) and session rules (monitor/sessions.py).

    python bench/agent_labels.py [--data bench/data/agent_sessions.jsonl] [--show-misses]

Each item of the set (bench/data/make_agent_sessions.py writes it; its labels say what happened in
each conversation, written without reading the rules) becomes spans as an agent's instrumentation
writes them (tests/agent_turns.py) and is assembled into turns; a session's turns carry one
conversation id, its last `end` ends it, otherwise it closes idle.

What the local signals decide, against the labels:
  trajectory  looping (two or more repeated calls), recovered (a failed call, then one that
              succeeded, and an answer), failing (failed calls), gave_up (no answer); an answered
              turn without failures is left undecided (a good answer, or a refusal in words: the
              no-answer model's and the LLM judge's call);
  session     the local outcome (resolved, unresolved, escalated, abandoned), or unjudged;
              turns to resolution where both say resolved.
Printed: per kind, how many items the signals decide (coverage), how many of those agree with the
label (agreement), and the confusion of label against decision. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from prometheus_client import CollectorRegistry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.config import SessionSettings  # noqa: E402
from monitor.model import AssistantTurn  # noqa: E402
from monitor.sessions import Session, SessionTelemetry, SessionTracker  # noqa: E402
from tests.agent_turns import DATA, assembled, turn_spans  # noqa: E402


def trajectory_decision(turn: AssistantTurn) -> str | None:
    s = turn.signals
    if s.loops >= 2:
        return "looping"
    if s.tool_errors and s.recoveries and turn.answer:
        return "recovered"
    if s.tool_errors:
        return "failing"
    if not turn.answer:
        return "gave_up"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    items = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]

    closed: dict[str, tuple[str, Session]] = {}
    tracker = SessionTracker(SessionSettings(idle_timeout_s=60), SessionTelemetry(
        CollectorRegistry()), str, lambda route: route or "none",
        lambda session, _closed, outcome: closed.__setitem__(session.conversation_id,
                                                             (outcome, session)))
    results: dict[str, list[tuple[str, str | None, int]]] = {"trajectory": [], "session": []}
    resolution: list[tuple[int, int | None]] = []
    for n, item in enumerate(items):
        if item["kind"] == "trajectory":
            turn, _ = assembled(turn_spans(n, 0, item["turns"][0], None))
            results["trajectory"].append((item["label"]["trajectory"], trajectory_decision(turn),
                                          n))
            continue
        conversation = f"conversation-{n}"
        for number, turn_data in enumerate(item["turns"]):
            _, sessions = assembled(turn_spans(n, number, turn_data, conversation))
            tracker.add(sessions, now=float(n * 1000 + number))
        tracker.expire(now=float(n * 1000 + 500))
        outcome, session = closed[conversation]
        label = item["label"]
        results["session"].append((label["outcome"], None if outcome == "unjudged" else outcome,
                                   n))
        if label["outcome"] == outcome == "resolved":
            resolution.append((label["turns_to_resolution"], session.resolved_at))

    for kind, rows in results.items():
        decided = [(label, decision) for label, decision, _ in rows if decision is not None]
        agree = sum(label == decision for label, decision in decided)
        print(f"{kind}: {len(rows)}; decided by the local signals {len(decided)} "
              f"({len(decided) / len(rows):.0%}); of those, agreeing with the label {agree} "
              f"({agree / max(len(decided), 1):.1%})")
        labels = sorted({label for label, _, _ in rows})
        confusion = Counter((label, decision or "undecided") for label, decision, _ in rows)
        columns = [*labels, "undecided"]
        print(f"  {'label / decision':18}" + "".join(f"{c:>11}" for c in columns))
        for label in labels:
            print(f"  {label:18}" + "".join(f"{confusion[label, c]:>11}" for c in columns))
        if args.show_misses:
            for label, decision, n in rows:
                if decision is not None and decision != label:
                    print(f"    item {n}: {label} -> {decision}: "
                          f"{[t['question'] for t in items[n]['turns']]}")
    exact = sum(a == b for a, b in resolution)
    print(f"turns to resolution, sessions both call resolved: {exact} of {len(resolution)} "
          f"exact")


if __name__ == "__main__":
    main()
