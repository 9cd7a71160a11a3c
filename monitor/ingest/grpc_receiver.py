"""OTLP/gRPC receiver: TraceService/Export and LogsService/Export (default 127.0.0.1:4317).

Requests are taken as raw bytes and decoded by `OtlpDecoder`, so a malformed payload is an
INVALID_ARGUMENT naming the problem rather than gRPC's generic deserialisation failure.
Backpressure is RESOURCE_EXHAUSTED with a google.rpc.RetryInfo, as the OTLP spec asks.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from monitor.config import GrpcReceiverSettings, TLSSettings
from monitor.errors import (
    MonitorError,
    PermanentError,
    RetryableError,
    Unauthenticated,
    wire_text,
)
from monitor.ingest import Signal, SpanSink, check_bearer
from monitor.ingest.otlp import OtlpDecoder
from monitor.ingest.telemetry import IngestTelemetry

log = logging.getLogger(__name__)

TRACE_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LOGS_METHOD = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


def _outcome(exc: MonitorError) -> str:
    if isinstance(exc, RetryableError):
        return "overloaded" if exc.overloaded else "unavailable"
    if isinstance(exc, Unauthenticated):
        return "unauthenticated"
    return "malformed"


class GrpcReceiver:
    def __init__(self, settings: GrpcReceiverSettings, tls: TLSSettings, decoder: OtlpDecoder,
                 sink: SpanSink, metrics: IngestTelemetry, bearer_token: str | None = None) -> None:
        self.settings = settings
        self.tls = tls
        self.decoder = decoder
        self.sink = sink
        self.metrics = metrics
        self.token = bearer_token
        self._server: grpc.aio.Server | None = None
        self.port: int | None = None

    async def start(self) -> None:
        limit = self.settings.max_recv_msg_size_mib << 20
        server = grpc.aio.server(options=[("grpc.max_receive_message_length", limit)])
        handlers = {
            "Export": grpc.unary_unary_rpc_method_handler(
                self._handler("traces"),
                response_serializer=ExportTraceServiceResponse.SerializeToString),
        }
        server.add_generic_rpc_handlers([
            grpc.method_handlers_generic_handler(
                "opentelemetry.proto.collector.trace.v1.TraceService", handlers),
            grpc.method_handlers_generic_handler(
                "opentelemetry.proto.collector.logs.v1.LogsService", {
                    "Export": grpc.unary_unary_rpc_method_handler(
                        self._handler("logs"),
                        response_serializer=ExportLogsServiceResponse.SerializeToString)}),
        ])
        if self.tls.enabled:
            assert self.tls.cert_file and self.tls.key_file
            creds = grpc.ssl_server_credentials(
                [(self.tls.key_file.read_bytes(), self.tls.cert_file.read_bytes())])
            self.port = server.add_secure_port(self.settings.endpoint, creds)
        else:
            self.port = server.add_insecure_port(self.settings.endpoint)
        await server.start()
        self._server = server
        log.info("OTLP/gRPC receiver listening on %s (port %s)", self.settings.endpoint, self.port)

    async def stop(self, grace_s: float = 5.0) -> None:
        if self._server is not None:
            await self._server.stop(grace_s)
            self._server = None

    def _handler(self, signal: Signal) -> Callable[[bytes, grpc.aio.ServicerContext],
                                                   Awaitable[Any]]:
        async def export(request: bytes, context: grpc.aio.ServicerContext) -> Any:
            try:
                metadata = dict(context.invocation_metadata() or ())
                check_bearer(metadata.get("authorization"), self.token)
                self.sink.admit()
                batch = self.decoder.decode(signal, request, "proto")
                await self.sink.accept(batch, "grpc", signal, request, "proto")  # logged first
            except (PermanentError, RetryableError, Unauthenticated) as exc:
                self.metrics.receiver_requests.labels("grpc", signal, _outcome(exc)).inc()
                await self._abort(context, exc)
                raise AssertionError("unreachable") from None  # abort raises
            except Exception as exc:  # a bug: grpc would log it with its text, which may quote
                log.error("OTLP/gRPC export failed: %s", type(exc).__name__)  # trace content
                self.metrics.receiver_requests.labels("grpc", signal, "internal_error").inc()
                await context.abort(grpc.StatusCode.INTERNAL, "internal error")
            outcome = "partial" if batch.rejected_total else "accepted"
            self.metrics.receiver_requests.labels("grpc", signal, outcome).inc()
            return batch.response(signal)

        return export

    @staticmethod
    async def _abort(context: grpc.aio.ServicerContext, exc: MonitorError) -> None:
        code = exc.grpc_code  # type: ignore[attr-defined]
        if isinstance(exc, RetryableError):
            status = status_pb2.Status(code=code.value[0], message=wire_text(exc))
            status.details.add().Pack(
                error_details_pb2.RetryInfo(retry_delay=Duration(seconds=exc.retry_after_s)))
            context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
        await context.abort(code, wire_text(exc))
