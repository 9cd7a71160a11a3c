"""`assistant-monitor verdicts list|show`: the verdict store, read back for a person.

    rows = store.list_turns(limit=20, route="billing", metric="groundedness", below=0.5)
    table, note = fitted_table(console, rows)   # what fits the terminal, and what was left out
    console.print(turn_report(store.show(find_trace_id(store, "4bf92f"))))

Times are ISO 8601 (UTC). This reads the user's own local store, so it shows trace content.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from monitor.judge_metrics import BAD_LABELS, JUDGE_METRICS, METRICS
from monitor.store import Store
from monitor.verdict import DocumentLabel, Verdict

# Column headers on a narrow terminal, explained in a legend under the table.
SHORT_NAMES = {m.name: m.short_name for m in JUDGE_METRICS}
SHORT_ID = 12  # hex digits of a trace id on a narrow terminal: `verdicts show` takes a prefix


def iso(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")


def _cell(label: str | None, score: float | None, threshold: float = 0.5) -> Text:
    if label is not None:
        return Text(label, style="red" if label in BAD_LABELS else "green")
    if score is not None:
        return Text(f"{score:.2f}", style="red" if score < threshold else "green")
    return Text("-", style="dim")


def find_trace_id(store: Store, given: str) -> str:
    """The stored trace id that `given` is, or is the unique prefix of; LookupError says why
    not (not hex, no such turn, several turns: a few of them)."""
    prefix = given.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{1,32}", prefix):
        raise LookupError(f"{given!r} is not a trace id: 32 hex digits, or the first few of them")
    found: list[str] = [r[0] for r in store.db.execute(
        "SELECT trace_id FROM turns WHERE substr(trace_id, 1, ?) = ? ORDER BY seq DESC LIMIT 6",
        (len(prefix), prefix))]
    if len(found) == 1:
        return found[0]
    if not found:
        raise LookupError(f"no stored turn with trace id {prefix}"
                          + (" or beginning with it" if len(prefix) < 32 else "")
                          + " (`assistant-monitor verdicts list` shows the stored ones)")
    more = ", …" if len(found) > 5 else ""
    raise LookupError(f"trace id prefix {prefix} is ambiguous: {', '.join(found[:5])}{more} "
                      "begin with it; give more digits")


def _tools(calls: list[dict[str, Any]]) -> Text:
    """Each call's name, and `failed: its error` in red."""
    text = Text()
    for i, call in enumerate(calls):
        text.append(", " if i else "")
        if call.get("error"):
            text.append(f"{call['name']} failed: {call['error']}", style="red")
        else:
            text.append(call["name"], style="green")
    return text if calls else Text("-", style="dim")


TOOLS_MIN = 16  # the tool column's narrowest (it wraps): a tool's name


@dataclass(frozen=True)
class Layout:
    """What a table shows: fewer and shorter columns for a narrower terminal."""

    short_names: bool = False
    route_only: bool = False  # every row has the same service: the note names it
    short_ids: bool = False
    left_out: tuple[str, ...] = ()  # optional columns left out, by header


# Left out in this order to fit; the route last, and only where one service names it (an agent's
# goal column beside the verdicts leaves too little room for a failed call at 80 columns).
OPTIONAL = ("state", "sampled by", "received (UTC)", "route")


def _layouts(one_service: bool) -> list[Layout]:
    """From the fullest to the narrowest."""
    layouts = [Layout(), Layout(short_names=True)]
    if one_service:
        layouts.append(Layout(short_names=True, route_only=True))
    narrow = layouts[-1]
    return layouts + [replace(narrow, short_ids=True, left_out=OPTIONAL[:n])
                      for n in range(len(OPTIONAL) + 1)]


