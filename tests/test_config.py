"""Configuration: file + environment, every bad key named, before anything binds a port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from monitor.config import load_settings
from monitor.errors import ConfigError


@pytest.mark.unit
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


@pytest.mark.unit
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


@pytest.mark.unit
def test_secrets_are_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSISTANT_MONITOR_RECEIVERS__BEARER_TOKEN", "hunter2")
    monkeypatch.setenv("ASSISTANT_MONITOR_RECEIVERS__TLS__CERT_FILE", "/nonexistent.pem")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "cert_file and key_file go together" in str(err.value)
    assert "hunter2" not in str(err.value)


@pytest.mark.integration
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


@pytest.mark.integration
def test_a_list_in_the_environment_that_is_not_json_is_named(tmp_path: Path) -> None:
    """The same clear message and exit status 2 as every other configuration error."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_MONITOR_")}
    env["ASSISTANT_MONITOR_SAMPLING__ALWAYS_KEEP"] = "[negative_feedbak]"  # YAML, not JSON
    done = subprocess.run([sys.executable, "-m", "monitor", "check-config"], capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("assistant-monitor: invalid configuration:")
    assert "environment ASSISTANT_MONITOR_SAMPLING__ALWAYS_KEEP: not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr

    env["ASSISTANT_MONITOR_SAMPLING__ALWAYS_KEEP"] = '["negative_feedbak"]'  # JSON, bad value
    done = subprocess.run([sys.executable, "-m", "monitor", "run"], capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "sampling.always_keep.0: Input should be 'negative_feedback'" in done.stderr


@pytest.mark.integration
def test_demo_without_its_receiver_is_a_configuration_error(tmp_path: Path) -> None:
    config = tmp_path / "monitor.yaml"
    config.write_text(f"receivers: {{http: {{enabled: false}}}}\nadmin: {{endpoint: '127.0.0.1:0'}}\n"
                      f"store: {{path: '{tmp_path / 'store.db'}'}}\n")
    done = subprocess.run([sys.executable, "-m", "monitor", "run", "--demo", "--config",
                           str(config)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--demo needs the OTLP/HTTP receiver" in done.stderr


@pytest.mark.unit
def test_a_missing_claim_support_model_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSISTANT_MONITOR_JUDGING__LOCAL__CLAIM_SUPPORT_MODEL", "/nonexistent.json")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert err.value.problems == ["judging.local.claim_support_model: no such file: "
                                  "/nonexistent.json"]


@pytest.mark.integration
def test_a_port_already_taken_is_a_configuration_error(tmp_path: Path) -> None:
    """Say, a second `run --demo`: the port is named, exit 2, no traceback, for each server."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for busy in ("admin", "grpc"):
            endpoints = {"admin": "127.0.0.1:0", "grpc": "127.0.0.1:0", busy: f"127.0.0.1:{port}"}
            config = tmp_path / "monitor.yaml"
            config.write_text(f"admin: {{endpoint: '{endpoints['admin']}'}}\n"
                              f"receivers: {{grpc: {{endpoint: '{endpoints['grpc']}'}}, "
                              "http: {endpoint: '127.0.0.1:0'}}\n"
                              f"store: {{path: '{tmp_path / 'store.db'}'}}\n")
            done = subprocess.run([sys.executable, "-m", "monitor", "run", "--config",
                                   str(config)], capture_output=True, text=True, timeout=120)
            assert done.returncode == 2, done.stderr
            assert "cannot listen: " in done.stderr and str(port) in done.stderr
            assert "Is another assistant-monitor running?" in done.stderr
            assert "Traceback" not in done.stderr
