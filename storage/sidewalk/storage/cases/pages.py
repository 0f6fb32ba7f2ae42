"""Lean reads for the dashboard's busiest pages: Today, the Overview, the map, the live feed.

The repositories return whole records: every column, JSON decoded, through an ORM
object per row. That is right for one case, and about 0.1 ms a row; a page of a
2,000-frontage village reads thousands of rows, and most of that time went into
building objects whose columns the page never shows (a notice's letter text, a
clock's cause). Here each page's rows come from SQLAlchemy Core selects of just
the columns the page uses, one query per kind of record (never one per
frontage), all in one read transaction (one consistent snapshot of the records),
as small named tuples. Read-only: nothing here writes.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, NamedTuple, TypeAlias

from sqlalchemy import Select, and_, case, func, null, or_, select

from sidewalk.storage import models as m
from sidewalk.storage.cases.records import (
    ClockRecord,
    InspectionRecord,
    NoticeRecord,
    OwnerRecord,
    PaymentRecord,
    RuleUse,
    from_row,
)
from sidewalk.storage.cases.unit_of_work import UnitOfWork

# ---------------------------------------------------------------- rows


class FrontageLine(NamedTuple):
    """A watched frontage as the Overview lists it (owner only when asked for)."""

    id: str
    street_address: str
    parcel_number: str
    length_ft: float
    zone: str
    device_id: str | None
    owner_id: str
    owner_name: str | None
    owner_address_lines: tuple[str, ...] | None


class ClockLine(NamedTuple):
    """A clock's state and deadline, without its cause and rules."""

    id: int
    key: str
    frontage_id: str
    kind: str
    state: str
    started_at: datetime
    deadline: datetime | None
    closed_at: datetime | None

    @property
    def active(self) -> bool:
        return self.closed_at is None


class RunningClock(NamedTuple):
    """A running clock with the ordinance values it uses (the Overview's clock table)."""

    id: int
    frontage_id: str
    kind: str
    state: str
    started_at: datetime
    deadline: datetime | None
    closed_at: datetime | None
    citation: str | None
    unconfirmed: bool
    rules: tuple[RuleUse, ...]

    @property
    def active(self) -> bool:
        return self.closed_at is None


class NoticeLine(NamedTuple):
    """A notice's number, kind, status and dates, without its letter."""

    id: int
    number: str
    kind: str
    violation_id: int | None
    frontage_id: str
    issued_at: datetime
    status: str
    delivered_at: datetime | None


class ViolationKey(NamedTuple):
    id: int
    key: str
    frontage_id: str


class AuditLine(NamedTuple):
    """An audit row without its hashes."""

    id: int
    recorded_at: datetime
    actor: str
    action: str
    subject: str
    detail: Mapping[str, Any]


class WorkOrderLine(NamedTuple):
    frontage_id: str
    reason: str
    ordered_at: datetime


class BillDue(NamedTuple):
    """An open bill's amount, what is paid on it, and its due date."""

    frontage_id: str
    amount: Decimal
    paid: Decimal
    due_date: date | None

    @property
    def balance(self) -> Decimal:
        return self.amount - self.paid


class LiveTransition(NamedTuple):
    """A stored clock transition with its clock as it stands now (the live feed)."""

    id: int
    clock_id: int
    clock_kind: str
    frontage_id: str
    from_state: str
    to_state: str
    at: datetime
    cause_kind: str
    clock_state: str
    deadline: datetime | None
    active: bool


@dataclass(frozen=True)
class TodayRows:
    """What Today reads, one query per kind of record."""

    addresses: dict[str, str]  # watched frontages' street addresses by id
    notices: list[NoticeLine]  # not yet served (pending, rendered, held) and clearing notices
    clocks: list[ClockLine]  # running, in start order
    violations: list[ViolationKey]
    audit: list[AuditLine]  # of the asked actions, newest first
    work_orders: list[WorkOrderLine]  # ordered and not yet done, in order
    overdue: list[BillDue]  # open, due before the day asked, soonest due first


@dataclass(frozen=True)
class OverviewRows:
    frontages: list[FrontageLine]  # watched, by id
    # The clocks that can decide a frontage's colour (and maybe others), in start order.
    deciding: Sequence[ClockLine | RunningClock]
    running: list[RunningClock]  # in start order
    alerts: list[AuditLine]  # newest first


@dataclass(frozen=True)
class MapRows:
    frontages: list[FrontageLine]  # watched, by id (no owner)
    deciding: list[ClockLine]
    geometries: dict[str, dict[str, Any]]  # stored GeoJSON by frontage id