def turns_table(rows: list[dict[str, Any]], metric: str | None = None,
                layout: Layout = Layout(), tools_width: int | None = None) -> Table:
    """One row a turn; a column per metric that any row has a verdict on (or just `metric`),
    then the tool calls (where any row has one), at most `tools_width` wide if given."""
    shown = [m for m in METRICS if (m == metric if metric else any(m in r["verdicts"]
                                                                    for r in rows))]
    tools = any(r["tool_calls"] for r in rows)
    table = Table(box=None, header_style="bold", pad_edge=False)
    columns: list[tuple[str, Any]] = [
        ("trace id", lambda r: r["trace_id"][:SHORT_ID] if layout.short_ids else r["trace_id"]),
        ("received (UTC)", lambda r: iso(r["received_at"])),
        ("route" if layout.route_only else "service/route",
         lambda r: (r["route"] or "-") if layout.route_only
         else f"{r['service']}/{r['route'] or '-'}"),
        ("state", lambda r: r["state"]),
        ("sampled by", lambda r: f"{r['reason']} p={r['probability']:.2f}"),
    ]
    columns = [c for c in columns if c[0] not in layout.left_out]
    for header, _ in columns:
        table.add_column(header, no_wrap=True)
    for m in shown:
        table.add_column(SHORT_NAMES[m] if layout.short_names else m, justify="right",
                         no_wrap=True)
    if tools:  # the one column that gives way: a call's error wraps onto more lines
        table.add_column("tool calls", min_width=TOOLS_MIN, max_width=tools_width)
    for r in rows:
        table.add_row(*(value(r) for _, value in columns),
                      *(_cell(*r["verdicts"].get(m, (None, None))) for m in shown),
                      *([_tools(r["tool_calls"])] if tools else []))
    return table


def fitted_table(console: Console, rows: list[dict[str, Any]], metric: str | None = None
                 ) -> tuple[Table, str]:
    """The fullest table that fits the console's width, and a note of what it shortened or
    left out (empty when nothing)."""
    unbounded = console.options.update_width(1_000_000)
    services = {r["service"] for r in rows}
    # the first layout whose columns fit whole, with the tool column at its narrowest
    for layout in _layouts(len(services) == 1):
        narrowest = turns_table(rows, metric, layout, tools_width=TOOLS_MIN)
        if console.measure(narrowest, options=unbounded).maximum <= console.width:
            break
    table = turns_table(rows, metric, layout)
    headers = {str(c.header) for c in table.columns}
    notes = [", ".join(f"{SHORT_NAMES[m]} = {m}" for m in METRICS
                       if SHORT_NAMES[m] in headers and SHORT_NAMES[m] != m)
             if layout.short_names else ""]
    if layout.route_only:
        notes.append(f"service {services.pop()}")
    if layout.short_ids:
        notes.append(f"trace ids cut to {SHORT_ID} digits (`verdicts show` takes them)")
    if layout.left_out:
        notes.append(f"left out to fit {console.width} columns: {', '.join(layout.left_out)} "
                     "(a wider terminal or --json shows them)")
    return table, "; ".join(note for note in notes if note)


def _typed(verdict: dict[str, Any]) -> Verdict:
    """A stored verdict as the judge gave it (its details typed)."""
    return Verdict.from_details(verdict["metric"], verdict["label"], verdict["score"],
                                verdict["rationale"] or "", verdict.get("details") or {})


def _documents(turn: dict[str, Any], verdicts: list[Verdict]) -> Table:
    labels: dict[Any, DocumentLabel] = {}
    relevance = next((v for v in verdicts if v.metric == "context_relevance"), None)
    for i, d in enumerate(relevance.documents or () if relevance else (), start=1):
        labels[d.id or d.index or i] = d  # local judge: by id; LLM: by position
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(justify="right")
    table.add_column(no_wrap=True)
    table.add_column()
    for i, doc in enumerate(turn.get("documents", []), start=1):
        judged = labels.get(doc.get("id")) or labels.get(i)
        evidence = "" if judged is None else judged.reasoning or judged.figures
        table.add_row(f"{i}.", _cell(judged.label if judged else "not judged", None),
                      Text.assemble((f"[{doc.get('id') or '-'}] ", "bold"), doc.get("content") or "",
                                    (f"  ({evidence})" if evidence else "", "dim")))
    return table


