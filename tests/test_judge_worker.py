"""The local judge in its own worker process: the same verdicts, a killed child restarted with
its turn judged exactly once, no child left after stop. A real spawned process, the real store."""

from __future__ import annotations

import dataclasses
import os
import signal
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from monitor.config import JudgingSettings, LocalJudgeSettings
from monitor.judges.local import LocalJudge
from monitor.judges.stage import JudgeStage
from monitor.judges.worker import ProcessJudge
from monitor.model import AssistantTurn, RetrievedDocument
from monitor.store import Store
from monitor.telemetry import Metrics
from monitor.verdict import JudgeResult
from tests.waiting import until

TURN = AssistantTurn(
    trace_id="ab" * 16, service="bot", question="How long do refunds take?",
    answer="Refunds are issued within 30 days. Express shipping takes one day. Hope this helps!",
    documents=[RetrievedDocument(id="d1", content="Refunds are issued within 30 days of purchase."),
               RetrievedDocument(id="d2", content="Our offices are closed on Sundays.")])


def gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


def comparable(result: JudgeResult) -> dict:
    return {**dataclasses.asdict(result), "latency_s": None}


@pytest.mark.unit
async def test_verdicts_from_the_worker_process_equal_the_in_process_ones() -> None:
    settings = LocalJudgeSettings()
    in_process = LocalJudge(settings).judge_sync(TURN)
    judge = ProcessJudge(settings)
    try:
        assert judge.pid is None  # nothing runs before the first turn
        in_worker = await judge.judge(TURN)
        pid = judge.pid
        assert pid is not None and pid != os.getpid()
        # At the lowest priority: where cores are short, the receivers are served first.
        assert os.getpriority(os.PRIO_PROCESS, pid) == 19
        assert os.sched_getscheduler(pid) == os.SCHED_IDLE  # and it never preempts them
    finally:
        await judge.aclose()
    assert comparable(in_worker) == comparable(in_process)
    assert {v.metric for v in in_worker.verdicts} >= {"groundedness", "context_relevance"}
    assert gone(pid)


@pytest.mark.unit
async def test_a_ctrl_c_to_the_process_group_leaves_the_worker_to_the_sidecar() -> None:
    """A Ctrl-C on the terminal signals the sidecar and its worker alike. The worker used to
    die of it first, so every interactive stop restarted it; it ignores it now (and SIGTERM),
    and ends when the sidecar closes its pipe."""
    judge = ProcessJudge(LocalJudgeSettings())
    try:
        await judge.judge(TURN)
        pid = judge.pid
        assert pid is not None
        for stop_signal in (signal.SIGINT, signal.SIGTERM):
            os.kill(pid, stop_signal)
        await judge.judge(TURN)  # the same child answers
        assert judge.pid == pid and judge.starts == 1
    finally:
        await judge.aclose()
    assert gone(pid)


@pytest.mark.unit
async def test_a_worker_killed_mid_turn_is_restarted_and_the_turn_judged_exactly_once(
        tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    store.enqueue(TURN, "rate", 1.0)
    judge = ProcessJudge(LocalJudgeSettings())
    emitted: list[str] = []
    stage = JudgeStage(JudgingSettings(workers=1, retry_backoff_s=0), store, [judge],
                       Metrics(CollectorRegistry()),
                       lambda turn, probability, results: emitted.append(turn.trace_id))
    await stage.start()
    try:
        await until(lambda: store.state(TURN.trace_id) == "judging" and judge.pid is not None)
        killed = judge.pid
        os.kill(killed, signal.SIGKILL)
        await until(lambda: store.state(TURN.trace_id) == "judged")
        pid = judge.pid
    finally:
        await stage.stop()
    assert judge.starts == 2 and pid != killed
    assert emitted == [TURN.trace_id]
    shown = store.show(TURN.trace_id)
    assert shown["attempts"] == 2  # the killed attempt, then the one that judged it
    metrics = [v["metric"] for v in shown["verdicts"]]
    assert len(metrics) == len(set(metrics)) > 0  # one verdict per metric: judged once
    assert judge.pid is None and gone(pid)  # stop took the child down
    store.close()


@pytest.mark.integration
async def test_the_sidecar_judges_in_its_worker_process_by_default_and_stops_it() -> None:
    from monitor.app import Sidecar
    from monitor.config import JudgingSettings
    from tests.conftest import test_settings

    # At the sidecar's default priority, not test_settings' (normal)
    default = JudgingSettings().priority
    sidecar = Sidecar(test_settings(judging={"priority": default}), registry=CollectorRegistry())
    judge = sidecar.judging.judges[0]
    assert isinstance(judge, ProcessJudge)
    await sidecar.start()
    try:
        await sidecar.downstream.consume([(TURN, "rate", 1.0)], 0)
        await until(lambda: sidecar.judging.idle)  # metrics follow the stored verdicts
        pid = judge.pid
        assert pid is not None and pid != os.getpid()
        # At the lowest priority: where cores are short, the receivers are served first.
        assert os.getpriority(os.PRIO_PROCESS, pid) == 19
        assert os.sched_getscheduler(pid) == os.SCHED_IDLE  # and it never preempts them
        assert sidecar.metrics.registry.get_sample_value("assistant_turns_judged_total", {
            "service": "bot", "route": "none", "judge": "local"}) == 1
    finally:
        await sidecar.stop()
    assert judge.pid is None and gone(pid)


@pytest.mark.unit
async def test_the_worker_runs_at_the_configured_priority() -> None:
    """judging.priority: idle (the default, above) is nice 19 and SCHED_IDLE; low is nice 19
    alone, a share of busy cores; normal is the sidecar's own."""
    from monitor.judges.factory import build_judge
    from tests.conftest import test_settings

    for priority, niceness, policy in (("low", 19, os.SCHED_OTHER),
                                       ("normal", os.getpriority(os.PRIO_PROCESS, 0),
                                        os.sched_getscheduler(0))):
        judge = build_judge(test_settings(judging={"priority": priority}),
                            Metrics(CollectorRegistry()))
        assert isinstance(judge, ProcessJudge)
        try:
            await judge.judge(TURN)
            pid = judge.pid
            assert pid is not None
            assert os.getpriority(os.PRIO_PROCESS, pid) == niceness, priority
            assert os.sched_getscheduler(pid) == policy, priority
        finally:
            await judge.aclose()


@pytest.mark.unit
def test_eval_and_calibrate_judge_at_normal_priority(tmp_path: Path) -> None:
    """Offline there is no ingest to protect: whatever the sidecar's configuration says, the
    worker of `eval` and `calibrate` runs at normal priority (idle beside busy processes, two
    turns took a minute)."""
    from monitor.cli import build_parser, offline_settings

    config = tmp_path / "monitor.yaml"
    config.write_text("judging: {priority: idle}\n")
    for command in (["eval", "--dataset", "d.jsonl"], ["calibrate", "--dataset", "d.jsonl"]):
        args = build_parser().parse_args([*command, "--config", str(config)])
        assert offline_settings(args).judging.priority == "normal"
