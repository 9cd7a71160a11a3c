"""The store: a crash-safe judge queue and the verdicts with their rationales."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from monitor.model import AssistantTurn
from monitor.store import Store
from monitor.verdict import ClaimLabel, JudgeResult, Verdict
from tests.waiting import until

pytestmark = pytest.mark.unit


def turn(n: int, answer: str = "An answer.") -> AssistantTurn:
    return AssistantTurn(trace_id=f"{n:032x}", service="bot", question=f"q{n}", answer=answer)


def result(score: float = 0.5, label: str = "complete") -> list[JudgeResult]:
    return [JudgeResult("local", [Verdict("groundedness", score=score, rationale="1 of 2",
                                          claims=(ClaimLabel(claim="c", label="inferable"),)),
                                  Verdict("completeness", label=label, rationale="r")],
                        input_tokens=12, output_tokens=3, latency_s=0.01)]


def test_a_batch_is_stored_in_order_and_each_trace_once(tmp_path: Path) -> None:
    """The turn pump's batch: one call, a result per turn; a trace already stored, or twice in
    the batch, is stored once."""
    store = Store(tmp_path / "s.db")
    assert store.enqueue(turn(1), "rate", 0.5)
    assert store.enqueue_many([(turn(2), "rate", 0.5), (turn(1), "rate", 0.5),
                               (turn(3), "no_documents", 1.0), (turn(3), "rate", 0.5)]) == [
        True, False, True, False]
    assert store.backlog() == 3
    claimed = [store.claim() for _ in range(3)]
    assert [(c.trace_id, c.reason) for c in claimed] == [
        (turn(1).trace_id, "rate"), (turn(2).trace_id, "rate"), (turn(3).trace_id, "no_documents")]
    assert store.claim() is None


def test_queue_is_idempotent_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store(path)
    assert store.enqueue(turn(1), "rate", 0.25)
    assert not store.enqueue(turn(1), "rate", 0.25)  # the same trace again: not twice
    assert store.enqueue(turn(2), "no_documents", 1.0)
    claimed = store.claim()
    assert (claimed.trace_id, claimed.reason, claimed.probability, claimed.attempts) == (
        turn(1).trace_id, "rate", 0.25, 1)
    assert claimed.turn == turn(1)
    store.close()  # "crash" with turn 1 being judged and turn 2 pending

    store = Store(path)
    assert store.backlog() == 2
    assert store.recover() == 1
    first, second = store.claim(), store.claim()
    assert [first.trace_id, second.trace_id] == [turn(1).trace_id, turn(2).trace_id]
    assert first.attempts == 2
    store.complete(first.trace_id, result())
    assert store.backlog() == 1
    with pytest.raises(sqlite3.IntegrityError):  # judged twice would be a bug, not an update
        store.complete(first.trace_id, result())
    shown = store.show(first.trace_id)
    assert shown["state"] == "judged" and shown["turn"]["question"] == "q1"
    assert [(v["metric"], v["label"], v["score"]) for v in shown["verdicts"]] == [
        ("completeness", "complete", None), ("groundedness", None, 0.5)]
    assert shown["verdicts"][1]["details"]["claims"][0]["label"] == "inferable"
    assert store.tokens_since(0) == 15


def test_failures_are_retried_after_a_delay_then_marked_failed(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    store.enqueue(turn(1), "rate", 1.0)
    claimed = store.claim(now=100.0)
    store.fail(claimed.trace_id, "local: TimeoutError", retry_at=160.0)
    assert store.claim(now=150.0) is None
    assert store.claim(now=161.0).attempts == 2
    store.fail(claimed.trace_id, "local: TimeoutError", retry_at=None)
    assert store.backlog() == 0
    assert store.turns(state="failed")[0]["error"] == "local: TimeoutError"


def test_failing_turns_export_and_retention(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    for n, (score, label) in enumerate([(0.9, "complete"), (0.2, "complete"), (1.0, "no_answer")]):
        store.enqueue(turn(n), "rate", 1.0)
        store.complete(store.claim().trace_id, result(score, label))
    assert [t.trace_id for t in store.failing(groundedness_below=0.5)] == [
        turn(1).trace_id, turn(2).trace_id]
    store.enqueue(turn(9), "rate", 1.0)  # pending turns are never purged
    assert store.purge(older_than=float("inf")) == 3
    assert [t["trace_id"] for t in store.turns()] == [turn(9).trace_id]
    assert json.loads(json.dumps(store.turns()))  # plain data for the CLI


def test_released_turns_spend_no_attempt_and_settled_turns_stay_settled(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    store.enqueue(turn(1), "rate", 1.0)
    for _ in range(5):  # an outage: claimed and released again and again
        claimed = store.claim(now=100.0)
        store.release(claimed.trace_id, retry_at=100.0)
    assert store.claim(now=100.0).attempts == 1
    store.complete(turn(1).trace_id, result())
    store.fail(turn(1).trace_id, "late: TimeoutError", retry_at=0.0)  # a judged turn stays judged
    store.release(turn(1).trace_id, retry_at=0.0)
    assert store.show(turn(1).trace_id)["state"] == "judged"
    assert store.claim() is None and store.backlog() == 0


async def test_the_sidecars_store_waits_on_sqlite_off_the_event_loop(tmp_path: Path) -> None:
    """Another connection holds the write lock: the enqueue waits for it on the store's thread
    while the event loop keeps serving; it lands once the lock is let go."""
    import asyncio

    from monitor.store import ThreadedStore

    store = ThreadedStore(Store(tmp_path / "s.db"))
    other = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    inserting = threading.Event()  # the store's thread has begun its write (waits on the lock)
    store.sync.db.set_trace_callback(lambda sql: sql.startswith("BEGIN") and inserting.set())
    enqueue = asyncio.create_task(store.enqueue(turn(1), "rate", 1.0))
    await until(inserting.is_set)  # polled on the loop: it runs while SQLite waits
    for _ in range(100):  # and goes on running: a hundred turns of the loop, the lock still held
        await asyncio.sleep(0)
    assert not enqueue.done()
    other.execute("COMMIT")
    assert await asyncio.wait_for(enqueue, 10)
    claimed = await store.claim()
    assert claimed is not None and claimed.trace_id == turn(1).trace_id
    await store.complete(claimed.trace_id, result())
    assert store.backlog() == 0 and await store.state(claimed.trace_id) == "judged"
    other.close()
    await store.close()


async def test_retention_purges_in_batches_and_keeps_pending_turns(tmp_path: Path) -> None:
    from monitor.store import ThreadedStore

    sync = Store(tmp_path / "s.db")
    for n in range(1, 1206):
        sync.enqueue(turn(n), "rate", 1.0)
        if n <= 1203:
            sync.complete(sync.claim().trace_id, result())
    store = ThreadedStore(sync)
    assert await store.purge(older_than=float("inf"), batch=100) == 1203
    assert sorted(t["trace_id"] for t in sync.turns(limit=10)) == [turn(1204).trace_id,
                                                                   turn(1205).trace_id]
    assert sync.db.execute("SELECT count(*) FROM verdicts").fetchone()[0] == 0
    assert sync.db.execute("SELECT count(*) FROM judge_costs").fetchone()[0] == 0
    await store.close()


def test_people_correct_verdicts_and_a_turn_knows_its_conversation(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    turns = [AssistantTurn(trace_id=f"{n:032x}", service="bot", question=f"q{n}", answer="a",
                           conversation_id="conv-1" if n != 2 else "conv-2") for n in (1, 2, 3, 4)]
    for t in turns:
        store.enqueue(t, "rate", 0.5)
        store.claim()
        store.complete(t.trace_id, result(score=0.25))
    first, _, third, fourth = (t.trace_id for t in turns)
    assert store.show(third)["conversation"] == {"previous": first, "next": fourth}
    assert store.show(first)["conversation"] == {"previous": None, "next": third}

    right = store.add_correction(third, "local", "completeness", correct=True, author="ana")
    wrong = store.add_correction(third, "local", "groundedness", correct=False, score=1.0,
                                 author="bo", label="complete")  # a scored metric: its score
    assert wrong > right
    with pytest.raises(ValueError, match="needs the right label, one of complete, incomplete"):
        store.add_correction(third, "local", "completeness", correct=False, author="bo",
                             label="great")
    with pytest.raises(ValueError, match="needs the right score"):
        store.add_correction(third, "local", "groundedness", correct=False, author="bo")
    with pytest.raises(KeyError, match="no tool_use verdict"):
        store.add_correction(third, "local", "tool_use", correct=True, author="ana")
    shown = store.show(third)["corrections"]
    assert [(c["metric"], c["correct"], c["verdict_score"], c["score"], c["author"])
            for c in shown] == [("completeness", True, None, None, "ana"),
                                ("groundedness", False, 0.25, 1.0, "bo")]
    assert [c["id"] for c in store.corrections()] == [right, wrong]
    assert store.purge(older_than=float("inf")) == 4 and store.corrections() == []

    listed = store.list_turns(metric="groundedness", below=0.5, since=0)
    assert listed == []  # purged
