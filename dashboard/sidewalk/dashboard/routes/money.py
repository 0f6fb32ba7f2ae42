"""Money: work orders (abatements) with their cost ledgers, bills and payments.

Money goes straight to the ledger, never through the runner; every entry is
audited with the user's name. A cost reaches the ledger only through the bill the
crew's recorded hours make (previewed, confirmed, numbered): there is no bare cost
line to add. A payment goes through ``alerts.accounts.record_payment``, as the
command line's does: the one that pays a bill in full tells its case's clock.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from sidewalk.alerts.accounts import (
    bill_abatement,
    crew_work_of,
    held_bill_words,
    held_words,
    preview_bill,
    record_crew_work,
    record_payment,
    sold_during_case,
)
from sidewalk.alerts.billing import BillingInputError, Material, rates_of
from sidewalk.alerts.crew import CrewWork, crew_work, rates_shown
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.letterhead import Letterhead
from sidewalk.alerts.notices import ledger_text
from sidewalk.core.profile import Profile
from sidewalk.dashboard.auth import User
from sidewalk.dashboard.routes.admin import village_settings
from sidewalk.dashboard.routes.deps import (
    Cases,
    LoggedIn,
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


class PaymentBody(RequestBody):
    key: str = Field(min_length=8, max_length=100, description="client-made id: no double entry")
    amount: str
    method: str = Field(min_length=1, max_length=32)
    reference: str | None = Field(default=None, max_length=100)
    paid_at: datetime | None = None


class HoursBody(RequestBody):
    name: str = Field(max_length=100, description="who worked, or which machine ran")
    hours: str = Field(max_length=12, description="hours, e.g. '1.5'")


class CrewWorkBody(RequestBody):
    """Who worked how long and which equipment ran how long (priced on the bill)."""

    workers: list[HoursBody] = Field(max_length=50)
    equipment: list[HoursBody] = Field(default_factory=list, max_length=50)


class MaterialBody(RequestBody):
    description: str = Field(min_length=1, max_length=200)
    cost: str = Field(max_length=20, description="dollars, e.g. '12.50'")


class BillBody(RequestBody):
    """A bill from the crew's recorded hours (or the hours given here) and materials."""

    workers: list[HoursBody] | None = Field(default=None, max_length=50)
    equipment: list[HoursBody] | None = Field(default=None, max_length=50)
    materials: list[MaterialBody] = Field(default_factory=list, max_length=50)
    total: str | None = Field(
        default=None, max_length=20,
        description="confirm: the total the clerk saw in the preview (refused if it changed)",
    )  # fmt: skip


class WorkedView(BaseModel):
    name: str
    hours: str


class CrewWorkView(BaseModel):
    workers: list[WorkedView]
    equipment: list[WorkedView]
    words: str = Field(description="the crew's hours as the clerk reads them")


class RateShownView(BaseModel):
    text: str = Field(description="e.g. 'Crew labor, per worker: $45.00 an hour (not confirmed)'")
    confirmed: bool


class LineView(BaseModel):
    description: str
    text: str = Field(description="the line as the letter says it (hours at the rate = amount)")
    amount: str
    unconfirmed: bool = Field(description="priced at a rate the Village has not confirmed")


class BillPreviewView(BaseModel):
    """The bill as the owner will read it; nothing is stored until it is confirmed."""

    to: str = Field(description="whom it goes to, with the mailing address")
    lines: list[LineView]
    total: str
    text: str = Field(description="the letter's words, as the PDF prints them")
    crew: str | None = Field(description="the crew's hours it prices")
    held: str | None = Field(description="why it will be held, not sent, until confirmed")


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
    crew_work: CrewWorkView | None = Field(default=None, description="the crew's hours")
    rates: list[RateShownView] = Field(
        default_factory=list, description="the rates the hours are priced at"
    )


class PaymentResult(BaseModel):
    id: int
    bill: int
    balance: str = Field(description="what is left to pay after this payment")