@dataclass(frozen=True)
class PropertyRows:
    """A property's records, whole (a property has few), for all its frontages at once."""

    clocks: dict[str, list[ClockRecord]]  # by frontage, each in start order
    notices: list[NoticeRecord]  # issue order
    inspections: dict[str, list[InspectionRecord]]  # by frontage, oldest survey first
    payments: dict[int, list[PaymentRecord]]  # by bill, in the order made


# ---------------------------------------------------------------- queries

Query: TypeAlias = Select[*tuple[Any, ...]]
_F, _C = m.Frontage, m.Clock
_CLOCK = (_C.id, _C.idempotency_key, _C.frontage_id, _C.kind, _C.state, _C.started_at,
          _C.deadline, _C.closed_at)  # fmt: skip
_RUNNING = (_C.id, _C.frontage_id, _C.kind, _C.state, _C.started_at, _C.deadline,
            _C.closed_at, _C.citation, _C.unconfirmed, _C.rules)  # fmt: skip
_AUDIT = (m.AuditEntry.id, m.AuditEntry.recorded_at, m.AuditEntry.actor, m.AuditEntry.action,
          m.AuditEntry.subject, m.AuditEntry.detail_json)  # fmt: skip


def _frontages(owners: bool, *, lines: bool = True) -> Query:
    """``lines``: the owner's address lines too (a JSON column, parsed per row)."""
    cols = (_F.id, _F.street_address, _F.parcel_number, _F.length_ft, _F.zone, _F.device_id,
            _F.owner_id)  # fmt: skip
    query: Query = select(*cols)
    if owners:
        query = query.add_columns(
            m.Owner.name, m.Owner.address_lines if lines else null()
        ).outerjoin(m.Owner, m.Owner.id == _F.owner_id)
    return query.where(_F.retired_at.is_(None)).order_by(_F.id)


def _deciding(case_kind: str, *, running: bool = False, rules: bool = True) -> Query:
    """The clocks that can decide a frontage's colour, in start order: every ``case_kind``
    clock, and each frontage's last-started clock. Any other clock is followed by a later
    one of its frontage, which takes its place whatever it is (``deciding_clocks``), so
    leaving it out changes nothing (nor does reading it); a village's past storms are not
    read. ``running``: the running clocks too, with their citations and rules (the
    Overview's clock table), in the same read."""
    last = (
        select(
            _C.id,
            func.row_number()
            .over(partition_by=_C.frontage_id, order_by=(_C.started_at.desc(), _C.id.desc()))
            .label("n"),
        )
    ).subquery()
    newest = select(last.c.id).where(last.c.n == 1)
    if running:
        # Without ``rules``: still those of a running clock that used an unconfirmed value
        # (the Overview marks it "unconfirmed" only while that value waits for the Board).
        waiting = case((and_(_C.unconfirmed.is_(True), _C.closed_at.is_(None)), _C.rules))
        columns = _RUNNING if rules else (*_RUNNING[:-1], waiting)
        return (
            select(*columns)
            .where(or_(_C.kind == case_kind, _C.id.in_(newest), _C.closed_at.is_(None)))
            .order_by(_C.started_at, _C.id)
        )
    return (
        select(*_CLOCK)
        .where(or_(_C.kind == case_kind, _C.id.in_(newest)))
        .order_by(_C.started_at, _C.id)
    )


def _audit_line(row: Any) -> AuditLine:
    ident, at, actor, action, subject, detail = row
    return AuditLine(ident, at, actor, action, subject, json.loads(detail))


def _frontage_line(row: Any, owners: bool) -> FrontageLine:
    ident, address, parcel, length, zone, device, owner = row[:7]
    name, lines = (row[7], row[8]) if owners else (None, None)
    return FrontageLine(
        ident, address, parcel, length, zone, device, owner, name,
        None if lines is None else tuple(lines),
    )  # fmt: skip


def _running(row: Any) -> RunningClock:
    ident, frontage, kind, state, started, deadline, closed, citation, unconfirmed, rules = row
    return RunningClock(
        ident, frontage, kind, state, started, deadline, closed, citation, unconfirmed,
        tuple(RuleUse.from_json(u) for u in rules or ()),
    )  # fmt: skip


