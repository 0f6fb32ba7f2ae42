"""Dashboard accounts: users, login sessions, login throttling, the feed's marks."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import delete, func, select, update

from sidewalk.storage import models as m
from sidewalk.storage.cases.audit import AuditRepository
from sidewalk.storage.cases.errors import CaseStoreError
from sidewalk.storage.cases.records import (
    AuditRecord,
    BillRecord,
    DashboardRole,
    DashboardSessionRecord,
    DashboardUserRecord,
    FrontageRecord,
    ViolationRecord,
    from_row,
)
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, now


class DashboardRecords:
    """``cases.dashboard``: the dashboard's accounts, sessions and login failures."""

    def __init__(self, uow: UnitOfWork, audit: AuditRepository) -> None:
        self._uow = uow
        self._audit = audit

    # -- accounts and sessions

    def add_user(
        self, username: str, password_hash: str, role: DashboardRole, who: str
    ) -> DashboardUserRecord:
        """Create an account (refused if the name is taken); audited as ``who``."""
        with self._uow.write() as session:
            if session.get(m.DashboardUser, username) is not None:
                raise CaseStoreError(f"user {username!r} exists")
            row = m.DashboardUser(
                username=username, password_hash=password_hash, role=role, disabled=False,
                created_at=now(),
            )  # fmt: skip
            session.add(row)
            session.flush()
            self._audit.chain(session, who, "user.created", f"user:{username}", {"role": role})
            return from_row(DashboardUserRecord, row)

    def update_user(
        self,
        username: str,
        who: str,
        *,
        role: DashboardRole | None = None,
        password_hash: str | None = None,
        disabled: bool | None = None,
    ) -> DashboardUserRecord:
        """Change an account's role, password or disabled flag; sessions end on any change."""
        with self._uow.write() as session:
            row = self._uow.get(session, m.DashboardUser, username)
            changed: dict[str, Any] = {}
            if role is not None and role != row.role:
                changed["role"] = role
                row.role = role
            if password_hash is not None:
                changed["password"] = "changed"
                row.password_hash = password_hash
            if disabled is not None and disabled != row.disabled:
                changed["disabled"] = disabled
                row.disabled = disabled
            if changed:
                session.execute(
                    update(m.DashboardSession)
                    .where(
                        m.DashboardSession.username == username,
                        m.DashboardSession.revoked_at.is_(None),
                    )
                    .values(revoked_at=now())
                )
                self._audit.chain(session, who, "user.changed", f"user:{username}", changed)
            session.flush()
            return from_row(DashboardUserRecord, row)

    def get_user(self, username: str) -> DashboardUserRecord | None:
        with self._uow.read() as session:
            row = session.get(m.DashboardUser, username)
            return None if row is None else from_row(DashboardUserRecord, row)

    def list_users(self) -> list[DashboardUserRecord]:
        query = select(m.DashboardUser).order_by(m.DashboardUser.username)
        with self._uow.read() as session:
            return [from_row(DashboardUserRecord, r) for r in session.scalars(query)]

    def create_session(
        self, token_hash: str, username: str, csrf_token: str, expires_at: datetime
    ) -> DashboardSessionRecord:
        """Store a new login session (the audit row names the person who logged in)."""
        with self._uow.write() as session:
            row = m.DashboardSession(
                token_hash=token_hash, username=username, csrf_token=csrf_token,
                created_at=now(), expires_at=aware("expires_at", expires_at), revoked_at=None,
            )  # fmt: skip
            session.add(row)
            session.flush()
            self._audit.chain(session, username, "session.login", f"user:{username}", {})
            return from_row(DashboardSessionRecord, row)

    def get_session(self, token_hash: str) -> DashboardSessionRecord | None:
        with self._uow.read() as session:
            row = session.get(m.DashboardSession, token_hash)
            return None if row is None else from_row(DashboardSessionRecord, row)

    def revoke_session(self, token_hash: str) -> None:
        """End a session (logout); audited as its user."""
        with self._uow.write() as session:
            row = session.get(m.DashboardSession, token_hash)
            if row is not None and row.revoked_at is None:
                row.revoked_at = now()
                self._audit.chain(
                    session, row.username, "session.logout", f"user:{row.username}", {}
                )

    # -- login throttling (shared by every dashboard worker)

    def add_login_failure(
        self, keys: Sequence[tuple[str, str]], at: datetime, keep_s: float
    ) -> None:
        """Record one failed login under each ``(kind, key)``; forget failures older than
        ``keep_s`` seconds (they no longer count)."""
        at = aware("at", at)
        with self._uow.write() as session:
            session.execute(
                delete(m.LoginFailure).where(m.LoginFailure.at < at - timedelta(seconds=keep_s))
            )
            session.add_all(m.LoginFailure(kind=kind, key=key, at=at) for kind, key in keys)

    def login_failures_since(self, kind: str, key: str, since: datetime) -> list[datetime]:
        """When ``key`` failed to log in at or after ``since``, oldest first."""
        query = (
            select(m.LoginFailure.at)
            .where(
                m.LoginFailure.kind == kind,
                m.LoginFailure.key == key,
                m.LoginFailure.at >= aware("since", since),
            )
            .order_by(m.LoginFailure.at)
        )
        with self._uow.read() as session:
            return list(session.scalars(query))

    def clear_login_failures(self, kind: str, key: str) -> None:
        with self._uow.write() as session:
            session.execute(
                delete(m.LoginFailure).where(m.LoginFailure.kind == kind, m.LoginFailure.key == key)
            )

    # -- the live feed

    def marks(self) -> tuple[int, int]:
        """The newest clock-transition id and audit-row id (0 when empty)."""
        with self._uow.read() as session:
            transition = session.scalar(select(func.max(m.ClockTransition.id))) or 0
            audit = session.scalar(select(func.max(m.AuditEntry.id))) or 0
            return int(transition), int(audit)

    # -- the clerk's Today page

    def audit_by_action(self, actions: Sequence[str], limit: int = 1000) -> list[AuditRecord]:
        """The newest ``limit`` audit rows whose action is one of ``actions``, newest first
        (one query: Today lists hazard candidates and held notices without reading the log)."""
        query = (
            select(m.AuditEntry)
            .where(m.AuditEntry.action.in_(list(actions)))
            .order_by(m.AuditEntry.id.desc())
            .limit(limit)
        )
        with self._uow.read() as session:
            return [from_row(AuditRecord, r) for r in session.scalars(query)]

    def bills_with_paid(self, status: str) -> list[BillRecord]:
        """Bills in ``status`` with what is paid on each, in one query (``bills.list`` asks the
        payments once per bill; Today lists a village's overdue bills)."""
        paid = (
            select(m.Payment.bill_id, func.sum(m.Payment.amount).label("paid"))
            .where(m.Payment.voided_at.is_(None))
            .group_by(m.Payment.bill_id)
            .subquery()
        )
        query = (
            select(m.Bill, paid.c.paid)
            .outerjoin(paid, paid.c.bill_id == m.Bill.id)
            .where(m.Bill.status == status)
            .order_by(m.Bill.issued_at, m.Bill.id)
        )
        with self._uow.read() as session:
            return [
                from_row(
                    BillRecord, row, paid=total if isinstance(total, Decimal) else Decimal("0.00")
                )
                for row, total in session.execute(query)
            ]

    # -- a property's page and the search box

    def frontages_of_parcel(self, parcel_id: str) -> list[FrontageRecord]:
        """The parcel's frontages, retired ones too (a property page shows its history)."""
        query = select(m.Frontage).where(m.Frontage.parcel_id == parcel_id).order_by(m.Frontage.id)
        with self._uow.read() as session:
            return [from_row(FrontageRecord, r) for r in session.scalars(query)]

    def bills_of_frontages(self, frontage_ids: Sequence[str]) -> list[BillRecord]:
        """The frontages' bills with what is paid on each, oldest first, in one query."""
        paid = (
            select(m.Payment.bill_id, func.sum(m.Payment.amount).label("paid"))
            .where(m.Payment.voided_at.is_(None))
            .group_by(m.Payment.bill_id)
            .subquery()
        )
        query = (
            select(m.Bill, paid.c.paid)
            .outerjoin(paid, paid.c.bill_id == m.Bill.id)
            .where(m.Bill.frontage_id.in_(list(frontage_ids)))
            .order_by(m.Bill.issued_at, m.Bill.id)
        )
        with self._uow.read() as session:
            return [
                from_row(
                    BillRecord, row, paid=total if isinstance(total, Decimal) else Decimal("0.00")
                )
                for row, total in session.execute(query)
            ]

    def notices_numbered_like(self, text: str, limit: int = 10) -> list[tuple[str, str, str]]:
        """``(number, kind, frontage id)`` of notices whose number contains ``text``
        (case-insensitive), newest first: the search box's notice matches."""
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = (
            select(m.Notice.number, m.Notice.kind, m.Notice.frontage_id)
            .where(m.Notice.number.ilike(pattern, escape="\\"))
            .order_by(m.Notice.id.desc())
            .limit(limit)
        )
        with self._uow.read() as session:
            return [(str(n), str(k), str(f)) for n, k, f in session.execute(query)]

    def violations_of_frontages(self, frontage_ids: Sequence[str]) -> list[ViolationRecord]:
        """The frontages' recorded violations, in the order they were decided."""
        query = (
            select(m.Violation)
            .where(m.Violation.frontage_id.in_(list(frontage_ids)))
            .order_by(m.Violation.detected_at, m.Violation.id)
        )
        with self._uow.read() as session:
            return [from_row(ViolationRecord, r) for r in session.scalars(query)]

    def frontage_geometries_of(self, frontage_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{frontage id: GeoJSON geometry}`` of those of the frontages that have one."""
        query = select(m.FrontageGeometry).where(
            m.FrontageGeometry.frontage_id.in_(list(frontage_ids))
        )
        with self._uow.read() as session:
            return {r.frontage_id: dict(r.geometry) for r in session.scalars(query)}

    def search_registry(
        self, text: str, limit: int = 20, *, owners: bool = False
    ) -> dict[str, list[tuple[str, ...]]]:
        """The search box's registry matches (case-insensitive substring), by the database:

        * ``address``: ``(frontage id, address, zone, tax parcel number)``,
        * ``tax_parcel``: the same rows, matched on the frontage's tax parcel number,
        * ``parcel``: ``(parcel id, tax parcel id or "", site address or "")``,
        * ``owner`` (only when ``owners``): ``(owner name, frontage id, address)``, one row per
          frontage the owner has.

        Frontages no longer watched and retired parcels are left out; ``limit`` rows each.
        """
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        f = m.Frontage
        row = (f.id, f.street_address, f.zone, f.parcel_number)
        watched = f.retired_at.is_(None)
        queries = {
            "address": select(*row).where(watched, f.street_address.ilike(pattern, escape="\\")),
            "tax_parcel": select(*row).where(watched, f.parcel_number.ilike(pattern, escape="\\")),
            "parcel": select(
                m.Parcel.id,
                func.coalesce(m.Parcel.tax_parcel_id, ""),
                func.coalesce(m.Parcel.site_address, ""),
            ).where(
                m.Parcel.retired_at.is_(None),
                m.Parcel.id.ilike(pattern, escape="\\")
                | m.Parcel.tax_parcel_id.ilike(pattern, escape="\\"),
            ),
        }
        if owners:
            queries["owner"] = (
                select(m.Owner.name, f.id, f.street_address)
                .join(f, f.owner_id == m.Owner.id)
                .where(watched, m.Owner.name.ilike(pattern, escape="\\"))
                .order_by(m.Owner.name, f.id)
            )
        with self._uow.read() as session:
            return {
                key: [tuple(str(v) for v in r) for r in session.execute(q.limit(limit))]
                for key, q in queries.items()
            }
