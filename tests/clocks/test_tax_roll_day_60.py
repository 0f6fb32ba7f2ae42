"""§ 370-10 G: one costs-incurred date, and the tax roll on or before day 60.

"Notice of the bill … shall be payable within 10 calendar days from the receipt
thereof. Within 60 days after such costs and expenses are incurred and remain
unpaid, the Village Clerk-Treasurer shall enter those charges onto the tax roll".
The costs are incurred when the crew finished (``abatement_done``): day 0. The
entry falls due as day 60 begins (village time), never while the bill is still
payable: then it is held for a person.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import Event, TaxRollDue, TaxRollHeld
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE

CHICAGO = ZoneInfo("America/Chicago")
MISSED = datetime(2026, 12, 20, 17, 0, tzinfo=CHICAGO)
DONE = datetime(2027, 1, 10, 10, 0, tzinfo=CHICAGO)  # the crew finished: day 0
DAY_60 = datetime(2027, 3, 11, 0, 0, tzinfo=CHICAGO)  # Jan 10 + 60 calendar days


def abated(received: datetime | None = datetime(2027, 1, 12, 9, 0, tzinfo=CHICAGO)) -> ClockEngine:
    """A case the village abated (owner unavailable), the crew done at ``DONE``."""
    engine = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    engine.enforcement.open("k", "a", MISSED, 1219.2, MISSED + timedelta(minutes=10))
    act(engine, "confirm_hazard", MISSED + timedelta(hours=1))
    act(engine, "owner_unavailable", MISSED + timedelta(hours=1))
    act(engine, "abatement_done", DONE)
    if received is not None:
        act(engine, "bill_received", received)
    return engine


def act(engine: ClockEngine, kind: str, at: datetime) -> list[Event]:
    return engine.act(parse_action(kind, "k", {}, at=at, who="Clerk Lee"))


def due(events: list[Event]) -> list[TaxRollDue]:
    return [e for e in events if isinstance(e, TaxRollDue)]


def held(events: list[Event]) -> list[TaxRollHeld]:
    return [e for e in events if isinstance(e, TaxRollHeld)]


@pytest.mark.parametrize(
    ("at", "entered"),
    [
        (datetime(2027, 3, 10, 0, 0, tzinfo=CHICAGO), False),  # day 59 begins
        (DAY_60 - timedelta(seconds=1), False),  # the last second of day 59
        (DAY_60, True),  # day 60 begins: due
        (datetime(2027, 3, 11, 23, 59, tzinfo=CHICAGO), True),  # within day 60
        (datetime(2027, 3, 12, 0, 0, tzinfo=CHICAGO), True),  # day 61: already entered on 60
    ],
)
def test_370_10_G_the_tax_roll_entry_is_due_on_day_60_not_day_61(
    at: datetime, entered: bool
) -> None:
    engine = abated()
    events = engine.advance(at)
    if not entered:
        assert due(events) == []
        assert engine.next_due() is not None
        assert engine.enforcement.cases["k"].tax_roll_at == DAY_60
        return
    [entry] = due(events)
    assert entry.at == DAY_60  # dated day 60, whenever the clock was advanced
    assert entry.at.astimezone(CHICAGO).date().isoformat() == "2027-03-11"
    assert entry.costs_incurred_at == DONE
    assert engine.enforcement.cases["k"].state == "tax_roll"


def test_370_10_G_a_bill_received_mar_1_is_payable_to_mar_11() -> None:
    engine = abated(received=datetime(2027, 3, 1, 14, 0, tzinfo=CHICAGO))
    case = engine.enforcement.cases["k"]
    assert case.bill_due == datetime(2027, 3, 12, 0, 0, tzinfo=CHICAGO)  # through Mar 11


def test_370_10_G_no_entry_while_the_bill_is_inside_its_payment_period_held_for_a_person() -> None:
    """Received Mar 1, payable to Mar 11, which is day 60: not entered, held for a person."""
    engine = abated(received=datetime(2027, 3, 1, 14, 0, tzinfo=CHICAGO))
    events = engine.advance(DAY_60)
    assert due(events) == []
    [hold] = held(events)
    assert hold.at == DAY_60
    assert hold.bill_due == datetime(2027, 3, 12, 0, 0, tzinfo=CHICAGO)
    assert "still inside its payment period" in hold.reason
    assert "66.0907(5)" in hold.citation
    # Told once; paid before its last day ends, it never reaches the roll.
    assert engine.advance(datetime(2027, 3, 11, 23, 59, tzinfo=CHICAGO)) == []
    act(engine, "paid_in_full", datetime(2027, 3, 11, 23, 59, tzinfo=CHICAGO))
    assert due(engine.advance(datetime(2027, 9, 1, tzinfo=CHICAGO))) == []
    assert engine.enforcement.cases["k"].state == "paid"


def test_370_10_G_a_bill_whose_last_day_is_day_59_goes_on_the_roll_on_day_60() -> None:
    engine = abated(received=datetime(2027, 2, 28, 14, 0, tzinfo=CHICAGO))  # payable to Mar 10
    [entry] = due(engine.advance(DAY_60))
    assert entry.at == DAY_60


def test_370_10_G_no_receipt_of_the_bill_on_record_is_held_for_a_person() -> None:
    engine = abated(received=None)
    events = engine.advance(DAY_60)
    assert due(events) == []
    [hold] = held(events)
    assert "receipt is not recorded" in hold.reason
    assert hold.bill_due is None


def test_370_10_G_a_bill_paid_before_day_60_never_reaches_the_roll() -> None:
    engine = abated()
    act(engine, "paid_in_full", datetime(2027, 1, 20, tzinfo=CHICAGO))
    events = engine.advance(datetime(2027, 6, 1, tzinfo=CHICAGO))
    assert due(events) == []
    assert held(events) == []


def test_370_10_G_the_held_entry_survives_a_restart_and_is_not_told_twice() -> None:
    engine = abated(received=datetime(2027, 3, 1, 14, 0, tzinfo=CHICAGO))
    assert held(engine.advance(DAY_60))
    restored = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    restored.restore(engine.snapshot())
    later = restored.advance(datetime(2027, 4, 1, tzinfo=CHICAGO))
    assert held(later) == []
    # Entered once, as its payment period ended (through Mar 11), not on the restart.
    [entry] = due(later)
    assert entry.at == datetime(2027, 3, 12, 0, 0, tzinfo=CHICAGO)