class PageReads:
    """``cases.pages``: each method reads one page's rows in one read transaction."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    def today(
        self, *, case_kind: str, audit_actions: Collection[str], due_before: date
    ) -> TodayRows:
        """Today's rows: ``case_kind`` names the enforcement clocks (their keys tie notices
        to cases), ``audit_actions`` the audit rows wanted (the newest 1,000), and bills
        count as overdue when due before ``due_before``."""
        n, b, a = m.Notice, m.Bill, m.Abatement
        notices = (
            select(
                n.id,
                n.number,
                n.kind,
                n.violation_id,
                n.frontage_id,
                n.issued_at,
                n.status,
                n.delivered_at,
            )
            .where(
                or_(
                    and_(n.delivered_at.is_(None), n.status.in_(("pending", "rendered", "held"))),
                    n.kind == "clearing_violation",
                )
            )
            .order_by(n.issued_at, n.id)
        )
        clocks = select(*_CLOCK).where(_C.closed_at.is_(None)).order_by(_C.started_at, _C.id)
        violations = select(m.Violation.id, m.Violation.idempotency_key, m.Violation.frontage_id)
        audit = (
            select(*_AUDIT)
            .where(m.AuditEntry.action.in_(list(audit_actions)))
            .order_by(m.AuditEntry.id.desc())
            .limit(1000)
        )
        orders = (
            select(a.frontage_id, a.reason, a.ordered_at)
            .where(a.status == "ordered")
            .order_by(a.ordered_at, a.id)
        )
        paid = (
            select(m.Payment.bill_id, func.sum(m.Payment.amount).label("paid"))
            .where(m.Payment.voided_at.is_(None))
            .group_by(m.Payment.bill_id)
            .subquery()
        )
        bills = (
            select(b.frontage_id, b.amount, paid.c.paid, b.due_date)
            .outerjoin(paid, paid.c.bill_id == b.id)
            .where(b.status == "open", b.due_date.is_not(None), b.due_date < due_before)
            .order_by(b.due_date, b.issued_at, b.id)
        )
        addresses = select(_F.id, _F.street_address).where(_F.retired_at.is_(None))
        with self._uow.read() as session:
            return TodayRows(
                addresses={i: s for i, s in session.execute(addresses)},
                notices=[NoticeLine(*r) for r in session.execute(notices)],
                clocks=[ClockLine(*r) for r in session.execute(clocks)],
                violations=[ViolationKey(*r) for r in session.execute(violations)],
                audit=[_audit_line(r) for r in session.execute(audit)],
                work_orders=[WorkOrderLine(*r) for r in session.execute(orders)],
                overdue=[
                    BillDue(f, amount, p if isinstance(p, Decimal) else Decimal("0.00"), due)
                    for f, amount, p, due in session.execute(bills)
                ],
            )

    def overview(
        self,
        *,
        case_kind: str,
        owners: bool,
        alert_actions: Collection[str],
        alert_window: int,
        lean: bool = False,
    ) -> OverviewRows:
        """The Overview's rows: the watched frontages (with their owner's name and address
        when ``owners``), the clocks that decide their colours, the running clocks, and the
        newest 20 of the ``alert_actions`` rows among the newest ``alert_window`` audit rows.
        ``lean``: without the owners' address lines and the clocks' rules (JSON parsed per
        row; the Overview page draws neither), but for the rules of a running clock that
        used an unconfirmed value (its mark holds only until the value is confirmed)."""
        window = (
            select(m.AuditEntry.id).order_by(m.AuditEntry.id.desc()).limit(alert_window).subquery()
        )
        alerts = (
            select(*_AUDIT)
            .where(m.AuditEntry.id.in_(select(window.c.id)))
            .where(m.AuditEntry.action.in_(list(alert_actions)))
            .order_by(m.AuditEntry.id.desc())
            .limit(20)
        )
        with self._uow.read() as session:
            query = _frontages(owners, lines=not lean)
            frontages = [_frontage_line(r, owners) for r in session.execute(query)]
            query = _deciding(case_kind, running=True, rules=not lean)
            clocks = [_running(r) for r in session.execute(query)]
            return OverviewRows(
                frontages=frontages,
                deciding=clocks,
                running=[c for c in clocks if c.closed_at is None],
                alerts=[_audit_line(r) for r in session.execute(alerts)],
            )

    def frontages(self, *, case_kind: str, owners: bool) -> OverviewRows:
        """The watched frontages and the clocks that decide their colours (``/frontages``)."""
        with self._uow.read() as session:
            return OverviewRows(
                frontages=[_frontage_line(r, owners) for r in session.execute(_frontages(owners))],
                deciding=[ClockLine(*r) for r in session.execute(_deciding(case_kind))],
                running=[],
                alerts=[],
            )

    def map(self, *, case_kind: str) -> MapRows:
        """The map's rows: watched frontages, the clocks that decide their colours, and
        the stored geometries."""
        geometries = select(m.FrontageGeometry.frontage_id, m.FrontageGeometry.geometry)
        with self._uow.read() as session:
            return MapRows(
                frontages=[_frontage_line(r, False) for r in session.execute(_frontages(False))],
                deciding=[ClockLine(*r) for r in session.execute(_deciding(case_kind))],
                geometries={f: dict(g) for f, g in session.execute(geometries)},
            )

    def plan(self) -> tuple[list[FrontageLine], dict[str, dict[str, Any]]]:
        """The watched frontages (no owner) and the stored geometries: what the generated
        street plan is drawn from."""
        geometries = select(m.FrontageGeometry.frontage_id, m.FrontageGeometry.geometry)
        with self._uow.read() as session:
            return (
                [_frontage_line(r, False) for r in session.execute(_frontages(False))],
                {f: dict(g) for f, g in session.execute(geometries)},
            )

    def property(self, frontage_ids: Sequence[str]) -> PropertyRows:
        """The clocks, notices, surveys and payments of a property's frontages: one query
        each, whatever the number of frontages and bills (not one per frontage)."""
        ids = list(frontage_ids)
        clocks = select(_C).where(_C.frontage_id.in_(ids)).order_by(_C.started_at, _C.id)
        notices = (
            select(m.Notice)
            .where(m.Notice.frontage_id.in_(ids))
            .order_by(m.Notice.issued_at, m.Notice.id)
        )
        surveys = (
            select(m.Inspection)
            .where(m.Inspection.frontage_id.in_(ids))
            .order_by(m.Inspection.surveyed_at, m.Inspection.id)
        )
        payments = (
            select(m.Payment)
            .join(m.Bill, m.Bill.id == m.Payment.bill_id)
            .where(m.Bill.frontage_id.in_(ids), m.Payment.voided_at.is_(None))
            .order_by(m.Payment.paid_at, m.Payment.id)
        )
        rows = PropertyRows({i: [] for i in ids}, [], {i: [] for i in ids}, {})
        with self._uow.read() as session:
            for c in session.scalars(clocks):
                rows.clocks[c.frontage_id].append(from_row(ClockRecord, c))
            rows.notices.extend(from_row(NoticeRecord, n) for n in session.scalars(notices))
            for i in session.scalars(surveys):
                rows.inspections[i.frontage_id].append(from_row(InspectionRecord, i))
            for p in session.scalars(payments):
                rows.payments.setdefault(p.bill_id, []).append(from_row(PaymentRecord, p))
        return rows

    def owners(self, owner_ids: Collection[str]) -> dict[str, OwnerRecord]:
        """The owners asked for, by id, in one query (a page names a few of thousands)."""
        query = select(m.Owner).where(m.Owner.id.in_(list(owner_ids)))
        with self._uow.read() as session:
            return {o.id: from_row(OwnerRecord, o) for o in session.scalars(query)}

    def live_after(
        self, transition_id: int, audit_id: int, limit: int = 500
    ) -> tuple[list[LiveTransition], list[AuditLine]]:
        """Transitions and audit rows stored after the ids given, in storage order, at most
        ``limit`` of each: each transition with its clock as it stands now (one joined
        query, not one read per transition); a transition whose clock is gone is left out."""
        t = m.ClockTransition
        transitions = (
            select(
                t.id,
                t.clock_id,
                _C.kind,
                _C.frontage_id,
                t.from_state,
                t.to_state,
                t.at,
                t.cause,
                _C.state,
                _C.deadline,
                _C.closed_at,
            )
            .join(_C, _C.id == t.clock_id)
            .where(t.id > transition_id)
            .order_by(t.id)
            .limit(limit)
        )
        audit = select(*_AUDIT).where(m.AuditEntry.id > audit_id).order_by(m.AuditEntry.id)
        with self._uow.read() as session:
            return (
                [
                    LiveTransition(
                        i,
                        c,
                        kind,
                        f,
                        fr,
                        to,
                        at,
                        str((cause or {}).get("kind")),
                        state,
                        deadline,
                        closed is None,
                    )
                    for i, c, kind, f, fr, to, at, cause, state, deadline, closed in (
                        session.execute(transitions)
                    )
                ],
                [_audit_line(r) for r in session.execute(audit.limit(limit))],
            )
