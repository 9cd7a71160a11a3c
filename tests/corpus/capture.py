"""Capture the trace corpus: real instrumentors around a small support app, run against the
scripted OpenAI-compatible server, each export written as OTLP protobuf-JSON beside the turn it
must give.

    python -m tests.corpus.capture                      # every instrumentor, into the fixtures
    python -m tests.corpus.capture --only openai-v2 --out /tmp/corpus

Each instrumentor runs in its own process (instrumentors patch the `openai` client for good).
Files: <out>/<instrumentor>/<scenario>.json (the ExportTraceServiceRequest, and for the official
instrumentation's log events the ExportLogsServiceRequest, ids in hex as OTLP/JSON has them) and
<scenario>.expected.json (what the app did: question, documents, answer, tool calls, steps); a
conversation's turns, a trace each, are one file with <scenario>.session.json beside it. Trace and
span ids come from a counter, so they are the same on every capture; timestamps are not.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "otlp"

# instrumentor -> the distributions whose versions shape its output
INSTRUMENTORS = {
    "openai-v2": ["opentelemetry-instrumentation-openai-v2", "openai"],
    "openinference-openai": ["openinference-instrumentation-openai", "openai"],
    "openllmetry-openai": ["opentelemetry-instrumentation-openai", "openai"],
    "openinference-langchain": ["openinference-instrumentation-langchain", "langchain-core",
                                "langchain-openai", "openai"],
    "openllmetry-langchain": ["opentelemetry-instrumentation-langchain", "langchain-core",
                              "langchain-openai", "openai"],
    "openinference-llama-index": ["openinference-instrumentation-llama-index", "llama-index-core",
                                  "llama-index-llms-openai", "openai"],
    "openinference-openai-agents": ["openinference-instrumentation-openai-agents",
                                    "openai-agents", "openai"],
}
# write retriever spans
FRAMEWORKS = {"openinference-langchain", "openllmetry-langchain", "openinference-llama-index"}
# an agent SDK has no retriever: its scenarios are the agent's (streaming without documents)
AGENTS = {"openinference-openai-agents"}
AGENT_SCENARIOS = ("tool_agent", "failed_tool", "refusal", "conversation", "streaming", "handoff")

REFUND_DOCS = [("kb-refunds", "Refunds are accepted within 30 days of purchase."),
               ("kb-shipping", "Express shipping takes 1 day.")]


@dataclass
class Scenario:
    question: str
    answer: str
    documents: list[tuple[str, str]] = field(default_factory=list)
    docs_in_prompt: bool = False
    history: list[tuple[str, str]] = field(default_factory=list)  # earlier (question, answer)
    tool_calls: list[tuple[str, dict[str, Any], str, bool]] = field(default_factory=list)
    stream: bool = False
    framework_only: bool = False  # a retriever span: only a framework writes one
    handoff: str | None = None  # an agent SDK's: the agent the first one hands the request to


SCENARIOS = {
    "rag_docs_in_prompt": Scenario("How long is the refund window?",
                                   "The refund window is 30 days.", REFUND_DOCS,
                                   docs_in_prompt=True),
    "rag_retriever": Scenario("How long is the refund window?", "The refund window is 30 days.",
                              REFUND_DOCS, framework_only=True),
    "tool_agent": Scenario(
        "Can I still return order A-1001?", "Yes: it was bought 10 days ago, within 30 days.",
        tool_calls=[("lookup_policy", {"topic": "refunds"}, "Refunds: 30 days.", False),
                    ("lookup_order", {"order_id": "A-1001"}, "Bought 10 days ago.", False)]),
    "refusal": Scenario("What is the CEO's home address?", "I'm sorry, I can't help with that."),
    "streaming": Scenario("How fast is express shipping?", "Express shipping takes 1 day.",
                          REFUND_DOCS[1:], stream=True),
    "conversation": Scenario("And how fast is express shipping?", "It takes 1 day.",
                             history=[("How long is the refund window?", "30 days.")]),
    "failed_tool": Scenario(
        "Where is order A-404?", "I could not find order A-404.",
        tool_calls=[("lookup_order", {"order_id": "A-404"}, "order A-404 not found", True)]),
    "handoff": Scenario("I was charged twice for order A-1001.",
                        "Billing here: the second charge on order A-1001 is refunded.",
                        handoff="billing"),
}


# A conversation: its turns, one trace each, under one conversation id, as the apps of the direct
# instrumentors mark it (the official instrumentation's app: `gen_ai.conversation.id` on its root;
# OpenInference's: `using_session`, which puts `session.id` on the instrumentor's spans too).
CONVERSATION_ID = "conv-7f3a"
SESSIONS = {
    "session_resolved": [SCENARIOS["rag_docs_in_prompt"],
                         Scenario("thanks, that worked!", "You're welcome!")],
}
SESSION_INSTRUMENTORS = {"openai-v2", "openinference-openai"}


def sessions_for(instrumentor: str) -> dict[str, list[Scenario]]:
    return SESSIONS if instrumentor in SESSION_INSTRUMENTORS else {}


def expected_session(turns: list[Scenario]) -> dict[str, Any]:
    """What the conversation was: its id, its turns' questions, and how it ended (the user said
    it worked)."""
    return {"conversation_id": CONVERSATION_ID, "questions": [t.question for t in turns],
            "outcome": "resolved"}


def scenarios_for(instrumentor: str) -> dict[str, Scenario]:
    if instrumentor in AGENTS:
        return {name: replace(SCENARIOS[name], documents=[]) for name in AGENT_SCENARIOS}
    return {name: s for name, s in SCENARIOS.items()  # a hand-off is an agent SDK's
            if (instrumentor in FRAMEWORKS or not s.framework_only) and not s.handoff}


def expected_turn(scenario: Scenario) -> dict[str, Any]:
    return {
        "question": scenario.question,
        "documents": [{"id": i, "content": c} for i, c in scenario.documents],
        "answer": scenario.answer,
        "tool_calls": [{"name": n, "call_id": f"call_{k}", "arguments": a,
                        "result": r, "failed": failed}  # a failure's result: its message
                       for k, (n, a, r, failed) in enumerate(scenario.tool_calls)],
        "trajectory": expected_trajectory(scenario),
    }


def expected_trajectory(scenario: Scenario) -> list[str]:
    """The app's steps, agents aside: "retrieval", "llm", "tool:<name>" ("!" after a failed
    call's)."""
    steps = ["retrieval"] if scenario.documents else []
    if scenario.tool_calls:  # the model asks for the tools, then answers with their results
        steps += ["llm", *(f"tool:{n}" + "!" * failed for n, _, _, failed in scenario.tool_calls)]
    if scenario.handoff:  # the first agent's model hands off; the other agent's answers
        steps += ["llm", f"handoff:{scenario.handoff}"]
    return [*steps, "llm"]


