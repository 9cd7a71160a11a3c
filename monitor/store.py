"""The verdict store inside the tenant, and the judge queue that survives crashes: SQLite in WAL
mode on one node (the default), or PostgreSQL shared by a fleet of replicas.

    store = Store(Path("assistant-monitor.db"))            # SQLite, this node's
    store = Store("postgresql://app:pw@db:5432/monitor", replica="monitor-0")  # a fleet's
    store = Store.open(settings.store)                      # whichever the configuration names
    store.enqueue(turn, reason="rate", probability=0.1)   # durable before anything else happens
    claimed = store.claim()                                # -> Claimed | None
    store.complete(claimed.trace_id, results)              # verdicts + state, one transaction

A sampled turn is written before it is handed to a judge, and its verdicts and its `judged`
state are written in one transaction, so a crash (even kill -9) loses no sampled turn and judges
none twice. `enqueue` is idempotent by trace id. Turns being judged when the process died are
put back to `pending` by `recover()` at start-up.

**A fleet.** Replicas sharing a PostgreSQL store share what was judged (turns, verdicts, costs,
corrections: the `verdicts` commands, retention and the pages see every replica's), and each
judges its own turns: a turn is held by the replica that stored it (`turns.replica`), and the
queue's calls (`claim`, `recover`, `waiting`, `withdraw`, `backlog`, and `fail`, `release`,
`complete` of a claimed turn) see only this replica's. So `recover()` at start-up puts back only
what this replica was judging when it stopped, never a turn another live replica is judging, and
a judge queue on Kafka still tells the replica that read a turn when it is judged. A replica's
name must be unique among the live ones and the same across its restarts (a StatefulSet pod's
name; the host name by default). A turn stored again by another replica while it still waits
(Kafka moved its partition: the new owner read it again) is taken over by that replica: it
judges it, and the old holder's `complete` is refused (`NotClaimed`), so a turn's verdicts are
stored once. `claim` locks the row it takes (`FOR UPDATE SKIP LOCKED`), so two connections under
one name never take the same turn either.

One implementation for both databases: the SQL is written once with `?` placeholders and differs
only where it must (column types, the JSON functions `list_turns` uses, row locks). The schema
carries its version (`schema_version`); opening a store brings an older one up to date in one
transaction, at most one process at a time, and does nothing to a current one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from monitor.judge_metrics import LABELS
from monitor.model import AssistantTurn, KeptTurn, Sampled, turn_json
from monitor.verdict import JudgeResult, SessionVerdict

if TYPE_CHECKING:
    from monitor.config import StoreSettings

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3

# The tables (verdict_revisions and sessions since version 3; the others as they were before the
# schema had versions). {serial}, {text} and {real} are each database's types: PostgreSQL's
# `real` is single precision, and its text compares and sorts byte by byte here (COLLATE "C") as
# SQLite's does, whatever the database's locale.
TABLES = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS turns (
    seq {serial},
    trace_id {text} NOT NULL UNIQUE,
    service {text} NOT NULL,
    route {text},
    turn_json TEXT NOT NULL,
    reason {text} NOT NULL,              -- the sampling rule that kept it
    probability {real} NOT NULL,         -- its inclusion probability
    state {text} NOT NULL,               -- pending | judging | judged | failed
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before {real} NOT NULL DEFAULT 0,
    error TEXT,
    received_at {real} NOT NULL,
    judged_at {real}
)""",
    """CREATE TABLE IF NOT EXISTS verdicts (
    trace_id {text} NOT NULL,
    judge {text} NOT NULL,
    metric {text} NOT NULL,
    label {text},
    score {real},
    rationale TEXT NOT NULL,
    details_json TEXT NOT NULL,
    prompt_version {text},
    created_at {real} NOT NULL,
    PRIMARY KEY (trace_id, judge, metric)
)""",
    """CREATE TABLE IF NOT EXISTS corrections (  -- a person's word on a verdict
    id {serial},
    trace_id {text} NOT NULL,
    judge {text} NOT NULL,
    metric {text} NOT NULL,
    verdict_label {text},                -- the verdict as it was when corrected
    verdict_score {real},
    correct INTEGER NOT NULL,            -- 1: the verdict is right; 0: wrong, label/score are
    label {text},
    score {real},
    author {text} NOT NULL,
    created_at {real} NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS verdict_revisions (  -- verdicts a later revision replaced
    trace_id {text} NOT NULL,
    revision INTEGER NOT NULL,           -- the turn's revision they were given to
    verdicts_json TEXT NOT NULL,         -- its verdicts as `show` gives them
    PRIMARY KEY (trace_id, revision)
)""",
    """CREATE TABLE IF NOT EXISTS sessions (  -- closed conversations and their local outcome
    id {serial},
    conversation_id {text} NOT NULL,
    service {text} NOT NULL,
    route {text},
    outcome {text} NOT NULL,             -- resolved | unresolved | escalated | abandoned | unjudged
    closed {text} NOT NULL,              -- idle | ended
    turns INTEGER NOT NULL,
    turns_to_resolution INTEGER,
    rephrasings INTEGER NOT NULL,
    negative_feedback INTEGER NOT NULL,
    person_requests INTEGER NOT NULL,
    started_at {real} NOT NULL,          -- its first turn's completion
    closed_at {real} NOT NULL,
    replica {text} NOT NULL DEFAULT '',  -- the replica that followed it (and judges it)
    -- an LLM session judge's: '' (none configured), pending, judging, judged, failed, no_turns
    judge_state {text} NOT NULL DEFAULT '',
    judge {text},
    judged_outcome {text},               -- resolved | unresolved | escalated | abandoned
    frustration {text},                  -- none | some | high
    rationale TEXT,
    judged_at {real}
)""",
    """CREATE TABLE IF NOT EXISTS judge_costs (
    trace_id {text} NOT NULL,
    judge {text} NOT NULL,
    calls INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latency_s {real} NOT NULL,
    created_at {real} NOT NULL,
    PRIMARY KEY (trace_id, judge)
)""",
)
# Columns added since, by version; a store made before one gains it. 1: who judged, the model
# reported or local checksums (NULL in older rows: unknown). 2: the replica whose queue holds the
# turn ('' on a single node), and the turn's conversation, from its JSON, indexed for `show`.
# 3: the turn's revision (late spans changed it after it was judged; its JSON's `revision`).
COLUMNS = (
    ("verdicts", "model", "model {text}"),
    ("turns", "replica", "replica {text} NOT NULL DEFAULT ''"),
    ("turns", "conversation_id", "conversation_id {text} GENERATED ALWAYS AS {conversation}"),
    ("turns", "revision", "revision INTEGER NOT NULL DEFAULT 0"),
)
INDEXES = (
    "CREATE INDEX IF NOT EXISTS turns_by_state ON turns (state, seq)",
    "CREATE INDEX IF NOT EXISTS turns_by_time ON turns (received_at)",
    "CREATE INDEX IF NOT EXISTS turns_by_replica ON turns (replica, state, seq)",
    "CREATE INDEX IF NOT EXISTS turns_by_conversation ON turns (conversation_id, seq)",
    "CREATE INDEX IF NOT EXISTS corrections_by_turn ON corrections (trace_id)",
    "CREATE INDEX IF NOT EXISTS sessions_by_time ON sessions (closed_at)",
    "CREATE INDEX IF NOT EXISTS sessions_by_state ON sessions (replica, judge_state, id)",
)
_WAITING = "state IN ('pending', 'judging')"