@router.get("/abatements", tags=["money"], response_model_exclude_unset=True)
def abatements(user: Reader, cases: Cases, profile: VillageProfile) -> list[AbatementView]:
    """Work orders with their expense ledgers and bills."""
    out = []
    addresses = {f.id: f.street_address for f in cases.registry.list_frontages()}
    rates = _rates(cases, profile)
    numbers = _bill_numbers(cases)
    for a in cases.bills.list_abatements():
        bill = cases.bills.for_abatement(a.id)
        crew = crew_work_of(a)
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
                bill=_bill_view(cases, bill, user, numbers) if bill else None,
                crew_work=None if crew is None else _crew_view(crew),
                rates=rates,
            )
        )  # fmt: skip
    return out


def _rates(cases: CaseStore, profile: Profile) -> list[RateShownView]:
    if profile.abatement_rates is None:
        return []
    in_force = cases.confirmations.in_force()
    return [
        RateShownView(text=r.text, confirmed=r.confirmed)
        for r in rates_shown(profile.abatement_rates, in_force)
    ]


def _bill_numbers(cases: CaseStore) -> dict[int, str]:
    """Each bill's number: its notice's, in the notice register (one read)."""
    out: dict[int, str] = {}
    for n in cases.notices.list(kind="abatement_bill"):
        bill_id = n.detail.get("bill_id")
        if isinstance(bill_id, int):
            out[bill_id] = n.number
    return out


def _crew_view(crew: CrewWork) -> CrewWorkView:
    return CrewWorkView(
        workers=[WorkedView(name=w.name, hours=f"{w.hours.normalize():f}") for w in crew.workers],
        equipment=[
            WorkedView(name=e.name, hours=f"{e.hours.normalize():f}") for e in crew.equipment
        ],
        words=crew.words(),
    )


def parse_crew(workers: list[HoursBody], equipment: list[HoursBody] | None = None) -> CrewWork:
    """The crew's hours from a form, or a 422 in the clerk's words."""
    try:
        return crew_work(
            [{"name": w.name, "hours": w.hours} for w in workers],
            [{"name": e.name, "hours": e.hours} for e in equipment or []],
        )
    except BillingInputError as exc:
        raise HTTPException(422, f"{exc}.") from None


@router.post("/abatements/{abatement_id}/crew-work", tags=["money"])
def enter_crew_work(
    abatement_id: RecordId, body: CrewWorkBody, user: LoggedIn, cases: Cases, now: Now
) -> CrewWorkView:
    """Record (or correct, before the bill) who worked how long and which equipment ran."""
    if not (user.may("notice_action") or user.may("money")):
        raise HTTPException(403, f"The {user.role} account may not record the crew's hours.")
    crew = parse_crew(body.workers, body.equipment)
    try:
        record_crew_work(cases, abatement_id, crew, now, user.username)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except BillingError as exc:
        raise HTTPException(409, str(exc)) from None
    return _crew_view(crew)


def _bill_view(
    cases: CaseStore, b: BillRecord, user: User, numbers: dict[int, str] | None = None
) -> BillView:
    """The bill with its number, and why its notice is held, if it is (a bill to the owner
    served before a sale waits for the Village attorney's confirmation of that reading)."""
    view = bill_view(b, user)
    view.number = (numbers if numbers is not None else _bill_numbers(cases)).get(b.id)
    held = held_bill_words(cases, b)
    if held is not None:
        view.held = held[:1].upper() + held[1:] + "."
    return view


def _issuer(request: Request, cases: CaseStore, profile: Profile) -> NoticeIssuer:
    village = village_settings(request)
    letterhead = None if village is None else Letterhead.from_settings(village, profile)
    return NoticeIssuer(cases, profile, letterhead=letterhead)


def _work(cases: CaseStore, abatement_id: int, body: BillBody) -> tuple[CrewWork, list[Material]]:
    """The hours to price (given, or the crew's recorded ones) and the materials."""
    if body.workers is not None:
        crew = parse_crew(body.workers, body.equipment)
    else:
        try:
            recorded = crew_work_of(cases.bills.get_abatement(abatement_id))
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None
        if recorded is None:
            raise HTTPException(
                409, "Enter the crew's hours first: who worked how long, and the equipment."
            )
        crew = recorded
    materials = []
    for m in body.materials:
        cost = money(m.cost)
        if cost <= 0:
            raise HTTPException(422, f"Materials ({m.description}): the cost must be more than $0.")
        materials.append(Material(m.description.strip(), cost))
    return crew, materials


