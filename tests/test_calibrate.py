"""`assistant-monitor calibrate` against scripted judge servers (real HTTP, real client)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import traffic
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.integration

HUMAN = {"grounded": ("complete", 1.0), "invented": ("complete", 0.0),
         "refusal": ("no_answer", None), "irrelevant_docs": ("complete", 0.0)}


def labelled(path: Path) -> Path:
    rows = []
    for i, case in enumerate(traffic.ALL):
        completeness, groundedness = HUMAN[case.kind]
        second = "incomplete" if i % 4 == 0 else completeness  # the raters disagree sometimes
        labels: dict[str, Any] = {"completeness": [completeness, second]}
        if groundedness is not None:
            labels["groundedness"] = [groundedness, groundedness]
        rows.append({"id": f"c{i}", "question": case.question,
                     "documents": [{"content": d} for d in case.documents],
                     "answer": case.answer, "labels": labels})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def always_complete(request: dict[str, Any]) -> Reply:
    reply = judge_model(request)
    if reply.content and "completeness" in reply.content:
        out = json.loads(reply.content)
        out["completeness"]["label"] = "complete"
        reply.content = json.dumps(out)
    return reply


def test_calibrate_reports_agreement_for_judges_panel_and_baselines(tmp_path: Path) -> None:
    dataset = labelled(tmp_path / "labelled.jsonl")
    with ScriptedOpenAIServer(judge_model) as a, ScriptedOpenAIServer(judge_model) as b, \
            ScriptedOpenAIServer(always_complete) as c:
        config = tmp_path / "judges.yaml"
        config.write_text("judging:\n  llm:\n    endpoints:\n" + "".join(
            f"      - {{name: {name}, base_url: '{server.base_url}', model: m, max_retries: 0}}\n"
            for name, server in (("careful", a), ("careful2", b), ("lenient", c))))
        done = subprocess.run([sys.executable, "-m", "monitor", "calibrate", "--dataset",
                               str(dataset), "--config", str(config), "--out", "cal"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "cal/calibration.json").read_text())
    completeness = report["metrics"]["completeness"]
    assert completeness["items"] == 16
    # Raters: majority = the first rater's label; they agree on 12 of 16 items.
    assert completeness["humans"]["pairwise_agreement"] == pytest.approx(12 / 16)
    careful = completeness["judges"]["careful"]
    assert careful["agreement"] == 1.0 and careful["cohen_kappa"] == 1.0
    assert careful["confusion"] == [[12, 0, 0], [0, 0, 0], [0, 0, 4]]
    lenient = completeness["judges"]["lenient"]
    assert lenient["agreement"] == 0.75  # calls the 4 refusals complete
    assert lenient["confusion"] == [[12, 0, 0], [0, 0, 0], [4, 0, 0]]
    assert completeness["judges"]["panel"]["agreement"] == 1.0  # two careful judges outvote
    # No-answer detection as yes/no: the lenient judge misses every refusal; the local judge
    # (a trained detector, run beside the LLM judges) catches them without false alarms.
    assert lenient["no_answer"]["recall"] == 0.0 and lenient["no_answer"]["refusals"] == 4
    local = completeness["judges"]["local"]["no_answer"]
    assert (local["recall"], local["false_positive_rate"], local["balanced_accuracy"]) == (
        1.0, 0.0, 1.0)
    assert local["intervals"]["recall"] == pytest.approx([0.5101, 1.0], abs=1e-4)
    groundedness = report["metrics"]["groundedness"]
    assert groundedness["judges"]["careful"]["spearman_rho"] == pytest.approx(1.0)
    baselines = groundedness["baselines"]
    assert set(baselines) >= {"AVG", "LLMSel", "CorrW", "corrw_weights"}
    assert baselines["LLMSel"]["spearman_rho"] > 0.8  # the local claim support tracks people
    assert sum(baselines["corrw_weights"].values()) == pytest.approx(1.0, abs=1e-3)
    markdown = (tmp_path / "cal/calibration.md").read_text()
    assert "| lenient | 0.750 [0.51, 0.90] |" in markdown and "CorrW (no LLM)" in markdown
    assert ("No-answer detection (local): recall 1.000 [0.51, 1.00] of 4 no_answer items, "
            "false positives 0.000 [0.00, 0.24] of 12 answers") in markdown
    assert "<svg" in (tmp_path / "cal/calibration.html").read_text()
    # Every figure has its 95% interval: perfect agreement on 16 items is only known to be above
    # 0.8 (Wilson); the lenient judge's 0.75 could be anything from 0.51 to 0.90.
    assert careful["intervals"]["agreement"] == pytest.approx([0.8064, 1.0], abs=1e-4)
    assert lenient["intervals"]["agreement"] == pytest.approx([0.5050, 0.8982], abs=1e-4)
    assert careful["intervals"]["cohen_kappa"] == [1.0, 1.0]
    low, high = baselines["LLMSel"]["intervals"]["spearman_rho"]
    assert low < baselines["LLMSel"]["spearman_rho"] < high <= 1.0
    assert "95% interval" in (tmp_path / "cal/calibration.html").read_text()
