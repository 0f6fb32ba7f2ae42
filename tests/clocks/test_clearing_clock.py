"""§ 370-10 A clearing clock: pure engine tests, no sockets, no sleeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.cessation import DetectionParams
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import (
    ClearingUnverified,
    ClearingViolation,
    Event,
    Transition,
)
from sidewalk.core.clock import format_local, to_ms
from sidewalk.core.contract import AnyReading, WeatherReading
from sidewalk.core.profile import Profile, load_profile
from tests.clocks.streams import DEVICE, Pole, every, storm

CHICAGO = ZoneInfo("America/Chicago")
FOUR_FT_MM = 1219.2
T = TypeVar("T")
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example_village.toml"


def engine(profile: Profile | None = None, frontages: tuple[str, ...] = ("a",)) -> ClockEngine:
    return ClockEngine(profile or load_profile(), [FrontageSpec(f, DEVICE) for f in frontages])


def of_type(events: list[Event], kind: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, kind)]


def run(eng: ClockEngine, readings: list[AnyReading]) -> list[Event]:
    return eng.feed(sorted(readings, key=lambda r: (r.ts, r.seq)))


def test_uncleared_frontage_is_a_violation_24_hours_after_snow_stops() -> None:
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    readings = storm(pole, onset, hours=6)
    readings.append(pole.camera(onset + timedelta(hours=29), "a", 0.0))
    readings.append(pole.camera(onset + timedelta(hours=30, minutes=5), "a", 0.0))
    readings.append(pole.weather(onset + timedelta(hours=31), 120.0))
    events = run(engine(), readings)
    [violation] = of_type(events, ClearingViolation)
    assert violation.cessation_at == onset + timedelta(hours=6)
    assert violation.deadline == datetime(2026, 12, 11, 12, 0, tzinfo=CHICAGO)
    assert violation.measured_width_mm == 0.0
    assert violation.required_width_mm == pytest.approx(FOUR_FT_MM)
    assert "§ 370-10 A" in violation.citation
    states = [(t.from_state, t.to_state) for t in violation.history]
    assert states == [
        ("idle", "snowing"),
        ("snowing", "clearing_period"),
        ("clearing_period", "violation"),
    ]


# A's four feet as the camera measures them: short only by more than its stated uncertainty.
TOLERANCE_MM = load_profile().snow_and_ice.width_tolerance.length_mm


@pytest.mark.parametrize(
    ("width_mm", "expected"),
    [
        (FOUR_FT_MM, "complied"),
        (FOUR_FT_MM + 200, "complied"),
        (FOUR_FT_MM - 1, "complied"),  # within the camera's uncertainty of four feet
        (FOUR_FT_MM - TOLERANCE_MM, "complied"),
        (FOUR_FT_MM - TOLERANCE_MM - 1, "violation"),
        (609.6, "violation"),
    ],
)
def test_four_foot_width_is_the_line(width_mm: float, expected: str) -> None:
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    readings = storm(pole, onset, hours=4)
    readings.append(pole.camera(onset + timedelta(hours=27), "a", width_mm))
    readings.append(pole.weather(onset + timedelta(hours=30), 80.0))
    eng = engine()
    events = run(eng, readings)
    final = [e for e in of_type(events, Transition) if e.from_state == "clearing_period"]
    assert [t.to_state for t in final] == [expected]
    assert len(of_type(events, ClearingViolation)) == (1 if expected == "violation" else 0)


def test_the_latest_measurement_before_the_deadline_decides() -> None:
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    readings = storm(pole, onset, hours=4)
    deadline = onset + timedelta(hours=28)
    readings.append(pole.camera(deadline - timedelta(hours=5), "a", 0.0))
    readings.append(pole.camera(deadline - timedelta(minutes=30), "a", 1500.0))
    readings.append(pole.camera(deadline + timedelta(minutes=5), "a", 0.0))  # after: irrelevant
    readings.append(pole.weather(deadline + timedelta(hours=1), 80.0))
    events = run(engine(), readings)
    assert of_type(events, ClearingViolation) == []
    assert [t.to_state for t in of_type(events, Transition)][-1] == "complied"


def test_no_fresh_measurement_means_an_inspector_must_look_not_a_violation() -> None:
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    readings = storm(pole, onset, hours=4)
    readings.append(pole.camera(onset + timedelta(hours=5), "a", 0.0))  # 23 h before the deadline
    readings.append(pole.weather(onset + timedelta(hours=30), 80.0))
    events = run(engine(), readings)
    assert of_type(events, ClearingViolation) == []
    [unverified] = of_type(events, ClearingUnverified)
    assert unverified.deadline == onset + timedelta(hours=28)


def test_new_snow_before_the_deadline_restarts_the_clock_from_the_next_cessation() -> None:
    pole = Pole()
    first = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    second = first + timedelta(hours=12)
    readings = storm(pole, first, hours=3)
    readings = [r for r in readings if r.ts < to_ms(second - timedelta(minutes=30))]
    readings += storm(pole, second, hours=2, base=60.0)
    readings.append(pole.camera(second + timedelta(hours=25), "a", 0.0))
    readings.append(pole.weather(second + timedelta(hours=28), 100.0))
    events = run(engine(), readings)
    [violation] = of_type(events, ClearingViolation)
    assert violation.cessation_at == second + timedelta(hours=2)
    assert violation.deadline == second + timedelta(hours=26)
    restarted = [t for t in of_type(events, Transition) if t.detail.get("restarted")]
    assert len(restarted) == 1


def test_fall_dst_change_deadline_is_24_real_hours() -> None:
    """Snow stops at 00:30 CDT on Nov 1, 2026; clocks fall back at 02:00 that night."""
    pole = Pole()
    cessation = datetime(2026, 11, 1, 0, 30, tzinfo=CHICAGO)
    assert cessation.utcoffset() == timedelta(hours=-5)
    cessation = cessation.astimezone(UTC)  # offsets below are real elapsed time
    readings = storm(pole, cessation - timedelta(hours=3), hours=3)
    readings.append(pole.weather(cessation + timedelta(hours=26), 60.0))
    [violation] = of_type(run(engine(), readings), ClearingUnverified)
    deadline = violation.deadline
    assert (deadline - cessation) == timedelta(hours=24)
    assert deadline.timestamp() - cessation.timestamp() == 24 * 3600
    assert format_local(deadline, CHICAGO) == "Sunday, November 1, 2026 at 11:30 PM CST"


def test_spring_dst_change_deadline_is_24_real_hours() -> None:
    """Snow stops at 01:30 CST on Mar 8, 2026; clocks spring forward at 02:00."""
    pole = Pole()
    cessation = datetime(2026, 3, 8, 1, 30, tzinfo=CHICAGO).astimezone(UTC)
    readings = storm(pole, cessation - timedelta(hours=2), hours=2)
    readings.append(pole.camera(cessation + timedelta(hours=23), "a", 300.0))
    readings.append(pole.camera(cessation + timedelta(hours=24, minutes=30), "a", 300.0))
    readings.append(pole.weather(cessation + timedelta(hours=26), 40.0))
    [violation] = of_type(run(engine(), readings), ClearingViolation)
    assert violation.deadline.timestamp() - cessation.timestamp() == 24 * 3600
    assert format_local(violation.deadline, CHICAGO) == "Monday, March 9, 2026 at 2:30 AM CDT"


def test_sensor_noise_alone_never_starts_a_snowfall() -> None:
    pole = Pole()
    start = datetime(2026, 12, 1, 0, 0, tzinfo=CHICAGO)
    noise = [3.0, -3.0, 2.5, -2.0, 3.9, -3.9]
    readings: list[AnyReading] = [
        pole.weather(t, 50.0 + noise[i % len(noise)])
        for i, t in enumerate(every(start, start + timedelta(days=2), timedelta(minutes=5)))
    ]
    assert run(engine(), readings) == []


def test_rain_above_freezing_is_not_snow() -> None:
    pole = Pole()
    start = datetime(2026, 12, 1, 0, 0, tzinfo=CHICAGO)
    readings: list[AnyReading] = []
    for t in every(start, start + timedelta(hours=6), timedelta(minutes=5)):
        pole.seq += 1
        readings.append(
            WeatherReading(device=DEVICE, seq=pole.seq, ts=to_ms(t), precip_mm=0.6, air_temp_c=4.0)
        )
    assert run(engine(), readings) == []


def test_out_of_order_and_duplicate_readings_never_move_a_clock_backwards() -> None:
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    readings = storm(pole, onset, hours=4)
    readings.append(pole.camera(onset + timedelta(hours=27), "a", 0.0))
    readings.append(pole.weather(onset + timedelta(hours=30), 80.0))
    clean = run(engine(), readings)
    eng = engine()
    shuffled: list[Event] = []
    ordered = sorted(readings, key=lambda r: r.ts)
    for i, reading in enumerate(ordered):
        shuffled += eng.observe(reading)
        shuffled += eng.advance(reading.event_time)
        if i > 10:  # replay an old reading and a duplicate after the fact
            shuffled += eng.observe(ordered[i - 10])
            shuffled += eng.observe(reading)
            shuffled += eng.advance(ordered[i - 10].event_time)
    assert [type(e).__name__ for e in shuffled] == [type(e).__name__ for e in clean]
    assert (
        of_type(shuffled, ClearingViolation)[0].deadline
        == of_type(clean, ClearingViolation)[0].deadline
    )


def test_the_decision_key_is_stable_so_a_replay_cannot_make_a_second_notice() -> None:
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    readings = storm(pole, onset, hours=4)
    readings.append(pole.camera(onset + timedelta(hours=27), "a", 0.0))
    readings.append(pole.weather(onset + timedelta(hours=30), 80.0))
    keys = [of_type(run(engine(), readings), ClearingViolation)[0].key for _ in range(2)]
    assert keys[0] == keys[1]
    assert keys[0].startswith("a:clearing:")


def test_another_villages_profile_gives_its_own_clock() -> None:
    """Example Village: 12-hour deadline, 6-ft width: nothing is hard-coded."""
    example = load_profile(EXAMPLE)
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    readings = storm(pole, onset, hours=4)
    readings.append(pole.camera(onset + timedelta(hours=15), "a", 1500.0))  # 4.9 ft: fine in Clyman
    readings.append(pole.weather(onset + timedelta(hours=20), 80.0))
    [violation] = of_type(run(engine(example), readings), ClearingViolation)
    assert violation.deadline == onset + timedelta(hours=16)
    assert violation.required_width_mm == pytest.approx(6 * 304.8)
    clyman = run(engine(), readings)
    assert of_type(clyman, ClearingViolation) == []


def test_next_due_tells_the_scheduler_the_exact_deadline() -> None:
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    eng = engine(frontages=("a", "b"))
    for reading in storm(pole, onset, hours=4):
        eng.observe(reading)
        eng.advance(reading.event_time)
    params = DetectionParams()
    deadline = onset + timedelta(hours=28)
    # Nothing from the camera since the deadline yet: wait for it, at most evidence_wait.
    assert eng.next_due() == deadline + params.evidence_wait
    eng.observe(pole.camera(deadline + timedelta(minutes=1), "a", 0.0))
    assert eng.next_due() == deadline + params.decision_grace


def test_a_pole_still_buffering_does_not_lose_its_evidence_to_the_server_clock() -> None:
    """The camera's measurements arrive after the deadline (an outage): they still decide."""
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    deadline = onset + timedelta(hours=28)
    eng = engine()
    eng.feed(storm(pole, onset, hours=4))
    assert eng.advance(deadline + timedelta(minutes=30)) == []  # waiting for the camera
    late = [pole.camera(deadline - timedelta(minutes=10), "a", 1500.0)]
    late.append(pole.camera(deadline + timedelta(minutes=5), "a", 1500.0))
    events: list[Event] = []
    for reading in late:
        events += eng.observe(reading)
    assert [t.to_state for t in of_type(events, Transition)] == ["complied"]


