"""Sessions: a conversation's turns followed from the first to the last, over all traffic.

Turns are grouped by their conversation id (`gen_ai.conversation.id`, which
`exporters.record.session` writes, or OpenInference's and OpenTelemetry's `session.id`). A
session closes after `sessions.idle_timeout_s` without a turn (default 30 minutes), at a turn
the app marks as the last (`assistant.session.end`), or early, the longest idle first, when the
sessions followed hit `max_sessions` or `max_mib`; what each holds is a few counters and its
last question's words, so a flood of distinct conversation ids is bounded in bytes.

At its close a session gets its local outcome, from what its turns say without a judge:
  escalated   a turn asked for a person (the question: "talk to a human", "a real agent"), or
              the agent called a tool or handed off to one named for it ("escalate", "human");
  resolved    the user says it works, thanks the assistant after an answer that did not fail,
              or rated an answer up, and asked nothing since (a new request is a new problem);
  unresolved  ended by the app after a request that failed, went unanswered or was rated down;
  abandoned   left idle after such a request: the user gave up;
  unjudged    none of these: whether an answered conversation helped needs a judge, not a rule.
A reaction that asks nothing new ("ugh", "come on", "ok") leaves the last request's state as it
was; a thank-you after a failure ("ok thanks") or a grudging one ("thanks anyway") solves
nothing.
Frustration signals are counted as they come: rephrasings (a question sharing most of its words
with the one before), negative feedback, requests for a person. "Turns to resolution" is the
count of turns up to the answer the user thanked or rated up.
"""

from __future__ import annotations

import re
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from monitor.config import SessionSettings

Outcome = Literal["resolved", "unresolved", "escalated", "abandoned", "unjudged"]
Closed = Literal["idle", "ended", "evicted"]

# (conversation id, service, route, question, answered, failed, feedback score, the session
# ended, its tool calls' and hand-offs' names): a turn as `Completed.sessions` lists it.
SessionTurn = tuple[str, str, "str | None", "str | None", bool, bool, "float | None", bool,
                    list[str]]

_WORD = re.compile(r"\w+")
_ASKS_FOR_A_PERSON = re.compile(
    r"\b(?:(?:talk|speak|chat)\s+(?:to|with)\s+(?:a\s+|an\s+|your\s+|the\s+|some\s*one)?"
    r"(?:real\s+|live\s+|human\s+)?(?:human|person|agent|representative|someone|manager|"
    r"supervisor|operator)|(?:real|live|human)\s+(?:person|agent|being)|escalate|"
    r"customer\s+service|representative)\b", re.I)
_PERSON_TOOL = re.compile(r"escalat|human|handoff_to_(?:support|agent)|live_agent", re.I)
_THANKS = re.compile(r"\b(?:thanks?|thank you|thx|ty|cheers|much appreciated)\b", re.I)
_WORKS = re.compile(r"\b(?:(?:it|that|this)(?:'s| is)? (?:works?|worked|working|fixed|solved|did it|"
                    r"helped)|works now|(?:problem|issue) (?:solved|fixed|resolved)|all (?:good|set|sorted)"
                    r"|got it working)\b", re.I)
# what makes a short thanks something else: "thanks for nothing", "thanks, but that's not it"
_NOT_CLOSING = re.compile(r"\b(?:not|no|nothing|but|still|useless|never|wrong|doesn'?t|didn'?t|"
                          r"isn'?t|won'?t|can'?t|anyway)\b|n't\b|\?", re.I)
# A reaction asks nothing new ("ugh", "come on", "ok", "seriously?"): the problem stays as it was.
_REACTION_WORDS = frozenset(
    "ugh argh hmm hm huh meh ok okay k kk oh ah wow what wait seriously really come on lol no nope "
    "sigh nvm whatever fine sure right uh um yeah yes so and well great cool".split())
REPHRASED = 0.6  # a question sharing this share of its words with the one before repeats it
SESSION_BYTES = 400  # a session's counters, dict slot and object (a few small ints and flags)


