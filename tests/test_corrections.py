"""People's corrections of stored verdicts: `calibrate --from-store` measures the judges against
them, and `verdicts export-failing` writes the corrected turns as a golden dataset."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from monitor.corrections import human_labels, judge_agreement
from monitor.model import AssistantTurn, RetrievedDocument
from monitor.store import Store
from monitor.verdict import JudgeResult, Verdict
from tests import traffic

pytestmark = pytest.mark.integration  # the CLI in a subprocess


def correction(n: int, author: str, correct: bool, label: str | None = None,
               verdict_label: str = "complete", metric: str = "completeness") -> dict[str, object]:
    return {"id": n, "trace_id": "t1", "judge": "local", "metric": metric, "author": author,
            "correct": correct, "verdict_label": verdict_label, "verdict_score": None,
            "label": label, "score": None}


def test_each_persons_last_word_counts() -> None:
    corrections = [correction(1, "ana", True), correction(2, "bo", False, "incomplete"),
                   correction(3, "ana", False, "no_answer")]  # ana changed her mind
    assert human_labels(corrections) == {"t1": {"completeness": ["no_answer", "incomplete"]}}
    agreed = judge_agreement(corrections)[("local", "completeness")]
    assert (agreed.corrections, agreed.agreed, agreed.share) == (2, 0, 0.0)
    low, high = agreed.interval
    assert low == 0.0 and 0.5 < high < 1.0


def stored_turns(path: Path) -> list[str]:
    """Four replayed-traffic turns in a store, judged (completeness) as a judge would."""
    store = Store(path)
    ids = []
    for i, case in enumerate([traffic.GROUNDED[0], traffic.REFUSALS[0], traffic.INVENTED[0],
                              traffic.GROUNDED[1]]):
        turn = AssistantTurn(trace_id=f"{i + 1:032x}", service="bot", route="help",
                             question=case.question, answer=case.answer,
                             documents=[RetrievedDocument(content=d) for d in case.documents])
        store.enqueue(turn, "rate", 0.5)
        store.claim()
        label = "no_answer" if case in traffic.REFUSALS else "complete"
        store.complete(turn.trace_id, [JudgeResult("local", [
            Verdict("completeness", label=label, rationale="as judged")])])
        ids.append(turn.trace_id)
    store.add_correction(ids[0], "local", "completeness", correct=True, author="ana")
    store.add_correction(ids[1], "local", "completeness", correct=True, author="ana")
    store.add_correction(ids[2], "local", "completeness", correct=False, label="incomplete",
                         author="bo")
    store.close()
    return ids


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "monitor", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def test_calibrate_reads_the_corrections_and_the_export_is_a_golden_dataset(tmp_path: Path
                                                                             ) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"store: {{path: {tmp_path / 'store.db'}}}\njudging: {{process: false}}\n")
    ids = stored_turns(tmp_path / "store.db")

    done = cli("calibrate", "--from-store", "--config", str(config), "--out",
               str(tmp_path / "cal"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    assert report["items"] == 3  # the corrected turns, re-judged by the configured judge
    assert report["stored_verdicts"]["local/completeness"]["corrections"] == 3
    assert report["stored_verdicts"]["local/completeness"]["agreed"] == 2
    assert "| local/completeness | 3 | 0.667 [" in (tmp_path / "cal" / "calibration.md").read_text()
    assert report["metrics"]["completeness"]["items"] == 3

    out = tmp_path / "golden.jsonl"
    exported = cli("verdicts", "export-failing", "--out", str(out), "--config", str(config),
                   cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    labelled = {r["trace_id"]: r["labels"] for r in rows if "labels" in r}
    assert labelled == {ids[0]: {"completeness": ["complete"]},
                        ids[1]: {"completeness": ["no_answer"]},
                        ids[2]: {"completeness": ["incomplete"]}}
    assert "wrote 3 corrected turns" in exported.stdout
    again = cli("calibrate", "--dataset", str(out), "--config", str(config), "--out",
                str(tmp_path / "again"), cwd=tmp_path)  # the export is a calibrate dataset
    assert again.returncode == 0, again.stderr


def test_calibrate_from_a_store_nobody_corrected_says_so(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"store: {{path: {tmp_path / 'store.db'}}}\n")
    Store(tmp_path / "store.db").close()
    done = cli("calibrate", "--from-store", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 2 and "no stored verdict was corrected" in done.stderr


def test_the_sidecar_exports_how_often_people_found_its_verdicts_right(start_sidecar) -> None:  # noqa: ANN001
    from tests.test_evaluation_export import _send_turn
    from tests.waiting import wait_until

    sidecar = start_sidecar()
    judged = [_send_turn(sidecar, case)[0] for case in (traffic.GROUNDED[0], traffic.INVENTED[0])]
    store = Store(sidecar.sidecar.settings.store.path)
    wait_until(lambda: all(store.state(t) == "judged" for t in judged), 60, "the turns judged")
    store.add_correction(judged[0], "local", "groundedness", correct=True, author="ana")
    store.add_correction(judged[1], "local", "groundedness", correct=False, score=0.0,
                         author="ana")
    store.close()
    sidecar.call(sidecar.sidecar.refresh_human_agreement())  # what it does every 30 s
    labels = {"judge": "local", "metric": "groundedness"}
    assert sidecar.metric("assistant_judge_human_agreement", **labels) == 0.5
    assert 0 < sidecar.metric("assistant_judge_human_agreement_lower", **labels) < 0.5 \
        < sidecar.metric("assistant_judge_human_agreement_upper", **labels) < 1
