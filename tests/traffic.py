"""A labelled mix of RAG turns for end-to-end tests, sent with the real OpenTelemetry SDK.

Four classes, each unambiguous for any reasonable judge: grounded answers, invented answers
(relevant documents, unsupported answer), refusals, and turns whose documents are off-topic.
"""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry.sdk.trace import TracerProvider

from exporters import record


@dataclass(frozen=True)
class Case:
    kind: str  # grounded | invented | refusal | irrelevant_docs
    question: str
    documents: tuple[str, ...]
    answer: str


# Personal data in every part of a turn, and an invented approver (tests/test_redaction.py).
PERSONAL = Case(
    "grounded", "Hi, I'm Amara Nwosu. When will my refund reach card 4111 1111 1111 1111?",
    ("Refund log: Amara Nwosu, 14 Rue Oberkampf, 75011 Paris, refund of 40 EUR issued on "
     "2 June; refunds reach the card within 5 business days.",),
    "Amara Nwosu's refund was issued on 2 June and reaches the card within 5 business days. "
    "Jonas Lindqvist approved it.")


GROUNDED = [
    Case("grounded", "How long do refunds take?",
         ("Refunds are issued within 30 days of purchase to the original payment method.",),
         "Refunds are issued within 30 days of purchase."),
    Case("grounded", "How long does express shipping take?",
         ("Express shipping takes 1 day; standard shipping takes 3 to 5 business days.",),
         "Express shipping takes 1 day."),
    Case("grounded", "What does the warranty cover?",
         ("All devices carry a two-year limited warranty covering manufacturing defects.",),
         "The two-year limited warranty covers manufacturing defects."),
    Case("grounded", "How do I reset my password?",
         ("To reset a password, open Settings, choose Security and press Reset password.",),
         "Open Settings, choose Security and press Reset password."),
]
INVENTED = [
    Case("invented", "How much is the Pro plan?",
         ("The Pro plan costs 12 euros a month and includes priority support.",),
         "The Pro plan is free for veterans and comes with a complimentary laptop."),
    Case("invented", "How long do refunds take?",
         ("Refunds are issued within 30 days of purchase to the original payment method.",),
         "Refunds are paid in cash at any of our airport kiosks within an hour."),
    Case("invented", "What does the warranty cover?",
         ("All devices carry a two-year limited warranty covering manufacturing defects.",),
         "The warranty covers theft, water damage and accidental drops worldwide for life."),
    Case("invented", "How long does express shipping take?",
         ("Express shipping takes 1 day; standard shipping takes 3 to 5 business days.",),
         "Drones deliver express parcels to your balcony within fifteen minutes."),
]
REFUSALS = [
    Case("refusal", "Can I pay with cryptocurrency?",
         ("Refunds are issued within 30 days of purchase to the original payment method.",),
         "I could not find information about that in our documentation."),
    Case("refusal", "Do you ship to Antarctica?",
         ("Express shipping takes 1 day; standard shipping takes 3 to 5 business days.",),
         "I'm sorry, I don't have information about shipping to Antarctica."),
    Case("refusal", "Who founded the company?",
         ("The Pro plan costs 12 euros a month and includes priority support.",),
         "That is not mentioned in the documents I have."),
    Case("refusal", "Is the office open on Sundays?", ("All devices carry a two-year warranty.",),
         "I cannot answer that question."),
]
IRRELEVANT_DOCS = [
    Case("irrelevant_docs", "How do I reset my password?",
         ("Express shipping takes 1 day; standard shipping takes 3 to 5 business days.",),
         "Open Settings, choose Security and press Reset password."),
    Case("irrelevant_docs", "How much is the Pro plan?",
         ("All devices carry a two-year limited warranty covering manufacturing defects.",),
         "The Pro plan costs 12 euros a month."),
    Case("irrelevant_docs", "How long do refunds take?",
         ("To reset a password, open Settings, choose Security and press Reset password.",),
         "Refunds are issued within 30 days."),
    Case("irrelevant_docs", "What does the warranty cover?",
         ("The Pro plan costs 12 euros a month and includes priority support.",),
         "The warranty covers manufacturing defects."),
]
ALL = GROUNDED + INVENTED + REFUSALS + IRRELEVANT_DOCS


def send(provider: TracerProvider, case: Case, route: str = "support") -> str:
    tracer = provider.get_tracer("traffic")
    with tracer.start_as_current_span("turn") as root:
        record.question(case.question, route=route)
        with tracer.start_as_current_span("retrieve"):
            record.retrieval(case.question, [{"id": f"doc-{i}", "content": text, "score": 0.8}
                                             for i, text in enumerate(case.documents)])
        record.answer(case.answer, model="assistant-llm")
        return format(root.get_span_context().trace_id, "032x")


def exporting_to(grpc_endpoint: str, service: str) -> TracerProvider:
    """An SDK tracer provider for `service` that exports each span at once over OTLP/gRPC."""
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=grpc_endpoint, insecure=True)))
    return provider


def send_all(grpc_endpoint: str, service: str, cases: list[Case]) -> None:
    """The cases as `service`'s turns on route support, each exported as it ends."""
    provider = exporting_to(grpc_endpoint, service)
    for case in cases:
        send(provider, case, route="support")
    provider.shutdown()
