"""The few errors the sidecar distinguishes, and their wire mapping (done once, here).

    MonitorError
    ├── ConfigError        invalid settings; start-up stops, naming every bad key
    ├── PermanentError     the payload is bad; retrying the same bytes cannot help (400, 415, 413)
    ├── Unauthenticated    missing or wrong bearer token (401)
    └── RetryableError     the pipeline is full or stopping; retry later (429 / 503)
"""

from __future__ import annotations

import grpc


class MonitorError(Exception):
    """Base of the sidecar's own errors."""


class ConfigError(MonitorError):
    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid configuration:\n" + "\n".join(f"  {p}" for p in problems))


class PermanentError(MonitorError):
    """A payload that will never be accepted; `http_status` says why (400, 413, 415)."""

    def __init__(self, message: str, http_status: int = 400, outcome: str | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.outcome = outcome  # the receiver-requests outcome label, when not the status's

    @property
    def grpc_code(self) -> grpc.StatusCode:
        return grpc.StatusCode.INVALID_ARGUMENT


class Unauthenticated(MonitorError):
    http_status = 401
    grpc_code = grpc.StatusCode.UNAUTHENTICATED


class RetryableError(MonitorError):
    """The sidecar cannot take more now. `overloaded` → 429 / RESOURCE_EXHAUSTED with a retry
    delay (the OTLP spec's backpressure signal); otherwise 503 / UNAVAILABLE (shutting down)."""

    def __init__(self, message: str, *, overloaded: bool = True, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.overloaded = overloaded
        self.retry_after_s = retry_after_s

    @property
    def http_status(self) -> int:
        return 429 if self.overloaded else 503

    @property
    def grpc_code(self) -> grpc.StatusCode:
        return grpc.StatusCode.RESOURCE_EXHAUSTED if self.overloaded else grpc.StatusCode.UNAVAILABLE


def wire_text(exc: BaseException, limit: int = 1024) -> str:
    """An error's message as it may go on the wire: valid UTF-8 (a lone surrogate would make
    building the error response fail in turn) and bounded."""
    text = str(exc).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"
