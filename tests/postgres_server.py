"""A real PostgreSQL server for the tests: Debian's PostgreSQL (initdb, pg_ctl), on 127.0.0.1 and
a free port, its data and its unix socket in a temporary directory, durability off (fsync) for
speed. initdb refuses to run as root: as root (CI), the server runs as the `postgres` system user
the Debian package creates. One server a test session, started by the first test that needs it;
each test gets a database of its own (`database`).

    server = PostgresServer()
    url = server.create_database("t1")   # postgresql://monitor:...@127.0.0.1:PORT/t1
    server.stop()

PostgreSQL missing is a failure that says so, never a skip.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.waiting import wait_until

USER = "monitor"
PASSWORD = "pw-never-logged-7f3a"  # a URL's password: tests check it is never shown


def _tool(name: str) -> str | None:
    """On the PATH (Debian links only some), else in the newest /usr/lib/postgresql/N/bin."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"),
                      key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    for bin_dir in reversed(versions):
        if (bin_dir / name).exists():
            return str(bin_dir / name)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    def __init__(self) -> None:
        initdb, pg_ctl = _tool("initdb"), _tool("pg_ctl")
        if initdb is None or pg_ctl is None:
            pytest.fail("PostgreSQL's initdb and pg_ctl were not found (on the PATH or in "
                        "/usr/lib/postgresql/*/bin): install Debian's `postgresql` package "
                        "(apt-get install postgresql; .ci/run does)", pytrace=False)
        self.pg_ctl = pg_ctl
        self.dir = Path(tempfile.mkdtemp(prefix="pg-"))
        self.data = self.dir / "data"
        self.as_owner: list[str] = []
        if os.geteuid() == 0:  # initdb and postgres refuse root
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                pytest.fail("the tests run as root and there is no `postgres` user to run "
                            "PostgreSQL as (Debian's postgresql package creates it)", pytrace=False)
            os.chown(self.dir, owner.pw_uid, owner.pw_gid)
            self.as_owner = ["runuser", "-u", "postgres", "--"]
        password_file = self.dir / "password"
        password_file.write_text(PASSWORD + "\n")
        if self.as_owner:
            os.chown(password_file, owner.pw_uid, owner.pw_gid)
        self._run(initdb, "-D", str(self.data), "-U", USER, f"--pwfile={password_file}",
                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                  "--locale=C.UTF-8")
        self.port = _free_port()
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync=off"
                   " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        # -w: pg_ctl returns once the server accepts connections (or fails, with its log)
        self._run(pg_ctl, "-D", str(self.data), "-l", str(self.dir / "server.log"), "-w",
                  "-t", "60", "-o", options, "start")
        self.url = self.url_of("postgres")
        wait_until(self._accepting, 60, "PostgreSQL accepting connections over TCP")

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self.as_owner, *command], capture_output=True, text=True,
                              timeout=120)
        if done.returncode:
            log = self.dir / "server.log"
            raise RuntimeError(f"{' '.join(command[:1])} failed: {done.stderr[-2000:]}"
                               + (log.read_text()[-2000:] if log.exists() else ""))

    def _accepting(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.url, connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            return False

    def url_of(self, database: str) -> str:
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(sql)

    def create_database(self, name: str) -> str:
        """Sorting as en-US does (ICU), as production databases often do, not byte by byte."""
        self.admin(f'CREATE DATABASE "{name}" TEMPLATE template0 LOCALE_PROVIDER icu'
                   " ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
        return self.url_of(name)

    def drop_database(self, name: str) -> None:
        self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        subprocess.run([*self.as_owner, self.pg_ctl, "-D", str(self.data), "-m", "immediate",
                        "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


# One server for the session, shared by every module that imports the `postgres` fixture (each
# module's import is a fixture of its own to pytest): started by the first, stopped by the last.
_server: PostgresServer | None = None
_users = 0


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    global _server, _users
    if _server is None:
        _server = PostgresServer()
    _users += 1
    yield _server
    _users -= 1
    if _users == 0:
        _server.stop()
        _server = None


@pytest.fixture
def database(postgres: PostgresServer) -> Iterator[str]:
    """A new, empty database of its own for a test: its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = postgres.create_database(name)
    yield url
    postgres.drop_database(name)
