"""Assembly: spans of one trace become one `AssistantTurn`.

    assembler = TurnAssembler(settings.assembly, metrics, recent=200, sampler=sampler.compiled)
    done = assembler.add(batch.facts)     # turns flushed early (buffer full): a `Completed`
    done = assembler.expire(backlog)      # turns whose root ended (+ grace) or whose wait is over
    done.passed                           # [(turn, reason, probability)] the sampler kept,
                                          # as TurnRecord (ids and JSON); with no sampler, every
                                          # turn as an AssistantTurn
    done.recent                           # the batch's last turns (TurnRecord), for /api/turns

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
They run compiled (native/src/assemble/), over span facts that stay compiled. The sampler's
decision is taken there too, on the composed turn: Python sees the turns kept for judging and the
last few for /api/turns as their ids and JSON (`TurnRecord`: what the judge queue stores), and the
rest only as counts and trace ids (at the sampling defaults, most turns).

A turn completes `root_grace_s` after its root span arrives (log events of the official OpenAI
instrumentation travel separately and may trail the span), or `decision_wait_s` after its first
span when no root is seen. The buffer is bounded in traces, spans and spans per trace; the oldest
turn is flushed early when it is full.

Late spans. A kept turn's spans are held `revise_within_s` after it completed (within
`revise_max_mib`). A span of it arriving then re-opens it; it completes again a root grace later,
and if what a judge reads changed (its question, documents, answer, error, tool calls or steps)
it is passed on again as the next revision (`AssistantTurn.revision`), with the sampling decision
it was kept with: the store keeps the earlier verdicts beside the new ones. A revision is not
counted again in the traffic's metrics (turns, tool calls, steps, sessions). Other spans of a
completed turn (not kept, or after the window) are refused and counted as late.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from monitor import _native
from monitor.config import AssemblySettings
from monitor.model import SpanFacts

Completed = _native.Completed  # turns completed at once: see native/src/assemble/complete.rs
# A RAG turn takes two or three steps; an agent's, up to tens; a loop, more.
STEP_BUCKETS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64)


def facts_size(facts: SpanFacts) -> int:
    """What one span's facts hold in memory, about, as the assembler's byte bound counts it:
    each string's text plus a string object's overhead, a fixed cost per object."""
    return facts.size


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
        # The trajectories of all traffic (monitor.model.TrajectorySignals), not a sample.
        self.agent_steps = Histogram(
            "assistant_agent_steps", "Steps per turn: LLM calls, tool calls, retrievals and "
            "hand-offs (all traffic).", ["service", "route"], buckets=STEP_BUCKETS, registry=r)
        self.agent_loops = Counter(
            "assistant_agent_loops", "Tool calls repeating an earlier call of their turn: the "
            "same tool with the same arguments (all traffic).", ["service", "route"], registry=r)
        self.agent_recoveries = Counter(
            "assistant_agent_recoveries", "Failed tool calls after which a call of the same turn "
            "succeeded (all traffic).", ["service", "route"], registry=r)
        self.agent_tool_seconds = Counter(
            "assistant_agent_tool_seconds", "Time in tool spans (all traffic).",
            ["service", "route"], registry=r)
        self.llm_tokens = Counter(
            "assistant_llm_tokens", "Tokens the turns' LLM calls used, by direction (input, "
            "output; all traffic).", ["service", "route", "direction"], registry=r)
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
        self.turn_revisions = Counter(
            "assistant_turn_revisions", "Kept turns re-opened by late spans: passed on again to "
            "be re-judged (revised), or left as judged (unchanged: nothing a judge reads changed).",
            ["result"], registry=r)
        self.assembly_held_bytes = Gauge(
            "assistant_assembly_held_bytes", "Bytes of span facts of kept turns held for late "
            "spans (bounded by assembly.revise_max_mib).", registry=r)
        self.assembly_evictions = Counter(
            "assistant_assembly_evictions", "Turns flushed early because the assembly buffer hit "
            "a limit (traces, spans, bytes).", ["limit"], registry=r)

    def count_completed(self, done: Completed, services: Callable[[str | None], str],
                        routes: Callable[[str | None], str]) -> None:
        """Completed turns, by service and route as their label guards bound them: tallied by
        the assembler, so a batch costs one update per label set, not several per turn."""
        received: dict[tuple[str, str], list[int]] = {}
        for (service, route), counts in done.received.items():
            tally = received.setdefault((services(service), routes(route)), [0] * len(counts))
            for n, count in enumerate(counts):
                tally[n] += count
        for labels, counts in received.items():
            turns, ok, failed, loops, recoveries, tool_ns, input_tokens, output_tokens = counts
            self.turns_received.labels(*labels).inc(turns)
            for outcome, count in (("ok", ok), ("error", failed)):
                if count:
                    self.tool_calls.labels(*labels, outcome).inc(count)
            for counter, amount in ((self.agent_loops, loops), (self.agent_recoveries, recoveries),
                                    (self.agent_tool_seconds, tool_ns / 1e9)):
                if amount:
                    counter.labels(*labels).inc(amount)
            for direction, tokens in (("input", input_tokens), ("output", output_tokens)):
                if tokens:
                    self.llm_tokens.labels(*labels, direction).inc(tokens)
        for (service, route), steps in done.steps.items():
            histogram = self.agent_steps.labels(services(service), routes(route))
            for count in steps:
                histogram.observe(count)
        for part, count in (("no_question", done.no_question), ("no_answer", done.no_answer)):
            if count:
                self.turns_incomplete.labels(part).inc(count)

    def observe_assembler(self, assembler: TurnAssembler) -> None:
        self.assembly_traces.set(assembler.trace_count)
        self.assembly_spans.set(assembler.span_count)
        self.assembly_bytes.set(assembler.size)
        self.assembly_held_bytes.set(assembler.held_size)


class TurnAssembler:
    def __init__(self, settings: AssemblySettings, metrics: AssemblyTelemetry,
                 clock: Callable[[], float] = time.monotonic, recent: int = 0,
                 sampler: _native.TurnSampler | None = None) -> None:
        """`sampler` decides which completed turns are passed on (None: every turn is);
        `recent`: how many of each batch's last turns are recorded whatever it decides (what
        /api/turns shows)."""
        self.settings = settings
        self.metrics = metrics
        self.clock = clock
        self._buffer = _native.Assembler(
            max_traces=settings.max_traces, max_spans=settings.max_spans,
            max_spans_per_trace=settings.max_spans_per_trace,
            max_size=settings.max_size_mib << 20, root_grace_s=settings.root_grace_s,
            decision_wait_s=settings.decision_wait_s,
            remember_completed=settings.remember_completed, recent=recent, sampler=sampler,
            revise_within_s=settings.revise_within_s, max_held_size=settings.revise_max_mib << 20)

    @property
    def trace_count(self) -> int:
        return self._buffer.trace_count

    @property
    def span_count(self) -> int:
        return self._buffer.span_count

    @property
    def size(self) -> int:
        """Accounted bytes held (see facts_size)."""
        return self._buffer.size

    @property
    def held_size(self) -> int:
        """Accounted bytes of kept turns held for late spans."""
        return self._buffer.held_size

    def holds(self, trace_id: bytes) -> bool:
        return self._buffer.holds(trace_id)

    def add(self, facts: list[SpanFacts], backlog: int = 0) -> Completed:
        """Buffer spans; return the turns flushed early to make room. `backlog`: sampled turns
        waiting for a judge (the sampler's rates fall as it grows)."""
        added = self._buffer.add(facts, self.clock(), backlog)
        if added.late:
            self.metrics.spans_refused.labels("late").inc(added.late)
        if added.too_large:
            self.metrics.spans_refused.labels("trace_too_large").inc(added.too_large)
        for limit in added.evicted:
            self.metrics.assembly_evictions.labels(limit).inc()
        return self._completed(added.flushed)

    def expire(self, backlog: int = 0) -> Completed:
        """Complete the turns that are due."""
        return self._completed(self._buffer.expire(self.clock(), backlog))

    def discard(self, trace_ids: Iterable[bytes]) -> int:
        """Drop turns being assembled without completing them (their source will re-send), and
        forget those completed: a re-send is assembled again, not refused as late."""
        return self._buffer.discard(trace_ids)

    def flush_all(self, backlog: int = 0) -> Completed:
        return self._completed(self._buffer.flush_all(backlog))

    def _completed(self, done: Completed) -> Completed:
        for reason, count in done.completions.items():
            self.metrics.turn_completions.labels(reason).inc(count)
        for result, count in (("revised", done.revised), ("unchanged", done.unchanged)):
            if count:
                self.metrics.turn_revisions.labels(result).inc(count)
        return done
