"""A deadline is decided on the pole's evidence up to it, or goes to a person.

Pure engine, no sockets. "Live" here is the runner's part played by hand: it
advances the engine on its wall clock and names the poles whose readings are
known to be queued (``behind``); the readings come later, in their seq order.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.cessation import DetectionParams
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import (
    ClearingNeedsReview,
    ClearingUnverified,
    ClearingViolation,
    Event,
    Transition,
)
from sidewalk.core.contract import AnyReading
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE, Pole, storm
from tests.clocks.test_clearing_clock import of_type

CHICAGO = ZoneInfo("America/Chicago")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
DEADLINE = ONSET + timedelta(hours=28)  # a 4-hour storm, then 24 h
WAIT = DetectionParams().evidence_wait


def engine() -> ClockEngine:
    return ClockEngine(load_profile(), [FrontageSpec("a", DEVICE), FrontageSpec("b", DEVICE)])


def until_the_deadline(pole: Pole) -> tuple[list[AnyReading], list[AnyReading]]:
    """The storm (analytics had it) and the pole's readings around the deadline (queued)."""
    before = storm(pole, ONSET, hours=4)
    queued: list[AnyReading] = [
        pole.camera(DEADLINE - timedelta(minutes=30), "a", 1500.0),  # cleared to width
        pole.camera(DEADLINE - timedelta(minutes=30), "b", 0.0),  # never cleared
    ]
    queued += [pole.weather(DEADLINE + timedelta(minutes=m), 80.0) for m in (5, 10, 15, 20)]
    return before, queued


def clearing(events: list[Event]) -> list[tuple[str, str]]:
    return [(t.frontage, t.to_state) for t in of_type(events, Transition) if t.clock == "clearing"]


def test_replay_decides_at_once_on_evidence_in_order() -> None:
    before, queued = until_the_deadline(Pole())
    events = engine().feed(before + queued)
    assert clearing(events)[-2:] == [("a", "complied"), ("b", "violation")]
    assert of_type(events, ClearingNeedsReview) == []


def test_a_deadline_waits_while_the_poles_readings_are_queued_then_decides_on_them() -> None:
    """Analytics restarted 3 h after the deadline with the readings still queued."""
    pole = Pole()
    before, queued = until_the_deadline(pole)
    replayed = engine().feed(before + queued)
    live = engine()
    live.feed(before)
    # The runner's first ticks after the restart: the pole's readings are known queued.
    for minutes in (0, 1, 2):
        at = DEADLINE + timedelta(hours=3, minutes=minutes)
        assert live.advance(at, behind=[DEVICE]) == []
    assert {c.state for c in live.clocks.values()} == {"clearing_period"}
    events: list[Event] = []
    for reading in queued:
        events += live.observe(reading)
    assert clearing(events) == [("a", "complied"), ("b", "violation")]
    [violation] = of_type(events, ClearingViolation)
    assert violation == of_type(replayed, ClearingViolation)[0]  # the same decision, all of it
    assert of_type(events, ClearingUnverified) == []


def test_without_the_queue_known_the_same_restart_would_wait_from_the_deadline() -> None:
    """What the runner's ``behind`` prevents: 3 h of downtime counted as the pole's silence."""
    before, _ = until_the_deadline(Pole())
    live = engine()
    live.feed(before)
    events = live.advance(DEADLINE + timedelta(hours=3))
    assert clearing(events) == [("a", "needs_review"), ("b", "needs_review")]


def test_a_silent_pole_goes_to_review_after_the_wait_not_complied_nor_unverified() -> None:
    pole = Pole()
    before, queued = until_the_deadline(pole)
    eng = engine()
    eng.feed(before + queued[:2])  # the measurements before the deadline, then silence
    assert eng.next_due() == DEADLINE + WAIT
    assert eng.advance(DEADLINE + WAIT - timedelta(minutes=1)) == []
    events = eng.advance(DEADLINE + WAIT)
    assert clearing(events) == [("a", "needs_review"), ("b", "needs_review")]
    reviews = of_type(events, ClearingNeedsReview)
    assert [(r.frontage, r.reason, r.device) for r in reviews] == [
        ("a", "camera evidence missing", DEVICE),
        ("b", "camera evidence missing", DEVICE),
    ]
    assert reviews[0].evidence_through == DEADLINE - timedelta(minutes=30)
    assert of_type(events, ClearingViolation) == []
    assert of_type(events, ClearingUnverified) == []
    # Under review nothing more is due: only the evidence (or a person) ends it.
    assert eng.next_due() is None
    assert eng.advance(DEADLINE + timedelta(days=2)) == []


