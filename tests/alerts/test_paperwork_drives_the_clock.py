"""Delivery, receipt and payment recorded on paper reach the § 370-10 clock; the tax roll follows.

The whole path on a real runner: violation → hazard notice e-mailed (the 2 h
run from delivery) → village abatement → bill → receipt → payments / tax roll.
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

from sidewalk.alerts.accounts import (
    bill_abatement,
    overdue_bills,
    record_bill_receipt,
    record_payment,
)
from sidewalk.alerts.billing import AbatementWork
from sidewalk.alerts.delivery import (
    Deliverer,
    SmtpChannel,
    SmtpSettings,
    queue_notice,
    record_notice_delivery,
)
from sidewalk.alerts.documents import tax_roll_csv, tax_roll_lines, tax_roll_pdf
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import Mailbox, flat, pdf_text


def enforcement_state(runner: AnalyticsRunner, key: str) -> str:
    return runner.engine.enforcement.cases[key].state


def test_posted_hazard_notice_starts_the_two_hours_and_payment_closes_the_case(  # noqa: PLR0915 (one case, end to end)
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile,
    smtp_server: tuple[Mailbox, int],
) -> None:  # fmt: skip
    runner, cases = stormed
    mailbox, port = smtp_server
    issuer = NoticeIssuer(cases, profile)
    [first] = cases.notices.list(frontage_id="main-st-105")
    key = cases.clocks.get_violation(first.violation_id or 0).key
    owner = cases.registry.get_owner(first.owner_id)
    cases.registry.upsert_owner(owner.id, owner.name, owner.address_lines, "owner@example.org")
    # Actions come after the replayed storm's last event time.
    assert runner.engine.now is not None
    confirmed = runner.engine.now + timedelta(minutes=20)
    cases.actions.record("confirm_hazard", key, confirmed, "Officer Quinn")
    runner.tick()
    [hazard] = cases.notices.list(kind="hazard_notice")
    sent_at = confirmed + timedelta(minutes=15)
    queue_notice(cases, hazard.id, ["email"], sent_at)
    channel = SmtpChannel(
        SmtpSettings("127.0.0.1", port, "dpw@clyman.example"), profile, clock=lambda: sent_at
    )
    Deliverer(cases, profile, {"email": channel}, clock=lambda: sent_at).run_once()
    assert len(mailbox.messages) == 1
    runner.tick()
    # The mail server's acceptance is no delivery: the two hours have not begun.
    assert enforcement_state(runner, key) == "hazard_notice_issued"
    # The officer posts it on the premises and enters the time: the 2 h run from it.
    posted_at = sent_at + timedelta(minutes=25)
    record_notice_delivery(cases, hazard.id, posted_at, "Officer Quinn", "posted", profile=profile)
    runner.tick()
    assert enforcement_state(runner, key) == "hazard_period"
    runner.advance(posted_at + timedelta(hours=2))
    abatement = cases.bills.abatement_by_key(f"{key}/abatement")
    assert abatement is not None
    assert abatement.ordered_at == posted_at + timedelta(hours=2)

    done = sent_at + timedelta(hours=4)
    cases.actions.record("abatement_done", key, done, "Crew chief Ortiz")
    runner.tick()
    billed = bill_abatement(
        issuer, abatement.id, AbatementWork(crew_hours=Decimal(3)), done, who="Clerk Lee"
    )
    # 3 h × 45.00; § 370-10 G provides no administrative share (only § 370-6 does).
    assert billed.bill.amount == Decimal("135.00")
    received = done + timedelta(days=2)
    bill = record_bill_receipt(issuer, billed.bill.id, received, "Clerk Lee")
    runner.tick()
    assert enforcement_state(runner, key) == "billed"
    assert bill.due_date is not None
    assert (bill.due_date - received.astimezone(profile.zone).date()).days == 10
    assert overdue_bills(issuer, received + timedelta(days=5)) == []
    late = received + timedelta(days=11)
    assert [b.id for b in overdue_bills(issuer, late)] == [bill.id]

    record_payment(cases, "pay-1", bill.id, Decimal("100.00"), late, who="Clerk Lee", method="cash")
    runner.tick()
    assert enforcement_state(runner, key) == "billed"
    again = record_payment(
        cases, "pay-1", bill.id, Decimal("100.00"), late, who="Clerk Lee", method="cash"
    )
    assert again.balance == Decimal("35.00")  # the same payment twice counts once
    paid = record_payment(
        cases, "pay-2", bill.id, Decimal("35.00"), late + timedelta(hours=1),
        who="Clerk Lee", method="check", reference="1042",
    )  # fmt: skip
    assert paid.balance == Decimal("0.00")
    assert paid.status == "paid"
    runner.tick()
    assert enforcement_state(runner, key) == "paid"
    assert [a.error for a in cases.actions.list(target=key)] == [None] * 5
    assert cases.audit.verify_chain().ok


def test_unpaid_costs_reach_the_tax_roll_certification(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    issuer = NoticeIssuer(cases, profile)
    [first] = cases.notices.list(frontage_id="main-st-103")
    key = cases.clocks.get_violation(first.violation_id or 0).key
    assert runner.engine.now is not None
    start = runner.engine.now
    cases.actions.record("confirm_hazard", key, start, "Officer Quinn")
    cases.actions.record("owner_unavailable", key, start, "Officer Quinn")
    done = start + timedelta(hours=3)
    cases.actions.record("abatement_done", key, done, "Crew chief Ortiz")
    runner.tick()
    abatement = cases.bills.abatement_by_key(f"{key}/abatement")
    assert abatement is not None
    work = AbatementWork(crew_hours=Decimal("1.5"), equipment_hours=Decimal("0.5"))
    billed = bill_abatement(issuer, abatement.id, work, done, who="Clerk Lee")
    record_payment(cases, "p1", billed.bill.id, Decimal("20.00"), done, who="Lee", method="cash")
    record_bill_receipt(issuer, billed.bill.id, done + timedelta(days=3), "Clerk Lee")
    runner.tick()
    runner.advance(done + timedelta(days=61))
    assert enforcement_state(runner, key) == "tax_roll"
    year = (done + timedelta(days=61)).astimezone(profile.zone).year
    lines = tax_roll_lines(cases, profile, year)
    # 1.5 × 45 + 0.5 × 65 = 100.00 (no administrative share under § 370-10 G); 20.00 paid:
    # 80.00 certified.
    assert [(x.parcel, x.billed, x.paid, x.amount) for x in lines] == [
        ("026-0815-0103", Decimal("100.00"), Decimal("20.00"), Decimal("80.00"))
    ]
    rows = list(csv.reader(io.StringIO(tax_roll_csv(lines))))
    assert rows[0][:3] == ["Parcel number", "Property address", "Owner of record"]
    assert rows[1][0] == "026-0815-0103"
    assert rows[1][7] == "80.00"
    assert rows[-1][0] == "TOTAL"
    assert rows[-1][7] == "80.00"
    text = flat(pdf_text(tax_roll_pdf(lines, profile, year, done + timedelta(days=61))))
    assert f"certification of special taxes for the {year} tax roll" in text
    assert "as a special tax as provided by § 66.0907(5), Wis. Stats." in text
    assert "026-0815-0103" in text
    assert "$80.00" in text
    assert "Total certified: $80.00" in text
    assert "Village Clerk-Treasurer:" in text
