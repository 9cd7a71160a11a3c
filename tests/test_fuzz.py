"""Fuzz both receivers with seeded mutations of real SDK payloads (bounded: about 40 s).

The inputs come from `tests.hostile.Mutator(seed)`: a failure names the seed and the index of
the input, so it can be regenerated. bench/fuzz_soak.py runs the same mutator for longer.
"""

from __future__ import annotations

import time
from collections import Counter

import grpc
import pytest

from tests.hostile import GrpcSender, HttpSender, Mutator
from tests.test_hostile_input import JUDGE_ONLY_SHOP_BOT, _judged_after, _ready, _total

pytestmark = pytest.mark.integration

SEED = 12
SECONDS_PER_RECEIVER = 18.0
RSS_GROWTH_LIMIT_MIB = 400  # the assembly buffer and allocator slack, not a leak per input
GRPC_ALLOWED = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT,
                grpc.StatusCode.RESOURCE_EXHAUSTED}


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def test_fuzzed_requests_get_2xx_4xx_and_assembly_goes_on(start_sidecar) -> None:
    sidecar = start_sidecar(sampling=JUDGE_ONLY_SHOP_BOT)
    fuzz = Mutator(SEED)
    rss_before = rss_mib()
    http = HttpSender("127.0.0.1", sidecar.sidecar.http.port)  # type: ignore[union-attr]
    statuses: Counter[int] = Counter()
    bad: list[tuple[int, object]] = []
    index = 0
    deadline = time.monotonic() + SECONDS_PER_RECEIVER
    while time.monotonic() < deadline:
        status = http(*fuzz.http_request())
        statuses[status] += 1
        if not 200 <= status < 500:
            bad.append((index, status))
        index += 1
    http.close()
    codes: Counter[grpc.StatusCode] = Counter()
    send = GrpcSender(sidecar.grpc_endpoint)
    deadline = time.monotonic() + SECONDS_PER_RECEIVER
    while time.monotonic() < deadline:
        code = send(*fuzz.grpc_request())
        codes[code] += 1
        if code not in GRPC_ALLOWED:
            bad.append((index, code))
        index += 1
    send.close()
    print(f"fuzz seed {SEED}: HTTP {dict(statuses)}; gRPC {dict(codes)}")
    assert not bad, f"seed {SEED}: (input index, answer) {bad[:10]}"
    assert sum(statuses.values()) > 100 and sum(codes.values()) > 100
    assert statuses[200] and statuses[400] and codes[grpc.StatusCode.OK]  # both paths exercised
    # Nothing was a bug caught by a safety net, and every stage still runs.
    assert sidecar.metric("assistant_spans_refused_total", reason="mapping_error") == 0
    for receiver in ("http", "grpc"):
        assert sidecar.metric("assistant_receiver_requests_total", receiver=receiver,
                              signal="traces", outcome="internal_error") == 0
    assert _total(sidecar, "assistant_background_task_failures_total") == 0
    assert _total(sidecar, "assistant_turns_lost_total") == 0
    assert _ready(sidecar)
    _judged_after(sidecar)
    assert rss_mib() - rss_before < RSS_GROWTH_LIMIT_MIB
