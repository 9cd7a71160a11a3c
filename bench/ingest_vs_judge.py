"""Does a busy judge slow ingest? The same traffic through a running sidecar, judging off and on.

    python bench/ingest_vs_judge.py [--traces 10000] [--repeat 3] [--modes off,kept,thread,process]
                                    [--before DIR] [--collector PATH]

A sidecar process receives bench/ingest.py's RAG trace mix over its real receivers (gRPC and
HTTP protobuf, half the requests each, at the same time). Modes:
  off      sampling 0: no turn is kept, no judge runs (ingest alone);
  kept     sampling on its defaults (rate 1.0, adaptive: as the judge backlog passes 200 turns
           the rate falls, to 5 % at 2,000, so about a fifth of 10,000 traces is kept) and the
           kept turns stored, the judge held back (one call, then rate-limited): what sampling
           and the store cost ingest, without a judge burning CPU;
  thread   sampling as in `kept`, the local judge in the sidecar's process (judging.process:
           false);
  process  sampling as in `kept`, the local judge in its own worker process (judging.process:
           true).
Each sidecar gets the traffic twice, with fresh trace ids the second time: the first pass is
its first second of load (memory faulted in, caches cold, the judge backlog filling from empty,
so the adaptive rate still high), the second its steady state (the backlog at the watermarks,
the rate down, as it stays while a busy judge lags behind ingest). Both passes are printed.
Printed first, the floor: upb's protobuf parse of the same requests, reading no field. Then per
mode and pass: ingest throughput (spans per wall second until the last request is answered),
spans per CPU-second of the sidecar's own process (ingest, sampling, the store, the judge
stage's bookkeeping) and of all its processes (the judge worker included), the share of turns
kept for judging, the sidecar process's peak RSS, and the change of ingest against `off` and
against `kept` (what the judge's own CPU work costs ingest), in spans per wall second and, for
`kept`, in spans per CPU-second of the sidecar's process too: each the median over runs of the
ratio to that mode's run in the same round. `process` is the shipped default.
`--before DIR` adds the same rows for the sidecar of another source tree (a checkout of an
earlier commit, e.g. `git archive COMMIT | tar -x -C DIR`, with its compiled module built in it;
one without `judging.process` runs its judge in a thread), and a column: each row's spans per
CPU-second against the same mode of that tree in the same round. `--collector PATH` adds a row
for the OpenTelemetry Collector with tail_sampling (the peer that also holds whole traces, 1 s
decision wait, every trace kept; built as bench/otelcol-manifest.yaml says) on the same traffic
through its own OTLP receivers, measured by the same rule: its process's CPU until the last
request is answered, so its steady pass, like the sidecar's, includes the previous pass's
decisions; each row then shows its spans per CPU-second against the Collector's in the same
round. "(slowest)": the lowest spans per CPU-second of the row's runs. Modes interleave run by
run, medians of `--repeat`. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest import (  # noqa: E402
    COLLECTOR_CONFIG,
    cpu_seconds,
    free_port,
    listening,
    make_requests,
    peak_rss_mib,
    raw_parse,
    send_grpc,
    send_http,
    sidecar_config,
    wait_ready,
)

from tests.waiting import wait_until  # noqa: E402

MODES = {
    "off": "sampling: {default_rate: 0.0, always_keep: []}\n",
    # Kept and stored, but the judge call rate-limited to one: sampling and the store's share.
    "kept": "sampling: {default_rate: 1.0}\njudging: {calls_per_minute: 0.001}\n",
    "thread": "sampling: {default_rate: 1.0}\njudging: {process: false}\n",
    "process": "sampling: {default_rate: 1.0}\njudging: {process: true}\n",
}


def family(pid: int) -> list[int]:
    """`pid` and its descendants (a judge worker and its helpers)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            todo.extend(int(child) for child in task.read_text().split())
    return found


def family_cpu(pid: int) -> float:
    total = 0.0
    for member in family(pid):
        try:
            total += cpu_seconds(member)
        except FileNotFoundError:  # exited meanwhile
            pass
    return total


async def send_both(ports: dict[str, int], bodies: list[bytes]) -> None:
    await asyncio.gather(
        send_grpc(f"127.0.0.1:{ports['grpc']}", bodies[0::2], 2),
        send_http(f"http://127.0.0.1:{ports['http']}/v1/traces", bodies[1::2],
                  "application/x-protobuf", 2))


Run = tuple[float, float, float, float, float]
PASSES = ("first pass", "steady")


def turns_sampled(admin_port: int) -> float:
    exposition = urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics").read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in exposition.splitlines()
               if line.startswith("assistant_turns_sampled_total{"))


