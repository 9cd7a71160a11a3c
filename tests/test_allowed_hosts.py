"""Where LLM judges may be: hosts added to the defaults without losing them, and a host pattern
that cannot be one refused at start-up with its key and value."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from monitor.config import DEFAULT_ALLOWED_HOSTS, load_settings
from monitor.errors import ConfigError


def load(tmp_path: Path, yaml: str) -> object:
    config = tmp_path / "monitor.yaml"
    config.write_text(yaml)
    return load_settings(config)


def endpoint(url: str) -> str:
    return f"      - {{name: judge, base_url: '{url}', model: m}}\n"


@pytest.mark.unit
def test_extra_allowed_hosts_are_added_to_the_defaults(tmp_path: Path) -> None:
    settings = load(tmp_path, "judging:\n  llm:\n    extra_allowed_hosts: [gpu.corp.example]\n"
                              "    endpoints:\n" + endpoint("http://gpu.corp.example:8000/v1"))
    llm = settings.judging.llm  # type: ignore[attr-defined]
    assert llm.allowed_hosts == DEFAULT_ALLOWED_HOSTS
    assert llm.hosts == [*DEFAULT_ALLOWED_HOSTS, "gpu.corp.example"]
    # the defaults still hold beside the extra host
    load(tmp_path, "judging:\n  llm:\n    extra_allowed_hosts: [gpu.corp.example]\n"
                   "    endpoints:\n" + endpoint("http://vllm.judges.svc:8000/v1"))
    # without it the same endpoint is refused, and the message says where to add it
    with pytest.raises(ConfigError, match="Add its host to judging.llm.extra_allowed_hosts"):
        load(tmp_path, "judging:\n  llm:\n    endpoints:\n"
             + endpoint("http://gpu.corp.example:8000/v1"))


@pytest.mark.unit
@pytest.mark.parametrize("pattern", ["localhost", "LLM-Judge.corp.example", "*.svc", "::1",
                                     "10.0.0.0/8", "fc00::/7", "192.168.1.20"])
def test_host_names_suffixes_addresses_and_ranges_are_accepted(tmp_path: Path,
                                                               pattern: str) -> None:
    load(tmp_path, f"judging:\n  llm:\n    extra_allowed_hosts: ['{pattern}']\n"
                   f"evaluation_export:\n  allowed_hosts: ['{pattern}']\n")


@pytest.mark.unit
@pytest.mark.parametrize("pattern", ["...", "", "http://judge.internal", "judge.internal:8000",
                                     "*.", "a..b", "10.0.0.0/33", "judge_1.internal", "-x.svc"])
@pytest.mark.parametrize("key", ["judging.llm.allowed_hosts", "judging.llm.extra_allowed_hosts",
                                 "evaluation_export.allowed_hosts"])
def test_a_pattern_that_cannot_be_a_host_is_refused_with_its_key(tmp_path: Path, key: str,
                                                                 pattern: str) -> None:
    *sections, field = key.split(".")
    yaml = "".join(f"{'  ' * i}{name}:\n" for i, name in enumerate(sections))
    yaml += f"{'  ' * len(sections)}{field}: [localhost, '{pattern}']\n"
    with pytest.raises(ConfigError) as refused:
        load(tmp_path, yaml)
    assert f"{key}: {pattern!r} is not a host name, an IP address, a *.suffix pattern or a " \
           "CIDR range" in str(refused.value)


@pytest.mark.integration
def test_the_readme_placeholder_stops_start_up(tmp_path: Path) -> None:
    """What copying the old README example did: `...` was kept as a host, and the list replaced
    the defaults."""
    config = tmp_path / "monitor.yaml"
    config.write_text('judging:\n  llm:\n    allowed_hosts: [localhost, "*.svc.cluster.local", '
                      '"..."]\n')
    done = subprocess.run([sys.executable, "-m", "monitor", "check-config", "--config",
                           str(config)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "judging.llm.allowed_hosts: '...' is not a host name" in done.stderr
