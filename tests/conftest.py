"""Shared fixtures: a real sidecar on ephemeral loopback ports, in a background event loop; and
the test tiers, one for every test.

Kept light: the application is imported by the fixtures and helpers that use it, not here, so
that collecting a lane (`pytest -m unit`) pays only for the test modules it imports."""

from __future__ import annotations

import asyncio
import faulthandler
import json
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pytest

if TYPE_CHECKING:
    from monitor.app import Sidecar
    from monitor.config import Settings
    from monitor.model import AssistantTurn, TurnConsumer

# The tiers (pyproject.toml registers them; docs/testing.md says what each may need).
TIERS = ("unit", "integration", "e2e")


def tier_problems(items: Sequence[pytest.Item]) -> list[str]:
    """Each collected test that has no tier, or more than one, with what it has."""
    problems = []
    for item in items:
        tiers = sorted({mark.name for mark in item.iter_markers() if mark.name in TIERS})
        if len(tiers) != 1:
            problems.append(f"{item.nodeid}: {' and '.join(tiers) or 'no tier'}")
    return problems


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: every collected test is checked
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    problems = tier_problems(items)
    if problems:
        listed = "\n  ".join(problems[:20]) + ("\n  ..." if len(problems) > 20 else "")
        raise pytest.UsageError(
            f"{len(problems)} test(s) without exactly one tier ({', '.join(TIERS)}): give the "
            "module a `pytestmark = pytest.mark.<tier>`, or each test a `@pytest.mark.<tier>` "
            f"(docs/testing.md):\n  {listed}")


def pytest_sessionstart(session: pytest.Session) -> None:
    from monitor import _native

    if not hasattr(_native, "testing"):
        raise pytest.UsageError(
            "monitor._native was built without its test hooks: install with "
            "MATURIN_PEP517_ARGS='--features testing' pip install -e . (as .ci/run does)")


