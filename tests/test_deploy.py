"""Deployment artefacts: the Helm chart renders valid manifests (default and custom values), the
sidecar example validates, the sidecar starts exactly as the systemd unit starts it, and the image
is built from the wheelhouse and serves a judged turn as its non-root user."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from monitor.config import load_settings
from tests.conftest import free_port
from tests.waiting import TIMEOUT_S

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
def test_dockerfile_installs_wheels_non_root_and_healthchecked() -> None:
    text = (ROOT / "deploy/docker/Dockerfile").read_text()
    assert len(re.findall(r"^FROM ", text, flags=re.MULTILINE)) == 1
    assert re.search(r"^USER 10001$", text, re.MULTILINE)
    assert "HEALTHCHECK" in text and "/healthz" in text
    # From the wheelhouse only: no compiler, no toolchain, no package index.
    assert "--no-index" in text and "--find-links /wheels" in text
    assert not re.search(r"apt-get|gcc|cargo|rustup|build-essential", text)


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:  # "pid (comm) state ppid ...": comm may hold spaces
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        found += (kids := children.get(todo.pop(), []))
        todo += kids
    return found


def _run_as(command: list[str], env: dict[str, str], tmp_path: Path,
            sidecar: Callable[[subprocess.Popen[str]], int] = lambda process: process.pid) -> int:
    """Start the sidecar with this command and environment, send a turn, read the metrics, stop
    the sidecar with SIGTERM (`sidecar` finds its process) and return the uid it ran as."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from tests import traffic

    http, admin = env["ASSISTANT_MONITOR_RECEIVERS__HTTP__ENDPOINT"], \
        env["ASSISTANT_MONITOR_ADMIN__ENDPOINT"]
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    pid = None
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
        pid = sidecar(process)
        uid = int(next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                       if line.startswith("Uid:")).split()[1])
        provider = TracerProvider(resource=Resource.create({"service.name": "vm-bot"}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=f"http://{http}/v1/traces")))
        traffic.send(provider, traffic.GROUNDED[0])
        provider.shutdown()
        deadline = time.monotonic() + TIMEOUT_S  # its own: a busy machine starts slower, too
        while True:
            text = urllib.request.urlopen(f"http://{admin}/metrics", timeout=5).read().decode()
            if 'assistant_turns_judged_total{judge="local",route="support",service="vm-bot"} 1.0' \
                    in text:
                break
            assert time.monotonic() < deadline, "the turn was never judged"
            time.sleep(0.2)
    finally:
        if pid is None:
            process.terminate()
        else:
            os.kill(pid, signal.SIGTERM)  # as `docker stop` and systemd stop it
        process.wait(timeout=60)
    assert process.returncode == 0, process.stdout.read() if process.stdout else ""
    return uid


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


@pytest.fixture(scope="module")
def buildah(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """buildah on a storage of the test's own; vfs, which needs no overlay mounts."""
    for tool in ("buildah", "debootstrap"):
        assert shutil.which(tool), f"missing {tool}: .ci/run installs Debian's package"
    root = tmp_path_factory.mktemp("containers")
    return ["buildah", "--root", str(root / "storage"), "--runroot", str(root / "run"),
            "--storage-driver", "vfs"]


@pytest.fixture(scope="module")
def image(buildah: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The image built from deploy/docker/Dockerfile and the wheelhouse, as a user builds it; its
    base made from Debian's packages, since no registry is reachable here. Returns its config."""
    work = tmp_path_factory.mktemp("base")
    # bookworm's python3 is 3.11, the wheelhouse's (built below by this venv's Python 3.11).
    assert sys.version_info[:2] == (3, 11)
    subprocess.run(["debootstrap", "--variant=minbase", "--include=python3,python3-venv",
                    "bookworm", str(work / "rootfs")], check=True, capture_output=True,
                   timeout=1200)
    subprocess.run(["tar", "-C", str(work / "rootfs"), "-cf", str(work / "rootfs.tar"), "."],
                   check=True)
    (work / "Containerfile").write_text("FROM scratch\nADD rootfs.tar /\n")
    subprocess.run([*buildah, "bud", "--isolation", "chroot", "-t", "localhost/debian-python",
                    str(work)], check=True, capture_output=True, timeout=600)
    subprocess.run([str(ROOT / "deploy/docker/wheels.sh")], check=True, capture_output=True,
                   timeout=1800, env={**os.environ, "PYTHON": sys.executable})
    # One wheel of the compiled core for every CPython >= 3.11.
    assert list((ROOT / "dist/wheels").glob("assistant_monitor-0.1.0-cp311-abi3-*.whl"))
    done = subprocess.run([*buildah, "bud", "--isolation", "chroot", "--format", "docker",
                           "--build-arg", "BASE=localhost/debian-python", "-f",
                           "deploy/docker/Dockerfile", "-t", "localhost/assistant-monitor", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    inspect = subprocess.run([*buildah, "inspect", "localhost/assistant-monitor"], check=True,
                             capture_output=True, text=True)
    config: dict[str, Any] = json.loads(inspect.stdout)["Docker"]["config"]
    return config


@pytest.mark.e2e  # buildah, debootstrap, the sidecar inside the image
def test_image_serves_as_non_root_and_judges_a_turn(buildah: list[str], image: dict[str, Any],
                                                    tmp_path: Path) -> None:
    assert image["User"] == "10001"
    assert "/healthz" in " ".join(image["Healthcheck"]["Test"])
    container = subprocess.run([*buildah, "from", "localhost/assistant-monitor"], check=True,
                               capture_output=True, text=True).stdout.strip()
    # The image's own command and configuration; only the addresses move to loopback for the
    # test (the image binds 0.0.0.0; buildah's chroot isolation shares the host's network).
    env = {"ASSISTANT_MONITOR_RECEIVERS__GRPC__ENDPOINT": f"127.0.0.1:{free_port()}",
           "ASSISTANT_MONITOR_RECEIVERS__HTTP__ENDPOINT": f"127.0.0.1:{free_port()}",
           "ASSISTANT_MONITOR_ADMIN__ENDPOINT": f"127.0.0.1:{free_port()}"}
    command = [*buildah, "run", "--isolation", "chroot",
               *(f"--env={name}={value}" for name, value in env.items()), container, "--",
               *image["Entrypoint"], *image["Cmd"]]

    def python_in_the_container(process: subprocess.Popen[str]) -> int:
        """buildah kills the container with SIGKILL when it is stopped itself: stop the
        sidecar, the container's command, as a container engine would."""
        return next(pid for pid in _descendants(process.pid)
                    if Path(os.readlink(f"/proc/{pid}/exe")).name.startswith("python"))

    try:
        # The shipped build: the compiled core without its test hooks.
        shipped = subprocess.run(
            [*buildah, "run", "--isolation", "chroot", container, "--", "python", "-c",
             "from monitor import _native; print(hasattr(_native, 'testing'))"],
            capture_output=True, text=True, check=True)
        assert shipped.stdout.strip() == "False"
        uid = _run_as(command, {**os.environ, **env}, tmp_path, python_in_the_container)
    finally:
        subprocess.run([*buildah, "rm", container], check=True, capture_output=True)
    assert uid == 10001
