"""One store for a fleet: judge replicas on Kafka writing to one real PostgreSQL store, which the
pages (`list_turns`) and the `verdicts` commands read whole; store.url's configuration; the
sidecar's store waiting on PostgreSQL off the event loop."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from monitor.config import Settings
from monitor.errors import ConfigError
from monitor.model import AssistantTurn
from monitor.store import Store, ThreadedStore
from monitor.verdict import JudgeResult, Verdict
from tests.conftest import RunningSidecar, stopped_at_the_end, test_settings
from tests.kafka_broker import KafkaBroker
from tests.postgres_server import PASSWORD, database, postgres  # noqa: F401  (fixtures)
from tests.test_kafka_judge_queue import new_topic
from tests.waiting import until, wait_until


class Scorer:
    """A judge that answers at once with its own groundedness score: whose verdict it is shows
    in the listing."""

    def __init__(self, name: str, score: float) -> None:
        self.name, self.score = name, score

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        return JudgeResult(self.name, [Verdict("groundedness", score=self.score, rationale="r")],
                           input_tokens=10, output_tokens=2)


class JudgeReplica(RunningSidecar):
    def __init__(self, settings: Settings, judge: Scorer) -> None:
        self.judge = judge
        super().__init__(settings)

    async def _make(self, settings: Settings) -> Any:
        from monitor.app import Sidecar

        return Sidecar(settings, registry=self.registry, judges=[self.judge])

    def partitions(self) -> set[int]:
        source = self.sidecar.turn_source
        consumer = source.consumer if source is not None else None
        return {tp.partition for tp in consumer.assignment()} if consumer is not None else set()


def publish(kafka: KafkaBroker, topic: str, turns: list[AssistantTurn]) -> None:
    """Sampled turns on the judge queue's topic, as an ingest replica publishes them."""
    from aiokafka import AIOKafkaProducer

    from monitor.queue.kafka import encode_turn

    async def send() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, acks="all")
        await producer.start()
        try:
            for turn in turns:
                await producer.send_and_wait(topic, encode_turn(turn, "rate", 0.5),
                                             key=turn.trace_id.encode())
        finally:
            await producer.stop()

    asyncio.run(send())


@pytest.fixture
def replicas() -> Iterator[Callable[..., JudgeReplica]]:
    yield from stopped_at_the_end(
        lambda judge, **overrides: JudgeReplica(test_settings(**overrides), judge))


