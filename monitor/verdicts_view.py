"""`assistant-monitor verdicts list|show`: the verdict store, read back for a person.

    rows = list_turns(store, limit=20, route="billing", metric="groundedness", below=0.5)
    console.print(turns_table(rows))
    console.print(turn_report(store.show(trace_id)))

Times are ISO 8601 (UTC). This reads the user's own local store, so it shows trace content.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, get_args

from rich.console import Group
from rich.table import Table
from rich.text import Text

from monitor.store import Store
from monitor.verdict import DocumentLabel, Metric, Verdict

METRICS: tuple[str, ...] = get_args(Metric)
SCORED = ("context_relevance", "groundedness", "tool_use", "tool_calls")
BAD_LABELS = {"irrelevant", "incomplete", "no_answer", "ungrounded", "no"}


def iso(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")


def list_turns(store: Store, limit: int, state: str | None = None, route: str | None = None,
               metric: str | None = None, below: float | None = None) -> list[dict[str, Any]]:
    """The newest stored turns matching the filters, each with {metric: (label, score)}."""
    where, args = [], []
    if state:
        where.append("t.state = ?")
        args.append(state)
    if route:  # "route" or "service/route"
        service, _, name = route.rpartition("/")
        where.append("t.route = ?")
        args.append(name)
        if service:
            where.append("t.service = ?")
            args.append(service)
    if metric:
        where.append("EXISTS (SELECT 1 FROM verdicts v WHERE v.trace_id = t.trace_id"
                     " AND v.metric = ?" + (" AND v.score < ?)" if below is not None else ")"))
        args.extend([metric, below] if below is not None else [metric])
    query = ("SELECT t.trace_id, t.service, t.route, t.state, t.reason, t.probability,"
             " t.received_at FROM turns t" + (" WHERE " + " AND ".join(where) if where else "")
             + " ORDER BY t.seq DESC LIMIT ?")
    rows = [dict(r) for r in store.db.execute(query, (*args, limit))]
    by_id = {r["trace_id"]: {**r, "verdicts": {}} for r in rows}
    if by_id:
        marks = ",".join("?" * len(by_id))
        for v in store.db.execute(f"SELECT trace_id, metric, label, score FROM verdicts"
                                  f" WHERE trace_id IN ({marks}) ORDER BY judge", tuple(by_id)):
            by_id[v["trace_id"]]["verdicts"].setdefault(v["metric"], (v["label"], v["score"]))
    return list(by_id.values())


def _cell(label: str | None, score: float | None, threshold: float = 0.5) -> Text:
    if label is not None:
        return Text(label, style="red" if label in BAD_LABELS else "green")
    if score is not None:
        return Text(f"{score:.2f}", style="red" if score < threshold else "green")
    return Text("-", style="dim")


def turns_table(rows: list[dict[str, Any]], metric: str | None = None) -> Table:
    """One row a turn; a column per metric that any row has a verdict on (or just `metric`)."""
    shown = [m for m in METRICS if (m == metric if metric else any(m in r["verdicts"]
                                                                    for r in rows))]
    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("trace id", no_wrap=True)
    table.add_column("received (UTC)", no_wrap=True)
    table.add_column("service/route", no_wrap=True)
    table.add_column("state")
    table.add_column("sampled by")
    for m in shown:
        table.add_column(m, justify="right")
    for r in rows:
        table.add_row(r["trace_id"], iso(r["received_at"]), f"{r['service']}/{r['route'] or '-'}",
                      r["state"], f"{r['reason']} p={r['probability']:.2f}",
                      *(_cell(*r["verdicts"].get(m, (None, None))) for m in shown))
    return table


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
        evidence = "" if judged is None else judged.reasoning or (
            f"similarity {judged.similarity}" if judged.similarity is not None else "")
        table.add_row(f"{i}.", _cell(judged.label if judged else "not judged", None),
                      Text.assemble((f"[{doc.get('id') or '-'}] ", "bold"), doc.get("content") or "",
                                    (f"  ({evidence})" if evidence else "", "dim")))
    return table


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
             + (f"   error: {shown['error']}" if shown.get("error") else ""), style="dim"),
        Text("\nquestion", style="bold cyan"), Text(turn.get("question") or "(none)"),
    ]
    if turn.get("documents"):
        parts += [Text("\ndocuments (relevance)", style="bold cyan"), _documents(turn, typed)]
    for call in turn.get("tool_calls", []):
        outcome = f"error: {call['error']}" if call.get("error") else json.dumps(call.get("result"))
        parts += [Text.assemble(("\ntool call ", "bold cyan"),
                                f"{call['name']}({json.dumps(call.get('arguments'))}) → {outcome}")]
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
                                (f"  judge {v['judge']}" + (f", prompt {v['prompt_version']}"
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
    return Group(*parts)


__all__ = ["iso", "list_turns", "turn_report", "turns_table"]
