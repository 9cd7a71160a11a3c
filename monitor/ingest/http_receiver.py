"""OTLP/HTTP receiver: POST /v1/traces and /v1/logs (default 127.0.0.1:4318).

Accepts `application/x-protobuf` and `application/json` (OTLP/JSON, hex ids), gzip or identity.
Answers as the OTLP spec says: 200 with partial success, 400 with a google.rpc.Status naming
the problem, 401, 413, 415, and 429 (Retry-After) / 503 when the pipeline cannot take more.
Error bodies are encoded like the request, or as JSON when the request's type is unknown.

gzip is inflated here, not by aiohttp: in steps of `_INFLATE_STEP` with the event loop free in
between, and no further than the body-size limit, so a gzip bomb costs milliseconds, not seconds.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import zlib
from typing import Any

from aiohttp import web
from google.protobuf import json_format
from google.rpc import status_pb2

from monitor.config import HttpReceiverSettings, TLSSettings
from monitor.errors import PermanentError, RetryableError, wire_text
from monitor.ingest import Signal
from monitor.ingest.intake import Intake, Refused, outcome
from monitor.ingest.otlp import Format

log = logging.getLogger(__name__)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_FORMATS: dict[str, Format] = {PROTOBUF: "proto", JSON: "json"}
_GZIP = ("gzip", "x-gzip")
_IDENTITY = ("", "identity")
_INFLATE_STEP = 1 << 20  # bytes inflated between two turns of the event loop


async def _inflate(raw: bytes, limit: int) -> bytes:
    """gzip (one or more members) to bytes, at most `limit` of them; PermanentError otherwise."""
    out: list[bytes] = []
    size = 0
    data = raw
    while True:
        inflater = zlib.decompressobj(wbits=31)
        while not inflater.eof:
            try:
                chunk = inflater.decompress(data, _INFLATE_STEP)
            except zlib.error:
                raise PermanentError("body is not valid gzip", outcome="bad_encoding") from None
            data = inflater.unconsumed_tail
            if not chunk and not data:
                raise PermanentError("gzip body is truncated", outcome="bad_encoding")
            size += len(chunk)
            if size > limit:
                raise PermanentError(f"inflated body exceeds {limit >> 20} MiB", http_status=413)
            out.append(chunk)
            await asyncio.sleep(0)  # let other requests run between steps
        data = inflater.unused_data
        if not data:
            return b"".join(out)


def _encode(message: Any, fmt: Format) -> tuple[bytes, str]:
    if fmt == "proto":
        return message.SerializeToString(), PROTOBUF
    return json_format.MessageToJson(message, indent=None).encode(), JSON


class HttpReceiver:
    def __init__(self, settings: HttpReceiverSettings, tls: TLSSettings, intake: Intake) -> None:
        self.settings = settings
        self.tls = tls
        self.intake = intake
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> None:
        app = web.Application(client_max_size=self.settings.max_request_body_size_mib << 20)
        app.router.add_post("/v1/traces", lambda r: self._export(r, "traces"))
        app.router.add_post("/v1/logs", lambda r: self._export(r, "logs"))
        # auto_decompress off: aiohttp would inflate a gzip bomb to the end, on the loop.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     auto_decompress=False)
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

    def _error(self, exc: Refused, fmt: Format) -> web.Response:
        body, content_type = _encode(status_pb2.Status(message=wire_text(exc)), fmt)
        headers = {}
        if isinstance(exc, RetryableError):
            headers["Retry-After"] = str(exc.retry_after_s)
        response = web.Response(status=exc.http_status, body=body, content_type=content_type,
                                headers=headers)
        if outcome(exc) in ("bad_encoding", "too_large"):
            response.force_close()  # the client's stream is suspect: start the next one afresh
        return response

    async def _body(self, request: web.Request) -> bytes:
        limit = self.settings.max_request_body_size_mib << 20
        encoding = request.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in _GZIP and encoding not in _IDENTITY:
            raise PermanentError(f"unsupported Content-Encoding {encoding[:32]!r}; use gzip or "
                                 "identity", http_status=415, outcome="unsupported_encoding")
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise PermanentError(f"body exceeds {self.settings.max_request_body_size_mib} MiB",
                                 http_status=413) from None
        except web.RequestPayloadError:  # e.g. a chunked body cut short
            raise PermanentError("unreadable body", outcome="bad_encoding") from None
        return await _inflate(raw, limit) if encoding in _GZIP else raw

    async def _export(self, request: web.Request, signal: Signal) -> web.Response:
        fmt = _FORMATS.get(request.content_type)
        try:
            self.intake.authenticate(request.headers.get("Authorization"))
            if fmt is None:
                raise PermanentError(
                    f"unsupported Content-Type {request.content_type[:64]!r}; "
                    f"use {PROTOBUF} or {JSON}", http_status=415)
            self.intake.admit()
            batch, on_disk = self.intake.take(signal, await self._body(request), fmt)
            if on_disk is not None:  # answered once logged
                await on_disk
            response, content_type = _encode(batch.response(signal), fmt)
        except Exception as exc:
            refusal = self.intake.refused(signal, exc)
            if refusal is None:  # a bug: answered without the exception's text
                body, content_type = _encode(status_pb2.Status(message="internal error"),
                                             fmt or "json")
                return web.Response(status=500, body=body, content_type=content_type)
            return self._error(refusal, fmt or "json")
        self.intake.answered(signal, batch)
        return web.Response(body=response, content_type=content_type)
