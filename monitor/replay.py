"""Replay recorded OTLP through the same pipeline as live traffic.

Files as the OpenTelemetry Collector's file exporter writes them: OTLP/JSON, one
ExportTraceServiceRequest per line (`format: json`), or length-prefixed protobuf (`format: proto`,
each message preceded by its size as a 4-byte big-endian integer). Logs requests are not replayed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from monitor.errors import PermanentError
from monitor.ingest.otlp import Format


def read_requests(path: Path) -> Iterator[tuple[bytes, Format]]:
    data = path.read_bytes()
    if data.lstrip()[:1] == b"{":
        for line in data.splitlines():
            if line.strip():
                yield line, "json"
        return
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            raise PermanentError(f"{path}: truncated length prefix at byte {offset}")
        (size,) = struct.unpack_from(">I", data, offset)
        offset += 4
        if offset + size > len(data):
            raise PermanentError(f"{path}: message at byte {offset - 4} runs past the end")
        yield data[offset:offset + size], "proto"
        offset += size


def write_requests(path: Path, bodies: list[bytes]) -> None:
    """Write length-prefixed protobuf, as the Collector's file exporter does (for tests, tools)."""
    with path.open("wb") as out:
        for body in bodies:
            out.write(struct.pack(">I", len(body)) + body)