def test_a_snapshot_taken_anywhere_resumes_to_exactly_the_same_decisions() -> None:
    """Restart safety: stop after any reading, restore a new engine from the snapshot, go on."""
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
    readings = storm(pole, onset, hours=5)
    readings += storm(pole, onset + timedelta(hours=9), hours=2, base=100.0)
    readings.append(pole.camera(onset + timedelta(hours=34), "a", 0.0))
    readings.append(pole.camera(onset + timedelta(hours=34), "b", 1400.0))
    readings.append(pole.weather(onset + timedelta(hours=40), 120.0))
    readings.sort(key=lambda r: (r.ts, r.seq))
    whole = engine(frontages=("a", "b")).feed(readings)
    for cut in (1, 40, 90, 150, len(readings) - 2):
        first = engine(frontages=("a", "b"))
        events = first.feed(readings[:cut])
        second = engine(frontages=("a", "b"))
        second.restore(first.snapshot())
        events += second.feed(readings[cut:])
        assert events == whole, f"differs when restarted after reading {cut}"
        first.feed(readings[cut:])
        assert first.snapshot() == second.snapshot()
    assert of_type(whole, ClearingViolation)[0].frontage == "a"


def test_a_walk_measured_at_exactly_the_rule_complies() -> None:
    """6 ft is 1828.8000000000002 mm in floating point; 1828.8 mm measured is 6 ft."""
    example = load_profile(EXAMPLE)
    pole = Pole()
    onset = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO).astimezone(UTC)
    deadline = onset + timedelta(hours=16)
    readings = storm(pole, onset, hours=4)
    readings.append(pole.camera(deadline - timedelta(minutes=5), "a", 1828.8))
    readings.append(pole.camera(deadline + timedelta(minutes=5), "a", 1828.8))
    readings.append(pole.weather(deadline + timedelta(hours=1), 80.0))
    events = run(engine(example), readings)
    assert of_type(events, ClearingViolation) == []
    assert [t.to_state for t in of_type(events, Transition)][-1] == "complied"
