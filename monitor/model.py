"""The data that flows between stages.

Hot path (one per span): `SpanFacts`, compiled, filled by the semantic-convention mapping. Once
per turn: `AssistantTurn`, a validated pydantic model that the sampler, the judges and the store
share. What judges say about a turn (`Verdict`, `JudgeResult`, their typed details)
is in monitor/verdict.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from pydantic import BaseModel, Field

from monitor import _native

SpanRole = Literal["llm", "retrieval", "tool", "agent", "chain", "other"]


def utf8_text(text: str) -> str:
    """`text` as UTF-8 can encode it: each lone surrogate (JSON's unpaired \\ud83d escape decodes
    to one; SQLite, Kafka and HTTP bodies refuse it) becomes U+FFFD, a surrogate pair the
    character it encodes."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utf8_value(value: Any) -> tuple[Any, bool]:
    """A decoded JSON value with `utf8_text` applied to every string and key (in place where it
    can be, key order kept), and whether anything changed. Iterative: it may nest deeply."""
    if isinstance(value, str):
        fixed = utf8_text(value)
        return fixed, fixed != value
    changed = False
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(utf8_text(key) != key for key in item):  # JSON keys are strings
                rebuilt = {utf8_text(key): child for key, child in item.items()}
                item.clear()
                item.update(rebuilt)
                changed = True
            slots: list[tuple[Any, Any]] = list(item.items())
        elif isinstance(item, list):
            slots = list(enumerate(item))
        else:
            continue
        for slot, child in slots:
            if isinstance(child, str):
                fixed = utf8_text(child)
                if fixed != child:
                    item[slot], changed = fixed, True
            else:
                stack.append(child)
    return value, changed


class RetrievedDocument(BaseModel):
    id: str | None = None
    content: str | None = None
    score: float | None = None


class ToolCall(BaseModel):
    name: str
    arguments: Any = None  # a dict when the arguments were JSON, else the raw string
    result: Any = None
    error: str | None = None
    call_id: str | None = None


class Step(BaseModel):
    """One step of the turn's trajectory: an LLM call, a tool call, a retrieval, an agent (which
    holds the steps it ran) or a hand-off between agents. In order of start; nested by `parent`."""

    kind: Literal["llm", "tool", "retrieval", "agent", "handoff"]
    name: str  # a tool call's name, else the span's
    span_id: str | None = None  # None: a tool call the model asked for that no span recorded
    parent: int | None = None  # the step it ran inside: an earlier one's place in `steps`
    start_ms: float = 0.0  # from the turn's start
    duration_ms: float = 0.0
    error: str | None = None
    tool_call: int | None = None  # its place in `tool_calls`


class TrajectorySignals(BaseModel):
    """What the trajectory says without a judge, for every turn (the agent metrics count them
    over all traffic)."""

    steps: int = 0  # LLM calls, tool calls, retrievals and hand-offs (agents hold steps)
    tool_errors: int = 0  # tool calls that failed
    loops: int = 0  # tool calls repeating an earlier one of the turn: same tool, same arguments
    recoveries: int = 0  # failed tool calls after which a call succeeded
    tool_ms: float = 0.0  # time in tool spans


class Feedback(BaseModel):
    score: float = Field(ge=-1.0, le=1.0)  # -1 bad .. 1 good
    comment: str | None = None


class AssistantTurn(BaseModel):
    """One user question and everything the assistant did to answer it (one trace).

    The turn's schema: the compiled assembler writes these fields, in this order, as JSON and as
    this object (native/src/assemble/output.rs); tests/test_conventions.py holds both to it."""

    trace_id: str  # 32 hex digits
    root_span_id: str | None = None  # 16 hex digits: the span the turn's verdicts are attached to
    service: str = "unknown"
    route: str | None = None
    tenant: str | None = None
    question: str | None = None
    documents: list[RetrievedDocument] = Field(default_factory=list)
    answer: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)  # the trajectory
    model: str | None = None
    feedback: Feedback | None = None
    error: str | None = None  # the first error status message of any span
    scenario_id: str | None = None
    expected_tool_calls: list[ToolCall] | None = None  # golden calls, when the turn has them
    conversation_id: str | None = None
    start_time_unix_nano: int = 0
    duration_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    span_count: int = 0
    signals: TrajectorySignals = Field(default_factory=TrajectorySignals)
    conventions: list[str] = Field(default_factory=list)  # which conventions the spans used
    completion: Literal["root_ended", "decision_wait", "evicted", "shutdown"] = "root_ended"
    # field ("question", "documents.0", "tool_calls.1.arguments") -> [span id, span name, the
    # span's fact it came from, the span's conventions]: what `turns --explain` shows
    sources: dict[str, list[str]] = Field(default_factory=dict)
    # 0 as first completed; a kept turn that late spans changed is judged again as the next one
    revision: int = 0

    @property
    def agentic(self) -> bool:
        """An agent's turn: it called tools or handed off between agents."""
        return bool(self.tool_calls) or any(step.kind == "handoff" for step in self.steps)


@dataclass(slots=True)
class Message:
    role: str
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None  # on role "tool": which call this is the result of


# What one span (or log events about it) tells about the turn, in convention-free terms: ids,
# timing, status and the mapped fields (role, conventions, input/output messages, event
# inputs/outputs, input/output text, documents, tool, model, question, answer, route, feedback,
# scenario_id, expected_tool_calls, conversation_id, tokens). Compiled (native/src/facts/): the
# decoders build them and the assembler reads them without making their content Python objects;
# Python reads them as this module's classes, and builds them by keyword.
SpanFacts = _native.SpanFacts
# The compiled core builds instances of these (facts' parts, turns) and imports no module of ours.
_native.register_models(AssistantTurn, Message, ToolCall, RetrievedDocument, Feedback, Step,
                        TrajectorySignals)


class TurnConsumer(Protocol):
    """Completed turns, in order, as many at once as waited: what replaces sampling and judging
    in a `Sidecar` built with a custom downstream."""

    async def consume(self, turns: Sequence[AssistantTurn]) -> None: ...


# A composed turn as assembly hands it to Python: its ids and its JSON, no Python object built
# on the ingest path (what the judge queue stores of a kept turn, what /api/turns shows).
TurnRecord = _native.TurnRecord

# A turn kept for judging: a record, as assembly's sampler keeps it, or built (a caller's own).
KeptTurn: TypeAlias = TurnRecord | AssistantTurn

# A turn the sampler kept, why (a rule's name or "rate"), and the probability it was kept with.
Sampled = tuple[KeptTurn, str, float]


def turn_json(turn: KeptTurn) -> str:
    """The turn's JSON, as the judge queue keeps it: `AssistantTurn.model_validate_json` reads
    it back as the turn."""
    text: str = turn.json if isinstance(turn, TurnRecord) else turn.model_dump_json()
    return text


class SampledConsumer(Protocol):
    """The one interface between stages after assembly. The assembler takes `sampler`'s decision
    on each turn it completes (None: every turn passes), with the rates scaled by `backlog()`;
    `consume` gets the turns kept, in order, as many at once as waited (a batch is one store
    transaction, one hand-off to the store's thread), and how many were decided against."""

    @property
    def sampler(self) -> _native.TurnSampler | None: ...

    def backlog(self) -> int: ...

    async def consume(self, sampled: Sequence[Sampled], not_sampled: int) -> None: ...
