"""On the real Mosquitto: a pole still behind is waited for, by its watermark.

Live analytics (wall-clock mode, its clock set into the first storm) runs on the
real broker the whole time. The pole goes offline three hours before the clearing
deadline and keeps its readings on its disk; analytics' clock then passes the
deadline (30 minutes past it, inside the bounded wait), ticking every 0.2 s. A
deadline is decided only once the pole's own readings have been processed up to
it: nothing is decided on the readings analytics happens to hold, and nothing is
"unverified". The pole comes back and drains its backlog through the broker while
the ticks go on: each deadline is decided on its evidence as the backlog passes
it, with exactly the notices an undisturbed run issues.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.clocks.events import ClearingViolation
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.contract import AnyReading, topic_for
from sidewalk.core.mqtt import MqttClient, MqttSettings
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.system import build_analytics, frontage_specs, notice_summary
from tests.clocks.live import Seeded, seeded
from tests.harness.mosquitto import MosquittoServer

pytestmark = pytest.mark.services
FRONTAGES = ("main-st-101", "main-st-103", "main-st-105")
Summary = tuple[str, str, str]


class SetClock:
    """The runner's clock: the wall clock moved to a chosen instant, and moved again."""

    def __init__(self, at: datetime) -> None:
        self.set(at)

    def set(self, at: datetime) -> None:
        self.offset = at - datetime.now(UTC)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


def _undisturbed(system: Seeded, readings: list[AnyReading]) -> tuple[datetime, list[Summary]]:
    """The first storm straight into an engine, as it comes: its clearing deadline (every
    frontage's) and the notices it gives for it (frontage, kind, deadline)."""
    engine = ClockEngine(system.profile, frontage_specs(system.cases, "clyman"))
    events = engine.feed(readings)
    deadlines = {engine.clocks[f].deadline for f in FRONTAGES}
    assert len(deadlines) == 1
    [deadline] = deadlines
    assert deadline is not None
    notices = [(e.frontage, "clearing_violation", e.deadline.isoformat())
               for e in events if isinstance(e, ClearingViolation)]  # fmt: skip
    return deadline, sorted(notices)


def _publish(client: MqttClient, readings: list[AnyReading]) -> None:
    for reading in readings:
        client.publish(topic_for("clyman", reading.device, reading.stream), reading.to_json())


def _clearing(system: Seeded) -> dict[str, str]:
    return {c.frontage_id: c.state for c in system.cases.clocks.list(kind="clearing")}


def test_a_pole_draining_its_backlog_past_the_deadline_is_decided_on_its_evidence(
    tmp_path: Path, broker: MosquittoServer
) -> None:
    story = load_scenario("first-storm")
    every = to_readings(story, expand(story))
    system = seeded(tmp_path)
    deadline, expected = _undisturbed(system, every)
    assert [f for f, _, _ in expected] == ["main-st-103", "main-st-105"]
    now = deadline + timedelta(minutes=30)  # analytics' clock when the pole comes back
    readings = [r for r in every if r.event_time <= now]
    offline = deadline - timedelta(hours=3)
    before = [r for r in readings if r.event_time <= offline]
    backlog = readings[len(before) :]
    assert backlog
    assert backlog[-1].event_time > deadline

    clock = SetClock(before[-1].event_time + timedelta(seconds=30))
    mqtt = MqttSettings(host=broker.host, port=broker.port, client_id=f"drain-{uuid.uuid4().hex}")
    runner: AnalyticsRunner = build_analytics(
        system.cases, system.profile, mqtt, site="clyman", mode="live", tick_seconds=0.2,
        persist_jobs=False,
    )  # fmt: skip
    runner.clock = clock
    pole = MqttClient(MqttSettings(host=broker.host, port=broker.port,
                                   client_id=f"drain-pole-{uuid.uuid4().hex}"))  # fmt: skip
    pole.connect()
    runner.start()
    try:
        _publish(pole, before)  # the storm, live, until the pole goes offline
        assert runner.wait_for(lambda: runner.processed >= len(before), timeout_s=30)
        runner.tick()
        assert _clearing(system) == dict.fromkeys(FRONTAGES, "clearing_period")
        # Offline: analytics' clock runs on past the deadline, its ticks go on. The
        # pole's readings are not in up to the deadline: nothing is decided on what
        # analytics holds (its last camera measurement is three hours old).
        clock.set(now)
        runner.tick()
        assert runner.wait_for(lambda: runner.inspect(lambda e: e.now is not None
                                                      and e.now >= now), timeout_s=5)  # fmt: skip
        assert _clearing(system) == dict.fromkeys(FRONTAGES, "clearing_period")
        # The pole is back: its backlog drains through the broker while the ticks go on.
        _publish(pole, backlog)
        assert runner.wait_for(lambda: runner.processed >= len(readings), timeout_s=30)
        runner.tick()
        assert runner.wait_for(lambda: len(system.cases.notices.list()) >= 2, timeout_s=10)
    finally:
        runner.stop()
        pole.disconnect()
    assert notice_summary(system.cases.notices.list()) == expected
    assert _clearing(system) == {
        "main-st-101": "complied",
        "main-st-103": "violation",
        "main-st-105": "violation",
    }
    # Decided at the deadline, on the pole's readings: never "unverified", never a review.
    decided = [t for c in system.cases.clocks.list(kind="clearing")
               for t in system.cases.clocks.history(c.id)
               if t.to_state in ("complied", "violation", "unverified")]  # fmt: skip
    assert [(t.to_state != "unverified", t.at) for t in decided] == [(True, deadline)] * 3
    assert [a.action for a in system.cases.audit.list() if a.action.startswith("clearing.")] == []
    system.cases.close()
