"""Durability: what an OTLP receiver acknowledged survives kill -9 (the write-ahead log), and a
torn record or a full log is handled without loss or unbounded growth."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import sqlite3
import struct
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
from prometheus_client import CollectorRegistry

from monitor.config import WalSettings
from monitor.errors import RetryableError
from monitor.ingest.wal import WriteAheadLog
from monitor.telemetry import Metrics
from tests import traffic
from tests.conftest import SidecarProcess
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import ScriptedOpenAIServer
from tests.test_receivers import BlockedStage  # takes one turn, then holds until released
from tests.waiting import wait_until

CANARY = "CANARY-wal-5d1c"


# ------------------------------------------------------------------------ the log on its own

def _log(directory: Path) -> tuple[WriteAheadLog, Metrics]:
    metrics = Metrics(CollectorRegistry())
    return WriteAheadLog(directory, WalSettings(), metrics), metrics


@pytest.mark.unit
def test_a_log_framed_with_zlibs_crc_replays(tmp_path: Path) -> None:
    """The records' checksum is zlib's CRC-32 (computed compiled): a log written by an earlier
    version, framed here with zlib itself, replays whole, and a flipped byte is caught."""
    rng = random.Random(5)
    bodies = [rng.randbytes(n) for n in (0, 1, 7, 64, 1000, 83_000)]
    frames = b"".join(
        struct.pack("<IIB", len(body), zlib.crc32(body, zlib.crc32(b"\x01")), 1) + body
        for body in bodies)
    (tmp_path / "0.wal").write_bytes(frames)
    log, metrics = _log(tmp_path)
    assert [r.body for r in log.replay()] == bodies
    damaged = bytearray(frames)
    damaged[-1000] ^= 0x40  # in the last body
    (tmp_path / "0.wal").write_bytes(bytes(damaged))
    log, metrics = _log(tmp_path)
    assert [r.body for r in log.replay()] == bodies[:-1]
    assert metrics.registry.get_sample_value("assistant_wal_records_skipped_total",
                                             {"reason": "corrupt"}) == 1


@pytest.mark.unit
def test_one_fsync_covers_the_waiting_requests_and_a_failed_one_is_retryable(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        wal, metrics = _log(tmp_path)
        list(wal.replay())
        wal.start()
        lsns = [wal.append("traces", "proto", b"x" * n) for n in (10, 20, 30)]
        waiting = [wal.on_disk(lsn) for lsn in lsns]
        await asyncio.gather(*waiting)  # type: ignore[arg-type]
        assert metrics.registry.get_sample_value("assistant_wal_fsync_seconds_count") == 1
        assert wal.on_disk(lsns[-1]) is None  # on disk already: nothing to wait for

        lsn = wal.append("traces", "proto", b"y")
        failing = wal.on_disk(lsn)
        read, write = os.pipe()  # the group commit fsyncs a pipe: the OS refuses (EINVAL)
        real, wal._fd = wal._fd, read
        try:
            with pytest.raises(RetryableError, match="fsync failed"):
                await failing  # type: ignore[misc]
        finally:
            wal._fd = real
            os.close(read)
            os.close(write)
        await wal.on_disk(lsn)  # type: ignore[misc]  # asked again: the next fsync succeeds
        assert metrics.registry.get_sample_value("assistant_wal_fsync_seconds_count") == 2
        await wal.close()

    asyncio.run(scenario())


@pytest.mark.unit
def test_a_segment_that_cannot_be_started_leaves_the_log_writing_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A record appended while the group commit's fsync runs fills the segment: the switch waits
    for that fsync. When the new segment cannot be created (a directory squats its name), the
    requests waiting are answered all the same, their records being on disk; the log writes on in
    the full segment, says so once, and switches at a later record; nothing is lost on replay."""
    async def scenario() -> list[bytes]:
        wal = WriteAheadLog(tmp_path, WalSettings(segment_size_mib=1),
                            Metrics(CollectorRegistry()))
        list(wal.replay())
        wal.start()
        first = wal.on_disk(wal.append("traces", "proto", b"a"))
        async with asyncio.timeout(10):
            while not wal._fsyncing:  # the group commit's fsync is on its thread
                await asyncio.sleep(0)
        full = wal.append("traces", "proto", b"b" * (1 << 20))  # no switch during an fsync
        squatter = tmp_path / f"{full + 1:016d}.wal"
        squatter.mkdir()
        await asyncio.wait_for(asyncio.gather(first, wal.on_disk(full)), 10)  # type: ignore[arg-type]
        assert len(list(tmp_path.glob("*.wal"))) == 2  # the full segment and the squatter
        last = wal.append("traces", "proto", b"c")
        assert sum(p.is_file() for p in tmp_path.glob("*.wal")) == 2  # switched after it
        assert wal.on_disk(last) is None  # the switch fsynced the full segment
        os.close(wal._fd)  # type: ignore[arg-type]  # stopped as by a crash
        return [r.body for r in WriteAheadLog(tmp_path, WalSettings(), Metrics(
            CollectorRegistry())).replay()]

    with caplog.at_level(logging.ERROR, logger="monitor.ingest.wal"):
        bodies = asyncio.run(scenario())
    assert bodies == [b"a", b"b" * (1 << 20), b"c"]
    assert [r.getMessage() for r in caplog.records] == [
        "write-ahead log: starting a new segment failed (Is a directory); writing on in "
        "0000000000000000.wal"]


