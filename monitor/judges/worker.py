"""The local judge in its own worker process (`judging.process: true`).

    judge = ProcessJudge(settings.judging.local, settings.judging.priority)  # starts on first use
    result = await judge.judge(turn)
    await judge.aclose()                            # the child is gone when this returns

The local judge is CPU-bound Python: in a thread of the sidecar it takes the interpreter lock
from the receivers. Here it runs in a child process ('spawn': nothing of the sidecar's state is
inherited) that builds the judge from its settings; a turn goes over a pipe as a plain dict and
the result comes back as one. Calls are one at a time (one child: at most one core for judging).
A child that dies mid-turn fails that call with JudgeError, so the stage puts the turn back and
judges it again (counted against `max_attempts`: a turn that kills the judge every time is given
up, not retried for ever); the next call starts a fresh child. A call cut short (stop) kills the
child, so no stale reply can answer a later turn. The child runs at `judging.priority`: `idle`
(the sidecar's default: nice 19, and SCHED_IDLE on Linux), so on a machine short of cores judging
takes the CPU that ingest leaves; `low` (nice 19 alone) or `normal` (the parent's). `eval` and
`calibrate` judge at `normal`: there is no ingest to protect, and an idle-priority judge beside
busy processes crawls (bench/judge_priority.py).

Each reply also says how many embeddings the turn asked for and how many the judge's cache
answered (`cache_hits`, `cache_lookups`): the status screen shows the hit rate beside the latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import multiprocessing
import os
import signal
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from monitor.config import JudgePriority, JudgingSettings, LocalJudgeSettings
from monitor.judges.base import JudgeError
from monitor.judges.embeddings import Embedder
from monitor.model import AssistantTurn
from monitor.verdict import JudgeResult, Verdict

log = logging.getLogger(__name__)

_NICE = 19  # low and idle; idle adds SCHED_IDLE: see set_priority
_STOP_S = 5.0  # how long a child may take to exit before it is killed
DEFAULT_PRIORITY: JudgePriority = JudgingSettings.model_fields["priority"].default


def set_priority(priority: JudgePriority) -> None:
    """This process's CPU priority. `idle`: where cores are short, the scheduler serves the
    receivers first. Nice 19 alone is not that: two loops working like event loops (2 ms of
    work, a 0.1 ms wait) on two cores left a busy child 37 % of the CPU time at nice 19 (50 % at
    nice 0), 20 % under SCHED_IDLE (bench/judge_priority.py). Through the sidecar
    (bench/ingest_vs_judge.py, 5 interleaved rounds, a 10,000-trace pass): at nice 19 alone the
    busy child switched the event loop's thread out about 1,000 times a pass, under SCHED_IDLE
    160-520 times; ingest's wall-clock throughput fell 12-15 % below the judge held back,
    7.5-10 % under SCHED_IDLE. The price: beside processes that never wait, an idle child gets
    almost nothing, and the backlog grows until sampling sheds (`low` keeps it a share)."""
    if priority == "normal":
        return
    os.nice(_NICE)
    if priority == "idle" and hasattr(os, "SCHED_IDLE"):  # Linux
        with contextlib.suppress(OSError):  # a sandbox may refuse it: nice 19 stays
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


class _CountingEmbedder(Embedder):
    """The judge's embedder, counting what its cache answered."""

    lookups = 0

    def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        self.lookups += len(texts)
        return super()._embed(texts, is_query)


