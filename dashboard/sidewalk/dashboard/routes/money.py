"""Money: work orders (abatements) with their cost ledgers, bills and payments.

Money goes straight to the ledger, never through the runner; every entry is
audited with the user's name. A payment goes through ``alerts.accounts.record_payment``,
as the command line's does: the one that pays a bill in full tells its case's clock.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from sidewalk.alerts.accounts import held_bill_words, record_payment, sold_during_case
from sidewalk.dashboard.auth import User
from sidewalk.dashboard.routes.deps import (
    Cases,
    MayHandleMoney,
    Now,
    Reader,
    RecordId,
    RequestBody,
    VillageProfile,
    iso,
    money,
)
from sidewalk.dashboard.routes.views import BillView, bill_view
from sidewalk.dashboard.words import ABATEMENT_REASONS
from sidewalk.storage.cases import (
    BillingError,
    BillRecord,
    CaseStore,
    CaseStoreError,
    NotFoundError,
)

router = APIRouter()


class ExpenseBody(RequestBody):
    amount: str = Field(description="dollars, e.g. '85.00'")
    description: str = Field(min_length=1, max_length=400)
    incurred_at: datetime | None = None


class PaymentBody(RequestBody):
    key: str = Field(min_length=8, max_length=100, description="client-made id: no double entry")
    amount: str
    method: str = Field(min_length=1, max_length=32)
    reference: str | None = Field(default=None, max_length=100)
    paid_at: datetime | None = None


class ExpenseView(BaseModel):
    id: int
    amount: str
    description: str
    incurred_at: str | None


class AbatementView(BaseModel):
    """A work order with its expense ledger and its bill, if billed."""

    id: int
    frontage: str
    address: str = Field(description="the property's street address")
    reason: str
    reason_words: str = Field(description="why the Village does the work, in plain words")
    ordered_at: str | None
    completed_at: str | None
    status: str
    violation_id: int | None
    expenses: list[ExpenseView]
    bill: BillView | None


class AddedExpense(BaseModel):
    id: int
    amount: str


class PaymentResult(BaseModel):
    id: int
    bill: int
    balance: str = Field(description="what is left to pay after this payment")


@router.get("/abatements", tags=["money"], response_model_exclude_unset=True)
def abatements(user: Reader, cases: Cases) -> list[AbatementView]:
    """Work orders with their expense ledgers and bills."""
    out = []
    addresses = {f.id: f.street_address for f in cases.registry.list_frontages()}
    for a in cases.bills.list_abatements():
        bill = cases.bills.for_abatement(a.id)
        out.append(
            AbatementView(
                id=a.id, frontage=a.frontage_id, reason=a.reason,
                address=addresses.get(a.frontage_id, a.frontage_id),
                reason_words=ABATEMENT_REASONS.get(a.reason, a.reason.replace("_", " ")),
                ordered_at=iso(a.ordered_at), completed_at=iso(a.completed_at),
                status=a.status, violation_id=a.violation_id,
                expenses=[
                    ExpenseView(id=e.id, amount=str(e.amount), description=e.description,
                                incurred_at=iso(e.incurred_at))
                    for e in cases.bills.list_expenses(a.id)
                ],
                bill=_bill_view(cases, bill, user) if bill else None,
            )
        )  # fmt: skip
    return out


@router.post("/abatements/{abatement_id}/expenses", tags=["money"])
def add_expense(
    abatement_id: RecordId, body: ExpenseBody, user: MayHandleMoney, cases: Cases, now: Now
) -> AddedExpense:
    """Add a cost line to a work order's ledger (§ 370-10 G)."""
    amount = money(body.amount)
    try:
        e = cases.bills.add_expense(abatement_id, amount, body.incurred_at or now, body.description)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except BillingError as exc:
        raise HTTPException(409, str(exc)) from None
    cases.audit.append(
        user.username, "expense.added", f"abatement:{abatement_id}",
        {"expense": e.id, "amount": amount, "description": body.description},
    )  # fmt: skip
    return AddedExpense(id=e.id, amount=str(e.amount))


def _bill_view(cases: CaseStore, b: BillRecord, user: User) -> BillView:
    """The bill, and why its notice is held, if it is (a bill to the owner served before
    a sale waits for the Village attorney's confirmation of that reading)."""
    view = bill_view(b, user)
    held = held_bill_words(cases, b)
    if held is not None:
        view.held = held[:1].upper() + held[1:] + "."
    return view


@router.post("/abatements/{abatement_id}/bill", tags=["money"], response_model_exclude_unset=True)
def bill(
    abatement_id: RecordId, user: MayHandleMoney, cases: Cases, profile: VillageProfile, now: Now
) -> BillView:
    """Bill a work order's expenses to the frontage's owner; refused (409) where the parcel
    changed hands during the case (``sidewalk notices bill`` applies the reading)."""
    try:
        sold = sold_during_case(cases, profile, abatement_id, now)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    if sold is not None:
        raise HTTPException(409, f"Not billed: {sold[:1].upper()}{sold[1:]}.")
    try:
        b = cases.bills.create(f"bill/abatement/{abatement_id}", abatement_id, datetime.now(UTC))
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except BillingError as exc:
        raise HTTPException(409, str(exc)) from None
    cases.audit.append(user.username, "bill.created", f"bill:{b.id}", {})
    return bill_view(b, user)


@router.get("/bills", tags=["money"], response_model_exclude_unset=True)
def bills(user: Reader, cases: Cases) -> list[BillView]:
    return [_bill_view(cases, b, user) for b in cases.bills.list()]


@router.post("/bills/{bill_id}/payments", tags=["money"])
def pay(
    bill_id: RecordId, body: PaymentBody, user: MayHandleMoney, cases: Cases, now: Now
) -> PaymentResult:
    """Record a payment (once per ``key``, so a double click pays once). The payment in
    full tells the case's clock, as ``sidewalk act payment`` does."""
    amount = money(body.amount)
    key = f"payment/{body.key}"
    try:
        bill = record_payment(
            cases, key, bill_id, amount, body.paid_at or now,
            who=user.username, method=body.method, reference=body.reference,
        )  # fmt: skip
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except (BillingError, CaseStoreError) as exc:
        raise HTTPException(409, str(exc)) from None
    p = next(p for p in cases.bills.list_payments(bill_id, voided=True) if p.key == key)
    return PaymentResult(id=p.id, bill=bill_id, balance=str(bill.balance))
