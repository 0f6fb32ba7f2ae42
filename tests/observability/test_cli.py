"""``sidewalk ingest --metrics-port … --log-format json`` as systemd would start it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sidewalk.core.mqtt import MqttClient
from tests.harness.mosquitto import MosquittoServer, free_port
from tests.ingest.pipeline import settings, slug
from tests.observability.scrape import eventually, get, probe, scrape, value

pytestmark = pytest.mark.services


def test_ingest_command_serves_endpoints_and_logs_json(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device, port = slug("site"), slug("pole"), free_port()
    env = os.environ | {
        "SIDEWALK_SITE": site,
        "SIDEWALK_DATA_DIR": str(tmp_path),
        "SIDEWALK_MQTT__URL": f"mqtt://{broker.host}:{broker.port}",
        "SIDEWALK_MQTT__CLIENT_ID": slug("ingest"),
        "SIDEWALK_TIMESERIES__SQLITE_PATH": str(tmp_path / "ts.db"),
        # Ingest reads the registry's poles (known devices only) from the case records.
        "SIDEWALK_CASES__DATABASE_URL": f"sqlite:///{tmp_path / 'cases.db'}",
        "SIDEWALK_MQTT_PASSWORD": "never-in-a-log",
    }
    command = [sys.executable, "-m", "sidewalk.cli", "ingest", "--metrics-port", str(port)]
    proc = subprocess.Popen(
        [*command, "--log-format", "json"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        assert eventually(lambda: get_or_none(f"{base}/readyz") == 200, timeout_s=30)
        assert probe(base, "/healthz")[0] == 200
        sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
        sender.connect()
        try:
            assert sender.publish_and_wait(f"sidewalk/v1/{site}/{device}/weather", b"{oops")
        finally:
            sender.disconnect()
        assert eventually(
            lambda: value(scrape(base), "sidewalk_dead_letters_total", reason="malformed_json") == 1
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    entries = [json.loads(line) for line in err.splitlines() if line.strip()]
    dead = [e for e in entries if e["logger"] == "sidewalk.ingest.consumer"]
    assert dead, err
    assert dead[0]["level"] == "WARNING"
    assert "malformed_json" in dead[0]["message"]
    assert "never-in-a-log" not in err


def get_or_none(url: str) -> int | None:
    try:
        return get(url)[0]
    except OSError:  # not listening yet
        return None