@pytest.mark.unit
def test_torn_last_record_is_skipped_counted_and_replay_goes_on(tmp_path: Path, caplog) -> None:
    first, _ = _log(tmp_path)
    assert list(first.replay()) == []
    first.start()
    bodies = [f"request {n} {CANARY}".encode() for n in range(3)]
    for body in bodies:
        first.append("traces", "proto", body)
    [segment] = tmp_path.glob("*.wal")
    segment.write_bytes(segment.read_bytes()[:-7])  # the crash came in the middle of the third

    second, metrics = _log(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert [r.body for r in second.replay()] == bodies[:2]
    assert metrics.registry.get_sample_value("assistant_wal_records_skipped_total",
                                             {"reason": "torn"}) == 1
    assert "torn record" in caplog.text and CANARY not in caplog.text
    second.start()  # a new segment: nothing is ever appended after a torn record
    lsn = second.append("logs", "json", b"{}")
    assert lsn == 2

    third, metrics = _log(tmp_path)  # replay reads past the torn segment into the next one
    assert [(r.lsn, r.signal, r.fmt, r.body) for r in third.replay()] == [
        (0, "traces", "proto", bodies[0]), (1, "traces", "proto", bodies[1]),
        (2, "logs", "json", b"{}")]
    assert metrics.registry.get_sample_value("assistant_wal_records_skipped_total",
                                             {"reason": "torn"}) == 1


@pytest.mark.unit
async def test_settled_traces_are_not_replayed_and_settled_segments_are_deleted(
        tmp_path: Path) -> None:
    wal, _ = _log(tmp_path)
    list(wal.replay())
    wal.start()
    a, b = bytes(15) + b"\x01", bytes(15) + b"\x02"
    lsn_a = wal.append("traces", "proto", b"A")
    wal.track(lsn_a, [a], holds=lambda _: True)
    lsn_b = wal.append("traces", "proto", b"B")
    wal.track(lsn_b, [b], holds=lambda _: True)
    wal.settle(a)
    wal.trim()  # writes the `settled` record; the only segment is the active one: kept

    after_crash, _ = _log(tmp_path)
    records = list(after_crash.replay())
    assert [r.lsn for r in records] == [lsn_a, lsn_b]
    assert after_crash.settled_after(a, lsn_a) and not after_crash.settled_after(b, lsn_b)
    after_crash.start()
    after_crash.track(lsn_b, [b], holds=lambda _: True)  # what the sidecar does on replay
    assert len(list(tmp_path.glob("*.wal"))) == 2
    after_crash.settle(b)
    after_crash.trim()
    assert len(list(tmp_path.glob("*.wal"))) == 1  # the old segment is settled: deleted
    await after_crash.close()
    assert list(tmp_path.glob("*.wal")) == []  # a clean stop with nothing open leaves nothing


# ------------------------------------------------------------------------ through the sidecar

def _post(url: str, body: bytes) -> int:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as err:
        assert err.code != 429 or err.headers["Retry-After"] == "1"
        return err.code


def _grpc_export(endpoint: str, body: bytes) -> bytes:
    with grpc.insecure_channel(endpoint) as channel:
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
            request_serializer=lambda b: b, response_deserializer=lambda b: b)
        return export(body, timeout=10)