@dataclass(frozen=True)
class TrajectoryRow:
    """A step as a person reads it: nested under the step it ran inside."""

    depth: int
    kind: str  # llm, tool, retrieval, agent, handoff
    name: str  # a tool call's name, a hand-off's agent, else the span's
    start_ms: float
    duration_ms: float
    error: str | None
    tool_call: int | None  # its tool call's number (1-based), as the tool calls are listed


def trajectory_rows(turn: dict[str, Any]) -> list[TrajectoryRow]:
    """An agent's steps, in order (none for a turn of one LLM call: nothing to follow)."""
    steps = turn.get("steps") or []
    if len(steps) < 2:
        return []
    depth: list[int] = []
    rows = []
    for step in steps:
        parent = step.get("parent")
        depth.append(0 if parent is None or parent >= len(depth) else depth[parent] + 1)
        call = step.get("tool_call")
        rows.append(TrajectoryRow(depth[-1], step["kind"], step.get("name") or "",
                                  step.get("start_ms") or 0.0, step.get("duration_ms") or 0.0,
                                  step.get("error"), None if call is None else call + 1))
    return rows


def signals_text(turn: dict[str, Any]) -> str:
    s = turn.get("signals") or {}
    return (f"{s.get('steps', 0)} steps, {s.get('tool_errors', 0)} failed tool calls, "
            f"{s.get('loops', 0)} repeated, {s.get('recoveries', 0)} recovered, "
            f"{s.get('tool_ms', 0.0):.0f} ms in tools")


