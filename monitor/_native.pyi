"""The compiled core (native/, Rust): the OTLP trace decoder and gRPC server, the convention
rules, span facts, assembly and sampling. Types for mypy and editors; tests/test_native_decoder.py
holds this stub to the module's own names."""

from collections.abc import Iterable
from typing import Any, Final, Literal

from monitor.model import (
    AssistantTurn,
    Feedback,
    Message,
    RetrievedDocument,
    Step,
    ToolCall,
    TrajectorySignals,
)

EVENT_PREFIXES: list[str]  # span events the rules read

class Convention:
    """What one convention's rules read (native/src/conventions/, declared beside its mapper)."""

    name: str
    attributes: dict[str, list[str]]  # fact -> the span attributes read ("*": any index or path)
    events: dict[str, list[str]]  # fact -> the events read (span events, or log records)

CONVENTIONS: dict[str, Convention]  # by name, in the order the rules run

class SpanFacts:
    """What one span (or log events about it) tells about the turn: monitor/model.py."""

    def __init__(self, *, span_id: bytes, trace_id: bytes = b"", parent_span_id: bytes = b"",
                 service: str | None = None, tenant: str | None = None, name: str = "",
                 start_ns: int = 0, end_ns: int = 0, error: str | None = None,
                 is_root: bool = False, is_log_fragment: bool = False, **mapped: Any) -> None: ...
    def merge(self, other: SpanFacts) -> None: ...
    # Read-only: set by the constructor and the rules.
    trace_id: Final[bytes]
    span_id: Final[bytes]
    parent_span_id: Final[bytes]
    service: Final[str | None]
    tenant: Final[str | None]
    name: Final[str]
    start_ns: Final[int]
    end_ns: Final[int]
    error: Final[str | None]
    is_root: Final[bool]
    is_log_fragment: Final[bool]
    conventions: Final[set[str]]
    role: Final[Literal["llm", "retrieval", "tool", "agent", "chain", "other"]]
    input_messages: Final[list[Message] | None]
    output_messages: Final[list[Message] | None]
    event_inputs: Final[list[Message]]
    event_outputs: Final[list[Message]]
    input_text: Final[str | None]
    output_text: Final[str | None]
    documents: Final[list[RetrievedDocument]]
    tool: Final[ToolCall | None]
    model: Final[str | None]
    question: Final[str | None]
    answer: Final[str | None]
    route: Final[str | None]
    feedback: Final[Feedback | None]
    scenario_id: Final[str | None]
    expected_tool_calls: Final[list[ToolCall] | None]
    conversation_id: Final[str | None]
    session_end: Final[bool]
    input_tokens: Final[int]
    output_tokens: Final[int]
    size: Final[int]

def register_models(turn: type[AssistantTurn], message: type[Message],
                    tool_call: type[ToolCall], document: type[RetrievedDocument],
                    feedback: type[Feedback], step: type[Step],
                    signals: type[TrajectorySignals]) -> None:
    """monitor.model's classes, which the compiled core builds; once, at its import."""

def count_conventions(facts: list[SpanFacts]) -> list[tuple[str, int]]: ...
def map_span(facts: SpanFacts, attrs: Any, events: Iterable[tuple[str, Any]]
             ) -> list[tuple[str, int]]: ...
def map_log_events(facts: SpanFacts, events: Iterable[tuple[str, Any]]
                   ) -> list[tuple[str, int]]: ...
def crc32(data: bytes, value: int = 0) -> int: ...

class Refusal:
    """A span, or a resource's spans, that the decoder refused, and why."""

    reason: Literal["invalid_trace_id", "invalid_span_id", "tenant_mismatch", "mapping_error"]
    spans: int
    span_name: str | None
    tenant_missing: bool

class DecodedTraces:
    received: int
    facts: list[SpanFacts]
    refused: list[Refusal]
    issues: list[tuple[str, int]]

class TraceDecoder:
    def __init__(self, *, max_attribute_length: int, max_value_depth: int,
                 tenant_id: str | None, service_key: str, tenant_key: str) -> None: ...
    def traces(self, body: bytes) -> DecodedTraces:
        """Raises ValueError on a malformed body."""

class GrpcCall:
    signal: Literal["traces", "logs"]
    body: bytes
    authorization: str | None
    def respond(self, message: bytes) -> None: ...
    def fail(self, code: int, message: str, details: bytes | None = None) -> None: ...

class GrpcServer:
    port: int
    def __init__(self, endpoint: str, max_message_bytes: int,
                 tls: tuple[bytes, bytes] | None = None) -> None: ...
    wake_fd: Final[int]
    def take(self) -> list[GrpcCall]: ...
    def stop(self, grace_s: float) -> None: ...

class TurnRecord:
    """A composed turn as assembly hands it to Python: its ids and its JSON."""

    trace_id: str
    service: str
    route: str | None
    json: str
    revision: int  # 0 as first completed; each later one re-opened by late spans
    size: Final[int]

class Completed:
    passed: list[tuple[TurnRecord | AssistantTurn, str, float]]
    recent: list[TurnRecord]
    trace_ids: list[bytes]
    not_sampled: int
    # (service, route) -> [turns, tool calls ok, failed, loops, recoveries, ns in tools, input
    # tokens, output tokens]
    received: dict[tuple[str, str | None], list[int]]
    steps: dict[tuple[str, str | None], list[int]]  # (service, route) -> each turn's steps
    # each turn of a conversation, in order: monitor.sessions.SessionTurn
    sessions: list[tuple[str, str, str | None, str | None, bool, bool, float | None, bool,
                         list[str]]]
    no_question: int
    no_answer: int
    completions: dict[str, int]
    revised: int  # kept turns that late spans changed: passed on again, not counted again
    unchanged: int  # kept turns re-opened by late spans that changed nothing a judge reads
    size: int

class Added:
    """What `Assembler.add` did with a batch of spans."""

    flushed: Completed  # the turns flushed early to make room
    late: int  # spans refused: their turn was completed already
    too_large: int  # spans refused: their trace holds max_spans_per_trace already
    evicted: list[Literal["traces", "spans", "bytes"]]  # the limit each early flush was for

class TurnSampler:
    def __init__(self, *, always_keep: list[str], default_rate: float,
                 service_rates: dict[str, float], route_rates: dict[str, float],
                 low_watermark: int, high_watermark: int, min_factor: float,
                 whole_conversations: bool = False) -> None: ...
    def backlog_factor(self, backlog: int) -> float: ...
    def decide(self, turn: AssistantTurn, backlog: int = 0) -> tuple[bool, str, float]: ...

class Assembler:
    span_count: int
    size: int
    held_size: int  # bytes of kept turns' span facts held for late spans
    def __init__(self, *, max_traces: int, max_spans: int, max_spans_per_trace: int,
                 max_size: int, root_grace_s: float, decision_wait_s: float,
                 remember_completed: int, recent: int = 0,
                 sampler: TurnSampler | None = None, revise_within_s: float = 0.0,
                 max_held_size: int = 0) -> None: ...
    trace_count: Final[int]
    def holds(self, trace_id: bytes) -> bool: ...
    def add(self, facts: list[SpanFacts], now: float, backlog: int = 0) -> Added: ...
    def expire(self, now: float, backlog: int = 0) -> Completed: ...
    def discard(self, trace_ids: Iterable[bytes]) -> int: ...
    def flush_all(self, backlog: int = 0) -> Completed: ...
