"""A LangChain support assistant under OpenInference's LangChain instrumentation: one turn.

    python -m tests.apps.langchain_app --otlp-http http://127.0.0.1:4318 \
        --openai-base-url http://127.0.0.1:8000/v1

Real LangChain parts throughout: a retriever whose documents carry their ids in metadata (as
vector stores put them), a prompt that puts the documents into the user message, ChatOpenAI with
a bound tool, the tool run by LangChain. It prints the trace id on stdout.
"""

from __future__ import annotations

import argparse

QUESTION = "How long is the refund window?"
DOCS = [("kb-refunds", "Refunds are accepted within 30 days of purchase."),
        ("kb-shipping", "Express shipping takes 1 day.")]
TOOL_ARGS = {"topic": "refunds"}
TOOL_RESULT = "Refunds: 30 days."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--otlp-http", required=True)
    parser.add_argument("--openai-base-url", required=True)
    args = parser.parse_args()

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "rag-langchain"}))
    roots = []

    class Roots(SpanProcessor):  # the trace id to print: LangChain's root run's span
        def on_end(self, span) -> None:
            if span.parent is None:
                roots.append(span)

    provider.add_span_processor(Roots())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"{args.otlp_http}/v1/traces")))
    from openinference.instrumentation.langchain import LangChainInstrumentor
    LangChainInstrumentor().instrument(tracer_provider=provider)

    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    class PolicyRetriever(BaseRetriever):
        def _get_relevant_documents(self, query: str, *,
                                    run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
            return [Document(page_content=text, metadata={"id": doc_id, "source": "kb"})
                    for doc_id, text in DOCS]

    @tool
    def lookup_policy(topic: str) -> str:
        """Look up a policy by topic."""
        return TOOL_RESULT

    llm = ChatOpenAI(model="m1", base_url=args.openai_base_url, api_key="unused")
    with_tools = llm.bind_tools([lookup_policy])

    def support_turn(question: str) -> str:
        documents = PolicyRetriever().invoke(question)
        listing = "\n".join(f"[{d.metadata['id']}] {d.page_content}" for d in documents)
        messages = [SystemMessage("You are a support assistant."),
                    HumanMessage("Answer the question using only these documents.\n"
                                 f"Documents:\n{listing}\nQuestion: {question}")]
        first = with_tools.invoke(messages)
        messages.append(first)
        for call in first.tool_calls:
            messages.append(lookup_policy.invoke(call))  # a ToolMessage with the call's id
        return with_tools.invoke(messages).content

    RunnableLambda(support_turn).with_config(run_name="support_turn").invoke(QUESTION)
    provider.shutdown()
    print(format(roots[0].context.trace_id, "032x"))


if __name__ == "__main__":
    main()