def words(question: str | None) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(question or "")[:64])


def rephrased(question: frozenset[str], before: frozenset[str]) -> bool:
    """Most words shared with the question before (Jaccard), neither of them empty."""
    if not question or not before:
        return False
    return len(question & before) / len(question | before) >= REPHRASED


def asks_for_a_person(question: str | None, tools: Iterable[str]) -> bool:
    return bool(question and _ASKS_FOR_A_PERSON.search(question)) or any(
        _PERSON_TOOL.search(name) for name in tools)


def reacts(asked: frozenset[str]) -> bool:
    return bool(asked) and asked <= _REACTION_WORDS


def closes(question: str | None) -> Literal["works", "thanks", ""]:
    """A short closing message, not a new question: the user says it worked ("works"), or
    thanks the assistant ("thanks"); else ""."""
    if not question or len(question) > 160 or _NOT_CLOSING.search(question):
        return ""
    return "works" if _WORKS.search(question) else "thanks" if _THANKS.search(question) else ""


@dataclass(slots=True)
class Session:
    conversation_id: str
    service: str
    route: str
    first_seen: float  # the tracker's clock (monotonic), at its first turn
    last_seen: float
    turns: int = 0
    rephrasings: int = 0
    negative_feedback: int = 0
    person_requests: int = 0
    resolved_at: int | None = None  # the turn the user thanked or rated up (1-based)
    last_words: frozenset[str] = frozenset()
    last_failed: bool = False  # the last request failed, went unanswered or was rated down
    last_answered: bool = False
    size: int = 0

    def add(self, turn: SessionTurn) -> None:
        _, _, _, question, answered, failed, score, _, tools = turn
        self.turns += 1
        asked = words(question)
        closing = closes(question)
        repeat = not closing and rephrased(asked, self.last_words)
        self.rephrasings += repeat
        self.negative_feedback += score is not None and score < 0
        self.person_requests += asks_for_a_person(question, tools)
        rated_up = score is not None and score > 0
        if not closing and not reacts(asked):  # a request: a new problem, or the same one again
            self.last_answered = answered
            self.last_failed = failed or not answered or (score is not None and score < 0)
            self.resolved_at = None  # what was solved before is not this request
        # "it works now": solved, whatever came before; a thank-you: solved if the request before
        # was answered and did not fail (a polite "ok thanks" after failures solves nothing)
        if closing == "works" or rated_up or (
                closing == "thanks" and self.last_answered and not self.last_failed):
            if self.resolved_at is None:
                self.resolved_at = max(self.turns - 1, 1) if closing else self.turns
            self.last_failed = False
        self.last_words = self.last_words if closing or reacts(asked) else asked
        self.size = SESSION_BYTES + sys.getsizeof(self.conversation_id) + 60 * len(
            self.last_words) + sum(len(w) for w in self.last_words)

    def outcome(self, closed: Closed) -> Outcome:
        if self.person_requests:
            return "escalated"
        if self.last_failed:
            return "unresolved" if closed == "ended" else "abandoned"
        if self.resolved_at is not None:
            return "resolved"
        return "unjudged"


TURN_BUCKETS = (1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50)


