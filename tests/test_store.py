"""The store: a crash-safe judge queue and the verdicts with their rationales. Each test that
takes `where` runs on both databases: an SQLite file (unit) and a real PostgreSQL server's
database (integration, tests/postgres_server.py), with the same results."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from monitor.model import AssistantTurn
from monitor.store import NotClaimed, Store
from monitor.verdict import ClaimLabel, JudgeResult, SessionVerdict, Verdict
from tests.postgres_server import database, postgres  # noqa: F401  (fixtures)
from tests.waiting import until


@pytest.fixture(params=[pytest.param("sqlite", marks=pytest.mark.unit),
                        pytest.param("postgresql", marks=pytest.mark.integration)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a test's store lives: an SQLite file, or a PostgreSQL database's URL."""
    if request.param == "sqlite":
        return tmp_path / "s.db"
    url: str = request.getfixturevalue("database")
    return url


def turn(n: int, answer: str = "An answer.") -> AssistantTurn:
    return AssistantTurn(trace_id=f"{n:032x}", service="bot", question=f"q{n}", answer=answer)


def result(score: float = 0.5, label: str = "complete") -> list[JudgeResult]:
    return [JudgeResult("local", [Verdict("groundedness", score=score, rationale="1 of 2",
                                          claims=(ClaimLabel(claim="c", label="inferable"),)),
                                  Verdict("completeness", label=label, rationale="r")],
                        input_tokens=12, output_tokens=3, latency_s=0.01)]


def test_a_batch_is_stored_in_order_and_each_trace_once(where: Path | str) -> None:
    """The turn pump's batch: one call, a result per turn; a trace already stored, or twice in
    the batch, is stored once."""
    store = Store(where)
    assert store.enqueue(turn(1), "rate", 0.5)
    assert store.enqueue_many([(turn(2), "rate", 0.5), (turn(1), "rate", 0.5),
                               (turn(3), "no_documents", 1.0), (turn(3), "rate", 0.5)]) == [
        True, False, True, False]
    assert store.backlog() == 3
    claimed = [store.claim() for _ in range(3)]
    assert [(c.trace_id, c.reason) for c in claimed] == [
        (turn(1).trace_id, "rate"), (turn(2).trace_id, "rate"), (turn(3).trace_id, "no_documents")]
    assert store.claim() is None


def test_queue_is_idempotent_and_survives_reopening(where: Path | str) -> None:
    store = Store(where)
    assert store.enqueue(turn(1), "rate", 0.25)
    assert not store.enqueue(turn(1), "rate", 0.25)  # the same trace again: not twice
    assert store.enqueue(turn(2), "no_documents", 1.0)
    claimed = store.claim()
    assert (claimed.trace_id, claimed.reason, claimed.probability, claimed.attempts) == (
        turn(1).trace_id, "rate", 0.25, 1)
    assert claimed.turn == turn(1)
    store.close()  # "crash" with turn 1 being judged and turn 2 pending

    store = Store(where)
    assert store.backlog() == 2
    assert store.recover() == 1
    first, second = store.claim(), store.claim()
    assert [first.trace_id, second.trace_id] == [turn(1).trace_id, turn(2).trace_id]
    assert first.attempts == 2
    store.complete(first.trace_id, result())
    assert store.backlog() == 1
    with pytest.raises(NotClaimed):  # judged twice would be a bug, not an update
        store.complete(first.trace_id, result())
    shown = store.show(first.trace_id)
    assert shown["state"] == "judged" and shown["turn"]["question"] == "q1"
    assert [(v["metric"], v["label"], v["score"]) for v in shown["verdicts"]] == [
        ("completeness", "complete", None), ("groundedness", None, 0.5)]
    assert shown["verdicts"][1]["details"]["claims"][0]["label"] == "inferable"
    assert store.tokens_since(0) == 15


def test_failures_are_retried_after_a_delay_then_marked_failed(where: Path | str) -> None:
    store = Store(where)
    store.enqueue(turn(1), "rate", 1.0)
    claimed = store.claim(now=100.0)
    store.fail(claimed.trace_id, "local: TimeoutError", retry_at=160.0)
    assert store.claim(now=150.0) is None
    assert store.claim(now=161.0).attempts == 2
    store.fail(claimed.trace_id, "local: TimeoutError", retry_at=None)
    assert store.backlog() == 0
    assert store.turns(state="failed")[0]["error"] == "local: TimeoutError"


