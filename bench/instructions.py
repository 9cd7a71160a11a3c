"""Instructions per span in the compiled path (decode, assembly, the kept turns' JSON), counted by
callgrind: a figure that does not move with the machine's other work, for comparing commits.

    python bench/instructions.py [--traces 4000] [--kept 0,1] [--before DIR]
    python bench/instructions.py --sidecar [--traces 4000]

bench/ingest.py's RAG trace mix, 20 traces a request, decoded (`TraceDecoder.traces`), added to
the assembler and completed 2,000 traces a tick (`Assembler.add`, `Assembler.expire`, turns
composed and sampled, the kept ones' JSON written, the last 100 a tick recorded for /api/turns),
once per `--kept` share (the sampler's rate: 0 keeps no turn, 1 every turn). Only instructions
inside those three compiled calls are counted (valgrind's --toggle-collect), not Python's around
them. `--before DIR`: the package of another build, side by side: `pip install --no-deps --target
DIR .` in a checkout of an earlier commit (before 995810a, whose compiled module was a package of
its own: `pip install --no-deps --target DIR ./native .`; 45b4efb or later). Needs valgrind
(`apt-get install valgrind`); a run takes about a minute a share. Timings on a shared machine
move 10-30 % between runs; instruction counts are the same every run, though an instruction is
not a fixed time (memory stalls, branches). Nothing is asserted.

`--sidecar`: the whole sidecar process instead (`assistant-monitor run`, every thread: receivers,
event loop, Python, the compiled calls), serving the mix through its gRPC receiver and then its
HTTP one with nothing sampled, counted from the first request until every turn is completed, and
the compiled calls' share of it: where a span's instructions go outside the compiled path.
About three minutes a receiver. Under callgrind the sidecar runs some fifty times slower, so a
tick completes a few turns, not hundreds, and each is recorded for /api/turns (its JSON written):
`expire` counts some 4,000 instructions a span more than at full speed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The package measured: this tree's, or the one `--before` names (its compiled module inside it).
sys.path.insert(0, os.environ.get("BENCH_PACKAGE") or str(Path(__file__).resolve().parents[1]))
# Bound now: bench/ingest.py, imported later, puts this tree first on sys.path, and `--before`
# measured this tree twice (the before figures of 2026-11-27's first results were this build's).
import monitor  # noqa: E402, F401

COMPILED_CALLS = ("__pymethod_traces__", "__pymethod_add__", "__pymethod_expire__")


def work(traces: int, kept: float) -> None:
    """What callgrind counts: run in the child process."""
    from ingest import make_requests
    from prometheus_client import CollectorRegistry

    from monitor.assemble import TurnAssembler
    from monitor.config import AssemblySettings, SamplingSettings
    from monitor.ingest.otlp import OtlpDecoder
    from monitor.sample.sampler import Sampler
    from monitor.telemetry import Metrics

    bodies = [r.SerializeToString() for r in make_requests(traces, 20)]
    decoder = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16, native=True)
    now = 1000.0
    assembler = TurnAssembler(
        AssemblySettings(root_grace_s=0, max_traces=100_000, max_spans=1_000_000),
        Metrics(CollectorRegistry()), lambda: now, recent=100,
        sampler=Sampler(SamplingSettings(default_rate=kept, always_keep=[])).compiled)
    for n, body in enumerate(bodies, 1):
        assembler.add(decoder.decode("traces", body, "proto").facts)
        if n % 100 == 0:  # 2,000 traces a tick
            now += 1.0
            assembler.expire()
    now += 1.0
    assembler.expire()


def count(traces: int, kept: float, package: Path | None) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = dict(os.environ)
        if package is not None:
            env["BENCH_PACKAGE"] = str(package)
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             *(f"--toggle-collect=*{call}*" for call in COMPILED_CALLS),
             sys.executable, __file__, "--work", str(traces), str(kept)],
            env=env, capture_output=True, text=True, check=True)
        return collected(run.stderr)


def collected(stderr: str) -> int:
    """The instructions callgrind says it counted."""
    found = re.search(r"Collected : (\d+)", stderr)
    if found is None:
        raise SystemExit(f"callgrind counted nothing:\n{stderr[-2000:]}")
    return int(found.group(1))


def sidecar(traces: int, receiver: str) -> tuple[int, int]:
    """(instructions of the whole sidecar process, of them inside the compiled calls) while it
    serves `traces` of the mix through `receiver` ("grpc", "http-protobuf"), nothing sampled."""
    from ingest import free_port, make_requests, send, sidecar_config, wait_metric, wait_ready

    bodies = [r.SerializeToString() for r in make_requests(traces, 20)]
    ports = {name: free_port() for name in ("grpc", "http", "admin")}
    with tempfile.TemporaryDirectory() as tmp:
        config, out = Path(tmp) / "bench.yaml", Path(tmp) / "callgrind.out"
        config.write_text(sidecar_config(ports, Path(tmp), "sampling: {default_rate: 0.0, "
                                         "always_keep: []}\nwal: {enabled: false}\n"))
        # Counting starts off: the start-up (imports, the judge's model) is not the traffic's.
        server = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
             sys.executable, "-m", "monitor", "run", "--config", str(config)],
            cwd=Path(__file__).resolve().parents[1], stderr=subprocess.PIPE, text=True)
        try:
            wait_ready(ports["admin"], 600)
            subprocess.run(["callgrind_control", "--instr=on", str(server.pid)], check=True,
                           capture_output=True)
            send(receiver, ports, bodies)
            wait_metric(f"http://127.0.0.1:{ports['admin']}/metrics",
                        "assistant_turns_received_total", traces)  # the last turns completed
            subprocess.run(["callgrind_control", "--instr=off", str(server.pid)], check=True,
                           capture_output=True)
        finally:
            server.terminate()
            _, stderr = server.communicate(timeout=120)
        total = collected(stderr)
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)],
                                   capture_output=True, text=True, check=True).stdout
        compiled = {}
        for line in annotated.splitlines():
            found = re.match(r"\s*([\d,]+) .*::(__pymethod_\w+__) \[", line)
            if found and found.group(2) in COMPILED_CALLS:
                compiled.setdefault(found.group(2), int(found.group(1).replace(",", "")))
        return total, sum(compiled.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=4000)
    parser.add_argument("--kept", default="0,1", help="shares of turns kept, e.g. 0,0.2,1")
    parser.add_argument("--before", type=Path, help="another build's package directory")
    parser.add_argument("--sidecar", action="store_true",
                        help="the whole sidecar process serving the mix through its receivers")
    parser.add_argument("--work", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.work:
        work(int(args.work[0]), float(args.work[1]))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("bench/instructions.py needs valgrind: apt-get install valgrind")
    if args.sidecar:
        spans = 5 * args.traces
        print(f"{args.traces} traces, {spans} spans in requests of 20 traces, nothing sampled; "
              "instructions per span of the whole sidecar process")
        for receiver in ("grpc", "http-protobuf"):
            total, compiled = sidecar(args.traces, receiver)
            print(f"  {receiver:14} {total / spans:>8,.0f}, of them in the compiled calls "
                  f"{compiled / spans:,.0f} ({compiled / total:.0%})")
        return
    spans = 5 * args.traces  # the mix: 5 spans a trace
    builds: dict[str, Path | None] = {"this build": None}
    if args.before:
        builds[str(args.before)] = args.before
    print(f"{args.traces} traces, {spans} spans; instructions per span inside the compiled calls")
    for kept in (float(k) for k in args.kept.split(",")):
        figures = {name: count(args.traces, kept, package) / spans
                   for name, package in builds.items()}
        print(f"  {kept:>4.0%} kept: " + ", ".join(f"{name} {value:,.0f}"
                                                  for name, value in figures.items()))


if __name__ == "__main__":
    main()
