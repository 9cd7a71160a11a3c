"""The code stays clean: ruff (pyflakes, pycodestyle, isort, bugbear, pyupgrade) over the tree,
the stages' import layering (import-linter), mypy's types (strict over the core), rustfmt and
clippy over the compiled core, and its Rust unit tests."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "monitor", "exporters", "tests",
                           "bench"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_stage_imports_a_later_stage() -> None:
    """The import contracts of pyproject.toml ([tool.importlinter]): stages are layered in
    pipeline order and only composition code wires them."""
    done = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


def test_the_compiled_core_is_formatted_and_clippy_clean() -> None:
    """native/: rustfmt (native/rustfmt.toml) and clippy with every warning an error."""
    for command in (["cargo", "fmt", "--check"],
                    ["cargo", "clippy", "--all-targets", "--", "-D", "warnings"],
                    ["cargo", "clippy", "--all-targets", "--features", "testing", "--", "-D",
                     "warnings"]):
        done = subprocess.run(command, cwd=ROOT / "native", capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}{done.stderr}"


def test_mypy_is_clean() -> None:
    """[tool.mypy] of pyproject.toml: strict over monitor/, less the modules it excludes."""
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compiled_cores_rust_unit_tests_pass() -> None:
    """native/'s `#[cfg(test)]` tests. Without the extension-module feature the test program
    links libpython: this interpreter's, found where it lies."""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    env = {**os.environ, "PYO3_PYTHON": sys.executable,
           "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [libdir, os.environ.get("LD_LIBRARY_PATH")]))}
    done = subprocess.run(["cargo", "test", "--no-default-features"], cwd=ROOT / "native", env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 failed" in done.stdout and "test result: ok" in done.stdout
