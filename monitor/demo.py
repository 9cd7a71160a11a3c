"""Demo traffic: a small fictional RAG assistant that sends its traces to the sidecar over OTLP.

It is a real OpenTelemetry SDK application using `exporters.record`, so what the sidecar shows
with `assistant-monitor run --demo` is what an instrumented assistant would produce: grounded
answers, refusals, tool calls (some failing), off-topic retrievals and thumbs-down feedback.
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


@dataclass(frozen=True)
class Scenario:
    route: str
    question: str
    doc_ids: tuple[str, ...]
    answer: str
    tool: tuple[str, dict[str, str], str | None] | None = None  # name, arguments, error
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
             "Your order 1042 has shipped.", tool=("lookup_order", {"order_id": "1042"}, None)),
    Scenario("billing", "Cancel order 77.", (), "Sorry, I could not cancel that order.",
             tool=("cancel_order", {"order_id": "77"}, "order service timed out"), feedback=-1.0),
]


def emit_turn(tracer_provider: TracerProvider, scenario: Scenario, rng: random.Random) -> None:
    tracer = tracer_provider.get_tracer("assistant-monitor.demo")
    with tracer.start_as_current_span("assistant.turn"):
        record.question(scenario.question, route=scenario.route)
        if scenario.doc_ids:
            with tracer.start_as_current_span("retrieve"):
                record.retrieval(scenario.question, [
                    {"id": d, "content": KNOWLEDGE_BASE[d], "score": round(rng.uniform(0.5, 0.95), 3)}
                    for d in scenario.doc_ids])
        if scenario.tool:
            name, arguments, error = scenario.tool
            with tracer.start_as_current_span(f"execute_tool {name}"):
                record.tool_call(name, arguments, error=error,
                                 result=None if error else {"status": "shipped"})
        record.answer(scenario.answer, model="demo-llm")
        if scenario.feedback is not None:
            record.feedback(scenario.feedback)


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
        while not self._stop.wait(1.0 / self.rate):
            emit_turn(self.provider, self.rng.choice(SCENARIOS), self.rng)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.provider.shutdown()
