"""`verdicts list` and `verdicts show` as a person reads them: the demo's turns replayed into a
store, listed on an 80-column terminal and a wide one, failed tool calls found with their error,
a turn shown by a prefix of its trace id; and where the commands looked (the store, the
configuration file)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import random
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from monitor.demo import SCENARIOS, emit_turn
from monitor.replay import write_requests

pytestmark = pytest.mark.integration

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CANCEL = next(s for s in SCENARIOS if s.question == "Cancel order 77.")  # its tool failed


class PrefixedIds(RandomIdGenerator):
    """Trace ids a0…, a1…, … then b5…: `a` begins several, `a3` one."""

    def __init__(self) -> None:
        self.turns = 0

    def generate_trace_id(self) -> int:
        self.turns += 1
        first = "a" if self.turns <= 5 else "b"
        return int(f"{first}{self.turns:x}" + f"{self.turns:030x}", 16)


def run(*args: str, cwd: Path, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "monitor", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Each demo turn once, recorded and replayed into a store: (config, question -> trace id)."""
    tmp_path = tmp_path_factory.mktemp("demo")
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "demo-assistant"}),
                              id_generator=PrefixedIds())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    for scenario in SCENARIOS:
        emit_turn(provider, scenario, random.Random(7))
    spans = exporter.get_finished_spans()
    ids = {s.attributes["assistant.question"]: f"{s.context.trace_id:032x}" for s in spans
           if s.parent is None}
    write_requests(tmp_path / "demo.pb", [encode_spans(spans).SerializeToString()])
    config = tmp_path / "monitor.yaml"
    config.write_text(f"store: {{path: '{tmp_path / 'store.db'}'}}\n")
    done = run("replay", str(tmp_path / "demo.pb"), "--config", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"judged {len(SCENARIOS)}" in done.stdout
    return config, ids


def on_terminal(args: list[str], columns: int, cwd: Path) -> str:
    """What the command printed on a terminal `columns` wide (escape sequences removed)."""
    master, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "monitor", *args], stdin=child,
                               stdout=child, stderr=child, cwd=cwd,
                               env={**os.environ, "TERM": "xterm-256color"})
    os.close(child)
    chunks = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the program exited and closed its terminal
            break
        if not data:
            break
        chunks.append(data.decode(errors="replace"))
    os.close(master)
    assert process.wait(timeout=30) == 0, "".join(chunks)
    return ANSI.sub("", "".join(chunks)).replace("\r\n", "\n")


def test_verdicts_list_is_useful_at_80_columns_and_says_what_it_left_out(
        demo: tuple[Path, dict[str, str]]) -> None:
    config, ids = demo
    screen = on_terminal(["verdicts", "list", "--config", str(config)], 80, config.parent)
    lines = screen.rstrip("\n").splitlines()
    assert max(len(line) for line in lines) <= 80, screen
    header = lines[0].split()
    # the verdicts, under short names the legend explains, and the tool calls
    assert {"ctx_rel", "ans_rel", "complete", "grounded"} <= set(header), screen
    assert "tool" in header, screen
    legend = " ".join(" ".join(lines).split())
    for short, metric in (("ctx_rel", "context_relevance"), ("ans_rel", "answer_relevance"),
                          ("grounded", "groundedness")):
        assert f"{short} = {metric}" in legend, screen
    assert "left out to fit 80 columns: state, sampled by, received (UTC)" in legend, screen
    assert "trace ids cut to 12 digits" in legend, screen
    rows = {trace_id: next(line for line in lines if line.startswith(trace_id[:12]))
            for trace_id in ids.values()}  # every turn has its row
    refusal = rows[ids["Can I pay with cryptocurrency?"]]
    assert "no_answer" in refusal, screen
    assert re.search(r"\b0\.\d\d\b", rows[ids["Is there a student discount?"]]), screen
    # a failed call's error wraps in its column, under the row
    assert "cancel_order" in rows[ids[CANCEL.question]], screen
    assert "cancel_order failed: order service timed out" in " ".join(screen.split()), screen

    wide = on_terminal(["verdicts", "list", "--config", str(config)], 250, config.parent)
    assert "left out" not in wide and "context_relevance" in wide.splitlines()[0]
    assert ids[CANCEL.question] in wide and "order service timed out" in wide


