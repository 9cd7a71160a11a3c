"""Ingest throughput: spans per second per core through decode + mapping + assembly.

    python bench/ingest.py [--traces 4000] [--batch 100] [--wal off,on,nofsync]
                           [--decoders python,native] [--collector PATH] [--layers]

A realistic RAG trace mix (root, retrieval with 5 documents, two LLM calls, a tool call; about
10 attributes a span; a third each in GenAI, OpenInference and OpenLLMetry conventions), sent as
export requests of `--batch` traces. Prints, side by side:
  0. the floors: upb's protobuf parse alone (no field read), and the compiled decoder alone
     (wire to mapped SpanFacts, no assembly);
  1. in-process: decode + map + assemble, per encoding and per trace decoder (`--decoders`:
     the Python reference, the compiled one of native/; one core: Python runs one thread here),
     without holding kept turns for late spans, and (compiled) with every turn held, paired;
  2. through the receivers: a client process sends to a sidecar process over loopback (gRPC,
     HTTP protobuf, HTTP JSON); spans per second of the sidecar's CPU time, and its peak RSS;
     once per `--wal` mode: the write-ahead log off, on (fsync before each answer, group
     committed), on without fsync (survives kill -9, not a power cut); once per decoder.
     With `--collector PATH` (an OpenTelemetry Collector built with the otlp receiver, the batch
     and contrib tail_sampling processors and the nop exporter; docs/benchmarks.md says how), the
     Collector receives the same bodies in the same rounds: otlp -> batch -> nop, and
     otlp -> tail_sampling (decision_wait 1 s, keep all) -> nop, the peer that assembles whole
     traces as the sidecar does. A server's CPU is counted until it has done all the work sent:
     the sidecar has assembled every turn, the Collector's processor has passed every span on;
  3. with `--layers`, where the sidecar's CPU goes: the shipped receivers (gRPC, HTTP protobuf)
     serving a pipeline cut short after one layer (nothing read; the compiled decoding and
     convention mapping into SpanFacts; + assembly into turns), in the same rounds as the whole
     sidecar; each layer's cost is its row's µs/span less the row above. What the compiled path
     must leave out of Python to reach a given figure is read off these rows.
Timings are medians of `--repeat` runs. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.assemble import TurnAssembler  # noqa: E402
from monitor.config import AssemblySettings  # noqa: E402
from monitor.ingest.otlp import DECODER_ENV, OtlpDecoder  # noqa: E402
from monitor.telemetry import Metrics  # noqa: E402
from tests.waiting import wait_until  # noqa: E402

DOC = "Refunds are issued within 30 days of purchase to the original payment method. " * 4
COMMON = {"http.method": "POST", "server.address": "llm.internal", "server.port": 8000,
          "deployment.environment": "prod", "thread.id": 12}


def _set(span: Any, attrs: dict[str, Any]) -> None:
    for key, value in attrs.items():
        kv = span.attributes.add(key=key)
        if isinstance(value, bool):
            kv.value.bool_value = value
        elif isinstance(value, int):
            kv.value.int_value = value
        elif isinstance(value, float):
            kv.value.double_value = value
        else:
            kv.value.string_value = str(value)


def _messages(question: str, answer: str | None, tool: bool) -> tuple[str, str]:
    inputs = [{"role": "system", "parts": [{"type": "text", "content": "Answer from: " + DOC}]},
              {"role": "user", "parts": [{"type": "text", "content": question}]}]
    parts = ([{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": "x"}}]
             if tool else [{"type": "text", "content": answer}])
    return json.dumps(inputs), json.dumps([{"role": "assistant", "parts": parts}])


def _trace(request: ExportTraceServiceRequest, n: int, style: str) -> None:
    scope = request.resource_spans[-1].scope_spans[0]
    trace_id = random.Random(n).getrandbits(128).to_bytes(16, "big")  # random, as SDKs make them
    t0 = 1_700_000_000_000_000_000 + n * 1_000_000
    question = f"How long do refunds take for order {n}?"
    answer = "Refunds are issued within 30 days."

    def span(i: int, parent: int, name: str, attrs: dict[str, Any]) -> None:
        s = scope.spans.add(trace_id=trace_id, span_id=(n * 8 + i + 1).to_bytes(8, "big"),
                            name=name, start_time_unix_nano=t0 + i, end_time_unix_nano=t0 + 9 - i)
        if parent:
            s.parent_span_id = (n * 8 + parent).to_bytes(8, "big")
        _set(s, {**COMMON, **attrs})

    docs = [(f"kb-{d}", DOC, 0.9 - d / 10) for d in range(5)]
    if style == "genai":
        span(0, 0, "turn", {"assistant.question": question, "assistant.route": "support",
                            "assistant.answer": answer})
        span(1, 1, "retrieve", {"gen_ai.operation.name": "retrieval",
                                "gen_ai.retrieval.query.text": question,
                                "gen_ai.retrieval.documents": json.dumps(
                                    [{"id": i, "content": c, "score": s} for i, c, s in docs])})
        for i, tool in ((2, True), (4, False)):
            inputs, outputs = _messages(question, answer, tool)
            span(i, 1, "chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                  "gen_ai.input.messages": inputs,
                                  "gen_ai.output.messages": outputs,
                                  "gen_ai.usage.input_tokens": 300})
        span(3, 1, "execute_tool lookup", {"gen_ai.operation.name": "execute_tool",
                                           "gen_ai.tool.name": "lookup",
                                           "gen_ai.tool.call.arguments": '{"q": "x"}',
                                           "gen_ai.tool.call.result": '"ok"'})
    elif style == "openinference":
        span(0, 0, "turn", {"openinference.span.kind": "CHAIN", "input.value": question,
                            "output.value": answer})
        span(1, 1, "retrieve", {"openinference.span.kind": "RETRIEVER", "input.value": question,
                                **{f"retrieval.documents.{j}.document.{k}": v
                                   for j, (i, c, s) in enumerate(docs)
                                   for k, v in (("id", i), ("content", c), ("score", s))}})
        for i, tool in ((2, True), (4, False)):
            attrs = {"openinference.span.kind": "LLM", "llm.model_name": "m",
                     "llm.input_messages.0.message.role": "system",
                     "llm.input_messages.0.message.content": "Answer from: " + DOC,
                     "llm.input_messages.1.message.role": "user",
                     "llm.input_messages.1.message.content": question,
                     "llm.output_messages.0.message.role": "assistant"}
            if tool:
                attrs["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] = "lookup"
            else:
                attrs["llm.output_messages.0.message.content"] = answer
            span(i, 1, "ChatCompletion", attrs)
        span(3, 1, "lookup", {"openinference.span.kind": "TOOL", "tool.name": "lookup",
                              "input.value": '{"q": "x"}', "output.value": "ok"})
    else:
        span(0, 0, "rag.workflow", {"traceloop.span.kind": "workflow",
                                    "traceloop.entity.input": json.dumps({"args": [question]}),
                                    "traceloop.entity.output": json.dumps(answer)})
        span(1, 1, "chroma.query", {"db.system": "chroma"})
        for i, tool in ((2, True), (4, False)):
            attrs = {"llm.request.type": "chat", "gen_ai.request.model": "m",
                     "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": DOC,
                     "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": question,
                     "gen_ai.completion.0.role": "assistant"}
            if tool:
                attrs["gen_ai.completion.0.tool_calls.0.name"] = "lookup"
            else:
                attrs["gen_ai.completion.0.content"] = answer
            span(i, 1, "openai.chat", attrs)
        span(3, 1, "lookup.tool", {"traceloop.span.kind": "tool",
                                   "traceloop.entity.name": "lookup",
                                   "traceloop.entity.input": '{"kwargs": {"q": "x"}}'})


def make_requests(traces: int, batch: int) -> list[ExportTraceServiceRequest]:
    requests = []
    styles = ("genai", "openinference", "openllmetry")
    for start in range(0, traces, batch):
        request = ExportTraceServiceRequest()
        rs = request.resource_spans.add()
        _set(rs.resource, {"service.name": "shop-bot"})
        rs.scope_spans.add()
        for n in range(start, min(start + batch, traces)):
            _trace(request, n, styles[n % 3])
        requests.append(request)
    return requests


def to_otlp_json(request: ExportTraceServiceRequest) -> bytes:
    data = json_format.MessageToDict(request)
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        import base64
                        s[key] = base64.b64decode(s[key]).hex()
    return json.dumps(data).encode()


def raw_parse(bodies: list[bytes]) -> float:
    """Seconds for upb to parse every body into messages, reading no field: the floor."""
    start = time.perf_counter()
    for body in bodies:
        ExportTraceServiceRequest().ParseFromString(body)
    return time.perf_counter() - start


def native_only(bodies: list[bytes]) -> float:
    """Seconds for the compiled decoder alone: wire to mapped SpanFacts, no assembly."""
    decoder = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16, native=True)
    start = time.perf_counter()
    for body in bodies:
        decoder.native.traces(body)  # type: ignore[union-attr]
    return time.perf_counter() - start


def in_process(bodies: list[bytes], fmt: str, decoder_kind: str,
               revise_within_s: float = 0.0) -> float:
    """Seconds to decode, map and assemble every body (all turns completed; with no sampler,
    every turn is kept: `revise_within_s` > 0 holds each one's spans for late spans)."""
    decoder = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16,
                          native=decoder_kind == "native")
    assembler = TurnAssembler(AssemblySettings(root_grace_s=0, max_traces=100_000,
                                               max_spans=1_000_000,
                                               revise_within_s=revise_within_s), Metrics())
    start = time.perf_counter()
    turns = 0
    for body in bodies:
        batch = decoder.decode("traces", body, fmt)  # type: ignore[arg-type]
        assembler.add(batch.facts)
        turns += len(assembler.expire().trace_ids)
    elapsed = time.perf_counter() - start
    assert assembler.trace_count == 0 and turns > 0
    return elapsed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def send_http(url: str, bodies: list[bytes], content_type: str, concurrency: int) -> None:
    import aiohttp

    queue = list(bodies)
    async with aiohttp.ClientSession() as session:
        async def worker() -> None:
            while queue:
                body = queue.pop()
                while True:
                    async with session.post(url, data=body,
                                            headers={"Content-Type": content_type}) as r:
                        await r.read()
                        if r.status == 200:
                            break
                        await asyncio.sleep(0.05)  # 429: the pipeline is full, retry

        await asyncio.gather(*(worker() for _ in range(concurrency)))


