"""Pipeline cost: spans/s through the shipped pipeline (the `Sidecar`: decode, assembly,
sampling, persisting what is kept) at 100%, 10% and 0% sampling; memory with 10k turns in
flight; local judge latency per turn.

    python bench/pipeline.py [--traces 3000] [--repeat 3]

Judging itself is measured separately (last table): at 100% sampling the judge, not ingest, is
what limits a sidecar. Medians of --repeat runs, printed side by side; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import free_port, make_requests  # noqa: E402

from monitor.app import Sidecar  # noqa: E402
from monitor.assemble import TurnAssembler  # noqa: E402
from monitor.config import AssemblySettings, LocalJudgeSettings, Settings  # noqa: E402
from monitor.ingest.otlp import OtlpDecoder  # noqa: E402
from monitor.model import AssistantTurn, RetrievedDocument  # noqa: E402
from monitor.telemetry import Metrics  # noqa: E402


def run_pipeline(bodies: list[bytes], rate: float, store_dir: Path) -> float:
    """Seconds for the pipeline that ships, `Sidecar` (decode, then what a receiver's request
    goes through: consume, assembly, the turn queue, sampling, the store, the judge stage),
    with no judge (judging is timed below) and no receiver or write-ahead log (bench/ingest.py
    times those, over loopback)."""
    settings = Settings(
        receivers={"grpc": {"enabled": False}, "http": {"enabled": False}},
        admin={"endpoint": f"127.0.0.1:{free_port()}"},
        assembly={"root_grace_s": 0, "max_traces": 100_000, "max_spans": 1_000_000},
        sampling={"default_rate": rate, "always_keep": []},
        store={"path": store_dir / f"bench-{time.monotonic_ns()}.db"}, drift={"enabled": False})

    async def go() -> float:
        sidecar = Sidecar(settings, judges=[])
        await sidecar.start()
        try:
            start = time.perf_counter()
            for body in bodies:
                sidecar.pipeline.consume(sidecar.decoder.decode("traces", body, "proto"), "bench", "traces")
                await asyncio.sleep(0)  # the turn pump runs between requests, as it does live
            await sidecar.settle()
            return time.perf_counter() - start
        finally:
            await sidecar.stop()

    return asyncio.run(go())


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def memory_in_flight(turns: int) -> tuple[float, float]:
    """(MiB of resident memory that `turns` unfinished turns of 5 spans add, bytes per turn).
    Resident memory, not tracemalloc: the span facts are compiled, allocated outside Python's
    allocator."""
    bodies = [r.SerializeToString() for r in make_requests(turns, 100)]
    decoder = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16)
    assembler = TurnAssembler(AssemblySettings(decision_wait_s=3600, root_grace_s=3600,
                                               max_traces=turns + 1, max_spans=turns * 6), Metrics())
    gc.collect()
    before = _rss_mib()
    for body in bodies:
        assembler.add(decoder.decode("traces", body, "proto").facts)
    grown = _rss_mib() - before
    assert assembler.trace_count == turns
    return grown, grown * 2**20 / turns


def judge_latency(samples: int) -> list[float]:
    from monitor.judges.local import LocalJudge

    judge = LocalJudge(LocalJudgeSettings())
    latencies = []
    for i in range(samples):  # distinct texts: nothing comes from the embedding cache
        turn = AssistantTurn(
            trace_id=f"{i + 1:032x}", question=f"How long do refunds take for order {i}?",
            answer=f"Refunds for order {i} are issued within 30 days. Express shipping takes 1 "
                   f"day. Hope this helps.",
            documents=[RetrievedDocument(content=f"Order {i}: refunds are issued within 30 days of "
                                                 f"purchase. Document {i}-{d}.") for d in range(5)])
        start = time.perf_counter()
        judge.judge_sync(turn)
        latencies.append(time.perf_counter() - start)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bodies = [r.SerializeToString() for r in make_requests(args.traces, 100)]
    spans = args.traces * 5
    print(f"{args.traces} traces, {spans} spans (the bench/ingest.py mix); medians of "
          f"{args.repeat} runs\n")
    print(f"{'sampling':10} {'spans/s':>10} {'µs/span':>8} {'vs 100%':>8}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rate in (1.0, 0.1, 0.0):
            seconds = statistics.median(run_pipeline(bodies, rate, Path(tmp))
                                        for _ in range(args.repeat))
            results[rate] = seconds
            print(f"{rate:>9.0%} {spans / seconds:>10,.0f} {seconds / spans * 1e6:>8.1f} "
                  f"{results[1.0] / seconds:>7.2f}x")

    mib, per_turn = memory_in_flight(10_000)
    print(f"\n10,000 turns in flight (50,000 spans held by the assembler): {mib:.0f} MiB resident, "
          f"{per_turn / 1024:.1f} KiB a turn; process peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")

    latencies = judge_latency(30)
    print(f"\nlocal judge, 5 documents + 3 claims a turn, cold cache: median "
          f"{statistics.median(latencies) * 1e3:.0f} ms, max {max(latencies) * 1e3:.0f} ms per turn "
          f"(≈ {1 / statistics.median(latencies):.1f} turns/s per worker)")


if __name__ == "__main__":
    main()