def test_failing_turns_export_and_retention(where: Path | str) -> None:
    store = Store(where)
    for n, (score, label) in enumerate([(0.9, "complete"), (0.2, "complete"), (1.0, "no_answer")]):
        store.enqueue(turn(n), "rate", 1.0)
        store.complete(store.claim().trace_id, result(score, label))
    assert [t.trace_id for t in store.failing(groundedness_below=0.5)] == [
        turn(1).trace_id, turn(2).trace_id]
    store.enqueue(turn(9), "rate", 1.0)  # pending turns are never purged
    assert store.purge(older_than=float("inf")) == 3
    assert [t["trace_id"] for t in store.turns()] == [turn(9).trace_id]
    assert json.loads(json.dumps(store.turns()))  # plain data for the CLI


def test_released_turns_spend_no_attempt_and_settled_turns_stay_settled(where: Path | str) -> None:
    store = Store(where)
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


@pytest.mark.unit
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


async def test_retention_purges_in_batches_and_keeps_pending_turns(where: Path | str) -> None:
    from monitor.store import ThreadedStore

    sync = Store(where)
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


def test_people_correct_verdicts_and_a_turn_knows_its_conversation(where: Path | str) -> None:
    store = Store(where)
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


def test_the_worst_turns_of_a_stream_in_a_window(where: Path | str) -> None:
    """What a dashboard's link asks for: a service or service/route, a metric's bad label or
    low score, a time window."""
    store = Store(where)
    for n, service, route, label, score in ((1, "bot", "faq", "complete", 0.9),
                                            (2, "bot", "faq", "no_answer", 0.2),
                                            (3, "bot", "billing", "no_answer", 0.3),
                                            (4, "shop", "faq", "no_answer", 0.1)):
        t = AssistantTurn(trace_id=f"{n:032x}", service=service, route=route, question="q")
        store.enqueue(t, "rate", 0.5)
        store.claim()
        store.complete(t.trace_id, result(score=score, label=label))
    ids = lambda rows: [int(r["trace_id"], 16) for r in rows]  # noqa: E731
    assert ids(store.list_turns(metric="completeness", label="no_answer")) == [4, 3, 2]
    assert ids(store.list_turns(metric="completeness", label="no_answer", service="bot")) == [3, 2]
    assert ids(store.list_turns(metric="groundedness", below=0.5, route="bot/faq")) == [2]
    assert ids(store.list_turns(service="shop", route="faq")) == [4]
    received = [r["received_at"] for r in store.list_turns()]
    assert ids(store.list_turns(since=min(received), until=max(received))) == [4, 3, 2, 1]
    assert store.list_turns(until=min(received) - 1) == []


# -- several replicas, one store ----------------------------------------------------------------

def test_replicas_sharing_a_store_each_judge_their_own_turns(where: Path | str) -> None:
    """The queue is each replica's: claims, recovery, waiting, withdrawal and the backlog see
    only the turns it stored; reading sees every replica's."""
    a, b = Store(where, replica="judge-a"), Store(where, replica="judge-b")
    assert a.enqueue_many([(turn(1), "rate", 1.0), (turn(2), "rate", 1.0)]) == [True, True]
    assert b.enqueue(turn(3), "rate", 1.0)
    assert (a.backlog(), b.backlog()) == (2, 1)
    assert b.claim().trace_id == turn(3).trace_id and b.claim() is None
    assert a.claim().trace_id == turn(1).trace_id
    assert a.waiting() == {turn(2).trace_id} and b.waiting() == set()
    assert b.withdraw({turn(2).trace_id}) == set()  # a's: left alone
    assert b.recover() == 1 and a.state(turn(1).trace_id) == "judging"  # a's is a's
    a.complete(turn(1).trace_id, result())
    assert (a.backlog(), b.backlog()) == (1, 1)
    assert a.withdraw({turn(2).trace_id}) == {turn(2).trace_id} and a.backlog() == 0
    assert [t["trace_id"] for t in b.list_turns()] == [turn(3).trace_id, turn(1).trace_id]
    assert [b.show(t)["replica"] for t in (turn(1).trace_id, turn(3).trace_id)] == [
        "judge-a", "judge-b"]
    a.close()
    b.close()


