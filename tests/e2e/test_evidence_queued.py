"""A deadline is decided on the evidence up to it, however late it comes.

Live analytics (wall-clock mode, its deadline jobs persisted in the case
database) on a real Mosquitto is stopped an hour before the first storm's
deadline; the pole goes on publishing, so its readings queue at the broker in
analytics' persistent session. Analytics starts again 1 or 3 hours after the
deadline: the persisted deadline job is overdue and fires as the scheduler
starts, before the queued readings come in. It must wait for them (they are
the evidence up to the deadline) and issue exactly the notices an undisturbed
run issues, never "unverified" for want of readings still in the queue.

The scenario is moved in time so that the restart happens at the real "now":
the runner's clock is the wall clock, as in production.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.contract import AnyReading, topic_for
from sidewalk.core.mqtt import MqttClient, MqttSettings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import CaseStore
from sidewalk.system import (
    build_analytics,
    frontage_specs,
    notice_summary,
    open_cases,
    seed_scenario,
)
from tests.harness.mosquitto import MosquittoServer

pytestmark = pytest.mark.services
RUNNER_ID = "analytics-queued-evidence"
# The first storm's deadline (24 h after the second snowfall stopped).
DEADLINE = datetime(2026, 12, 11, 23, 0, tzinfo=UTC)


class SetClock:
    """The runner's clock before the stop: the wall clock moved back (phase 1)."""

    def __init__(self, offset: timedelta) -> None:
        self.offset = offset

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


def shifted(readings: list[AnyReading], by: timedelta) -> list[AnyReading]:
    ms = round(by.total_seconds() * 1000)
    return [r.model_copy(update={"ts": r.ts + ms}) for r in readings]


def undisturbed(cases: CaseStore, profile: Profile, readings: list[AnyReading]) -> list[str]:
    """The same readings straight into an engine: the notices a run without a restart gives."""
    engine = ClockEngine(profile, frontage_specs(cases, "clyman"))
    issuer = NoticeIssuer(cases, profile)
    recorder = CaseRecorder(
        cases, profile, on_violation=issuer.clearing_violation, on_notice=issuer.required_notice
    )
    for reading in readings:
        recorder.record(engine.observe(reading) + engine.advance(reading.event_time))
    return [n.frontage_id for n in cases.notices.list()]


def live_runner(cases: CaseStore, profile: Profile, broker: MosquittoServer) -> AnalyticsRunner:
    mqtt = MqttSettings(host=broker.host, port=broker.port, client_id=RUNNER_ID)
    return build_analytics(cases, profile, mqtt, site="clyman", mode="live", tick_seconds=1.0)


def publish(client: MqttClient, readings: list[AnyReading]) -> None:
    for reading in readings:
        client.publish_and_wait(
            topic_for("clyman", reading.device, reading.stream), reading.to_json()
        )


@pytest.mark.parametrize("hours_after", [1, 3])
def test_analytics_restarted_hours_after_the_deadline_with_the_evidence_queued(
    tmp_path: Path, broker: MosquittoServer, hours_after: int
) -> None:
    profile = load_profile()
    story = load_scenario("first-storm")
    restart_at = datetime.now(UTC) + timedelta(seconds=5)
    # The deadline falls ``hours_after`` before the restart, in real time.
    move = restart_at - timedelta(hours=hours_after) - DEADLINE
    deadline = DEADLINE + move
    readings = [
        r for r in shifted(to_readings(story, expand(story)), move) if r.event_time <= restart_at
    ]
    before = [r for r in readings if r.event_time <= deadline - timedelta(hours=3)]
    queued = readings[len(before) :]
    assert queued
    assert all(r.event_time > before[-1].event_time for r in queued)

    reference = open_cases(f"sqlite:///{tmp_path / 'reference.sqlite3'}", profile)
    seed_scenario(reference, story, profile=profile)
    expected = undisturbed(reference, profile, readings)
    assert sorted(expected) == ["main-st-103", "main-st-105"]

    cases = open_cases(f"sqlite:///{tmp_path / 'cases.sqlite3'}", profile)
    seed_scenario(cases, story, profile=profile)
    publisher = MqttClient(MqttSettings(host=broker.host, port=broker.port, client_id="queued-pub"))
    publisher.connect()
    # Phase 1: analytics runs until three hours before the deadline (its clock says so).
    runner = live_runner(cases, profile, broker)
    runner.clock = SetClock(before[-1].event_time + timedelta(minutes=1) - datetime.now(UTC))
    runner.start()
    try:
        publish(publisher, before)
        assert runner.wait_for(lambda: runner.processed >= len(before), timeout_s=60)
        runner.tick()
    finally:
        runner.stop()
    assert cases.notices.list() == []
    # Phase 2: analytics is down; the pole goes on, its readings queue at the broker.
    publish(publisher, queued)
    publisher.disconnect()
    time.sleep(max(0.0, (restart_at - datetime.now(UTC)).total_seconds()))
    # Phase 3: analytics starts again on the wall clock, hours after the deadline.
    runner = live_runner(cases, profile, broker)
    runner.start()
    try:
        assert runner.wait_for(lambda: runner.processed >= len(queued), timeout_s=60)
        runner.tick()
        assert runner.wait_for(lambda: len(cases.notices.list()) >= len(expected), timeout_s=20)
        runner.tick()
    finally:
        runner.stop()
    got = cases.notices.list()
    assert notice_summary(got) == notice_summary(reference.notices.list())
    states = {c.frontage_id: c.state for c in cases.clocks.list() if c.kind == "clearing"}
    assert states == {
        "main-st-101": "complied",
        "main-st-103": "violation",
        "main-st-105": "violation",
    }
    reference.close()
    cases.close()