async def send_grpc(endpoint: str, bodies: list[bytes], concurrency: int) -> None:
    import grpc

    queue = list(bodies)
    async with grpc.aio.insecure_channel(endpoint) as channel:
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
            request_serializer=lambda b: b, response_deserializer=lambda b: b)

        async def worker() -> None:
            while queue:
                body = queue.pop()
                while True:
                    try:
                        await export(body, timeout=30)
                        break
                    except grpc.aio.AioRpcError:
                        await asyncio.sleep(0.05)

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def send(kind: str, ports: dict[str, int], bodies: list[bytes]) -> None:
    """Every body to a receiver on loopback ("grpc", "http-protobuf", "http-json")."""
    if kind == "grpc":
        asyncio.run(send_grpc(f"127.0.0.1:{ports['grpc']}", bodies, 4))
    else:
        content_type = "application/json" if kind == "http-json" else "application/x-protobuf"
        asyncio.run(send_http(f"http://127.0.0.1:{ports['http']}/v1/traces", bodies,
                              content_type, 4))


def metric_sum(url: str, name: str, **labels: str) -> float:
    """The sum of one metric's series on a Prometheus endpoint, those with `labels` only."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    total = 0.0
    for match in re.finditer(rf"^{name}(\{{[^}}]*\}})? (\S+)$", text, re.M):
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            total += float(match.group(2))
    return total


def wait_metric(url: str, name: str, expected: int) -> None:
    """Until the server has done all the work sent (its CPU is counted until then)."""
    wait_until(lambda: metric_sum(url, name) >= expected, 60, f"{name} to reach {expected}")


def wait_ready(admin_port: int, timeout_s: float) -> None:
    """Until the sidecar's /readyz answers 200 (its last error after `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/readyz", timeout=1)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


