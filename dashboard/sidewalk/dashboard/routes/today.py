"""Today: what needs a person now, in the clerk's words, one query per kind of record.

Five lists: notices to serve, deadlines in the next 24 hours (the owner's own
deadline once a notice is served), decisions waiting for a person (deadlines the
camera could not settle, possible hazards, notices held for a value the Village
has not confirmed), Village work to send a crew to, and overdue bills. Each line
gives the address, what it is and what to do. The records are read once per kind
(never once per frontage), only the columns shown, in one read transaction
(``cases.pages.today``), so a village of 2,000 frontages costs the same seven
queries as one of three (``tests/dashboard/test_today.py`` counts them), and two
more for the owners of record when any case has a notice: an open case whose
parcel changed hands after its notice is a decision for a person.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Final, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from sidewalk.alerts.accounts import OWNER_CHANGE, owner_change_hold_words, owner_changes_since
from sidewalk.alerts.notices import CLOCK_FROM_DELIVERY
from sidewalk.analytics.clocks.enforcement import DONE_STATES, ENFORCEMENT, PERIOD_STATES
from sidewalk.analytics.clocks.states import CaseState, ClearingState
from sidewalk.core.profile import Profile
from sidewalk.dashboard.casework import AWAITS_DELIVERY
from sidewalk.dashboard.routes.deps import Cases, Now, Reader, VillageProfile, iso
from sidewalk.dashboard.states import label
from sidewalk.dashboard.words import ABATEMENT_REASONS, notice_kind, setting_words
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.cases.pages import (
    AuditLine,
    BillDue,
    ClockLine,
    NoticeLine,
    ViolationKey,
    WorkOrderLine,
)

router = APIRouter()

StateOf = Callable[[ViolationKey], CaseState]
Address = Callable[[str], str]
GroupKey = Literal["serve", "deadlines", "review", "dispatch", "overdue"]
WINDOW: Final = timedelta(hours=24)
# An owner's deadline this close is marked urgent (someone should look right after it).
URGENT: Final = timedelta(hours=4)
CANDIDATE_STATES: Final = frozenset({CaseState.NOTICE_ISSUED, CaseState.NOTICE_PERIOD})


class TodayItem(BaseModel):
    """One thing to do, in the clerk's words."""

    address: str
    frontage: str = Field(description="for links only; never shown")
    what: str = Field(description="what it is")
    todo: str = Field(description="what to do")
    at: str | None = Field(description="the instant that matters (a deadline, an order)")
    at_words: str | None = Field(description="what that instant is: Deadline, Due, Ordered …")
    notice: str | None = Field(description="the notice's number, to open it")
    urgent: bool = False


class TodayGroup(BaseModel):
    key: GroupKey
    title: str
    empty: str = Field(description="what to say when there is nothing")
    items: list[TodayItem]


class Today(BaseModel):
    """The clerk's first page: everything that needs a person now."""

    village: str
    zone: str
    now: str
    groups: list[TodayGroup]


def case_key(violation: ViolationKey) -> str:
    """The key the recorder gives a case's clock (``casework.case_clock_key``'s, for the
    lean row Today reads)."""
    return f"{violation.frontage_id}/{ENFORCEMENT}/{violation.key}"


@router.get("/today", tags=["pages"])
def today(user: Reader, cases: Cases, profile: VillageProfile, now: Now) -> Today:
    """What needs a person now: notices to serve, deadlines, decisions, crews, bills."""
    return build_today(cases, profile, now)


def build_today(cases: CaseStore, profile: Profile, now: datetime) -> Today:
    """Today from the records, seven queries whatever the size of the village."""
    rows = cases.pages.today(
        case_kind=ENFORCEMENT,
        audit_actions=("hazard.candidate", "notice.held"),
        due_before=now.astimezone(profile.zone).date(),
    )
    addresses, notices, clocks = rows.addresses, rows.notices, rows.clocks
    violations = {v.key: v for v in rows.violations}
    case_states = {c.key: CaseState(c.state) for c in clocks if c.kind == ENFORCEMENT}
    by_id = {v.id: v for v in violations.values()}

    def state_of(violation: ViolationKey) -> CaseState:
        # A case the runner has not moved yet has its notice issued (as ``sidewalk act``).
        return case_states.get(case_key(violation), CaseState.NOTICE_ISSUED)

    def address(frontage: str) -> str:
        return addresses.get(frontage, "an address not in the registry")

    return Today(
        village=profile.village.name,
        zone=profile.village.timezone,
        now=now.isoformat(),
        groups=[
            TodayGroup(
                key="serve",
                title="Notices to serve",
                empty="No notice is waiting to be served.",
                items=_to_serve(notices, by_id, state_of, address),
            ),
            TodayGroup(
                key="deadlines",
                title="Deadlines in the next 24 hours",
                empty="No deadline falls in the next 24 hours.",
                items=_deadlines(clocks, now, address),
            ),
            TodayGroup(
                key="review",
                title="Decisions waiting for a person",
                empty="Nothing is waiting for a decision.",
                items=_review(clocks, notices, violations, rows.audit, state_of, address)
                + _owner_changed(cases, profile, notices, by_id, state_of, address),
            ),
            TodayGroup(
                key="dispatch",
                title="Village crew to send",
                empty="No Village work is waiting for a crew.",
                items=_dispatch(rows.work_orders, address),
            ),
            TodayGroup(
                key="overdue",
                title="Bills overdue",
                empty="No bill is overdue.",
                items=_overdue(rows.overdue, now, profile, address),
            ),
        ],
    )


