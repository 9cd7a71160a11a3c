"""OTLP/HTTP receiver: POST /v1/traces and /v1/logs (default 127.0.0.1:4318).

Accepts `application/x-protobuf` and `application/json` (OTLP/JSON, hex ids), gzip or identity.
Answers as the OTLP spec says: 200 with partial success, 400 with a google.rpc.Status naming
the problem, 401, 413, 415, and 429 (Retry-After) / 503 when the pipeline cannot take more.
Error bodies are encoded like the request, or as JSON when the request's type is unknown.
"""

from __future__ import annotations

import logging
import ssl
from typing import Any

from aiohttp import web
from google.protobuf import json_format
from google.rpc import status_pb2

from monitor.config import HttpReceiverSettings, TLSSettings
from monitor.emit.metrics import Metrics
from monitor.errors import MonitorError, PermanentError, RetryableError, Unauthenticated
from monitor.ingest import Signal, SpanSink, check_bearer
from monitor.ingest.otlp import Format, OtlpDecoder

log = logging.getLogger(__name__)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_FORMATS: dict[str, Format] = {PROTOBUF: "proto", JSON: "json"}
_OUTCOMES = {400: "malformed", 401: "unauthenticated", 413: "too_large",
             415: "unsupported_media_type", 429: "overloaded", 503: "unavailable"}


def _encode(message: Any, fmt: Format) -> tuple[bytes, str]:
    if fmt == "proto":
        return message.SerializeToString(), PROTOBUF
    return json_format.MessageToJson(message, indent=None).encode(), JSON


class HttpReceiver:
    def __init__(self, settings: HttpReceiverSettings, tls: TLSSettings, decoder: OtlpDecoder,
                 sink: SpanSink, metrics: Metrics, bearer_token: str | None = None) -> None:
        self.settings = settings
        self.tls = tls
        self.decoder = decoder
        self.sink = sink
        self.metrics = metrics
        self.token = bearer_token
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> None:
        app = web.Application(client_max_size=self.settings.max_request_body_size_mib << 20)
        app.router.add_post("/v1/traces", lambda r: self._export(r, "traces"))
        app.router.add_post("/v1/logs", lambda r: self._export(r, "logs"))
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        host, _, port = self.settings.endpoint.rpartition(":")
        context = None
        if self.tls.enabled:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(str(self.tls.cert_file), str(self.tls.key_file))
        site = web.TCPSite(self._runner, host.strip("[]"), int(port), ssl_context=context)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        log.info("OTLP/HTTP receiver listening on %s (port %s)", self.settings.endpoint, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _error(self, signal: Signal, exc: MonitorError, status: int, fmt: Format) -> web.Response:
        self.metrics.receiver_requests.labels("http", signal, _OUTCOMES.get(status, "malformed")).inc()
        body, content_type = _encode(status_pb2.Status(message=str(exc)), fmt)
        headers = {}
        if isinstance(exc, RetryableError):
            headers["Retry-After"] = str(exc.retry_after_s)
        return web.Response(status=status, body=body, content_type=content_type, headers=headers)

    async def _export(self, request: web.Request, signal: Signal) -> web.Response:
        fmt = _FORMATS.get(request.content_type)
        try:
            check_bearer(request.headers.get("Authorization"), self.token)
            if fmt is None:
                raise PermanentError(
                    f"unsupported Content-Type {request.content_type!r}; "
                    f"use {PROTOBUF} or {JSON}", http_status=415)
            self.sink.admit()
            try:
                body = await request.read()
            except web.HTTPRequestEntityTooLarge:
                raise PermanentError(
                    f"body exceeds {self.settings.max_request_body_size_mib} MiB",
                    http_status=413) from None
            except web.RequestPayloadError as exc:  # e.g. a body that is not the gzip it claims
                raise PermanentError(f"unreadable body: {exc}") from None
            batch = self.decoder.decode(signal, body, fmt)
            await self.sink.accept(batch, "http", signal, body, fmt)  # logged before the answer
        except PermanentError as exc:
            return self._error(signal, exc, exc.http_status, fmt or "json")
        except (RetryableError, Unauthenticated) as exc:
            return self._error(signal, exc, exc.http_status, fmt or "json")
        outcome = "partial" if batch.rejected_total else "accepted"
        self.metrics.receiver_requests.labels("http", signal, outcome).inc()
        body, content_type = _encode(batch.response(signal), fmt)
        return web.Response(body=body, content_type=content_type)