@pytest.mark.integration  # a real Kafka broker and a real PostgreSQL server
def test_judge_replicas_on_kafka_write_one_store_the_pages_list_whole(
        kafka: KafkaBroker, database: str, replicas: Callable[..., JudgeReplica],  # noqa: F811
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    topic = new_topic(kafka, partitions=2)

    def judging(name: str) -> dict[str, Any]:
        return {"kafka": {"brokers": [kafka.bootstrap]},
                "store": {"url": database, "replica": name, "path": str(tmp_path / f"{name}.db")},
                "judging": {"workers": 1, "queue": {
                    "kind": "kafka", "role": "judge", "topic": topic,
                    "group_id": f"judges-{topic}", "dead_letter_topic": f"{topic}.dlq",
                    "prefetch": 4, "commit_interval_s": 0.2}}}

    a = replicas(Scorer("judge-a", 0.25), **judging("judge-a"))
    wait_until(lambda: len(a.partitions()) == 2, what="the first judge replica assigned")
    b = replicas(Scorer("judge-b", 0.75), **judging("judge-b"))
    wait_until(lambda: a.partitions() and b.partitions(), what="both replicas with a partition")

    turns = [AssistantTurn(trace_id=uuid.uuid4().hex, service="shop-bot", route="r",
                           question=f"q{n}?", answer="a.") for n in range(16)]
    publish(kafka, topic, turns)
    store = Store(database)  # what the pages and the CLI read: the whole fleet's
    wait_until(lambda: len(store.list_turns(limit=100, state="judged")) == len(turns),
               what="every turn judged, by one replica or the other")

    listed = store.list_turns(limit=100)
    assert {t["trace_id"] for t in listed} == {t.trace_id for t in turns}
    scores = [t["verdicts"]["groundedness"][1] for t in listed]
    assert set(scores) == {0.25, 0.75}  # verdicts of each replica's judge
    by_replica = {name: {t["trace_id"] for t in listed
                         if store.show(t["trace_id"])["replica"] == name}
                  for name in ("judge-a", "judge-b")}
    for name, score in (("judge-a", 0.25), ("judge-b", 0.75)):  # judged where they were read
        assert by_replica[name] and {t["verdicts"]["groundedness"][1] for t in listed
                                     if t["trace_id"] in by_replica[name]} == {score}
    assert by_replica["judge-a"] | by_replica["judge-b"] == {t.trace_id for t in turns}
    assert store.tokens_since(0) == 12 * len(turns)  # each judged once
    for replica in (a, b):  # and each replica's metrics count its own
        judged = replica.metric("assistant_turns_judged_total", service="shop-bot", route="r",
                                judge=replica.judge.name)
        assert judged == len(by_replica[replica.judge.name])
        assert replica.sidecar.store.backlog() == 0  # type: ignore[union-attr]
    store.close()

    # One replica's page lists the whole fleet's turns, judged by both.
    with urllib.request.urlopen(f"{a.admin_url}/ui/turns?limit=100", timeout=30) as response:
        page = response.read().decode()
    assert all(f'href="/ui/turns/{t.trace_id}"' in page for t in turns)
    assert "0.25" in page and "0.75" in page

    # The verdicts commands read the fleet's store too.
    config = tmp_path / "cli.yaml"
    config.write_text(f"store: {{url: '{database}'}}\n")
    listing = subprocess.run([sys.executable, "-m", "monitor", "verdicts", "list", "--json",
                              "--limit", "100", "--config", str(config)],
                             capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0, listing.stderr
    assert len(json.loads(listing.stdout)) == len(turns)
    shown = subprocess.run([sys.executable, "-m", "monitor", "verdicts", "show",
                            turns[0].trace_id[:12], "--json", "--config", str(config)],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["verdicts"][0]["judge"] in ("judge-a", "judge-b")
    assert "127.0.0.1" in caplog.text and "monitor:***@" in caplog.text  # named, masked
    assert PASSWORD not in caplog.text + listing.stderr + shown.stderr


@pytest.mark.integration  # a real PostgreSQL server
async def test_the_sidecars_store_waits_on_postgresql_off_the_event_loop(
        database: str) -> None:  # noqa: F811
    """Another connection holds a lock on the turns: the enqueue waits for it on the store's
    thread while the event loop keeps serving; it lands once the lock is let go."""
    import psycopg

    store = ThreadedStore(Store(database))
    other = psycopg.connect(database, autocommit=True)
    lock = other.transaction()
    lock.__enter__()
    other.execute("LOCK TABLE turns IN EXCLUSIVE MODE")

    def waiting_on_the_lock() -> bool:
        return bool(other.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'assistant-monitor'"
            " AND wait_event_type = 'Lock'").fetchone()[0])

    enqueue = asyncio.create_task(store.enqueue(
        AssistantTurn(trace_id="cd" * 16, service="bot"), "rate", 1.0))
    await until(waiting_on_the_lock)  # polled on the loop: it runs while the store waits
    for _ in range(100):  # and goes on running, the lock still held
        await asyncio.sleep(0)
    assert not enqueue.done()
    lock.__exit__(None, None, None)
    assert await asyncio.wait_for(enqueue, 10)
    claimed = await store.claim()
    assert claimed is not None and claimed.trace_id == "cd" * 16
    other.close()
    await store.close()


@pytest.mark.integration  # a real PostgreSQL server
async def test_the_sidecars_store_connects_again_after_losing_its_connection(
        database: str, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    """The server ends the store's session (a restart, a fail-over): the call that finds it gone
    is tried again on a new connection; nothing is lost, the password is not logged."""
    import psycopg

    store = ThreadedStore(Store(database))
    assert await store.enqueue(AssistantTurn(trace_id="ef" * 16, service="bot"), "rate", 1.0)
    with psycopg.connect(database, autocommit=True) as admin:
        assert admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                             " WHERE application_name = 'assistant-monitor'").fetchone()[0] == 1
    claimed = await store.claim()
    assert claimed is not None and claimed.trace_id == "ef" * 16
    await store.complete(claimed.trace_id, [])
    assert await store.state(claimed.trace_id) == "judged" and store.backlog() == 0
    assert "lost the connection to the store postgresql://monitor:***@" in caplog.text
    assert PASSWORD not in caplog.text
    await store.close()


@pytest.mark.integration  # a real PostgreSQL server
def test_an_unreachable_store_is_a_clear_error_that_keeps_the_password(
        postgres: Any, tmp_path: Path) -> None:  # noqa: F811
    from monitor.store import StoreError

    wrong = postgres.url_of("postgres").replace(PASSWORD, "not-the-password")
    with pytest.raises(StoreError, match="cannot connect to the store postgresql://monitor:"
                                         r"\*\*\*@127.0.0.1") as raised:
        Store(wrong)
    assert "not-the-password" not in str(raised.value)
    config = tmp_path / "config.yaml"
    config.write_text(f"store: {{url: '{wrong}'}}\n")
    listing = subprocess.run([sys.executable, "-m", "monitor", "verdicts", "list", "--config",
                              str(config)], capture_output=True, text=True, timeout=120)
    assert listing.returncode == 1 and "cannot connect to the store" in listing.stderr
    assert "not-the-password" not in listing.stderr + listing.stdout


@pytest.mark.unit
@pytest.mark.parametrize("url, error", [
    ("mysql://app:s3cr3t@db/monitor", "expected a PostgreSQL URL"),
    ("postgresql://app:s3cr3t@db:99999/monitor", "the port is not a number"),
    ("postgresql://app:s3cr3t@/monitor", "no host"),
    ("postgresql://app:s3cr3t@db:5432", "no database name"),
])
def test_a_bad_store_url_is_a_configuration_error_without_the_password(
        tmp_path: Path, url: str, error: str) -> None:
    from monitor.config import load_settings

    path = tmp_path / "config.yaml"
    path.write_text(f"store: {{url: '{url}'}}\n")
    with pytest.raises(ConfigError, match=f"store.url: .*{error}") as raised:
        load_settings(path)
    assert "s3cr3t" not in str(raised.value)


@pytest.mark.unit
def test_the_store_url_is_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    from monitor.config import load_settings
    from monitor.store import shown_url

    url = "postgresql://app:s3cr3t@db.internal:5432/monitor?sslmode=require"
    monkeypatch.setenv("ASSISTANT_MONITOR_STORE__URL", url)
    monkeypatch.setenv("ASSISTANT_MONITOR_STORE__REPLICA", "monitor-0")
    settings = load_settings()
    assert settings.store.url is not None and settings.store.url.get_secret_value() == url
    assert settings.store.replica == "monitor-0"
    assert "s3cr3t" not in repr(settings) + settings.model_dump_json()
    assert shown_url(url) == "postgresql://app:***@db.internal:5432/monitor?sslmode=require"
    assert shown_url("postgresql://db/m?user=a&password=s3cr3t") == \
        "postgresql://db/m?user=a&password=***"
