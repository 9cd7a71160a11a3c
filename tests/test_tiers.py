"""Every test has exactly one tier (unit, integration, e2e): tests/conftest.py refuses a collection
where a test has none or two, before `-m` deselects anything, so a new test file cannot be
forgotten by a lane. And a passing run leaves no files behind. Checked here on throwaway suites
with this conftest and these settings."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]

TIERED = """
import pytest

pytestmark = pytest.mark.unit


def test_unit():
    pass
"""

UNTIERED = """
import pytest


def test_forgotten():
    pass


@pytest.mark.unit
@pytest.mark.integration
def test_twice():
    pass
"""


def pytest_over(tmp_path: Path, files: dict[str, str], *args: str,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """pytest over a suite of `files` beside a copy of tests/conftest.py, under this project's
    pytest settings (--strict-markers, the registered tiers, the temporary files' retention)."""
    tests = tmp_path / "tests"
    tests.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "conftest.py", tests / "conftest.py")
    for name, text in files.items():
        (tests / name).write_text(text)
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    lines = ["[pytest]"]
    for key, value in ini.items():
        if key != "testpaths":
            lines.append(f"{key} =" + "".join(f"\n    {v}" for v in value)
                         if isinstance(value, list) else f"{key} = {value}")
    (tmp_path / "pytest.ini").write_text("\n".join(lines) + "\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)


def test_a_test_without_a_tier_or_with_two_stops_the_run_even_when_deselected(
        tmp_path: Path) -> None:
    done = pytest_over(tmp_path, {"test_a.py": TIERED, "test_new.py": UNTIERED},
                       "--collect-only", "-m", "unit")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "2 test(s) without exactly one tier" in done.stderr
    assert "tests/test_new.py::test_forgotten: no tier" in done.stderr
    assert "tests/test_new.py::test_twice: integration and unit" in done.stderr


def test_the_suites_tiers_are_the_registered_markers() -> None:
    from tests.conftest import TIERS

    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert [m.split(":")[0] for m in ini["markers"]] == list(TIERS)


STORING = """
import pytest
from pathlib import Path

from conftest import test_settings

pytestmark = pytest.mark.unit


def test_a_store():
    Path(test_settings().store.path).write_text("a turn")
"""


@pytest.mark.parametrize("outcome", ["passed", "failed"])
def test_a_passing_run_leaves_no_store_behind_and_a_failing_one_keeps_them(
        tmp_path: Path, outcome: str) -> None:
    # Built from CI's failure: the suite's stores piled up in /tmp (2,113 of them) until a build
    # ran out of disk. They now live in pytest's temporary tree, removed after a passing run.
    system_temp = tmp_path / "tmp"
    system_temp.mkdir()
    files = {"test_store.py": STORING}
    if outcome == "failed":
        files["test_failing.py"] = "import pytest\npytestmark = pytest.mark.unit\n\n" \
                                   "def test_fails():\n    assert False\n"
    done = pytest_over(tmp_path / "suite", files, env={**os.environ, "TMPDIR": str(system_temp)})
    assert f"1 {outcome}" in done.stdout, done.stdout + done.stderr
    stores = list(system_temp.rglob("store.db"))
    assert len(stores) == (0 if outcome == "passed" else 1), stores
