"""What the pages show, built from the store's rows: plain data the templates lay out.

    rows = [turn_row(r) for r in store.list_turns(...)]     # the worst-turns table
    page = turn_page(store.show(trace_id))                  # one turn, its verdicts explained

It follows `monitor/verdicts_view.py` (the terminal's rendering of the same data): the same
metrics in the same order, the same bad labels and 0.5 score threshold, UTC times in ISO 8601,
documents matched to their relevance labels by id (the local judge) or position (LLM judges).
Nothing here escapes text: the templates do (Jinja2's autoescape), so every string stays as the
store has it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from monitor.judge_metrics import BAD_LABELS, LABELS, METRICS
from monitor.verdict import DocumentLabel, Verdict
from monitor.verdicts_view import TrajectoryRow, iso, signals_text, trajectory_rows

SCORE_THRESHOLD = 0.5  # a score below it is shown as bad (as `verdicts list` colours it)
CLAIM_RANK = {"ungrounded": 0, "generic": 1, "inferable": 2}  # the worst first
CONTEXT_CHARS = 160  # of the document either side of a claim's evidence window
LONG_JSON = 4000  # characters of a tool call's arguments or result shown before cutting


def weight(probability: float | None) -> str:
    """1/p, the turn's weight in the estimates."""
    if not probability:
        return "-"
    w = 1.0 / probability
    return f"{w:.0f}" if w >= 100 or w == int(w) else f"{w:.2f}"


def tone(label: str | None, score: float | None) -> str:
    """A value's CSS class: bad, good or none."""
    if label is not None:
        return "bad" if label in BAD_LABELS else "good"
    if score is not None:
        return "bad" if score < SCORE_THRESHOLD else "good"
    return "none"


def value_text(label: str | None, score: float | None) -> str:
    if label is not None and score is not None:
        return f"{label} {score:.2f}"
    if label is not None:
        return label
    return f"{score:.2f}" if score is not None else "-"


