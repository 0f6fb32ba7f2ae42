"""Notices and the actions people record on them; service; the letter; the print batch;
issuing the written notice an obstruction or an inspector's finding waits for
(``NoticeIssuer.case_notice``, as ``sidewalk notices issue``).

Which steps a notice shows is the clock engine's answer for its case
(``casework``), filtered by the role: the page shows only what would be
accepted, and the server refuses anything else with the reason in plain words
(409), before it is recorded. Service goes through
``alerts.delivery.record_notice_delivery``, as ``sidewalk notices delivered``
and ``sidewalk act record_delivery`` do.

A wrong service or crew completion is corrected or undone with a reason
(``alerts.corrections``, as ``sidewalk act … --correct/--undo``): one notice's
page lists its entries, each with what may be done to it now, or why not
(what rests on it, to undo first).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from sidewalk.alerts.accounts import record_bill_receipt, record_crew_work
from sidewalk.alerts.confirm import still_waiting
from sidewalk.alerts.corrections import (
    CaseRecords,
    CorrectionRefused,
    blocked,
    correct_entry,
    correct_payment,
    payment_blocked,
    payment_facts,
)
from sidewalk.alerts.delivery import (
    CASE_SERVICE,
    DELIVERY_METHODS,
    NotDeliveryError,
    NotReadyError,
    record_notice_delivery,
)
from sidewalk.alerts.issue import (
    CASE_NOTICE,
    CaseNotOnRecord,
    NoticeIssuer,
    cases_awaiting_notice,
)
from sidewalk.alerts.letterhead import Letterhead, cited
from sidewalk.alerts.notices import CLOCK_FROM_DELIVERY
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.alerts.wording import local_day
from sidewalk.analytics.clocks.actions import ActionError, parse_action
from sidewalk.analytics.clocks.states import CaseState
from sidewalk.core.clock import format_local
from sidewalk.core.profile import Profile
from sidewalk.dashboard.auth import User
from sidewalk.dashboard.casework import (
    AWAITS_DELIVERY,
    PERIOD_OF,
    CaseNow,
    Entry,
    case_clock_key,
    case_now,
    enforcement_clocks,
    entries,
    pending_by_target,
    refusal,
)
from sidewalk.dashboard.routes.admin import village_settings
from sidewalk.dashboard.routes.deps import (
    Cases,
    LoggedIn,
    MayPrint,
    Now,
    Reader,
    RequestBody,
    VillageProfile,
    iso,
    money,
)
from sidewalk.dashboard.routes.money import HoursBody, parse_crew
from sidewalk.dashboard.routes.views import OwnerContact, RuleView, rule_view
from sidewalk.dashboard.states import CASE
from sidewalk.dashboard.words import (
    NOTICE_STATUS,
    SERVED_BY,
    SERVICE_METHODS,
    STEP_DONE,
    STEP_LABELS,
    notice_kind,
    step_label,
)
from sidewalk.storage.cases import (
    ActionRecord,
    BillRecord,
    CaseStore,
    ClockRecord,
    ConfirmationRecord,
    DeliveryRecord,
    NotFoundError,
    NoticeRecord,
    ViolationRecord,
)

router = APIRouter()

# Which person actions each role may record, and what the action targets.
ACTION_PERMISSION: dict[str, Literal["field_action", "notice_action", "money"]] = {
    "confirm_hazard": "field_action",
    "owner_unavailable": "field_action",
    "inspected_clear": "field_action",
    "record_treated": "field_action",
    "record_delivery": "notice_action",
    "abatement_done": "notice_action",
    "bill_received": "money",
    "paid_in_full": "money",
}
NOT_YET_SERVED: Final = "The owner's deadline starts when the notice is served."
# The steps that are about a bill: offered only once the case's bill exists.
BILL_STEPS: Final = frozenset({"bill_received", "paid_in_full"})
# The clock states of an obstruction's or a finding's period after its notice was served.
CASE_PERIOD: Final = frozenset({"removal_period", "notice_period"})


class ActionBody(RequestBody):
    kind: str = Field(description="one of the person actions (ActionKind)")
    at: datetime | None = Field(default=None, description="when it happened; default now")
    channel: str | None = Field(default=None, description="record_delivery: hand, mail, posted")
    note: str | None = Field(default=None, max_length=500)
    workers: list[HoursBody] | None = Field(
        default=None, max_length=50,
        description="abatement_done: who worked how many hours (priced on the bill)",
    )  # fmt: skip
    equipment: list[HoursBody] | None = Field(
        default=None, max_length=50, description="abatement_done: which equipment ran how long"
    )


class ServiceBody(RequestBody):
    method: str = Field(description="hand, posted, mail (at = its receipt) or email")
    served_by: str = Field(min_length=1, max_length=100, description="who served it")
    at: datetime | None = Field(
        default=None, description="when; default now; without an offset, the village's time"
    )


class CorrectionBody(RequestBody):
    undo: bool = Field(default=False, description="the entry should not have been made")
    reason: str = Field(max_length=500, description="why: kept on record with the correction")
    at: datetime | None = Field(
        default=None, description="the right time; without an offset, the village's time"
    )
    method: str | None = Field(default=None, description="a service's right method")


class PaymentCorrectionBody(RequestBody):
    undo: bool = Field(default=False, description="the payment should not have been recorded")
    reason: str = Field(max_length=500, description="why: kept on record with the correction")
    amount: str | None = Field(default=None, description="the right amount, dollars, e.g. '15.00'")
    paid_at: datetime | None = Field(
        default=None, description="the right date paid; without an offset, the village's time"
    )


class PrintBatchBody(RequestBody):
    numbers: list[str] = Field(min_length=1, max_length=500)


class NoticeActionView(BaseModel):
    """A person's action on the notice's case, and whether the runner applied it."""

    kind: str
    at: str | None
    who: str
    applied: str | None = Field(description="when the runner applied it")
    error: str | None = Field(description="why the runner refused it")


class DeliveryView(BaseModel):
    channel: str
    status: str
    at: str | None


class StepView(BaseModel):
    """A step the notice's case accepts now and this account may record."""

    kind: str
    label: str