def _short(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _claims(verdict: Verdict) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column()
    for claim in verdict.claims or ():
        if claim.reasoning is not None:
            evidence = claim.reasoning
        elif claim.support is not None:
            evidence = (f"support {claim.support} (lexical {claim.lexical}, similarity "
                        f"{claim.similarity})"
                        + (f" in {claim.evidence}" if claim.evidence else "")
                        + (f"; checked as “{claim.checked_as}”" if claim.checked_as else "")
                        + (f"; the passage contradicts its bound: {claim.contradicts}"
                           if claim.contradicts else "")
                        + (f"; deciding passage “{_short(claim.passage)}”"
                           if claim.passage else ""))
        else:
            evidence = "greeting, hedge or offer: not checked"
        table.add_row(_cell(claim.label, None),
                      Text.assemble(claim.claim, (f"  ← {evidence}", "dim")))
    return table


def turn_report(shown: dict[str, Any]) -> Group:
    """The turn and why each verdict came out as it did."""
    turn, verdicts = shown["turn"], shown["verdicts"]
    typed = [_typed(v) for v in verdicts]
    parts: list[Any] = [
        Text.assemble(("turn ", "bold"), (shown["trace_id"], "bold magenta"),
                      f"  {shown['service']}/{shown['route'] or '-'}  state {shown['state']}"
                      f"  sampled by {shown['reason']} (p={shown['probability']:.2f})"),
        Text(f"received {iso(shown['received_at'])}   judged {iso(shown['judged_at'])}"
             + (f"   revision {shown['revision']}: late spans changed it after it was judged"
                if shown.get("revision") else "")
             + (f"   error: {shown['error']}" if shown.get("error") else ""), style="dim"),
        Text("\nquestion", style="bold cyan"), Text(turn.get("question") or "(none)"),
    ]
    if turn.get("documents"):
        parts += [Text("\ndocuments (relevance)", style="bold cyan"), _documents(turn, typed)]
    for call in turn.get("tool_calls", []):
        outcome = f"error: {call['error']}" if call.get("error") else json.dumps(call.get("result"))
        parts += [Text.assemble(("\ntool call ", "bold cyan"),
                                f"{call['name']}({json.dumps(call.get('arguments'))}) → {outcome}")]
    if rows := trajectory_rows(turn):
        parts.append(Text(f"\ntrajectory ({signals_text(turn)})", style="bold cyan"))
        for n, row in enumerate(rows, start=1):
            name = f"to {row.name}" if row.kind == "handoff" else row.name
            parts.append(Text.assemble(
                f"{'  ' * row.depth}[{n}] {row.kind} {name}",
                (f"  +{row.start_ms:.0f} ms, {row.duration_ms:.0f} ms", "dim"),
                (f"  failed: {row.error}" if row.error else "", "red")))
    parts += [Text("\nanswer", style="bold cyan"), Text(turn.get("answer") or "(none)")]
    if turn.get("feedback"):
        parts.append(Text(f"user feedback {turn['feedback']['score']:+.1f}", style="dim"))
    order = {m: i for i, m in enumerate(METRICS)}
    for v, verdict in sorted(zip(verdicts, typed, strict=True),
                             key=lambda pair: (order.get(pair[0]["metric"], len(order)),
                                               pair[0]["judge"])):
        value = _cell(v["label"], v["score"])
        if v["label"] is not None and v["score"] is not None:
            value.append(f" {v['score']:.2f}")
        parts += [Text.assemble(("\n" + v["metric"], "bold cyan"), "  ", value,
                                (f"  judge {v['judge']}"
                                 + (f", model {v['model']}" if v.get("model") else "")
                                 + (f", prompt {v['prompt_version']}"
                                    if v["prompt_version"] else ""), "dim")),
                  Text(v["rationale"] or "")]
        if verdict.claims is not None:
            parts.append(_claims(verdict))
        for c in verdict.calls or ():
            parts.append(Text(f"  {c.name}: needed {c.needed}, arguments supported "
                              f"{c.arguments_supported} ← {c.reasoning or ''}"))
    for c in shown.get("costs", []):
        if c["calls"]:
            parts.append(Text(f"\ncost {c['judge']}: {c['calls']} LLM calls, {c['input_tokens']}"
                              f" + {c['output_tokens']} tokens, {c['latency_s']:.2f} s", style="dim"))
    if not verdicts:
        parts.append(Text("\nno verdict yet", style="yellow"))
    if shown.get("earlier"):
        parts.append(Text("\nverdicts of earlier revisions", style="bold cyan"))
    for v in shown.get("earlier", []):
        value = _cell(v["label"], v["score"])
        parts.append(Text.assemble(f"revision {v['revision']}  {v['metric']}  ", value,
                                   (f"  judge {v['judge']}: {v['rationale'] or ''}", "dim")))
    return Group(*parts)


def sessions_table(rows: list[dict[str, Any]]) -> Table:
    """Closed sessions, newest first: outcome, turns, frustration, the turns stored of each."""
    table = Table(box=None, pad_edge=False)
    for name in ("closed (UTC)", "conversation", "service/route", "outcome", "turns",
                 "to resolution", "rephrasings", "negative", "asked for a person", "LLM judge",
                 "stored"):
        table.add_column(name, justify="right" if name in ("turns", "stored") else "left")
    for r in rows:
        outcome = Text(r["outcome"], style="green" if r["outcome"] == "resolved" else
                       "dim" if r["outcome"] == "unjudged" else "red")
        judged = (f"{r['judged_outcome']}, frustration {r['frustration']}"
                  if r["judge_state"] == "judged" else r["judge_state"] or "-")
        table.add_row(f"{iso(r['closed_at'])} ({r['closed']})", r["conversation_id"],
                      f"{r['service']}/{r['route'] or '-'}", outcome, str(r["turns"]),
                      str(r["turns_to_resolution"] or "-"), str(r["rephrasings"]),
                      str(r["negative_feedback"]), str(r["person_requests"]), judged,
                      str(r["stored"]))
    return table


__all__ = ["find_trace_id", "fitted_table", "iso", "sessions_table", "signals_text",
           "trajectory_rows", "turn_report", "turns_table"]
