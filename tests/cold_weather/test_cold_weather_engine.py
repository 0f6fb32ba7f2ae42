"""ColdWeatherClocks: the event-time engine piece for probes, pours and permits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.cold_weather import (
    FROZEN_SUBGRADE,
    KEEP_OFF,
    OPENING_PERMIT,
    ColdWeatherClocks,
    Pour,
)
from sidewalk.analytics.clocks.events import Transition
from sidewalk.analytics.clocks.permits import StreetOpeningPermit
from sidewalk.core.calendar import plus_elapsed
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import SnowMeasurement, WeatherReading
from sidewalk.core.profile import Profile, load_profile
from sidewalk.core.units import f_to_c

CHICAGO = ZoneInfo("America/Chicago")
CLYMAN = load_profile()
EXAMPLE = load_profile(Path(__file__).resolve().parents[1] / "data" / "example_village.toml")
T0 = datetime(2026, 10, 20, 8, tzinfo=CHICAGO)


class Probe:
    """One pole's ground probe and air sensor, with a running seq."""

    def __init__(self, device: str = "pole-1") -> None:
        self.device = device
        self.seq = 0

    def ground(self, at: datetime, temp_c: float) -> WeatherReading:
        self.seq += 1
        return WeatherReading(
            device=self.device,
            seq=self.seq,
            ts=to_ms(at),
            ground_temp_c=temp_c,
            ground_probe_depth_mm=300,
        )

    def air(self, at: datetime, temp_f: float) -> WeatherReading:
        self.seq += 1
        return WeatherReading(
            device=self.device, seq=self.seq, ts=to_ms(at), air_temp_c=f_to_c(temp_f)
        )


def clocks(profile: Profile = CLYMAN) -> ColdWeatherClocks:
    return ColdWeatherClocks(profile, {"pole-1": "main-st"})


def moves(transitions: list[Transition], clock: str) -> list[tuple[str, str]]:
    return [(t.from_state, t.to_state) for t in transitions if t.clock == clock]


def hours(h: float) -> datetime:
    return plus_elapsed(T0, timedelta(hours=h))


def test_the_probe_turns_frozen_subgrade_on_and_off_at_its_reading_time() -> None:
    probe, engine = Probe(), clocks()
    readings = [
        probe.ground(hours(0), 1.5),
        probe.ground(hours(1), 0.0),
        probe.ground(hours(2), -0.4),
        probe.ground(hours(3), 0.1),  # inside the 0.5 °C deadband: still frozen
        probe.ground(hours(4), 0.6),  # above it: the 2-hour dwell starts
        probe.ground(hours(5), 0.7),
        probe.ground(hours(6), 0.8),  # above it for 2 hours: thawed, at this reading
    ]
    out = engine.feed(readings)
    assert moves(out, FROZEN_SUBGRADE) == [
        ("unknown", "thawed"),
        ("thawed", "frozen"),
        ("frozen", "thawed"),
    ]
    assert [t.at for t in out] == [hours(0), hours(1), hours(6)]
    assert out[2].detail["thaw_above_c"] == 0.5
    frozen = out[1]
    assert frozen.frontage == "main-st"
    assert frozen.at == hours(1)
    assert (frozen.cause.kind, frozen.cause.device, frozen.cause.seq) == ("reading", "pole-1", 2)
    assert frozen.detail["unconfirmed"] is True
    assert frozen.detail["probe_depth_mm"] == 300
    assert engine.frozen_sites() == []


def test_example_villages_threshold_freezes_the_subgrade_earlier() -> None:
    probe = Probe()
    reading = probe.ground(hours(0), 0.8)
    assert moves(clocks(EXAMPLE).feed([reading]), FROZEN_SUBGRADE) == [("unknown", "frozen")]
    assert moves(clocks(CLYMAN).feed([reading]), FROZEN_SUBGRADE) == [("unknown", "thawed")]


def test_readings_from_other_devices_and_streams_change_nothing() -> None:
    engine = clocks()
    stranger = Probe("pole-9").ground(hours(0), -5.0)
    camera = SnowMeasurement(
        device="pole-1",
        seq=1,
        ts=to_ms(hours(0)),
        frontage="a",
        snow_cover_fraction=0.0,
        cleared_width_mm=2000.0,
    )
    assert engine.observe(stranger) == []
    assert engine.observe(camera) == []


def test_a_warm_walk_pour_ends_its_keep_off_at_48_hours() -> None:
    probe, engine = Probe(), clocks()
    [start] = engine.record_pour(
        Pour("p1", "sidewalk", T0, "101 Main", site="main-st"), who="clerk"
    )
    assert (start.from_state, start.to_state, start.at) == ("idle", "keep_off_normal", T0)
    assert start.cause.who == "clerk"
    assert engine.next_due() == hours(48)
    out = engine.feed([probe.air(hours(h), 65.0) for h in range(0, 60, 6)])
    [ended] = [t for t in out if t.clock == KEEP_OFF]
    assert (ended.to_state, ended.at, ended.cause.kind) == ("ended", hours(48), "deadline")
    assert engine.next_due() is None


