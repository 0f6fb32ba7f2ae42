"""§ 370-10 G: the crew's recorded completion is the costs' date everywhere.

The bill, its expenses, its notice and the tax-roll clock all count from the
completion the crew recorded (``abatement_done``), never from the time the bill
was made; the entry is certified on day 60; a bill still payable then is held.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from sidewalk.alerts.accounts import bill_abatement, record_bill_receipt
from sidewalk.alerts.billing import AbatementWork, BillingInputError
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.calendar import add_calendar_days, local_date, start_of_day
from sidewalk.core.clock import format_local
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore


def _abated(runner: AnalyticsRunner, cases: CaseStore) -> tuple[str, int, datetime]:
    """main-st-103's case abated at once (owner unavailable); the crew done 3 h later."""
    [first] = cases.notices.list(kind="clearing_violation", frontage_id="main-st-103")
    key = cases.clocks.get_violation(first.violation_id or 0).key
    assert runner.engine.now is not None
    start = runner.engine.now
    cases.actions.record("confirm_hazard", key, start, "Officer Quinn")
    cases.actions.record("owner_unavailable", key, start, "Officer Quinn")
    runner.tick()
    abatement = cases.bills.abatement_by_key(f"{key}/abatement")
    assert abatement is not None
    return key, abatement.id, start + timedelta(hours=3)


def test_370_10_G_the_bill_states_the_recorded_completion_not_the_billing_time(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    issuer = NoticeIssuer(cases, profile)
    key, abatement_id, done = _abated(runner, cases)
    work = AbatementWork(crew_hours=Decimal(2))
    with pytest.raises(BillingInputError, match="completion is not recorded"):
        bill_abatement(issuer, abatement_id, work, done + timedelta(days=1), who="Clerk Lee")
    cases.actions.record("abatement_done", key, done, "Crew chief Ortiz")
    runner.tick()
    assert cases.bills.get_abatement(abatement_id).completed_at == done
    billed_at = done + timedelta(days=4)  # the Clerk bills days later
    billed = bill_abatement(issuer, abatement_id, work, billed_at, who="Clerk Lee")
    assert billed.bill.issued_at == billed_at
    assert billed.bill.costs_incurred_at == done
    assert {e.incurred_at for e in billed.expenses} == {done}
    assert runner.engine.enforcement.cases[key].costs_incurred_at == done
    assert billed.notice.detail["costs_incurred_at"] == done.isoformat()
    if billed.notice.body_text is not None:  # rendered (not held for a confirmation)
        assert format_local(done, profile.zone) in billed.notice.body_text
    # A completion given for an abatement the crew already completed must agree.
    with pytest.raises(BillingInputError, match="as recorded"):
        bill_abatement(
            issuer, abatement_id, work, billed_at, who="Clerk Lee",
            completed_at=done + timedelta(hours=1),
        )  # fmt: skip


def test_370_10_G_unpaid_costs_are_certified_on_day_60_from_the_completion(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    issuer = NoticeIssuer(cases, profile)
    key, abatement_id, done = _abated(runner, cases)
    cases.actions.record("abatement_done", key, done, "Crew chief Ortiz")
    runner.tick()
    billed = bill_abatement(
        issuer, abatement_id, AbatementWork(crew_hours=Decimal(1)), done + timedelta(days=5),
        who="Clerk Lee",
    )  # fmt: skip
    record_bill_receipt(issuer, billed.bill.id, done + timedelta(days=7), "Clerk Lee")
    runner.tick()
    day_60 = start_of_day(add_calendar_days(local_date(done, profile.zone), 60), profile.zone)
    runner.advance(day_60 - timedelta(seconds=1))
    assert cases.bills.list_tax_roll() == []
    runner.advance(day_60)
    [entry] = cases.bills.list_tax_roll()
    assert entry.certified_at == day_60
    assert runner.engine.enforcement.cases[key].state == "tax_roll"


def test_370_10_G_a_bill_received_late_is_held_then_entered_as_its_period_ends(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    issuer = NoticeIssuer(cases, profile)
    key, abatement_id, done = _abated(runner, cases)
    cases.actions.record("abatement_done", key, done, "Crew chief Ortiz")
    runner.tick()
    billed = bill_abatement(
        issuer, abatement_id, AbatementWork(crew_hours=Decimal(1)), done + timedelta(days=40),
        who="Clerk Lee",
    )  # fmt: skip
    # Received on day 55: payable through day 65, past day 60.
    record_bill_receipt(issuer, billed.bill.id, done + timedelta(days=55), "Clerk Lee")
    runner.tick()
    runner.advance(done + timedelta(days=64))
    assert cases.bills.list_tax_roll() == []  # not while the owner may still pay
    [hold] = [r for r in cases.audit.list(f"violation:{key}") if r.action == "tax_roll.held"]
    assert "still inside its payment period" in hold.detail["reason"]
    assert runner.engine.enforcement.cases[key].state == "billed"
    runner.advance(done + timedelta(days=90))
    [entry] = cases.bills.list_tax_roll()  # the first day after its 10 days, still unpaid
    received = local_date(done + timedelta(days=55), profile.zone)
    assert entry.certified_at == start_of_day(received + timedelta(days=11), profile.zone)
    [late] = [r for r in cases.audit.list(f"violation:{key}") if r.action == "tax_roll.late"]
    assert "the bill was still payable then" in late.detail["reason"]
    assert runner.engine.enforcement.cases[key].state == "tax_roll"