class ChoiceView(BaseModel):
    value: str
    label: str


class HistoryLine(BaseModel):
    """One thing that happened to the notice or its case, in plain words."""

    at: str | None
    text: str
    who: str | None
    outcome: Literal["done", "waiting", "refused", "undone"]


class EntryView(BaseModel):
    """A service or crew completion on record, and whether it may be corrected now."""

    id: int
    text: str = Field(description="what was recorded, as it stands")
    at: str | None = Field(description="when it happened, as corrected")
    recorded_at: str | None = Field(description="when it was first said to have happened")
    who: str
    undone: bool
    may_correct: bool = Field(description="the account may correct it and nothing blocks it")
    blocked: str | None = Field(description="why it cannot be corrected now (clerk's words)")
    method: str | None = Field(description="a service's method, as corrected")
    methods: list[ChoiceView] = Field(description="a service's methods that count")


class PaymentEntryView(BaseModel):
    """A payment on a bill, as it stands, and whether it may be corrected now."""

    id: int
    amount: str = Field(description="dollars, e.g. '15.00'")
    paid_at: str | None
    method: str
    may_correct: bool = Field(description="the account may correct it and nothing blocks it")
    blocked: str | None = Field(description="why it cannot be corrected now (clerk's words)")


class NoticeView(BaseModel):
    """A notice with its case, rules, actions and deliveries, and what can be done now."""

    number: str
    kind: str
    kind_words: str = Field(description="what the notice is, in the clerk's words")
    frontage: str
    address: str
    violation_key: str | None
    violation_status: str | None
    offense_count: int | None
    issued_at: str | None
    deadline: str | None = Field(description="the deadline the notice recorded at issue")
    citation: str | None
    ordinance: str | None = Field(description="the sections the notice cites, as the letter does")
    unconfirmed: bool
    rules: list[RuleView]
    status: str
    status_words: str = Field(description="where the notice stands, in the clerk's words")
    case_words: str | None = Field(description="where its case stands, in plain words")
    owner_deadline: str | None = Field(
        description="the deadline that matters now: the owner's, from the recorded service"
    )
    deadline_note: str | None = Field(description="what the deadline is, in plain words")
    delivered_at: str | None
    received_at: str | None
    steps: list[StepView] = Field(description="only the steps valid now, for this account")
    service_methods: list[ChoiceView] = Field(description="ways of serving that count")
    still_to_do: str | None = Field(
        default=None, description="a received or settled bill: what is left to do, in words"
    )
    history: list[HistoryLine]
    entries: list[EntryView] = Field(
        default_factory=list, description="one notice's page: the entries that may be corrected"
    )
    payments: list[PaymentEntryView] = Field(
        default_factory=list, description="one bill's page: its payments, to correct or undo"
    )
    actions: list[NoticeActionView]
    deliveries: list[DeliveryView]
    owner: OwnerContact | None = Field(default=None, description="clerk and admin only")
    body_text: str | None = Field(default=None, description="clerk and admin only")


class RecordedAction(BaseModel):
    action_id: int
    kind: str
    target: str = Field(description="the violation key, or the frontage for record_treated")
    at: str | None
    message: str = Field(description="what was recorded, in plain words")


class CorrectionRecorded(BaseModel):
    number: str
    entry: int
    message: str


class ServiceRecorded(BaseModel):
    number: str
    method: str
    served_by: str
    at: str
    message: str


class PrintBatch(BaseModel):
    batch: str
    count: int
    url: str = Field(description="the printable page, one notice per page")