def test_a_waiting_turn_stored_again_by_another_replica_is_taken_over(where: Path | str) -> None:
    """Kafka moved a partition: its new owner reads the turns again. Those still waiting go to
    it (even one the old owner was judging: it may be dead); the old owner's verdicts are then
    refused, so a turn is judged once in the store. A settled turn stays settled."""
    old, new = Store(where, replica="old"), Store(where, replica="new")
    old.enqueue_many([(turn(n), "rate", 1.0) for n in (1, 2, 3)])
    old.complete(old.claim().trace_id, result())  # turn 1: judged
    assert old.claim().trace_id == turn(2).trace_id  # being judged when the partition moved
    assert new.enqueue_many([(turn(n), "rate", 1.0) for n in (1, 2, 3)]) == [False, True, True]
    assert new.backlog() == 2
    assert [new.claim().trace_id for _ in range(2)] == [turn(2).trace_id, turn(3).trace_id]
    with pytest.raises(NotClaimed):
        old.complete(turn(2).trace_id, result(score=0.1))
    old.fail(turn(2).trace_id, "late", retry_at=None)  # no effect: not old's any more
    old.release(turn(3).trace_id, retry_at=0.0)
    assert old.claim() is None and old.backlog() == 0  # counted again: nothing is old's
    new.complete(turn(2).trace_id, result(score=0.9))
    new.complete(turn(3).trace_id, result(score=0.9))
    assert new.backlog() == 0
    assert [v["score"] for v in new.show(turn(2).trace_id)["verdicts"]] == [None, 0.9]
    assert new.tokens_since(0) == old.tokens_since(0) == 45  # three judgements, stored once
    old.close()
    new.close()


def test_a_later_revision_is_judged_again_and_the_earlier_verdicts_are_kept(
        where: Path | str) -> None:
    """Late spans changed a judged turn: its next revision replaces it in the queue, and `show`
    gives the new verdicts and those of the revision before. A judgement of a revision replaced
    while it ran is refused; a copy of a revision already stored is not stored again."""
    store = Store(where)
    first = turn(1, answer="It shipped.")
    store.enqueue(first, "rate", 0.25)
    store.complete(store.claim().trace_id, result(score=0.9))
    revised = first.model_copy(update={"answer": "It shipped, then the carrier lost it.",
                                       "revision": 1})
    assert store.enqueue_many([(revised, "rate", 0.25), (first, "rate", 0.25)]) == [True, False]
    assert store.backlog() == 1 and store.state(first.trace_id) == "pending"
    claimed = store.claim()
    assert (claimed.turn.answer, claimed.turn.revision, claimed.attempts) == (
        revised.answer, 1, 1)
    again = revised.model_copy(update={"tool_calls": [], "revision": 2})  # while 1 is judged
    assert store.enqueue(again, "rate", 0.25) and store.backlog() == 1
    with pytest.raises(NotClaimed):
        store.complete(first.trace_id, result(score=0.5), revision=1)
    store.complete(store.claim().trace_id, result(score=0.2), revision=2)
    assert not store.enqueue(again, "rate", 0.25)  # redelivered: judged once
    shown = store.show(first.trace_id)
    assert (shown["revision"], shown["state"], shown["turn"]["revision"]) == (2, "judged", 2)
    assert [v["score"] for v in shown["verdicts"]] == [None, 0.2]
    assert [(v["revision"], v["metric"], v["score"]) for v in shown["earlier"]] == [
        (0, "completeness", None), (0, "groundedness", 0.9)]
    assert shown["costs"][0]["input_tokens"] == 24 and store.tokens_since(0) == 30  # both
    assert store.backlog() == 0 and store.purge(older_than=2e9) == 1
    assert store.show(first.trace_id) is None
    store.close()


def test_closed_sessions_are_listed_newest_first_with_their_stored_turns(
        where: Path | str) -> None:
    store = Store(where)
    chat = turn(1).model_copy(update={"conversation_id": "chat-7"})
    store.enqueue_many([(chat, "rate", 1.0), (turn(2), "rate", 1.0)])

    def closed(conversation_id: str, outcome: str, at: float) -> dict[str, object]:
        return {"conversation_id": conversation_id, "service": "bot", "route": "billing",
                "outcome": outcome, "closed": "ended", "turns": 3,
                "turns_to_resolution": 2 if outcome == "resolved" else None, "rephrasings": 1,
                "negative_feedback": 0, "person_requests": int(outcome == "escalated"),
                "started_at": at - 50.0, "closed_at": at}

    store.add_sessions([closed("chat-7", "escalated", 100.0), closed("chat-8", "resolved", 200.0),
                        closed("chat-9", "abandoned", 300.0)])
    listed = store.list_sessions()
    assert [(s["conversation_id"], s["outcome"], s["stored"]) for s in listed] == [
        ("chat-9", "abandoned", 0), ("chat-8", "resolved", 0), ("chat-7", "escalated", 1)]
    assert listed[1]["turns_to_resolution"] == 2 and listed[2]["person_requests"] == 1
    assert [s["conversation_id"] for s in store.list_sessions(outcome="escalated")] == ["chat-7"]
    assert store.list_sessions(service="another") == []
    assert [t["trace_id"] for t in store.list_turns(conversation="chat-7")] == [chat.trace_id]
    store.purge(older_than=250.0)  # retention: the sessions closed before the cut-off go
    assert [s["conversation_id"] for s in store.list_sessions()] == ["chat-9"]
    store.close()


