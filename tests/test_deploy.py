"""Deployment artefacts: the Helm chart renders valid manifests (default and custom values), the
sidecar example validates, and the sidecar starts exactly as the systemd unit and the container
entrypoint would start it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from monitor.config import load_settings
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]
CHART = ROOT / "deploy" / "helm" / "assistant-monitor"
HELM_VERSION = "v3.16.4"
K8S_VERSION = "1.31.0"


@pytest.fixture(scope="session")
def helm() -> str:
    """Helm from the Go module proxy, built once into a cache folder outside the repository."""
    found = shutil.which("helm")
    if found:
        return found
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    bin_dir = base / "assistant-monitor" / f"helm-{HELM_VERSION}"
    binary = bin_dir / "helm"
    if not binary.exists():
        subprocess.run(["go", "install", f"helm.sh/helm/v3/cmd/helm@{HELM_VERSION}"], check=True,
                       timeout=1500, env={**os.environ, "GOBIN": str(bin_dir), "CGO_ENABLED": "0"})
    return str(binary)


def render(helm: str, tmp_path: Path, values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    args = [helm, "template", "demo", str(CHART)]
    if values:
        path = tmp_path / "values.yaml"
        path.write_text(yaml.safe_dump(values))
        args += ["-f", str(path)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def validate(documents: list[dict[str, Any]], tmp_path: Path) -> None:
    for doc in documents:
        if doc["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # CRDs: checked below, not in the Kubernetes schemas
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    for doc in documents:
        if doc["kind"] == "PrometheusRule":
            rules = tmp_path / "prometheusrule.yml"
            rules.write_text(yaml.safe_dump(doc["spec"]))
            done = subprocess.run(["promtool", "check", "rules", str(rules)], capture_output=True,
                                  text=True)
            assert done.returncode == 0, done.stdout + done.stderr


def by_kind(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in documents}


@pytest.mark.integration  # Helm, built with go
def test_helm_lint(helm: str) -> None:
    done = subprocess.run([helm, "lint", "--strict", str(CHART)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.integration  # Helm, promtool
def test_default_values_render_a_valid_deployment(helm: str, tmp_path: Path) -> None:
    documents = render(helm, tmp_path)
    validate(documents, tmp_path)
    kinds = by_kind(documents)
    assert set(kinds) == {"ConfigMap", "Secret", "Deployment", "PersistentVolumeClaim", "Service",
                          "NetworkPolicy"}
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["resources"]["limits"]["memory"] == "2Gi"
    assert {v["name"] for v in pod["volumes"]} == {"config", "store", "tmp"}
    config = tmp_path / "config.yaml"
    config.write_text(kinds["ConfigMap"]["data"]["config.yaml"])
    assert load_settings(config).store.path == Path("/var/lib/assistant-monitor/store.db")


@pytest.mark.integration  # Helm, promtool
def test_custom_values_render_a_kafka_statefulset_with_monitoring(helm: str,
                                                                  tmp_path: Path) -> None:
    documents = render(helm, tmp_path, {
        "mode": "statefulset", "replicas": 3,
        "kafka": {"enabled": True, "brokers": ["kafka-0.kafka:9092"], "topic": "otlp_spans"},
        "judge": {"endpoints": [{"name": "llama", "base_url": "http://10.20.1.5:8000/v1",
                                 "model": "llama-3-70b"}], "egressCIDR": "10.20.1.5/32"},
        "secrets": {"receiverToken": "t0ken", "judgeApiKey": "k3y",
                    "storeUrl": "postgresql://am:pw@pg:5432/verdicts"},
        "serviceMonitor": {"enabled": True}, "prometheusRule": {"enabled": True}})
    validate(documents, tmp_path)
    kinds = by_kind(documents)
    assert "Deployment" not in kinds and "PersistentVolumeClaim" not in kinds
    stateful = kinds["StatefulSet"]["spec"]
    assert stateful["replicas"] == 3
    assert stateful["volumeClaimTemplates"][0]["metadata"]["name"] == "store"
    env = {e["name"] for e in stateful["template"]["spec"]["containers"][0]["env"]}
    assert {"ASSISTANT_MONITOR_JUDGING__LLM__ENDPOINTS__0__API_KEY",
            "ASSISTANT_MONITOR_STORE__URL"} <= env  # the fleet's store, from the Secret
    config = tmp_path / "config.yaml"
    config.write_text(kinds["ConfigMap"]["data"]["config.yaml"])
    settings = load_settings(config)  # the rendered configuration passes the sidecar's own checks
    assert settings.kafka.enabled and settings.kafka.brokers == ["kafka-0.kafka:9092"]
    assert settings.judging.llm.endpoints[0].base_url == "http://10.20.1.5:8000/v1"
    egress = kinds["NetworkPolicy"]["spec"]["egress"]
    blocks = [to["ipBlock"]["cidr"] for rule in egress for to in rule.get("to", [])]
    assert blocks == ["10.20.1.5/32"]  # the judge endpoint is the only address trace content reaches
    assert kinds["ServiceMonitor"]["spec"]["endpoints"][0]["port"] == "metrics"
    assert kinds["Secret"]["stringData"] == {"receiver-token": "t0ken", "judge-api-key": "k3y",
                                             "store-url": "postgresql://am:pw@pg:5432/verdicts"}


@pytest.mark.unit
def test_chart_rules_are_the_shipped_rules() -> None:
    assert (CHART / "files/rules.yml").read_text() == (ROOT / "deploy/prometheus/rules.yml").read_text()


@pytest.mark.unit
def test_sidecar_example_validates() -> None:
    for doc in yaml.safe_load_all((ROOT / "deploy/kubernetes/sidecar.yaml").read_text()):
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


@pytest.mark.unit
def test_dockerfile_is_multi_stage_non_root_and_healthchecked() -> None:
    text = (ROOT / "deploy/docker/Dockerfile").read_text()
    stages = re.split(r"^FROM ", text, flags=re.MULTILINE)[1:]
    assert len(stages) == 2
    final = stages[-1]
    assert re.search(r"^USER 10001$", final, re.MULTILINE)
    assert "HEALTHCHECK" in final and "/healthz" in final
    assert not re.search(r"apt-get|gcc|build-essential|pip install", final)  # no build tools


def _run_as(command: list[str], env: dict[str, str], tmp_path: Path) -> None:
    """Start the sidecar with this command and environment, send a turn, read the metrics."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from tests import traffic

    http, admin = env["ASSISTANT_MONITOR_RECEIVERS__HTTP__ENDPOINT"], \
        env["ASSISTANT_MONITOR_ADMIN__ENDPOINT"]
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            try:
                urllib.request.urlopen(f"http://{admin}/readyz", timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        provider = TracerProvider(resource=Resource.create({"service.name": "vm-bot"}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=f"http://{http}/v1/traces")))
        traffic.send(provider, traffic.GROUNDED[0])
        provider.shutdown()
        while True:
            text = urllib.request.urlopen(f"http://{admin}/metrics", timeout=5).read().decode()
            if 'assistant_turns_judged_total{judge="local",route="support",service="vm-bot"} 1.0' \
                    in text:
                break
            assert time.monotonic() < deadline, "the turn was never judged"
            time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(timeout=60)
    assert process.returncode == 0


