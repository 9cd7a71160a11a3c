"""A real `kill -9` of a judge replica of the Kafka judge queue: two `assistant-monitor run`
processes consume one topic of sampled turns, judging with an LLM endpoint (a scripted model
that answers late, so turns are in flight); one is sent SIGKILL mid-stream and never restarted.
What README.md promises: nothing lost; the turns it had read and not judged are judged exactly
once, by the other; only a turn it judged after its last offset commit is judged again."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from prometheus_client.parser import text_string_to_metric_families

from monitor.model import AssistantTurn, RetrievedDocument
from monitor.queue.kafka import encode_turn
from tests import traffic
from tests.conftest import SidecarProcess
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import ScriptedOpenAIServer
from tests.kafka_broker import KafkaBroker
from tests.test_kafka_judge_queue import new_topic
from tests.waiting import wait_until

pytestmark = pytest.mark.integration  # a real Kafka broker

TURNS = 64
PARTITIONS = 4
COMMIT_INTERVAL_S = 0.5
# A replica commits every commit interval, once its loop gets round to it (a poll, 0.2 s at
# most) and the broker answers; the rest is a busy machine's scheduling.
COMMIT_SLACK_S = 5.0


class JudgeReplica(SidecarProcess):
    """`assistant-monitor run` with `judging.queue.role: judge`, its own store and admin port."""

    def judged(self) -> list[str]:
        """Trace ids judged in this replica's store, once per judgement (the LLM judge's cost
        rows: a second judgement of a turn would be a second row, or fail its turn)."""
        return [row[0] for row in self._rows("SELECT trace_id FROM judge_costs")]

    def count(self, *states: str) -> int:
        marks = ", ".join("?" * len(states))
        return self._rows(f"SELECT count(*) FROM turns WHERE state IN ({marks})", *states)[0][0]

    def _rows(self, sql: str, *args: object) -> list[tuple]:
        if not self.store_path.exists():
            return [(0,)] if sql.startswith("SELECT count") else []
        with closing(sqlite3.connect(self.store_path)) as db:
            return db.execute(sql, args).fetchall()

    def assigned(self) -> set[int] | None:
        """The partitions of its latest assignment (its log), None before the first."""
        found = re.findall(r"partitions assigned: \[([\d, ]*)\]", self.log.read_text())
        return {int(p) for p in found[-1].split(",")} if found else None

    def lag(self) -> dict[int, float]:
        """assistant_judge_queue_lag by partition, from its /metrics."""
        return {int(s.labels["partition"]): s.value
                for family in text_string_to_metric_families(self.scrape())
                if family.name == "assistant_judge_queue_lag" for s in family.samples}


@pytest.fixture
def processes() -> Iterator[list[JudgeReplica]]:
    started: list[JudgeReplica] = []
    yield started
    for replica in started:
        replica.stop()  # a killed one is already gone: its exit is collected


def sampled_turns(count: int) -> list[AssistantTurn]:
    cases = traffic.ALL * (count // len(traffic.ALL) + 1)
    return [AssistantTurn(trace_id=uuid.uuid4().hex, service="shop-bot", route="r",
                          question=case.question, answer=case.answer,
                          documents=[RetrievedDocument(content=d) for d in case.documents])
            for case in cases[:count]]


def publish(bootstrap: str, topic: str, turns: list[AssistantTurn]) -> dict[str, tuple[int, int]]:
    """The turns on the topic, as an ingest replica writes them; where each landed."""
    async def produce() -> dict[str, tuple[int, int]]:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all",
                                    enable_idempotence=True)
        await producer.start()
        try:
            placed = {}
            for turn in turns:
                record = await producer.send_and_wait(
                    topic, encode_turn(turn, "rate", 1.0), key=turn.trace_id.encode())
                placed[turn.trace_id] = (record.partition, record.offset)
            return placed
        finally:
            await producer.stop()

    return asyncio.run(produce())


def committed(bootstrap: str, group: str) -> dict[int, tuple[int, set[str]]]:
    """The group's committed position of each partition: (next offset, traces the committer
    judged past it, from the commit's metadata)."""
    async def read() -> dict[int, tuple[int, set[str]]]:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            offsets = await admin.list_consumer_group_offsets(group)
        finally:
            await admin.close()
        return {tp.partition: (max(meta.offset, 0), {t for t in (meta.metadata or "").split(",")
                                                      if t}) for tp, meta in offsets.items()}

    return asyncio.run(read())


def judge_config(kafka: KafkaBroker, topic: str, model: ScriptedOpenAIServer) -> str:
    return (f"kafka: {{brokers: ['{kafka.bootstrap}']}}\n"
            "judging:\n  workers: 2\n  llm:\n    endpoints:\n"
            f"      - {{name: judge, base_url: '{model.base_url}', model: m, max_concurrency: 4}}\n"
            f"  queue: {{kind: kafka, role: judge, topic: {topic}, group_id: judges-{topic},\n"
            f"          dead_letter_topic: {topic}.dlq, prefetch: 4,\n"
            f"          commit_interval_s: {COMMIT_INTERVAL_S}}}\n")


