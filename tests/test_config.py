"""Configuration: file + environment, every bad key named, before anything binds a port."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from monitor.config import load_settings
from monitor.errors import ConfigError


def test_file_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "monitor.yaml"
    config.write_text("tenant_id: acme\nreceivers:\n  grpc:\n    endpoint: 127.0.0.1:14317\n"
                      "assembly:\n  decision_wait_s: 12\n")
    monkeypatch.setenv("ASSISTANT_MONITOR_ASSEMBLY__DECISION_WAIT_S", "20")
    monkeypatch.setenv("OTEL_LOG_LEVEL", "debug")
    settings = load_settings(config)
    assert settings.tenant_id == "acme"
    assert settings.receivers.grpc.endpoint == "127.0.0.1:14317"
    assert settings.assembly.decision_wait_s == 20  # the environment wins over the file
    assert settings.log_level == "DEBUG"


def test_every_problem_is_named_with_its_key(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "monitor.yaml"
    config.write_text("receivers:\n  grpc: {endpoint: localhost}\n  htttp: {}\n"
                      "assembly: {decision_wait_s: -1}\n")
    monkeypatch.setenv("ASSISTANT_MONITOR_ADMIN__RECENT_TURNS", "many")
    with pytest.raises(ConfigError) as err:
        load_settings(config)
    assert err.value.problems == [
        "receivers.grpc.endpoint: expected host:port, got 'localhost'",
        "receivers.htttp: unknown key",
        "assembly.decision_wait_s: Input should be greater than 0 (got -1)",
        "admin.recent_turns: Input should be a valid integer, unable to parse string as an "
        "integer (got 'many')",
    ]


def test_secrets_are_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSISTANT_MONITOR_RECEIVERS__BEARER_TOKEN", "hunter2")
    monkeypatch.setenv("ASSISTANT_MONITOR_RECEIVERS__TLS__CERT_FILE", "/nonexistent.pem")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "cert_file and key_file go together" in str(err.value)
    assert "hunter2" not in str(err.value)


def test_bad_config_stops_startup_before_binding(tmp_path: Path) -> None:
    config = tmp_path / "monitor.yaml"
    config.write_text("labels: {max_values: 0}\n")
    done = subprocess.run([sys.executable, "-m", "monitor", "run", "--config", str(config)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "labels.max_values: Input should be greater than 0" in done.stderr
    missing = subprocess.run([sys.executable, "-m", "monitor", "check-config", "--config",
                              str(tmp_path / "nope.yaml")], capture_output=True, text=True)
    assert missing.returncode == 2 and "nope.yaml: No such file" in missing.stderr
