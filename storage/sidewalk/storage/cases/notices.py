"""Notices (legal documents), their delivery attempts and the delivery outbox."""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sidewalk.storage import models as m
from sidewalk.storage.cases.audit import AuditRepository
from sidewalk.storage.cases.errors import CaseStoreError, NotFoundError
from sidewalk.storage.cases.records import (
    DeliveryJobRecord,
    DeliveryRecord,
    DeliveryStatus,
    NoticeRecord,
    NoticeStatus,
    RuleUse,
    from_row,
)
from sidewalk.storage.cases.registry import owner_row_at
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, jsonable, now


class NoticeRepository:
    """``cases.notices``: notices, deliveries and delivery jobs.

    ``notice_prefix`` and ``zone`` shape notice numbers: ``CLY-2026-000123``,
    the year taken in the village's zone at issue time.
    """

    def __init__(
        self, uow: UnitOfWork, audit: AuditRepository, *, notice_prefix: str, zone: ZoneInfo
    ) -> None:
        self._uow = uow
        self._audit = audit
        self.notice_prefix = notice_prefix
        self.zone = zone

    # -- notices

    def _next_number(self, session: Session, issued_at: datetime) -> str:
        """Allocate ``PREFIX-YYYY-NNNNNN``; the counter row's lock serialises allocators."""
        year = issued_at.astimezone(self.zone).year
        insert = postgresql.insert if self._uow.dialect == "postgresql" else sqlite.insert
        session.execute(
            insert(m.NoticeCounter)
            .values(year=year, last_number=0)
            .on_conflict_do_nothing(index_elements=["year"])
        )
        number = session.execute(
            update(m.NoticeCounter)
            .where(m.NoticeCounter.year == year)
            .values(last_number=m.NoticeCounter.last_number + 1)
            .returning(m.NoticeCounter.last_number)
        ).scalar_one()
        return f"{self.notice_prefix}-{year}-{number:06d}"

    def create(
        self,
        idempotency_key: str,
        kind: str,
        frontage_id: str,
        issued_at: datetime,
        *,
        violation_id: int | None = None,
        deadline: datetime | None = None,
        citation: str | None = None,
        rules: Sequence[RuleUse] = (),
        detail: Mapping[str, Any] | None = None,
        addressee: tuple[str, Sequence[str]] | None = None,
    ) -> NoticeRecord:
        """Issue a notice, or return the one already issued under ``idempotency_key``.

        The owner's name and address are copied from the owner of record at
        ``issued_at`` (the parcel's ownership then; a sale recorded later does not
        move a notice already issued): a notice keeps the address it was mailed to.
        ``addressee`` (name, address lines) mails it to someone else instead (a
        § 144-17 bill goes to the primary contractor); the owner of record stays on the row. Status
        starts ``pending``.
        """
        issued_at = aware("issued_at", issued_at)
        deadline = None if deadline is None else aware("deadline", deadline)

        def build(session: Session) -> m.Notice:
            frontage = self._uow.get(session, m.Frontage, frontage_id)
            owner = owner_row_at(session, frontage, issued_at)
            row = m.Notice(
                number=self._next_number(session, issued_at),
                idempotency_key=idempotency_key,
                kind=kind,
                violation_id=violation_id,
                frontage_id=frontage_id,
                owner_id=owner.id,
                owner_name=owner.name if addressee is None else addressee[0],
                owner_address_lines=(
                    list(owner.address_lines) if addressee is None else list(addressee[1])
                ),
                issued_at=issued_at,
                deadline=deadline,
                citation=citation,
                rules=[r.to_json() for r in rules],
                detail=jsonable(detail),
                status="pending",
            )
            session.add(row)
            session.flush()
            self._audit.chain(
                session, "system", "notice.issued", f"notice:{row.number}",
                {"key": idempotency_key, "kind": kind, "frontage": frontage_id,
                 "violation": violation_id, "issued_at": issued_at, "deadline": deadline},
            )  # fmt: skip
            return row

        return self._uow.create_once(
            m.Notice, idempotency_key, build, lambda _s, row: from_row(NoticeRecord, row)
        )

    def get(self, notice_id: int) -> NoticeRecord:
        with self._uow.read() as session:
            return from_row(NoticeRecord, self._uow.get(session, m.Notice, notice_id))

    def get_by_number(self, number: str) -> NoticeRecord:
        with self._uow.read() as session:
            row = session.scalar(select(m.Notice).where(m.Notice.number == number))
            if row is None:
                raise NotFoundError(f"no notice {number!r}")
            return from_row(NoticeRecord, row)

    def list(
        self,
        *,
        status: NoticeStatus | None = None,
        kind: str | None = None,
        frontage_id: str | None = None,
    ) -> builtins.list[NoticeRecord]:
        """Notices in issue order, optionally filtered."""
        query = select(m.Notice).order_by(m.Notice.issued_at, m.Notice.id)
        if status is not None:
            query = query.where(m.Notice.status == status)
        if kind is not None:
            query = query.where(m.Notice.kind == kind)
        if frontage_id is not None:
            query = query.where(m.Notice.frontage_id == frontage_id)
        with self._uow.read() as session:
            return [from_row(NoticeRecord, r) for r in session.scalars(query)]

    def counts(self) -> dict[tuple[str, str], int]:
        """How many notices there are per (kind, status), counted by the database."""
        query = select(m.Notice.kind, m.Notice.status, func.count()).group_by(
            m.Notice.kind, m.Notice.status
        )
        with self._uow.read() as session:
            return {(kind, status): int(n) for kind, status, n in session.execute(query)}

    def cited_evidence(self, issued_since: datetime) -> set[str]:
        """sha256s of the photos cited by notices issued at or after ``issued_since``.

        A notice cites its frames in ``detail["photos"][i]["sha256"]``; the
        retention prune keeps those images for the Village's records-retention
        period (``sidewalk.storage.retention``). Reads only ``detail``.
        """
        query = select(m.Notice.detail).where(m.Notice.issued_at >= aware("since", issued_since))
        cited: set[str] = set()
        with self._uow.read() as session:
            for detail in session.scalars(query):
                for photo in (detail or {}).get("photos", ()) or ():
                    sha = photo.get("sha256") if isinstance(photo, dict) else None
                    if isinstance(sha, str):
                        cited.add(sha)
        return cited

    def set_rendered(
        self, notice_id: int, body_text: str, body_html: str | None = None
    ) -> NoticeRecord:
        """Store the rendered body; a delivered notice's body is never replaced."""
        with self._uow.write() as session:
            row = self._uow.get(session, m.Notice, notice_id)
            if row.status == "delivered":
                raise CaseStoreError(f"notice {row.number} is delivered; its text is final")
            row.body_text = body_text
            row.body_html = body_html
            row.status = "rendered"
            row.rendered_at = now()
            session.flush()
            self._audit.chain(
                session, "system", "notice.rendered", f"notice:{row.number}",
                {"sha256": hashlib.sha256(body_text.encode()).hexdigest()},
            )  # fmt: skip
            return from_row(NoticeRecord, row)

    def set_delivered(self, notice_id: int, delivered_at: datetime) -> NoticeRecord:
        """Record delivery; § 370-10 B(1)'s 2 h clock starts here. First delivery wins."""
        delivered_at = aware("delivered_at", delivered_at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Notice, notice_id)
            if row.delivered_at is None:
                row.delivered_at = delivered_at
                row.status = "delivered"
                self._audit.chain(
                    session, "system", "notice.delivered", f"notice:{row.number}",
                    {"delivered_at": delivered_at},
                )  # fmt: skip
            session.flush()
            return from_row(NoticeRecord, row)

    def correct_delivered(
        self, notice_id: int, delivered_at: datetime | None, who: str, reason: str
    ) -> NoticeRecord:
        """A recorded delivery corrected to ``delivered_at``, or undone (None: the notice
        is to be served again). The earlier ``notice.delivered`` audit row stays; this one
        names who corrected it and why."""
        when = None if delivered_at is None else aware("delivered_at", delivered_at)
        if not reason.strip() or not who.strip():
            raise CaseStoreError("a correction names who made it and why")
        with self._uow.write() as session:
            row = self._uow.get(session, m.Notice, notice_id)
            if row.delivered_at is None:
                raise CaseStoreError(f"notice {row.number} has no delivery recorded")
            self._audit.chain(
                session, who, "notice.delivery_corrected", f"notice:{row.number}",
                {"from": row.delivered_at, "to": when, "reason": reason},
            )  # fmt: skip
            row.delivered_at = when
            row.status = "delivered" if when is not None else "rendered"
            session.flush()
            return from_row(NoticeRecord, row)

    def set_received(self, notice_id: int, received_at: datetime) -> NoticeRecord:
        """Record the owner's receipt (e.g. certified-mail return). First receipt wins."""
        received_at = aware("received_at", received_at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Notice, notice_id)
            if row.received_at is None:
                row.received_at = received_at
                self._audit.chain(
                    session, "system", "notice.received", f"notice:{row.number}",
                    {"received_at": received_at},
                )  # fmt: skip
            session.flush()
            return from_row(NoticeRecord, row)

    def refresh_owner(self, notice_id: int) -> NoticeRecord:
        """Re-copy the owner's name and address onto a notice that is still ``pending``.

        A notice kept pending for a missing address is issued again to the
        corrected address; one already rendered or delivered keeps its snapshot.
        """
        with self._uow.write() as session:
            row = self._uow.get(session, m.Notice, notice_id)
            if row.status != "pending":
                raise CaseStoreError(f"notice {row.number} is {row.status}; its addressee is final")
            if (row.detail or {}).get("billed_to"):
                return from_row(NoticeRecord, row)  # not the owner's: a contractor's bill
            frontage = self._uow.get(session, m.Frontage, row.frontage_id)
            owner = self._uow.get(session, m.Owner, frontage.owner_id)
            if (row.owner_id, row.owner_name, row.owner_address_lines) != (
                owner.id,
                owner.name,
                list(owner.address_lines),
            ):
                row.owner_id, row.owner_name = owner.id, owner.name
                row.owner_address_lines = list(owner.address_lines)
                self._audit.chain(
                    session, "system", "notice.readdressed", f"notice:{row.number}",
                    {"owner": owner.id, "address_lines": list(owner.address_lines)},
                )  # fmt: skip
            session.flush()
            return from_row(NoticeRecord, row)

    # -- delivery attempts

    def record_delivery(
        self,
        channel: str,
        target: str,
        attempted_at: datetime,
        status: DeliveryStatus,
        *,
        notice_id: int | None = None,
        bill_id: int | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> DeliveryRecord:
        """Log one delivery attempt of a notice or a bill (print batch, e-mail, webhook)."""
        if (notice_id is None) == (bill_id is None):
            raise ValueError("a delivery is for exactly one of notice_id, bill_id")
        with self._uow.write() as session:
            row = m.Delivery(
                notice_id=notice_id,
                bill_id=bill_id,
                channel=channel,
                target=target,
                attempted_at=aware("attempted_at", attempted_at),
                status=status,
                detail=jsonable(detail),
            )
            session.add(row)
            session.flush()
            return from_row(DeliveryRecord, row)

    def list_deliveries(
        self, *, notice_id: int | None = None, bill_id: int | None = None
    ) -> builtins.list[DeliveryRecord]:
        query = select(m.Delivery).order_by(m.Delivery.attempted_at, m.Delivery.id)
        if notice_id is not None:
            query = query.where(m.Delivery.notice_id == notice_id)
        if bill_id is not None:
            query = query.where(m.Delivery.bill_id == bill_id)
        with self._uow.read() as session:
            return [from_row(DeliveryRecord, r) for r in session.scalars(query)]

    # -- the delivery outbox

    def enqueue_delivery(
        self,
        notice_id: int,
        channel: str,
        target: str,
        at: datetime,
        *,
        detail: Mapping[str, Any] | None = None,
    ) -> DeliveryJobRecord:
        """Queue a notice for one channel and target, once: the same triple returns the job."""
        at = aware("at", at)
        key = f"notice:{notice_id}/{channel}/{target}"
        lookup = select(m.DeliveryJob).where(m.DeliveryJob.idempotency_key == key)
        try:
            with self._uow.write() as session:
                existing = session.scalar(lookup)
                if existing is not None:
                    return from_row(DeliveryJobRecord, existing)
                notice = self._uow.get(session, m.Notice, notice_id)
                row = m.DeliveryJob(
                    idempotency_key=key, notice_id=notice_id, channel=channel, target=target,
                    status="queued", attempts=0, next_attempt_at=at, claimed_at=None,
                    sent_at=None, last_error=None, detail=jsonable(detail), created_at=at,
                )  # fmt: skip
                session.add(row)
                session.flush()
                self._audit.chain(
                    session, "system", "delivery.queued", f"notice:{notice.number}",
                    {"job": row.id, "channel": channel, "target": target},
                )  # fmt: skip
                return from_row(DeliveryJobRecord, row)
        except IntegrityError:
            with self._uow.read() as session:
                return from_row(DeliveryJobRecord, session.scalars(lookup).one())

    def claim_delivery(self, job_id: int, at: datetime) -> DeliveryJobRecord | None:
        """Take a due ``queued`` job for sending; None if another worker has it or it is done.

        The conditional UPDATE is the lock: of two workers, exactly one claims it.
        """
        at = aware("at", at)
        with self._uow.write() as session:
            claimed = session.execute(
                update(m.DeliveryJob)
                .where(
                    m.DeliveryJob.id == job_id,
                    m.DeliveryJob.status == "queued",
                    m.DeliveryJob.next_attempt_at <= at,
                )
                .values(status="sending", claimed_at=at, attempts=m.DeliveryJob.attempts + 1)
            )
            # Ignored: an UPDATE's result is a CursorResult, which has ``rowcount``.
            if claimed.rowcount != 1:  # type: ignore[attr-defined]
                return None
            return from_row(DeliveryJobRecord, self._uow.get(session, m.DeliveryJob, job_id))

    def finish_delivery(
        self,
        job_id: int,
        at: datetime,
        *,
        sent: bool,
        error: str | None = None,
        retry_at: datetime | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> DeliveryJobRecord:
        """Close a claimed attempt: ``sent``, back to ``queued`` at ``retry_at``, or ``failed``."""
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.DeliveryJob, job_id)
            if row.status != "sending":
                raise CaseStoreError(f"delivery job {job_id} is {row.status}, not sending")
            notice = self._uow.get(session, m.Notice, row.notice_id)
            if sent:
                row.status, row.sent_at, row.last_error = "sent", at, None
                action = "delivery.sent"
            elif retry_at is not None:
                row.status, row.next_attempt_at = "queued", aware("retry_at", retry_at)
                row.last_error = error
                action = "delivery.retry"
            else:
                row.status, row.last_error = "failed", error
                action = "delivery.failed"
            row.detail = {**row.detail, **jsonable(detail)}
            session.add(
                m.Delivery(
                    notice_id=row.notice_id, bill_id=None, channel=row.channel, target=row.target,
                    attempted_at=row.claimed_at or at, status="sent" if sent else "failed",
                    detail=jsonable({"job": row.id, "attempt": row.attempts, "error": error,
                                     **dict(detail or {})}),
                )
            )  # fmt: skip
            session.flush()
            self._audit.chain(
                session, "system", action, f"notice:{notice.number}",
                {"job": row.id, "channel": row.channel, "attempt": row.attempts, "error": error,
                 "retry_at": retry_at},
                at=at,
            )  # fmt: skip
            return from_row(DeliveryJobRecord, row)

    def due_delivery_jobs(
        self, at: datetime, channel: str | None = None
    ) -> builtins.list[DeliveryJobRecord]:
        """Queued jobs whose next attempt is due at ``at``, oldest first."""
        query = (
            select(m.DeliveryJob)
            .where(
                m.DeliveryJob.status == "queued", m.DeliveryJob.next_attempt_at <= aware("at", at)
            )
            .order_by(m.DeliveryJob.next_attempt_at, m.DeliveryJob.id)
        )
        if channel is not None:
            query = query.where(m.DeliveryJob.channel == channel)
        with self._uow.read() as session:
            return [from_row(DeliveryJobRecord, r) for r in session.scalars(query)]

    def list_delivery_jobs(
        self,
        *,
        status: str | None = None,
        notice_id: int | None = None,
        channel: str | None = None,
    ) -> builtins.list[DeliveryJobRecord]:
        """Delivery jobs in queue order, optionally filtered."""
        query = select(m.DeliveryJob).order_by(m.DeliveryJob.id)
        if status is not None:
            query = query.where(m.DeliveryJob.status == status)
        if notice_id is not None:
            query = query.where(m.DeliveryJob.notice_id == notice_id)
        if channel is not None:
            query = query.where(m.DeliveryJob.channel == channel)
        with self._uow.read() as session:
            return [from_row(DeliveryJobRecord, r) for r in session.scalars(query)]

    def get_delivery_job(self, job_id: int) -> DeliveryJobRecord:
        with self._uow.read() as session:
            return from_row(DeliveryJobRecord, self._uow.get(session, m.DeliveryJob, job_id))

    def mark_stale_deliveries_uncertain(
        self, claimed_before: datetime
    ) -> builtins.list[DeliveryJobRecord]:
        """Jobs left ``sending`` by a crash: they may have gone out, so a person decides."""
        cutoff = aware("claimed_before", claimed_before)
        with self._uow.write() as session:
            rows = builtins.list(
                session.scalars(
                    select(m.DeliveryJob).where(
                        m.DeliveryJob.status == "sending", m.DeliveryJob.claimed_at < cutoff
                    )
                )
            )
            for row in rows:
                row.status = "uncertain"
                notice = self._uow.get(session, m.Notice, row.notice_id)
                self._audit.chain(
                    session, "system", "delivery.uncertain", f"notice:{notice.number}",
                    {"job": row.id, "channel": row.channel, "claimed_at": row.claimed_at},
                )  # fmt: skip
            session.flush()
            return [from_row(DeliveryJobRecord, r) for r in rows]

    def resolve_delivery(
        self, job_id: int, *, sent: bool, at: datetime, who: str
    ) -> DeliveryJobRecord:
        """A person settles an ``uncertain`` or ``failed`` job: it went out, or send it again."""
        at = aware("at", at)
        if not who.strip():
            raise CaseStoreError("resolving a delivery must name who decided")
        with self._uow.write() as session:
            row = self._uow.get(session, m.DeliveryJob, job_id)
            if row.status not in ("uncertain", "failed"):
                raise CaseStoreError(f"delivery job {job_id} is {row.status}; nothing to resolve")
            notice = self._uow.get(session, m.Notice, row.notice_id)
            if sent:
                row.status, row.sent_at = "sent", at
            else:
                row.status, row.next_attempt_at = "queued", at
            self._audit.chain(
                session, who, "delivery.resolved", f"notice:{notice.number}",
                {"job": row.id, "sent": sent}, at=at,
            )  # fmt: skip
            session.flush()
            return from_row(DeliveryJobRecord, row)