def script_for(scenario: Scenario):  # the model: ask for the tools first, then answer
    from tests.fakes.openai_server import Reply

    def reply(request: dict[str, Any]) -> Reply:
        if scenario.handoff and request["messages"][-1]["role"] != "tool":
            return Reply(tool_calls=[{"name": f"transfer_to_{scenario.handoff}",
                                      "arguments": {}}], prompt_tokens=90, completion_tokens=8)
        if scenario.tool_calls and request["messages"][-1]["role"] != "tool":
            return Reply(tool_calls=[{"name": n, "arguments": a}
                                     for n, a, _, _ in scenario.tool_calls],
                         prompt_tokens=100, completion_tokens=12)
        return Reply(content=scenario.answer, prompt_tokens=120, completion_tokens=9)
    return reply


def scripted_tools(scenario: Scenario) -> Callable[..., str]:
    """The scenario's tools as a framework calls them: `outcome(name, **arguments)` gives the
    scripted result, or raises LookupError with it where the call fails."""
    outcomes = {(n, json.dumps(a)): (r, failed) for n, a, r, failed in scenario.tool_calls}

    def outcome(name: str, **kwargs: str) -> str:
        result, failed = outcomes[(name, json.dumps(kwargs))]
        if failed:
            raise LookupError(result)
        return result

    return outcome


