"""SIGKILL analytics at random points of a storm: the notices must equal an undisturbed run.

The runner is a real ``sidewalk analytics --event-time`` process on a real
Mosquitto; readings it had not acknowledged come again after each restart,
to an engine restored from its last snapshot. No notice may be duplicated,
no clock record split.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from sidewalk.core.contract import topic_for
from sidewalk.core.mqtt import MqttClient, MqttSettings
from sidewalk.core.profile import load_profile
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import CaseStore
from sidewalk.system import notice_summary, open_cases, replay_in_process, seed_scenario
from tests.harness.mosquitto import MosquittoServer

pytestmark = pytest.mark.services
RUNNER_ID = "analytics-kill-test"


def start_runner(config: Path, log: Path) -> subprocess.Popen[bytes]:
    """Start a runner and wait for its own "running" line (the log holds earlier runs too)."""
    started = log.read_text(errors="replace").count("analytics running") if log.exists() else 0
    env = {**os.environ, "SIDEWALK_ANALYTICS__CLIENT_ID": RUNNER_ID}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sidewalk.cli", "analytics", "--event-time", "-c", str(config)],
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        env=env,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log.read_text(errors="replace").count("analytics running") > started:
            return proc
        if proc.poll() is not None:
            raise AssertionError(f"analytics exited early:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"analytics did not start:\n{log.read_text(errors='replace')}")


def snapshot_time(cases: CaseStore) -> datetime | None:
    saved = cases.clocks.load_engine_snapshot(RUNNER_ID)
    now = None if saved is None else json.loads(saved)["now"]
    return None if now is None else datetime.fromisoformat(now)


def clock_rows(cases: CaseStore) -> list[tuple[str, str, str, str]]:
    return sorted(
        (c.frontage_id, c.kind, c.state, c.key.rsplit("/", 1)[-1]) for c in cases.clocks.list()
    )


def test_sigkill_at_random_points_gives_the_undisturbed_notices(
    tmp_path: Path, broker: MosquittoServer
) -> None:
    profile = load_profile()
    story = load_scenario("first-storm")
    readings = to_readings(story, expand(story))
    # The undisturbed answer, straight into the engine.
    reference = open_cases(f"sqlite:///{tmp_path / 'reference.sqlite3'}", profile)
    _, expected = replay_in_process(story, reference, profile)

    db = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    cases = open_cases(db, profile)
    seed_scenario(cases, story)
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        f'site = "{story.scenario.site}"\n'
        f'[mqtt]\nurl = "mqtt://{broker.host}:{broker.port}"\n'
        f'[cases]\ndatabase_url = "{db}"\n'
    )
    log = tmp_path / "analytics.log"
    runner = start_runner(config, log)
    publisher = MqttClient(MqttSettings(host=broker.host, port=broker.port, client_id="kill-pub"))
    publisher.connect()
    rng = random.Random(20261130)
    kills = sorted(rng.sample(range(50, len(readings) - 50), 4))
    try:
        for i, reading in enumerate(readings):
            topic = topic_for(story.scenario.site, reading.device, reading.stream)
            publisher.publish_and_wait(topic, reading.to_json())
            if kills and i == kills[0]:
                kills.pop(0)
                time.sleep(rng.uniform(0.0, 0.3))  # land anywhere inside a batch
                runner.send_signal(signal.SIGKILL)
                runner.wait(timeout=10)
                runner = start_runner(config, log)
        last = readings[-1].event_time
        deadline = time.monotonic() + 90
        while snapshot_time(cases) != last and time.monotonic() < deadline:
            time.sleep(0.1)
        assert snapshot_time(cases) == last, "analytics did not catch up with the stream"
    finally:
        publisher.disconnect()
        runner.send_signal(signal.SIGTERM)
        try:
            runner.wait(timeout=15)
        except subprocess.TimeoutExpired:
            runner.kill()
    got = cases.notices.list()
    assert notice_summary(got) == notice_summary(expected)
    assert len({n.number for n in got}) == len(got) == 2
    assert clock_rows(cases) == clock_rows(reference)
    assert log.read_text(errors="replace").count("analytics running") == 5
