"""§ 370-10 G: a bill still payable on day 60 reaches the tax roll all the same.

"Within 60 days after such costs and expenses are incurred and remain unpaid, the
Village Clerk-Treasurer shall enter those charges onto the tax roll". A bill the
owner may still pay on day 60 (received late, or in the last days) is not entered
while it is payable: the clerk is told once, and the entry is made at the first
lawful moment, as its payment period ends, if still unpaid, with the reason it is
late in words. A bill whose receipt was not on record on day 60 follows the same
way once its receipt is recorded. Costs: the crew finished Jan 10 (day 0); day 60
is Mar 11.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import Event, TaxRollDue, TaxRollHeld
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE

CHICAGO = ZoneInfo("America/Chicago")
MISSED = datetime(2026, 12, 20, 17, 0, tzinfo=CHICAGO)
DONE = datetime(2027, 1, 10, 10, 0, tzinfo=CHICAGO)
DAY_60 = datetime(2027, 3, 11, 0, 0, tzinfo=CHICAGO)


def abated() -> ClockEngine:
    """A case the Village abated (owner unavailable), the crew done at ``DONE``."""
    engine = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    engine.enforcement.open("k", "a", MISSED, 1219.2, MISSED + timedelta(minutes=10))
    act(engine, "confirm_hazard", MISSED + timedelta(hours=1))
    act(engine, "owner_unavailable", MISSED + timedelta(hours=1))
    act(engine, "abatement_done", DONE)
    return engine


def act(engine: ClockEngine, kind: str, at: datetime) -> list[Event]:
    return engine.act(parse_action(kind, "k", {}, at=at, who="Clerk Lee"))


def due(events: list[Event]) -> list[TaxRollDue]:
    return [e for e in events if isinstance(e, TaxRollDue)]


def held(events: list[Event]) -> list[TaxRollHeld]:
    return [e for e in events if isinstance(e, TaxRollHeld)]


def test_a_bill_payable_past_day_60_is_entered_as_its_payment_period_ends() -> None:
    engine = abated()
    act(engine, "bill_received", datetime(2027, 3, 5, 14, 0, tzinfo=CHICAGO))  # through Mar 15
    [hold] = held(engine.advance(DAY_60))
    assert "payable through Monday, March 15, 2027" in hold.reason
    assert "entered on Tuesday, March 16, 2027" in hold.reason
    # Nothing while the owner may still pay; the engine has the entry on its schedule.
    assert engine.advance(datetime(2027, 3, 15, 23, 59, tzinfo=CHICAGO)) == []
    first_lawful = datetime(2027, 3, 16, 0, 0, tzinfo=CHICAGO)
    assert engine.next_due() == first_lawful
    events = engine.advance(datetime(2027, 9, 1, tzinfo=CHICAGO))
    [entry] = due(events)
    assert entry.at == first_lawful  # dated when it first could be, not when advanced
    assert entry.costs_incurred_at == DONE
    assert "66.0907(5)" in entry.citation
    assert entry.late is not None
    assert entry.late.startswith("Entered on the tax roll on Tuesday, March 16, 2027, after day 60")
    assert "Thursday, March 11, 2027" in entry.late
    assert "received on Friday, March 5, 2027" in entry.late
    assert "through Monday, March 15, 2027" in entry.late
    assert "_" not in entry.late
    assert "T00:00" not in entry.late  # no machine timestamps in the clerk's words
    assert held(events) == []  # told once
    assert engine.enforcement.cases["k"].state == "tax_roll"
    assert engine.advance(datetime(2028, 1, 1, tzinfo=CHICAGO)) == []  # entered once


def test_a_receipt_recorded_after_day_60_starts_its_own_payment_period_then_the_roll() -> None:
    engine = abated()
    [hold] = held(engine.advance(DAY_60 + timedelta(days=5)))
    assert "receipt is not recorded" in hold.reason
    assert engine.next_due() is None  # waits for the receipt: a person records it
    act(engine, "bill_received", datetime(2027, 3, 20, 9, 0, tzinfo=CHICAGO))  # through Mar 30
    assert due(engine.advance(datetime(2027, 3, 30, 23, 0, tzinfo=CHICAGO))) == []
    [entry] = due(engine.advance(datetime(2027, 4, 2, tzinfo=CHICAGO)))
    assert entry.at == datetime(2027, 3, 31, 0, 0, tzinfo=CHICAGO)
    assert entry.late is not None
    assert "received on Saturday, March 20, 2027" in entry.late


def test_a_late_bill_paid_within_its_period_never_reaches_the_roll() -> None:
    engine = abated()
    act(engine, "bill_received", datetime(2027, 3, 5, 14, 0, tzinfo=CHICAGO))
    assert held(engine.advance(DAY_60))
    act(engine, "paid_in_full", datetime(2027, 3, 15, 16, 0, tzinfo=CHICAGO))
    assert due(engine.advance(datetime(2027, 9, 1, tzinfo=CHICAGO))) == []
    assert engine.enforcement.cases["k"].state == "paid"


def test_a_bill_entered_on_day_60_says_nothing_of_lateness() -> None:
    engine = abated()
    act(engine, "bill_received", datetime(2027, 1, 12, 9, 0, tzinfo=CHICAGO))
    [entry] = due(engine.advance(DAY_60))
    assert (entry.at, entry.late) == (DAY_60, None)


def test_the_scheduled_late_entry_survives_a_restart() -> None:
    engine = abated()
    act(engine, "bill_received", datetime(2027, 3, 5, 14, 0, tzinfo=CHICAGO))
    assert held(engine.advance(DAY_60))
    restored = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    restored.restore(engine.snapshot())
    assert restored.next_due() == datetime(2027, 3, 16, 0, 0, tzinfo=CHICAGO)
    [entry] = due(restored.advance(datetime(2027, 4, 1, tzinfo=CHICAGO)))
    assert entry.late is not None