def _json(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > LONG_JSON:
        return f"{text[:LONG_JSON]}… ({len(text) - LONG_JSON} more characters)"
    return text


# -- the worst-turns table -----------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    text: str
    tone: str


@dataclass(frozen=True)
class TurnRow:
    trace_id: str
    received: str
    stream: str  # service/route
    state: str
    reason: str
    probability: str
    weight: str
    cells: list[Cell]  # one a shown metric
    tools: list[dict[str, Any]]  # {name, error}


def shown_metrics(rows: list[dict[str, Any]], metric: str | None) -> list[str]:
    """A column per metric that any row has a verdict on (or just the one filtered on)."""
    return [m for m in METRICS if (m == metric if metric else any(m in r["verdicts"]
                                                                   for r in rows))]


def turn_row(row: dict[str, Any], metrics: list[str]) -> TurnRow:
    cells = []
    for m in metrics:  # as `verdicts list`: the label, else the score
        label, score = row["verdicts"].get(m, (None, None))
        cells.append(Cell(value_text(label, None if label is not None else score),
                          tone(label, score)))
    return TurnRow(
        trace_id=row["trace_id"], received=iso(row["received_at"]),
        stream=f"{row['service']}/{row['route'] or '-'}", state=row["state"],
        reason=row["reason"], probability=f"{row['probability']:.2f}",
        weight=weight(row["probability"]), cells=cells, tools=row["tool_calls"])


# -- one turn ------------------------------------------------------------------------------------


@dataclass
class Segment:
    """A stretch of text and the claims whose span covers it (marked in the page)."""

    text: str
    tone: str = ""  # the worst label of the claims covering it; "" when none
    starts: list[int] = field(default_factory=list)  # claims (numbers) whose span starts here
    ends: list[int] = field(default_factory=list)  # claims whose span ends here


def segments(text: str, spans: list[tuple[int, int, int, str]]) -> list[Segment]:
    """`text` cut at every span's ends; spans are (start, end, claim number, label)."""
    n = len(text)
    spans = [(max(0, min(a, n)), max(0, min(b, n)), number, label) for a, b, number, label in spans]
    spans = [s for s in spans if s[0] < s[1]]
    bounds = sorted({0, n, *(s[0] for s in spans), *(s[1] for s in spans)})
    out = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        covering = [s for s in spans if s[0] <= a and b <= s[1]]
        worst = min((s[3] for s in covering), key=lambda lab: CLAIM_RANK.get(lab, 3), default="")
        out.append(Segment(text[a:b], worst, [s[2] for s in covering if s[0] == a],
                           [s[2] for s in covering if s[1] == b]))
    return out


@dataclass
class Evidence:
    document: int | None  # 1-based position in the turn's documents; None: not found
    document_id: str | None
    named: str  # as the verdict names it ("kb-refunds", "document 3")
    window: tuple[int, int] | None
    before: str  # the document's text before the passage (cut to CONTEXT_CHARS)
    passage: str
    after: str


@dataclass
class ClaimView:
    number: int
    text: str
    label: str
    judge: str
    why: str  # the LLM's reasoning, or the support figures
    decided_by: str | None
    evidence: Evidence | None
    in_answer: bool = False  # found in the answer's text (and marked there)


@dataclass
class DocumentView:
    number: int
    id: str | None
    score: float | None
    labels: list[tuple[str, str, str]]  # (judge, label, why)
    content: list[Segment]
    evidence_for: list[int]  # claims whose evidence window is in it
    summary: str  # the opening of its content

    @property
    def tone(self) -> str:
        if not self.labels:
            return "none"
        return "bad" if all(lab == "irrelevant" for _, lab, _ in self.labels) else "good"


@dataclass
class ToolStep:
    number: int
    name: str
    arguments: str
    result: str | None
    error: str | None
    judged: list[str]  # tool_use verdicts on it: "judge: needed yes, arguments supported no (why)"


@dataclass
class VerdictView:
    key: str  # anchor: "v-<judge>-<metric>"
    metric: str
    judge: str
    model: str | None
    prompt_version: str | None
    value: str
    tone: str
    label: str | None
    score: float | None
    rationale: str
    facts: list[tuple[str, str]]  # agreement, decided by, signals, reference counts
    claims: list[ClaimView]
    labels: tuple[str, ...] | None  # the metric's labels (a correction picks one); None: scored


@dataclass
class AnswerView:
    judge: str | None  # whose claims are marked (None: no groundedness verdict)
    segments: list[Segment]
    claims: list[ClaimView]


@dataclass
class TurnPage:
    trace_id: str
    stream: str
    state: str
    error: str | None
    reason: str
    probability: str
    weight: str
    received: str
    judged: str
    turn: dict[str, Any]
    documents: list[DocumentView]
    steps: list[ToolStep]
    trajectory: list[TrajectoryRow]  # an agent's steps in order, nested (none: one LLM call)
    signals: str
    expected_calls: list[str]
    answers: list[AnswerView]
    verdicts: list[VerdictView]
    costs: list[str]
    corrections: list[dict[str, Any]]
    previous: str | None
    next: str | None
    feedback: str | None
    revision: int = 0  # late spans changed the turn after it was judged
    earlier: list[dict[str, Any]] = field(default_factory=list)  # the verdicts revisions before


def _typed(verdict: dict[str, Any]) -> Verdict:
    return Verdict.from_details(verdict["metric"], verdict["label"], verdict["score"],
                                verdict["rationale"] or "", verdict.get("details") or {})


def _document_labels(docs: list[dict[str, Any]], verdicts: list[tuple[dict[str, Any], Verdict]]
                     ) -> list[list[tuple[str, str, str]]]:
    """Each document's relevance labels, one a context_relevance verdict (judge, label, why)."""
    out: list[list[tuple[str, str, str]]] = [[] for _ in docs]
    for row, verdict in verdicts:
        if verdict.metric != "context_relevance" or verdict.documents is None:
            continue
        by_key: dict[Any, DocumentLabel] = {}
        for i, d in enumerate(verdict.documents, start=1):
            by_key[d.id or d.index or i] = d  # local judge: by id; LLM: by position
        for i, doc in enumerate(docs, start=1):
            judged = by_key.get(doc.get("id")) or by_key.get(i)
            if judged is None:
                continue
            why = judged.reasoning or judged.figures
            if judged.decided_by:
                why = f"{why} (decided by {judged.decided_by})" if why else \
                    f"decided by {judged.decided_by}"
            out[i - 1].append((row["judge"], judged.label, why))
    return out


def _find_document(docs: list[dict[str, Any]], named: str | None, window: tuple[int, int] | None,
                   passage: str | None) -> int | None:
    """The 0-based position of the document a claim's evidence names: by id, or "document N",
    checked against the passage where there is one (positions count the documents judged, which
    skip empty ones); else the document holding the passage."""
    def holds(i: int) -> bool:
        content = docs[i].get("content") or ""
        if not passage:
            return True
        if window is not None:
            return content[window[0]:window[1]] == passage
        return passage in content

    candidates = []
    if named:
        candidates += [i for i, d in enumerate(docs) if d.get("id") == named]
        if named.startswith("document ") and named[9:].isdigit():
            candidates.append(int(named[9:]) - 1)
    for i in candidates:
        if 0 <= i < len(docs) and holds(i):
            return i
    if passage:
        for i in range(len(docs)):
            if holds(i):
                return i
    return None


def _claim_why(claim: Any) -> str:
    if claim.reasoning is not None:
        return str(claim.reasoning)
    if claim.support is not None:
        why = f"support {claim.support}"
        parts = [f"{name} {value}" for name, value in (("lexical", claim.lexical),
                                                        ("similarity", claim.similarity))
                 if value is not None]
        if parts:
            why += f" ({', '.join(parts)})"
        if claim.checked_as:
            why += f"; checked as “{claim.checked_as}”"
        if claim.contradicts:
            why += f"; the passage contradicts its bound: {claim.contradicts}"
        return why
    return "greeting, hedge or offer: not checked"


def _claims(docs: list[dict[str, Any]], judge: str, verdict: Verdict, first: int
            ) -> list[ClaimView]:
    out = []
    for number, c in enumerate(verdict.claims or (), start=first):
        evidence = None
        window = tuple(c.window) if c.window is not None else None
        if c.evidence or c.passage:
            at = _find_document(docs, c.evidence, window, c.passage)  # type: ignore[arg-type]
            content = (docs[at].get("content") or "") if at is not None else ""
            if at is not None and window is not None and content[window[0]:window[1]] == c.passage:
                a, b = window
            elif at is not None and c.passage and c.passage in content:
                a = content.index(c.passage)
                b = a + len(c.passage)
            else:
                a = b = -1
            if a >= 0:
                before = content[max(0, a - CONTEXT_CHARS):a]
                after = content[b:b + CONTEXT_CHARS]
                evidence = Evidence(at + 1 if at is not None else None,
                                    docs[at].get("id") if at is not None else None,
                                    c.evidence or "", (a, b),
                                    ("…" if a > CONTEXT_CHARS else "") + before,
                                    content[a:b], after + ("…" if b + CONTEXT_CHARS < len(content)
                                                           else ""))
            else:
                evidence = Evidence(at + 1 if at is not None else None,
                                    docs[at].get("id") if at is not None else None,
                                    c.evidence or "", None, "", c.passage or "", "")
        out.append(ClaimView(number, c.claim, c.label, judge, _claim_why(c), c.decided_by,
                             evidence))
    return out


def _answer(answer: str, judge: str | None, claims: list[ClaimView]) -> AnswerView:
    """The answer with each claim found in it marked, in order (a claim an LLM reworded is not
    found: it is listed, not marked)."""
    spans, at = [], 0
    for claim in claims:
        text = claim.text.strip()
        found = answer.find(text, at) if text else -1
        if found < 0 and text:
            found = answer.find(text)
        if found >= 0:
            spans.append((found, found + len(text), claim.number, claim.label))
            claim.in_answer = True
            at = found + len(text)
    return AnswerView(judge, segments(answer, spans), claims)


def _facts(verdict: Verdict) -> list[tuple[str, str]]:
    facts: list[tuple[str, str]] = []
    if verdict.agreement is not None:
        votes = verdict.agreement.votes
        facts.append(("agreement", f"{verdict.agreement.share:.2f}" + (
            " (" + ", ".join(f"{j}: {v}" for j, v in votes.items()) + ")" if votes else "")))
    if verdict.signals is not None:
        for name, value in verdict.signals.to_json().items():
            facts.append((name.replace("_", " "), str(value)))
    if verdict.reference is not None:
        r = verdict.reference
        facts.append(("against the expected calls",
                      ", ".join(f"{name.replace('_', ' ')} {getattr(r, name):.2f}"
                                for name in r.SCORES)))
        facts.append(("counts", ", ".join(f"{k.replace('_', ' ')} {v}"
                                          for k, v in r.counts().items())))
        for p in r.pairs:
            facts.append(("paired", f"expected {p.expected} ↔ made {p.actual}: "
                                    f"{p.matched_arguments} of {p.expected_arguments} arguments"))
    return facts


def _steps(turn: dict[str, Any], verdicts: list[tuple[dict[str, Any], Verdict]]) -> list[ToolStep]:
    calls = turn.get("tool_calls") or []
    judged: list[list[str]] = [[] for _ in calls]
    for row, verdict in verdicts:
        taken: set[int] = set()
        for c in verdict.calls or ():
            i = next((i for i, call in enumerate(calls)
                      if call.get("name") == c.name and i not in taken), None)
            if i is None:
                continue
            taken.add(i)
            judged[i].append(f"{row['judge']}: needed {c.needed}, arguments supported "
                             f"{c.arguments_supported}" + (f" ({c.reasoning})" if c.reasoning
                                                           else ""))
    return [ToolStep(i, call.get("name") or "?", _json(call.get("arguments")),
                     None if call.get("result") is None else _json(call.get("result")),
                     call.get("error"), judged[i - 1])
            for i, call in enumerate(calls, start=1)]


# What the page reads of a turn, where a stored turn's JSON lacks it (older or partial rows)
TURN_FIELDS: dict[str, Any] = {
    "question": None, "answer": None, "documents": [], "tool_calls": [], "model": None,
    "conversation_id": None, "feedback": None, "expected_tool_calls": None, "duration_ms": 0.0,
    "input_tokens": 0, "output_tokens": 0}


def turn_page(shown: dict[str, Any]) -> TurnPage:
    turn = {**TURN_FIELDS, **shown["turn"]}
    docs: list[dict[str, Any]] = turn.get("documents") or []
    order = {m: i for i, m in enumerate(METRICS)}
    rows = sorted(shown["verdicts"], key=lambda v: (order.get(v["metric"], len(order)),
                                                    v["judge"]))
    typed = [(row, _typed(row)) for row in rows]

    verdicts, answers, number = [], [], 1
    for row, verdict in typed:
        claims = _claims(docs, row["judge"], verdict, number) if verdict.claims is not None else []
        number += len(claims)
        if verdict.metric == "groundedness" and verdict.claims is not None:
            answers.append(_answer(turn.get("answer") or "", row["judge"], claims))
        verdicts.append(VerdictView(
            key=f"v-{row['judge']}-{row['metric']}", metric=row["metric"], judge=row["judge"],
            model=row.get("model"), prompt_version=row.get("prompt_version"),
            value=value_text(row["label"], row["score"]), tone=tone(row["label"], row["score"]),
            label=row["label"], score=row["score"], rationale=row["rationale"] or "",
            facts=_facts(verdict), claims=claims, labels=LABELS.get(row["metric"])))
    if not answers:
        answers.append(AnswerView(None, segments(turn.get("answer") or "", []), []))

    labels = _document_labels(docs, typed)
    windows: list[list[tuple[int, int, int, str]]] = [[] for _ in docs]
    for view in answers:
        for claim in view.claims:
            e = claim.evidence
            if e is not None and e.document is not None and e.window is not None:
                windows[e.document - 1].append((*e.window, claim.number, claim.label))
    documents = []
    for i, doc in enumerate(docs, start=1):
        content = doc.get("content") or ""
        documents.append(DocumentView(
            i, doc.get("id"), doc.get("score"), labels[i - 1], segments(content, windows[i - 1]),
            [w[2] for w in windows[i - 1]],
            content[:200].rstrip() + ("…" if len(content) > 200 else "")))

    costs = [f"{c['judge']}: {c['calls']} LLM calls, {c['input_tokens']} + {c['output_tokens']}"
             f" tokens, {c['latency_s']:.2f} s" for c in shown.get("costs", []) if c["calls"]]
    corrections = [{**c, "created": iso(c["created_at"]),
                    "was": value_text(c["verdict_label"], c["verdict_score"]),
                    "right": value_text(c["label"], c["score"])}
                   for c in shown.get("corrections", [])]
    feedback = turn.get("feedback")
    conversation = shown.get("conversation") or {}
    return TurnPage(
        trace_id=shown["trace_id"], stream=f"{shown['service']}/{shown['route'] or '-'}",
        state=shown["state"], error=shown.get("error"), reason=shown["reason"],
        probability=f"{shown['probability']:.2f}", weight=weight(shown["probability"]),
        received=iso(shown["received_at"]), judged=iso(shown.get("judged_at")), turn=turn,
        documents=documents, steps=_steps(turn, typed), trajectory=trajectory_rows(turn),
        signals=signals_text(turn),
        expected_calls=[f"{c.get('name')}({_json(c.get('arguments'))})"
                        for c in turn.get("expected_tool_calls") or []],
        answers=answers, verdicts=verdicts, costs=costs, corrections=corrections,
        previous=conversation.get("previous"), next=conversation.get("next"),
        feedback=(f"{feedback['score']:+.1f}" + (f" “{feedback['comment']}”"
                                                  if feedback.get("comment") else ""))
        if feedback else None,
        revision=shown.get("revision") or 0,
        earlier=[{**v, "value": value_text(v["label"], v["score"]),
                  "tone": tone(v["label"], v["score"])} for v in shown.get("earlier", [])])