@dataclass(frozen=True)
class NoticeRecords:
    """Everything the notice views read, one query per kind (never one per notice)."""

    addresses: dict[str, str]
    violations: dict[int, ViolationRecord]
    clocks: dict[str, Any]
    actions: dict[str, list[ActionRecord]]
    pending: dict[str, list[ActionRecord]]
    deliveries: dict[int, list[DeliveryRecord]]
    # Obstruction and inspector's-finding clocks, by their key (<frontage>/<kind>/<id>).
    street_clocks: dict[str, ClockRecord] = field(default_factory=dict)
    # The Village's confirmations in force: a notice is marked "value not confirmed"
    # only while a value it used still waits for one (not for ever after).
    in_force: dict[str, ConfirmationRecord] = field(default_factory=dict)
    # Each case's bill, by its violation's id (a case whose work is not billed has none).
    bills: dict[int, BillRecord] = field(default_factory=dict)

    @classmethod
    def read(cls, cases: CaseStore) -> NoticeRecords:
        actions: dict[str, list[ActionRecord]] = {}
        every = cases.actions.list()
        for a in every:
            actions.setdefault(a.target, []).append(a)
        deliveries: dict[int, list[DeliveryRecord]] = {}
        for d in cases.notices.list_deliveries():
            if d.notice_id is not None:
                deliveries.setdefault(d.notice_id, []).append(d)
        return cls(
            addresses={f.id: f.street_address for f in cases.registry.list_frontages()},
            violations={v.id: v for v in cases.clocks.list_violations()},
            clocks=enforcement_clocks(cases.clocks.list(kind="enforcement")),
            actions=actions,
            pending=pending_by_target(every),
            deliveries=deliveries,
            street_clocks={c.key: c for kind in CASE_NOTICE for c in cases.clocks.list(kind=kind)},
            in_force=cases.confirmations.in_force(),
            bills=case_bills(cases),
        )


def case_bills(cases: CaseStore) -> dict[int, BillRecord]:
    """Each billed case's bill, by its violation's id (two reads for the village)."""
    of = {a.id: a.violation_id for a in cases.bills.list_abatements()}
    return {
        violation: b
        for b in cases.bills.list()
        if (violation := of.get(b.abatement_id)) is not None
    }


def bill_step_refusal(kind: str, bill: BillRecord | None) -> str | None:
    """Why a bill's step cannot be recorded on this case now (None: it can), in words."""
    if kind not in BILL_STEPS:
        return None
    step = STEP_LABELS[kind]
    if bill is None:
        return (
            f"“{step}” cannot be recorded now: no bill has been issued for this case yet."
            " Bill the Village's work first (Notices: Village work, costs and payments)."
        )
    if kind == "bill_received" and bill.received_at is not None:
        return f"“{step}” is recorded already: the owner's receipt of this bill is on record."
    if kind == "paid_in_full" and bill.balance > 0:
        return (
            f"“{step}” cannot be recorded now: the bill has ${bill.balance:,.2f} left to pay."
            " Record the payment on the bill (Record payment); the payment in full closes it."
        )
    return None


def notice_record(cases: Cases, number: str) -> NoticeRecord:
    """Dependency: the notice named by the ``number`` path parameter (404 if none)."""
    try:
        return cases.notices.get_by_number(number)
    except NotFoundError:
        raise HTTPException(404, f"There is no notice {number}.") from None


Notice = Annotated[NoticeRecord, Depends(notice_record)]


def snow_case(
    records: NoticeRecords, profile: Profile, n: NoticeRecord, at: datetime
) -> CaseNow | None:
    """The notice's § 370-10 case as it stands now (None for other notices)."""
    violation = records.violations.get(n.violation_id) if n.violation_id else None
    if violation is None or not violation.rule.startswith("snow_and_ice."):
        return None
    clock = records.clocks.get(case_clock_key(violation))
    return case_now(profile, violation, clock, records.actions.get(violation.key, []), at)


def can_serve(n: NoticeRecord, case: CaseNow | None) -> bool:
    """A rendered notice not yet served; a § 370-10 notice only while its case awaits it."""
    if n.delivered_at is not None or n.body_text is None or n.status == "held":
        return False
    if n.received_at is not None:  # a bill the owner received: it reached them
        return False
    if n.kind in CLOCK_FROM_DELIVERY and case is not None:
        return "record_delivery" in case.steps and AWAITS_DELIVERY.get(case.state) == n.kind
    return True


def valid_steps(
    n: NoticeRecord, case: CaseNow | None, user: User, bill: BillRecord | None = None
) -> list[str]:
    """The steps valid on the notice now that ``user`` may record; a bill's steps only
    once the case's ``bill`` exists (and its receipt is not yet on record, or it is paid)."""
    steps = ["record_delivery"] if can_serve(n, case) else []
    if case is not None:
        steps += [
            s for s in case.steps if s != "record_delivery" and bill_step_refusal(s, bill) is None
        ]
    return [s for s in steps if user.may(ACTION_PERMISSION[s])]


def served_words(
    n: NoticeRecord, deliveries: list[DeliveryRecord], actions: list[ActionRecord]
) -> str:
    served = [e for e in entries(actions) if e.notice == n.number and not e.undone]
    how = served[-1].method if served else None  # as corrected
    if how is None:
        how = next((d.channel for d in deliveries if d.status == "delivered"), None)
    return f"Served {SERVED_BY.get(how or '', '')}".rstrip()