def test_a_pole_draining_a_long_buffer_after_the_review_still_decides_as_the_replay() -> None:
    """The pole was offline 5 h past the deadline; analytics was caught up and waited 2 h."""
    pole = Pole()
    before, queued = until_the_deadline(pole)
    replayed = engine().feed(before + queued)
    live = engine()
    live.feed(before)
    review = live.advance(DEADLINE + timedelta(hours=5))
    assert {c.state for c in live.clocks.values()} == {"needs_review"}
    assert len(of_type(review, ClearingNeedsReview)) == 2
    events: list[Event] = []
    for reading in queued:  # the buffer drains
        events += live.observe(reading)
    assert [(t.from_state, t.to_state) for t in of_type(events, Transition)] == [
        ("needs_review", "complied"),
        ("needs_review", "violation"),
    ]
    [violation] = of_type(events, ClearingViolation)
    [expected] = of_type(replayed, ClearingViolation)
    assert (violation.key, violation.deadline, violation.decided_at) == (
        expected.key,
        expected.deadline,
        expected.decided_at,
    )
    assert violation.measured_width_mm == expected.measured_width_mm == 0.0


def test_the_wait_counts_from_when_the_pole_was_last_heard_or_known_queued() -> None:
    pole = Pole()
    before, queued = until_the_deadline(pole)
    eng = engine()
    eng.feed(before + queued[:2])
    assert eng.advance(DEADLINE + timedelta(hours=1), behind=[DEVICE]) == []
    assert eng.next_due() == DEADLINE + timedelta(hours=1) + WAIT
    assert eng.advance(DEADLINE + timedelta(hours=2, minutes=30)) == []
    events = eng.advance(DEADLINE + timedelta(hours=1) + WAIT)
    assert clearing(events) == [("a", "needs_review"), ("b", "needs_review")]


def test_the_pole_through_the_deadline_with_no_fresh_measurement_is_unverified_for_review() -> None:
    """The pole's weather came through: its camera simply measured nothing fresh."""
    pole = Pole()
    before = storm(pole, ONSET, hours=4)
    after: list[AnyReading] = [
        pole.weather(DEADLINE + timedelta(minutes=m), 80.0) for m in (5, 10, 15)
    ]
    events = engine().feed(before + after)
    assert clearing(events)[-2:] == [("a", "unverified"), ("b", "unverified")]
    assert len(of_type(events, ClearingUnverified)) == 2


def test_the_wait_survives_a_snapshot() -> None:
    pole = Pole()
    before, queued = until_the_deadline(pole)
    first = engine()
    first.feed(before + queued[:2])
    first.advance(DEADLINE + timedelta(hours=1), behind=[DEVICE])
    second = engine()
    second.restore(first.snapshot())
    assert second.next_due() == first.next_due() == DEADLINE + timedelta(hours=1) + WAIT
    assert second.progress == first.progress
    assert second.snapshot() == first.snapshot()


def test_new_snow_after_the_deadline_decides_the_waiting_cycle_first() -> None:
    """The pole's onset reading is past the deadline: its evidence up to it is in."""
    pole = Pole()
    before, queued = until_the_deadline(pole)
    eng = engine()
    eng.feed(before + queued[:2])
    events = eng.feed(storm(pole, DEADLINE + timedelta(hours=1), hours=2, base=80.0))
    assert clearing(events)[:4] == [
        ("a", "complied"),
        ("b", "violation"),
        ("a", "snowing"),
        ("b", "snowing"),
    ]
