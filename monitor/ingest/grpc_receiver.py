"""OTLP/gRPC receiver: TraceService/Export and LogsService/Export (default 127.0.0.1:4317).

The gRPC server is the compiled module's (tonic, on a thread of its own): it hands each call's
raw request bytes to the event loop, which serves it here and answers through the call. Requests
are decoded by `OtlpDecoder`, so a malformed payload is an INVALID_ARGUMENT naming the problem
rather than gRPC's generic deserialisation failure. Backpressure is RESOURCE_EXHAUSTED with a
google.rpc.RetryInfo, as the OTLP spec asks.
"""

from __future__ import annotations

import asyncio
import logging

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import error_details_pb2, status_pb2

from monitor import _native
from monitor.config import GrpcReceiverSettings, TLSSettings
from monitor.errors import RetryableError, wire_text
from monitor.ingest import Signal
from monitor.ingest.intake import Intake, Refused
from monitor.ingest.otlp import Batch

log = logging.getLogger(__name__)

TRACE_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LOGS_METHOD = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


class GrpcReceiver:
    def __init__(self, settings: GrpcReceiverSettings, tls: TLSSettings, intake: Intake) -> None:
        self.settings = settings
        self.tls = tls
        self.intake = intake
        self._server: _native.GrpcServer | None = None
        self.port: int | None = None

    async def start(self) -> None:
        tls = None
        if self.tls.enabled:
            assert self.tls.cert_file and self.tls.key_file
            tls = (self.tls.cert_file.read_bytes(), self.tls.key_file.read_bytes())
        server = _native.GrpcServer(self.settings.endpoint,
                                     self.settings.max_recv_msg_size_mib << 20, tls)
        asyncio.get_running_loop().add_reader(server.wake_fd, self._take_calls, server)
        self._server, self.port = server, server.port
        log.info("OTLP/gRPC receiver listening on %s (port %s)", self.settings.endpoint, self.port)

    async def stop(self, grace_s: float = 5.0) -> None:
        server = self._server
        if server is not None:  # calls in flight are served while the server's thread winds down
            await asyncio.to_thread(server.stop, grace_s)
            asyncio.get_running_loop().remove_reader(server.wake_fd)
            self._server = None

    def _take_calls(self, server: _native.GrpcServer) -> None:
        for call in server.take():
            self._serve(call)

    def _serve(self, call: _native.GrpcCall) -> None:
        """On the loop, without a task of its own (in a profile, creating and stepping one was a
        third of the hand-off's Python time): a request waiting for the write-ahead log's fsync
        is answered from the future's callback."""
        signal: Signal = call.signal
        try:
            self.intake.authenticate(call.authorization)
            self.intake.admit()
            batch, on_disk = self.intake.take(signal, call.body, "proto")
        except Exception as exc:
            self._refuse(call, signal, exc)
            return
        if on_disk is None:
            self._answer(call, signal, batch, None)
        else:
            on_disk.add_done_callback(
                lambda done: self._answer(call, signal, batch, done.exception()))

    def _answer(self, call: _native.GrpcCall, signal: Signal, batch: Batch,
                error: BaseException | None) -> None:
        if error is not None:
            self._refuse(call, signal, error)
            return
        self.intake.answered(signal, batch)
        call.respond(batch.response(signal).SerializeToString())

    def _refuse(self, call: _native.GrpcCall, signal: Signal, exc: BaseException) -> None:
        refusal = self.intake.refused(signal, exc)
        if refusal is None:
            call.fail(grpc.StatusCode.INTERNAL.value[0], "internal error")
        else:
            call.fail(*_status(refusal))


def _status(exc: Refused) -> tuple[int, str, bytes | None]:
    """(gRPC status code, message, google.rpc.Status details or None) for a refused request."""
    code: int = exc.grpc_code.value[0]
    if not isinstance(exc, RetryableError):
        return code, wire_text(exc), None
    status = status_pb2.Status(code=code, message=wire_text(exc))
    status.details.add().Pack(
        error_details_pb2.RetryInfo(retry_delay=Duration(seconds=exc.retry_after_s)))
    return code, wire_text(exc), status.SerializeToString()