def prompt(scenario: Scenario) -> list[tuple[str, str]]:
    """(role, content) messages the app sends first."""
    if scenario.docs_in_prompt:
        listing = "\n".join(f"[{i}] {c}" for i, c in scenario.documents)
        system = "You are a support assistant."
        user = ("Answer the question using only these documents.\n"
                f"Documents:\n{listing}\nQuestion: {scenario.question}")
    else:
        context = "\n".join(c for _, c in scenario.documents)
        system = f"Answer from this context:\n{context}" if context else "You are a support bot."
        user = scenario.question
    history = [m for q, a in scenario.history for m in (("user", q), ("assistant", a))]
    return [("system", system), *history, ("user", user)]


TOOLS = [{"type": "function", "function": {
    "name": name, "description": f"{name} by {key}",
    "parameters": {"type": "object", "properties": {key: {"type": "string"}}}}}
    for name, key in (("lookup_policy", "topic"), ("lookup_order", "order_id"))]


# ---- the app under a direct `openai` instrumentor: wrapper spans as each ecosystem writes them


def _app_spans(flavour: str) -> dict[str, Any]:
    """Root, retrieval and tool span attributes, as the app's own code or framework writes them
    in each ecosystem (the instrumentor only covers the `openai` calls)."""
    if flavour == "openinference-openai":
        return {
            "root": lambda q: {"openinference.span.kind": "CHAIN", "input.value": q},
            "retrieval": lambda q, docs: {
                "openinference.span.kind": "RETRIEVER", "input.value": q,
                **{f"retrieval.documents.{i}.document.{k}": v for i, (d, c) in enumerate(docs)
                   for k, v in (("id", d), ("content", c))}},
            "tool": lambda n, a, r: {"openinference.span.kind": "TOOL", "tool.name": n,
                                     "input.value": json.dumps(a), "output.value": r},
            "root_end": lambda answer: {"output.value": answer},
        }
    if flavour == "openai-v2":
        return {
            "root": lambda q: {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "s"},
            "retrieval": lambda q, docs: {
                "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": q,
                "gen_ai.retrieval.documents": json.dumps(
                    [{"id": d, "content": c} for d, c in docs])},
            "tool": lambda n, a, r: {"gen_ai.operation.name": "execute_tool",
                                     "gen_ai.tool.name": n,
                                     "gen_ai.tool.call.arguments": json.dumps(a),
                                     "gen_ai.tool.call.result": r},
            "root_end": lambda answer: {},
        }
    return {  # OpenLLMetry: Traceloop decorators; vector-DB results as span events
        "root": lambda q: {"traceloop.span.kind": "workflow", "traceloop.entity.name": "support",
                           "traceloop.entity.input": json.dumps({"args": [q], "kwargs": {}})},
        "retrieval": lambda q, docs: {"db.system": "chroma", "db.operation": "query"},
        "tool": lambda n, a, r: {"traceloop.span.kind": "tool", "traceloop.entity.name": n,
                                 "traceloop.entity.input": json.dumps({"args": [], "kwargs": a}),
                                 "traceloop.entity.output": json.dumps(r)},
        "root_end": lambda answer: {"traceloop.entity.output": json.dumps(answer)},
    }


def run_direct(flavour: str, scenario: Scenario, base_url: str, tracer: Any,
               conversation: str | None = None) -> None:
    if conversation is not None and flavour == "openinference-openai":
        from openinference.instrumentation import using_session

        with using_session(conversation):
            _turn_direct(flavour, scenario, base_url, tracer, {"session.id": conversation})
    else:
        ids = {"gen_ai.conversation.id": conversation} if conversation is not None else {}
        _turn_direct(flavour, scenario, base_url, tracer, ids)