COLLECTOR_CONFIG = """\
receivers:
  otlp:
    protocols:
      grpc: {{endpoint: "127.0.0.1:{grpc}"}}
      http: {{endpoint: "127.0.0.1:{http}"}}
processors:
  batch: {{}}
  tail_sampling:
    decision_wait: 1s
    num_traces: 200000
    policies: [{{name: all, type: always_sample}}]
exporters:
  nop: {{}}
service:
  telemetry:
    logs: {{level: warn}}
    metrics:
      readers:
        - pull: {{exporter: {{prometheus: {{host: "127.0.0.1", port: {metrics}}}}}}}
  pipelines:
    traces: {{receivers: [otlp], processors: [{processor}], exporters: [nop]}}
"""


# What the Collector has passed on, per processor: (its metric, and whether it counts traces)
COLLECTOR_DONE = {"batch": ("otelcol_processor_batch_batch_send_size_sum", False),
                  "tail_sampling": ("otelcol_processor_tail_sampling_global_count_traces_sampled",
                                    True)}


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def through_collector(binary: str, processor: str, kind: str, bodies: list[bytes],
                      spans: int, traces: int) -> tuple[float, float, float]:
    """through_receiver's figures for the OpenTelemetry Collector: CPU counted until its
    processor has passed every span on (tail_sampling: every trace, after its decision wait)."""
    ports = {name: free_port() for name in ("grpc", "http", "metrics")}
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "otelcol.yaml"
        config.write_text(COLLECTOR_CONFIG.format(processor=processor, **ports))
        collector = subprocess.Popen([binary, "--config", str(config)])
        try:
            wait_until(lambda: all(map(listening, ports.values())), 30, "the Collector's ports")
            cpu0, t0 = cpu_seconds(collector.pid), time.perf_counter()
            send(kind, ports, bodies)
            metric, counts_traces = COLLECTOR_DONE[processor]
            wait_metric(f"http://127.0.0.1:{ports['metrics']}/metrics", metric,
                        traces if counts_traces else spans)
            wall, cpu = time.perf_counter() - t0, cpu_seconds(collector.pid) - cpu0
            return spans / wall, spans / cpu, peak_rss_mib(collector.pid)
        finally:
            collector.terminate()
            collector.wait(timeout=30)


