"""Demo traffic: a small fictional RAG assistant that sends its traces to the sidecar over OTLP.

It is a real OpenTelemetry SDK application using `exporters.record`, so what the sidecar shows
with `assistant-monitor run --demo` is what an instrumented assistant would produce: grounded
answers, refusals, tool calls (some failing), off-topic retrievals and thumbs-down feedback; an
agent that retries a failing lookup alike (a loop) and then recovers, one that gives up; and
chats of several turns that the app ends, one thanked, one asking for a person.
"""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from exporters import record

log = logging.getLogger(__name__)

KNOWLEDGE_BASE = {
    "kb-refunds": "Refunds are issued within 30 days of purchase to the original payment method.",
    "kb-shipping": "Standard shipping takes 3 to 5 business days; express shipping takes 1 day.",
    "kb-warranty": "All devices carry a two-year limited warranty covering manufacturing defects.",
    "kb-password": "To reset a password, open Settings, choose Security and press Reset password.",
    "kb-plans": "The Pro plan costs 12 euros a month and includes priority support.",
}


ToolCall = tuple[str, dict[str, str], str | None]  # name, arguments, error
TIMED_OUT: ToolCall = ("lookup_order", {"order_id": "2210"}, "order service timed out")


@dataclass(frozen=True)
class Scenario:
    route: str
    question: str
    doc_ids: tuple[str, ...]
    answer: str | None  # None: the agent gave up without answering
    tools: tuple[ToolCall, ...] = ()
    feedback: float | None = None


SCENARIOS = [
    Scenario("support", "How long do I have to ask for a refund?", ("kb-refunds", "kb-shipping"),
             "You can ask for a refund within 30 days of purchase."),
    Scenario("support", "How long does express shipping take?", ("kb-shipping",),
             "Express shipping takes 1 day."),
    Scenario("support", "What does the warranty cover?", ("kb-warranty",),
             "The two-year limited warranty covers manufacturing defects."),
    Scenario("account", "How do I reset my password?", ("kb-password",),
             "Open Settings, choose Security and press Reset password."),
    Scenario("billing", "How much is the Pro plan?", ("kb-plans",),
             "The Pro plan costs 12 euros a month.", feedback=1.0),
    # Invented answer: not supported by the retrieved document.
    Scenario("billing", "Is there a student discount?", ("kb-plans",),
             "Yes, students get 50% off every plan.", feedback=-1.0),
    # Refusal (no answer) after irrelevant documents.
    Scenario("support", "Can I pay with cryptocurrency?", ("kb-shipping",),
             "I could not find information about that in our documentation."),
    Scenario("billing", "What is the status of order 1042?", (),
             "Your order 1042 has shipped.", tools=(("lookup_order", {"order_id": "1042"}, None),)),
    Scenario("billing", "Cancel order 77.", (), "Sorry, I could not cancel that order.",
             tools=(("cancel_order", {"order_id": "77"}, "order service timed out"),),
             feedback=-1.0),
    # An agent that repeats a failing call alike (a loop), then succeeds another way.
    Scenario("support", "Where is order 2210?", (), "Order 2210 ships tomorrow.",
             tools=(TIMED_OUT, TIMED_OUT, ("search_orders", {"customer": "c-9"}, None))),
    # An agent that gives up: its goal failed.
    Scenario("support", "Change the address of order 3310.", (), None,
             tools=(("update_address", {"order_id": "3310"}, "address service down"),)),
]

# Chats of several turns, which the app ends with their last turn: one the user thanks for
# (resolved), one where a thumbs-down is followed by asking for a person (escalated).
CHATS: list[tuple[Scenario, ...]] = [
    (Scenario("support", "How long do refunds take?", ("kb-refunds",),
              "Refunds are issued within 30 days of purchase."),
     Scenario("support", "thanks, that worked!", (), "You're welcome!")),
    (Scenario("billing", "Is there a student discount?", ("kb-plans",),
              "No, there is no student discount.", feedback=-1.0),
     Scenario("billing", "can I talk to a real person please", (), "I'm transferring you now.")),
]


def emit_turn(tracer_provider: TracerProvider, scenario: Scenario, rng: random.Random,
              conversation: str | None = None, end: bool = False) -> None:
    tracer = tracer_provider.get_tracer("assistant-monitor.demo")
    with tracer.start_as_current_span("assistant.turn"):
        record.question(scenario.question, route=scenario.route)
        if conversation is not None:
            record.session(conversation, end=end)
        if scenario.doc_ids:
            with tracer.start_as_current_span("retrieve"):
                record.retrieval(scenario.question, [
                    {"id": d, "content": KNOWLEDGE_BASE[d], "score": round(rng.uniform(0.5, 0.95), 3)}
                    for d in scenario.doc_ids])
        for name, arguments, error in scenario.tools:
            with tracer.start_as_current_span(f"execute_tool {name}"):
                record.tool_call(name, arguments, error=error,
                                 result=None if error else {"status": "shipped"})
        if scenario.answer is not None:
            record.answer(scenario.answer, model="demo-llm")
        if scenario.feedback is not None:
            record.feedback(scenario.feedback)


def emit_chat(tracer_provider: TracerProvider, chat: tuple[Scenario, ...], conversation: str,
              rng: random.Random) -> None:
    """A chat's turns in order, the last one ending it."""
    for i, scenario in enumerate(chat):
        emit_turn(tracer_provider, scenario, rng, conversation, end=i == len(chat) - 1)


class DemoTraffic:
    """Sends `rate` turns per second to an OTLP/HTTP endpoint from a background thread."""

    def __init__(self, endpoint: str, rate: float = 2.0, seed: int = 7,
                 headers: dict[str, str] | None = None) -> None:
        self.provider = TracerProvider(resource=Resource.create({"service.name": "demo-assistant"}))
        self.provider.add_span_processor(BatchSpanProcessor(
            OTLPSpanExporter(endpoint=f"http://{endpoint}/v1/traces", headers=headers),
            schedule_delay_millis=500))
        self.rate = rate
        self.rng = random.Random(seed)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-traffic", daemon=True)

    def start(self) -> None:
        self._thread.start()
        log.info("demo traffic: %.1f turns/s", self.rate)

    def _run(self) -> None:
        choices: list[Scenario | tuple[Scenario, ...]] = [*SCENARIOS, *CHATS]
        chats = 0
        while not self._stop.wait(1.0 / self.rate):
            chosen = self.rng.choice(choices)
            if isinstance(chosen, Scenario):
                emit_turn(self.provider, chosen, self.rng)
            else:  # a chat's turns at once: a tick's worth more
                chats += 1
                emit_chat(self.provider, chosen, f"demo-chat-{chats}", self.rng)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.provider.shutdown()
