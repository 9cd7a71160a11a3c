"""The verdict store inside the tenant: SQLite in WAL mode, and the judge queue that survives crashes.

    store = Store(Path("assistant-monitor.db"))
    store.enqueue(turn, reason="rate", probability=0.1)   # durable before anything else happens
    claimed = store.claim()                                # -> Claimed | None
    store.complete(claimed.trace_id, results)              # verdicts + state, one transaction

A sampled turn is written before it is handed to a judge, and its verdicts and its `judged`
state are written in one transaction, so a crash (even kill -9) loses no sampled turn and judges
none twice. `enqueue` is idempotent by trace id. Turns being judged when the process died are
put back to `pending` by `recover()` at start-up.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from monitor.model import AssistantTurn, KeptTurn, Sampled, turn_json
from monitor.verdict import LABELS, JudgeResult

SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    trace_id TEXT NOT NULL UNIQUE,
    service TEXT NOT NULL,
    route TEXT,
    turn_json TEXT NOT NULL,
    reason TEXT NOT NULL,            -- the sampling rule that kept it
    probability REAL NOT NULL,       -- its inclusion probability
    state TEXT NOT NULL,             -- pending | judging | judged | failed
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before REAL NOT NULL DEFAULT 0,
    error TEXT,
    received_at REAL NOT NULL,
    judged_at REAL
);
CREATE INDEX IF NOT EXISTS turns_by_state ON turns (state, seq);
CREATE INDEX IF NOT EXISTS turns_by_time ON turns (received_at);
CREATE TABLE IF NOT EXISTS verdicts (
    trace_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    metric TEXT NOT NULL,
    label TEXT,
    score REAL,
    rationale TEXT NOT NULL,
    details_json TEXT NOT NULL,
    prompt_version TEXT,
    created_at REAL NOT NULL,
    model TEXT,                      -- who judged: the model reported, or local checksums
    PRIMARY KEY (trace_id, judge, metric)
);
CREATE TABLE IF NOT EXISTS corrections (  -- a person's word on a verdict
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    trace_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    metric TEXT NOT NULL,
    verdict_label TEXT,              -- the verdict as it was when corrected
    verdict_score REAL,
    correct INTEGER NOT NULL,        -- 1: the verdict is right; 0: wrong, `label`/`score` are
    label TEXT,
    score REAL,
    author TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS corrections_by_turn ON corrections (trace_id);
CREATE TABLE IF NOT EXISTS judge_costs (
    trace_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    calls INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (trace_id, judge)
);
"""


T = TypeVar("T")

_CHUNK = 500  # rows a statement: 7 parameters each, within SQLite's 32,766


