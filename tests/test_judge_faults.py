"""Judges under faults: garbage replies, huge turns, judge calls that do not end at shutdown.

Real parts throughout: the scripted OpenAI-compatible server over real HTTP, the real `openai`
client, the real store; a socket that accepts and never answers for a hung endpoint.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from monitor.config import JudgingSettings, LLMJudgingSettings
from monitor.judges.llm import LLMJudge
from monitor.judges.stage import JudgeStage, judge_input
from monitor.model import AssistantTurn, RetrievedDocument
from monitor.store import Store
from monitor.telemetry import Metrics
from monitor.verdict import JudgeResult, Verdict
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.waiting import until

GARBAGE = [
    "I think the answer is relevant.",                                    # prose, no JSON
    '{"answer_relevance": {"reasoning": "r", "label": "maybe"}}',          # wrong schema, label
    '{"documents": [{"index": 1, "reasoning": "r", "label": "sure"}]}',   # invalid label
    '```json\n{"documents": [{"index": 1, "reason',                        # truncated
    "",                                                                    # empty
]


def numbered_turn(n: int) -> AssistantTurn:
    return AssistantTurn(
        trace_id=f"{n + 1:032x}", service="bot", question=f"Question {n}: how long do refunds take?",
        answer="Refunds are issued within 30 days.",
        documents=[RetrievedDocument(content="Refunds are issued within 30 days of purchase.")])


@pytest.mark.integration
async def test_a_judge_answering_garbage_is_an_outage_and_every_turn_is_judged_once(
        tmp_path: Path) -> None:
    """The endpoint answers garbage (after the re-ask too) for 140 turns' worth of judging; no
    turn is failed (one spent attempt would fail it: max_attempts is 1); once the endpoint
    recovers every turn is judged, exactly once."""
    from monitor.app import Sidecar
    from tests.conftest import scripted_llm_settings

    count, workers = 140, 4
    garbage = {"replies": 0}  # a garbled try takes 2 to 4 (a prompt and its re-ask, a sibling)

    def script(request: dict[str, Any]) -> Reply:
        if garbage["replies"] < 4 * count:
            garbage["replies"] += 1
            return Reply(content=GARBAGE[garbage["replies"] % len(GARBAGE)])
        return judge_model(request)

    with ScriptedOpenAIServer(script) as server:
        # The circuit stays closed throughout, so every turn meets the garbage (an open circuit
        # would spare most of them the calls).
        settings = scripted_llm_settings(
            tmp_path / "store.db", server.base_url,
            {"failure_threshold": 100_000, "reset_timeout_s": 0.02}, workers=workers)
        sidecar = Sidecar(settings, registry=CollectorRegistry())
        await sidecar.start()
        try:
            for n in range(count):
                await sidecar.downstream.consume([(numbered_turn(n), "rate", 1.0)], 0)
            store = sidecar.store.sync  # reads beside the sidecar's store thread
            m = sidecar.metrics.registry.get_sample_value
            await until(lambda: garbage["replies"] == 4 * count, timeout_s=120)
            async with asyncio.timeout(120):
                # idle, not an empty backlog: the last turn's metrics follow its stored verdicts
                while not sidecar.judging.idle:
                    assert store.turns(state="failed", limit=count) == []
                    await asyncio.sleep(0.05)
            judged = store.turns(state="judged", limit=count + 1)
            assert len(judged) == count
            straddled = 0
            for turn in judged:
                shown = store.show(turn["trace_id"])
                # Two prompts, two calls. A try under way as the garbage ran out may differ: a
                # re-ask answered adds a call (up to 4), a prompt's verdict cached by a try the
                # garbage cut short removes one. At most one try per worker is under way.
                assert len(shown["costs"]) == 1 and 1 <= shown["costs"][0]["calls"] <= 4
                straddled += shown["costs"][0]["calls"] != 2
                assert shown["attempts"] == 1  # the garbage spent none
                assert {v["metric"] for v in shown["verdicts"]} == {
                    "context_relevance", "answer_relevance", "completeness", "groundedness"}
            assert straddled <= workers
            assert m("assistant_judge_requests_total",
                     {"judge": "tenant-llm", "outcome": "unavailable"}) >= count
            assert m("assistant_judge_llm_calls_total",
                     {"judge": "tenant-llm", "outcome": "unparseable"}) >= 2 * count
            assert m("assistant_turns_dropped_total", {"reason": "judge_failed"}) is None
            assert m("assistant_turns_judged_total", {  # each turn once
                "service": "bot", "route": "none", "judge": "tenant-llm"}) == count
        finally:
            await sidecar.stop()


@pytest.mark.integration
async def test_a_judge_reply_with_a_cut_emoji_is_stored_mended_and_judging_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A model that stops mid-emoji: its reasoning holds a lone surrogate, which the server's
    JSON escapes (\\ud83d) and the client decodes back. SQLite could not store that verdict: the
    judge worker died with it (its exception, quoting the reasoning, logged by asyncio) and
    every turn after it waited for ever."""
    def script(request: dict[str, Any]) -> Reply:
        reply = judge_model(request)
        reply.content = (reply.content or "").replace('"reasoning": "', '"reasoning": "\ud83d ')
        return reply

    with ScriptedOpenAIServer(script) as server:
        settings = LLMJudgingSettings(endpoints=[{"name": "cut", "base_url": server.base_url,
                                                  "model": "judge-model", "max_retries": 0}])
        store = Store(tmp_path / "s.db")
        for n in range(3):
            store.enqueue(numbered_turn(n), "rate", 1.0)
        stage = stage_for(store, LLMJudge(settings.endpoints[0], settings,
                                          Metrics(CollectorRegistry())), workers=1)
        await stage.start()
        try:
            await until(lambda: len(store.turns(state="judged", limit=4)) == 3, timeout_s=60)
        finally:
            await stage.stop()
    verdicts = store.show(numbered_turn(0).trace_id)["verdicts"]
    assert any(v["rationale"].startswith("\ufffd ") for v in verdicts)
    assert "\ud83d" not in caplog.text and "Shares the question" not in caplog.text


