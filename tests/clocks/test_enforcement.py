"""§ 370-10 B–G after a violation.

Notice periods from delivery, hazard, abatement, offenses, bill, tax roll.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TypeVar
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.enforcement import Enforcement, end_of_calendar_day
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import (
    AbatementOrdered,
    Cause,
    ClearingViolation,
    Event,
    HazardCandidate,
    NoticeRequired,
    OffenseCounted,
    TaxRollDue,
    Transition,
)
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE, Pole, storm

CHICAGO = ZoneInfo("America/Chicago")
T = TypeVar("T")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
DEADLINE = ONSET + timedelta(hours=4 + 24)  # four hours of snow, then 24 h
DECIDED = DEADLINE + timedelta(minutes=10)


def of_type(events: list[Event], kind: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, kind)]


def violated(
    *, width_mm: float = 300.0, ice: bool = False
) -> tuple[ClockEngine, Pole, str, list[Event]]:
    """An engine whose frontage "a" has just been found in violation."""
    engine = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    pole = Pole()
    readings = storm(pole, ONSET, hours=4)
    readings.append(pole.camera(DEADLINE - timedelta(minutes=15), "a", width_mm, ice=ice))
    readings.append(pole.camera(DEADLINE + timedelta(minutes=5), "a", width_mm, ice=ice))
    events = engine.feed(sorted(readings, key=lambda r: r.ts))
    events += engine.advance(DECIDED)
    [violation] = of_type(events, ClearingViolation)
    return engine, pole, violation.key, events


def act(engine: ClockEngine, kind: str, target: str, at: datetime, **detail: object) -> list[Event]:
    return engine.act(parse_action(kind, target, detail, at=at, who="officer-7"))


def states(events: list[Event]) -> list[str]:
    return [t.to_state for t in of_type(events, Transition) if t.clock == "enforcement"]


def test_a_violation_requires_the_written_notice() -> None:
    _, _, key, events = violated()
    [notice] = of_type(events, NoticeRequired)
    assert (notice.kind, notice.violation_key, notice.at) == ("clearing_violation", key, DECIDED)
    assert "unconfirmed" in notice.detail["period"]


def test_the_notice_period_runs_from_delivery_then_the_village_abates() -> None:
    engine, _, key, _ = violated()
    delivered = DECIDED + timedelta(hours=5)
    events = act(engine, "record_delivery", key, delivered)
    assert states(events) == ["notice_period"]
    assert of_type(events, Transition)[0].detail["unconfirmed"] is True
    assert engine.next_due() == DEADLINE + timedelta(hours=24)  # the next offense comes first
    events = engine.advance(delivered + timedelta(hours=24) - timedelta(seconds=1))
    assert of_type(events, AbatementOrdered) == []
    events = engine.advance(delivered + timedelta(hours=24))
    [order] = of_type(events, AbatementOrdered)
    assert order.at == delivered + timedelta(hours=24)
    assert order.reason == "notice_expired"


def test_a_walk_cleared_during_the_notice_period_cures_the_case() -> None:
    engine, pole, key, _ = violated()
    delivered = DECIDED + timedelta(hours=1)
    act(engine, "record_delivery", key, delivered)
    events = engine.observe(pole.camera(delivered + timedelta(hours=3), "a", 1300.0))
    assert states(events) == ["cured"]
    assert of_type(engine.advance(delivered + timedelta(days=3)), AbatementOrdered) == []


def test_hazard_two_hours_run_from_delivery_not_from_issue() -> None:
    engine, _, key, events = violated(width_mm=0.0)
    [candidate] = of_type(events, HazardCandidate)
    assert "no path cleared at all" in candidate.reasons
    confirmed = DECIDED + timedelta(minutes=20)
    events = act(engine, "confirm_hazard", key, confirmed)
    assert [n.kind for n in of_type(events, NoticeRequired)] == ["hazard_notice"]
    delivered = confirmed + timedelta(hours=3)  # issue + 3 h: the clock has not started yet
    assert (
        of_type(engine.advance(confirmed + timedelta(hours=2, minutes=30)), AbatementOrdered) == []
    )
    events = act(engine, "record_delivery", key, delivered)
    assert states(events) == ["hazard_period"]
    assert (
        of_type(engine.advance(delivered + timedelta(hours=1, minutes=59)), AbatementOrdered) == []
    )
    [order] = of_type(engine.advance(delivered + timedelta(hours=2)), AbatementOrdered)
    assert order.at == delivered + timedelta(hours=2)


def test_owner_unavailable_means_immediate_abatement_and_an_after_the_fact_notice() -> None:
    engine, _, key, _ = violated(width_mm=0.0)
    act(engine, "confirm_hazard", key, DECIDED)
    events = act(engine, "owner_unavailable", key, DECIDED + timedelta(minutes=5))
    [order] = of_type(events, AbatementOrdered)
    assert order.reason == "owner_unavailable"
    assert order.at == DECIDED + timedelta(minutes=5)
    assert [n.kind for n in of_type(events, NoticeRequired)] == ["hazard_abatement_notice"]


def test_each_started_24_hour_period_is_a_separate_offense_until_cured() -> None:
    engine, pole, key, _ = violated()
    events = engine.advance(DEADLINE + timedelta(hours=24))
    assert [o.count for o in of_type(events, OffenseCounted)] == [2]
    events = engine.advance(DEADLINE + timedelta(hours=47))
    assert of_type(events, OffenseCounted) == []
    act(engine, "record_delivery", key, DEADLINE + timedelta(hours=20))
    engine.observe(pole.camera(DEADLINE + timedelta(hours=47, minutes=30), "a", 1500.0))
    events = engine.advance(DEADLINE + timedelta(days=5))
    assert of_type(events, OffenseCounted) == []
    assert engine.enforcement.cases[key].offenses == 2


def test_new_snow_does_not_nullify_a_pending_notice() -> None:
    engine, pole, key, _ = violated()
    act(engine, "record_delivery", key, DECIDED + timedelta(hours=1))
    second = DECIDED + timedelta(hours=3)
    events = engine.feed(storm(pole, second, hours=3, base=100.0))
    clearing = [t.to_state for t in of_type(events, Transition) if t.clock == "clearing"]
    assert clearing[0] == "snowing"
    assert engine.enforcement.cases[key].state == "notice_period"
    events = engine.advance(DECIDED + timedelta(hours=25))
    assert len(of_type(events, AbatementOrdered)) == 1


def test_bill_due_ten_calendar_days_after_receipt_and_tax_roll_sixty_days_after_costs() -> None:
    engine, _, key, _ = violated()
    act(engine, "record_delivery", key, DECIDED)
    engine.advance(DECIDED + timedelta(hours=24))
    abated = datetime(2026, 12, 14, 10, 0, tzinfo=CHICAGO)
    act(engine, "abatement_done", key, abated, note="crew of 3")
    events = act(engine, "bill_received", key, datetime(2026, 12, 18, 15, 0, tzinfo=CHICAGO))
    [billed] = of_type(events, Transition)
    due_at = datetime.fromisoformat(billed.detail["due"])
    assert due_at == datetime(2026, 12, 29, 0, 0, tzinfo=CHICAGO)
    # Dec 14 + 60 days = Feb 12: the entry is due as day 60 begins (§ 370-10 G "within").
    tax_roll_at = datetime(2027, 2, 12, 0, 0, tzinfo=CHICAGO)
    assert of_type(engine.advance(tax_roll_at - timedelta(seconds=1)), TaxRollDue) == []
    [due] = of_type(engine.advance(tax_roll_at), TaxRollDue)
    assert due.costs_incurred_at == abated
    assert "66.0907(5)" in due.citation


def test_a_bill_paid_in_time_never_reaches_the_tax_roll() -> None:
    engine, _, key, _ = violated()
    act(engine, "record_delivery", key, DECIDED)
    engine.advance(DECIDED + timedelta(hours=24))
    act(engine, "abatement_done", key, DECIDED + timedelta(days=2))
    act(engine, "bill_received", key, DECIDED + timedelta(days=4))
    act(engine, "paid_in_full", key, DECIDED + timedelta(days=9))
    assert of_type(engine.advance(DECIDED + timedelta(days=200)), TaxRollDue) == []


def test_ice_that_was_treated_complies_and_untreated_ice_is_a_hazard_candidate() -> None:
    _, _, _, events = violated(ice=True)
    [candidate] = of_type(events, HazardCandidate)
    assert "ice suspected on the walk" in candidate.reasons
    engine = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    pole = Pole()
    readings = storm(pole, ONSET, hours=4)
    readings.append(pole.camera(DEADLINE - timedelta(minutes=15), "a", 300.0, ice=True))
    readings.append(pole.camera(DEADLINE + timedelta(minutes=5), "a", 300.0, ice=True))
    engine.feed(readings[:60])
    act(engine, "record_treated", "a", ONSET + timedelta(hours=10))
    events = engine.feed(readings[60:]) + engine.advance(DECIDED)
    assert of_type(events, ClearingViolation) == []
    final = [t for t in of_type(events, Transition) if t.from_state == "clearing_period"]
    assert final[0].to_state == "complied"
    assert final[0].detail["treated"] is True
    assert final[0].cause.kind == "person"


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("abatement_done", "no abatement"),
        ("bill_received", "no bill"),
        ("owner_unavailable", "undelivered hazard"),
    ],
)
def test_a_step_out_of_order_is_refused(kind: str, why: str) -> None:
    engine, _, key, _ = violated()
    with pytest.raises(ValueError, match=why):
        act(engine, kind, key, DECIDED)


def test_an_unknown_case_is_refused() -> None:
    engine, _, _, _ = violated()
    with pytest.raises(KeyError):
        act(engine, "record_delivery", "nope", DECIDED)


def test_calendar_days_end_at_local_midnight_across_dst() -> None:
    received = datetime(2026, 10, 30, 9, 0, tzinfo=CHICAGO)  # CDT; DST ends Nov 1
    due = end_of_calendar_day(received, 10, CHICAGO)
    assert due == datetime(2026, 11, 10, 0, 0, tzinfo=CHICAGO)
    assert due.astimezone(CHICAGO).utcoffset() == timedelta(hours=-6)


def test_the_hazard_two_hours_are_real_hours_across_the_fall_change() -> None:
    """Delivered 1:30 AM CDT on Nov 1, 2026: two real hours later is 2:30 AM CST."""
    profile = load_profile()
    engine = ClockEngine(profile, [FrontageSpec("a", DEVICE)])
    engine.enforcement.open(
        "k",
        "a",
        datetime(2026, 10, 31, 12, 0, tzinfo=CHICAGO),
        1219.2,
        datetime(2026, 10, 31, 12, 10, tzinfo=CHICAGO),
    )
    act(engine, "confirm_hazard", "k", datetime(2026, 11, 1, 0, 30, tzinfo=CHICAGO))
    delivered = datetime(2026, 11, 1, 1, 30, tzinfo=CHICAGO)
    assert delivered.utcoffset() == timedelta(hours=-5)
    act(engine, "record_delivery", "k", delivered)
    due = engine.enforcement.cases["k"].notice_deadline
    assert due is not None
    assert due.timestamp() - delivered.timestamp() == 2 * 3600
    assert due.astimezone(CHICAGO).strftime("%H:%M %Z") == "02:30 CST"


def test_a_frame_cures_only_the_cases_its_width_meets_as_cases_come_and_go() -> None:
    """§ 370-10 A's width cures a case; ``measured`` skips a frame narrower than every
    live case's width without testing each, and must not skip one that meets a case
    opened (or a narrower one left) since it last looked."""
    cases = Enforcement(load_profile())
    seq = iter(range(1, 100))

    def frame(width_mm: float, hours: int) -> list[str]:
        at = DECIDED + timedelta(hours=hours)
        cause = Cause(kind="frame", at=at, device=DEVICE, seq=next(seq))
        cured = [e for e in cases.measured("a", at, width_mm, cause) if isinstance(e, Transition)]
        cases.advance(at)  # as the engine does at each instant: finished cases leave
        return [str(e.detail["violation"]) for e in cured]

    cases.open("wide", "a", DEADLINE, 1524.0, DECIDED)
    assert frame(1300.0, 1) == []  # narrower than the only case: skipped
    assert frame(1300.0, 2) == []
    cases.open("narrow", "a", DEADLINE, 1219.0, DECIDED)  # a case asking less
    assert frame(1300.0, 3) == ["narrow"]
    assert frame(1300.0, 4) == []  # "wide" is left, and 1,300 mm does not meet it
    assert frame(1524.0, 5) == ["wide"]
    assert not cases.watching("a")


def test_a_walk_within_the_cameras_tolerance_of_the_width_cures_as_it_would_comply() -> None:
    """The same test both ways: a walk no more than ``snow_and_ice.width_tolerance``
    short of four feet is not found too narrow, so, cleared so after a notice, it cures
    the case; one short by more does not (the owner's favour, never a stricter cure)."""
    profile = load_profile()
    tolerance = profile.snow_and_ice.width_tolerance.length_mm
    required = profile.snow_and_ice.clearing_min_width.length_mm
    engine, pole, key, _ = violated()
    delivered = DECIDED + timedelta(hours=1)
    act(engine, "record_delivery", key, delivered)
    short = engine.observe(pole.camera(delivered + timedelta(hours=2), "a",
                                       required - tolerance - 5.0))  # fmt: skip
    assert states(short) == []
    within = engine.observe(pole.camera(delivered + timedelta(hours=3), "a",
                                        required - tolerance + 1.0))  # fmt: skip
    assert states(within) == ["cured"]
