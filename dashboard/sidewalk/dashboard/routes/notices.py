"""Notices and the actions people record on them; the print batch."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, Field

from sidewalk.dashboard.auth import User
from sidewalk.dashboard.routes.deps import Cases, LoggedIn, MayPrint, Now, Reader, RequestBody, iso
from sidewalk.dashboard.routes.views import OwnerContact, RuleView, rule_view
from sidewalk.storage.cases import CaseStore, NotFoundError, NoticeRecord

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


class ActionBody(RequestBody):
    kind: str = Field(description="one of the person actions (ActionKind)")
    at: datetime | None = Field(default=None, description="when it happened; default now")
    channel: str | None = Field(default=None, description="record_delivery: hand, mail, posted")
    note: str | None = Field(default=None, max_length=500)


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


class NoticeView(BaseModel):
    """A notice with its case, rules, actions and deliveries."""

    number: str
    kind: str
    frontage: str
    address: str
    violation_key: str | None
    violation_status: str | None
    offense_count: int | None
    issued_at: str | None
    deadline: str | None
    citation: str | None
    unconfirmed: bool
    rules: list[RuleView]
    status: str
    delivered_at: str | None
    received_at: str | None
    actions: list[NoticeActionView]
    deliveries: list[DeliveryView]
    owner: OwnerContact | None = Field(default=None, description="clerk and admin only")
    body_text: str | None = Field(default=None, description="clerk and admin only")


class RecordedAction(BaseModel):
    action_id: int
    kind: str
    target: str = Field(description="the violation key, or the frontage for record_treated")
    at: str | None


class PrintBatch(BaseModel):
    batch: str
    count: int
    url: str = Field(description="the printable page, one notice per page")


def notice_record(cases: Cases, number: str) -> NoticeRecord:
    """Dependency: the notice named by the ``number`` path parameter (404 if none)."""
    try:
        return cases.notices.get_by_number(number)
    except NotFoundError:
        raise HTTPException(404, f"no notice {number}") from None


Notice = Annotated[NoticeRecord, Depends(notice_record)]


def notice_view(cases: CaseStore, n: NoticeRecord, user: User) -> NoticeView:
    violation = cases.clocks.get_violation(n.violation_id) if n.violation_id else None
    view = NoticeView(
        number=n.number,
        kind=n.kind,
        frontage=n.frontage_id,
        address=cases.registry.get_frontage(n.frontage_id).street_address,
        violation_key=violation.key if violation else None,
        violation_status=violation.status if violation else None,
        offense_count=violation.offense_count if violation else None,
        issued_at=iso(n.issued_at),
        deadline=iso(n.deadline),
        citation=n.citation,
        unconfirmed=any(r.unconfirmed for r in n.rules),
        rules=[rule_view(r) for r in n.rules],
        status=n.status,
        delivered_at=iso(n.delivered_at),
        received_at=iso(n.received_at),
        actions=[
            NoticeActionView(
                kind=a.kind, at=iso(a.at), who=a.who, applied=iso(a.applied_at), error=a.error
            )
            for a in (cases.actions.list(violation.key) if violation else [])
        ],
        deliveries=[
            DeliveryView(channel=d.channel, status=d.status, at=iso(d.attempted_at))
            for d in cases.notices.list_deliveries(notice_id=n.id)
        ],
    )
    if user.may("owner_details"):
        view.owner = OwnerContact(name=n.owner_name, address_lines=list(n.owner_address_lines))
        view.body_text = n.body_text
    return view


@router.get("/notices", tags=["notices"], response_model_exclude_unset=True)
def notices(user: Reader, cases: Cases) -> list[NoticeView]:
    """The notice queue, oldest first."""
    return [notice_view(cases, n, user) for n in cases.notices.list()]


@router.get("/notices/{number}", tags=["notices"], response_model_exclude_unset=True)
def notice(user: Reader, cases: Cases, n: Notice) -> NoticeView:
    return notice_view(cases, n, user)


@router.post("/notices/{number}/actions", tags=["notices"])
def act(number: str, body: ActionBody, user: LoggedIn, cases: Cases, now: Now) -> RecordedAction:
    """Record a person's action on a notice's case; the analytics runner applies it."""
    permission = ACTION_PERMISSION.get(body.kind)
    if permission is None:
        raise HTTPException(422, f"unknown action {body.kind!r}")
    if not user.may(permission):
        raise HTTPException(403, f"the {user.role} role may not record {body.kind}")
    n = notice_record(cases, number)
    if n.violation_id is None:
        raise HTTPException(409, f"notice {number} has no violation case")
    violation = cases.clocks.get_violation(n.violation_id)
    at = body.at or now
    if at.tzinfo is None:
        raise HTTPException(422, "at needs a UTC offset")
    target = n.frontage_id if body.kind == "record_treated" else violation.key
    detail: dict[str, Any] = {"notice": number}
    if body.note:
        detail["note"] = body.note
    if body.kind == "record_delivery":
        channel = body.channel or "hand"
        detail["channel"] = channel
        cases.notices.record_delivery(channel, n.frontage_id, at, "delivered", notice_id=n.id)
        cases.notices.set_delivered(n.id, at)
    action = cases.actions.record(body.kind, target, at, user.username, detail)
    return RecordedAction(action_id=action.id, kind=action.kind, target=target, at=iso(at))


@router.post("/notices/print-batch", tags=["notices"])
def print_batch(body: PrintBatchBody, user: MayPrint, cases: Cases) -> PrintBatch:
    """Log a print batch (one ``print`` delivery per notice) and give its page."""
    at = datetime.now(UTC)
    batch = secrets.token_hex(4)
    for number in body.numbers:
        n = notice_record(cases, number)
        cases.notices.record_delivery(
            "print", n.frontage_id, at, "sent", notice_id=n.id, detail={"batch": batch}
        )
    cases.audit.append(
        user.username, "notice.print_batch", f"batch:{batch}", {"notices": body.numbers}
    )
    query = "&".join(f"n={number}" for number in body.numbers)
    return PrintBatch(batch=batch, count=len(body.numbers), url=f"/print/notices?{query}")
