"""Ingest: receivers (OTLP gRPC, OTLP HTTP) decode payloads into `SpanFacts` for assembly.

Receivers see the rest of the pipeline only through `SpanSink`.
"""

from __future__ import annotations

import asyncio
import hmac
from typing import Protocol

from monitor.errors import Unauthenticated
from monitor.ingest.otlp import Batch, Format, Signal

__all__ = ["Signal", "SpanSink", "check_bearer"]


class SpanSink(Protocol):
    def admit(self) -> None:
        """Raise RetryableError when the pipeline cannot take more now."""

    def consume(self, batch: Batch, receiver: str, signal: Signal) -> None:
        """Take a decoded batch; never raises."""

    def accept(self, batch: Batch, receiver: str, signal: Signal, body: bytes,
               fmt: Format) -> asyncio.Future[None] | None:
        """Take an OTLP receiver's decoded request and its body (logged, then consumed). It is
        durable once the future returned is done (None: at once): the receiver answers 2xx only
        then. RetryableError, raised or set on the future, when it cannot be logged."""


def check_bearer(header: str | None, token: str | None) -> None:
    """Raise Unauthenticated unless `header` is `Bearer <token>` (or no token is configured)."""
    if token is None:
        return
    scheme, _, value = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
        raise Unauthenticated("missing or invalid bearer token")
