"""A real Grafana OSS backend for the tests, on 127.0.0.1, its state in a temp dir.

Grafana is a test dependency only. Its backend is built from the Go module proxy, pinned to the
one version the proxy serves, into a cache outside the repository
(`$XDG_CACHE_HOME/assistant-monitor/grafana-<version>`: the binary plus the module's source tree,
which is Grafana's home path). The Go module and build caches stay where `go env GOMODCACHE` and
`go env GOCACHE` put them (about 4 GB together). A file lock makes concurrent runs build once.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

GRAFANA_VERSION = "v1.9.2-0.20230609164553-81d85ce8028d"  # main of 2023-06-09, between 10.0 and 10.1
WIRE_VERSION = "v0.7.0"  # older wire fails with current Go


def _cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "assistant-monitor" / f"grafana-{GRAFANA_VERSION}"


def _go(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["go", *args], cwd=cwd, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "GOFLAGS": "-buildvcs=false"})
    assert done.returncode == 0, f"go {' '.join(args)}:\n{done.stderr[-4000:]}"
    return done.stdout


def grafana_build() -> tuple[Path, Path]:
    """The Grafana binary and its home path, built on first use and reused afterwards."""
    cache = _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    binary, home = cache / "grafana", cache / "home"
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second run waits here, then finds the build done
        if not (cache / ".complete").exists():
            shutil.rmtree(home, ignore_errors=True)
            module = f"github.com/grafana/grafana@{GRAFANA_VERSION}"
            info = json.loads(_go("mod", "download", "-json", module))
            shutil.copytree(info["Dir"], home)  # the module cache is read-only: build in a copy
            for path in [home, *home.rglob("*")]:
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
            _go("run", f"github.com/google/wire/cmd/wire@{WIRE_VERSION}", "gen", "-tags", "oss",
                "./pkg/server", cwd=home)
            _go("build", "-tags", "oss", "-ldflags=-checklinkname=0", "-o", str(binary),
                "./pkg/cmd/grafana", cwd=home)
            (cache / ".complete").touch()
    return binary, home


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class GrafanaServer:
    """`grafana server` on 127.0.0.1, its data in a temp dir, provisioned from `provisioning`."""

    def __init__(self, provisioning: Path) -> None:
        binary, home = grafana_build()
        self.dir = Path(tempfile.mkdtemp(prefix="grafana-"))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = self.dir / "custom.ini"
        config.write_text("\n".join([
            "[server]", "http_addr = 127.0.0.1", f"http_port = {self.port}",
            "[paths]", f"data = {self.dir / 'data'}", f"logs = {self.dir / 'logs'}",
            f"plugins = {self.dir / 'plugins'}", f"provisioning = {provisioning}",
            "[security]", "admin_user = admin", "admin_password = admin",
            "[analytics]", "reporting_enabled = false", "check_for_updates = false",
            "check_for_plugin_updates = false",
            "[unified_alerting]", "enabled = true",
            "[alerting]", "enabled = false",
            "[log]", "mode = file", "level = info"]) + "\n")
        self.log = self.dir / "stdout.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [str(binary), "server", "--homepath", str(home), "--config", str(config)],
                cwd=self.dir, stdout=out, stderr=subprocess.STDOUT)
        self._auth = "Basic " + base64.b64encode(b"admin:admin").decode()
        self._wait_ready()

    def logs(self) -> str:
        text = self.log.read_text()
        grafana_log = self.dir / "logs" / "grafana.log"
        if grafana_log.exists():
            text += grafana_log.read_text()
        return text

    def _wait_ready(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.logs()[-6000:]
            try:
                if self.get("/api/health").get("database") == "ok":
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("Grafana did not become healthy:\n" + self.logs()[-6000:])

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": self._auth, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            detail = error.read().decode()[:2000]
            raise AssertionError(f"{method} {path}: {error.code} {detail}") from None

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def post(self, path: str, body: Any) -> Any:
        return self.request("POST", path, body)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


if __name__ == "__main__":  # warm the cache ahead of a test run: python -m tests.grafana_server
    started = time.monotonic()
    print(*grafana_build(), f"{time.monotonic() - started:.0f} s")
