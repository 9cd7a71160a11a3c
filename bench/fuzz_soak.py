"""Fuzz soak: many seeded mutations of real OTLP payloads against a sidecar process.

    python bench/fuzz_soak.py [--inputs 100000] [--grpc-share 0.3] [--seed 1] [--keep-all]

The mutator is tests/hostile.py's (the CI fuzz test runs it for ~40 s). A sidecar runs as its
own process, as an operator runs it; inputs go one at a time over one HTTP keep-alive
connection and one gRPC channel. Then a gzip bomb (1 GiB of zeros, about 1 MiB on the wire) is
sent while /healthz is polled, to show how long the event loop was held, and a valid trace
is sent and must be judged. Prints the answers by status code, throughput, the sidecar's peak
and final RSS, the safety-net and task-failure counters, and whether the last trace was judged.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ingest import free_port, metric_sum, peak_rss_mib  # noqa: E402
from tests.hostile import GrpcSender, HttpSender, Mutator  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def gzip_bomb(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    return b"".join(packer.compress(zeros) for _ in range(size >> 20)) + packer.flush()


def bomb_probe(http_port: int, admin: str) -> tuple[int, float, float, int]:
    """(status, seconds to answer the bomb, longest /healthz wait meanwhile, bytes sent)."""
    bomb = gzip_bomb(1 << 30)
    longest, done = 0.0, threading.Event()

    def poll() -> None:
        nonlocal longest
        while not done.is_set():
            t0 = time.perf_counter()
            urllib.request.urlopen(f"{admin}/healthz", timeout=30).read()
            longest = max(longest, time.perf_counter() - t0)

    poller = threading.Thread(target=poll)
    poller.start()
    sender = HttpSender("127.0.0.1", http_port)
    t0 = time.perf_counter()
    status = sender("/v1/traces", bomb, {"Content-Type": "application/x-protobuf",
                                         "Content-Encoding": "gzip"})
    seconds = time.perf_counter() - t0
    time.sleep(0.2)  # a few more polls after the answer
    done.set()
    poller.join()
    sender.close()
    return status, seconds, longest, len(bomb)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--grpc-share", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-all", action="store_true",
                        help="every request's traces under new ids, each turn sampled (stored "
                        "and judged), not only shop-bot's")
    args = parser.parse_args()

    ports = {name: free_port() for name in ("grpc", "http", "admin")}
    admin = f"http://127.0.0.1:{ports['admin']}"
    metrics = f"{admin}/metrics"
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "soak.yaml"
        config.write_text(
            f"receivers:\n  grpc: {{endpoint: '127.0.0.1:{ports['grpc']}'}}\n"
            f"  http: {{endpoint: '127.0.0.1:{ports['http']}'}}\n"
            f"admin: {{endpoint: '127.0.0.1:{ports['admin']}'}}\n"
            "assembly: {root_grace_s: 0.2}\n"
            # Fuzzed turns are assembled, not judged (unless --keep-all); the final "shop-bot"
            # trace is.
            f"sampling: {{default_rate: {1.0 if args.keep_all else 0.0}, "
            "service_rates: {shop-bot: 1.0}, always_keep: []}\n"
            f"store: {{path: '{Path(tmp) / 'store.db'}'}}\n")
        log = (Path(tmp) / "sidecar.log").open("w")
        sidecar = subprocess.Popen([sys.executable, "-m", "monitor", "run", "--config",
                                    str(config)], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    urllib.request.urlopen(f"{admin}/readyz", timeout=1)
                    break
                except OSError:
                    if time.monotonic() > deadline or sidecar.poll() is not None:
                        raise
                    time.sleep(0.2)
            fuzz = Mutator(args.seed, fresh_trace_ids=args.keep_all)
            http = HttpSender("127.0.0.1", ports["http"])
            grpc_send = GrpcSender(f"127.0.0.1:{ports['grpc']}")
            answers: Counter[str] = Counter()
            rss_start = rss_mib(sidecar.pid)
            t0 = time.perf_counter()
            for i in range(args.inputs):
                if fuzz.rng.random() < args.grpc_share:
                    answers[f"grpc {grpc_send(*fuzz.grpc_request()).name}"] += 1
                else:
                    answers[f"http {http(*fuzz.http_request())}"] += 1
                if (i + 1) % 10_000 == 0:
                    print(f"  {i + 1} inputs, {(i + 1) / (time.perf_counter() - t0):.0f}/s, "
                          f"RSS {rss_mib(sidecar.pid):.0f} MiB", flush=True)
            seconds = time.perf_counter() - t0
            http.close()
            grpc_send.close()
            status, bomb_s, stall_s, bomb_size = bomb_probe(ports["http"], admin)

            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import SimpleSpanProcessor

            from tests import traffic

            provider = TracerProvider(resource=Resource.create({"service.name": "shop-bot"}))
            provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
                endpoint=f"127.0.0.1:{ports['grpc']}", insecure=True)))
            traffic.send(provider, traffic.GROUNDED[0])
            provider.shutdown()
            deadline, judged = time.monotonic() + 300, 0.0
            while time.monotonic() < deadline and not judged:
                judged = metric_sum(metrics, "assistant_turns_judged_total")
                time.sleep(0.5)

            print(f"\n{args.inputs} inputs (seed {args.seed}) in {seconds:.0f} s: "
                  f"{args.inputs / seconds:.0f} inputs/s")
            for answer, count in sorted(answers.items()):
                print(f"  {answer:28} {count:>8}")
            bad = sum(c for a, c in answers.items() if not (
                a.split()[1] in ("OK", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED")
                or a.split()[1].isdigit() and 200 <= int(a.split()[1]) < 500))
            print(f"  answers other than 2xx/4xx/OK/INVALID_ARGUMENT/RESOURCE_EXHAUSTED: {bad}")
            print(f"sidecar RSS: {rss_start:.0f} MiB after start, peak "
                  f"{peak_rss_mib(sidecar.pid):.0f} MiB, {rss_mib(sidecar.pid):.0f} MiB at the end")
            print(f"gzip bomb (1 GiB inflated, {bomb_size >> 10} KiB sent): "
                  f"answered {status} in {bomb_s * 1000:.0f} ms; longest /healthz wait "
                  f"meanwhile {stall_s * 1000:.0f} ms")
            print("safety nets: mapping_error "
                  f"{metric_sum(metrics, 'assistant_spans_refused_total', reason='mapping_error'):.0f}"
                  ", internal_error "
                  f"{metric_sum(metrics, 'assistant_receiver_requests_total', outcome='internal_error'):.0f}"
                  ", background task failures "
                  f"{metric_sum(metrics, 'assistant_background_task_failures_total'):.0f}"
                  f", turns lost {metric_sum(metrics, 'assistant_turns_lost_total'):.0f}")
            print(f"turns assembled {metric_sum(metrics, 'assistant_turns_received_total'):.0f}, "
                  f"sampled {metric_sum(metrics, 'assistant_turns_sampled_total'):.0f}")
            print(f"valid trace after the soak judged: {'yes' if judged else 'NO'}")
        finally:
            sidecar.terminate()
            code = sidecar.wait(timeout=60)
            log.close()
            text = (Path(tmp) / "sidecar.log").read_text()
            print(f"sidecar exit code {code}; log lines at ERROR: "
                  f"{sum(' ERROR ' in line for line in text.splitlines())}; "
                  f"tracebacks: {text.count('Traceback')}")


if __name__ == "__main__":
    main()
