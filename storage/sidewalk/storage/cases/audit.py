"""The audit log: append-only and hash-chained, and the walk that verifies the chain.

Other repositories append through ``chain(session, …)`` inside their own
transaction, so a record and its audit row commit together or not at all.
"""

from __future__ import annotations

import builtins
import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from sidewalk.storage import models as m
from sidewalk.storage.cases.records import AuditRecord, AuditVerification, from_row
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, canonical_json, now

GENESIS_HASH: Final = "0" * 64
# Any constant works; it only has to be the same for every writer of one database.
_AUDIT_LOCK_ID: Final = 370_10


def _audit_hash(row: m.AuditEntry) -> str:
    """sha256 over the row's content and its predecessor's hash (not its id)."""
    content = canonical_json(
        {
            "recorded_at": row.recorded_at.astimezone(UTC).isoformat(),
            "actor": row.actor,
            "action": row.action,
            "subject": row.subject,
            "detail": row.detail_json,
            "prev_hash": row.prev_hash,
        }
    )
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


class AuditRepository:
    """``cases.audit``: append, list and verify the hash-chained audit log."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    def _lock_chain(self, session: Session) -> None:
        if self._uow.dialect == "postgresql":
            # Held to commit: writers take the chain's head one at a time (re-entrant
            # in the transaction). SQLite writers are already serialised by BEGIN IMMEDIATE.
            session.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _AUDIT_LOCK_ID})

    def chain(
        self,
        session: Session,
        actor: str,
        action: str,
        subject: str,
        detail: Mapping[str, Any] | None,
        *,
        at: datetime | None = None,
    ) -> m.AuditEntry:
        """Append a row in the caller's transaction (``session``), linked to the chain's head."""
        self._lock_chain(session)
        prev = session.scalar(select(m.AuditEntry.hash).order_by(m.AuditEntry.id.desc()).limit(1))
        row = m.AuditEntry(
            recorded_at=aware("at", at) if at is not None else now(),
            actor=actor,
            action=action,
            subject=subject,
            detail_json=canonical_json(dict(detail or {})),
            prev_hash=prev or GENESIS_HASH,
        )
        row.hash = _audit_hash(row)
        session.add(row)
        session.flush()
        return row

    def append(
        self,
        actor: str,
        action: str,
        subject: str,
        detail: Mapping[str, Any] | None = None,
        *,
        at: datetime | None = None,
    ) -> AuditRecord:
        """Log that ``actor`` (a person, or ``system``) did ``action`` to ``subject``.

        ``at`` defaults to now; the row's hash covers its content and the
        previous row's hash.
        """
        with self._uow.write() as session:
            return from_row(AuditRecord, self.chain(session, actor, action, subject, detail, at=at))

    def append_once(
        self,
        actor: str,
        action: str,
        subject: str,
        detail: Mapping[str, Any] | None,
        *,
        key: str,
        at: datetime | None = None,
    ) -> AuditRecord:
        """``append`` unless a row for ``subject`` already has ``detail["key"] == key``
        (a finding judged again after a replay or a restart); returns the stored row."""
        with self._uow.write() as session:
            # The chain's lock also serialises the check.
            self._lock_chain(session)
            found = self._keyed(session, subject, action, key)
            if found is not None:
                return from_row(AuditRecord, found)
            row = self.chain(session, actor, action, subject, {**(detail or {}), "key": key}, at=at)
            return from_row(AuditRecord, row)

    def keyed(self, subject: str, action: str, key: str) -> AuditRecord | None:
        """The row ``append_once`` stored for ``subject`` and ``action`` under ``key``, or
        None. It takes the chain's lock: inside ``CaseStore.transaction()``, no other
        writer can store that key between this check and the transaction's end."""
        with self._uow.write() as session:
            self._lock_chain(session)
            found = self._keyed(session, subject, action, key)
            return None if found is None else from_row(AuditRecord, found)

    @staticmethod
    def _keyed(session: Session, subject: str, action: str, key: str) -> m.AuditEntry | None:
        same = select(m.AuditEntry).where(
            m.AuditEntry.subject == subject, m.AuditEntry.action == action
        )
        for row in session.scalars(same):
            if json.loads(row.detail_json).get("key") == key:
                return row
        return None

    def list(self, subject: str | None = None) -> builtins.list[AuditRecord]:
        """Every audit row in chain order, optionally of one ``subject``."""
        query = select(m.AuditEntry).order_by(m.AuditEntry.id)
        if subject is not None:
            query = query.where(m.AuditEntry.subject == subject)
        with self._uow.read() as session:
            return [from_row(AuditRecord, r) for r in session.scalars(query)]

    def after(self, after_id: int, limit: int = 500) -> builtins.list[AuditRecord]:
        """Audit rows stored after ``after_id``, in chain order (the live feed)."""
        query = (
            select(m.AuditEntry)
            .where(m.AuditEntry.id > after_id)
            .order_by(m.AuditEntry.id)
            .limit(limit)
        )
        with self._uow.read() as session:
            return [from_row(AuditRecord, r) for r in session.scalars(query)]

    def recent(self, limit: int = 50) -> builtins.list[AuditRecord]:
        """The newest audit rows, newest first."""
        query = select(m.AuditEntry).order_by(m.AuditEntry.id.desc()).limit(limit)
        with self._uow.read() as session:
            return [from_row(AuditRecord, r) for r in session.scalars(query)]

    def verify_chain(self) -> AuditVerification:
        """Recompute every row's hash and link; report the first row that fails."""
        prev_hash = GENESIS_HASH
        rows = 0
        query = select(m.AuditEntry).order_by(m.AuditEntry.id).execution_options(yield_per=1000)
        with self._uow.read() as session:
            for row in session.scalars(query):
                rows += 1
                if row.prev_hash != prev_hash:
                    return AuditVerification(False, rows, row.id, "link to previous row broken")
                if row.hash != _audit_hash(row):
                    return AuditVerification(False, rows, row.id, "content does not match hash")
                prev_hash = row.hash
        return AuditVerification(True, rows)
