"""How long a turn's page takes: a turn of 20 documents of ~300 words, 8 claims each with its
evidence window, and the verdicts of two judges (the local judge and an LLM judge: 8 verdicts,
16 claims, 40 document labels), read from a real SQLite store and rendered by the real admin
server, requested over HTTP on loopback with the bearer token.

    python bench/turn_page.py [--requests 200] [--documents 20] [--words 300]

Prints the median and 90th percentile from the request to the page's last byte (urllib, a new
connection each time, as a browser's first visit), and the page's size. The issue's target:
a median of 200 ms or less.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prometheus_client import CollectorRegistry  # noqa: E402

from monitor.admin import AdminServer, RecentTurns  # noqa: E402
from monitor.store import Store, ThreadedStore  # noqa: E402
from tests.ui_turns import big_turn, judge  # noqa: E402

TOKEN = "bench-token"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--documents", type=int, default=20)
    parser.add_argument("--words", type=int, default=300)
    args = parser.parse_args()

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as directory:
        store = Store(Path(directory) / "store.db")
        turn, results = big_turn(args.documents, args.words)
        trace_id = judge(store, turn, results)
        threaded = ThreadedStore(store)
        admin = AdminServer("127.0.0.1:0", CollectorRegistry(), RecentTurns(1, 1 << 20),
                            ready=lambda: True, bearer_token=TOKEN, store=lambda: threaded)
        asyncio.run_coroutine_threadsafe(admin.start(), loop).result()
        request = urllib.request.Request(f"http://127.0.0.1:{admin.port}/ui/turns/{trace_id}",
                                         headers={"Authorization": f"Bearer {TOKEN}"})

        def fetch() -> bytes:
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 200
                body: bytes = response.read()
                return body

        for _ in range(10):  # warm: templates compiled, the store's pages cached
            page = fetch()
        times = []
        for _ in range(args.requests):
            start = time.perf_counter()
            fetch()
            times.append((time.perf_counter() - start) * 1000)
        asyncio.run_coroutine_threadsafe(admin.stop(), loop).result()
        asyncio.run_coroutine_threadsafe(threaded.close(), loop).result()
    words = sum(len((d.content or "").split()) for d in turn.documents)
    claims = sum(len(v.claims or ()) for r in results for v in r.verdicts)
    verdicts = sum(len(r.verdicts) for r in results)
    times.sort()
    print(f"turn page: {len(turn.documents)} documents ({words} words), {verdicts} verdicts, "
          f"{claims} claims; {len(page) / 1024:.0f} KiB of HTML")
    print(f"{args.requests} requests: median {statistics.median(times):.1f} ms, "
          f"p90 {times[int(len(times) * 0.9)]:.1f} ms, min {times[0]:.1f} ms, "
          f"max {times[-1]:.1f} ms (target: median <= 200 ms)")


if __name__ == "__main__":
    main()