@pytest.mark.integration
def test_sidecar_starts_as_the_systemd_unit_starts_it(tmp_path: Path) -> None:
    unit = (ROOT / "deploy/systemd/assistant-monitor.service").read_text()
    exec_start = re.search(r"^ExecStart=(.*)$", unit, re.MULTILINE).group(1).split()  # type: ignore[union-attr]
    assert exec_start == ["/opt/assistant-monitor/bin/assistant-monitor", "run"]
    env_file = ROOT / "deploy/systemd/assistant-monitor.env"
    env = {k: v for k, v in (line.split("=", 1) for line in env_file.read_text().splitlines()
                             if line and not line.startswith("#"))}
    # Same variables; only addresses and the state directory differ on a test machine.
    env |= {"ASSISTANT_MONITOR_STORE__PATH": str(tmp_path / "store.db"),
            "ASSISTANT_MONITOR_RECEIVERS__GRPC__ENDPOINT": f"127.0.0.1:{free_port()}",
            "ASSISTANT_MONITOR_RECEIVERS__HTTP__ENDPOINT": f"127.0.0.1:{free_port()}",
            "ASSISTANT_MONITOR_ADMIN__ENDPOINT": f"127.0.0.1:{free_port()}"}
    binary = str(Path(sys.executable).parent / "assistant-monitor")  # /opt/... on a VM
    _run_as([binary, *exec_start[1:]], {"PATH": os.environ["PATH"], **env}, tmp_path)


@pytest.mark.integration
def test_sidecar_starts_as_the_container_entrypoint_starts_it(tmp_path: Path) -> None:
    dockerfile = (ROOT / "deploy/docker/Dockerfile").read_text()
    entrypoint = yaml.safe_load(re.search(r"^ENTRYPOINT (.*)$", dockerfile, re.MULTILINE).group(1))  # type: ignore[union-attr]
    cmd = yaml.safe_load(re.search(r"^CMD (.*)$", dockerfile, re.MULTILINE).group(1))  # type: ignore[union-attr]
    assert entrypoint + cmd == ["assistant-monitor", "run"]
    image_config = yaml.safe_load((ROOT / "deploy/docker/config.yaml").read_text())
    config = tmp_path / "config.yaml"  # the image's file, at its place in the test's folder
    config.write_text(yaml.safe_dump(image_config))
    # The image's ENV, with addresses on loopback for the test (the image binds 0.0.0.0).
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "ASSISTANT_MONITOR_CONFIG": str(config), "PYTHONUNBUFFERED": "1",
           "ASSISTANT_MONITOR_STORE__PATH": str(tmp_path / "store.db"),
           "ASSISTANT_MONITOR_RECEIVERS__GRPC__ENDPOINT": f"127.0.0.1:{free_port()}",
           "ASSISTANT_MONITOR_RECEIVERS__HTTP__ENDPOINT": f"127.0.0.1:{free_port()}",
           "ASSISTANT_MONITOR_ADMIN__ENDPOINT": f"127.0.0.1:{free_port()}"}
    _run_as(entrypoint + cmd, env, tmp_path)