def run(mode: str, passes: list[list[bytes]], spans: int, traces: int,
        source: Path | None, collector: Path | None = None) -> list[Run]:
    """Per pass of traffic: (ingest spans per wall second, spans per CPU-second of the sidecar's
    process and of all its processes, the share of turns kept, the sidecar process's peak RSS
    in MiB); the sidecar of the source tree `source` (None: this one), or for mode "collector"
    the Collector binary `collector`."""
    modes = MODES if source is None else {**MODES, "thread": "sampling: {default_rate: 1.0}\n"}
    ports = {name: free_port() for name in ("grpc", "http", "admin")}
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "bench.yaml"
        if mode == "collector":
            config.write_text(COLLECTOR_CONFIG.format(processor="tail_sampling", grpc=ports["grpc"],
                                                      http=ports["http"], metrics=ports["admin"]))
            server = subprocess.Popen([str(collector), "--config", str(config)])
        else:
            config.write_text(sidecar_config(ports, Path(tmp),
                                             modes[mode] + "wal: {enabled: false}\n"))
            server = subprocess.Popen([sys.executable, "-m", "monitor", "run", "--config",
                                       str(config)], cwd=source)  # -m imports from cwd
        try:
            if mode == "collector":
                wait_until(lambda: all(map(listening, ports.values())), 60, "the Collector's ports")
            else:
                wait_ready(ports["admin"], 60)
            if mode != "off":  # the judge warmed up (model loaded) before the clock starts
                asyncio.run(send_both(ports, passes[0][:2]))
                time.sleep(3)
            runs = []
            for bodies in passes:
                kept0 = 0.0 if mode == "collector" else turns_sampled(ports["admin"])
                own0, cpu0 = cpu_seconds(server.pid), family_cpu(server.pid)
                t0 = time.perf_counter()
                asyncio.run(send_both(ports, bodies))
                wall, cpu = time.perf_counter() - t0, family_cpu(server.pid) - cpu0
                own = cpu_seconds(server.pid) - own0
                time.sleep(0.5)  # the last turns completed and sampled
                kept = (1.0 if mode == "collector"
                        else (turns_sampled(ports["admin"]) - kept0) / traces)
                runs.append((spans / wall, spans / own, spans / cpu, kept,
                             peak_rss_mib(server.pid)))
            return runs
        finally:
            server.terminate()
            server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=10000)
    parser.add_argument("--batch", type=int, default=20, help="traces per export request")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default="off,kept,thread,process",
                        help="modes to compare: " + ", ".join(MODES))
    parser.add_argument("--before", type=Path, help="an earlier source tree to compare with")
    parser.add_argument("--collector", type=Path,
                        help="an OpenTelemetry Collector binary: a tail_sampling row beside")
    args = parser.parse_args()
    modes = args.modes.split(",")
    if not set(modes) <= MODES.keys():
        parser.error(f"--modes: expected some of {', '.join(MODES)}")
    trees: dict[str, Path | None] = {"": None}
    if args.before:
        trees = {"before ": args.before.resolve(), "": None}
    rows = [(tree, mode) for tree in trees for mode in modes
            if not (trees[tree] and mode == "process")]
    if args.collector:
        rows.append(("", "collector"))

    requests = make_requests(2 * args.traces, args.batch)  # one pass, then another: fresh ids
    bodies = [r.SerializeToString() for r in requests]
    passes = [bodies[:len(bodies) // 2], bodies[len(bodies) // 2:]]
    spans = sum(len(ss.spans) for r in requests for rs in r.resource_spans
                for ss in rs.scope_spans) // 2
    print(f"{args.traces} traces a pass, {spans} spans, {len(passes[0])} requests of {args.batch} "
          f"traces (gRPC and HTTP protobuf at once); medians of {args.repeat} runs\n")
    floor = statistics.median(raw_parse(passes[1]) for _ in range(args.repeat))
    print(f"the floor, upb's protobuf parse alone: {spans / floor:,.0f} spans/s\n")
    runs: dict[tuple[str, str, str], list[Run]] = {
        (*row, name): [] for row in rows for name in PASSES}
    for _ in range(args.repeat):  # interleaved: a machine busy meanwhile slows every mode alike
        for tree, mode in rows:
            for name, result in zip(PASSES, run(mode, passes, spans, args.traces, trees[tree],
                                                args.collector), strict=True):
                runs[tree, mode, name].append(result)
    medians = {key: tuple(statistics.median(r[i] for r in results) for i in range(5))
               for key, results in runs.items()}

    def change(key: tuple[str, str, str], base: str, field: int, base_tree: str | None = None
               ) -> str:
        """The median over rounds of this row against `base` (of `base_tree`, by default its
        own) in the same round: runs next to each other in time share the machine's state, so
        paired ratios vary less than medians'."""
        tree, mode, name = key
        against = (tree if base_tree is None else base_tree, base, name)
        if against not in runs or against == key:
            return ""
        ratios = [ours[field] / theirs[field] - 1
                  for ours, theirs in zip(runs[key], runs[against], strict=True)]
        return f"{statistics.median(ratios) * 100:+.1f} %"

    print(f"{'judging':16} {'pass':11} {'ingest spans/s':>15} {'spans/cpu-s':>12} "
          f"{'(slowest)':>10} {'(all procs)':>12} {'kept':>6} {'peak RSS':>9} {'vs off':>9} "
          f"{'vs kept':>9} {'(cpu-s)':>9}" + (f" {'vs Collector (cpu-s)':>21}" if args.collector
                                              else "")
          + (f" {'vs before (cpu-s)':>18}" if args.before else ""))
    for key, (wall, own, every, kept, rss) in medians.items():
        tree, mode, name = key
        slowest = min(result[1] for result in runs[key])
        print(f"  {tree + mode:14} {name:11} {wall:>15,.0f} {own:>12,.0f} {slowest:>10,.0f} "
              f"{every:>12,.0f} {kept:>6.1%} {rss:>5.0f} MiB {change(key, 'off', 0):>9} "
              f"{change(key, 'kept', 0):>9} {change(key, 'kept', 1):>9}"
              + (f" {change(key, 'collector', 1):>21}" if args.collector else "")
              + (f" {change(key, mode, 1, 'before '):>18}" if args.before else ""))


if __name__ == "__main__":
    main()
