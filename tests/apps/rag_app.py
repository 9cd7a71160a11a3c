"""A small RAG assistant, instrumented the way real applications are, that sends one turn.

    python -m tests.apps.rag_app --flavour openinference --otlp-http http://127.0.0.1:4318 \
        --openai-base-url http://127.0.0.1:8000/v1

The LLM calls go through the real `openai` client wrapped by a real instrumentor; the
retrieval and tool spans are written as the same ecosystem's frameworks write them
(LlamaIndex/LangChain under OpenInference, Traceloop decorators and vector-DB instrumentation
under OpenLLMetry, GenAI attributes alongside the official instrumentation). It prints the
trace id on stdout.
"""

from __future__ import annotations

import argparse
import json
import os

QUESTION = "How long is the refund window?"
DOCS = [("kb-refunds", "Refunds are accepted within 30 days of purchase.", 0.91),
        ("kb-shipping", "Express shipping takes 1 day.", 0.37)]
TOOL_ARGS = {"topic": "refunds"}
TOOL_RESULT = "Refunds: 30 days."
TOOLS = [{"type": "function", "function": {
    "name": "lookup_policy", "description": "Look up a policy by topic",
    "parameters": {"type": "object", "properties": {"topic": {"type": "string"}}}}}]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flavour", choices=["openinference", "openai-v2", "openllmetry"])
    parser.add_argument("--otlp-http")
    parser.add_argument("--otlp-grpc")
    parser.add_argument("--openai-base-url", required=True)
    parser.add_argument("--docs-in-prompt", action="store_true",
                        help="put the documents into the user message around the question")
    args = parser.parse_args()
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"

    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    if args.otlp_grpc:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        span_exporter = OTLPSpanExporter(endpoint=args.otlp_grpc, insecure=True)
        log_exporter = OTLPLogExporter(endpoint=args.otlp_grpc, insecure=True)
    else:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        span_exporter = OTLPSpanExporter(endpoint=f"{args.otlp_http}/v1/traces")
        log_exporter = OTLPLogExporter(endpoint=f"{args.otlp_http}/v1/logs")

    resource = Resource.create({"service.name": f"rag-{args.flavour}"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))

    if args.flavour == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif args.flavour == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider,
                                        logger_provider=logger_provider)
    else:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)

    import openai

    client = openai.OpenAI(base_url=args.openai_base_url, api_key="unused")
    tracer = tracer_provider.get_tracer("rag-app")
    spans = FLAVOURS[args.flavour]
    with tracer.start_as_current_span("rag.turn", attributes=spans["root"]()) as root:
        with tracer.start_as_current_span("retrieve", attributes=spans["retrieval"]()) as span:
            for doc_id, content, score in DOCS:  # vector-DB instrumentations use events
                if args.flavour == "openllmetry":
                    span.add_event("db.query.result", {
                        "db.query.result.id": doc_id, "db.query.result.document": content,
                        "db.query.result.distance": 1 - score})
        context = "\n".join(content for _, content, _ in DOCS)
        if args.docs_in_prompt:
            listing = "\n".join(f"[{doc_id}] {content}" for doc_id, content, _ in DOCS)
            messages = [{"role": "system", "content": "You are a support assistant."},
                        {"role": "user", "content": "Answer the question using only these "
                         f"documents.\nDocuments:\n{listing}\nQuestion: {QUESTION}"}]
        else:
            messages = [{"role": "system", "content": f"Answer from this context:\n{context}"},
                        {"role": "user", "content": QUESTION}]
        first = client.chat.completions.create(model="m1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        with tracer.start_as_current_span(f"execute_tool {call.function.name}",
                                          attributes=spans["tool"]()):
            pass
        messages += [first.choices[0].message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": call.id, "content": TOOL_RESULT}]
        final = client.chat.completions.create(model="m1", messages=messages, tools=TOOLS)
        answer = final.choices[0].message.content
        for key, value in spans["root_end"](answer).items():
            root.set_attribute(key, value)
        print(format(root.get_span_context().trace_id, "032x"))
    tracer_provider.shutdown()
    logger_provider.shutdown()


FLAVOURS = {
    "openinference": {
        "root": lambda: {"openinference.span.kind": "CHAIN", "input.value": QUESTION},
        "retrieval": lambda: {
            "openinference.span.kind": "RETRIEVER", "input.value": QUESTION,
            **{f"retrieval.documents.{i}.document.{k}": v for i, (doc_id, content, score)
               in enumerate(DOCS) for k, v in (("id", doc_id), ("content", content),
                                               ("score", score))}},
        "tool": lambda: {"openinference.span.kind": "TOOL", "tool.name": "lookup_policy",
                         "input.value": json.dumps(TOOL_ARGS), "output.value": TOOL_RESULT},
        "root_end": lambda answer: {"output.value": answer},
    },
    "openai-v2": {
        "root": lambda: {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "rag"},
        "retrieval": lambda: {
            "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": QUESTION,
            "gen_ai.retrieval.documents": json.dumps(
                [{"id": d, "content": c, "score": s} for d, c, s in DOCS])},
        "tool": lambda: {"gen_ai.operation.name": "execute_tool",
                         "gen_ai.tool.name": "lookup_policy",
                         "gen_ai.tool.call.arguments": json.dumps(TOOL_ARGS),
                         "gen_ai.tool.call.result": TOOL_RESULT},
        "root_end": lambda answer: {},
    },
    "openllmetry": {
        "root": lambda: {"traceloop.span.kind": "workflow", "traceloop.entity.name": "rag",
                         "traceloop.entity.input": json.dumps({"args": [QUESTION], "kwargs": {}})},
        "retrieval": lambda: {"db.system": "chroma", "db.operation": "query"},
        "tool": lambda: {"traceloop.span.kind": "tool", "traceloop.entity.name": "lookup_policy",
                         "traceloop.entity.input": json.dumps({"args": [], "kwargs": TOOL_ARGS}),
                         "traceloop.entity.output": json.dumps(TOOL_RESULT)},
        "root_end": lambda answer: {"traceloop.entity.output": json.dumps(answer)},
    },
}

if __name__ == "__main__":
    main()