def test_failed_tool_calls_are_listed_with_their_error(demo: tuple[Path, dict[str, str]]) -> None:
    config, ids = demo
    listed = run("verdicts", "list", "--failed-tools", "--config", str(config), cwd=config.parent)
    assert listed.returncode == 0, listed.stderr
    failed = [ids[s.question] for s in SCENARIOS if any(error for *_, error in s.tools)]
    assert ids[CANCEL.question] in failed
    assert [t for t in ids.values() if t in listed.stdout] == failed
    assert "cancel_order failed: order service timed out" in listed.stdout
    rows = json.loads(run("verdicts", "list", "--json", "--config", str(config),
                          cwd=config.parent).stdout)
    calls = {r["trace_id"]: r["tool_calls"] for r in rows}
    assert calls[ids[CANCEL.question]] == [{"name": "cancel_order",
                                            "error": "order service timed out"}]
    assert calls[ids["What is the status of order 1042?"]] == [{"name": "lookup_order",
                                                                "error": None}]
    # The turn whose action failed answered: it is not a no-answer (the tool call failed).
    shown = json.loads(run("verdicts", "show", ids[CANCEL.question], "--json", "--config",
                           str(config), cwd=config.parent).stdout)
    completeness = next(v for v in shown["verdicts"] if v["metric"] == "completeness")
    assert completeness["label"] != "no_answer", completeness


def test_verdicts_show_takes_a_unique_prefix_and_says_why_not(
        demo: tuple[Path, dict[str, str]]) -> None:
    config, ids = demo
    third = next(t for t in ids.values() if t.startswith("a3"))
    question = next(q for q, t in ids.items() if t == third)

    def show(given: str) -> subprocess.CompletedProcess[str]:
        return run("verdicts", "show", given, "--config", str(config), cwd=config.parent)

    shown = show("A3")  # any case
    assert shown.returncode == 0, shown.stderr
    assert third in shown.stdout and question in " ".join(shown.stdout.split())
    ambiguous = show("a")
    assert ambiguous.returncode == 1
    assert "trace id prefix a is ambiguous" in ambiguous.stderr and "give more digits" in \
        ambiguous.stderr
    assert sum(t in ambiguous.stderr for t in ids.values() if t.startswith("a")) == 5
    unknown = show("ffff")
    assert unknown.returncode == 1
    assert "no stored turn with trace id ffff or beginning with it" in unknown.stderr
    assert "is not a trace id" in show("order-77").stderr


def test_a_missing_store_is_named_by_its_absolute_path(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_MONITOR_")}
    done = run("verdicts", "list", cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert f"no store at {tmp_path.resolve() / 'assistant-monitor.db'}" in done.stderr
    config = tmp_path / "monitor.yaml"
    config.write_text("store: {path: data/verdicts.db}\n")
    done = run("verdicts", "show", "ab", "--config", str(config), cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert f"no store at {tmp_path.resolve() / 'data' / 'verdicts.db'} (store.path of " \
           f"{config})" in done.stderr


def test_check_config_says_which_file_it_read(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_MONITOR_")}
    config = tmp_path / "monitor.yaml"
    config.write_text("drift: {enabled: false}\n")
    read = run("check-config", "--config", "monitor.yaml", cwd=tmp_path, env=env)
    assert read.returncode == 0, read.stderr
    assert read.stderr.strip() == f"configuration: read {config.resolve()}"
    assert json.loads(read.stdout)["drift"]["enabled"] is False  # stdout stays the JSON

    defaults = run("check-config", cwd=tmp_path, env=env)
    assert "configuration: no file" in defaults.stderr and "built-in defaults" in defaults.stderr
    from_env = run("check-config", cwd=tmp_path, env={
        **env, "ASSISTANT_MONITOR_CONFIG": str(config), "ASSISTANT_MONITOR_LOG_LEVEL": "DEBUG"})
    assert from_env.stderr.strip() == (
        f"configuration: read {config.resolve()} (from ASSISTANT_MONITOR_CONFIG); overridden by "
        "the environment: ASSISTANT_MONITOR_LOG_LEVEL")
