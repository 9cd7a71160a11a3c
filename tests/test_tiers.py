"""Every test has exactly one tier (unit, integration, e2e): tests/conftest.py refuses a collection
where a test has none or two, before `-m` deselects anything, so a new test file cannot be
forgotten by a lane. Checked here on a throwaway suite with this conftest and these settings."""

from __future__ import annotations

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


def collect(tmp_path: Path, files: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`pytest --collect-only` over a suite of `files` beside a copy of tests/conftest.py, under
    this project's pytest settings (--strict-markers, the registered tiers)."""
    tests = tmp_path / "tests"
    tests.mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", tests / "conftest.py")
    for name, text in files.items():
        (tests / name).write_text(text)
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    markers = "".join(f"\n    {m}" for m in ini["markers"])
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\naddopts = {ini['addopts']}\nmarkers ={markers}\n")
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)


def test_a_test_without_a_tier_or_with_two_stops_the_run_even_when_deselected(
        tmp_path: Path) -> None:
    done = collect(tmp_path, {"test_a.py": TIERED, "test_new.py": UNTIERED}, "-m", "unit")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "2 test(s) without exactly one tier" in done.stderr
    assert "tests/test_new.py::test_forgotten: no tier" in done.stderr
    assert "tests/test_new.py::test_twice: integration and unit" in done.stderr


def test_the_suites_tiers_are_the_registered_markers() -> None:
    from tests.conftest import TIERS

    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert [m.split(":")[0] for m in ini["markers"]] == list(TIERS)
