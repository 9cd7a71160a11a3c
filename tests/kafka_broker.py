"""A real Apache Kafka broker for the tests: single node, KRaft, on 127.0.0.1.

Its jars come from Maven Central (tests/kafka/pom.xml) into a cache outside the repository
(`$XDG_CACHE_HOME/assistant-monitor/kafka-<version>`), so only the first run downloads them.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

POM = Path(__file__).parent / "kafka" / "pom.xml"


def _cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:12]
    return base / "assistant-monitor" / f"kafka-{digest}"


def kafka_libs() -> Path:
    libs = _cache_dir() / "libs"
    if not (libs / ".complete").exists():
        libs.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mvn", "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
                        f"-DoutputDirectory={libs}", "-DincludeScope=runtime"], check=True,
                       timeout=900)
        (libs / ".complete").touch()
    return libs


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KafkaBroker:
    def __init__(self, partitions: int = 4) -> None:
        self.libs = kafka_libs()
        self.dir = Path(tempfile.mkdtemp(prefix="kafka-"))
        self.port, controller = _free_port(), _free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        config = self.dir / "server.properties"
        config.write_text("\n".join([
            "process.roles=broker,controller", "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{controller}",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{controller}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"log.dirs={self.dir / 'data'}", f"num.partitions={partitions}",
            "offsets.topic.replication.factor=1", "offsets.topic.num.partitions=4",
            "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0", "auto.create.topics.enable=true"]) + "\n")
        (self.dir / "log4j.properties").write_text(
            "log4j.rootLogger=WARN, file\nlog4j.appender.file=org.apache.log4j.FileAppender\n"
            f"log4j.appender.file.File={self.dir / 'broker.log'}\n"
            "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.file.layout.ConversionPattern=%d %p %c: %m%n\n")
        java = ["java", "-Xmx512m", f"-Dlog4j.configuration=file:{self.dir / 'log4j.properties'}",
                "-cp", f"{self.libs}/*"]
        cluster = subprocess.run([*java, "kafka.tools.StorageTool", "random-uuid"], check=True,
                                 capture_output=True, text=True).stdout.strip()
        subprocess.run([*java, "kafka.tools.StorageTool", "format", "-t", cluster, "-c",
                        str(config)], check=True, capture_output=True)
        self.process = subprocess.Popen([*java, "kafka.Kafka", str(config)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_ready()

    def _wait_ready(self, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.process.poll() is None, (self.dir / "broker.log").read_text()[-3000:]
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "Kafka did not start"
                time.sleep(0.3)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def kill(self) -> None:
        """Gone at once, as a crashed broker is (SIGKILL)."""
        self.process.kill()
        self.process.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


def read_topic(bootstrap: str, topic: str, count: int, timeout_s: float = 60.0) -> list[Any]:
    """The first `count` messages of `topic` (all partitions), read from the beginning; fewer
    only if they do not all arrive within `timeout_s`."""
    from aiokafka import AIOKafkaConsumer

    async def read() -> list[Any]:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap,
                                    auto_offset_reset="earliest", group_id=None)
        await consumer.start()
        read: list[Any] = []
        try:
            async with asyncio.timeout(timeout_s):
                while len(read) < count:
                    batch = await consumer.getmany(timeout_ms=1000)
                    read += [m for messages in batch.values() for m in messages]
        except TimeoutError:
            pass
        finally:
            await consumer.stop()
        return read

    return asyncio.run(read())