def _turn_direct(flavour: str, scenario: Scenario, base_url: str, tracer: Any,
                 conversation: dict[str, str]) -> None:
    import openai
    from opentelemetry.trace import Status, StatusCode

    client = openai.OpenAI(base_url=base_url, api_key="unused")
    spans = _app_spans(flavour)
    with tracer.start_as_current_span("support.turn", attributes={
            **spans["root"](scenario.question), **conversation}) as root:
        if scenario.documents:
            with tracer.start_as_current_span("retrieve", attributes=spans["retrieval"](
                    scenario.question, scenario.documents)) as span:
                if flavour == "openllmetry-openai":
                    for doc_id, content in scenario.documents:
                        span.add_event("db.query.result", {"db.query.result.id": doc_id,
                                                           "db.query.result.document": content})
        messages: list[dict[str, Any]] = [{"role": r, "content": c} for r, c in prompt(scenario)]
        tools = {"tools": TOOLS} if scenario.tool_calls else {}
        if scenario.stream:
            chunks = client.chat.completions.create(
                model="m1", messages=messages, stream=True,
                stream_options={"include_usage": True})
            answer = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            reply = client.chat.completions.create(model="m1", messages=messages, **tools)
            calls = reply.choices[0].message.tool_calls or []
            if calls:
                messages.append(reply.choices[0].message.model_dump(exclude_none=True))
                for call, (name, args, result, failed) in zip(calls, scenario.tool_calls,
                                                                strict=True):
                    with tracer.start_as_current_span(f"execute_tool {name}", attributes=spans[
                            "tool"](name, args, None if failed else result)) as tool_span:
                        if failed:
                            tool_span.set_status(Status(StatusCode.ERROR, result))
                    messages.append({"role": "tool", "tool_call_id": call.id,
                                     "content": result})  # a failure: its message
                reply = client.chat.completions.create(model="m1", messages=messages, **tools)
            answer = reply.choices[0].message.content
        for key, value in spans["root_end"](answer).items():
            root.set_attribute(key, value)


# ---- the app in LangChain