def test_a_judge_replica_process_killed_with_sigkill_loses_no_turn(
        kafka: KafkaBroker, tmp_path: Path, processes: list[JudgeReplica]) -> None:
    topic = new_topic(kafka, partitions=PARTITIONS)
    group = f"judges-{topic}"
    with ScriptedOpenAIServer(judge_model, delay_s=0.2) as model:
        config = judge_config(kafka, topic, model)

        def replica(name: str) -> JudgeReplica:
            started = JudgeReplica(tmp_path / name, config)
            processes.append(started)
            return started

        a = replica("a")
        wait_until(lambda: a.assigned() == set(range(PARTITIONS)), what="replica A assigned")
        b = replica("b")

        def sharing() -> bool:
            mine, theirs = a.assigned() or set(), b.assigned() or set()
            return bool(mine and theirs and not mine & theirs
                         and mine | theirs == set(range(PARTITIONS)))

        wait_until(sharing, what="both replicas sharing the partitions")
        a_partitions = a.assigned()
        assert a_partitions is not None

        turns = sampled_turns(TURNS)
        placed = publish(kafka.bootstrap, topic, turns)
        sent = set(placed)

        wait_until(lambda: len(a.judged()) >= 8 and a.count("judging") >= 1
                   and a.count("pending") >= 1,
                   what="replica A judging, with turns in flight and read ahead")
        killed_at = time.time()
        os.kill(a.process.pid, signal.SIGKILL)  # no handover, no last commit
        assert a.process.wait(timeout=30) == -signal.SIGKILL
        # Read before A's session times out: no other member has committed its partitions yet.
        position = committed(kafka.bootstrap, group)
        assert a.assigned() == a_partitions, "no rebalance before the kill"

        with closing(sqlite3.connect(a.store_path)) as db:
            judged_at = dict(db.execute(
                "SELECT trace_id, judged_at FROM turns WHERE state = 'judged'").fetchall())
            stranded = {row[0] for row in db.execute(
                "SELECT trace_id FROM turns WHERE state IN ('pending', 'judging')")}
        by_a = set(judged_at)
        assert sorted(a.judged()) == sorted(by_a)
        assert stranded, "the kill must land with turns read and not judged"
        assert {placed[t][0] for t in by_a | stranded} <= a_partitions

        def b_done() -> bool:
            lag = b.lag()
            return (by_a | set(b.judged()) >= sent and b.count("pending", "judging") == 0
                    and set(lag) == set(range(PARTITIONS)) and not any(lag.values()))

        wait_until(b_done, what="every turn judged, and B at the end of every partition")
        by_b = b.judged()
        assert a.process.returncode == -signal.SIGKILL  # never restarted
        assert b.stop() == 0

    # Nothing lost: every turn judged at least once, by one replica or the other.
    assert set(by_a) | set(by_b) == sent
    # None judged twice by the survivor.
    twice = {t for t, n in Counter(by_b).items() if n > 1}
    assert not twice, f"{len(twice)} turns judged twice in B's own store"
    assert a.count("failed") == b.count("failed") == 0
    # Read ahead (or being judged) by A and not judged: judged exactly once, by B.
    assert stranded <= set(by_b) and not stranded & by_a
    # Judged by both: exactly the turns A judged after its last offset commit, which the commit
    # (offset, or the metadata listing traces judged past it) did not cover.
    def covered(trace_id: str) -> bool:
        partition, offset = placed[trace_id]
        next_offset, judged_past = position.get(partition, (0, set()))
        return offset < next_offset or trace_id in judged_past

    uncommitted = {t for t in by_a if not covered(t)}
    again = by_a & set(by_b)
    assert again == uncommitted, (
        "a turn may be judged by both only if A was killed after writing its verdicts and "
        f"before committing its offset: {len(again)} judged by both, {len(uncommitted)} "
        "judged by A past its last commit")
    # Few: the in-flight window, what A judged in its last commit interval before the kill.
    late = killed_at - COMMIT_INTERVAL_S - COMMIT_SLACK_S
    assert all(judged_at[t] >= late for t in again), (
        f"{len(again)} judged again, some judged by A more than a commit interval before the "
        "kill")


def test_a_turn_being_judged_at_a_rebalance_is_not_lost_when_its_replica_is_then_killed(
        kafka: KafkaBroker, tmp_path: Path, processes: list[JudgeReplica]) -> None:
    """A rebalance (here: a replica joining) takes a partition from A while A waits on a slow
    LLM call for one of its turns; A is then killed before the call returns. The turn was not
    judged: it must not be committed as judged at the rebalance, or no one ever judges it."""
    topic = new_topic(kafka, partitions=1)
    with ScriptedOpenAIServer(judge_model, delay_s=60) as slow, \
            ScriptedOpenAIServer(judge_model) as fast:
        a = JudgeReplica(tmp_path / "a", judge_config(kafka, topic, slow))
        processes.append(a)
        wait_until(lambda: a.assigned() == {0}, what="replica A assigned")
        [turn] = sampled_turns(1)
        publish(kafka.bootstrap, topic, [turn])
        wait_until(lambda: a.count("judging") == 1 and slow.requests, what="A's LLM call")

        b = JudgeReplica(tmp_path / "b", judge_config(kafka, topic, fast))
        processes.append(b)
        wait_until(lambda: "partitions [0] given up" in a.log.read_text(),
                   what="the rebalance taking the partition from A")
        os.kill(a.process.pid, signal.SIGKILL)  # its LLM call never returns
        assert a.process.wait(timeout=30) == -signal.SIGKILL
        assert a.judged() == []

        wait_until(lambda: b.judged() == [turn.trace_id], what="the turn judged by B")
        assert b.stop() == 0
