"""pytest plugin: a real PostgreSQL 15 cluster for the session.

Fixtures:

- ``postgres_server`` (session): a ``PostgresServer`` on 127.0.0.1:<free port>,
  cluster in a temp dir, stopped and deleted at the end.
- ``postgres_url`` (session): ``postgresql+psycopg://`` URL of one database
  created for the session.
- ``postgres_fresh_url`` (function): a new, empty database per test, for tests
  that need a schema of their own (migrations from empty, counters from 1).

PostgreSQL refuses to run as root, so when the tests run as root, initdb and
the server run as the ``postgres`` system user (``subprocess``'s ``user=``),
with a data dir that user owns and the unix socket inside the temp dir. Auth is ``trust``: the
server listens on loopback only and lives for one test session.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("SIDEWALK_PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_USER = "postgres"
START_TIMEOUT_S = 30.0
_db_numbers = itertools.count(1)


def free_port() -> int:
    """A port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str
    root: Path

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create database ``name`` and return its SQLAlchemy URL."""
        import psycopg

        dsn = f"host={self.host} port={self.port} user={self.user} dbname=postgres"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _wait_ready(proc: subprocess.Popen[bytes], host: str, port: int, log: Path) -> None:
    import psycopg

    deadline = time.monotonic() + START_TIMEOUT_S
    dsn = f"host={host} port={port} user={PG_USER} dbname=postgres connect_timeout=2"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"postgres exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with psycopg.connect(dsn):
                return
        except psycopg.OperationalError:
            time.sleep(0.1)
    raise RuntimeError(f"postgres not ready after {START_TIMEOUT_S}s:\n{log.read_text()}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """Init and start a throwaway PostgreSQL cluster; stop and delete it afterwards."""
    if not (PG_BIN / "initdb").exists() or not (PG_BIN / "postgres").exists():
        pytest.skip(f"PostgreSQL binaries not found in {PG_BIN} (apt install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="sidewalk-pg-"))
    data, sockets, log = root / "data", root / "sock", root / "postgres.log"
    sockets.mkdir()
    # As root, become the postgres user; as anyone else, run as ourselves.
    run_as = PG_USER if os.geteuid() == 0 else None
    if run_as is not None:
        shutil.chown(root, run_as)
        shutil.chown(sockets, run_as)
    init = subprocess.run(
        [str(PG_BIN / "initdb"), "-D", str(data), "-U", PG_USER, "-A", "trust",
         "-E", "UTF8", "--locale=C", "--no-sync"],
        user=run_as, cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed ({init.returncode}):\n{init.stderr}")
    port = free_port()
    with log.open("wb") as log_file:
        # Durability settings off: this cluster lives for one test run.
        proc = subprocess.Popen(
            [str(PG_BIN / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port),
             "-k", str(sockets), "-c", "fsync=off", "-c", "synchronous_commit=off",
             "-c", "full_page_writes=off", "-c", "max_connections=50"],
            user=run_as, cwd=root, stdout=log_file, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        _wait_ready(proc, "127.0.0.1", port, log)
        yield PostgresServer("127.0.0.1", port, PG_USER, root)
    finally:
        proc.send_signal(signal.SIGINT)  # "fast" shutdown: roll back clients, exit
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """URL of a database created once for the whole session."""
    return postgres_server.create_database("sidewalk_test")


@pytest.fixture
def postgres_fresh_url(postgres_server: PostgresServer) -> str:
    """URL of a new, empty database for this test alone."""
    return postgres_server.create_database(f"sidewalk_t{os.getpid()}_{next(_db_numbers)}")
