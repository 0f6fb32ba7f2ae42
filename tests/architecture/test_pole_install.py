"""A pole's install holds the pole's code and what it declares, nothing of the server.

A fresh virtual environment gets exactly what the lock file gives
``sidewalk-edge`` (``uv export --package sidewalk-edge`` → ``uv pip install``):
the server's libraries must not be importable there, and ``sidewalk-edge``
must run a pole and send it commands through real Mosquitto with what is.
The packages come from uv's cache or the package index; the test is skipped
only when the index cannot be reached for what the cache lacks.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.architecture.components import ROOT
from tests.harness.mosquitto import MosquittoServer, free_port

pytestmark = pytest.mark.services

# The server's side: none of it may reach a pole.
SERVER_ONLY = (
    "jinja2",
    "sqlalchemy",
    "fastapi",
    "uvicorn",
    "alembic",
    "amqtt",
    "sidewalk.storage",
    "sidewalk.ingest",
    "sidewalk.analytics",
    "sidewalk.alerts",
    "sidewalk.scenarios",
    "sidewalk.dashboard",
    "sidewalk.system",
    "sidewalk.cli",
)
# What uv says when it cannot reach the index (not a broken lock or build).
OFFLINE = (
    "dns error",
    "failed to lookup address",
    "network is unreachable",
    "connection refused",
    "tcp connect error",
    "error sending request",
    "operation timed out",
)


def _uv() -> str:
    uv = ROOT / ".venv-tools" / "bin" / "uv"  # where scripts/bootstrap puts it
    found = str(uv) if uv.exists() else shutil.which("uv")
    assert found, "uv is missing: run scripts/bootstrap"
    return found


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would point a child at the workspace."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "NOTIFY_SOCKET", "WATCHDOG_USEC")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("SIDEWALK_")}
    return env | extra


@pytest.fixture(scope="module")
def pole_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment holding only ``sidewalk-edge`` and its locked dependencies."""
    where = tmp_path_factory.mktemp("pole")
    venv, requirements = where / "venv", where / "requirements.txt"
    env = _clean_env()

    def uv(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [_uv(), *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    steps = (
        ("venv", "--quiet", "--python", sys.executable, str(venv)),
        ("export", "--frozen", "--package", "sidewalk-edge", "--no-dev", "--no-hashes",
         "--quiet", "--output-file", str(requirements)),
        ("pip", "install", "--python", str(venv / "bin" / "python"), "-r", str(requirements)),
    )  # fmt: skip
    for step in steps:
        done = uv(*step)
        if done.returncode != 0:
            if any(marker in done.stderr.lower() for marker in OFFLINE):
                pytest.skip(f"package index unreachable: uv {step[0]}: {done.stderr.strip()}")
            pytest.fail(f"uv {' '.join(step)} failed:\n{done.stderr}")
    return venv


def _run(venv: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]],
        cwd=venv.parent,  # not the repository: nothing of it on the path by accident
        env=_clean_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_server_side_is_not_installed(pole_env: Path) -> None:
    probe = (
        "import importlib.util, json, sys\n"
        "print(json.dumps({m: importlib.util.find_spec(m) is not None for m in sys.argv[1:]}))"
    )
    wanted = ("sidewalk.core", "sidewalk.edge", "cv2", "paho", "prometheus_client")
    done = _run(pole_env, "python", "-c", probe, *SERVER_ONLY, *wanted)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert [m for m in SERVER_ONLY if found[m]] == []
    assert all(found[m] for m in wanted), found


def test_sidewalk_edge_runs_a_pole_and_commands_it(
    pole_env: Path, broker: MosquittoServer, tmp_path: Path
) -> None:
    usage = _run(pole_env, "sidewalk-edge", "--help")
    assert usage.returncode == 0, usage.stderr
    assert "run" in usage.stdout
    assert "command" in usage.stdout

    site, device = f"arch-{uuid.uuid4().hex[:8]}", "pole-arch"
    config = tmp_path / "pole.toml"
    config.write_text(
        f'device = "{device}"\nsite = "{site}"\nstate_dir = "{tmp_path / "state"}"\n'
        f'[mqtt]\nurl = "mqtt://{broker.host}:{broker.port}"\n'
        '[[sensors]]\nid = "air"\nkind = "simulated"\nquantity = "air_temp_c"\ninterval_s = 1\n'
    )
    port = free_port()
    server = {"SIDEWALK_SITE": site, "SIDEWALK_MQTT__URL": f"mqtt://{broker.host}:{broker.port}"}
    with _pole(pole_env, config, port):
        ok = _run(
            pole_env, "sidewalk-edge", "command", device, "set_interval",
            "-a", "sensor=air", "-a", "seconds=5", **server,
        )  # fmt: skip
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert '"status": "ok"' in ok.stdout
        # A real reply from the pole: it has no camera to capture with.
        no_camera = _run(pole_env, "sidewalk-edge", "command", device, "capture_now", **server)
        assert no_camera.returncode == 1, no_camera.stdout + no_camera.stderr
        assert "this device has no camera" in no_camera.stdout
        metrics = _get(f"http://127.0.0.1:{port}/metrics")
        assert f'sidewalk_device_readings_total{{device="{device}"}}' in metrics


@contextmanager
def _pole(venv: Path, config: Path, metrics_port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``sidewalk-edge run`` in the pole's environment, ready (broker connected) on entry."""
    log = config.with_suffix(".log")
    args = [
        str(venv / "bin" / "sidewalk-edge"), "run", "--config", str(config),
        "--metrics-port", str(metrics_port),
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=config.parent, env=_clean_env(), stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"sidewalk-edge run exited {proc.returncode}:\n{log.read_text()}")
            try:
                _get(f"http://127.0.0.1:{metrics_port}/readyz")  # 503 until connected
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    pytest.fail(f"the pole was not ready in 60 s:\n{log.read_text()}")
                time.sleep(0.1)  # polling the pole's own readiness endpoint
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())