def run_langchain(scenario: Scenario, base_url: str) -> None:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import StructuredTool, ToolException
    from langchain_openai import ChatOpenAI

    class KbRetriever(BaseRetriever):  # vector stores keep a document's id in its metadata
        def _get_relevant_documents(self, query: str, *,
                                    run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
            return [Document(page_content=c, metadata={"id": i, "source": "kb"})
                    for i, c in scenario.documents]

    def make_tool(name: str, key: str) -> StructuredTool:
        outcomes = {json.dumps(a): (r, failed) for n, a, r, failed in scenario.tool_calls
                    if n == name}

        def run(**kwargs: str) -> str:
            result, failed = outcomes[json.dumps(kwargs)]
            if failed:
                raise ToolException(result)
            return result
        from pydantic import create_model
        schema = create_model(f"{name}_args", **{key: (str, ...)})
        return StructuredTool.from_function(run, name=name, description=f"{name} by {key}",
                                            args_schema=schema, handle_tool_error=True)

    tools = {n: make_tool(n, k) for n, k in (("lookup_policy", "topic"),
                                             ("lookup_order", "order_id"))}
    llm = ChatOpenAI(model="m1", base_url=base_url, api_key="unused",
                     stream_usage=scenario.stream)
    model = llm.bind_tools(list(tools.values())) if scenario.tool_calls else llm

    def support_turn(question: str) -> str:
        if scenario.framework_only or scenario.documents:
            KbRetriever().invoke(question)
        kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
        messages: list[Any] = [kinds[r](c) for r, c in prompt(scenario)]
        if scenario.stream:
            return "".join(chunk.content for chunk in model.stream(messages))
        first = model.invoke(messages)
        if not first.tool_calls:
            return first.content
        messages.append(first)
        for call in first.tool_calls:
            messages.append(tools[call["name"]].invoke(call))  # a ToolMessage with the call id
        return model.invoke(messages).content

    RunnableLambda(support_turn).with_config(run_name="support_turn").invoke(scenario.question)


# ---- the app in LlamaIndex


def run_llama_index(scenario: Scenario, base_url: str) -> None:
    from llama_index.core.llms import ChatMessage, LLMMetadata
    from llama_index.core.query_engine import CustomQueryEngine
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai import OpenAI

    class ScriptedOpenAI(OpenAI):  # a compatible server's model is not in OpenAI's own table
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(context_window=8192, is_chat_model=True,
                               is_function_calling_model=True, model_name=self.model)

    class KbRetriever(BaseRetriever):  # an in-memory index: the nodes carry the documents' ids
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            return [NodeWithScore(node=TextNode(id_=i, text=c), score=1.0)
                    for i, c in scenario.documents]

    outcome = scripted_tools(scenario)

    def lookup_policy(topic: str) -> str:
        return outcome("lookup_policy", topic=topic)

    def lookup_order(order_id: str) -> str:
        return outcome("lookup_order", order_id=order_id)

    tools = {f.__name__: FunctionTool.from_defaults(fn=f, name=f.__name__,
                                                    description=f"{f.__name__} by {k}")
             for f, k in ((lookup_policy, "topic"), (lookup_order, "order_id"))}
    llm = ScriptedOpenAI(model="m1", api_base=base_url, api_key="unused")

    class SupportEngine(CustomQueryEngine):
        def custom_query(self, query_str: str) -> str:
            if scenario.documents:
                KbRetriever().retrieve(query_str)
            messages = [ChatMessage(role=r, content=c) for r, c in prompt(scenario)]
            if scenario.stream:
                return "".join(r.delta or "" for r in llm.stream_chat(messages))
            if not scenario.tool_calls:
                return llm.chat(messages).message.content
            reply = llm.chat_with_tools(list(tools.values()), chat_history=messages,
                                        allow_parallel_tool_calls=True)
            messages.append(reply.message)
            for call in llm.get_tool_calls_from_response(reply):
                try:
                    result = tools[call.tool_name].call(**call.tool_kwargs).content
                except LookupError as error:  # as LlamaIndex's agents do: the model is told
                    result = str(error)
                messages.append(ChatMessage(role="tool", content=result,
                                            additional_kwargs={"tool_call_id": call.tool_id}))
            return llm.chat_with_tools(list(tools.values()), chat_history=messages,
                                       allow_parallel_tool_calls=True).message.content

    SupportEngine().query(scenario.question)


# ---- the app as an OpenAI Agents SDK agent (the scripted server speaks Chat Completions only)


def run_openai_agents(scenario: Scenario, base_url: str) -> None:
    import asyncio

    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI

    outcome = scripted_tools(scenario)

    def told(_context: Any, error: Exception) -> str:  # the model gets the failure's message
        return str(error)

    @function_tool(failure_error_function=told)
    def lookup_policy(topic: str) -> str:
        """lookup_policy by topic"""
        return outcome("lookup_policy", topic=topic)

    @function_tool(failure_error_function=told)
    def lookup_order(order_id: str) -> str:
        """lookup_order by order_id"""
        return outcome("lookup_order", order_id=order_id)

    messages = prompt(scenario)
    model = OpenAIChatCompletionsModel(
        model="m1", openai_client=AsyncOpenAI(base_url=base_url, api_key="unused"))
    handoffs = [Agent(name=scenario.handoff, instructions="You handle billing.", model=model)
                ] if scenario.handoff else []
    agent = Agent(name="support", instructions=messages[0][1], model=model,
                  tools=[lookup_policy, lookup_order] if scenario.tool_calls else [],
                  handoffs=handoffs)
    conversation: list[Any] = [{"role": r, "content": c} for r, c in messages[1:]]

    async def turn() -> None:
        if scenario.stream:
            run = Runner.run_streamed(agent, conversation)
            async for _ in run.stream_events():
                pass
        else:
            await Runner.run(agent, conversation)
    asyncio.run(turn())


# ---- capture: one process per instrumentor


def _hex_ids(data: Any) -> None:
    """protobuf's JSON writes ids in base64; OTLP/JSON has them in hex."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                data[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(data, list):
        for item in data:
            _hex_ids(item)


def capture_one(instrumentor: str, out: Path) -> None:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    os.environ["TRACELOOP_TELEMETRY"] = "false"
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    from tests.fakes.openai_server import ScriptedOpenAIServer
    try:
        from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as LogMemory
    except ImportError:
        from opentelemetry.sdk._logs.export import InMemoryLogExporter as LogMemory

    class CountingIds(IdGenerator):  # the same ids on every capture
        def __init__(self) -> None:
            self.trace, self.span = 0, 0

        def generate_trace_id(self) -> int:
            self.trace += 1
            return 0xC0 << 120 | self.trace

        def generate_span_id(self) -> int:
            self.span += 1
            return 0xC0 << 56 | self.span

    resource = Resource.create({"service.name": f"support-{instrumentor}"})
    spans, logs = InMemorySpanExporter(), LogMemory()
    tracer_provider = TracerProvider(resource=resource, id_generator=CountingIds())
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    if instrumentor == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider,
                                        logger_provider=logger_provider)
    elif instrumentor == "openinference-openai":
        from openinference.instrumentation.openai import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif instrumentor == "openllmetry-openai":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif instrumentor == "openinference-langchain":
        from openinference.instrumentation.langchain import LangChainInstrumentor
        LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
    elif instrumentor == "openllmetry-langchain":
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor
        LangchainInstrumentor().instrument(tracer_provider=tracer_provider)
    elif instrumentor == "openinference-llama-index":
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
        LlamaIndexInstrumentor().instrument(tracer_provider=tracer_provider)
    else:  # replaces the SDK's own exporter (to OpenAI's platform) with OTel spans
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider)
    tracer = tracer_provider.get_tracer("support-app")

    (out / instrumentor).mkdir(parents=True, exist_ok=True)

    def write(name: str, expected: dict[str, Any], suffix: str) -> None:
        """The spans (and log events) captured since the last write, and what the app did."""
        export: dict[str, Any] = {
            "traces": json_format.MessageToDict(encode_spans(spans.get_finished_spans()))}
        if records := logs.get_finished_logs():
            export["logs"] = json_format.MessageToDict(encode_logs(records))
        _hex_ids(export)
        spans.clear()
        logs.clear()
        base = out / instrumentor / name
        text = json.dumps(export, indent=1) + "\n"
        for local, placeholder in ((sys.prefix, "<venv>"), (str(FIXTURES.parents[2]), "<repo>")):
            text = text.replace(local, placeholder)  # exception stack traces: no local paths
        base.with_suffix(".json").write_text(text)
        Path(f"{base}{suffix}").write_text(json.dumps(expected, indent=1) + "\n")

    for name, scenario in scenarios_for(instrumentor).items():
        with ScriptedOpenAIServer(script_for(scenario)) as llm:
            if instrumentor == "openinference-llama-index":
                run_llama_index(scenario, llm.base_url)
            elif instrumentor in AGENTS:
                run_openai_agents(scenario, llm.base_url)
            elif instrumentor in FRAMEWORKS:
                run_langchain(scenario, llm.base_url)
            else:
                run_direct(instrumentor, scenario, llm.base_url, tracer)
        write(name, expected_turn(scenario), ".expected.json")
    for name, turns in sessions_for(instrumentor).items():
        for turn in turns:  # a trace each, one conversation
            with ScriptedOpenAIServer(script_for(turn)) as llm:
                run_direct(instrumentor, turn, llm.base_url, tracer, CONVERSATION_ID)
        write(name, expected_session(turns), ".session.json")


def versions(instrumentor: str) -> dict[str, str]:
    return {dist: metadata.version(dist) for dist in INSTRUMENTORS[instrumentor]}


def capture(instrumentors: list[str], out: Path) -> None:
    for name in instrumentors:
        done = subprocess.run([sys.executable, "-m", "tests.corpus.capture", "--one", name,
                               "--out", str(out)], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"capture under {name} failed:\n{done.stderr[-3000:]}")
        (out / name / "versions.json").write_text(json.dumps(versions(name), indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(INSTRUMENTORS))
    parser.add_argument("--out", type=Path, default=FIXTURES)
    parser.add_argument("--one", choices=sorted(INSTRUMENTORS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        capture_one(args.one, args.out)
    else:
        capture(args.only or sorted(INSTRUMENTORS), args.out)


if __name__ == "__main__":
    main()
