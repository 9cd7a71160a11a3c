"""Hostile shapes: decode and assembly time of one trace built to make them work hard, at two
sizes, to show each grows in proportion (a 4x larger shape should take about 4x, not 16x).

    python bench/hostile_shapes.py [--sizes 5000,20000]

Each shape is one trace in one request, decoded by the compiled decoder and assembled into its
turn, as a receiver's request and the next tick would (both on the event loop's thread):
  indexed-fields   one OpenInference LLM span, N attributes llm.input_messages.0.message.k<i>
  indexed-groups   the same, N groups llm.input_messages.<N-i>.message.content, descending
  requested-calls  one chat span whose output message requests N tool calls
  documents        one retrieval span with N documents
  tool-spans       N executed tool spans under the root
CPU seconds of this process, one run each. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span  # noqa: E402
from prometheus_client import CollectorRegistry  # noqa: E402

from monitor.assemble import TurnAssembler  # noqa: E402
from monitor.config import AssemblySettings  # noqa: E402
from monitor.ingest.otlp import OtlpDecoder  # noqa: E402
from monitor.telemetry import Metrics  # noqa: E402


def trace(shape: str, n: int) -> bytes:
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    service = resource_spans.resource.attributes.add()
    service.key, service.value.string_value = "service.name", "bench"
    spans = resource_spans.scope_spans.add().spans

    def span(span_id: int, parent: int = 0, **attributes: str) -> Span:
        s = spans.add(trace_id=b"\x01" * 16, span_id=span_id.to_bytes(8, "big"), name="s",
                      start_time_unix_nano=1, end_time_unix_nano=2)
        if parent:
            s.parent_span_id = parent.to_bytes(8, "big")
        for key, value in attributes.items():
            attribute = s.attributes.add()
            attribute.key, attribute.value.string_value = key, value
        return s

    span(1, **{"assistant.question": "q?", "assistant.answer": "a."})
    if shape in ("indexed-fields", "indexed-groups"):
        llm = span(2, 1, **{"openinference.span.kind": "LLM"})
        for i in range(n):
            attribute = llm.attributes.add()
            attribute.key = (f"llm.input_messages.0.message.k{i}" if shape == "indexed-fields"
                             else f"llm.input_messages.{n - i}.message.content")
            attribute.value.string_value = "x"
    elif shape == "requested-calls":
        calls = [{"type": "tool_call", "id": f"c{i}", "name": "t", "arguments": {}}
                 for i in range(n)]
        span(2, 1, **{"gen_ai.operation.name": "chat", "gen_ai.output.messages":
                      json.dumps([{"role": "assistant", "parts": calls}])})
    elif shape == "documents":
        documents = [{"id": f"d{i}", "content": f"c{i}"} for i in range(n)]
        span(2, 1, **{"gen_ai.operation.name": "retrieval",
                      "gen_ai.retrieval.documents": json.dumps(documents)})
    else:  # tool-spans
        for i in range(n):
            span(10 + i, 1, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"})
    return request.SerializeToString()


def timed(body: bytes) -> tuple[float, float]:
    """(decode, assembly) CPU seconds."""
    decoder = OtlpDecoder(max_attribute_length=1 << 24, max_value_depth=16, native=True)
    now = [1000.0]
    assembler = TurnAssembler(
        AssemblySettings(root_grace_s=0, max_traces=10, max_spans=10_000_000,
                         max_spans_per_trace=10_000_000, max_size_mib=4096),
        Metrics(CollectorRegistry()), lambda: now[0])
    started = time.process_time()
    facts = decoder.decode("traces", body, "proto").facts
    decoded = time.process_time()
    assembler.add(facts)
    now[0] += 100
    assembler.expire()
    return decoded - started, time.process_time() - decoded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,20000")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"{'shape':<16} {'N':>7} {'body':>9}  {'decode s':>8}  {'assembly s':>10}")
    for shape in ("indexed-fields", "indexed-groups", "requested-calls", "documents",
                  "tool-spans"):
        for n in sizes:
            body = trace(shape, n)
            decode, assembly = timed(body)
            print(f"{shape:<16} {n:>7} {len(body):>9}  {decode:>8.3f}  {assembly:>10.3f}")


if __name__ == "__main__":
    main()
