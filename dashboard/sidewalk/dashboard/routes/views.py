"""Views of the case records that several pages share, as response models.

Every response model lists the fields the browser reads, with the values it
has always had: instants are ISO 8601 strings with the offset they were
stored with, amounts of money are decimal strings. A field with a default is
sent only when a handler sets it (those routes use
``response_model_exclude_unset``): that is how owner names and mailing
addresses stay out of the answer for roles without ``owner_details``,
absent rather than null.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, TypeVar

from pydantic import BaseModel, Field

from sidewalk.alerts.confirm import still_waiting
from sidewalk.dashboard.auth import User
from sidewalk.dashboard.routes.deps import iso
from sidewalk.dashboard.states import category
from sidewalk.storage.cases import BillRecord, CaseStore, ConfirmationRecord, OwnerRecord, RuleUse
from sidewalk.storage.cases.pages import FrontageLine


class RuleView(BaseModel):
    """An ordinance value a decision used, with its citation and gap mark."""

    name: str
    value: str = Field(description="decimal, as in the profile")
    unit: str
    citation: str | None
    unconfirmed: bool


class ClockView(BaseModel):
    """One ordinance clock of a frontage."""

    id: int
    frontage: str
    address: str | None
    kind: str
    state: str
    category: str = Field(description="the colour group (overview categories)")
    started_at: str | None
    deadline: str | None
    closed_at: str | None
    citation: str | None
    unconfirmed: bool
    rules: list[RuleView]


class OwnerContact(BaseModel):
    """An owner of record: only for roles that may see owner details."""

    name: str
    address_lines: list[str]


class FrontageView(BaseModel):
    """A frontage with the state of the clock that decides its colour."""

    id: str
    address: str
    parcel: str
    length_ft: float
    zone: str
    device: str | None
    state: str | None
    clock_kind: str | None
    category: str
    deadline: str | None = Field(description="the deciding clock's, while it runs")
    owner: OwnerContact | None = Field(default=None, description="clerk and admin only")


class BillView(BaseModel):
    """A bill for a work order, with what is paid and what is left."""

    id: int
    number: str | None = Field(
        default=None, description="the bill's number: its notice's, in the notice register"
    )
    abatement: int
    frontage: str
    amount: str
    paid: str
    balance: str
    costs_incurred_at: str | None
    issued_at: str | None
    received_at: str | None
    due_date: str | None
    status: str
    owner: OwnerContact | None = Field(default=None, description="clerk and admin only")
    held: str | None = Field(
        default=None, description="why the bill's notice is held, not sent, in the clerk's words"
    )


class ClockLike(Protocol):
    """What a clock view shows: a whole ``ClockRecord`` or a lean ``RunningClock`` row."""

    @property
    def id(self) -> int: ...
    @property
    def frontage_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def deadline(self) -> datetime | None: ...
    @property
    def closed_at(self) -> datetime | None: ...
    @property
    def citation(self) -> str | None: ...
    @property
    def unconfirmed(self) -> bool: ...
    @property
    def rules(self) -> Sequence[RuleUse]: ...


class DecidingLike(Protocol):
    """What deciding a frontage's colour reads of a clock."""

    @property
    def frontage_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def deadline(self) -> datetime | None: ...
    @property
    def active(self) -> bool: ...


D = TypeVar("D", bound=DecidingLike)


def rule_view(r: RuleUse) -> RuleView:
    return RuleView(
        name=r.name, value=str(r.value), unit=r.unit, citation=r.citation,
        unconfirmed=r.unconfirmed,
    )  # fmt: skip


def clock_view(
    c: ClockLike, addresses: dict[str, str], in_force: Mapping[str, ConfirmationRecord]
) -> ClockView:
    """``in_force``: the Village's confirmations; the clock's own flag is the profile's mark
    when it started, so it is "unconfirmed" only while a value it used still waits."""
    return ClockView(
        id=c.id,
        frontage=c.frontage_id,
        address=addresses.get(c.frontage_id),
        kind=c.kind,
        state=c.state,
        category=category(c.state),
        started_at=iso(c.started_at),
        deadline=iso(c.deadline),
        closed_at=iso(c.closed_at),
        citation=c.citation,
        unconfirmed=c.unconfirmed and bool(still_waiting(c.rules, dict(in_force))),
        rules=[rule_view(r) for r in c.rules],
    )


def deciding_clocks(clocks: Iterable[D]) -> dict[str, D]:
    """Each frontage's clock that decides its colour, from its clocks in start order (or
    ``cases.pages``' ``deciding`` rows): an open enforcement case first."""
    chosen: dict[str, D] = {}
    for clock in clocks:  # start order: later clocks win
        held = chosen.get(clock.frontage_id)
        # An open enforcement case outranks any clearing clock that follows it.
        if (
            held is not None
            and held.active
            and held.kind == "enforcement"
            and clock.kind != "enforcement"
        ):
            continue
        chosen[clock.frontage_id] = clock
    return chosen


def owners_for(cases: CaseStore, user: User) -> dict[str, OwnerRecord] | None:
    """Every owner by id (one query), or None for roles that may not see them."""
    if not user.may("owner_details"):
        return None
    return {o.id: o for o in cases.registry.list_owners()}


def frontage_view(f: FrontageLine, clock: DecidingLike | None, owners: bool) -> FrontageView:
    """The row of a frontage; its owner's name and address only when ``owners`` (the roles
    that may see them: the line carries them then)."""
    view = FrontageView(
        id=f.id,
        address=f.street_address,
        parcel=f.parcel_number,
        length_ft=f.length_ft,
        zone=f.zone,
        device=f.device_id,
        state=clock.state if clock else None,
        clock_kind=clock.kind if clock else None,
        category=category(clock.state) if clock else "none",
        deadline=iso(clock.deadline) if clock and clock.active else None,
    )
    if owners and f.owner_name is not None:
        view.owner = OwnerContact(
            name=f.owner_name, address_lines=list(f.owner_address_lines or ())
        )
    return view


def bill_view(b: BillRecord, user: User) -> BillView:
    view = BillView(
        id=b.id, abatement=b.abatement_id, frontage=b.frontage_id,
        amount=str(b.amount), paid=str(b.paid), balance=str(b.balance),
        costs_incurred_at=iso(b.costs_incurred_at), issued_at=iso(b.issued_at),
        received_at=iso(b.received_at), due_date=iso(b.due_date), status=b.status,
    )  # fmt: skip
    if user.may("owner_details"):
        view.owner = OwnerContact(name=b.owner_name, address_lines=list(b.owner_address_lines))
    return view