T = TypeVar("T")

SESSION_TURNS = 200  # of a session, the most a session judge reads (its last)
_CHUNK = 500  # rows a statement: 8 parameters each, within SQLite's 32,766


def _chunks(items: list[T]) -> Iterator[list[T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start:start + _CHUNK]


def _marks(items: Sequence[object]) -> str:
    return ", ".join("?" * len(items))


class StoreError(Exception):
    """The store cannot be opened: unreachable, or written by a newer release."""


class StoreUnavailable(StoreError):
    """The database cannot be reached now (PostgreSQL: the connection was lost, or refused); the
    call did nothing, or its transaction's outcome is unknown. The sidecar's store retries."""


class NotClaimed(StoreError):
    """`complete` of a turn this replica is not judging: judged already, or taken over by another
    replica; nothing was stored."""


@dataclass(frozen=True, slots=True)
class Claimed:
    trace_id: str
    turn: AssistantTurn
    reason: str
    probability: float
    attempts: int


# -- the two databases ------------------------------------------------------------------------

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_MIGRATION_LOCK = 0x61737369_6d6f6e  # pg_advisory_xact_lock's key: one migration at a time


def shown_url(url: str) -> str:
    """A PostgreSQL URL as it may be shown (logs, errors, the CLI): its password masked."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = f"{parts.username or ''}:***@{netloc.rpartition('@')[2]}"
    query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", parts.query)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


class _SQLite:
    """One node's store: a file, in WAL mode."""

    types = {"serial": "INTEGER PRIMARY KEY AUTOINCREMENT", "text": "TEXT", "real": "REAL",
             "conversation": "(json_extract(turn_json, '$.conversation_id')) VIRTUAL"}
    skip_locked = ""  # one writer at a time: SQLite locks the file
    # A turn's tool calls, [{name, error}] as JSON text; whether one of them failed.
    tool_calls = ("(SELECT json_group_array(json_object('name', json_extract(c.value, '$.name'),"
                  " 'error', json_extract(c.value, '$.error')))"
                  " FROM json_each(t.turn_json, '$.tool_calls') c)")
    failed_tool = ("EXISTS (SELECT 1 FROM json_each(t.turn_json, '$.tool_calls') c"
                   " WHERE json_extract(c.value, '$.error') IS NOT NULL)")

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: explicit transactions only, so each write commits at once.
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA busy_timeout=5000")
        # A new file opened by two processes at once: one of them turns it to WAL, and the
        # other's pragma may find it locked, without waiting (SQLite's busy handler is not asked).
        deadline = time.monotonic() + 5.0
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        self.db.execute("PRAGMA synchronous=NORMAL")  # durable across process crashes

    def columns(self, table: str) -> set[str]:
        return {row["name"] for row in self.db.execute(f"PRAGMA table_info({table})")}

    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    exclusive = transaction  # BEGIN IMMEDIATE: the file's one writer


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


class _Postgres:
    """A fleet's store: a PostgreSQL database, over psycopg 3."""

    types = {"serial": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
             "text": 'TEXT COLLATE "C"', "real": "DOUBLE PRECISION",
             "conversation": "((turn_json::json ->> 'conversation_id')) STORED"}
    skip_locked = " FOR UPDATE SKIP LOCKED"  # rows another connection has locked are passed over
    # `json`, not `jsonb`: read as it is, no conversion of the whole turn.
    _calls = ("json_array_elements(CASE json_typeof(t.turn_json::json -> 'tool_calls')"
              " WHEN 'array' THEN t.turn_json::json -> 'tool_calls' END) WITH ORDINALITY c(value, n)")
    tool_calls = ("(SELECT coalesce(json_agg(json_build_object('name', c.value -> 'name', 'error',"
                  f" c.value -> 'error') ORDER BY c.n), '[]')::text FROM {_calls})")
    failed_tool = f"EXISTS (SELECT 1 FROM {_calls} WHERE json_typeof(c.value -> 'error') <> 'null')"

    def __init__(self, url: str) -> None:
        self.shown = shown_url(url)
        self.db = _PgConnection(url, self.shown)

    def columns(self, table: str) -> set[str]:
        return {row[0] for row in self.db.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = ?", (table,))}

    def transaction(self) -> Any:
        return self.db.transaction()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self.db.transaction():
            self.db.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
            yield


class _PgConnection:
    """A psycopg connection that reads the store's SQL as sqlite3 does: `?` placeholders (the
    store's SQL has no other `?`, and no `%`), rows read by index or by column name. It commits
    each statement but in `transaction()`; after a lost connection the next call connects again
    (the call that found it lost fails)."""

    def __init__(self, url: str, shown: str) -> None:
        import psycopg  # only a fleet's store needs it: the sidecar's import stays light
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        self._psycopg = psycopg
        self._shown = shown
        try:
            given = conninfo_to_dict(url)
        except psycopg.ProgrammingError:  # libpq's message may quote the password: not shown
            raise StoreError(f"not a PostgreSQL URL libpq can read: {shown}") from None
        defaults: dict[str, str | int] = {"connect_timeout": 10,
                                          "application_name": "assistant-monitor"}
        self._conninfo = make_conninfo(url, **{k: v for k, v in defaults.items() if k not in given})
        self._conn = self._connect()

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(self._conninfo, autocommit=True, row_factory=_pg_rows)
        except self._psycopg.OperationalError as exc:  # libpq's words: host, port, user, reason
            raise StoreUnavailable(f"cannot connect to the store {self._shown}: {exc}") from None

    @property
    def conn(self) -> Any:
        if self._conn.broken:
            self._conn = self._connect()
        return self._conn

    @contextlib.contextmanager
    def _lost(self) -> Iterator[None]:
        """A call that lost the connection raises StoreUnavailable (the next one reconnects)."""
        try:
            yield
        except self._psycopg.OperationalError as exc:
            if self._conn.broken:
                raise StoreUnavailable(f"lost the connection to the store {self._shown}: "
                                       f"{type(exc).__name__}") from None
            raise

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._lost():
            return self.conn.execute(_pg_sql(sql), [_pg_value(v) for v in params])

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        with self._lost():
            cursor = self.conn.cursor()
            if rows:
                cursor.executemany(_pg_sql(sql), [[_pg_value(v) for v in row] for row in rows])
            return cursor

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lost(), self.conn.transaction():
            yield

    def close(self) -> None:
        self._conn.close()


@lru_cache(maxsize=256)
def _pg_sql(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


_JSON_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def _pg_value(value: Any) -> Any:
    """PostgreSQL's text holds no NUL character, which SQLite's does (a span's attribute may
    carry one): a NUL, or one escaped in a turn's JSON, becomes U+FFFD."""
    if isinstance(value, str) and ("\x00" in value or "\\u0000" in value):
        return _JSON_NUL.sub(r"\1\\ufffd", value.replace("\x00", "\ufffd"))
    return value


class _PgRow(tuple[Any, ...]):
    """A row read as sqlite3.Row is: row[0], row["name"], dict(row)."""

    names: dict[str, int]

    def __new__(cls, values: Sequence[Any], names: dict[str, int]) -> _PgRow:
        row = super().__new__(cls, values)
        row.names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(self.names[key] if isinstance(key, str) else key)

    def keys(self) -> list[str]:
        return list(self.names)


def _pg_rows(cursor: Any) -> Callable[[Sequence[Any]], _PgRow]:
    names = {column.name: i for i, column in enumerate(cursor.description or ())}
    return lambda values: _PgRow(values, names)


# -- the store ----------------------------------------------------------------------------------

class Store:
    def __init__(self, where: Path | str, replica: str = "") -> None:
        """`where`: an SQLite file, or a postgresql:// URL (a fleet's store); `replica`: this
        replica's name in it, whose queue is the turns it stored (a single node's: '')."""
        self.replica = replica
        self._sql: _SQLite | _Postgres
        self.path: Path | str  # the SQLite file, or the URL with its password masked
        if isinstance(where, str) and where.startswith(POSTGRES_SCHEMES):
            self._sql = _Postgres(where)
            self.path = self._sql.shown
        else:
            self.path = Path(where)
            self._sql = _SQLite(self.path)
        # sqlite3's connection, or the PostgreSQL one that reads the same SQL and rows
        self.db: Any = self._sql.db
        try:
            self._migrate()
        except BaseException:
            self.db.close()
            raise
        # Turns this replica holds, pending or being judged: counted in memory, read per batch
        # and per judged turn. Counted again whenever a claim finds nothing to take, which also
        # catches up with turns another replica took over.
        self._backlog: int = self._held()

    @classmethod
    def open(cls, settings: StoreSettings) -> Store:
        """The store the configuration names: PostgreSQL at `url`, else SQLite at `path`."""
        if settings.url is None:
            return cls(settings.path)
        replica = settings.replica or socket.gethostname()
        store = cls(settings.url.get_secret_value(), replica)
        log.info("verdict store %s, as replica %s", store.path, replica)
        return store

    def close(self) -> None:
        self.db.close()

    def _migrate(self) -> None:
        """Bring the store to SCHEMA_VERSION; a current one is only read. Concurrent start-ups
        take turns: SQLite's write lock, a PostgreSQL advisory lock."""
        if self._version() == SCHEMA_VERSION:
            return
        with self._sql.exclusive():
            version = self._version()  # another process may have done it meanwhile
            if version == SCHEMA_VERSION:
                return
            types = self._sql.types
            for statement in TABLES:
                self.db.execute(statement.format(**types))
            for table, column, definition in COLUMNS:  # idempotent: a column there stays
                if column not in self._sql.columns(table):
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {definition.format(**types)}")
            for statement in INDEXES:
                self.db.execute(statement)
            self.db.execute("DELETE FROM schema_version")
            self.db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))

    def _version(self) -> int:
        """The schema's version; 0 before versions were kept (or a new store)."""
        if "version" not in self._sql.columns("schema_version"):
            return 0
        version = int(self.db.execute("SELECT coalesce(max(version), 0) FROM schema_version")
                      .fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(f"the store {self.path} has schema version {version}, written by a "
                             f"newer release (this one reads up to {SCHEMA_VERSION}): upgrade")
        return version

    def _held(self) -> int:
        return int(self.db.execute(f"SELECT count(*) FROM turns WHERE replica = ? AND {_WAITING}",
                                   (self.replica,)).fetchone()[0])

    # -- the queue -------------------------------------------------------------------------

    def enqueue(self, turn: KeptTurn, reason: str, probability: float) -> bool:
        """Persist a sampled turn; False if this trace id is already stored."""
        return self.enqueue_many([(turn, reason, probability)])[0]

    def enqueue_many(self, sampled: Sequence[Sampled]) -> list[bool]:
        """Persist sampled turns in one transaction (one commit for a pump's batch); for each,
        False if its trace id is already stored (or came earlier in `sampled`). A turn stored
        by another replica and still waiting is taken over (True): this replica judges it. A
        later revision of a stored turn (late spans changed it) replaces it, to be judged again
        (True); the verdicts given to the one before move to `verdict_revisions`."""
        now = time.time()
        newest: dict[str, Sampled] = {}  # each trace id's highest revision, the first of equals
        for kept in sampled:
            before = newest.get(kept[0].trace_id)
            if before is None or kept[0].revision > before[0].revision:
                newest[kept[0].trace_id] = kept
        ours: set[str] = set()
        chunk: list[Any]  # trace ids, then rows
        with self._transaction():
            # A statement per chunk, not per row: each statement lets the event loop's thread
            # take the interpreter lock, and hand-offs per row cost more than the inserts.
            stored: dict[str, Any] = {}  # trace id -> (replica, state, revision)
            for chunk in _chunks(sorted(newest)):
                stored.update((row[0], tuple(row)[1:]) for row in self.db.execute(
                    f"SELECT trace_id, replica, state, revision FROM turns"
                    f" WHERE trace_id IN ({_marks(chunk)})", chunk))
            revised = {trace_id for trace_id, (_, _, revision) in stored.items()
                       if newest[trace_id][0].revision > revision}
            others = [trace_id for trace_id, (replica, state, _) in stored.items()
                      if trace_id not in revised and replica != self.replica
                      and state in ("pending", "judging")]  # waiting in another replica's queue
            rows = [(trace_id, turn.service, turn.route, turn_json(turn), reason, probability,
                     now, self.replica, turn.revision)
                    for turn, reason, probability in newest.values()
                    if (trace_id := turn.trace_id) not in stored]
            for chunk in _chunks(rows):
                ours.update(row[0] for row in self.db.execute(  # (a conflict: another replica's)
                    "INSERT INTO turns (trace_id, service, route, turn_json, reason, probability,"
                    " received_at, replica, revision, state) VALUES "
                    + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')"] * len(chunk))
                    + " ON CONFLICT (trace_id) DO NOTHING RETURNING trace_id",
                    [value for row in chunk for value in row]))
            for chunk in _chunks(others):
                ours.update(row[0] for row in self.db.execute(
                    f"UPDATE turns SET replica = ?, state = 'pending' WHERE trace_id IN"
                    f" ({_marks(chunk)}) AND replica <> ? AND {_WAITING} RETURNING trace_id",
                    (self.replica, *chunk, self.replica)))
            queued = len(ours)
            for trace_id in sorted(revised):
                replica, state, revision = stored[trace_id]
                self._revise(newest[trace_id][0], revision)
                # one more waits in this queue, unless it waited here already
                queued += replica != self.replica or state not in ("pending", "judging")
                ours.add(trace_id)
        self._backlog += queued
        added, seen = [], set()
        for kept in sampled:
            trace_id = kept[0].trace_id
            added.append(trace_id in ours and trace_id not in seen and kept is newest[trace_id])
            seen.add(trace_id)
        return added

    def _revise(self, turn: KeptTurn, before: int) -> None:
        """A stored turn replaced by a later revision, waiting for a judge again; the verdicts
        given to revision `before` kept in `verdict_revisions`. A judgement of it under way is
        not stored: `complete` asks for the revision it judged."""
        trace_id = turn.trace_id
        verdicts = self._verdicts(trace_id)
        if verdicts:
            self.db.execute("INSERT INTO verdict_revisions (trace_id, revision, verdicts_json)"
                            " VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                            (trace_id, before, json.dumps(verdicts)))
        self.db.execute("DELETE FROM verdicts WHERE trace_id = ?", (trace_id,))
        self.db.execute(
            "UPDATE turns SET turn_json = ?, revision = ?, state = 'pending', attempts = 0,"
            " not_before = 0, error = NULL, judged_at = NULL, replica = ? WHERE trace_id = ?",
            (turn_json(turn), turn.revision, self.replica, trace_id))

    def recover(self) -> int:
        """At start-up: this replica's turns (and sessions) left `judging` by a crash go back to
        `pending`; how many turns."""
        self.db.execute("UPDATE sessions SET judge_state = 'pending'"
                        " WHERE replica = ? AND judge_state = 'judging'", (self.replica,))
        return int(self.db.execute("UPDATE turns SET state = 'pending'"
                                   " WHERE replica = ? AND state = 'judging'",
                                   (self.replica,)).rowcount)

    def claim(self, now: float | None = None) -> Claimed | None:
        """The oldest of this replica's turns due for judging, now `judging`; None when none."""
        now = time.time() if now is None else now
        row = self.db.execute(
            "UPDATE turns SET state = 'judging', attempts = attempts + 1 WHERE seq = ("
            " SELECT seq FROM turns WHERE replica = ? AND state = 'pending' AND not_before <= ?"
            f" ORDER BY seq LIMIT 1{self._sql.skip_locked}) AND state = 'pending'"
            " RETURNING trace_id, turn_json, reason, probability, attempts",
            (self.replica, now)).fetchone()
        if row is None:
            self._backlog = self._held()
            return None
        return Claimed(row["trace_id"], AssistantTurn.model_validate_json(row["turn_json"]),
                       row["reason"], row["probability"], row["attempts"])

    def complete(self, trace_id: str, results: list[JudgeResult],
                 turn: AssistantTurn | None = None, revision: int = 0) -> None:
        """Store the verdicts of the turn's `revision` and mark it judged; `turn`: what to keep
        of it instead of what was enqueued (redacted: `store.redact`). NotClaimed, and nothing
        stored, when this replica is not judging it, or a later revision replaced it meanwhile:
        a second judgement would be a bug, not an update, and a turn taken over is judged by the
        replica that took it."""
        now = time.time()
        kept = (", turn_json = ?", (turn_json(turn),)) if turn is not None else ("", ())
        with self._transaction():
            if not self.db.execute(
                    f"UPDATE turns SET state = 'judged', judged_at = ?, error = NULL{kept[0]}"
                    " WHERE trace_id = ? AND replica = ? AND state = 'judging' AND revision = ?",
                    (now, *kept[1], trace_id, self.replica, revision)).rowcount:
                raise NotClaimed(f"turn {trace_id} (revision {revision}) is not being judged by "
                                 "this replica")
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
                    "INSERT INTO judge_costs (trace_id, judge, calls, input_tokens, output_tokens,"
                    " latency_s, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (trace_id, judge) DO UPDATE SET"  # a revision judged again
                    " calls = judge_costs.calls + excluded.calls,"
                    " input_tokens = judge_costs.input_tokens + excluded.input_tokens,"
                    " output_tokens = judge_costs.output_tokens + excluded.output_tokens,"
                    " latency_s = judge_costs.latency_s + excluded.latency_s",
                    (trace_id, result.judge, result.calls, result.input_tokens,
                     result.output_tokens, result.latency_s, now))
        self._backlog -= 1

    def fail(self, trace_id: str, error: str, retry_at: float | None) -> None:
        """Judging failed for a reason about the turn (the attempt counts): put it back for a
        later attempt, or mark it failed when `retry_at` is None."""
        if retry_at is None:
            self._backlog -= self.db.execute(
                "UPDATE turns SET state = 'failed', error = ?"
                " WHERE trace_id = ? AND replica = ? AND state = 'judging'",
                (error, trace_id, self.replica)).rowcount
        else:
            self.db.execute("UPDATE turns SET state = 'pending', error = ?, not_before = ?"
                            " WHERE trace_id = ? AND replica = ? AND state = 'judging'",
                            (error, retry_at, trace_id, self.replica))

    def release(self, trace_id: str, retry_at: float) -> None:
        """Put a turn back untouched, the attempt not counted: its judge is unavailable (down,
        answering garbage), or the sidecar stopped while judging it."""
        self.db.execute("UPDATE turns SET state = 'pending', attempts = attempts - 1,"
                        " not_before = ? WHERE trace_id = ? AND replica = ? AND state = 'judging'",
                        (retry_at, trace_id, self.replica))

    def state(self, trace_id: str) -> str | None:
        """pending | judging | judged | failed, or None when this trace id is not stored."""
        row = self.db.execute("SELECT state FROM turns WHERE trace_id = ?", (trace_id,)).fetchone()
        return row[0] if row else None

    def withdraw(self, trace_ids: set[str]) -> set[str]:
        """Take this replica's turns still waiting for a judge out of the queue (another replica
        judges them now); return those withdrawn. Turns being judged or done are left alone."""
        withdrawn: set[str] = set()
        with self._transaction():
            for ids in _chunks(sorted(trace_ids)):
                withdrawn.update(row[0] for row in self.db.execute(
                    f"DELETE FROM turns WHERE trace_id IN ({_marks(ids)}) AND replica = ?"
                    " AND state = 'pending' RETURNING trace_id", (*ids, self.replica)))
        self._backlog -= len(withdrawn)
        return withdrawn

    def waiting(self) -> set[str]:
        """Trace ids of this replica's turns waiting for a judge (not being judged)."""
        return {row[0] for row in self.db.execute(
            "SELECT trace_id FROM turns WHERE replica = ? AND state = 'pending'", (self.replica,))}

    def backlog(self) -> int:
        """This replica's turns waiting for a judge (pending or being judged): a counter in
        memory, no query (it is read per batch and per judged turn, on the event loop)."""
        return self._backlog

    def tokens_since(self, since: float) -> int:
        """Judge tokens spent since `since`, by every replica."""
        return int(self.db.execute(
            "SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM judge_costs"
            " WHERE created_at >= ?", (since,)).fetchone()[0])

    # -- reading: the whole fleet's ----------------------------------------------------------

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
                   failed_tools: bool = False, since: float | None = None,
                   until: float | None = None, service: str | None = None,
                   label: str | None = None, conversation: str | None = None
                   ) -> list[dict[str, Any]]:
        """The newest stored turns matching the filters (`route`: "route" or "service/route",
        `service`; a `metric` verdict, with a score below `below` or this `label`; received in
        [`since`, `until`]; of a `conversation`), each with {metric: (label, score)} and its tool
        calls ({name, error})."""
        where: list[str]
        args: list[str | float]
        where, args = [], []
        if state:
            where.append("t.state = ?")
            args.append(state)
        if route:
            route_service, _, name = route.rpartition("/")
            where.append("t.route = ?")
            args.append(name)
            service = route_service or service
        if service:
            where.append("t.service = ?")
            args.append(service)
        if conversation:
            where.append("t.conversation_id = ?")
            args.append(conversation)
        if metric:
            verdict, verdict_args = "v.metric = ?", [metric]
            if below is not None:
                verdict += " AND v.score < ?"
                verdict_args.append(below)  # type: ignore[arg-type]
            if label is not None:
                verdict += " AND v.label = ?"
                verdict_args.append(label)
            where.append(f"EXISTS (SELECT 1 FROM verdicts v WHERE v.trace_id = t.trace_id"
                         f" AND {verdict})")
            args.extend(verdict_args)
        if since is not None:
            where.append("t.received_at >= ?")
            args.append(since)
        if until is not None:
            where.append("t.received_at <= ?")
            args.append(until)
        if failed_tools:
            where.append(self._sql.failed_tool)
        query = ("SELECT t.trace_id, t.service, t.route, t.state, t.reason, t.probability,"
                 f" t.received_at, {self._sql.tool_calls} AS tool_calls"
                 " FROM turns t" + (" WHERE " + " AND ".join(where) if where else "")
                 + " ORDER BY t.seq DESC LIMIT ?")
        rows = [dict(r) for r in self.db.execute(query, (*args, limit))]
        by_id = {r["trace_id"]: {**r, "tool_calls": json.loads(r["tool_calls"]), "verdicts": {}}
                 for r in rows}
        if by_id:
            for v in self.db.execute(f"SELECT trace_id, metric, label, score FROM verdicts"
                                     f" WHERE trace_id IN ({_marks(tuple(by_id))}) ORDER BY judge",
                                     tuple(by_id)):
                by_id[v["trace_id"]]["verdicts"].setdefault(v["metric"], (v["label"], v["score"]))
        return list(by_id.values())

    def show(self, trace_id: str) -> dict[str, Any] | None:
        """A stored turn whole: its row, the turn, its verdicts and costs (of every revision),
        the verdicts earlier revisions were given, the corrections people made, and the
        previous and next stored turns of its conversation."""
        row = self.db.execute("SELECT * FROM turns WHERE trace_id = ?", (trace_id,)).fetchone()
        if row is None:
            return None
        shown = dict(row)
        shown["turn"] = json.loads(shown.pop("turn_json"))
        shown["verdicts"] = self._verdicts(trace_id)
        shown["earlier"] = [
            {"revision": row[0], **verdict}
            for row in self.db.execute("SELECT revision, verdicts_json FROM verdict_revisions"
                                       " WHERE trace_id = ? ORDER BY revision DESC", (trace_id,))
            for verdict in json.loads(row[1])]
        shown["costs"] = [dict(c) for c in self.db.execute(
            "SELECT judge, calls, input_tokens, output_tokens, latency_s FROM judge_costs"
            " WHERE trace_id = ?", (trace_id,))]
        shown["corrections"] = self.corrections(trace_id)
        shown["conversation"] = self._neighbours(row["conversation_id"], row["seq"])
        return shown

    # -- sessions --------------------------------------------------------------------------

    def add_sessions(self, sessions: Sequence[dict[str, Any]]) -> None:
        """Closed sessions, each a dict of the `sessions` table's columns (`id`, the replica
        and the judge's verdict left out), as this replica's."""
        if not sessions:
            return
        columns = (*sessions[0], "replica")
        with self._transaction():
            self.db.executemany(f"INSERT INTO sessions ({', '.join(columns)}) VALUES"
                                f" ({_marks(columns)})",
                                [(*session.values(), self.replica) for session in sessions])

    def claim_session(self, closed_before: float) -> dict[str, Any] | None:
        """The oldest of this replica's sessions waiting for the session judge and closed
        before `closed_before` (its last turns are stored by then), now `judging`."""
        row = self.db.execute(
            "UPDATE sessions SET judge_state = 'judging' WHERE id = (SELECT id FROM sessions"
            " WHERE replica = ? AND judge_state = 'pending' AND closed_at < ? ORDER BY id"
            f" LIMIT 1{self._sql.skip_locked}) AND judge_state = 'pending' RETURNING *",
            (self.replica, closed_before)).fetchone()
        return dict(row) if row is not None else None

    def session_turns(self, session: dict[str, Any], until: float) -> list[AssistantTurn]:
        """The stored turns of a claimed session, oldest first: its conversation's, stored
        from its start until `until`, every replica's (the last SESSION_TURNS)."""
        rows = self.db.execute(
            "SELECT turn_json FROM turns WHERE conversation_id = ? AND received_at >= ?"
            " AND received_at < ? ORDER BY seq DESC LIMIT ?",
            (session["conversation_id"], session["started_at"] - 1.0, until,  # a clock's step
             SESSION_TURNS)).fetchall()
        return [AssistantTurn.model_validate_json(row[0]) for row in reversed(rows)]

    def judged_session(self, session_id: int, state: str, verdict: SessionVerdict | None = None
                       ) -> None:
        """A claimed session's judgement: judged with its `verdict`, failed, no_turns; or back
        to pending (the judge is unavailable)."""
        given = ((verdict.judge, verdict.outcome, verdict.frustration, verdict.reasoning,
                  time.time()) if verdict is not None else (None,) * 5)
        self.db.execute(
            "UPDATE sessions SET judge_state = ?, judge = ?, judged_outcome = ?, frustration = ?,"
            " rationale = ?, judged_at = ? WHERE id = ?", (state, *given, session_id))

    def list_sessions(self, limit: int = 50, outcome: str | None = None,
                      service: str | None = None) -> list[dict[str, Any]]:
        """The sessions closed last (with this `outcome`, of this `service`), newest first,
        each with `stored`: how many of its conversation's turns the store holds."""
        where, args = [], []
        for column, value in (("outcome", outcome), ("service", service)):
            if value:
                where.append(f"s.{column} = ?")
                args.append(value)
        query = ("SELECT s.*, (SELECT count(*) FROM turns t WHERE t.conversation_id ="
                 " s.conversation_id) AS stored FROM sessions s"
                 + (" WHERE " + " AND ".join(where) if where else "")
                 + " ORDER BY s.closed_at DESC, s.id DESC LIMIT ?")
        return [dict(row) for row in self.db.execute(query, (*args, limit))]

    def _verdicts(self, trace_id: str) -> list[dict[str, Any]]:
        verdicts = [{**dict(v), "details": json.loads(v["details_json"])}
                    for v in self.db.execute("SELECT judge, metric, label, score, rationale,"
                                             " details_json, prompt_version, model FROM verdicts"
                                             " WHERE trace_id = ? ORDER BY judge, metric",
                                             (trace_id,))]
        for v in verdicts:
            v.pop("details_json")
        return verdicts

    def _neighbours(self, conversation_id: str | None, seq: int) -> dict[str, str | None]:
        """The trace ids of the stored turns before and after this one in its conversation."""
        if not conversation_id:
            return {"previous": None, "next": None}
        previous = self.db.execute("SELECT trace_id FROM turns WHERE conversation_id = ?"
                                   " AND seq < ? ORDER BY seq DESC LIMIT 1",
                                   (conversation_id, seq)).fetchone()
        following = self.db.execute("SELECT trace_id FROM turns WHERE conversation_id = ?"
                                    " AND seq > ? ORDER BY seq LIMIT 1",
                                    (conversation_id, seq)).fetchone()
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
            added = self.db.execute(
                "INSERT INTO corrections (trace_id, judge, metric, verdict_label, verdict_score,"
                " correct, label, score, author, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (trace_id, judge, metric, verdict["label"], verdict["score"], int(correct),
                 label if not correct else None, score if not correct else None, author,
                 time.time())).fetchone()
        return int(added[0])

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
        """Retention: drop judged and failed turns (and their verdicts, costs and corrections)
        older than the cut-off, every replica's, `batch` turns a transaction (a long one would
        hold SQLite's writer lock, or many PostgreSQL row locks)."""
        total = 0
        while purged := self.purge_batch(older_than, batch):
            total += purged
        self.db.execute("DELETE FROM sessions WHERE closed_at < ?", (older_than,))
        return total

    def purge_batch(self, older_than: float, limit: int) -> int:
        """One transaction of `purge`: at most `limit` turns; how many went. Several replicas
        may purge at once: each passes over the rows another is purging."""
        with self._transaction():
            old = [row[0] for row in self.db.execute(
                "SELECT trace_id FROM turns WHERE received_at < ? AND state IN ('judged', 'failed')"
                f" LIMIT ?{self._sql.skip_locked}", (older_than, limit))]
            for ids in _chunks(old):
                for table in ("verdicts", "verdict_revisions", "judge_costs", "corrections",
                              "turns"):
                    self.db.execute(f"DELETE FROM {table} WHERE trace_id IN ({_marks(ids)})", ids)
        return len(old)

    def _transaction(self) -> Any:
        return self._sql.transaction()


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


