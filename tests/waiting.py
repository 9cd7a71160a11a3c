"""Waiting on a condition with a deadline: tests never sleep a fixed time (a busy machine is
slower, not wrong). The poll interval only bounds how late a met condition is noticed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

TIMEOUT_S = 90.0  # generous: a failing wait costs time, a flaky one costs trust


def wait_until(condition: Callable[[], object], timeout_s: float = TIMEOUT_S,
               what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


async def until(condition: Callable[[], object], timeout_s: float = TIMEOUT_S) -> None:
    """`wait_until` on an event loop: the loop runs while the condition is polled."""
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.01)