def deadline_words(
    n: NoticeRecord, case: CaseNow | None
) -> tuple[str | None, str | None, str | None]:
    """(owner's deadline, what it is, the case in words) for the notice as it stands."""
    if case is None:
        return iso(n.deadline), ("Deadline" if n.deadline else None), None
    case_words = CASE[case.state].label
    if n.kind not in CLOCK_FROM_DELIVERY:
        return None, None, case_words
    if n.delivered_at is None and case.state in AWAITS_DELIVERY:
        return None, NOT_YET_SERVED, case_words
    if case.owner_deadline is not None and PERIOD_OF.get(case.state) == n.kind:
        note = "The owner's deadline, from the recorded service"
        return iso(case.owner_deadline), note, case_words
    if n.kind == "clearing_violation" and case.state in (
        CaseState.HAZARD_NOTICE_ISSUED, CaseState.HAZARD_PERIOD
    ):  # fmt: skip
        return None, "Replaced by the hazard notice for this sidewalk", case_words
    return None, None, case_words


def case_deadline(
    records: NoticeRecords, n: NoticeRecord, violation: ViolationRecord | None
) -> tuple[str | None, str | None]:
    """(owner's deadline, what it is) for an obstruction's or a finding's notice: the
    period its clock runs from the recorded service (``alerts.delivery``)."""
    if violation is None or n.kind not in CASE_SERVICE:
        return iso(n.deadline), ("Deadline" if n.deadline else None)
    if n.delivered_at is None:
        return None, NOT_YET_SERVED
    kind, _, case_id = violation.key.partition(":")
    clock = records.street_clocks.get(f"{violation.frontage_id}/{kind}/{case_id}")
    if clock is None or clock.state not in CASE_PERIOD:
        return None, "Served: the deadline is being worked out"
    return iso(clock.deadline), "The owner's deadline, from the recorded service"


def _entry_words(kind: str, method: object) -> str:
    text = STEP_DONE.get(kind, step_label(kind))
    if kind == "record_delivery" and isinstance(method, str):
        text = f"{text} {SERVED_BY.get(method, '')}".rstrip()
    return text


def _correction_words(a: ActionRecord, profile: Profile) -> str:
    """A correction as the history tells it: what, to what, and the reason given."""
    step = "Service" if a.detail.get("step") == "record_delivery" else "Crew's completion"
    if a.detail.get("undo"):
        said = f"{step} undone"
    else:
        said = f"{step} corrected to {format_local(a.at, profile.zone)}"
        if a.detail.get("method"):
            said += f", {SERVED_BY.get(str(a.detail['method']), '')}".rstrip(", ")
    return f"{said}. Reason: {a.detail.get('reason', '')}"


def history(
    n: NoticeRecord,
    actions: list[ActionRecord],
    deliveries: list[DeliveryRecord],
    profile: Profile,
) -> list[HistoryLine]:
    lines = [HistoryLine(at=iso(n.issued_at), text="Notice issued", who=None, outcome="done")]
    folded = entries(actions)
    undone = {e.id for e in folded if e.undone}
    corrected = {e.id for e in folded if e.corrections and not e.undone}
    for a in actions:
        if a.kind == "correct_entry":  # told when it was made, the entry kept as recorded
            at, text = a.recorded_at, _correction_words(a, profile)
        else:
            at = a.at
            text = _entry_words(a.kind, a.detail.get("method") or a.detail.get("channel"))
        outcome: Literal["done", "waiting", "refused", "undone"] = "done"
        if a.error:
            outcome = "refused"
            text += ": not applied, it did not fit the case at that time"
        elif a.applied_at is None:
            outcome = "waiting"
            text += " (recorded; the case is being brought up to date)"
        elif a.id in undone:
            outcome = "undone"
            text += " (undone: see below)"
        elif a.id in corrected:
            text += " (corrected: see below)"
        lines.append(HistoryLine(at=iso(at), text=text, who=a.who, outcome=outcome))
    if not any(a.kind == "record_delivery" for a in actions):
        for d in deliveries:  # a notice whose service starts no clock (and older records)
            if d.status == "delivered":
                text = f"Notice served {SERVED_BY.get(d.channel, '')}".rstrip()
                who = d.detail.get("who")  # the person who served it, as entered
                lines.append(HistoryLine(at=iso(d.attempted_at), text=text,
                                         who=who if isinstance(who, str) else None,
                                         outcome="done"))  # fmt: skip
    return lines


def received_words(received: datetime, bill: BillRecord | None, profile: Profile) -> str:
    """A bill's status once the owner received it: when, and the last day to pay."""
    words = f"Received by the owner on {local_day(received.astimezone(profile.zone).date())}"
    if bill is not None and bill.due_date is not None:
        words += f"; payable by {local_day(bill.due_date)}"
    return words


def still_to_do(n: NoticeRecord, bill: BillRecord | None) -> str | None:
    """What a clerk can still do on a bill once it is received or settled, in plain words
    (None for other notices, and for a bill still to be served)."""
    if n.kind != "abatement_bill" or bill is None:
        return None
    if bill.status == "paid":
        return "Paid in full: nothing more is to be recorded on this bill."
    if bill.status == "certified":
        return "Entered on the tax roll: nothing more is to be recorded on this bill."
    if n.received_at is None:
        return None
    return (
        f"${bill.balance:,.2f} is left to pay. Record a payment under “Village work, costs and"
        " payments” on the Notices page; the payment in full closes the case."
    )