def test_the_first_reading_below_50_f_lengthens_the_keep_off_to_96_hours() -> None:
    probe, engine = Probe(), clocks()
    engine.record_pour(Pour("p1", "sidewalk", T0, "101 Main", site="main-st"))
    out = engine.feed(
        [probe.air(hours(10), 50.0), probe.air(hours(20), 49.0), probe.air(hours(30), 40.0)]
    )
    assert moves(out, KEEP_OFF) == [("keep_off_normal", "keep_off_cold")]
    assert out[-1].at == hours(20)
    assert out[-1].cause.seq == 2
    assert engine.advance(hours(95.9)) == []
    [ended] = engine.advance(hours(97))
    assert (ended.to_state, ended.at) == ("ended", hours(96))


def test_a_cold_reading_at_the_48th_hour_comes_too_late_to_lengthen_it() -> None:
    probe, engine = Probe(), clocks()
    engine.record_pour(Pour("p1", "sidewalk", T0, "101 Main", site="main-st"))
    out = engine.feed([probe.air(hours(1), 60.0), probe.air(hours(48), 30.0)])
    assert moves(out, KEEP_OFF) == [("keep_off_normal", "ended")]


def test_with_no_temperature_at_all_the_cold_period_applies() -> None:
    engine = clocks()
    engine.record_pour(Pour("p1", "sidewalk", T0, "101 Main", site="main-st"))
    out = engine.advance(hours(100))
    assert moves(out, KEEP_OFF) == [
        ("keep_off_normal", "keep_off_cold"),
        ("keep_off_cold", "ended"),
    ]
    assert [t.at for t in out] == [hours(48), hours(96)]
    assert "cold weather assumed" in str(out[0].detail["note"])


def test_a_street_pour_is_protected_three_days_and_records_the_subgrade() -> None:
    probe, engine = Probe(), clocks()
    engine.feed([probe.ground(hours(-1), -1.0)])
    [start] = engine.record_pour(Pour("s1", "street", T0, "Main at Elm", site="main-st"))
    assert start.to_state == "protected"
    assert start.detail["subgrade"] == "frozen"
    assert start.detail["citation"] == "§ 370-7G"
    [ended] = engine.advance(hours(80))
    assert (ended.to_state, ended.at) == ("ended", hours(72))


def test_a_permit_expires_at_the_end_of_its_last_local_day_and_a_renewal_is_a_new_record() -> None:
    engine = clocks()
    permit = StreetOpeningPermit(
        "permit-7", "main-st-100", datetime(2026, 10, 10, 14, tzinfo=CHICAGO)
    )
    [valid] = engine.record_permit(permit, who="dpw")
    assert (valid.clock, valid.from_state, valid.to_state) == (OPENING_PERMIT, "none", "valid")
    due = datetime(2026, 11, 10, 6, tzinfo=UTC)
    assert engine.next_due() == due
    assert engine.advance(due - timedelta(seconds=1)) == []
    [expired] = engine.advance(due + timedelta(hours=1))
    assert (expired.to_state, expired.at, expired.cause.kind) == ("expired", due, "deadline")
    assert expired.detail["cause"] == f"permits.opening_permit_validity ended at {due.isoformat()}"
    renewed_at = due + timedelta(hours=2)
    [revived] = engine.record_permit(
        StreetOpeningPermit("permit-7", "main-st-100", permit.approved_at, renewals=1),
        at=renewed_at,
    )
    # The expired record closed: the renewal is a record of its own, and so is its expiry.
    assert (revived.from_state, revived.to_state, revived.at) == ("none", "valid", renewed_at)
    assert revived.detail["record"] == "renewal-1"
    assert engine.next_due() == datetime(2026, 12, 10, 6, tzinfo=UTC)


def test_advance_never_goes_back_and_a_replay_gives_the_same_transitions() -> None:
    def run() -> list[Transition]:
        probe, engine = Probe(), clocks()
        out = engine.record_pour(Pour("p1", "sidewalk", T0, "101 Main", site="main-st"))
        out += engine.feed(
            [probe.ground(hours(h), 2.0 - h / 10) for h in range(0, 40, 4)]
            + [probe.air(hours(h), 55.0 - h / 4) for h in range(0, 100, 8)]
        )
        out += engine.advance(hours(200))
        assert engine.advance(hours(150)) == []
        # Only the last forecast window (72 h) of transitions is kept in memory.
        assert engine.history == [t for t in out if t.at >= hours(200 - 72)]
        assert len(engine.history) < len(out)
        return out

    first, second = run(), run()
    assert first == second
    assert moves(first, FROZEN_SUBGRADE) == [("unknown", "thawed"), ("thawed", "frozen")]
    assert moves(first, KEEP_OFF)[-1] == ("keep_off_cold", "ended")
