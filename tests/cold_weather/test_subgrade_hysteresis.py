"""Frozen subgrade from the ground probes: deadband and minimum dwell, a bounded state over a
winter, and pours judged on the ground as it was at the pour (event time)."""

from __future__ import annotations

import itertools
import math
import random
from datetime import UTC, datetime, timedelta

from pydantic import TypeAdapter

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.cold_weather import (
    FROZEN_SUBGRADE,
    ColdState,
    Pour,
    next_subgrade_state,
    subgrade_frozen,
    thaw_above_c,
)
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import Event, RuleFinding, Transition
from sidewalk.analytics.clocks.permits import StreetOpeningPermit
from sidewalk.core.profile import Profile, load_profile
from tests.clocks.live import EXAMPLE_PROFILE
from tests.cold_weather.test_cold_weather_engine import Probe, clocks, moves

CLYMAN = load_profile()
EXAMPLE = load_profile(EXAMPLE_PROFILE)
T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_the_thaw_edge_is_the_threshold_plus_the_deadband_in_each_profile() -> None:
    assert thaw_above_c(CLYMAN) == 0.5  # 0 °C + 0.5 °C
    # Example Village: 1 °C + a 2 °F difference (10/9 °C), not 2 °F read as a temperature.
    assert math.isclose(thaw_above_c(EXAMPLE), 1.0 + 10 / 9)


def test_a_probe_hovering_at_the_threshold_does_not_flap() -> None:
    rng = random.Random(7)
    # Every 5 minutes for a day: 0 °C ± 0.4 °C, inside Clyman's 0.5 °C deadband.
    temps = [rng.uniform(-0.4, 0.4) for _ in range(288)]
    probe, engine = Probe(), clocks(CLYMAN)
    out = engine.feed([probe.ground(at(5 * i), t) for i, t in enumerate(temps)])
    raw = [subgrade_frozen(t, CLYMAN) for t in temps]
    raw_flips = sum(a != b for a, b in itertools.pairwise(raw))
    assert raw_flips > 50  # the bare threshold would open and close the pour window all day
    first_frozen = next(i for i, f in enumerate(raw) if f)
    states = moves(out, FROZEN_SUBGRADE)
    # Thawed until the first reading at or below 0 °C, then frozen for good.
    assert states == ([("unknown", "thawed")] if first_frozen else []) + [
        ("thawed" if first_frozen else "unknown", "frozen")
    ]
    assert out[-1].at == at(5 * first_frozen)
    assert engine.frozen_sites() == ["main-st"]


def test_thawing_needs_the_whole_dwell_above_the_band_and_a_dip_restarts_it() -> None:
    probe, engine = Probe(), clocks(CLYMAN)
    series = [
        (0, -1.0),  # frozen at once
        (60, 0.6),  # above 0.5 °C: the 2-hour dwell starts
        (120, 0.9),
        (150, 0.4),  # back inside the band: the dwell restarts
        (180, 0.7),  # starts again here
        (290, 0.8),  # 1 h 50 min: not yet
        (300, 0.8),  # 2 h exactly: thawed
        (310, 0.2),  # inside the band, above the threshold: stays thawed
    ]
    out = engine.feed([probe.ground(at(m), t) for m, t in series])
    assert [(t.from_state, t.to_state, t.at) for t in out] == [
        ("unknown", "frozen", at(0)),
        ("frozen", "thawed", at(300)),
    ]
    assert out[1].cause.seq == 7


def test_example_villages_band_and_dwell_are_its_own() -> None:
    profile: Profile = EXAMPLE
    state, since = next_subgrade_state("frozen", None, 2.0, at(0), profile)
    assert (state, since) == ("frozen", None)  # 2.0 °C is inside 1 °C + 1.11 °C
    state, since = next_subgrade_state("frozen", None, 2.2, at(0), profile)
    assert (state, since) == ("frozen", at(0))
    assert next_subgrade_state("frozen", since, 2.2, at(179), profile) == ("frozen", at(0))
    assert next_subgrade_state("frozen", since, 2.2, at(180), profile) == ("thawed", None)
    # Clyman's 2-hour dwell would have thawed it an hour earlier.
    assert next_subgrade_state("frozen", at(0), 2.2, at(120), CLYMAN) == ("thawed", None)