def notice_view(
    records: NoticeRecords, profile: Profile, n: NoticeRecord, user: User, at: datetime
) -> NoticeView:
    violation = records.violations.get(n.violation_id) if n.violation_id else None
    case = snow_case(records, profile, n, at)
    owner_deadline, note, case_words = deadline_words(n, case)
    if case is None and n.kind in CASE_SERVICE:
        owner_deadline, note = case_deadline(records, n, violation)
    deliveries = records.deliveries.get(n.id, [])
    actions = records.actions.get(violation.key, []) if violation else []
    bill = records.bills.get(n.violation_id or 0)
    steps = valid_steps(n, case, user, bill)
    status_words = NOTICE_STATUS.get(n.status, "")
    if n.status == "delivered":
        status_words = served_words(n, deliveries, actions)
    elif n.received_at is not None:  # a bill the owner received (its receipt recorded)
        status_words = received_words(n.received_at, bill, profile)
    elif n.status == "rendered" and case is not None and not can_serve(n, case):
        status_words = "Not to be served: its case has moved on"
    view = NoticeView(
        number=n.number,
        kind=n.kind,
        kind_words=notice_kind(n.kind),
        frontage=n.frontage_id,
        address=records.addresses.get(n.frontage_id, n.frontage_id),
        violation_key=violation.key if violation else None,
        violation_status=violation.status if violation else None,
        offense_count=violation.offense_count if violation else None,
        issued_at=iso(n.issued_at),
        deadline=iso(n.deadline),
        citation=n.citation,
        ordinance=cited(n.citation),
        unconfirmed=bool(still_waiting(n.rules, records.in_force)),
        rules=[rule_view(r) for r in n.rules],
        status=n.status,
        status_words=status_words,
        case_words=case_words,
        owner_deadline=owner_deadline,
        deadline_note=note,
        delivered_at=iso(n.delivered_at),
        received_at=iso(n.received_at),
        steps=[StepView(kind=s, label=STEP_LABELS[s]) for s in steps],
        still_to_do=still_to_do(n, bill),
        service_methods=[
            ChoiceView(value=m, label=SERVICE_METHODS[m])
            for m in DELIVERY_METHODS
            if "record_delivery" in steps and profile.notice_delivery.counts(n.kind, m)
        ],
        history=history(n, actions, deliveries, profile),
        actions=[
            NoticeActionView(
                kind=a.kind, at=iso(a.at), who=a.who, applied=iso(a.applied_at), error=a.error
            )
            for a in actions
        ],
        deliveries=[
            DeliveryView(channel=d.channel, status=d.status, at=iso(d.attempted_at))
            for d in deliveries
        ],
    )
    if user.may("owner_details"):
        view.owner = OwnerContact(name=n.owner_name, address_lines=list(n.owner_address_lines))
        view.body_text = n.body_text
    return view


@router.get("/notices", tags=["notices"], response_model_exclude_unset=True)
def notices(user: Reader, cases: Cases, profile: VillageProfile, now: Now) -> list[NoticeView]:
    """The notice queue, oldest first."""
    records = NoticeRecords.read(cases)
    return [notice_view(records, profile, n, user, now) for n in cases.notices.list()]


@router.get("/notices/{number}", tags=["notices"], response_model_exclude_unset=True)
def notice(user: Reader, cases: Cases, profile: VillageProfile, now: Now, n: Notice) -> NoticeView:
    view = notice_view(NoticeRecords.read(cases), profile, n, user, now)
    if n.violation_id is not None and view.violation_key is not None:
        view.entries = entry_views(CaseRecords.read(cases, n), profile, n, user)
    if n.kind == "abatement_bill" and isinstance(n.detail.get("bill_id"), int):
        view.payments = payment_views(cases, profile, n, user)
    return view


def payment_views(
    cases: CaseStore, profile: Profile, n: NoticeRecord, user: User
) -> list[PaymentEntryView]:
    """The bill's standing payments. A bill on the tax roll blocks each; a case closed by
    the payment in full is judged when the correction is asked for (an overpayment
    corrected down to the bill leaves it paid in full the same day)."""
    bill = cases.bills.get(int(n.detail["bill_id"]))
    facts, _ = payment_facts(cases, bill)
    methods = {p.id: p.method for p in cases.bills.list_payments(bill.id)}
    views = []
    for pid, amount, at in facts.payments:
        why = payment_blocked(
            replace(facts, closed_at=None),
            pid,
            None,
            None,
            undo=True,
            bill=n.number,
            zone=profile.zone,
        )
        views.append(
            PaymentEntryView(
                id=pid,
                amount=f"{amount:.2f}",
                paid_at=iso(at),
                method=methods.get(pid, ""),
                may_correct=why is None and user.may("correct"),
                blocked=why,
            )
        )
    return views


def entry_views(
    case: CaseRecords, profile: Profile, n: NoticeRecord, user: User
) -> list[EntryView]:
    """The notice's service and its case's crew completion, each with what may be done."""
    views = []
    for e in case.entries():
        why = blocked(e, case, profile)
        views.append(
            EntryView(
                id=e.id,
                text=_entry_words(e.kind, e.method),
                at=iso(e.at),
                recorded_at=iso(e.recorded.at),
                who=e.recorded.who,
                undone=e.undone,
                may_correct=why is None and user.may("correct"),
                blocked=why,
                method=e.method,
                methods=_methods(profile, n, e),
            )
        )
    return views