WAL_MODES = {"off": "{enabled: false}", "on": "{enabled: true, fsync: true}",
             "nofsync": "{enabled: true, fsync: false}"}


LAYERS = ("receiver", "decode", "assembly")


async def serve_layer(layer: str, kind: str) -> None:
    """The shipped receiver with its pipeline cut after `layer`; prints its port, then serves."""
    from prometheus_client import CollectorRegistry

    from monitor.app import tune_gc
    from monitor.config import GrpcReceiverSettings, HttpReceiverSettings, TLSSettings
    from monitor.ingest.grpc_receiver import GrpcReceiver
    from monitor.ingest.http_receiver import HttpReceiver
    from monitor.ingest.otlp import Batch
    from monitor.ingest.telemetry import IngestTelemetry

    tune_gc()  # as `assistant-monitor run` does: the layers add up to the whole sidecar
    shipped = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16, native=True)
    assembler = TurnAssembler(AssemblySettings(root_grace_s=0, max_traces=100_000,
                                               max_spans=1_000_000), Metrics())

    class CutDecoder:
        def decode(self, signal: str, body: bytes, fmt: str) -> Batch:
            if layer == "receiver":
                return Batch()
            return shipped.decode(signal, body, fmt)  # type: ignore[arg-type]

    class CutSink:
        def admit(self) -> None: ...

        def accept(self, batch: Batch, *_: Any) -> None:
            if layer == "assembly":  # answered after this: no work is left when the sender ends
                assembler.add(batch.facts)
                assembler.expire()

    receiver_class, settings = ((GrpcReceiver, GrpcReceiverSettings) if kind == "grpc"
                                else (HttpReceiver, HttpReceiverSettings))
    receiver = receiver_class(settings(endpoint="127.0.0.1:0"), TLSSettings(), CutDecoder(),
                              CutSink(), IngestTelemetry(CollectorRegistry()))  # type: ignore[arg-type]
    await receiver.start()
    print(receiver.port, flush=True)
    await asyncio.Event().wait()


def through_layer(layer: str, kind: str, bodies: list[bytes], spans: int) -> float:
    """Spans per CPU second of serve_layer's process. The receiver alone gets the bodies ten
    times over: CPU time is read in 10 ms ticks."""
    server = subprocess.Popen([sys.executable, __file__, "--serve-layer", layer, "--kind", kind],
                              stdout=subprocess.PIPE, text=True)
    times = 10 if layer == "receiver" else 1
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        cpu0 = cpu_seconds(server.pid)
        send(kind, {"grpc": port, "http": port}, bodies * times)
        return spans * times / (cpu_seconds(server.pid) - cpu0)
    finally:
        server.kill()
        server.wait(timeout=30)