class RunningSidecar:
    """A started `Sidecar` plus helpers to read what it assembled and counted."""

    def __init__(self, settings: Settings, downstream: TurnConsumer | None = None) -> None:
        from prometheus_client import CollectorRegistry

        self.downstream = downstream
        self.registry = CollectorRegistry()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.sidecar: Sidecar = self.call(self._make(settings))
        self.call(self.sidecar.start())

    async def _make(self, settings: Settings) -> Sidecar:
        from monitor.app import Sidecar

        return Sidecar(settings, registry=self.registry, downstream=self.downstream)

    def call(self, coro: Any, timeout_s: float = 30.0) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout=timeout_s)
        except TimeoutError:
            _report_stuck(self._loop)
            raise

    @property
    def grpc_endpoint(self) -> str:
        return f"127.0.0.1:{self.sidecar.grpc.port}"  # type: ignore[union-attr]

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.sidecar.http.port}"  # type: ignore[union-attr]

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.sidecar.admin.port}"

    def turns(self) -> list[AssistantTurn]:
        """The last turns, as /api/turns shows them (read back from their JSON)."""
        from monitor.model import AssistantTurn

        return [AssistantTurn.model_validate_json(t.json) for t in self.sidecar.recent.turns]

    def wait_for_turns(self, count: int, timeout_s: float = 15.0) -> list[AssistantTurn]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            turns = self.turns()
            if len(turns) >= count:
                return turns
            time.sleep(0.05)
        raise AssertionError(f"expected {count} turns within {timeout_s}s, got {len(self.turns())}")

    def metric(self, name: str, **labels: str) -> float:
        return self.registry.get_sample_value(name, labels) or 0.0

    def get_json(self, path: str, headers: dict[str, str] | None = None) -> Any:
        request = urllib.request.Request(self.admin_url + path, headers=headers or {})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def openmetrics(self) -> str:
        """/metrics as Prometheus scrapes it with exemplars (OpenMetrics)."""
        request = urllib.request.Request(f"{self.admin_url}/metrics",
                                         headers={"Accept": "application/openmetrics-text"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read().decode()

    def stop(self) -> None:
        # A stop is a sequence of steps, each bounded (a Kafka member's hand-back up to 25 s,
        # the turn queue's drain 10 s, the judges 10 s): up to about 45 s when every step runs
        # long, as during a group rebalance on a busy machine.
        self.call(self.sidecar.stop(), timeout_s=60.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def _report_stuck(loop: asyncio.AbstractEventLoop) -> None:
    """Where a call that timed out is waiting, in the failure's captured stderr: every thread's
    stack, and each task still pending on the sidecar's loop with the await it is in."""
    faulthandler.dump_traceback(all_threads=True)
    for task in asyncio.all_tasks(loop):
        print(f"pending: {task!r}", file=sys.stderr)
        task.print_stack(file=sys.stderr)


# Where test_settings puts its stores: inside pytest's temporary tree, which pytest removes after
# a passing run (tmp_path_retention_policy). Stores made with mkdtemp in the system's /tmp were
# never removed and filled CI's disk (2,113 of them when a build failed with ENOSPC).
_stores_folder: Path | None = None


@pytest.fixture(scope="session", autouse=True)
def _stores_in_pytests_tree(tmp_path_factory: pytest.TempPathFactory) -> None:
    global _stores_folder
    _stores_folder = tmp_path_factory.mktemp("stores")


def test_settings(**overrides: Any) -> Settings:
    """Ephemeral ports on loopback and short waits, so tests run fast."""
    from monitor.config import Settings

    assert _stores_folder is not None, "test_settings is for tests (the session fixture sets its folder)"

    data: dict[str, Any] = {
        "receivers": {"grpc": {"endpoint": "127.0.0.1:0"}, "http": {"endpoint": "127.0.0.1:0"}},
        "admin": {"endpoint": "127.0.0.1:0"},
        "assembly": {"root_grace_s": 0.3, "decision_wait_s": 5.0},
        "store": {"path": str(Path(tempfile.mkdtemp(dir=_stores_folder)) / "store.db")},
        # No canary traffic to a test's scripted judge unless the test asks for it. The judge at
        # normal priority: at the default (idle, SCHED_IDLE) it gets no CPU while other processes
        # keep the cores busy, and a test waiting on its verdicts would stall.
        "judging": {"canary": {"enabled": False}, "priority": "normal"},
    }
    for key, value in overrides.items():
        section = data.setdefault(key, {})
        if isinstance(value, dict) and isinstance(section, dict):
            section.update(value)
        else:
            data[key] = value
    return Settings(**data)


test_settings.__test__ = False  # type: ignore[attr-defined]  # not a test, despite its name


def scripted_llm_settings(store: Path, base_url: str, circuit_breaker: dict[str, Any],
                          **judging: Any) -> Settings:
    """Settings judging through one LLM endpoint (a scripted server) with no retries and one
    attempt a turn, so a test sees each failure as it happens; the store at `store`."""
    return test_settings(store={"path": str(store)}, judging={
        "max_attempts": 1, **judging, "llm": {
            "endpoints": [{"name": "tenant-llm", "base_url": base_url, "model": "judge-model",
                           "max_retries": 0}],
            "circuit_breaker": circuit_breaker}})


class Stoppable(Protocol):
    def stop(self) -> None: ...


S = TypeVar("S", bound=Stoppable)


def stopped_at_the_end(make: Callable[..., S]) -> Iterator[Callable[..., S]]:
    """A fixture's body: yields `make`, and stops what it made once the test is over."""
    started: list[S] = []

    def start(*args: Any, **kwargs: Any) -> S:
        started.append(make(*args, **kwargs))
        return started[-1]

    yield start
    for item in started:
        item.stop()


@pytest.fixture
def start_sidecar() -> Iterator[Callable[..., RunningSidecar]]:
    def make(downstream: TurnConsumer | None = None, **overrides: Any) -> RunningSidecar:
        return RunningSidecar(test_settings(**overrides), downstream)

    yield from stopped_at_the_end(make)


@pytest.fixture
def sidecar(start_sidecar: Callable[..., RunningSidecar]) -> RunningSidecar:
    return start_sidecar()


@pytest.fixture(scope="session")
def kafka() -> Iterator[Any]:
    """One real Kafka broker for the session's Kafka tests (tests/kafka_broker.py)."""
    from tests.kafka_broker import KafkaBroker

    broker = KafkaBroker()
    yield broker
    broker.stop()


_ports_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback port nothing listens on, never the same one twice in a run: the kernel may hand
    a just-closed port out again, and a config with two equal ports fails to start."""
    import socket

    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port not in _ports_handed_out:
            _ports_handed_out.add(port)
            return port


class SidecarProcess:
    """`assistant-monitor run` as its own process, as an operator runs it."""

    def __init__(self, tmp_path: Path, extra_yaml: str = "", args: tuple[str, ...] = ()) -> None:
        import subprocess
        import sys

        tmp_path.mkdir(parents=True, exist_ok=True)
        self.ports = {name: free_port() for name in ("grpc", "http", "admin")}
        self.store_path = tmp_path / "store.db"
        self.config = tmp_path / "monitor.yaml"
        self.config.write_text(
            f"receivers:\n  grpc: {{endpoint: '127.0.0.1:{self.ports['grpc']}'}}\n"
            f"  http: {{endpoint: '127.0.0.1:{self.ports['http']}'}}\n"
            f"admin: {{endpoint: '127.0.0.1:{self.ports['admin']}'}}\n"
            f"store: {{path: '{self.store_path}'}}\n"
            "assembly: {root_grace_s: 0.2}\n" + extra_yaml)
        self.log = tmp_path / "sidecar.log"
        self._log_file = self.log.open("a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "monitor", "run", "--config", str(self.config), *args],
            stdout=self._log_file, stderr=subprocess.STDOUT)
        self.wait_ready()

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['admin']}"

    @property
    def grpc_endpoint(self) -> str:
        return f"127.0.0.1:{self.ports['grpc']}"

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            try:
                urllib.request.urlopen(f"{self.admin_url}/readyz", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("sidecar did not become ready")

    def scrape(self, accept: str = "") -> str:
        request = urllib.request.Request(f"{self.admin_url}/metrics", headers={"Accept": accept})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read().decode()

    def stop(self) -> int:
        import signal

        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=60)
        self._log_file.close()
        return code

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no cleanup at all
        self.process.wait(timeout=30)
        self._log_file.close()


def link_model_files(card: dict[str, Any], folder: Path) -> None:
    """Links in `folder` to the shipped model files a claim-support `card` names (its model, its
    second opinion's and their tokenizers), so that an edited card can be written beside them."""
    from monitor.judges.claim_support import MODELS

    entries = [card, *([card["second_opinion"]] if "second_opinion" in card else [])]
    for name in {entry[key] for entry in entries for key in ("file", "tokenizer")}:
        (folder / name).symlink_to(MODELS / name)
