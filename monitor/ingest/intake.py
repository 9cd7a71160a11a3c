"""What every receiver does with a request, written once: the bearer token, admission (both before
the body is read), decoding, acceptance (logged to the write-ahead log, then assembled), and the
count of its outcome. OTLP/gRPC and OTLP/HTTP call it per request, the Kafka source per message
(no token: the topic's ACLs stand for it; no write-ahead log: the topic is the log).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from monitor.errors import MonitorError, PermanentError, RetryableError, Unauthenticated
from monitor.ingest import SpanSink, check_bearer
from monitor.ingest.otlp import Batch, Format, OtlpDecoder, Signal
from monitor.ingest.telemetry import IngestTelemetry

log = logging.getLogger(__name__)

_STATUS_OUTCOMES = {413: "too_large", 415: "unsupported_media_type"}

# A request refused, as its receiver answers it (each has its HTTP status and gRPC code).
Refused: TypeAlias = PermanentError | RetryableError | Unauthenticated


def outcome(exc: MonitorError) -> str:
    """The `assistant_receiver_requests` outcome of a refused request."""
    if isinstance(exc, RetryableError):
        return "overloaded" if exc.overloaded else "unavailable"
    if isinstance(exc, Unauthenticated):
        return "unauthenticated"
    if isinstance(exc, PermanentError):
        return exc.outcome or _STATUS_OUTCOMES.get(exc.http_status, "malformed")
    return "malformed"


@dataclass
class Intake:
    """One receiver's way in: `receiver` names it in the metrics; `token`, the bearer token its
    clients must give (None: none asked); `log_requests`, whether an accepted request goes to
    the write-ahead log before it is acknowledged."""

    receiver: str
    decoder: OtlpDecoder
    sink: SpanSink
    metrics: IngestTelemetry
    token: str | None = None
    log_requests: bool = True

    def authenticate(self, authorization: str | None) -> None:
        """Unauthenticated unless the request's Authorization header has the bearer token."""
        check_bearer(authorization, self.token)

    def admit(self) -> None:
        """RetryableError when the pipeline cannot take more now: before a body is read or
        inflated."""
        self.sink.admit()

    def take(self, signal: Signal, body: bytes, fmt: Format,
             keep: Callable[[Batch], None] | None = None) -> tuple[Batch, asyncio.Future[None] | None]:
        """Decode a request and pass its spans on (`keep` may drop some first). Returns the
        batch and, when it is being logged, the future done once it is on disk: answer 2xx
        only then. PermanentError names what is wrong with the body."""
        batch = self.decoder.decode(signal, body, fmt)
        if keep is not None:
            keep(batch)
        if not self.log_requests:
            self.sink.consume(batch, self.receiver, signal)
            return batch, None
        return batch, self.sink.accept(batch, self.receiver, signal, body, fmt)

    def answered(self, signal: Signal, batch: Batch) -> None:
        outcome = "partial" if batch.rejected_total else "accepted"
        self.metrics.receiver_requests.labels(self.receiver, signal, outcome).inc()

    def refused(self, signal: Signal, exc: BaseException) -> Refused | None:
        """Count a refused request by its outcome and return its error to answer with; None
        for a bug, counted as internal_error and logged by type only (its text may quote trace
        content): answer "internal error"."""
        if isinstance(exc, PermanentError | RetryableError | Unauthenticated):
            self.metrics.receiver_requests.labels(self.receiver, signal, outcome(exc)).inc()
            return exc
        log.error("OTLP/%s export failed: %s", self.receiver, type(exc).__name__)
        self.metrics.receiver_requests.labels(self.receiver, signal, "internal_error").inc()
        return None