def _serve(conn: Connection, settings: dict[str, Any], priority: JudgePriority = DEFAULT_PRIORITY
           ) -> None:
    """The child: build the judge, then answer turns until the pipe closes."""
    from monitor.judges.local import LocalJudge

    # Its life follows the pipe: the sidecar ends it on stop, and its own end closes it. A
    # Ctrl-C reaches the terminal's whole process group; it used to kill the child first, and
    # every interactive stop then restarted it ("judge worker process restarted").
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, signal.SIG_IGN)
    set_priority(priority)

    local = LocalJudgeSettings.model_validate(settings)
    embedder = _CountingEmbedder(threads=local.threads, max_chars=local.embed_chars,
                                 max_tokens=local.embed_tokens)
    judge = LocalJudge(local, embedder)
    while True:
        try:
            turn = conn.recv()
        except EOFError:
            return
        lookups, computed = embedder.lookups, embedder.computed
        try:
            result = result_to_dict(judge.judge_sync(AssistantTurn.model_validate(turn)))
            looked_up = embedder.lookups - lookups
            reply: tuple[str, Any, Any] = ("ok", result, (looked_up - (embedder.computed - computed),
                                                     looked_up))
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which retries the turn
            reply = ("error", type(exc).__name__, None)  # the type only: it may quote the turn
        try:
            conn.send(reply)
        except OSError:  # the sidecar is gone (killed): so is its turn's claim
            return


def result_to_dict(result: JudgeResult) -> dict[str, Any]:
    """Plain data for the pipe (what the store would keep of each verdict)."""
    return {**dataclasses.asdict(dataclasses.replace(result, verdicts=[])),
            "verdicts": [verdict.to_dict() for verdict in result.verdicts]}


def result_from_dict(data: dict[str, Any]) -> JudgeResult:
    verdicts = [Verdict.from_dict(verdict) for verdict in data.pop("verdicts")]
    return JudgeResult(verdicts=verdicts, **data)


class ProcessJudge:
    name = "local"

    def __init__(self, settings: LocalJudgeSettings, priority: JudgePriority = DEFAULT_PRIORITY
                 ) -> None:
        self.settings = settings.model_dump(mode="json")
        self.priority = priority
        self._context = multiprocessing.get_context("spawn")
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self._lock = asyncio.Lock()
        self.starts = 0  # children started (a restart after a death counts)
        self.cache_hits = self.cache_lookups = 0  # embeddings the turns asked for, and cached

    @property
    def pid(self) -> int | None:
        """The child's process id while one runs."""
        process = self._process
        return process.pid if process is not None and process.is_alive() else None

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        async with self._lock:
            conn = self._conn if self._conn is not None and self._alive() else self._start()
            try:
                conn.send(turn.model_dump(mode="json"))
                status, payload, cache = await asyncio.to_thread(conn.recv)
            except (EOFError, OSError, BrokenPipeError):
                self._kill()
                raise JudgeError("the judge worker process died; the turn is judged again by "
                                 "a new one") from None
            except BaseException:  # cancelled (stop) mid-turn: its reply must not answer another
                self._kill()
                raise
        if status == "error":
            raise JudgeError(f"local judge in the worker process failed: {payload}")
        self.cache_hits += cache[0]
        self.cache_lookups += cache[1]
        return result_from_dict(payload)

    def cache_stats(self) -> tuple[int, int]:
        """(embeddings answered by the cache, embeddings asked for) since start."""
        return self.cache_hits, self.cache_lookups

    async def aclose(self) -> None:
        """Ask the child to exit (close its pipe), kill it if it does not in time."""
        async with asyncio.timeout(_STOP_S * 2):
            process, conn = self._process, self._conn
            self._process = self._conn = None
            if conn is not None:
                conn.close()
            if process is not None:
                await asyncio.to_thread(process.join, _STOP_S)
                if process.is_alive():
                    process.kill()
                    await asyncio.to_thread(process.join, _STOP_S)

    def _alive(self) -> bool:
        return self._process is not None and self._process.is_alive() and self._conn is not None

    def _start(self) -> Connection:
        self._kill()
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(child, self.settings, self.priority),
                                        name="assistant-monitor-judge", daemon=True)
        process.start()
        child.close()  # ours closed: the parent sees EOF when the child dies
        self._process, self._conn = process, parent
        self.starts += 1
        if self.starts > 1:
            log.warning("judge worker process restarted (%d starts)", self.starts)
        return parent

    def _kill(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is not None and process.is_alive():
            process.kill()  # first: a thread reading the pipe sees its end, not a closed handle
            process.join(_STOP_S)
        if conn is not None:
            conn.close()
