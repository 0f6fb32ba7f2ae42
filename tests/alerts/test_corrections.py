"""Correcting or undoing a wrong entry: the § 370-10 case recomputes from the corrected facts.

Pure: the clock engine's ``Enforcement`` with ``correct_entry`` actions, as the runner
applies them after ``alerts.corrections`` records them (the command line and the
dashboard are tested in tests/cli/test_act.py and tests/dashboard/test_corrections.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.casework import entries
from sidewalk.analytics.clocks.actions import ActionError, EnforcementAction, parse_action
from sidewalk.analytics.clocks.enforcement import Enforcement
from sidewalk.analytics.clocks.events import (
    AbatementOrdered,
    AbatementWithdrawn,
    Event,
    OffenseCounted,
    Transition,
)
from sidewalk.analytics.clocks.states import CaseState
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import ActionRecord

CHICAGO = ZoneInfo("America/Chicago")
MISSED = datetime(2026, 12, 10, 17, 0, tzinfo=CHICAGO)
SERVED = datetime(2026, 12, 11, 9, 0, tzinfo=CHICAGO)
KEY = "violation-a"
DAY = timedelta(hours=24)  # the profile's § 370-10 B(2) period (unconfirmed) and E's offense


def case() -> Enforcement:
    enforcement = Enforcement(load_profile())
    enforcement.open(KEY, "a", MISSED, 1219.2, MISSED)
    return enforcement


def act(e: Enforcement, kind: str, at: datetime, **detail: object) -> list[Event]:
    action = parse_action(kind, KEY, detail, at=at, who="clerk-lee")
    assert isinstance(action, EnforcementAction)
    return e.act(action)


def fix(
    e: Enforcement, step: str, at: datetime, *, undo: bool = False, **more: object
) -> list[Event]:
    return act(e, "correct_entry", at, entry=1, step=step, reason="entered wrongly", undo=undo,
               **more)  # fmt: skip


def test_370_10_b_a_corrected_service_time_moves_the_owners_deadline() -> None:
    e = case()
    act(e, "record_delivery", SERVED, method="hand")
    [moved] = fix(e, "record_delivery", SERVED + timedelta(hours=3))
    assert isinstance(moved, Transition)
    assert e.cases[KEY].notice_deadline == SERVED + timedelta(hours=3) + DAY
    assert (moved.to_state, moved.detail["corrects"], moved.detail["reason"]) == (
        CaseState.NOTICE_PERIOD, 1, "entered wrongly",
    )  # fmt: skip
    # The old deadline passes with nothing ordered; the corrected one orders the work.
    assert not [x for x in e.advance(SERVED + DAY + timedelta(minutes=1))
                if isinstance(x, AbatementOrdered)]  # fmt: skip
    [order] = [x for x in e.advance(SERVED + DAY + timedelta(hours=4))
               if isinstance(x, AbatementOrdered)]  # fmt: skip
    assert order.at == SERVED + timedelta(hours=3) + DAY


def test_370_10_b_a_correction_to_a_method_that_does_not_count_is_refused() -> None:
    e = case()
    act(e, "record_delivery", SERVED, method="hand")
    with pytest.raises(ValueError, match="delivery by email does not start the period"):
        fix(e, "record_delivery", SERVED, method="email")
    assert e.cases[KEY].notice_deadline == SERVED + DAY


def test_370_10_f_undoing_a_service_after_its_period_ran_out_withdraws_the_order() -> None:
    """No order stands on a void service; the violation itself (E's offenses) goes on."""
    e = case()
    act(e, "record_delivery", SERVED, method="posted")
    e.advance(SERVED + DAY + timedelta(minutes=1))
    assert e.cases[KEY].state == CaseState.ABATEMENT_ORDERED
    events = fix(e, "record_delivery", SERVED, undo=True)
    [withdrawn] = [x for x in events if isinstance(x, AbatementWithdrawn)]
    assert (withdrawn.key, e.cases[KEY].state) == (f"{KEY}/abatement", CaseState.NOTICE_ISSUED)
    assert e.cases[KEY].notice_deadline is None
    later = e.advance(SERVED + 3 * DAY)
    assert not [x for x in later if isinstance(x, AbatementOrdered)]
    assert [x for x in later if isinstance(x, OffenseCounted)]  # still a continuing violation


def test_370_10_f_a_service_corrected_to_later_reopens_the_period_and_orders_again() -> None:
    e = case()
    act(e, "record_delivery", SERVED, method="hand")
    e.advance(SERVED + DAY + timedelta(minutes=1))
    events = fix(e, "record_delivery", SERVED + timedelta(hours=2))
    assert [type(x).__name__ for x in events] == ["Transition", "AbatementWithdrawn"]
    assert e.cases[KEY].state == CaseState.NOTICE_PERIOD
    [order] = [x for x in e.advance(SERVED + 2 * DAY) if isinstance(x, AbatementOrdered)]
    assert order.at == SERVED + timedelta(hours=2) + DAY


def test_370_10_g_the_crews_completion_is_corrected_before_the_bill_and_not_after() -> None:
    e = case()
    act(e, "record_delivery", SERVED, method="hand")
    e.advance(SERVED + DAY + timedelta(minutes=1))
    done = SERVED + 2 * DAY
    act(e, "abatement_done", done)
    # The costs' date (day 0 of G's 60) follows the corrected completion.
    fix(e, "abatement_done", done + DAY)
    assert e.cases[KEY].costs_incurred_at == done + DAY
    before = e.cases[KEY].tax_roll_at
    assert before is not None
    assert before.date() == (done + DAY + 60 * DAY).astimezone(CHICAGO).date()
    # A service resting under the crew's work cannot be undone by the engine either.
    with pytest.raises(ValueError, match="no service to correct"):
        fix(e, "record_delivery", SERVED, undo=True)
    act(e, "bill_received", done + 2 * DAY)
    with pytest.raises(ValueError, match="before the bill's receipt"):
        fix(e, "abatement_done", done, undo=True)


def test_a_correction_needs_a_reason_and_a_correctable_step() -> None:
    with pytest.raises(ActionError, match="reason"):
        parse_action("correct_entry", KEY, {"entry": 1, "step": "record_delivery",
                     "reason": "  "}, at=SERVED, who="clerk-lee")  # fmt: skip
    with pytest.raises(ActionError, match="step"):
        parse_action("correct_entry", KEY, {"entry": 1, "step": "paid_in_full",
                     "reason": "typo"}, at=SERVED, who="clerk-lee")  # fmt: skip


def _record(i: int, kind: str, at: datetime, **detail: object) -> ActionRecord:
    return ActionRecord(i, kind, KEY, at, "clerk-lee", detail, at, at, None)


def test_entries_fold_corrections_and_keep_the_entry_as_recorded() -> None:
    served = _record(1, "record_delivery", SERVED, notice="CLY-2026-000001", method="hand")
    moved = _record(2, "correct_entry", SERVED + timedelta(hours=1), entry=1,
                    step="record_delivery", reason="r", method="posted")  # fmt: skip
    refused = ActionRecord(3, "correct_entry", KEY, SERVED, "x", {"entry": 1, "undo": True},
                           SERVED, SERVED, "refused by the runner")  # fmt: skip
    [entry] = entries([served, moved, refused])
    assert (entry.at, entry.method, entry.undone) == (SERVED + timedelta(hours=1), "posted", False)
    assert entry.recorded == served  # unchanged
    undone = _record(4, "correct_entry", SERVED, entry=1, step="record_delivery", reason="r",
                     undo=True)  # fmt: skip
    [entry] = entries([served, moved, refused, undone])
    assert entry.undone
    assert [c.id for c in entry.corrections] == [2, 4]