def _preview(
    request: Request, abatement_id: int, body: BillBody, *, cases: CaseStore, profile: Profile,
    now: datetime,
) -> tuple[BillPreviewView, CrewWork, list[Material]]:  # fmt: skip
    try:
        sold = sold_during_case(cases, profile, abatement_id, now)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    if sold is not None:
        raise HTTPException(409, f"Not billed: {sold[:1].upper()}{sold[1:]}.")
    crew, materials = _work(cases, abatement_id, body)
    try:
        rates_of(profile)
        issuer = _issuer(request, cases, profile)
        seen = preview_bill(issuer, abatement_id, crew.work(materials), now)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except BillingInputError as exc:
        said = str(exc)
        raise HTTPException(409, f"Not billed: {said[:1].upper()}{said[1:].rstrip('.')}.") from None
    held = None
    if seen.waits_for:
        names = [_value_words(n) for n in seen.waits_for]
        values = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        held = (
            f"It will be numbered and kept, but held, not sent, until the Village confirms {values}"
            " (Admin, the values to confirm)."
        )
    lines = [
        LineView(
            description=x.description,
            text=ledger_text(x, seen.lines),
            amount=f"${x.amount:,.2f}",
            unconfirmed=x.unconfirmed,
        )
        for x in seen.lines
    ]
    view = BillPreviewView(
        to=", ".join([seen.addressee[0], *seen.addressee[1]]),
        lines=lines,
        total=f"{seen.total:.2f}",
        text=seen.text,
        crew=crew.words(),
        held=held,
    )
    return view, crew, materials


def _value_words(name: str) -> str:
    said = {
        "abatement_rates.crew_hourly_rate": "the crew's hourly rate",
        "abatement_rates.equipment_hourly_rate": "the equipment's hourly rate",
        "abatement_rates.administration_share": "the administration share",
        "billing.owner_changed_during_case": "the reading of § 370-10 F and G after a sale",
    }
    return said.get(name, name.rpartition(".")[2].replace("_", " "))


@router.post("/abatements/{abatement_id}/bill/preview", tags=["money"])
def bill_preview(
    request: Request, abatement_id: RecordId, body: BillBody, *, user: MayHandleMoney,
    cases: Cases, profile: VillageProfile, now: Now,
) -> BillPreviewView:  # fmt: skip
    """The bill as the owner will read it (the letter's own words), priced from the crew's
    hours at the profile's rates; nothing is stored."""
    return _preview(request, abatement_id, body, cases=cases, profile=profile, now=now)[0]


@router.post("/abatements/{abatement_id}/bill", tags=["money"], response_model_exclude_unset=True)
def bill(
    request: Request, abatement_id: RecordId, body: BillBody, *, user: MayHandleMoney,
    cases: Cases, profile: VillageProfile, now: Now,
) -> BillView:  # fmt: skip
    """Issue the bill the clerk previewed: the expense account kept, the bill numbered in the
    notice register and its letter written (as ``sidewalk notices bill``). ``total`` must be
    the previewed one (409 if the hours, materials or rates changed since); refused (409)
    where the parcel changed hands during the case (``sidewalk notices bill`` applies the
    reading)."""
    seen, crew, materials = _preview(
        request, abatement_id, body, cases=cases, profile=profile, now=now
    )
    if body.total is None:
        raise HTTPException(409, "Preview the bill first, then confirm its total.")
    if money(body.total) != Decimal(seen.total):
        raise HTTPException(
            409, f"The bill is now ${seen.total}, not ${body.total}: preview it again."
        )
    issuer = _issuer(request, cases, profile)
    try:
        if body.workers is not None:
            record_crew_work(cases, abatement_id, crew, now, user.username)
        billed = bill_abatement(issuer, abatement_id, crew.work(materials), now, who=user.username)
    except NotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except (BillingError, BillingInputError) as exc:
        raise HTTPException(409, f"Not billed: {exc}") from None
    cases.audit.append(
        user.username, "bill.created", f"bill:{billed.bill.id}",
        {"notice": billed.notice.number, "total": billed.bill.amount},
    )  # fmt: skip
    view = _bill_view(cases, billed.bill, user, {billed.bill.id: billed.notice.number})
    held = held_words(cases, billed.notice)
    if held is not None:
        view.held = held[:1].upper() + held[1:] + "."
    return view


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
