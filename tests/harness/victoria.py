"""pytest plugin: a real VictoriaMetrics for the session.

Fixture ``victoria`` (session) starts ``victoria-metrics`` on
127.0.0.1:<free port> with storage in a temp dir, waits for ``/health`` and
yields its base URL (``http://127.0.0.1:<port>``); it stops the server and
deletes the data at the end. VictoriaMetrics speaks the InfluxDB v2 write API
(``/api/v2/write``), which is what ``sidewalk.storage.influx`` uses.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

VICTORIA_BIN = os.environ.get("SIDEWALK_VICTORIA_BIN", "victoria-metrics")
START_TIMEOUT_S = 30.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/health", timeout=1) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@pytest.fixture(scope="session")
def victoria() -> Iterator[str]:
    """Start VictoriaMetrics; yield its base URL; stop it and delete its data."""
    binary = shutil.which(VICTORIA_BIN)
    if binary is None:
        pytest.skip(f"{VICTORIA_BIN} not found (apt install victoria-metrics)")
    root = Path(tempfile.mkdtemp(prefix="sidewalk-vm-"))
    log = root / "victoria.log"
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    with log.open("wb") as log_file:
        proc = subprocess.Popen(
            [binary, f"-httpListenAddr=127.0.0.1:{port}", f"-storageDataPath={root / 'data'}",
             "-retentionPeriod=100y", "-loggerLevel=WARN"],
            cwd=root, stdout=log_file, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(base_url):
            if proc.poll() is not None:
                raise RuntimeError(
                    f"victoria-metrics exited ({proc.returncode}):\n{log.read_text()}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"victoria-metrics not healthy after {START_TIMEOUT_S}s")
            time.sleep(0.05)
        yield base_url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)
