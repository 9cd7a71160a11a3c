"""Assembly: spans of one trace become one `AssistantTurn`.

    assembler = TurnAssembler(settings.assembly, metrics)
    done = assembler.add(batch.facts)     # turns flushed early (buffer full)
    done += assembler.expire()            # turns whose root ended (+ grace) or whose wait is over

Which source of a field wins, for every convention alike:
- question: an explicit `assistant.question`; else the entry (root chain/agent) span's input; else
  the last user message the agent received; else the first LLM call's last user message, unless
  that message quotes the retrieved documents (a prompt built around the question): then the
  retrieval query; else the retrieval query. Earlier messages of a chat are context.
- a tool call: the conversation is the record. Its name, id and arguments come from the call the
  model requested (parsed JSON), its result from the `tool` message that answered it; an executed
  tool span fills what the conversation lacks (its status, a result never sent back, a call no
  request shows).
- document ids: the convention's document id; else the `id` in the document's metadata, where
  frameworks (LangChain) keep it.
- a tool's failure: the span's error status, or a result that is a serialised tool message with
  `status: error` (a failure the tool handled; the mappers read it).

`AssistantTurn.sources` records, per field, the span and fact each came from (`turns --explain`).
The corpus of real instrumentors' traces (tests/fixtures/otlp) is the evidence for these rules.

A turn completes `root_grace_s` after its root span arrives (log events of the official OpenAI
instrumentation travel separately and may trail the span), or `decision_wait_s` after its first
span when no root is seen. The buffer is bounded in traces, spans and spans per trace; the oldest
turn is flushed early when it is full. Spans of a turn already completed are counted as late.
"""

from __future__ import annotations

import sys
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge

from monitor.config import AssemblySettings
from monitor.ingest.semconv import compiled
from monitor.model import AssistantTurn, Message, RetrievedDocument, SpanFacts, ToolCall


@dataclass(slots=True)
class _Pending:
    first_seen: float
    spans: dict[bytes, SpanFacts] = field(default_factory=dict)
    root_seen: bool = False
    size: int = 0  # accounted bytes of its span facts


class AssemblyTelemetry:
    """The assembler's own instruments, on an injected registry."""

    spans_refused: Counter  # declared by IngestTelemetry: late spans, traces too large

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.turns_received = Counter(
            "assistant_turns_received", "Turns assembled.", ["service", "route"], registry=r)
        self.turn_completions = Counter(
            "assistant_turn_completions", "Why turns were completed (root_ended, decision_wait, "
            "evicted: flushed early because the buffer was full, shutdown).", ["reason"],
            registry=r)
        self.tool_calls = Counter(
            "assistant_tool_calls", "Tool calls in assembled turns (all traffic, not a sample), "
            "by outcome (ok, error).", ["service", "route", "outcome"], registry=r)
        self.turns_incomplete = Counter(
            "assistant_turns_incomplete", "Assembled turns missing a part (no_question, no_answer).",
            ["part"], registry=r)
        self.assembly_traces = Gauge(
            "assistant_assembly_traces", "Turns being assembled.", registry=r)
        self.assembly_spans = Gauge(
            "assistant_assembly_spans", "Spans held by the assembler.", registry=r)
        self.assembly_bytes = Gauge(
            "assistant_assembly_bytes", "Bytes of span facts held by the assembler (accounted "
            "as they enter).", registry=r)
        self.assembly_evictions = Counter(
            "assistant_assembly_evictions", "Turns flushed early because the assembly buffer hit "
            "a limit (traces, spans, bytes).", ["limit"], registry=r)

    def count_turn(self, turn: AssistantTurn, service: str, route: str) -> None:
        """An assembled turn (service and route already bounded by their label guards)."""
        self.turns_received.labels(service, route).inc()
        for call in turn.tool_calls:
            self.tool_calls.labels(service, route, "error" if call.error else "ok").inc()
        if not turn.question:
            self.turns_incomplete.labels("no_question").inc()
        if not turn.answer:
            self.turns_incomplete.labels("no_answer").inc()

    def observe_assembler(self, assembler: TurnAssembler) -> None:
        self.assembly_traces.set(assembler.trace_count)
        self.assembly_spans.set(assembler.span_count)
        self.assembly_bytes.set(assembler.size)


