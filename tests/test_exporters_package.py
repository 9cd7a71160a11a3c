"""`exporters/` is a light distribution of its own: what an assistant installs pulls OpenTelemetry
only (aiokafka only with the `kafka` extra), and its modules import nothing else."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED_IMPORTS = {"opentelemetry", "google", "exporters", "aiokafka"}  # google: protobuf, via OTLP


@pytest.mark.integration  # pip builds the wheel (its build backend from PyPI)
def test_the_wheel_depends_on_opentelemetry_only(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                           "--wheel-dir", str(tmp_path), str(ROOT / "exporters")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("assistant_monitor_exporters-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        requires = Parser().parsestr(archive.read(metadata).decode()).get_all("Requires-Dist")
    runtime = {r.split(">")[0].split("=")[0].strip() for r in requires if "extra ==" not in r}
    extras = {r.split(">")[0].strip() for r in requires if "extra ==" in r}
    assert runtime == {"opentelemetry-api", "opentelemetry-sdk",
                       "opentelemetry-exporter-otlp-proto-common"}
    assert extras == {"aiokafka"}
    modules = sorted(n for n in names if n.startswith("exporters/"))
    assert modules == ["exporters/__init__.py", "exporters/attributes.py", "exporters/kafka.py",
                       "exporters/record.py"]


@pytest.mark.unit
def test_exporters_import_only_the_standard_library_and_opentelemetry() -> None:
    for path in sorted((ROOT / "exporters").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots = {node.module.split(".")[0]}
            else:
                continue
            foreign = roots - ALLOWED_IMPORTS - sys.stdlib_module_names - {"__future__"}
            assert not foreign, f"{path.name} imports {foreign}"