def _methods(profile: Profile, n: NoticeRecord, e: Entry) -> list[ChoiceView]:
    if e.kind != "record_delivery":
        return []
    return [
        ChoiceView(value=m, label=SERVICE_METHODS[m])
        for m in DELIVERY_METHODS
        if profile.notice_delivery.counts(n.kind, m)
    ]


@router.post("/notices/{number}/entries/{entry}/correction", tags=["notices"])
def correct(
    number: str,
    entry: int,
    body: CorrectionBody,
    *,
    user: LoggedIn,
    cases: Cases,
    profile: VillageProfile,
) -> CorrectionRecorded:
    """Correct (the right time, a service's right method) or undo an entry on the notice's
    case, with the reason; the entry stays on record. Refused (409) in the clerk's words
    where a later act rests on it, naming what to undo first; nothing is recorded."""
    if not user.may("correct"):
        raise HTTPException(403, "Your account may not correct entries: ask the clerk.")
    if not body.reason.strip():
        raise HTTPException(422, "Reason: say why the entry is corrected (it is kept on record).")
    if body.undo and (body.at is not None or body.method is not None):
        raise HTTPException(422, "Undo: give only the reason (no new time or method).")
    n = notice_record(cases, number)
    at = None if body.at is None else _local(body.at, body.at, profile)
    try:
        done = correct_entry(
            cases, profile, n, entry, who=user.username, reason=body.reason,
            at=at, method=body.method, undo=body.undo,
        )  # fmt: skip
    except CorrectionRefused as exc:
        raise HTTPException(409, str(exc)) from None
    return CorrectionRecorded(
        number=n.number,
        entry=entry,
        message=f"{_correction_words(done, profile)} (notice {n.number}).",
    )


@router.post("/notices/{number}/payments/{payment}/correction", tags=["notices"])
def correct_a_payment(
    number: str,
    payment: int,
    body: PaymentCorrectionBody,
    *,
    user: LoggedIn,
    cases: Cases,
    profile: VillageProfile,
    now: Now,
) -> CorrectionRecorded:
    """Correct a payment on the bill (the right amount or date) or undo it (entered on
    the wrong bill, never paid), with the reason; the payment stays on record, voided.
    Refused (409) in the clerk's words where a later act rests on it."""
    if not user.may("correct"):
        raise HTTPException(403, "Your account may not correct entries: ask the clerk.")
    if not body.reason.strip():
        raise HTTPException(422, "Reason: say why the payment is corrected (it is kept on record).")
    if body.undo and (body.amount is not None or body.paid_at is not None):
        raise HTTPException(422, "Undo: give only the reason (no new amount or date).")
    n = notice_record(cases, number)
    amount = None if body.amount is None else money(body.amount)
    paid_at = None if body.paid_at is None else _local(body.paid_at, body.paid_at, profile)
    try:
        bill = correct_payment(
            cases, profile, n, payment, who=user.username, reason=body.reason, now=now,
            amount=amount, paid_at=paid_at, undo=body.undo,
        )  # fmt: skip
    except CorrectionRefused as exc:
        raise HTTPException(409, str(exc)) from None
    done = "undone" if body.undo else "corrected"
    return CorrectionRecorded(
        number=n.number,
        entry=payment,
        message=f"Payment {done} (bill {n.number}); the bill's balance is now ${bill.balance:.2f}.",
    )


@router.get(
    "/notices/{number}/letter.pdf",
    tags=["notices"],
    response_class=Response,
    responses={200: {"content": {"application/pdf": {}}, "description": "the letter"}},
)
def letter(
    user: MayPrint,
    profile: VillageProfile,
    n: Notice,
    download: Annotated[bool, Query(description="as a file to save")] = False,
) -> Response:
    """The notice as the same PDF letter the command line prints (``alerts.pdf.notice_pdf``)."""
    if n.body_text is None:
        raise HTTPException(409, f"Notice {n.number} is not written yet: it cannot be printed.")
    how = "attachment" if download else "inline"
    return Response(
        notice_pdf(n, profile),
        media_type="application/pdf",
        headers={
            "Content-Disposition": f'{how}; filename="notice-{n.number}.pdf"',
            # Our own page shows the letter in a frame; no one else's may.
            "Content-Security-Policy": "default-src 'none'; frame-ancestors 'self'",
            "Cache-Control": "private, no-store",
        },
    )


def _local(at: datetime | None, now: datetime, profile: Profile) -> datetime:
    if at is None:
        return now
    return at if at.tzinfo is not None else at.replace(tzinfo=profile.zone)


@router.post("/notices/{number}/service", tags=["notices"])
def record_service(
    number: str,
    body: ServiceBody,
    *,
    user: LoggedIn,
    cases: Cases,
    profile: VillageProfile,
    now: Now,
) -> ServiceRecorded:
    """Record how, by whom and when the notice was served (its period runs from here)."""
    if not user.may("notice_action"):
        raise HTTPException(403, "Your account may not record service of a notice.")
    n = notice_record(cases, number)
    at = _local(body.at, now, profile)
    served_by = body.served_by.strip()
    if not served_by:
        raise HTTPException(422, "Served by: write the name of the person who served it.")
    serve_notice(cases, profile, n, at=at, served_by=served_by, method=body.method, user=user)
    return ServiceRecorded(
        number=n.number, method=body.method, served_by=served_by, at=at.isoformat(),
        message=f"Notice {n.number} recorded as served {SERVED_BY[body.method]}.",
    )  # fmt: skip