class TurnAssembler:
    def __init__(self, settings: AssemblySettings, metrics: AssemblyTelemetry,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.metrics = metrics
        self.clock = clock
        self._pending: OrderedDict[bytes, _Pending] = OrderedDict()  # oldest first
        self._root_deadlines: deque[tuple[float, bytes]] = deque()  # grace is constant: sorted
        self._completed: OrderedDict[bytes, None] = OrderedDict()
        self.span_count = 0
        self.size = 0  # accounted bytes held (see facts_size)
        self.max_size = settings.max_size_mib << 20

    @property
    def trace_count(self) -> int:
        return len(self._pending)

    def holds(self, trace_id: bytes) -> bool:
        return trace_id in self._pending

    def add(self, facts: list[SpanFacts]) -> list[AssistantTurn]:
        """Buffer spans; return the turns flushed early to make room."""
        now = self.clock()
        limits = self.settings
        for f in facts:
            trace_id = f.trace_id
            pending = self._pending.get(trace_id)
            if pending is None:
                if trace_id in self._completed:
                    self.metrics.spans_refused.labels("late").inc()
                    continue
                pending = self._pending[trace_id] = _Pending(first_seen=now)
            known = pending.spans.get(f.span_id)
            if known is None and len(pending.spans) >= limits.max_spans_per_trace and not f.is_root:
                # The root is always kept: it ends the turn and often carries its question.
                self.metrics.spans_refused.labels("trace_too_large").inc()
                continue
            size = facts_size(f)  # a merged fragment is charged whole: an upper bound
            pending.size += size
            self.size += size
            if known is not None:
                known.merge(f)
            else:
                pending.spans[f.span_id] = f
                self.span_count += 1
                known = f
            if known.is_root and not known.is_log_fragment and not pending.root_seen:
                pending.root_seen = True
                self._root_deadlines.append((now + limits.root_grace_s, trace_id))
        flushed = []
        while self._pending and (limit := self._over_limit()):
            self.metrics.assembly_evictions.labels(limit).inc()
            flushed.append(self._complete(next(iter(self._pending)), "evicted"))
        return flushed

    def _over_limit(self) -> str | None:
        if len(self._pending) > self.settings.max_traces:
            return "traces"
        if self.span_count > self.settings.max_spans:
            return "spans"
        if self.size > self.max_size:
            return "bytes"
        return None

    def expire(self) -> list[AssistantTurn]:
        """Complete the turns that are due."""
        now = self.clock()
        done = []
        while self._root_deadlines and self._root_deadlines[0][0] <= now:
            _, trace_id = self._root_deadlines.popleft()
            if trace_id in self._pending:
                done.append(self._complete(trace_id, "root_ended"))
        wait = self.settings.decision_wait_s
        while self._pending:
            trace_id, pending = next(iter(self._pending.items()))
            if pending.first_seen + wait > now:
                break
            done.append(self._complete(trace_id, "decision_wait"))
        return done

    def discard(self, trace_ids: set[bytes]) -> int:
        """Drop turns being assembled without completing them (their source will re-send), and
        forget those completed: a re-send is assembled again, not refused as late."""
        dropped = 0
        for trace_id in trace_ids:
            self._completed.pop(trace_id, None)
            pending = self._pending.pop(trace_id, None)
            if pending is not None:
                self.span_count -= len(pending.spans)
                self.size -= pending.size
                dropped += 1
        return dropped

    def flush_all(self) -> list[AssistantTurn]:
        return [self._complete(trace_id, "shutdown") for trace_id in list(self._pending)]

    def _complete(self, trace_id: bytes, reason: str) -> AssistantTurn:
        pending = self._pending.pop(trace_id)
        self.span_count -= len(pending.spans)
        self.size -= pending.size
        if self.settings.remember_completed:
            self._completed[trace_id] = None
            if len(self._completed) > self.settings.remember_completed:
                self._completed.popitem(last=False)
        self.metrics.turn_completions.labels(reason).inc()
        return build_turn(trace_id, list(pending.spans.values()), reason)


# ----------------------------------------------------------------------------- accounting

_SPAN_OVERHEAD = 1024  # the SpanFacts object, its ids, set and lists, the dict slot holding it
_ITEM_OVERHEAD = 120  # a message, document or tool call object, a container entry


def _value_size(value: object) -> int:
    """Bytes of a decoded attribute value (tool arguments, results): iterative, so a deeply
    nested value cannot overflow the stack."""
    if value.__class__ is str:  # most values: the same sizes, without the walk
        return sys.getsizeof(value)
    if value is None:
        return 32
    size, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += sys.getsizeof(item)
        elif isinstance(item, dict):
            size += _ITEM_OVERHEAD * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            size += _ITEM_OVERHEAD * len(item)
            stack.extend(item)
        else:
            size += 32
    return size


def _call_size(call: ToolCall) -> int:
    return (_ITEM_OVERHEAD + sys.getsizeof(call.name) + _value_size(call.arguments)
            + _value_size(call.result) + _value_size(call.error) + _value_size(call.call_id))


def facts_size(f: SpanFacts) -> int:
    """What one span's facts hold in memory, about: its text (at Python's width for each
    string) and a fixed cost per object. Cheap: string sizes are known without copying."""
    size = _SPAN_OVERHEAD
    for text in (f.name, f.service, f.tenant, f.input_text, f.output_text, f.model, f.question,
                 f.answer, f.route, f.scenario_id, f.conversation_id, f.error):
        if text:
            size += sys.getsizeof(text)
    for messages in (f.input_messages, f.output_messages, f.event_inputs, f.event_outputs):
        for m in messages or ():
            size += _ITEM_OVERHEAD + sys.getsizeof(m.role) + _value_size(m.content)
            size += _value_size(m.tool_call_id) + sum(_call_size(c) for c in m.tool_calls)
    for doc in f.documents:
        size += _ITEM_OVERHEAD + _value_size(doc.content) + _value_size(doc.id)
    if f.tool is not None:
        size += _call_size(f.tool)
    for call in f.expected_tool_calls or ():
        size += _call_size(call)
    if f.feedback is not None:
        size += _ITEM_OVERHEAD + _value_size(f.feedback.comment)
    return size


# ----------------------------------------------------------------------------- composition

def _by_start(spans: list[SpanFacts]) -> list[SpanFacts]:
    return sorted(spans, key=lambda s: (s.start_ns, s.end_ns))


def _inputs(span: SpanFacts) -> list[Message]:
    return span.input_messages or span.event_inputs


def _outputs(span: SpanFacts) -> list[Message]:
    return span.output_messages or span.event_outputs


def _last_user_text(messages: list[Message]) -> str | None:
    for message in reversed(messages):
        if message.role == "user" and message.content:
            return message.content
    return None


def _quotes_documents(prompt: str, spans: list[SpanFacts]) -> bool:
    """Does a user message carry the retrieved documents? Then it is a prompt built around the
    question, not the question."""
    return any(d.content and d.content.strip()[:200] in prompt for s in spans for d in s.documents)


def _final_text(messages: list[Message]) -> str | None:
    for message in reversed(messages):
        if message.role in ("assistant", "") and message.content:
            return message.content
    return None


def _source(span: SpanFacts, origin: str) -> list[str]:
    """Where a field came from, for `turns --explain`: the span, and which of its facts."""
    return [span.span_id.hex(), span.name, origin, ",".join(sorted(span.conventions))]


def _messages_origin(span: SpanFacts, outputs: bool) -> str:
    if outputs:
        return "output_messages" if span.output_messages else "output_events"
    return "input_messages" if span.input_messages else "input_events"


def _requested_calls(llm_calls: list[SpanFacts]) -> list[tuple[SpanFacts, ToolCall]]:
    """Tool calls the model asked for in this turn: in each call's output, and in the history
    it was given after the last user message (earlier turns' calls are not this turn's)."""
    requested: list[tuple[SpanFacts, ToolCall]] = []
    seen: set[str] = set()
    for span in llm_calls:
        inputs = _inputs(span)
        last_user = max((i for i, m in enumerate(inputs) if m.role == "user"), default=-1)
        history = [m for m in inputs[last_user + 1:] if m.role == "assistant"]
        for message in history + _outputs(span):
            for call in message.tool_calls:
                if call.call_id and call.call_id in seen:
                    continue
                if call.call_id:
                    seen.add(call.call_id)
                requested.append((span, call))
    return requested


def _tool_calls(spans: list[SpanFacts], llm_calls: list[SpanFacts],
                sources: dict[str, list[str]]) -> list[ToolCall]:
    """Executed tool spans first; then calls the model requested that no span recorded, with
    their results taken from later `tool` messages."""
    calls = []
    for span in spans:
        if span.tool is not None:
            call = span.tool.model_copy()
            call.error = call.error or span.error
            sources[f"tool_calls.{len(calls)}"] = _source(span, "tool")
            calls.append(call)
    results = {m.tool_call_id: (m.content, s) for s in llm_calls for m in _inputs(s)
               if m.role == "tool" and m.tool_call_id}
    by_id = {c.call_id: c for c in calls if c.call_id}
    matched: set[int] = set()
    for request_span, requested in _requested_calls(llm_calls):
        match = by_id.get(requested.call_id) if requested.call_id else None
        if match is None:  # executed spans without ids: match by name, in order
            match = next((c for c in calls if c.call_id is None and c.name == requested.name
                          and id(c) not in matched), None)
        key = f"tool_calls.{calls.index(match) if match is not None else len(calls)}"
        sources[f"{key}.arguments"] = _source(request_span, "requested_call")
        answered = results.get((match.call_id if match is not None else None)
                               or requested.call_id)
        if answered is not None and answered[0] is not None:
            sources[f"{key}.result"] = _source(answered[1], "tool_message")
        if match is not None:  # the conversation is the record; the span fills its gaps
            matched.add(id(match))
            match.call_id = match.call_id or requested.call_id
            if requested.arguments is not None:
                match.arguments = requested.arguments
            if answered is not None and answered[0] is not None:
                match.result = compiled.maybe_json(answered[0])  # as the tool returned it
            continue
        call = requested.model_copy()
        call.result = answered[0] if answered is not None else None
        sources[key] = _source(request_span, "requested_call")
        calls.append(call)
        if call.call_id:
            by_id[call.call_id] = call
    return calls


Candidate = tuple[str | None, SpanFacts, str]  # a value, its span, which of its facts


def _pick(field: str, candidates: Iterator[Candidate], sources: dict[str, list[str]]) -> str | None:
    """The first candidate with a value; where it came from goes into `sources`."""
    for value, span, origin in candidates:
        if value:
            sources[field] = _source(span, origin)
            return value
    return None


def _question_candidates(spans: list[SpanFacts], entry: list[SpanFacts],
                         llm_calls: list[SpanFacts]) -> Iterator[Candidate]:
    """In the order of the rule in this module's docstring."""
    yield from ((s.question, s, "question") for s in spans)
    yield from ((s.input_text, s, "input_text") for s in entry)
    yield from ((_last_user_text(_inputs(s)), s, _messages_origin(s, False))
                for s in reversed(entry))  # the last user message the agent received
    retrieval = next((s for s in spans if s.role == "retrieval" and s.input_text), None)
    if llm_calls:
        prompt = _last_user_text(_inputs(llm_calls[0]))
        if prompt and retrieval and _quotes_documents(prompt, spans):
            yield retrieval.input_text, retrieval, "input_text"
        yield prompt, llm_calls[0], _messages_origin(llm_calls[0], False)
    if retrieval is not None:
        yield retrieval.input_text, retrieval, "input_text"


def _answer_candidates(spans: list[SpanFacts], entry: list[SpanFacts],
                       llm_calls: list[SpanFacts]) -> Iterator[Candidate]:
    yield from ((s.answer, s, "answer") for s in reversed(spans))
    yield from ((s.output_text, s, "output_text") for s in entry)
    yield from ((_final_text(_outputs(s)), s, _messages_origin(s, True))
                for s in [*entry, *sorted(llm_calls, key=lambda s: s.end_ns, reverse=True)])


def build_turn(trace_id: bytes, spans: list[SpanFacts], completion: str) -> AssistantTurn:
    # Log fragments whose span never arrived still carry content: they stay, untimed, first.
    spans = _by_start(spans)
    root = next((s for s in spans if s.is_root), None)
    llm_calls = [s for s in spans if s.role == "llm" and (_inputs(s) or _outputs(s))]
    entry = [s for s in spans if s.role in ("chain", "agent")]
    if root is not None and root in entry:
        entry.remove(root)
        entry.insert(0, root)

    sources: dict[str, list[str]] = {}  # field -> _source(...): what `turns --explain` shows
    question = _pick("question", _question_candidates(spans, entry, llm_calls), sources)
    answer = _pick("answer", _answer_candidates(spans, entry, llm_calls), sources)

    documents: list[RetrievedDocument] = []
    seen: set[tuple[str | None, str | None]] = set()
    for span in spans:
        for doc in span.documents:
            key = (doc.id, doc.content)
            if key not in seen:
                seen.add(key)
                sources[f"documents.{len(documents)}"] = _source(span, "documents")
                documents.append(doc)

    starts = [s.start_ns for s in spans if s.start_ns]
    ends = [s.end_ns for s in spans if s.end_ns]
    model_span = next((s for s in sorted(llm_calls, key=lambda s: s.end_ns, reverse=True)
                       if s.model), None)
    if model_span is not None:
        sources["model"] = _source(model_span, "model")
    first = root or (spans[0] if spans else None)
    tool_calls = _tool_calls(spans, llm_calls, sources)
    return AssistantTurn(
        trace_id=trace_id.hex(),
        root_span_id=root.span_id.hex() if root else None,
        service=(first.service if first and first.service else
                 next((s.service for s in spans if s.service), None) or "unknown"),
        tenant=next((s.tenant for s in spans if s.tenant), None),
        route=next((s.route for s in spans if s.route), None),
        question=question,
        documents=documents,
        answer=answer,
        tool_calls=tool_calls,
        model=(model_span.model if model_span else next((s.model for s in spans if s.model), None)),
        feedback=next((s.feedback for s in reversed(spans) if s.feedback), None),
        error=next((s.error for s in spans if s.error), None),
        scenario_id=next((s.scenario_id for s in spans if s.scenario_id), None),
        expected_tool_calls=next((s.expected_tool_calls for s in spans
                                  if s.expected_tool_calls is not None), None),
        conversation_id=next((s.conversation_id for s in spans if s.conversation_id), None),
        start_time_unix_nano=min(starts, default=0),
        duration_ms=(max(ends) - min(starts)) / 1e6 if starts and ends else 0.0,
        input_tokens=sum(s.input_tokens for s in spans),
        output_tokens=sum(s.output_tokens for s in spans),
        span_count=len(spans),
        conventions=sorted(set().union(*(s.conventions for s in spans)) if spans else []),
        completion=completion,  # type: ignore[arg-type]
        sources=sources,
    )