@pytest.mark.unit
async def test_a_judge_worker_outlives_verdicts_the_store_refuses(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    class Unstorable:  # fault injection: its first verdict cannot be written (UTF-8)
        name = "unstorable"

        def __init__(self) -> None:
            self.calls = 0

        async def judge(self, turn: AssistantTurn) -> JudgeResult:
            self.calls += 1
            rationale = "\ud800 CANARY-77e1" if self.calls == 1 else "fine"
            return JudgeResult(self.name, [Verdict("completeness", label="complete",
                                                   rationale=rationale)])

    store = Store(tmp_path / "s.db")
    for n in range(3):
        store.enqueue(numbered_turn(n), "rate", 1.0)
    metrics = Metrics(CollectorRegistry())
    stage = stage_for(store, Unstorable(), metrics, workers=1, max_attempts=1)
    await stage.start()
    try:
        await until(lambda: store.backlog() == 0, timeout_s=30)
    finally:
        await stage.stop()
    assert len(store.turns(state="judged", limit=4)) == 2
    assert [t["error"] for t in store.turns(state="failed", limit=4)] == ["UnicodeEncodeError"]
    assert metrics.registry.get_sample_value("assistant_turns_dropped_total",
                                             {"reason": "judge_failed"}) == 1
    assert "judging a turn failed: UnicodeEncodeError" in caplog.text
    assert "CANARY" not in caplog.text


class Recording:
    """A judge that records what it was given and answers at once."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: list[AssistantTurn] = []

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        self.seen.append(turn)
        return JudgeResult(self.name, [Verdict("completeness", label="complete", rationale="r")])


def stage_for(store: Store, judge: Any, metrics: Metrics | None = None, **judging: Any
              ) -> JudgeStage:
    return JudgeStage(JudgingSettings(**judging), store, [judge], metrics or Metrics(),
                      lambda turn, probability, results: None)


@pytest.mark.unit
async def test_a_huge_turn_is_cut_to_the_byte_budget_before_any_judge_sees_it(
        tmp_path: Path) -> None:
    huge = AssistantTurn(
        trace_id="f" * 32, question="€" * 400_000,  # 1.2 MB, three bytes a character
        answer="Short answer.",
        documents=[RetrievedDocument(id=f"d{i}", content="x" * 20_000) for i in range(30)])
    store = Store(tmp_path / "s.db")
    store.enqueue(huge, "rate", 1.0)
    metrics = Metrics(CollectorRegistry())
    judge = Recording()
    stage = stage_for(store, judge, metrics)
    await stage.start()
    try:
        await until(lambda: store.backlog() == 0)
    finally:
        await stage.stop()
    seen = judge.seen[0]
    assert seen.question == "€" * 1365  # 4 KiB less the character cut in two
    assert seen.answer == "Short answer."
    assert [d.id for d in seen.documents] == [f"d{i}" for i in range(20)]
    assert all(d.content == "x" * 8_192 for d in seen.documents)
    truncated = {field: metrics.registry.get_sample_value(
        "assistant_judge_input_truncated_total", {"field": field})
        for field in ("question", "answer", "document", "documents")}
    assert truncated == {"question": 1, "answer": None, "document": 20, "documents": 1}
    kept = store.show(huge.trace_id)["turn"]
    assert len(kept["question"]) == 400_000 and len(kept["documents"]) == 30  # stored whole


@pytest.mark.unit
def test_a_turn_within_the_budget_is_judged_as_it_is() -> None:
    cuts: list[str] = []
    limits = JudgingSettings().input
    small = numbered_turn(1).model_copy(update={"answer": None})
    assert judge_input(small, limits, cuts.append) is small and cuts == []
    at_limit = small.model_copy(update={"question": "q" * limits.question_bytes})
    assert judge_input(at_limit, limits, cuts.append) is at_limit and cuts == []
    # A lone surrogate (it can arrive in OTLP/JSON) is cut like any character, never raised on.
    odd = small.model_copy(update={"question": "\ud800" * 5_000})
    assert len(judge_input(odd, limits, cuts.append).question.encode()) <= limits.question_bytes
    assert cuts == ["question"]


class StuckInThread:
    """A CPU-bound judge in a worker thread that does not finish until released."""

    name = "stuck"

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    async def judge(self, turn: AssistantTurn) -> JudgeResult:
        await asyncio.to_thread(self._work)
        return JudgeResult(self.name, [])

    def _work(self) -> None:
        self.started.set()
        self.release.wait(60)


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """An OpenAI-compatible URL whose server accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["llm_request", "thread"])
async def test_stop_returns_in_time_while_a_judge_call_hangs_and_the_turn_is_kept(
        kind: str, silent_endpoint: str, tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    turn = AssistantTurn(trace_id="e" * 32, question="How long do refunds take?",
                         answer="30 days.")
    store.enqueue(turn, "rate", 1.0)
    if kind == "thread":
        judge: Any = StuckInThread()
        started: Callable[[], bool] = judge.started.is_set
    else:
        settings = LLMJudgingSettings(endpoints=[{"name": "hung", "base_url": silent_endpoint,
                                                  "model": "m", "max_retries": 0}])
        judge = LLMJudge(settings.endpoints[0], settings, Metrics(CollectorRegistry()))
        started = lambda: judge.endpoint.in_flight == 1  # noqa: E731
    stage = stage_for(store, judge)
    await stage.start()
    try:
        await until(started)
        begun = time.monotonic()
        await stage.stop(timeout_s=1.0)
        assert time.monotonic() - begun < 1.5  # within its timeout, plus scheduling slack
    finally:
        if kind == "thread":
            judge.release.set()
    shown = store.show(turn.trace_id)
    assert (shown["state"], shown["attempts"]) == ("pending", 0)  # put back untouched
    assert store.backlog() == 1

    store.close()  # a restart judges it
    store = Store(tmp_path / "s.db")
    recording = Recording()
    stage = stage_for(store, recording)
    await stage.start()
    try:
        await until(lambda: store.backlog() == 0)
    finally:
        await stage.stop()
    assert [t.trace_id for t in recording.seen] == [turn.trace_id]
    assert store.show(turn.trace_id)["state"] == "judged"


@pytest.mark.unit
async def test_a_turn_taken_over_while_judged_is_left_to_its_new_replica(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Kafka moved the partition while this replica judged the turn: the new owner stored it
    again and judges it; this replica's verdicts are refused, and that is no failure."""
    path = tmp_path / "fleet.db"
    old, new = Store(path, replica="old"), Store(path, replica="new")
    old.enqueue(numbered_turn(1), "rate", 1.0)

    class TakenOverWhileJudging(Recording):
        async def judge(self, turn: AssistantTurn) -> JudgeResult:
            assert new.enqueue(numbered_turn(1), "rate", 1.0)  # the new owner reads it again
            return await super().judge(turn)

    metrics = Metrics(CollectorRegistry())
    judge = TakenOverWhileJudging()
    stage = stage_for(old, judge, metrics)
    await stage.start()
    try:
        await until(lambda: judge.seen and stage.idle)
    finally:
        await stage.stop()
    trace_id = numbered_turn(1).trace_id
    assert old.state(trace_id) == "pending" and old.show(trace_id)["verdicts"] == []
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert new.claim().trace_id == trace_id  # the new owner judges it