def test_closed_sessions_wait_for_the_session_judge_and_keep_its_verdict(
        where: Path | str) -> None:
    store = Store(where, replica="r1")
    now = time.time()
    chat = [turn(n).model_copy(update={"conversation_id": "chat-7"}) for n in (1, 2)]
    store.enqueue_many([(t, "rate", 1.0) for t in [*chat, turn(3)]])
    session = {"conversation_id": "chat-7", "service": "bot", "route": None,
               "outcome": "escalated", "closed": "ended", "turns": 2, "turns_to_resolution": None,
               "rephrasings": 0, "negative_feedback": 0, "person_requests": 1,
               "started_at": now - 60, "closed_at": now - 10, "judge_state": "pending"}
    store.add_sessions([session, {**session, "conversation_id": "chat-8", "closed_at": now}])
    assert Store(where, replica="r2").claim_session(now + 1) is None  # r1's sessions
    claimed = store.claim_session(now - 5)  # chat-8 closed too recently: its turns may come
    assert claimed["conversation_id"] == "chat-7" and store.claim_session(now - 5) is None
    assert [t.trace_id for t in store.session_turns(claimed, now + 1)] == [
        t.trace_id for t in chat]
    store.recover()  # a crash while judging: it waits again
    claimed = store.claim_session(now - 5)
    store.judged_session(claimed["id"], "judged", SessionVerdict(
        "judge-a", "escalated", "high", "asked for a person twice", 1, 300, 40))
    [listed] = store.list_sessions(outcome="escalated", limit=1)
    assert listed["conversation_id"] == "chat-8" and listed["judge_state"] == "pending"
    judged = next(s for s in store.list_sessions() if s["conversation_id"] == "chat-7")
    assert (judged["judge_state"], judged["judge"], judged["judged_outcome"],
            judged["frustration"], judged["rationale"], judged["stored"]) == (
        "judged", "judge-a", "escalated", "high", "asked for a person twice", 2)
    store.close()