class SessionTelemetry:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.sessions = Counter(
            "assistant_sessions", "Sessions closed, by why (idle, ended, evicted; all traffic).",
            ["service", "route", "closed"], registry=r)
        self.outcomes = Counter(
            "assistant_session_outcome", "Sessions by their local outcome: resolved, unresolved, "
            "escalated, abandoned, unjudged (all traffic).", ["service", "route", "outcome"],
            registry=r)
        self.turns = Histogram(
            "assistant_session_turns", "Turns per closed session (all traffic).",
            ["service", "route"], buckets=TURN_BUCKETS, registry=r)
        self.turns_to_resolution = Histogram(
            "assistant_session_turns_to_resolution", "Turns up to the answer the user thanked "
            "or rated up, in resolved sessions (all traffic).", ["service", "route"],
            buckets=TURN_BUCKETS, registry=r)
        self.session_verdicts = Counter(
            "assistant_session_verdicts", "Closed sessions an LLM session judge read whole (their "
            "stored turns), by its outcome and the user's frustration.",
            ["service", "route", "judge", "outcome", "frustration"], registry=r)
        self.frustration = Counter(
            "assistant_session_frustration", "Frustration signals in sessions' turns: "
            "rephrasing, negative_feedback, person_request (all traffic).",
            ["service", "route", "signal"], registry=r)
        # what is held: the sessions open and their bytes
        self.open_sessions = Gauge("assistant_sessions_open", "Sessions followed, not closed yet.",
                                   registry=r)
        self.session_bytes = Gauge("assistant_session_bytes", "Bytes the open sessions hold "
                                   "(accounted; bounded by sessions.max_mib).", registry=r)


SessionClosed = Callable[[Session, Closed, Outcome], None]


class SessionTracker:
    """Open sessions, bounded in count and bytes; `closed` gets each session as it closes."""

    def __init__(self, settings: SessionSettings, telemetry: SessionTelemetry,
                 services: Callable[[str | None], str], routes: Callable[[str | None], str],
                 closed: SessionClosed | None = None) -> None:
        """`closed`: called with each session closed idle or ended, and its outcome."""
        self.settings = settings
        self.telemetry = telemetry
        self._services, self._routes = services, routes
        self._closed = closed
        self.open: OrderedDict[str, Session] = OrderedDict()  # the longest idle first
        self.size = 0

    def add(self, turns: Iterable[SessionTurn], now: float) -> None:
        for turn in turns:
            conversation_id = turn[0]
            session = self.open.pop(conversation_id, None)
            if session is None:
                session = Session(conversation_id, self._services(turn[1]), self._routes(turn[2]),
                                  now, now)
            else:
                self.size -= session.size
            before = (session.rephrasings, session.negative_feedback, session.person_requests)
            session.add(turn)
            session.last_seen = now
            self._count_frustration(session, before)
            if turn[7]:  # the app ended the session with this turn
                self._close(session, "ended")
                continue
            self.open[conversation_id] = session
            self.size += session.size
        while self.open and (len(self.open) > self.settings.max_sessions
                             or self.size > self.settings.max_mib << 20):
            self._close(self._pop_oldest(), "evicted")

    def expire(self, now: float) -> None:
        while self.open:
            oldest = next(iter(self.open.values()))
            if oldest.last_seen + self.settings.idle_timeout_s > now:
                break
            self._close(self._pop_oldest(), "idle")

    def observe(self) -> None:
        self.telemetry.open_sessions.set(len(self.open))
        self.telemetry.session_bytes.set(self.size)

    def _pop_oldest(self) -> Session:
        _, session = self.open.popitem(last=False)
        self.size -= session.size
        return session

    def _count_frustration(self, session: Session, before: tuple[int, int, int]) -> None:
        after = (session.rephrasings, session.negative_feedback, session.person_requests)
        for signal, was, now in zip(("rephrasing", "negative_feedback", "person_request"), before,
                                    after, strict=True):
            if now > was:
                self.telemetry.frustration.labels(session.service, session.route, signal).inc()

    def _close(self, session: Session, closed: Closed) -> None:
        labels = (session.service, session.route)
        self.telemetry.sessions.labels(*labels, closed).inc()
        if closed == "evicted":  # it may go on, as a new session: no outcome yet
            return
        outcome = session.outcome(closed)
        self.telemetry.outcomes.labels(*labels, outcome).inc()
        self.telemetry.turns.labels(*labels).observe(session.turns)
        if outcome == "resolved" and session.resolved_at:
            self.telemetry.turns_to_resolution.labels(*labels).observe(session.resolved_at)
        if self._closed is not None:
            self._closed(session, closed, outcome)