def serve_notice(
    cases: CaseStore,
    profile: Profile,
    n: NoticeRecord,
    *,
    at: datetime,
    served_by: str,
    method: str,
    user: User,
) -> None:
    """Service through the one path the command line uses; refused in plain words."""
    if method not in DELIVERY_METHODS:
        raise HTTPException(422, "How it was served: choose one of the ways listed.")
    records = NoticeRecords.read(cases)
    case = snow_case(records, profile, n, at)
    if not can_serve(n, case):
        why = (
            f"Notice {n.number} was already served."
            if n.delivered_at is not None
            else f"Notice {n.number} cannot be served now: it is “{NOTICE_STATUS.get(n.status)}”"
            + (f" and the case is at “{CASE[case.state].label}”." if case is not None else ".")
        )
        raise HTTPException(409, why)
    if not profile.notice_delivery.counts(n.kind, method):
        counted = [SERVICE_METHODS[m].split(" (")[0].lower() for m in DELIVERY_METHODS
                   if profile.notice_delivery.counts(n.kind, m)]  # fmt: skip
        raise HTTPException(
            409,
            f"{SERVICE_METHODS[method].split(' (')[0]} does not count as serving this notice;"
            f" the Village counts {' or '.join(counted)}.",
        )
    try:
        record_notice_delivery(cases, n.id, at, served_by, method, profile=profile)
    except (NotDeliveryError, NotReadyError, ValueError) as exc:
        raise HTTPException(409, f"Not recorded: {exc}") from None
    if served_by != user.username:
        cases.audit.append(
            user.username, "notice.service_entered", f"notice:{n.number}",
            {"served_by": served_by, "method": method, "at": at.isoformat()},
        )  # fmt: skip


def _check_step(number: str, kind: str, case: CaseNow | None, bill: BillRecord | None) -> None:
    """A step the case cannot take now is refused (409), with why in the clerk's words."""
    if case is None:
        raise HTTPException(409, f"Notice {number} is not about a snow-and-ice case.")
    refused = bill_step_refusal(kind, bill)
    if refused is not None:
        raise HTTPException(409, refused)
    if kind not in case.steps:
        raise HTTPException(409, refusal(kind, case.state, STEP_LABELS))


def _bill_received(
    request: Request, cases: CaseStore, profile: Profile, n: NoticeRecord, bill: BillRecord,
    *, at: datetime, user: User, target: str,
) -> RecordedAction:  # fmt: skip
    """The owner received the bill (§ 370-10 G): the receipt and the last day to pay (receipt
    + the bill's period to pay) recorded on the bill, and the case's clock told, as
    ``sidewalk notices bill-received`` does."""
    village = village_settings(request)
    letterhead = None if village is None else Letterhead.from_settings(village, profile)
    done = record_bill_receipt(
        NoticeIssuer(cases, profile, letterhead=letterhead), bill.id, at, user.username
    )
    told = [a for a in cases.actions.list(target) if a.kind == "bill_received"]
    due = f" It is payable by {local_day(done.due_date)}." if done.due_date else ""
    return RecordedAction(
        action_id=told[-1].id if told else 0, kind="bill_received", target=target, at=iso(at),
        message=f"Recorded “{STEP_DONE['bill_received']}” for notice {n.number}.{due}",
    )  # fmt: skip


@router.post("/notices/{number}/actions", tags=["notices"])
def act(
    request: Request,
    number: str,
    body: ActionBody,
    *,
    user: LoggedIn,
    cases: Cases,
    profile: VillageProfile,
    now: Now,
) -> RecordedAction:
    """Record a person's step on a notice's case, if the case accepts it now; the analytics
    runner applies it. A step the case cannot take is refused (409) with the reason."""
    permission = ACTION_PERMISSION.get(body.kind)
    if permission is None:
        raise HTTPException(422, "That is not a step that can be recorded on a notice.")
    if not user.may(permission):
        raise HTTPException(
            403, f"The {user.role} account may not record “{step_label(body.kind)}”."
        )
    n = notice_record(cases, number)
    at = _local(body.at, now, profile)
    if body.kind == "record_delivery":
        method = body.channel or "hand"
        serve_notice(cases, profile, n, at=at, served_by=user.username, method=method, user=user)
        return RecordedAction(
            action_id=_last_action(cases, n), kind=body.kind, target=n.number, at=iso(at),
            message=f"Notice {n.number} recorded as served {SERVED_BY.get(method, '')}.",
        )  # fmt: skip
    if n.violation_id is None:
        raise HTTPException(409, f"Notice {number} has no case to record steps on.")
    records = NoticeRecords.read(cases)
    violation = records.violations[n.violation_id]
    detail: dict[str, Any] = {"notice": number}
    if body.note:
        detail["note"] = body.note
    target = n.frontage_id if body.kind == "record_treated" else violation.key
    case = snow_case(records, profile, n, at)
    bill = records.bills.get(violation.id)
    if body.kind != "record_treated":
        _check_step(number, body.kind, case, bill)
    crew = None
    if body.kind == "abatement_done" and (body.workers or body.equipment):
        crew = parse_crew(body.workers or [], body.equipment)
    try:
        parse_action(body.kind, target, detail, at=at, who=user.username)
    except ActionError as exc:
        raise HTTPException(422, f"Not recorded: {', '.join(exc.fields) or exc}") from None
    if body.kind == "bill_received" and bill is not None:
        return _bill_received(request, cases, profile, n, bill, at=at, user=user, target=target)
    if crew is not None:
        order = cases.bills.abatement_by_key(f"{violation.key}/abatement")
        if order is None:
            raise HTTPException(409, f"Notice {number}: no Village work order to record hours on.")
        record_crew_work(cases, order.id, crew, at, user.username)
    action = cases.actions.record(body.kind, target, at, user.username, detail)
    return RecordedAction(
        action_id=action.id, kind=action.kind, target=target, at=iso(at),
        message=f"Recorded “{STEP_DONE.get(body.kind, step_label(body.kind))}”"
        f" for notice {number}.",
    )  # fmt: skip