def sidecar_config(ports: dict[str, int], directory: Path, rest: str) -> str:
    """A benchmarked sidecar's configuration: its ports on loopback, its store in `directory`,
    every turn completed at its root span, then `rest` (sampling, judging, the WAL)."""
    return (f"receivers:\n  grpc: {{endpoint: '127.0.0.1:{ports['grpc']}'}}\n"
            f"  http: {{endpoint: '127.0.0.1:{ports['http']}'}}\n"
            f"admin: {{endpoint: '127.0.0.1:{ports['admin']}', recent_turns: 100}}\n"
            "assembly: {root_grace_s: 0, max_traces: 100000, max_spans: 1000000}\n"
            f"store: {{path: '{directory / 'store.db'}'}}\n"
            "log_level: WARNING\n" + rest)


def through_receiver(kind: str, bodies: list[bytes], spans: int, traces: int, wal: str,
                     decoder_kind: str) -> tuple[float, float, float]:
    """(spans per wall second, spans per sidecar CPU second, sidecar peak RSS MiB): CPU counted
    until every turn is assembled."""
    ports = {name: free_port() for name in ("grpc", "http", "admin")}
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "bench.yaml"
        # Ingest only: no turn is sampled, so no judge runs (bench/pipeline.py has those).
        config.write_text(sidecar_config(ports, Path(tmp), "sampling: {default_rate: 0.0, "
                                         f"always_keep: []}}\nwal: {WAL_MODES[wal]}\n"))
        env = {**os.environ, DECODER_ENV: decoder_kind}
        sidecar = subprocess.Popen([sys.executable, "-m", "monitor", "run", "--config",
                                    str(config)], env=env)
        try:
            wait_ready(ports["admin"], 30)
            cpu0, t0 = cpu_seconds(sidecar.pid), time.perf_counter()
            send(kind, ports, bodies)
            wait_metric(f"http://127.0.0.1:{ports['admin']}/metrics",
                        "assistant_turns_received_total", traces)
            wall, cpu = time.perf_counter() - t0, cpu_seconds(sidecar.pid) - cpu0
            return spans / wall, spans / cpu, peak_rss_mib(sidecar.pid)
        finally:
            sidecar.terminate()
            sidecar.wait(timeout=30)