def _chunks(items: list[T]) -> Iterator[list[T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start:start + _CHUNK]


@dataclass(frozen=True, slots=True)
class Claimed:
    trace_id: str
    turn: AssistantTurn
    reason: str
    probability: float
    attempts: int


class Store:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: explicit transactions only, so each write commits at once.
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # durable across process crashes
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.executescript(SCHEMA)
        # Stores made before verdicts named their model gain the column (NULL: unknown).
        if "model" not in {row["name"] for row in self.db.execute("PRAGMA table_info(verdicts)")}:
            self.db.execute("ALTER TABLE verdicts ADD COLUMN model TEXT")
        self._backlog: int = self.db.execute(
            "SELECT count(*) FROM turns WHERE state IN ('pending', 'judging')").fetchone()[0]

    def close(self) -> None:
        self.db.close()

    # -- the queue -------------------------------------------------------------------------

    def enqueue(self, turn: KeptTurn, reason: str, probability: float) -> bool:
        """Persist a sampled turn; False if this trace id is already stored."""
        return self.enqueue_many([(turn, reason, probability)])[0]

    def enqueue_many(self, sampled: Sequence[Sampled]) -> list[bool]:
        """Persist sampled turns in one transaction (one commit for a pump's batch); for each,
        False if its trace id is already stored (or came earlier in `sampled`)."""
        now = time.time()
        added, rows, fresh = [], [], set()
        chunk: list[Any]  # trace ids, then rows
        with self._transaction():
            # A statement per chunk, not per row: each statement lets the event loop's thread
            # take the interpreter lock, and hand-offs per row cost more than the inserts.
            for chunk in _chunks([turn.trace_id for turn, _, _ in sampled]):
                stored = {row[0] for row in self.db.execute(
                    f"SELECT trace_id FROM turns WHERE trace_id IN ({', '.join('?' * len(chunk))})",
                    chunk)}
                for trace_id in chunk:
                    added.append(trace_id not in stored and trace_id not in fresh)
                    fresh.add(trace_id)
            for (turn, reason, probability), new in zip(sampled, added, strict=True):
                if new:
                    rows.append((turn.trace_id, turn.service, turn.route, turn_json(turn), reason,
                                 probability, now))
            for chunk in _chunks(rows):
                self.db.execute(
                    "INSERT INTO turns (trace_id, service, route, turn_json, reason, probability,"
                    " state, received_at) VALUES "
                    + ", ".join(["(?, ?, ?, ?, ?, ?, 'pending', ?)"] * len(chunk)),
                    [value for row in chunk for value in row])
        self._backlog += len(rows)
        return added

    def recover(self) -> int:
        """At start-up: turns left `judging` by a crash go back to `pending`."""
        return self.db.execute("UPDATE turns SET state = 'pending' WHERE state = 'judging'").rowcount

    def claim(self, now: float | None = None) -> Claimed | None:
        now = time.time() if now is None else now
        row = self.db.execute(
            "UPDATE turns SET state = 'judging', attempts = attempts + 1 WHERE seq = ("
            " SELECT seq FROM turns WHERE state = 'pending' AND not_before <= ? ORDER BY seq LIMIT 1)"
            " RETURNING trace_id, turn_json, reason, probability, attempts", (now,)).fetchone()
        if row is None:
            return None
        return Claimed(row["trace_id"], AssistantTurn.model_validate_json(row["turn_json"]),
                       row["reason"], row["probability"], row["attempts"])

    def complete(self, trace_id: str, results: list[JudgeResult],
                 turn: AssistantTurn | None = None) -> None:
        """Store the verdicts and mark the turn judged; `turn`: what to keep of it instead of
        what was enqueued (redacted: `store.redact`)."""
        now = time.time()
        with self._transaction():
            if turn is not None:
                self.db.execute("UPDATE turns SET turn_json = ? WHERE trace_id = ?",
                                (turn_json(turn), trace_id))
            # Plain INSERTs: a second judgement of the same turn would be an error, not an update.
            for result in results:
                self.db.executemany(
                    "INSERT INTO verdicts (trace_id, judge, metric, label, score,"
                    " rationale, details_json, prompt_version, created_at, model)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(trace_id, result.judge, v.metric, v.label, v.score, v.rationale,
                      json.dumps(v.details(), default=str), result.prompt_version, now,
                      result.model)
                     for v in result.verdicts])
                self.db.execute(
                    "INSERT INTO judge_costs VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (trace_id, result.judge, result.calls, result.input_tokens,
                     result.output_tokens, result.latency_s, now))
            done = self.db.execute("UPDATE turns SET state = 'judged', judged_at = ?, error = NULL"
                                   " WHERE trace_id = ? AND state = 'judging'", (now, trace_id))
        self._backlog -= done.rowcount

    def fail(self, trace_id: str, error: str, retry_at: float | None) -> None:
        """Judging failed for a reason about the turn (the attempt counts): put it back for a
        later attempt, or mark it failed when `retry_at` is None."""
        if retry_at is None:
            self._backlog -= self.db.execute(
                "UPDATE turns SET state = 'failed', error = ? WHERE trace_id = ? AND state = 'judging'",
                (error, trace_id)).rowcount
        else:
            self.db.execute("UPDATE turns SET state = 'pending', error = ?, not_before = ?"
                            " WHERE trace_id = ? AND state = 'judging'", (error, retry_at, trace_id))

    def release(self, trace_id: str, retry_at: float) -> None:
        """Put a turn back untouched, the attempt not counted: its judge is unavailable (down,
        answering garbage), or the sidecar stopped while judging it."""
        self.db.execute("UPDATE turns SET state = 'pending', attempts = attempts - 1,"
                        " not_before = ? WHERE trace_id = ? AND state = 'judging'",
                        (retry_at, trace_id))

    def state(self, trace_id: str) -> str | None:
        """pending | judging | judged | failed, or None when this trace id is not stored."""
        row = self.db.execute("SELECT state FROM turns WHERE trace_id = ?", (trace_id,)).fetchone()
        return row[0] if row else None

    def withdraw(self, trace_ids: set[str]) -> set[str]:
        """Take turns still waiting for a judge out of the queue (another replica judges them
        now); return those withdrawn. Turns being judged or done are left alone."""
        withdrawn = set()
        with self._transaction():
            for trace_id in trace_ids:
                if self.db.execute("DELETE FROM turns WHERE trace_id = ? AND state = 'pending'",
                                   (trace_id,)).rowcount:
                    withdrawn.add(trace_id)
        self._backlog -= len(withdrawn)
        return withdrawn

    def waiting(self) -> set[str]:
        """Trace ids of the turns waiting for a judge (not being judged)."""
        return {row[0] for row in self.db.execute("SELECT trace_id FROM turns"
                                                  " WHERE state = 'pending'")}

    def backlog(self) -> int:
        """Turns waiting for a judge (pending or being judged); kept in memory, it is per turn."""
        return self._backlog

    def tokens_since(self, since: float) -> int:
        tokens: int = self.db.execute(
            "SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM judge_costs"
            " WHERE created_at >= ?", (since,)).fetchone()[0]
        return tokens

    # -- reading -----------------------------------------------------------------------------

    def turns(self, limit: int = 20, state: str | None = None) -> list[dict[str, Any]]:
        query = "SELECT trace_id, service, route, reason, probability, state, attempts, error," \
                " received_at, judged_at FROM turns"
        args: tuple[Any, ...] = ()
        if state:
            query += " WHERE state = ?"
            args = (state,)
        rows = self.db.execute(query + " ORDER BY seq DESC LIMIT ?", (*args, limit)).fetchall()
        return [dict(row) for row in rows]

    def list_turns(self, limit: int = 20, state: str | None = None, route: str | None = None,
                   metric: str | None = None, below: float | None = None,
                   failed_tools: bool = False, since: float | None = None) -> list[dict[str, Any]]:
        """The newest stored turns matching the filters (`route`: "route" or "service/route";
        a `metric` verdict, with a score below `below`; received at or after `since`), each with
        {metric: (label, score)} and its tool calls ({name, error})."""
        where: list[str]
        args: list[str | float]
        where, args = [], []
        if state:
            where.append("t.state = ?")
            args.append(state)
        if route:
            service, _, name = route.rpartition("/")
            where.append("t.route = ?")
            args.append(name)
            if service:
                where.append("t.service = ?")
                args.append(service)
        if metric:
            where.append("EXISTS (SELECT 1 FROM verdicts v WHERE v.trace_id = t.trace_id"
                         " AND v.metric = ?" + (" AND v.score < ?)" if below is not None else ")"))
            args.extend([metric, below] if below is not None else [metric])
        if since is not None:
            where.append("t.received_at >= ?")
            args.append(since)
        if failed_tools:
            where.append("EXISTS (SELECT 1 FROM json_each(t.turn_json, '$.tool_calls') c"
                         " WHERE json_extract(c.value, '$.error') IS NOT NULL)")
        query = ("SELECT t.trace_id, t.service, t.route, t.state, t.reason, t.probability,"
                 " t.received_at, (SELECT json_group_array(json_object('name', json_extract("
                 "c.value, '$.name'), 'error', json_extract(c.value, '$.error')))"
                 " FROM json_each(t.turn_json, '$.tool_calls') c) AS tool_calls"
                 " FROM turns t" + (" WHERE " + " AND ".join(where) if where else "")
                 + " ORDER BY t.seq DESC LIMIT ?")
        rows = [dict(r) for r in self.db.execute(query, (*args, limit))]
        by_id = {r["trace_id"]: {**r, "tool_calls": json.loads(r["tool_calls"]), "verdicts": {}}
                 for r in rows}
        if by_id:
            marks = ",".join("?" * len(by_id))
            for v in self.db.execute(f"SELECT trace_id, metric, label, score FROM verdicts"
                                     f" WHERE trace_id IN ({marks}) ORDER BY judge", tuple(by_id)):
                by_id[v["trace_id"]]["verdicts"].setdefault(v["metric"], (v["label"], v["score"]))
        return list(by_id.values())

    def show(self, trace_id: str) -> dict[str, Any] | None:
        """A stored turn whole: its row, the turn, its verdicts and costs, the corrections
        people made, and the previous and next stored turns of its conversation."""
        row = self.db.execute("SELECT * FROM turns WHERE trace_id = ?", (trace_id,)).fetchone()
        if row is None:
            return None
        shown = dict(row)
        shown["turn"] = json.loads(shown.pop("turn_json"))
        shown["verdicts"] = [
            {**dict(v), "details": json.loads(v["details_json"])}
            for v in self.db.execute("SELECT judge, metric, label, score, rationale,"
                                     " details_json, prompt_version, model FROM verdicts"
                                     " WHERE trace_id = ? ORDER BY judge, metric", (trace_id,))]
        for v in shown["verdicts"]:
            v.pop("details_json")
        shown["costs"] = [dict(c) for c in self.db.execute(
            "SELECT judge, calls, input_tokens, output_tokens, latency_s FROM judge_costs"
            " WHERE trace_id = ?", (trace_id,))]
        shown["corrections"] = self.corrections(trace_id)
        shown["conversation"] = self._neighbours(shown["turn"].get("conversation_id"), row["seq"])
        return shown

    def _neighbours(self, conversation_id: str | None, seq: int) -> dict[str, str | None]:
        """The trace ids of the stored turns before and after this one in its conversation."""
        if not conversation_id:
            return {"previous": None, "next": None}
        same = "json_extract(turn_json, '$.conversation_id') = ?"
        previous = self.db.execute(f"SELECT trace_id FROM turns WHERE {same} AND seq < ?"
                                   " ORDER BY seq DESC LIMIT 1", (conversation_id, seq)).fetchone()
        following = self.db.execute(f"SELECT trace_id FROM turns WHERE {same} AND seq > ?"
                                     " ORDER BY seq LIMIT 1", (conversation_id, seq)).fetchone()
        return {"previous": previous[0] if previous else None,
                "next": following[0] if following else None}

    # -- people's corrections ------------------------------------------------------------------

    def add_correction(self, trace_id: str, judge: str, metric: str, correct: bool,
                       author: str, label: str | None = None, score: float | None = None) -> int:
        """A person's word on a stored verdict: right, or wrong with the right label (a labelled
        metric) or score (a scored one). Raises KeyError when there is no such verdict,
        ValueError when the right label or score is missing or invalid. Returns its id."""
        if not correct:
            label, score = _right_answer(metric, label, score)
        with self._transaction():
            verdict = self.db.execute(
                "SELECT label, score FROM verdicts WHERE trace_id = ? AND judge = ? AND metric = ?",
                (trace_id, judge, metric)).fetchone()
            if verdict is None:
                raise KeyError(f"no {metric} verdict of judge {judge!r} for turn {trace_id}")
            cursor = self.db.execute(
                "INSERT INTO corrections (trace_id, judge, metric, verdict_label, verdict_score,"
                " correct, label, score, author, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (trace_id, judge, metric, verdict["label"], verdict["score"], int(correct),
                 label if not correct else None, score if not correct else None, author,
                 time.time()))
        return int(cursor.lastrowid or 0)

    def corrections(self, trace_id: str | None = None) -> list[dict[str, Any]]:
        """Corrections, oldest first (of one turn, or all)."""
        query = "SELECT * FROM corrections" + (" WHERE trace_id = ?" if trace_id else "")
        rows = self.db.execute(query + " ORDER BY id", (trace_id,) if trace_id else ())
        return [{**dict(r), "correct": bool(r["correct"])} for r in rows]

    def failing(self, groundedness_below: float) -> Iterator[AssistantTurn]:
        """Judged turns with no answer or low groundedness, oldest first (an eval set)."""
        rows = self.db.execute(
            "SELECT DISTINCT t.seq, t.turn_json FROM turns t JOIN verdicts v USING (trace_id)"
            " WHERE (v.metric = 'completeness' AND v.label = 'no_answer')"
            " OR (v.metric = 'groundedness' AND v.score < ?) ORDER BY t.seq",
            (groundedness_below,))
        for row in rows:
            yield AssistantTurn.model_validate_json(row["turn_json"])

    def purge(self, older_than: float, batch: int = 500) -> int:
        """Retention: drop judged and failed turns (and their verdicts) older than the cut-off,
        `batch` turns a transaction (a long transaction would hold the writer lock)."""
        total = 0
        while purged := self.purge_batch(older_than, batch):
            total += purged
        return total

    def purge_batch(self, older_than: float, limit: int) -> int:
        """One transaction of `purge`: at most `limit` turns; how many went."""
        with self._transaction():
            old = [(row[0],) for row in self.db.execute(
                "SELECT trace_id FROM turns WHERE received_at < ? AND state IN ('judged', 'failed')"
                " LIMIT ?", (older_than, limit))]
            for table in ("verdicts", "judge_costs", "corrections", "turns"):
                self.db.executemany(f"DELETE FROM {table} WHERE trace_id = ?", old)
        return len(old)

    def _transaction(self) -> Any:
        return _Transaction(self.db)


