"""The code stays clean: ruff (pyflakes, pycodestyle, isort, bugbear, pyupgrade) over the tree,
the stages' import layering (import-linter), and rustfmt and clippy over the compiled core."""

import subprocess
import sys
from pathlib import Path

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
                    ["cargo", "clippy", "--all-targets", "--", "-D", "warnings"]):
        done = subprocess.run(command, cwd=ROOT / "native", capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}{done.stderr}"
