"""The whole path: simulated pole → MQTT → ingest → stores → clearing clock → notice.

The first-storm scenario must give notices for B (2-ft path) and C (never
cleared) only, each with the deadline 24 h after the second snowfall stopped,
whether it is replayed straight into the engine, through the embedded amqtt
broker, or through a real Mosquitto with the case records on PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidewalk.core.clock import StreamClock, to_ms
from sidewalk.core.contract import SnowMeasurement, WeatherReading
from sidewalk.core.mqtt import MqttClient, MqttSettings
from sidewalk.core.profile import load_profile
from sidewalk.scenarios import bundled_parcels, load_scenario
from sidewalk.storage.cases import CaseStore
from sidewalk.system import (
    build_analytics,
    notice_summary,
    open_cases,
    replay_in_process,
    run_through_broker,
)
from tests.harness.mosquitto import MosquittoServer

DEADLINE = "2026-12-11T23:00:00+00:00"  # 5:00 PM CST, 24 h after the second snowfall stopped
EXPECTED = [
    ("main-st-103", "clearing_violation", DEADLINE),
    ("main-st-105", "clearing_violation", DEADLINE),
]


def test_scenario_states_its_own_expectation() -> None:
    story = load_scenario("first-storm")
    stated = sorted(
        (e.frontage, e.notice, e.deadline.astimezone(UTC).isoformat()) for e in story.expect
    )
    assert stated == EXPECTED


def test_replay_in_process_gives_notices_for_b_and_c_only(tmp_path: Path) -> None:
    profile = load_profile()
    cases = open_cases(f"sqlite:///{tmp_path / 'cases.sqlite3'}", profile)
    _, notices = replay_in_process(load_scenario("first-storm"), cases, profile)
    assert notice_summary(notices) == EXPECTED
    assert all(n.status == "rendered" for n in notices)
    b = next(n for n in notices if n.frontage_id == "main-st-103")
    assert b.body_text is not None
    assert "2 ft 0 in" in b.body_text
    assert "Friday, December 11, 2026 at 5:00 PM CST" in b.body_text
    assert "Dear Bert Brandt:" in b.body_text
    # The mailing address prints once, in the envelope window (alerts.pdf), not in the text.
    assert b.owner_address_lines[0] == "PO Box 12"
    # Replaying again adds nothing: every decision has its key.
    _, again = replay_in_process(load_scenario("first-storm"), cases, profile)
    assert [n.number for n in again] == [n.number for n in notices]
    cases.close()


def test_the_street_from_the_county_file_through_the_embedded_broker_matches_the_replay(
    tmp_path: Path,
) -> None:
    """As the demo runs: the street comes in through `sidewalk registry import` of a
    county-format parcel file and a pole registration, not from the scenario."""
    parcels = bundled_parcels("first-storm")
    assert parcels is not None
    result = run_through_broker(load_scenario("first-storm"), tmp_path, parcels=parcels)
    assert result.protocol == "3.1.1"
    assert result.stored == result.published
    assert result.dead_letters == 0
    # The registry's ids: parcel number and street, from the county's PARCELID.
    registry_ids = {"main-st-103": "026-0815-0103-main-st", "main-st-105": "026-0815-0105-main-st"}
    expected = sorted((registry_ids[f], kind, deadline) for f, kind, deadline in EXPECTED)
    assert notice_summary(result.notices) == expected
    assert result.scenario is not None
    assert {
        (e.frontage, e.deadline.astimezone(UTC).isoformat()) for e in result.scenario.expect
    } == {(f, d) for f, _kind, d in expected}
    # Mailed to the owner of record the county file names, at its postal address.
    b = next(n for n in result.notices if n.frontage_id == "026-0815-0103-main-st")
    assert (b.owner_name, b.owner_address_lines[0]) == ("BERT BRANDT", "PO BOX 12")


@pytest.mark.services
def test_through_mosquitto_with_cases_on_postgresql(
    tmp_path: Path, broker: MosquittoServer, postgres_fresh_url: str
) -> None:
    result = run_through_broker(
        load_scenario("first-storm"),
        tmp_path,
        mqtt_url=f"mqtt://{broker.host}:{broker.port}",
        database_url=postgres_fresh_url,
        run_id="e2e-pg",
    )
    assert result.protocol == "5"
    assert result.stored == result.published
    assert notice_summary(result.notices) == EXPECTED
    assert {n.number for n in result.notices} == {"CLY-2026-000001", "CLY-2026-000002"}


@pytest.mark.services
def test_live_runner_fires_the_exact_deadline_from_the_scheduler(
    tmp_path: Path, broker: MosquittoServer
) -> None:
    """Live mode: wall-clock time; APScheduler's date job decides at the deadline."""
    from dataclasses import replace

    from sidewalk.analytics.clocks.cessation import DetectionParams

    profile = load_profile()
    db = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    cases = CaseStore(db)
    cases.create_schema()
    cases.registry.upsert_device("pole-live", "clyman")
    cases.registry.upsert_owner("o1", "Dana Doe", ["1 Elm St", "Clyman, WI 53016"])
    cases.registry.upsert_frontage(
        "elm-st-1", site="clyman", parcel_number="p1", street_address="1 Elm St",
        length_ft=50, zone="residential", owner_id="o1", device_id="pole-live",
    )  # fmt: skip
    mqtt = MqttSettings(host=broker.host, port=broker.port, client_id="live-analytics")
    runner = build_analytics(cases, profile, mqtt, site="clyman", mode="live")
    # Snow stopped 24 h ago less six seconds, so the deadline falls during the test: after
    # the readings are in (well under a second on a quiet machine), before the notice. On a
    # machine so loaded that it passes first, the date job fires late and the test still holds.
    now = datetime.now(UTC)
    cessation = now - timedelta(hours=24) + timedelta(seconds=6)
    runner.engine.params = replace(
        DetectionParams(),
        quiet_period=timedelta(minutes=30),
        decision_grace=timedelta(0),
        evidence_wait=timedelta(0),  # decide at the deadline itself, on what the camera sent
    )
    runner.start()
    try:
        publisher = MqttClient(
            MqttSettings(host=broker.host, port=broker.port, client_id="live-pub")
        )
        publisher.connect()
        seq = 0
        t = cessation - timedelta(hours=2)
        while t <= cessation:
            seq += 1
            depth = 100.0 * (1 - (cessation - t) / timedelta(hours=2))
            reading = WeatherReading(
                device="pole-live", seq=seq, ts=to_ms(t), snow_depth_mm=depth, air_temp_c=-6.0
            )
            publisher.publish_and_wait("sidewalk/v1/clyman/pole-live/weather", reading.to_json())
            t += timedelta(minutes=10)
        seq += 1
        measurement = SnowMeasurement(
            device="pole-live", seq=seq, ts=to_ms(now - timedelta(minutes=5)), frontage="elm-st-1",
            snow_cover_fraction=1.0, cleared_width_mm=0.0,
        )  # fmt: skip
        publisher.publish_and_wait("sidewalk/v1/clyman/pole-live/snow", measurement.to_json())
        # The pole's own readings reach past the deadline (stamped a second after it, a
        # few seconds ahead of now: within the time policy), so its evidence up to the
        # deadline is in and the deadline is decided at once, not sent for review.
        seq += 1
        through = WeatherReading(
            device="pole-live", seq=seq, ts=to_ms(cessation + timedelta(hours=24, seconds=1)),
            snow_depth_mm=100.0, air_temp_c=-6.0,
        )  # fmt: skip
        publisher.publish_and_wait("sidewalk/v1/clyman/pole-live/weather", through.to_json())
        publisher.disconnect()
        assert runner.wait_for(lambda: runner.processed >= seq, timeout_s=20)
        # The cessation is found by the scheduler's tick (quiet period passed long ago);
        # the violation only at the deadline, a few seconds from now.
        if datetime.now(UTC) < cessation + timedelta(hours=24):
            assert cases.notices.list() == []
        assert runner.wait_for(lambda: len(cases.notices.list()) == 1, timeout_s=40)
        [notice] = cases.notices.list()
        assert notice.frontage_id == "elm-st-1"
        assert notice.deadline is not None
        assert abs((notice.deadline - (cessation + timedelta(hours=24))).total_seconds()) < 1
        assert datetime.now(UTC) >= notice.deadline
    finally:
        runner.stop()
        cases.close()


def test_stream_clock_never_moves_backwards() -> None:
    clock = StreamClock()
    t0 = datetime(2026, 12, 10, tzinfo=UTC)
    assert clock.observe(t0)
    assert not clock.observe(t0 - timedelta(seconds=1))
    assert clock.now() == t0
    with pytest.raises(ValueError, match="naive"):
        clock.observe(datetime(2026, 12, 10))  # noqa: DTZ001 - the point of the test
