"""A real Mosquitto on a free loopback port, for tests and the bench.

Register as a pytest plugin (``pytest_plugins = ["tests.harness.mosquitto"]``)
to get the session-scoped ``mosquitto`` fixture. ``restart()`` stops it cleanly
(persistence saved) and starts it again on the same port; ``kill()`` is
``kill -9`` (what was not autosaved is gone); ``start()`` brings it back.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MosquittoServer:
    """One Mosquitto process with its own config and persistence directory."""

    def __init__(
        self,
        workdir: Path,
        port: int | None = None,
        *,
        autosave_s: int = 1,
        allow_anonymous: bool = True,
        extra_config: str = "",
    ) -> None:
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.workdir = workdir
        self.config = workdir / "mosquitto.conf"
        self.log = workdir / "mosquitto.log"
        (workdir / "data").mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            f"listener {self.port} {self.host}\n"
            # Mosquitto started as root drops to user "mosquitto", which could
            # not write our temp dir: persistence would silently do nothing.
            f"user {getpass.getuser()}\n"
            f"allow_anonymous {'true' if allow_anonymous else 'false'}\n"
            "persistence true\n"
            f"persistence_location {workdir / 'data'}/\n"
            f"autosave_interval {autosave_s}\n"
            # Unlimited queues: a test that loses messages must not blame a cap.
            "max_queued_messages 0\n"
            "max_queued_bytes 0\n"
            "persistent_client_expiration 1d\n"
            f"log_dest file {self.log}\n"
            "log_type error\nlog_type warning\nlog_type notice\n" + extra_config
        )
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        """True while the broker process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout_s: float = 10.0) -> None:
        """Start the broker and wait until it accepts TCP connections."""
        if self.running:
            return
        self._proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode() if self._proc.stderr else ""
                raise RuntimeError(f"mosquitto exited with {self._proc.returncode}: {err}")
            try:
                socket.create_connection((self.host, self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.02)  # polling a port; there is nothing to wait on
        self.stop()
        raise RuntimeError(f"mosquitto did not listen on {self.port} in {timeout_s}s")

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM: Mosquitto saves its persistence file and exits."""
        self._end(signal.SIGTERM, timeout_s)

    def kill(self) -> None:
        """SIGKILL: a crash; whatever was not autosaved is lost."""
        self._end(signal.SIGKILL, 10.0)

    def restart(self) -> None:
        """Stop cleanly and start again on the same port."""
        self.stop()
        self.start()

    def _end(self, sig: signal.Signals, timeout_s: float) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        os.kill(proc.pid, sig)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.fixture(scope="session")
def mosquitto() -> Iterator[MosquittoServer]:
    """A Mosquitto for the whole session; tests that stop it start it again."""
    with tempfile.TemporaryDirectory(prefix="sidewalk-mosquitto-") as tmp:
        server = MosquittoServer(Path(tmp))
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def broker(mosquitto: MosquittoServer) -> MosquittoServer:
    """The session Mosquitto, guaranteed running at the start of the test."""
    mosquitto.start()
    return mosquitto