def _right_answer(metric: str, label: str | None, score: float | None
                  ) -> tuple[str | None, float | None]:
    """The correction of a wrong verdict: a label of the metric's, or a score in 0..1."""
    if metric in LABELS:
        if label not in LABELS[metric]:
            raise ValueError(f"a wrong {metric} verdict needs the right label, one of "
                             f"{', '.join(LABELS[metric])}; got {label!r}")
        return label, None
    if score is None or not 0.0 <= score <= 1.0:
        raise ValueError(f"a wrong {metric} verdict needs the right score, 0..1; got {score!r}")
    return None, score


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


class ThreadedStore:
    """The sidecar's store: the same operations, awaited, each run on one thread of its own, so
    the event loop serving the receivers never waits on SQLite (a commit's fsync, a busy lock,
    a purge). One thread: the calls keep their order and the connection is used by one thread
    at a time. `backlog()` is a counter in memory and stays synchronous; `sync` is the Store
    underneath, for reads outside the sidecar's hot path (the CLI, tests).
    """

    def __init__(self, store: Store) -> None:
        self.sync = store
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store")

    async def _run(self, call: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, call, *args)

    def backlog(self) -> int:
        return self.sync.backlog()

    async def enqueue(self, turn: KeptTurn, reason: str, probability: float) -> bool:
        return await self._run(self.sync.enqueue, turn, reason, probability)

    async def enqueue_many(self, sampled: Sequence[Sampled]) -> list[bool]:
        return await self._run(self.sync.enqueue_many, sampled)

    async def recover(self) -> int:
        return await self._run(self.sync.recover)

    async def claim(self) -> Claimed | None:
        """A claim cut short (stop) still happens on the store's thread: it is put back."""
        claiming = asyncio.ensure_future(self._run(self.sync.claim))
        try:
            return await asyncio.shield(claiming)
        except asyncio.CancelledError:
            claimed = await claiming
            if claimed is not None:
                await self.release(claimed.trace_id, retry_at=0.0)
            raise

    async def complete(self, trace_id: str, results: list[JudgeResult],
                       turn: AssistantTurn | None = None) -> None:
        await self._run(self.sync.complete, trace_id, results, turn)

    async def fail(self, trace_id: str, error: str, retry_at: float | None) -> None:
        await self._run(self.sync.fail, trace_id, error, retry_at)

    async def release(self, trace_id: str, retry_at: float) -> None:
        await self._run(self.sync.release, trace_id, retry_at)

    async def state(self, trace_id: str) -> str | None:
        return await self._run(self.sync.state, trace_id)

    async def withdraw(self, trace_ids: set[str]) -> set[str]:
        return await self._run(self.sync.withdraw, trace_ids)

    async def waiting(self) -> set[str]:
        return await self._run(self.sync.waiting)

    async def tokens_since(self, since: float) -> int:
        return await self._run(self.sync.tokens_since, since)

    async def purge(self, older_than: float, batch: int = 500) -> int:
        """`Store.purge`, one batch a call on the store's thread: judging goes on between them."""
        total = 0
        while purged := await self._run(self.sync.purge_batch, older_than, batch):
            total += purged
        return total

    async def close(self) -> None:
        await self._run(self.sync.close)
        self._thread.shutdown(wait=False)