def test_two_connections_claiming_at_once_never_take_the_same_turn(where: Path | str) -> None:
    """Two workers under one replica name (two connections at once): every turn claimed once."""
    Store(where).enqueue_many([(turn(n), "rate", 1.0) for n in range(1, 301)])
    stores = [Store(where) for _ in range(4)]
    claimed: list[list[str]] = [[] for _ in stores]
    rounds = 300 // len(stores) + 1
    together = threading.Barrier(len(stores))  # each round, the four claims at the same moment

    def work(store: Store, mine: list[str]) -> None:
        for _ in range(rounds):
            together.wait(60)
            if (got := store.claim()) is not None:
                mine.append(got.trace_id)

    threads = [threading.Thread(target=work, args=pair) for pair in zip(stores, claimed, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    every = [t for mine in claimed for t in mine]
    assert len(every) == len(set(every)) == 300
    assert all(len(mine) == 75 for mine in claimed)
    for store in stores:
        store.close()


def test_the_pages_list_turns_with_their_verdicts_and_tool_calls(where: Path | str) -> None:
    """`list_turns`' filters and columns: the SQL of each database reads the turn's JSON."""
    store = Store(where)
    from monitor.model import ToolCall

    turns = [AssistantTurn(trace_id=f"{n:032x}", service="bot", route="billing" if n % 2 else "faq",
                           question=f"q{n}", answer="a", tool_calls=[
                               ToolCall(name="lookup"),
                               ToolCall(name="refund", error="timeout" if n == 3 else None)])
             for n in (1, 2, 3)]
    for n, t in enumerate(turns):
        store.enqueue(t, "rate", 0.5)
        store.claim()
        # Two judges of the same metric: the first by name, byte order ("B" before "a")
        store.complete(t.trace_id, [
            JudgeResult("a-judge", [Verdict("groundedness", score=0.9, rationale="r")]),
            JudgeResult("B-judge", [Verdict("groundedness", score=0.1 * n, rationale="r")])])
    listed = store.list_turns()
    assert [t["trace_id"] for t in listed] == [turns[2].trace_id, turns[1].trace_id,
                                               turns[0].trace_id]
    assert listed[0]["tool_calls"] == [{"name": "lookup", "error": None},
                                       {"name": "refund", "error": "timeout"}]
    assert listed[0]["verdicts"] == {"groundedness": (None, pytest.approx(0.2))}
    assert [t["trace_id"] for t in store.list_turns(failed_tools=True)] == [turns[2].trace_id]
    assert [t["trace_id"] for t in store.list_turns(route="bot/billing")] == [
        turns[2].trace_id, turns[0].trace_id]
    assert [t["trace_id"] for t in store.list_turns(metric="groundedness", below=0.05)] == [
        turns[0].trace_id]
    assert store.list_turns(state="pending") == [] and len(store.list_turns(since=0, limit=2)) == 2
    shown = store.show(turns[0].trace_id)
    assert [v["judge"] for v in shown["verdicts"]] == ["B-judge", "a-judge"]
    store.close()


def test_a_nul_character_from_a_span_is_stored(where: Path | str) -> None:
    """A span's attribute may carry NUL, which SQLite keeps and PostgreSQL's text cannot: there
    it becomes U+FFFD, in the columns and in the turn's JSON; the turn is stored and judged."""
    store = Store(where)
    odd = AssistantTurn(trace_id="ab" * 16, service="bot\x00", question="q\x00?", answer="a",
                        conversation_id="c\x00")
    assert store.enqueue(odd, "rate", 1.0)
    store.complete(store.claim().trace_id, result())
    shown = store.show(odd.trace_id)
    kept = "\x00" if isinstance(where, Path) else "\ufffd"
    assert (shown["service"], shown["turn"]["question"]) == (f"bot{kept}", f"q{kept}?")
    assert shown["conversation_id"] in ("c", f"c{kept}")  # SQLite's json_extract stops at NUL
    assert [t["service"] for t in store.list_turns()] == [f"bot{kept}"]
    store.close()


def test_opening_a_store_again_changes_nothing_and_a_newer_one_is_refused(
        where: Path | str) -> None:
    from monitor.store import SCHEMA_VERSION, StoreError

    stores = []
    threads = [threading.Thread(target=lambda: stores.append(Store(where))) for _ in range(3)]
    for thread in threads:  # replicas starting at once: one migrates, the others wait for it
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(stores) == 3
    store = stores[0]
    store.enqueue(turn(1), "rate", 1.0)
    assert store.db.execute("SELECT version FROM schema_version").fetchall()[0][0] == \
        SCHEMA_VERSION
    again = Store(where)
    assert again.backlog() == 1 and len(again.db.execute(
        "SELECT version FROM schema_version").fetchall()) == 1
    again.db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer release"):
        Store(where)
    for opened in (*stores, again):
        opened.close()


@pytest.mark.unit
def test_a_store_of_the_previous_release_gains_the_new_columns(tmp_path: Path) -> None:
    """An SQLite file as the release before schema versions wrote it: its turns become the
    single node's queue, and their conversations are read from their JSON."""
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE turns (seq INTEGER PRIMARY KEY AUTOINCREMENT, trace_id TEXT NOT"
                   " NULL UNIQUE, service TEXT NOT NULL, route TEXT, turn_json TEXT NOT NULL,"
                   " reason TEXT NOT NULL, probability REAL NOT NULL, state TEXT NOT NULL,"
                   " attempts INTEGER NOT NULL DEFAULT 0, not_before REAL NOT NULL DEFAULT 0,"
                   " error TEXT, received_at REAL NOT NULL, judged_at REAL)")
        for n in (1, 2):
            t = AssistantTurn(trace_id=f"{n:032x}", service="bot", conversation_id="c")
            db.execute("INSERT INTO turns (trace_id, service, turn_json, reason, probability,"
                       " state, received_at) VALUES (?, 'bot', ?, 'rate', 1, 'judging', 0)",
                       (t.trace_id, t.model_dump_json()))
    store = Store(path)
    assert store.backlog() == 2 and store.recover() == 2
    assert store.show(turn(1).trace_id)["conversation"] == {"previous": None,
                                                            "next": turn(2).trace_id}
    store.close()