def _to_serve(
    notices: Iterable[NoticeLine],
    violations: dict[int, ViolationKey],
    state_of: StateOf,
    address: Address,
) -> list[TodayItem]:
    items = []
    for n in notices:
        if n.delivered_at is not None or n.status not in ("pending", "rendered"):
            continue
        violation = violations.get(n.violation_id) if n.violation_id else None
        # Only the notice its case waits for: a cured case's, or a clearing notice
        # replaced by a hazard notice, is not served.
        if (
            n.kind in CLOCK_FROM_DELIVERY
            and violation is not None
            and AWAITS_DELIVERY.get(state_of(violation)) != n.kind
        ):
            continue
        hazard = n.kind == "hazard_notice"
        if n.status == "pending":
            todo = "It is being prepared; serve it once it can be printed."
        elif hazard:
            todo = "Post it on the door or hand it over now, then record the time: the 2 hours start then."  # noqa: E501
        else:
            todo = (
                "Print it; hand it over, post it on the door or mail it; then record the service."
            )
        items.append(
            TodayItem(
                address=address(n.frontage_id),
                frontage=n.frontage_id,
                what=f"{notice_kind(n.kind)}, not yet served",
                todo=todo,
                at=iso(n.issued_at),
                at_words="Issued",
                notice=n.number,
                urgent=hazard,
            )
        )
    return sorted(items, key=lambda i: (not i.urgent, i.at or ""))


def _deadlines(clocks: Iterable[ClockLine], now: datetime, address: Address) -> list[TodayItem]:
    items = []
    for c in clocks:
        if c.deadline is None or not now <= c.deadline <= now + WINDOW:
            continue
        if c.kind == ENFORCEMENT and c.state in PERIOD_STATES:
            hazard = c.state == CaseState.HAZARD_PERIOD
            what = "The owner's deadline to " + (
                "remove the hazard (hazard notice served)"
                if hazard
                else "clear the sidewalk (notice served)"
            )
            todo = "Check it after the deadline: if it is not cleared, the Village clears it and bills the owner."  # noqa: E501
        elif c.kind == "clearing" and c.state == ClearingState.CLEARING_PERIOD:
            what = "Snow stopped: the owner must clear the sidewalk by the deadline"
            todo = "Nothing yet: the camera checks the sidewalk at the deadline."
        else:
            what = label(c.state, c.kind)
            todo = "Check it after the deadline."
        items.append(
            TodayItem(
                address=address(c.frontage_id),
                frontage=c.frontage_id,
                what=what,
                todo=todo,
                at=iso(c.deadline),
                at_words="Deadline",
                notice=None,
                urgent=c.kind == ENFORCEMENT and c.deadline - now <= URGENT,
            )
        )
    return sorted(items, key=lambda i: i.at or "")