def main() -> None:
    from monitor.app import tune_gc

    tune_gc()  # in process as in the sidecar: `assistant-monitor run` sets it
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=100, help="traces per export request")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--wal", default="off,on", help="write-ahead log modes to compare: "
                        + ", ".join(WAL_MODES))
    parser.add_argument("--decoders", default="python,native",
                        help="trace decoders to compare: python (the reference), native")
    parser.add_argument("--collector", metavar="PATH",
                        help="an OpenTelemetry Collector binary to run side by side")
    parser.add_argument("--layers", action="store_true",
                        help="the receivers cut after each layer, beside the whole sidecar")
    parser.add_argument("--serve-layer", choices=LAYERS, help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="grpc", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_layer:  # through_layer's server process
        asyncio.run(serve_layer(args.serve_layer, args.kind))
        return
    wal_modes = args.wal.split(",")
    if not set(wal_modes) <= WAL_MODES.keys():
        parser.error(f"--wal: expected some of {', '.join(WAL_MODES)}")
    decoders = args.decoders.split(",")
    if not set(decoders) <= {"python", "native"}:
        parser.error("--decoders: expected some of python, native")

    requests = make_requests(args.traces, args.batch)
    proto = [r.SerializeToString() for r in requests]
    otlp_json = [to_otlp_json(r) for r in requests]
    spans = sum(len(ss.spans) for r in requests for rs in r.resource_spans for ss in rs.scope_spans)
    attrs = sum(len(s.attributes) for r in requests for rs in r.resource_spans
                for ss in rs.scope_spans for s in ss.spans) / spans
    print(f"{args.traces} traces, {spans} spans, {attrs:.1f} attributes/span, "
          f"{sum(map(len, proto)) / spans:.0f} protobuf bytes/span, "
          f"{len(requests)} requests of {args.batch} traces; medians of {args.repeat} runs\n")

    print(f"{'in-process (1 core)':28} {'spans/s':>10} {'µs/span':>8}")
    floors = [("raw upb parse (floor)", raw_parse)]
    if "native" in decoders:
        floors.append(("compiled decode + mapping", native_only))
    for name, floor in floors:
        seconds = statistics.median(floor(proto) for _ in range(args.repeat))
        print(f"  {name:26} {spans / seconds:>10,.0f} {seconds / spans * 1e6:>8.1f}")
    for name, bodies, fmt in (("protobuf", proto, "proto"), ("OTLP/JSON", otlp_json, "json")):
        for decoder in decoders if fmt == "proto" else decoders[:1]:  # JSON: Python decodes
            seconds = statistics.median(in_process(bodies, fmt, decoder)
                                        for _ in range(args.repeat))
            label = f"{name}, {decoder}" if fmt == "proto" else name
            print(f"  {label:26} {spans / seconds:>10,.0f} {seconds / spans * 1e6:>8.1f}")
    if "native" in decoders:  # every turn held for late spans (the most it costs), paired
        paired = [(in_process(proto, "proto", "native"),
                   in_process(proto, "proto", "native", revise_within_s=300.0))
                  for _ in range(args.repeat)]
        off, on = (statistics.median(run[i] for run in paired) for i in (0, 1))
        print(f"  {'+ every turn held':26} {spans / on:>10,.0f} {on / spans * 1e6:>8.1f}"
              f"  ({on / off:.2f}x the row without, paired)")

    print(f"\n{'through the receivers':20} {'decoder':>8} {'WAL/pipeline':>13} {'spans/s':>10} "
          f"{'spans/cpu-s':>12} {'peak RSS':>9}")
    for kind, bodies in (("grpc", proto), ("http-protobuf", proto), ("http-json", otlp_json)):
        # Modes interleaved run by run: a machine busy meanwhile slows every mode alike.
        modes = [(d, wal) for d in (decoders if kind != "http-json" else decoders[:1])
                 for wal in wal_modes]
        if args.collector and kind != "http-json":
            modes += [("otelcol", "batch"), ("otelcol", "tail_sampling")]
        runs: dict[tuple[str, str], list[tuple[float, float, float]]] = {m: [] for m in modes}
        for _ in range(args.repeat):
            for decoder, wal in modes:
                runs[decoder, wal].append(
                    through_collector(args.collector, wal, kind, bodies, spans, args.traces)
                    if decoder == "otelcol" else
                    through_receiver(kind, bodies, spans, args.traces, wal, decoder))
        for decoder, wal in modes:
            wall, per_cpu, rss = (statistics.median(r[i] for r in runs[decoder, wal])
                                  for i in range(3))
            print(f"  {kind:18} {decoder:>8} {wal:>13} {wall:>10,.0f} {per_cpu:>12,.0f} "
                  f"{rss:>7.0f} MiB")
    if args.layers:
        print_layers(proto, spans, args.traces, args.repeat)
    if not args.collector:
        print("\nThe OpenTelemetry Collector beside it: --collector PATH (see docs/benchmarks.md).")


def print_layers(bodies: list[bytes], spans: int, traces: int, repeat: int) -> None:
    print(f"\n{'cut after each layer':20} {'layer':>16} {'spans/cpu-s':>12} {'µs/span':>8} "
          f"{'this layer':>11}")
    rows = [*LAYERS, "the sidecar"]
    for kind in ("grpc", "http-protobuf"):
        runs: dict[str, list[float]] = {row: [] for row in rows}
        for _ in range(repeat):  # interleaved, as above
            for row in rows:
                runs[row].append(through_layer(row, kind, bodies, spans) if row in LAYERS else
                                 through_receiver(kind, bodies, spans, traces, "off", "native")[1])
        below = 0.0
        for row in rows:
            per_cpu = statistics.median(runs[row])
            micros = 1e6 / per_cpu
            print(f"  {kind:18} {row:>16} {per_cpu:>12,.0f} {micros:>8.1f} {micros - below:>+11.1f}")
            below = micros


if __name__ == "__main__":
    main()
