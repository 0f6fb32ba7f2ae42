"""§ 370-10 A's ice: a walk cleared to 4 ft with untreated ice on it has not complied.

"Sidewalks are to be kept clear of snow and ice to a minimum of four feet in
width. In the event that ice has formed on any sidewalk in such a manner that it
cannot be removed, the owner … shall keep the sidewalk sprinkled with sand and/or
salt". Sensed (a wet or icy surface at or below freezing) or entered by an
inspector; the record says which, with the readings.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import (
    ClearingUnverified,
    ClearingViolation,
    Event,
    HazardCandidate,
    Transition,
)
from sidewalk.core.contract import ContractError, SnowMeasurement, parse_payload
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE, Pole, storm

CHICAGO = ZoneInfo("America/Chicago")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
DEADLINE = ONSET + timedelta(hours=4 + 24)
DECIDED = DEADLINE + timedelta(minutes=10)
WIDE = 1500.0  # cleared to more than 4 ft (1219.2 mm)


def engine_after_storm() -> tuple[ClockEngine, Pole]:
    engine = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    pole = Pole()
    engine.feed(storm(pole, ONSET, hours=4))
    return engine, pole


def decide(engine: ClockEngine, pole: Pole, *readings: object) -> list[Event]:
    """Feed the readings before the deadline, one camera report after it, and decide."""
    # Ignored: the helper takes its readings as ``object``s.
    events: list[Event] = engine.feed(list(readings))  # type: ignore[arg-type]
    events += engine.feed([pole.camera(DEADLINE + timedelta(minutes=5), "a", WIDE)])
    return events + engine.advance(DECIDED)


def act(engine: ClockEngine, kind: str, target: str, at: datetime, **detail: object) -> list[Event]:
    return engine.act(parse_action(kind, target, detail, at=at, who="Inspector Vogel"))


def decision(events: list[Event]) -> Transition:
    [final] = [e for e in events if isinstance(e, Transition) and e.from_state == "clearing_period"]
    return final


def test_370_10_A_untreated_ice_is_a_violation_on_a_walk_cleared_to_4_ft_sensed_by_the_pole() -> (
    None
):
    engine, pole = engine_after_storm()
    pavement = pole.pavement(DEADLINE - timedelta(minutes=20), -3.0)
    camera = pole.camera(DEADLINE - timedelta(minutes=15), "a", WIDE, surface="ice")
    events = decide(engine, pole, pavement, camera)
    assert decision(events).to_state == "violation"
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    assert violation.measured_width_mm == WIDE
    assert violation.ice is not None
    assert violation.ice["status"] == "untreated"
    assert violation.ice["known_by"] == "sensor"
    readings = violation.ice["readings"]
    assert readings["surface_state"] == "ice"
    assert readings["surface_temp_c"] == -3.0
    assert readings["surface_temp"]["seq"] == pavement.seq  # which reading gave the temperature
    assert readings["camera"]["seq"] == camera.seq
    [candidate] = [e for e in events if isinstance(e, HazardCandidate)]
    assert candidate.reasons == ("untreated ice on the walk (seen by the pole's sensors)",)
    case = engine.enforcement.cases[violation.key]
    assert case.ice is True


@pytest.mark.parametrize(
    ("surface", "temp", "decided"),
    [
        ("wet", 0.0, "violation"),  # at freezing: ice
        ("wet", -0.5, "violation"),
        ("wet", 0.5, "complied"),  # wet above freezing is not ice
        ("dry", -8.0, "complied"),
        ("treated", -8.0, "complied"),  # sand or salt seen on it
    ],
)
def test_370_10_A_a_wet_or_icy_surface_at_or_below_freezing_is_ice(
    surface: str, temp: float, decided: str
) -> None:
    engine, pole = engine_after_storm()
    camera = pole.camera(
        DEADLINE - timedelta(minutes=15), "a", WIDE, surface=surface, surface_temp_c=temp
    )
    final = decision(decide(engine, pole, camera))
    assert final.to_state == decided
    if decided == "violation":
        assert final.detail["ice"]["readings"]["surface_temp_c"] == temp
        assert "surface_temp" not in final.detail["ice"]["readings"]  # the camera's own


def test_370_10_A_untreated_ice_an_inspector_recorded_is_a_violation_said_so_in_the_record() -> (
    None
):
    engine, pole = engine_after_storm()
    act(engine, "record_ice", "a", DEADLINE - timedelta(hours=1), note="glaze by the drive")
    events = decide(engine, pole, pole.camera(DEADLINE - timedelta(minutes=15), "a", WIDE))
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    assert violation.ice is not None
    assert (violation.ice["status"], violation.ice["known_by"]) == ("untreated", "inspector")
    assert violation.ice["readings"]["inspector"] == "Inspector Vogel"
    assert violation.ice["by"]["kind"] == "person"
    [candidate] = [e for e in events if isinstance(e, HazardCandidate)]
    assert candidate.reasons == ("untreated ice on the walk (seen by an inspector)",)


def test_370_10_A_ice_sanded_or_salted_before_the_deadline_complies() -> None:
    engine, pole = engine_after_storm()
    icy = pole.camera(DEADLINE - timedelta(hours=2), "a", WIDE, surface="ice", surface_temp_c=-4.0)
    engine.feed([icy])
    act(engine, "record_treated", "a", DEADLINE - timedelta(hours=1))
    final = decision(decide(engine, pole))
    assert final.to_state == "complied"
    assert final.detail["treated"] is True
    assert final.cause.kind == "person"
    assert final.detail["ice"]["known_by"] == "inspector"


def test_370_10_A_ice_seen_again_after_a_treatment_is_untreated_ice() -> None:
    engine, pole = engine_after_storm()
    act(engine, "record_treated", "a", DEADLINE - timedelta(hours=3))
    later = pole.camera(
        DEADLINE - timedelta(minutes=15), "a", WIDE, surface="ice", surface_temp_c=-4.0
    )
    assert decision(decide(engine, pole, later)).to_state == "violation"


def test_370_10_A_ice_the_camera_suspects_with_no_temperature_goes_to_an_inspector() -> None:
    """Cleared to width, ice suspected, no surface temperature: not complied, not a notice."""
    engine, pole = engine_after_storm()
    camera = pole.camera(DEADLINE - timedelta(minutes=15), "a", WIDE, ice=True)
    events = decide(engine, pole, camera)
    assert decision(events).to_state == "unverified"
    [unverified] = [e for e in events if isinstance(e, ClearingUnverified)]
    assert "ice suspected" in unverified.reason
    assert [e for e in events if isinstance(e, ClearingViolation)] == []


def test_370_10_A_a_width_measurement_does_not_cure_an_ice_violation() -> None:
    engine, pole = engine_after_storm()
    camera = pole.camera(
        DEADLINE - timedelta(minutes=15), "a", WIDE, surface="ice", surface_temp_c=-2.0
    )
    events = decide(engine, pole, camera)
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    case = engine.enforcement.cases[violation.key]
    # Wide, surface not measured: the ice is not known to be gone.
    engine.feed([pole.camera(DECIDED + timedelta(hours=1), "a", WIDE)])
    assert case.state == "notice_issued"
    # Wide and still icy: not cured either.
    engine.feed(
        [pole.camera(DECIDED + timedelta(hours=2), "a", WIDE, surface="wet", surface_temp_c=-1.0)]
    )
    assert case.state == "notice_issued"
    # Seen dry: cured.
    engine.feed(
        [pole.camera(DECIDED + timedelta(hours=3), "a", WIDE, surface="dry", surface_temp_c=-1.0)]
    )
    assert case.state == "cured"


def test_370_10_A_ice_sanded_or_salted_after_the_notice_cures_the_ice_violation() -> None:
    engine, pole = engine_after_storm()
    act(engine, "record_ice", "a", DEADLINE - timedelta(hours=1))
    events = decide(engine, pole, pole.camera(DEADLINE - timedelta(minutes=15), "a", WIDE))
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    cured = act(engine, "record_treated", "a", DECIDED + timedelta(hours=2))
    assert [t.to_state for t in cured if isinstance(t, Transition)] == ["cured"]
    assert engine.enforcement.cases[violation.key].state == "cured"


def test_370_10_A_record_ice_outside_a_clearing_period_is_refused() -> None:
    engine = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    with pytest.raises(ValueError, match="no clearing period is running"):
        act(engine, "record_ice", "a", ONSET)
    with pytest.raises(KeyError):
        act(engine, "record_ice", "nowhere", ONSET)


def test_370_10_A_the_pole_temperature_survives_a_restart() -> None:
    engine, pole = engine_after_storm()
    engine.feed([pole.pavement(DEADLINE - timedelta(minutes=20), -3.0)])
    restored = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    restored.restore(engine.snapshot())
    camera = pole.camera(DEADLINE - timedelta(minutes=15), "a", WIDE, surface="wet")
    assert decision(decide(restored, pole, camera)).to_state == "violation"


def test_370_10_A_surface_fields_are_optional_unit_named_and_checked_by_the_contract() -> None:
    topic = "sidewalk/v1/clyman/pole-1/snow"
    base = (
        b'{"schema":1,"device":"pole-1","seq":7,"ts":1765400000000,"frontage":"a",'
        b'"snow_cover_fraction":0.1,"cleared_width_mm":1300.0'
    )
    old = parse_payload(topic, base + b"}")
    assert isinstance(old, SnowMeasurement)
    assert (old.surface_state, old.surface_temp_c) == (None, None)
    new = parse_payload(topic, base + b',"surface_state":"wet","surface_temp_c":-1.5}')
    assert isinstance(new, SnowMeasurement)
    assert (new.surface_state, new.surface_temp_c) == ("wet", -1.5)
    assert b"surface_state" not in old.to_json()  # absent stays absent on the wire
    for bad in (b',"surface_state":"slush"}', b',"surface_temp_c":-99}'):
        with pytest.raises(ContractError):
            parse_payload(topic, base + bad)


def test_370_10_A_the_simulated_pole_reports_ice_and_the_notice_says_how_it_was_known(
    tmp_path: Path,
) -> None:
    """first-storm with untreated ice on A's walk, cleared to its full 5 ft: a third notice."""
    from sidewalk.scenarios import Surface, expand, load_scenario
    from sidewalk.system import open_cases, replay_in_process

    story = load_scenario("first-storm")
    icy = Surface(
        frontage="main-st-101", at=datetime(2026, 12, 11, 12, 0, tzinfo=CHICAGO), state="ice",
        surface_temp_c=-2.5,
    )  # fmt: skip
    story = story.model_copy(update={"surface": [icy]})
    rows = [
        r for r in expand(story) if r.stream == "snow" and r.values["frontage"] == "main-st-101"
    ]
    late = [r for r in rows if r.ts_ms >= icy.at.timestamp() * 1000]
    assert late
    assert all(r.values["surface_state"] == "ice" for r in late)
    assert all("surface_state" not in r.values for r in rows if r not in late)
    profile = load_profile()
    cases = open_cases(f"sqlite:///{tmp_path / 'cases.sqlite3'}", profile)
    _, notices = replay_in_process(story, cases, profile)
    assert sorted(n.frontage_id for n in notices) == ["main-st-101", "main-st-103", "main-st-105"]
    a = next(n for n in notices if n.frontage_id == "main-st-101")
    violation = cases.clocks.get_violation(a.violation_id or 0)
    assert violation.evidence["ice"]["known_by"] == "sensor"
    assert violation.evidence["measured_width_mm"] >= 1219.2
    assert a.body_text is not None
    text = " ".join(a.body_text.split())
    assert "ice on the sidewalk that had not been sanded or salted" in text
    assert "pavement temperature -2.5 °C (measured with the camera reading)" in text
    audit = [r.action for r in cases.audit.list(f"violation:{violation.key}")]
    assert "hazard.candidate" in audit
    assert datetime.fromisoformat(str(violation.evidence["deadline"])) == datetime(
        2026, 12, 11, 23, 0, tzinfo=UTC
    )