def _review(  # noqa: PLR0917 (the records Today read once, passed in)
    clocks: Iterable[ClockLine],
    notices: Iterable[NoticeLine],
    violations: dict[str, ViolationKey],
    audit: Iterable[AuditLine],
    state_of: StateOf,
    address: Address,
) -> list[TodayItem]:
    items = []
    for c in clocks:
        if c.kind != "clearing" or c.state not in (
            ClearingState.NEEDS_REVIEW, ClearingState.UNVERIFIED
        ):  # fmt: skip
            continue
        missing = c.state == ClearingState.NEEDS_REVIEW
        items.append(
            TodayItem(
                address=address(c.frontage_id),
                frontage=c.frontage_id,
                what="Deadline passed: "
                + ("the camera's pictures did not come in" if missing else "not measured"),
                todo="Send an inspector to look (Rounds), or check the camera when it reports.",
                at=iso(c.deadline),
                at_words="Deadline",
                notice=None,
            )
        )
    open_notice = {n.violation_id: n.number for n in notices if n.kind == "clearing_violation"}
    seen: set[str] = set()
    held: dict[str, list[str]] = {}
    for row in audit:  # newest first
        if row.action == "notice.held":
            held.setdefault(row.subject.removeprefix("notice:"), list(row.detail["waiting_for"]))
            continue
        key = row.subject.removeprefix("violation:")
        violation = violations.get(key)
        if key in seen or violation is None or state_of(violation) not in CANDIDATE_STATES:
            continue
        seen.add(key)
        reasons = ", ".join(str(r) for r in row.detail.get("reasons", ())) or "possible hazard"
        items.append(
            TodayItem(
                address=address(violation.frontage_id),
                frontage=violation.frontage_id,
                what=f"Possible hazard: {reasons}",
                todo="An officer decides whether it is an immediate danger; if so, confirm the hazard (Rounds) and post the 2-hour notice.",  # noqa: E501
                at=iso(row.recorded_at),
                at_words="Found",
                notice=open_notice.get(violation.id),
                urgent=True,
            )
        )
    for n in notices:
        if n.status != "held":
            continue
        names = held.get(n.number, [])
        waiting = ", ".join(setting_words(s) for s in names if s != OWNER_CHANGE) or "a value"
        what = f"{notice_kind(n.kind)} held: "
        if OWNER_CHANGE in names:  # a bill to the owner served before a sale
            what += owner_change_hold_words()
            if len(names) > 1:
                what += f"; it also relies on a value the Village has not confirmed ({waiting})"
        else:
            what += f"it relies on a value the Village has not confirmed ({waiting})"
        items.append(
            TodayItem(
                address=address(n.frontage_id),
                frontage=n.frontage_id,
                what=what,
                todo="The Village confirms the value; the notice is then released to be served.",
                at=iso(n.issued_at),
                at_words="Issued",
                notice=n.number,
            )
        )
    return sorted(items, key=lambda i: (not i.urgent, i.at or ""))


def _owner_changed(  # noqa: PLR0917 (the records Today read once, passed in)
    cases: CaseStore,
    profile: Profile,
    notices: Iterable[NoticeLine],
    by_id: dict[int, ViolationKey],
    state_of: StateOf,
    address: Address,
) -> list[TodayItem]:
    """Open cases whose parcel changed hands after their notice (§ 370-10 F, G)."""
    issued: dict[str, datetime] = {}
    for n in notices:
        violation = by_id.get(n.violation_id) if n.violation_id is not None else None
        if violation is None or state_of(violation) in DONE_STATES:
            continue
        issued[n.frontage_id] = min(n.issued_at, issued.get(n.frontage_id, n.issued_at))
    return [
        TodayItem(
            address=address(frontage),
            frontage=frontage,
            what=said,
            todo="Bill only as this says; the Village attorney confirms the reading.",
            at=None,
            at_words=None,
            notice=None,
        )
        for frontage, said in owner_changes_since(cases, profile, issued)
    ]


def _dispatch(abatements: Iterable[WorkOrderLine], address: Address) -> list[TodayItem]:
    return [
        TodayItem(
            address=address(a.frontage_id),
            frontage=a.frontage_id,
            what="Village to do the work: "
            + ABATEMENT_REASONS.get(a.reason, a.reason.replace("_", " ")),
            todo="Send the crew; when done, record “Village crew finished the work” with the"
            " hours and equipment for the bill.",
            at=iso(a.ordered_at),
            at_words="Ordered",
            notice=None,
            urgent=True,
        )
        for a in sorted(abatements, key=lambda a: a.ordered_at)
    ]


def _overdue(
    bills: Iterable[BillDue], now: datetime, profile: Profile, address: Address
) -> list[TodayItem]:
    today_local = now.astimezone(profile.zone).date()
    days = profile.billing.tax_roll_after.days
    return [
        TodayItem(
            address=address(b.frontage_id),
            frontage=b.frontage_id,
            what=f"Bill of ${b.amount:,.2f}: ${b.balance:,.2f} unpaid",
            todo=f"Call the owner. Costs unpaid {days} days after the work go on the tax roll.",
            at=b.due_date.isoformat() if b.due_date else None,
            at_words="Was due",
            notice=None,
        )
        for b in sorted(bills, key=lambda b: b.due_date or today_local)
        if b.due_date is not None and b.due_date < today_local and b.balance > 0
    ]


class DashboardClock(BaseModel):
    """The dashboard's clock and the village's zone: pages say "tomorrow 5:00 PM" by them."""

    now: str
    zone: str


@router.get("/now", tags=["pages"])
def dashboard_clock(user: Reader, profile: VillageProfile, now: Now) -> DashboardClock:
    """The dashboard's now (wall time live; the storm's last event in the demo)."""
    return DashboardClock(now=now.isoformat(), zone=profile.village.timezone)