def _last_action(cases: CaseStore, n: NoticeRecord) -> int:
    """The id of the step a service just recorded (0 for a notice whose service starts none)."""
    if n.violation_id is None or n.kind not in CLOCK_FROM_DELIVERY:
        return 0
    key = cases.clocks.get_violation(n.violation_id).key
    steps = cases.actions.list(key)
    return steps[-1].id if steps else 0


class IssueBody(RequestBody):
    case: str = Field(
        min_length=3, max_length=200,
        description="the case, as /notices-to-issue lists it: obstruction:<id> or inspection:<id>",
    )  # fmt: skip


class CaseToNotice(BaseModel):
    """A case an inspector recorded that waits for its written notice."""

    case: str = Field(description="what to send to POST /notices")
    kind_words: str = Field(description="the notice it calls for, in the clerk's words")
    address: str
    what: str = Field(description="what was found, in the inspector's or the Code's words")
    seen_at: str | None
    ordinance: str | None


class NoticeIssued(BaseModel):
    number: str
    message: str


@router.get("/notices-to-issue", tags=["notices"])
def to_issue(user: Reader, cases: Cases) -> list[CaseToNotice]:
    """Obstructions and inspectors' findings whose written notice is still to be issued."""
    addresses = {f.id: f.street_address for f in cases.registry.list_frontages()}
    out = []
    for v in cases_awaiting_notice(cases):
        e = v.evidence
        said = str(e.get("description") or "").strip()
        what = said or str(e.get("finding") or "")
        out.append(CaseToNotice(
            case=v.key, kind_words=notice_kind(CASE_NOTICE[v.key.partition(":")[0]]),
            address=addresses.get(v.frontage_id, v.frontage_id), what=what,
            seen_at=iso(v.detected_at), ordinance=cited(v.citation),
        ))  # fmt: skip
    return out


@router.post("/notices", tags=["notices"])
def issue_notice(
    request: Request, body: IssueBody, *, user: LoggedIn, cases: Cases, profile: VillageProfile,
    now: Now,
) -> NoticeIssued:  # fmt: skip
    """Issue the written notice a recorded case waits for, as ``sidewalk notices issue``:
    numbered in the register and written under the settings' letterhead (audited)."""
    if not user.may("notice_action"):
        raise HTTPException(403, f"The {user.role} account may not issue notices.")
    village = village_settings(request)
    letterhead = None if village is None else Letterhead.from_settings(village, profile)
    issuer = NoticeIssuer(cases, profile, letterhead=letterhead)
    try:
        n = issuer.case_notice(body.case.strip(), now, who=user.username)
    except CaseNotOnRecord as exc:
        said = str(exc)
        raise HTTPException(409, f"Not issued: {said[:1].upper()}{said[1:]}.") from None
    if n.body_text is None:
        why = "it waits for the Village to confirm a value" if n.status == "held" else (
            "see the notice register for why")  # fmt: skip
        message = f"Notice {n.number} issued, not written yet: {why}."
    else:
        message = f"Notice {n.number} issued. Print it, serve it, then record how it was served."
    return NoticeIssued(number=n.number, message=message)


@router.post("/notices/print-batch", tags=["notices"])
def print_batch(body: PrintBatchBody, user: MayPrint, cases: Cases) -> PrintBatch:
    """Give a batch's printable letters (audited). Printing is not service: nothing about
    the notices changes until someone records how each one was served."""
    for number in body.numbers:
        notice_record(cases, number)  # 404 for a number that is not a notice
    batch = secrets.token_hex(4)
    cases.audit.append(
        user.username, "notice.print_batch", f"batch:{batch}", {"notices": body.numbers}
    )
    query = "&".join(f"n={number}" for number in body.numbers)
    return PrintBatch(batch=batch, count=len(body.numbers), url=f"/print/notices?{query}")
