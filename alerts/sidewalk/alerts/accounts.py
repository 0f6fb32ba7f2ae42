"""Money in the case records: abatement costs, bills, receipts, payments, overdue.

Each step that the § 370-10 clock must know of becomes a person action the
analytics runner applies: the bill's receipt (``bill_received``: the 10 days
run from it) and a payment that clears the balance (``paid_in_full``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sidewalk.alerts.billing import (
    AbatementWork,
    BillingInputError,
    bill_due_date,
    is_overdue,
    ledger,
    rates_of,
    total,
)
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.storage import cases as records


@dataclass(frozen=True)
class BilledAbatement:
    expenses: list[records.ExpenseRecord]
    bill: records.BillRecord
    notice: records.NoticeRecord


def bill_abatement(
    issuer: NoticeIssuer,
    abatement_id: int,
    work: AbatementWork,
    at: datetime,
    *,
    who: str,
) -> BilledAbatement:
    """Price the work, keep the expense account, create the bill and its notice.

    Safe to run again after a crash part-way: existing expenses must match the
    ledger (otherwise ``BillingInputError``), the bill and notice are keyed.
    """
    cases, profile = issuer.cases, issuer.profile
    abatement = cases.bills.get_abatement(abatement_id)
    lines = ledger(work, rates_of(profile))
    existing = cases.bills.list_expenses(abatement_id)
    if existing:
        if [(e.description, e.amount) for e in existing] != [
            (x.description, x.amount) for x in lines
        ]:
            raise BillingInputError(
                f"abatement {abatement_id} already has a different expense account"
            )
        expenses = existing
    else:
        expenses = [
            cases.bills.add_expense(abatement_id, x.amount, at, x.description) for x in lines
        ]
        cases.audit.append(
            who, "abatement.costed", f"abatement:{abatement_id}",
            {"total": total(lines), "lines": len(lines), "crew_hours": work.crew_hours,
             "equipment_hours": work.equipment_hours},
            at=at,
        )  # fmt: skip
    bill = cases.bills.create(f"bill/{abatement.key}", abatement_id, at)
    citation = str(abatement.detail.get("citation") or profile.billing.bill_payable.citation)
    notice = issuer.abatement_bill(
        bill, lines, at, work=abatement.reason.replace("_", " "), abatement_citation=citation
    )
    return BilledAbatement(expenses, bill, notice)


def _violation_key(cases: records.CaseStore, bill: records.BillRecord) -> str | None:
    abatement = cases.bills.get_abatement(bill.abatement_id)
    if abatement.violation_id is None:
        return None
    return cases.clocks.get_violation(abatement.violation_id).key


def _bill_notice(cases: records.CaseStore, bill: records.BillRecord) -> records.NoticeRecord | None:
    for notice in cases.notices.list(kind="abatement_bill", frontage_id=bill.frontage_id):
        if notice.detail.get("bill_id") == bill.id:
            return notice
    return None


def record_bill_receipt(
    issuer: NoticeIssuer, bill_id: int, received_at: datetime, who: str
) -> records.BillRecord:
    """The owner received the bill: due date = receipt + 10 calendar days; the clock hears it."""
    cases = issuer.cases
    before = cases.bills.get(bill_id)
    bill = cases.bills.set_received(
        bill_id, received_at, bill_due_date(received_at, issuer.profile)
    )
    if before.received_at is not None:
        return bill
    notice = _bill_notice(cases, bill)
    if notice is not None:
        cases.notices.set_received(notice.id, received_at)
    key = _violation_key(cases, bill)
    if key is not None:
        cases.actions.record("bill_received", key, received_at, who, {"bill": bill_id})
    return bill


def record_payment(
    cases: records.CaseStore,
    key: str,
    bill_id: int,
    amount: Decimal,
    paid_at: datetime,
    *,
    who: str,
    method: str,
    reference: str | None = None,
) -> records.BillRecord:
    """Record a payment (once per ``key``); the payment that clears the bill tells the clock."""
    before = cases.bills.get(bill_id)
    known = {p.key for p in cases.bills.list_payments(bill_id)}
    cases.bills.record_payment(key, bill_id, amount, paid_at, method=method, reference=reference)
    bill = cases.bills.get(bill_id)
    if key in known:
        return bill
    cases.audit.append(
        who, "payment.received", f"bill:{bill_id}",
        {"key": key, "amount": amount, "balance": bill.balance}, at=paid_at,
    )  # fmt: skip
    violation = _violation_key(cases, bill)
    if before.balance > 0 >= bill.balance and violation is not None:
        cases.actions.record("paid_in_full", violation, paid_at, who, {"bill": bill_id})
    return bill


def overdue_bills(issuer: NoticeIssuer, at: datetime) -> list[records.BillRecord]:
    """Open bills with a balance past their last day to pay, in issue order."""
    return [
        b
        for b in issuer.cases.bills.list(status="open")
        if is_overdue(b.status, b.due_date, b.balance, at, issuer.profile)
    ]
