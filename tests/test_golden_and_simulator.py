"""Ground-truth generation from templates + CSV data, and the LLM user simulator driving a
scripted chatbot (real HTTP, the real `openai` client)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from monitor import golden
from tests.fakes.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.integration

# The module's documented example, so the docs show a template that works.
TEMPLATES = textwrap.dedent(golden.__doc__.split("(its columns in scope):\n", 1)[1]  # type: ignore[union-attr]
                            .split("\n\n", 1)[0])


def write_business_data(folder: Path) -> Path:
    (folder / "tickets.csv").write_text("ticket_id,title\nT-1,Printer jam\nT-2,New laptop\n")
    (folder / "action_items.csv").write_text(
        "item_id,ticket_id,text\nA-1,T-1,Order toner\nA-2,T-1,Call vendor\nA-3,T-9,Other\n")
    templates = folder / "scenarios.yaml"
    templates.write_text(TEMPLATES)
    return templates


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "monitor", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def test_generator_keeps_entity_relationships(tmp_path: Path) -> None:
    templates = write_business_data(tmp_path)
    done = cli("generate-dataset", "--templates", str(templates), "--out", "golden.jsonl",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "golden.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["close_ticket-1", "close_ticket-2"]
    assert rows[0]["instructions"] == "Close ticket T-1 (Printer jam) after its 2 action items."
    assert rows[0]["expected_tool_calls"] == [
        {"name": "get_ticket", "arguments": {"ticket_id": "T-1"}},
        {"name": "complete_action_item", "arguments": {"item_id": "A-1"}},
        {"name": "complete_action_item", "arguments": {"item_id": "A-2"}},
        {"name": "close_ticket", "arguments": {"ticket_id": "T-1"}}]
    assert [c["name"] for c in rows[1]["expected_tool_calls"]] == ["get_ticket", "close_ticket"]
    assert [i["item_id"] for i in rows[0]["context"]["items"]] == ["A-1", "A-2"]

    templates.write_text(TEMPLATES.replace("{title}", "{subject}"))
    broken = cli("generate-dataset", "--templates", str(templates), "--out", "x.jsonl",
                 cwd=tmp_path)
    assert broken.returncode == 2
    assert "scenario 'close_ticket', row 1: template refers to {subject}" in broken.stderr


def user_agent(request: dict[str, Any]) -> Reply:
    """States the goal first; says DONE once the assistant reports the ticket closed."""
    system = request["messages"][0]["content"]
    said_by_bot = [m["content"] for m in request["messages"][1:] if m["role"] == "user"]
    if said_by_bot and "closed" in said_by_bot[-1]:
        return Reply(content="DONE")
    goal = re.search(r"Your goal:\n(.*)\n", system).group(1)  # type: ignore[union-attr]
    return Reply(content=f"Hi! {goal}" if not said_by_bot else "Please go on.")


def chatbot(request: dict[str, Any]) -> Reply:
    """A helpdesk bot: looks the ticket up, completes its items, closes it. With `sloppy`
    in the request's model name it closes the ticket without doing the items."""
    messages = request["messages"]
    ticket = re.search(r"T-\d+", messages[0]["content"]).group(0)  # type: ignore[union-attr]
    tool_results = [m for m in messages if m["role"] == "tool"]
    if not tool_results:
        return Reply(tool_calls=[{"name": "get_ticket", "arguments": {"ticket_id": ticket}}])
    last = json.loads(tool_results[-1]["content"])
    if "items" in last and "sloppy" not in request["model"]:
        return Reply(tool_calls=[
            *({"name": "complete_action_item", "arguments": {"item_id": i}} for i in last["items"]),
            {"name": "close_ticket", "arguments": {"ticket_id": ticket}}])
    if "items" in last:
        return Reply(tool_calls=[{"name": "close_ticket", "arguments": {"ticket_id": ticket}}])
    return Reply(content=f"Ticket {ticket} is closed.")


def test_simulator_records_every_call_and_feeds_eval(tmp_path: Path) -> None:
    templates = write_business_data(tmp_path)
    cli("generate-dataset", "--templates", str(templates), "--out", "golden.jsonl", cwd=tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "golden.jsonl").read_text().splitlines()]
    rows[0]["tool_results"] = {"get_ticket": {"items": ["A-1", "A-2"]}}
    (tmp_path / "scenarios.jsonl").write_text(json.dumps(rows[0]) + "\n")
    (tmp_path / "tools.json").write_text(json.dumps([
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in ("get_ticket", "complete_action_item", "close_ticket")]))
    with ScriptedOpenAIServer(user_agent) as user, ScriptedOpenAIServer(chatbot) as target:
        outputs = {}
        for model in ("helpdesk", "helpdesk-sloppy"):
            done = cli("simulate", "--scenarios", "scenarios.jsonl", "--tools", "tools.json",
                       "--user-base-url", user.base_url, "--user-model", "user",
                       "--target-base-url", target.base_url, "--target-model", model,
                       "--out", f"{model}.jsonl", cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            outputs[model] = json.loads((tmp_path / f"{model}.jsonl").read_text())
    good, sloppy = outputs["helpdesk"], outputs["helpdesk-sloppy"]
    assert good["question"] == "Hi! Close ticket T-1 (Printer jam) after its 2 action items."
    assert [(c["name"], c["arguments"]) for c in good["tool_calls"]] == [
        ("get_ticket", {"ticket_id": "T-1"}), ("complete_action_item", {"item_id": "A-1"}),
        ("complete_action_item", {"item_id": "A-2"}), ("close_ticket", {"ticket_id": "T-1"})]
    assert good["stopped"] == "completed"
    assert good["tool_calls"][0]["result"] == {"items": ["A-1", "A-2"]}
    assert sloppy["stopped"] == "user_done" and sloppy["answer"] == "Ticket T-1 is closed."
    assert [c["name"] for c in sloppy["tool_calls"]] == ["get_ticket", "close_ticket"]

    evaluated = cli("eval", "--dataset", "helpdesk-sloppy.jsonl", "--out", "report",
                    cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads((tmp_path / "report/report.json").read_text())
    assert report["metrics"]["tool_calls.name_recall"] == 0.5
    assert report["metrics"]["tool_calls.name_precision"] == 1.0