def _big_trace(n: int) -> bytes:
    """A one-span trace carrying 300 KB of answer."""
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": f"{n:032x}", "spanId": "eee19b7ec3c1b174", "name": "turn",
        "attributes": [{"key": "assistant.question", "value": {"stringValue": "q?"}},
                       {"key": "assistant.answer", "value": {"stringValue": "a" * 300_000}}],
    }]}]}]}).encode()


@pytest.mark.integration
def test_a_full_log_answers_429_until_its_turns_are_settled(start_sidecar) -> None:
    stage = BlockedStage()
    sidecar = start_sidecar(downstream=stage, wal={"max_size_mib": 2, "segment_size_mib": 1},
                            pipeline={"turn_queue_size": 1000})
    url = f"{sidecar.http_url}/v1/traces"
    statuses = [_post(url, _big_trace(n)) for n in range(1, 12)]
    assert statuses[:6] == [200] * 6 and statuses[-1] == 429, statuses
    accepted = statuses.count(200)
    with pytest.raises(grpc.RpcError) as refused:
        _grpc_export(sidecar.grpc_endpoint, b"")
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "write-ahead log is full" in refused.value.details()
    assert sidecar.metric("assistant_wal_refusals_total") >= 2
    # Current, not as of the last trim: the log shows full while it refuses.
    assert 2 << 20 <= sidecar.metric("assistant_wal_bytes") <= (2 << 20) + 400_000

    sidecar.call(_set(stage.release))  # the stage recovers: turns settle, segments are deleted
    wait_until(lambda: sidecar.metric("assistant_wal_bytes") < 1 << 20, 30, "the log trimmed")
    assert _post(url, _big_trace(100)) == 200
    turns = sidecar.wait_for_turns(accepted + 1, timeout_s=30)
    assert {t.trace_id for t in turns} == {f"{n:032x}" for n in [*range(1, accepted + 1), 100]}


async def _set(event: asyncio.Event) -> None:
    event.set()


# ------------------------------------------------------------------------ kill -9 mid-stream

def _recording(exporter_class: type, acked: set[str]) -> type:
    class Recording(exporter_class):  # type: ignore[misc, valid-type]
        """The SDK's exporter, noting the traces of every export the sidecar acknowledged."""

        def export(self, spans):  # type: ignore[no-untyped-def]
            result = super().export(spans)
            if result is SpanExportResult.SUCCESS:
                acked.update(format(s.context.trace_id, "032x") for s in spans)
            return result

    return Recording


def _stream(provider: TracerProvider, stop: threading.Event, rate: float) -> None:
    """Send turns at `rate` a second until stopped."""
    start, n = time.monotonic(), 0
    while not stop.is_set():
        ahead = start + n / rate - time.monotonic()
        if ahead > 0:
            stop.wait(ahead)  # pacing the sender, not waiting for the sidecar
        traffic.send(provider, traffic.ALL[n % len(traffic.ALL)], route="r")
        n += 1


