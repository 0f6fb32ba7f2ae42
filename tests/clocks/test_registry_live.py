"""Registry changes reach a running analytics at their own time.

A frontage retired before its deadline gets no notice; one added mid-storm
starts watching the snowfall from its effective time; a replay through the
runner gives the same result every time; a live runner on the real broker
picks a new frontage up on its next tick, without a restart.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidewalk.analytics.clocks.states import ClearingState
from sidewalk.analytics.registry import frontage_specs_at
from sidewalk.core.mqtt import MqttSettings
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import FrontageRecord
from sidewalk.storage.cases.records import RegistryEventRecord
from sidewalk.system import build_analytics, notice_summary
from tests.clocks.live import Seeded, seeded
from tests.harness.mosquitto import MosquittoServer

CST = timedelta(hours=-6)
T0 = datetime(2026, 12, 1, tzinfo=UTC)
MERGED = datetime(2026, 12, 11, 12, 0, tzinfo=UTC) - CST  # the morning before the deadline
ADDED = datetime(2026, 12, 10, 14, 0, tzinfo=UTC) - CST  # between the two snowfalls


def _replay_with_changes(live: Seeded) -> tuple[list[tuple[str, str]], list[object]]:
    """First storm through a stream runner, with two registry changes at their own times:
    105 Main St's parcel merged the morning before its deadline, and 107 Main St added
    between the two snowfalls. Returns the notices and 107's clock state per reading."""
    registry = live.cases.registry
    registry.retire_frontage("main-st-105", MERGED, reason="parcel merged")
    registry.upsert_owner("o-107", "Dora Dietz", ["107 Main St", "Clyman, WI 53016"])
    registry.upsert_frontage(
        "main-st-107", site="clyman", parcel_number="026-0815-0107",
        street_address="107 Main St", length_ft=66, zone="residential", owner_id="o-107",
        device_id="pole-main-01", effective_at=ADDED,
    )  # fmt: skip
    runner = live.runner("registry-replay")
    scenario = load_scenario("first-storm")
    states: list[object] = []
    for reading in to_readings(scenario, expand(scenario)):
        runner.handle(reading)
        clock = runner.engine.clocks.get("main-st-107")
        states.append(None if clock is None else clock.state)
    notices = [(n[0], n[1]) for n in notice_summary(live.cases.notices.list())]
    return notices, states


def _frontage(fid: str, device: str | None, retired_at: datetime | None = None) -> FrontageRecord:
    return FrontageRecord(
        fid, "clyman", "p", "1 Elm St", 50.0, "residential", "o", device, False,
        retired_at=retired_at,
    )  # fmt: skip


def _event(i: int, kind: str, at: datetime, **detail: object) -> RegistryEventRecord:
    return RegistryEventRecord(i, kind, "s", at, dict(detail), "it", at)


def test_the_watched_set_is_a_fold_of_events_up_to_the_moment() -> None:
    frontages = [
        _frontage("a", "pole-2"),  # added on day 2 with pole-1, moved to pole-2 on day 5
        _frontage("b", "pole-1", retired_at=T0 + timedelta(days=3)),
        _frontage("c", "pole-1"),  # seeded before the registry kept events
    ]
    events = [
        _event(1, "frontage.added", T0 + timedelta(days=2), frontage="a", pole="pole-1"),
        _event(2, "pole.assigned", T0 + timedelta(days=5), frontage="a", pole="pole-2"),
        _event(3, "frontage.retired", T0 + timedelta(days=3), frontage="b"),
    ]

    def at(days: int) -> list[tuple[str, str]]:
        specs = frontage_specs_at(frontages, events, T0 + timedelta(days=days))
        return [(s.id, s.weather_device) for s in specs]

    assert at(1) == [("b", "pole-1"), ("c", "pole-1")]
    assert at(2) == [("a", "pole-1"), ("b", "pole-1"), ("c", "pole-1")]
    assert at(3) == [("a", "pole-1"), ("c", "pole-1")]
    assert at(6) == [("a", "pole-2"), ("c", "pole-1")]
    now = frontage_specs_at(frontages, events, None)
    assert [(s.id, s.weather_device) for s in now] == [("a", "pole-2"), ("c", "pole-1")]


def test_registry_changes_apply_at_their_own_time_and_replay_the_same(tmp_path: Path) -> None:
    runs = []
    for run in ("one", "two"):
        (tmp_path / run).mkdir()
        runs.append(_replay_with_changes(seeded(tmp_path / run)))
    notices, states = runs[0]
    # 105 Main St was no longer watched at its deadline: only 103's notice.
    assert [fid for fid, _kind in notices] == ["main-st-103"]
    # 107 Main St: not watched before its time, then it saw the second snowfall.
    assert states[0] is None
    assert states[-1] not in (None, ClearingState.IDLE)
    assert runs[1] == runs[0]


@pytest.mark.services
def test_a_running_analytics_picks_up_a_new_frontage_without_restart(
    tmp_path: Path, broker: MosquittoServer
) -> None:
    live = seeded(tmp_path)
    mqtt = MqttSettings(host=broker.host, port=broker.port, client_id="registry-live")
    runner = build_analytics(
        live.cases, live.profile, mqtt, site="clyman", mode="live", persist_jobs=False,
        tick_seconds=3600,
    )  # fmt: skip
    runner.start()
    try:
        assert "main-st-107" not in runner.engine.clocks
        live.cases.registry.upsert_owner("o-107", "Dora Dietz", ["107 Main St", "Clyman, WI"])
        live.cases.registry.upsert_frontage(
            "main-st-107", site="clyman", parcel_number="026-0815-0107",
            street_address="107 Main St", length_ft=66, zone="residential", owner_id="o-107",
            device_id="pole-main-01",
        )  # fmt: skip
        runner.tick()  # the scheduler's tick; no restart
        assert runner.engine.clocks["main-st-107"].state == ClearingState.IDLE
        assert [f.id for f in runner.engine.frontages()][-1] == "main-st-107"
        live.cases.registry.retire_frontage("main-st-101", datetime.now(UTC), reason="merged")
        runner.tick()
        assert "main-st-101" not in runner.engine.clocks
    finally:
        runner.stop()