UNAVAILABLE_WAIT_S = 60.0


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
        """A PostgreSQL store out of reach is waited for, up to UNAVAILABLE_WAIT_S (a restart,
        a fail-over), as a busy SQLite file is: the pump and the judges wait, and behind them
        the receivers push back; then the call fails."""
        loop = asyncio.get_running_loop()
        deadline, pause = loop.time() + UNAVAILABLE_WAIT_S, 0.2
        while True:
            try:
                return await loop.run_in_executor(self._thread, call, *args)
            except StoreUnavailable as exc:
                if loop.time() + pause > deadline:
                    raise
                log.warning("%s; trying again in %.1f s", exc, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)

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
                       turn: AssistantTurn | None = None, revision: int = 0) -> None:
        await self._run(self.sync.complete, trace_id, results, turn, revision)

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

    async def list_turns(self, **filters: Any) -> list[dict[str, Any]]:
        return await self._run(partial(self.sync.list_turns, **filters))

    async def show(self, trace_id: str) -> dict[str, Any] | None:
        return await self._run(self.sync.show, trace_id)

    async def add_correction(self, trace_id: str, judge: str, metric: str, correct: bool,
                             author: str, label: str | None = None,
                             score: float | None = None) -> int:
        return await self._run(partial(
            self.sync.add_correction, trace_id, judge, metric, correct, author, label, score))

    async def corrections(self, trace_id: str | None = None) -> list[dict[str, Any]]:
        return await self._run(self.sync.corrections, trace_id)

    async def add_sessions(self, sessions: Sequence[dict[str, Any]]) -> None:
        await self._run(self.sync.add_sessions, sessions)

    async def claim_session(self, closed_before: float) -> dict[str, Any] | None:
        return await self._run(self.sync.claim_session, closed_before)

    async def session_turns(self, session: dict[str, Any], until: float) -> list[AssistantTurn]:
        return await self._run(self.sync.session_turns, session, until)

    async def judged_session(self, session_id: int, state: str,
                             verdict: SessionVerdict | None = None) -> None:
        await self._run(self.sync.judged_session, session_id, state, verdict)

    async def list_sessions(self, **filters: Any) -> list[dict[str, Any]]:
        return await self._run(partial(self.sync.list_sessions, **filters))

    async def purge(self, older_than: float, batch: int = 500) -> int:
        """`Store.purge`, one batch a call on the store's thread: judging goes on between them."""
        total = 0
        while purged := await self._run(self.sync.purge_batch, older_than, batch):
            total += purged
        return total

    async def close(self) -> None:
        await self._run(self.sync.close)
        self._thread.shutdown(wait=False)
