"""``sidewalk analytics --event-time`` applies people's actions as live does.

In event time there is no scheduler tick; the runner's own thread takes the
recorded actions. Before this, a confirmation recorded on the dashboard stayed
"being applied" for ever and no hazard notice was issued. A real broker, a runner
started as the service starts it, nothing called by hand but ``actions.record``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import CaseStore
from tests.harness.mosquitto import MosquittoServer
from tests.harness.storm import StormTemplate, replay_once, restore

UNUSED_BROKER = MqttSettings(host="127.0.0.1", port=1, client_id="event-time-template")


@pytest.fixture(scope="module")
def storm_template(tmp_path_factory: pytest.TempPathFactory) -> StormTemplate:
    database = tmp_path_factory.mktemp("event-time-storm") / "cases.sqlite3"
    return replay_once(database, load_profile(), UNUSED_BROKER)


def _until(predicate: object, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        # Ignored: the predicate is typed ``object`` by the helper.
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def started(
    storm_template: StormTemplate, broker: MosquittoServer, tmp_path: Path
) -> Iterator[tuple[AnalyticsRunner, CaseStore]]:
    """A stream-mode runner resumed after the storm and started as the service starts it
    (connected, its worker thread running), ticking every 0.3 s; stopped afterwards."""
    mqtt = MqttSettings(host=broker.host, port=broker.port, client_id=f"event-time-{tmp_path.name}")
    runner, cases = restore(
        storm_template, tmp_path / "cases.sqlite3", load_profile(), mqtt, tick_seconds=0.3
    )
    try:
        runner.start()
        yield runner, cases
    finally:
        runner.stop()
        cases.close()


def _key(cases: CaseStore, frontage: str) -> str:
    [violation] = [
        v
        for n in cases.notices.list(frontage_id=frontage)
        if (v := cases.clocks.get_violation(n.violation_id or 0))
    ]
    return violation.key


def test_a_confirmation_recorded_in_event_time_issues_the_hazard_notice(
    started: tuple[AnalyticsRunner, CaseStore],
) -> None:
    runner, cases = started
    key = _key(cases, "main-st-105")
    now = runner.engine.now
    assert now is not None
    cases.actions.record("confirm_hazard", key, now + timedelta(minutes=30), "Officer Quinn")

    def applied() -> bool:
        return all(a.applied_at is not None for a in cases.actions.list(target=key))

    assert _until(applied), "the action stayed pending: event time never applied it"
    assert [a.error for a in cases.actions.list(target=key)] == [None]
    hazard = cases.notices.list(kind="hazard_notice")
    assert [n.frontage_id for n in hazard] == ["main-st-105"]
    # Applied at its own recorded time, not at whatever event time the runner had.
    assert "Officer Quinn" in (hazard[0].body_text or "")


def test_an_action_refused_in_event_time_is_kept_with_its_reason(
    started: tuple[AnalyticsRunner, CaseStore],
) -> None:
    runner, cases = started
    now = runner.engine.now
    assert now is not None
    cases.actions.record("record_delivery", "no-such-case", now, "Clerk Kruger")

    def marked() -> bool:
        return all(a.applied_at is not None for a in cases.actions.list(target="no-such-case"))

    assert _until(marked)
    [action] = cases.actions.list(target="no-such-case")
    assert action.error  # the reason is kept for the clerk, the action not lost
