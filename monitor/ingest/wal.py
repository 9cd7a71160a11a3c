"""Write-ahead log of accepted OTLP requests: what a receiver acknowledged survives kill -9.

    wal = WriteAheadLog(directory, settings.wal, metrics)
    for record in wal.replay():                  # on start: requests whose turns were not settled
        ...decode, keep the facts for which not wal.settled_after(trace_id, record.lsn)
    wal.start()                                  # a new segment; replayed ones stay until trimmed
    lsn = wal.append("traces", "proto", body)    # before consuming; RetryableError when full
    wal.track(lsn, trace_ids, holds)             # after consuming: which traces it keeps open
    wal.on_disk(lsn)                             # None, or a future done once it is fsync'd
                                                 # (group commit): then the receiver answers 2xx
    wal.settle(trace_id)                         # its turn is stored or decided against
    wal.trim()                                   # on every tick: drop segments fully settled

The raw request bodies are logged, not the decoded facts: the receiver already holds the bytes, so
logging costs a write and no serialisation, the bytes are OTLP (stable across versions of this
code), and replay goes through the same decoder and checks as live traffic.

On disk: segment files `<first lsn>.wal`, each a run of records
`<u32 length><u32 crc32><u8 kind><payload>`, numbered (lsn) in order across segments. A `settled`
record lists trace ids whose turns were settled; replay skips a trace's data logged before its last
`settled` record, so a turn is judged at most once even when its segment outlives it. A segment is
deleted once every trace logged in it is settled (lsn below the oldest open trace's first record).
A torn or corrupt record (a crash mid-write) ends the reading of its segment: counted and logged,
without content, and replay goes on with the next segment.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from monitor import _native
from monitor.config import WalSettings
from monitor.errors import RetryableError
from monitor.ingest.otlp import Format, Signal
from monitor.ingest.telemetry import IngestTelemetry

log = logging.getLogger(__name__)

_HEADER = struct.Struct("<IIB")  # payload length, crc32 of kind + payload, kind
_SETTLED = 9
_KINDS: dict[tuple[Signal, Format], int] = {("traces", "proto"): 1, ("traces", "json"): 2,
                                             ("logs", "proto"): 3, ("logs", "json"): 4}
_SIGNALS = {kind: key for key, kind in _KINDS.items()}
_MAX_RECORD = 1 << 30  # a length beyond this is corruption, not a request
_SUFFIX = ".wal"
# A group commit waits this long before it fsyncs, so that the requests already on their way
# (their senders were answered by the last fsync) share it: with 4 in flight, fsyncs a request
# fell from 0.6 to 0.4, each ~150 µs of kernel CPU (PostgreSQL's commit_delay, MySQL's
# binlog_group_commit_sync_delay).
_COMMIT_DELAY_S = 0.001


@dataclass(frozen=True, slots=True)
class Record:
    lsn: int
    signal: Signal
    fmt: Format
    body: bytes


@dataclass(slots=True)
class _Segment:
    first_lsn: int
    path: Path
    size: int


# The CRC-32 of each kind's byte: a record's checksum resumes from it.
_KIND_CRC = {kind: zlib.crc32(bytes((kind,))) for kind in (*_SIGNALS, _SETTLED)}


def _checksum(kind: int, payload: bytes) -> int:
    """zlib's CRC-32 of kind + payload, compiled: zlib's own cost a twentieth of a span's
    ingest (65 µs for a request of 100 spans)."""
    checksum: int = _native.crc32(payload, _KIND_CRC[kind])
    return checksum


def _fsync_failed(exc: OSError) -> RetryableError:
    """Logged; the error for the requests whose records it leaves not known to be on disk."""
    log.error("write-ahead log: fsync failed: %s", exc.strerror)
    return RetryableError(f"write-ahead log: fsync failed ({exc.strerror})", overloaded=False)


def _frame(kind: int, payload: bytes) -> bytes:
    return _HEADER.pack(len(payload), _checksum(kind, payload), kind) + payload


class WriteAheadLog:
    def __init__(self, directory: Path, settings: WalSettings, metrics: IngestTelemetry) -> None:
        self.directory = directory
        self.settings = settings
        self.metrics = metrics
        self.max_bytes = settings.max_size_mib << 20
        # Read at each scrape, so always current: a full log shows full while it refuses.
        metrics.wal_bytes.set_function(lambda: self.size)
        self._segments: list[_Segment] = []  # oldest first; the last one is being written
        self._fd: int | None = None
        self._next_lsn = 0
        self._synced_lsn = -1
        self._flush: asyncio.Task[None] | None = None  # the group commit, while requests wait
        self._fsyncing = False  # its thread is in fsync: the file may not be switched
        self._switch_failing = False  # the last try to start a new segment failed (logged)
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []  # (lsn, done once on disk)
        self._open: OrderedDict[bytes, int] = OrderedDict()  # trace id -> first lsn; in lsn order
        self._settled: list[bytes] = []  # trace ids to write in the next `settled` record
        self._replay_settled: dict[bytes, int] = {}  # during replay: trace id -> last settled lsn

    # -- start-up ------------------------------------------------------------------------------

    def replay(self) -> Iterator[Record]:
        """Every logged request, oldest first (the caller skips settled traces' facts)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        paths = sorted(p for p in self.directory.iterdir() if p.suffix == _SUFFIX
                       and p.stem.isdigit() and p.is_file())
        self._segments = [_Segment(int(p.stem), p, p.stat().st_size) for p in paths]
        for segment in self._segments:  # first pass: which traces were settled, and when
            for lsn, kind, payload in self._read(segment, report=False):
                if kind == _SETTLED:
                    for i in range(0, len(payload), 16):
                        self._replay_settled[payload[i:i + 16]] = lsn
        for segment in self._segments:
            count = 0
            for lsn, kind, payload in self._read(segment, report=True):
                count += 1
                if kind in _SIGNALS:
                    signal, fmt = _SIGNALS[kind]
                    yield Record(lsn, signal, fmt, payload)
            self._next_lsn = max(self._next_lsn, segment.first_lsn + count)

    def settled_after(self, trace_id: bytes, lsn: int) -> bool:
        """During replay: was this trace settled after record `lsn` was logged?"""
        return self._replay_settled.get(trace_id, -1) > lsn

    def _read(self, segment: _Segment, report: bool) -> Iterator[tuple[int, int, bytes]]:
        data = segment.path.read_bytes()
        offset, lsn = 0, segment.first_lsn
        while offset < len(data):
            problem = None
            if offset + _HEADER.size > len(data):
                problem = "torn"
            else:
                length, crc, kind = _HEADER.unpack_from(data, offset)
                end = offset + _HEADER.size + length
                if length > _MAX_RECORD or (kind not in _SIGNALS and kind != _SETTLED):
                    problem = "corrupt"
                elif end > len(data):
                    problem = "torn"
                elif _checksum(kind, data[offset + _HEADER.size:end]) != crc:
                    problem = "corrupt"
            if problem is not None:
                if report:
                    self.metrics.wal_records_skipped.labels(problem).inc()
                    log.warning("write-ahead log: %s record in %s at byte %d (a crash mid-write?);"
                                " skipped it and the rest of that segment", problem,
                                segment.path.name, offset)
                return
            yield lsn, kind, data[offset + _HEADER.size:end]
            offset, lsn = end, lsn + 1

    def start(self) -> None:
        """Write into a new segment; replayed segments stay until their traces are settled."""
        self._replay_settled = {}
        self.directory.mkdir(parents=True, exist_ok=True)
        if self._segments and self._segments[-1].first_lsn == self._next_lsn:
            self._segments.pop()  # no valid record in it: the new segment replaces it
        self._open_segment()

    # -- the write path ------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def full(self) -> bool:
        return self.size >= self.max_bytes

    def append(self, signal: Signal, fmt: Format, body: bytes) -> int:
        """Log one accepted request before it is consumed; its lsn. RetryableError when the log
        is full (its turns are not settled yet) or cannot be written."""
        if self.full:
            self.metrics.wal_refusals.inc()
            raise RetryableError(f"write-ahead log is full ({self.settings.max_size_mib} MiB of "
                                 "requests whose turns are not settled yet); retry later")
        lsn = self._write(_frame(_KINDS[signal, fmt], body))
        try:
            self._maybe_rotate()
        except OSError as exc:  # fsyncing the segment it left: this request is not on disk
            raise _fsync_failed(exc) from None
        return lsn

    def track(self, lsn: int, trace_ids: Iterable[bytes], holds: Callable[[bytes], bool]) -> None:
        """After the request was consumed: traces still held stay open from `lsn` on; the rest
        (late spans, refused traces) are settled already."""
        for trace_id in trace_ids:
            if holds(trace_id):
                self._open.setdefault(trace_id, lsn)
            else:
                self._settled.append(trace_id)

    def on_disk(self, lsn: int) -> asyncio.Future[None] | None:
        """None if record `lsn` is on disk already (or fsync is off); else a future done once it
        is, or failed with RetryableError if the fsync failed. One fsync covers every record
        appended before it began: requests that arrive while one runs share the next."""
        if not self.settings.fsync or self._synced_lsn >= lsn:
            return None
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters.append((lsn, waiter))
        if self._flush is None:
            self._flush = loop.create_task(self._group_commit())
        return waiter

    async def _group_commit(self) -> None:
        try:
            while self._waiters:
                await asyncio.sleep(_COMMIT_DELAY_S)
                upto, fd = self._next_lsn - 1, self._fd
                assert fd is not None
                started = time.perf_counter()
                self._fsyncing = True
                try:
                    await asyncio.to_thread(os.fsync, fd)
                except OSError as exc:
                    self._settle_waiters(upto, _fsync_failed(exc))
                    continue
                finally:
                    self._fsyncing = False
                self.metrics.wal_fsync_seconds.observe(time.perf_counter() - started)
                self._synced_lsn = max(self._synced_lsn, upto)
                self._maybe_rotate()  # may fsync what was appended meanwhile: synced_lsn moves
                self._settle_waiters(self._synced_lsn, None)
        except OSError as exc:  # fsyncing the segment left by a switch: none is left waiting
            self._settle_waiters(self._next_lsn, _fsync_failed(exc))
        finally:
            self._flush = None

    def _settle_waiters(self, upto: int, error: RetryableError | None) -> None:
        waiting = []
        for lsn, waiter in self._waiters:
            if lsn > upto:
                waiting.append((lsn, waiter))
            elif waiter.done():  # its request was given up (an HTTP client gone)
                pass
            elif error is None:
                waiter.set_result(None)
            else:
                waiter.set_exception(error)
        self._waiters = waiting

    def settle(self, trace_id: bytes) -> None:
        """The trace's turn is persisted in the store or decided against: it need not replay."""
        if self._open.pop(trace_id, None) is not None:
            self._settled.append(trace_id)

    def trim(self) -> None:
        """Record what was settled, then delete the segments whose traces are all settled."""
        if self._fd is None:
            return
        if self._settled:
            self._write(_frame(_SETTLED, b"".join(self._settled)))
            self._settled = []
        checkpoint = next(iter(self._open.values()), self._next_lsn)
        while len(self._segments) > 1 and self._segments[1].first_lsn <= checkpoint:
            oldest = self._segments.pop(0)
            oldest.path.unlink(missing_ok=True)

    async def close(self) -> None:
        """After a clean stop: with nothing open, the log is empty and its files go."""
        if self._fd is None:
            return
        while self._flush is not None:  # its thread still uses the file descriptor
            await asyncio.shield(self._flush)
        self.trim()
        if self.settings.fsync:
            os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
        if not self._open:
            for segment in self._segments:
                segment.path.unlink(missing_ok=True)
            self._segments = []

    # -- internals -----------------------------------------------------------------------------

    def _write(self, record: bytes) -> int:
        assert self._fd is not None, "start() the write-ahead log first"
        try:
            written = os.write(self._fd, record)
            while written < len(record):  # short writes happen on full disks and signals
                written += os.write(self._fd, record[written:])
        except OSError as exc:
            log.error("write-ahead log: write failed: %s", exc.strerror)
            raise RetryableError(f"write-ahead log: write failed ({exc.strerror})",
                                 overloaded=False) from None
        self._segments[-1].size += len(record)
        lsn = self._next_lsn
        self._next_lsn += 1
        return lsn

    def _maybe_rotate(self) -> None:
        """Start a new segment when this one is big enough (never while an fsync is running).
        If the new one cannot be created, this one grows on: what it holds is safe, so no
        request fails for it; logged once, and tried again at the next record."""
        if self._segments[-1].size < self.settings.segment_size_mib << 20 or self._fsyncing:
            return
        old = self._fd
        assert old is not None
        try:
            self._open_segment()
        except OSError as exc:
            if not self._switch_failing:
                log.error("write-ahead log: starting a new segment failed (%s); writing on in %s",
                          exc.strerror, self._segments[-1].path.name)
            self._switch_failing = True
            return
        self._switch_failing = False
        try:
            if self.settings.fsync:
                os.fsync(old)  # what was appended to it since the last group commit
                self._synced_lsn = self._next_lsn - 1
        finally:
            os.close(old)

    def _open_segment(self) -> None:
        """Create the next segment and write into it; on failure nothing changes."""
        path = self.directory / f"{self._next_lsn:016d}{_SUFFIX}"
        # O_TRUNC: the only file that can have this name holds no valid record (see start()).
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        try:
            if self.settings.fsync:  # the new file's name must survive a power cut too
                directory = os.open(self.directory, os.O_RDONLY)
                try:
                    os.fsync(directory)
                finally:
                    os.close(directory)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        self._fd = fd
        self._segments.append(_Segment(self._next_lsn, path, 0))