def test_a_whole_winter_keeps_the_cold_state_flat() -> None:
    codec = TypeAdapter(ColdState)
    rng = random.Random(11)
    engine = clocks(CLYMAN)
    probe = Probe()
    start = datetime(2026, 11, 15, 6, tzinfo=UTC)
    sizes: dict[int, int] = {}
    transitions = 0
    for day in range(137):  # Nov 15 – Apr 1, a reading every 15 minutes
        noon = start + timedelta(days=day)
        if day % 7 == 3:  # a pour and a permit every week, as staff would enter them
            engine.record_pour(Pour(f"p{day}", "sidewalk", noon, "Main", site="main-st"))
            permit = StreetOpeningPermit(f"s{day}", "Main St", noon)
            engine.record_permit(permit)
        for q in range(96):
            when = noon + timedelta(minutes=15 * q)
            season = -3 * math.sin(math.pi * day / 137)  # colder mid-winter
            ground = season + 0.8 * math.sin(2 * math.pi * q / 96) + rng.gauss(0, 0.3)
            air_f = 30 + 15 * math.sin(2 * math.pi * q / 96) + rng.gauss(0, 3)
            transitions += len(engine.feed([probe.ground(when, ground), probe.air(when, air_f)]))
        if day in {10, 136}:
            sizes[day] = len(codec.dump_json(engine.state()))
    assert transitions > 40  # a season's worth of clocks ran (frost, keep-off, expiry)
    # 72 h of readings, both ends included, and the one just before them.
    assert len(engine.subgrade["main-st"].recent) == 72 * 4 + 2
    # Twelve times the readings since day 10 add nothing; only the staff's entries
    # (a pour and a permit a week, kept so a repeated id is refused) add a little each.
    entries = 2 * len([d for d in range(11, 137) if d % 7 == 3])
    assert sizes[136] - sizes[10] < 500 * entries
    assert len(engine.keep_off) == len(engine.permits) == 20


# -- § 370-5 (9) judged at the pour's own instant ------------------------------------


def _engine(profile: Profile = CLYMAN) -> ClockEngine:
    return ClockEngine(profile, [FrontageSpec("main-st-101", "pole-1")])


def _pour(engine: ClockEngine, pour_at: datetime, entered_at: datetime, pid: str) -> list[Event]:
    forecast = [
        {"at": (pour_at + timedelta(hours=h)).isoformat(), "temp_f": 45.0} for h in (-1, 80)
    ]
    detail = {"kind": "sidewalk", "at": pour_at.isoformat(), "frontage": "main-st-101",
              "forecast": forecast}  # fmt: skip
    return engine.act(parse_action("record_pour", pid, detail, at=entered_at, who="Dana Reyes"))


def _ground_day(engine: ClockEngine, probe: Probe) -> None:
    # Frozen through the morning, then well above the band from 10:00 on.
    for h in range(24):
        temp = -2.0 if h < 10 else 3.0
        engine.observe(probe.ground(at(60 * h), temp))
        engine.advance(at(60 * h))


def _subgrade_findings(events: list[Event]) -> list[RuleFinding]:
    return [
        e
        for e in events
        if isinstance(e, RuleFinding) and e.rule == "cold_weather.frozen_subgrade_at_or_below"
    ]


def test_a_pour_entered_late_is_judged_on_the_ground_at_the_pour() -> None:
    def run() -> tuple[list[Event], list[Event]]:
        engine, probe = _engine(), Probe()
        _ground_day(engine, probe)  # the engine is at 23:00; the probes say thawed since noon
        early = _pour(engine, at(8 * 60), at(23 * 60), "WO-1")  # poured at 08:00: frozen then
        late = _pour(engine, at(13 * 60), at(23 * 60), "WO-2")  # 13:00: thawed (dwell done)
        return early, late

    early, late = run()
    [frozen] = _subgrade_findings(early)
    assert (frozen.severity, frozen.at, frozen.subject) == ("violation", at(8 * 60), "pour:WO-1")
    assert "-2 °C is frozen" in frozen.message
    [start] = [e for e in early if isinstance(e, Transition)]
    assert start.detail["subgrade"] == "frozen"
    assert _subgrade_findings(late) == []
    assert run() == (early, late)  # deterministic under replay


def test_inside_the_dwell_a_pour_is_still_on_frozen_ground() -> None:
    engine, probe = _engine(), Probe()
    _ground_day(engine, probe)  # above the band from 10:00; thawed only at 12:00
    [finding] = _subgrade_findings(_pour(engine, at(11 * 60), at(23 * 60), "WO-3"))
    assert "still counts as frozen" in finding.message
    assert finding.unconfirmed


def test_a_pour_older_than_the_kept_readings_has_an_unknown_subgrade() -> None:
    engine, probe = _engine(EXAMPLE), Probe()  # Example Village keeps 48 h (its forecast window)
    _ground_day(engine, probe)
    engine.observe(probe.ground(at(60 * 24 * 4), 3.0))
    [finding] = _subgrade_findings(_pour(engine, at(60), at(60 * 24 * 4), "WO-4"))
    assert (finding.severity, finding.at) == ("unknown", at(60))