@contextlib.contextmanager
def _streaming(sidecar: SidecarProcess, protocol: str, acked: set[str]) -> Iterator[None]:
    """While the block runs, the SDK's exporter sends `sidecar` 300 turns a second over
    `protocol`, noting in `acked` the traces of every export acknowledged; after it, what the
    exporter still tries fails (not acknowledged)."""
    if protocol == "grpc":
        exporter = _recording(GrpcExporter, acked)(endpoint=sidecar.grpc_endpoint,
                                                   insecure=True, timeout=2)
    else:
        exporter = _recording(HttpExporter, acked)(
            endpoint=f"http://127.0.0.1:{sidecar.ports['http']}/v1/traces", timeout=2)
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-bot"}))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50))
    stop = threading.Event()
    sender = threading.Thread(target=_stream, args=(provider, stop, 300.0))
    sender.start()
    try:
        yield
    finally:
        stop.set()
        sender.join(timeout=30)
        provider.shutdown()


def _rows(store: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(store) as db:
        return db.execute(sql).fetchall()


@pytest.mark.integration
@pytest.mark.parametrize("protocol", ["grpc", "http"])
def test_kill_9_mid_stream_loses_no_acknowledged_trace_and_judges_none_twice(
        tmp_path: Path, protocol: str) -> None:
    with ScriptedOpenAIServer(judge_model) as judge:
        config = (
            "assembly: {root_grace_s: 1.0}\n"  # acknowledged traces wait in memory a while
            "sampling: {adaptive: {low_watermark: 100000, high_watermark: 200000}}\n"
            "judging:\n  workers: 8\n  llm:\n    endpoints:\n"
            f"      - {{name: judge, base_url: '{judge.base_url}', model: m, max_concurrency: 8}}\n")
        sidecar = SidecarProcess(tmp_path, config)
        acked: set[str] = set()
        with _streaming(sidecar, protocol, acked):
            wait_until(lambda: len(acked) >= 400, 60, "400 traces acknowledged")
            sidecar.kill()
        store = sidecar.store_path
        stored = {row[0] for row in _rows(store, "SELECT trace_id FROM turns")}
        assert acked - stored, "the kill must land while acknowledged traces are in memory"

        restarted = SidecarProcess(tmp_path, config)
        judged_sql = "SELECT trace_id FROM turns WHERE state = 'judged'"
        wait_until(lambda: acked <= {row[0] for row in _rows(store, judged_sql)}, 120,
                   "every acknowledged trace judged")
        assert "write-ahead log: replayed" in restarted.log.read_text()
        wait_until(lambda: not _rows(store, "SELECT 1 FROM turns WHERE state != 'judged'"), 60,
                   "the replayed turns that were not acknowledged judged too")
        assert restarted.stop() == 0

    judged = [row[0] for row in _rows(store, "SELECT trace_id FROM judge_costs")]
    assert len(judged) == len(set(judged))  # none judged twice
    assert acked <= set(judged)
    wal = store.with_name(store.name + ".ingest-wal")
    assert list(wal.glob("*.wal")) == []  # a clean stop leaves an empty log


@pytest.mark.integration
@pytest.mark.parametrize("protocol", ["grpc", "http"])
def test_sigterm_mid_stream_stores_every_acknowledged_trace(tmp_path: Path, protocol: str) -> None:
    """A stop while an exporter streams: calls in flight are answered, or refused and retried
    elsewhere (never acknowledged and dropped), and before the process ends every acknowledged
    trace's turn is completed and stored."""
    config = ("sampling: {adaptive: {low_watermark: 100000, high_watermark: 200000}}\n"
              "judging: {calls_per_minute: 0.001}\n")  # every turn kept; the judge held back
    sidecar = SidecarProcess(tmp_path, config)
    acked: set[str] = set()
    with _streaming(sidecar, protocol, acked):
        wait_until(lambda: len(acked) >= 300, 60, "300 traces acknowledged")
        assert sidecar.stop() == 0, sidecar.log.read_text()[-3000:]
    stored = {row[0] for row in _rows(sidecar.store_path, "SELECT trace_id FROM turns")}
    assert len(acked) >= 300 and acked <= stored, sorted(acked - stored)[:5]
    assert "Traceback" not in sidecar.log.read_text()
