"""``cases.confirmations``: the Village confirming profile values the code leaves open.

A profile value marked ``unconfirmed`` (a gap in the code text, a placeholder
rate) is confirmed by a person with authority: who, when, and the board
action or ordinance reference. Each confirmation is a row and an audit row in
one transaction; the newest row for a name is the one in force. Notices that
rely on a value not yet confirmed are ``held`` here (``hold_notice``).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from sidewalk.storage import models as m
from sidewalk.storage.cases.audit import AuditRepository
from sidewalk.storage.cases.errors import CaseStoreError
from sidewalk.storage.cases.records import from_row
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, now


@dataclass(frozen=True)
class ConfirmationRecord:
    id: int
    name: str
    value: str
    confirmed_by: str
    reference: str
    confirmed_at: datetime
    recorded_by: str
    recorded_at: datetime


def _record(row: m.ProfileConfirmation) -> ConfirmationRecord:
    return from_row(ConfirmationRecord, row)


class ConfirmationRepository:
    """Confirmations of profile values, and holding notices that wait for one."""

    def __init__(self, uow: UnitOfWork, audit: AuditRepository) -> None:
        self._uow = uow
        self._audit = audit

    def confirm(
        self,
        name: str,
        value: str,
        *,
        confirmed_by: str,
        reference: str,
        confirmed_at: datetime,
        who: str,
    ) -> ConfirmationRecord:
        """Record that ``confirmed_by`` confirmed ``name = value`` (``reference``: the
        board action or ordinance); ``who`` is the person entering it. Audited."""
        for field, text in (("name", name), ("value", value), ("confirmed_by", confirmed_by),
                            ("reference", reference), ("who", who)):  # fmt: skip
            if not text.strip():
                raise CaseStoreError(f"a confirmation needs {field}")
        with self._uow.write() as session:
            row = m.ProfileConfirmation(
                name=name, value=value, confirmed_by=confirmed_by.strip(),
                reference=reference.strip(), confirmed_at=aware("confirmed_at", confirmed_at),
                recorded_by=who, recorded_at=now(),
            )  # fmt: skip
            session.add(row)
            session.flush()
            self._audit.chain(
                session, who, "profile.confirmed", f"profile:{name}",
                {"value": value, "confirmed_by": row.confirmed_by, "reference": row.reference,
                 "confirmed_at": row.confirmed_at, "confirmation": row.id},
            )  # fmt: skip
            return _record(row)

    def in_force(self) -> dict[str, ConfirmationRecord]:
        """The newest confirmation of each name."""
        query = select(m.ProfileConfirmation).order_by(m.ProfileConfirmation.id)
        with self._uow.read() as session:
            return {row.name: _record(row) for row in session.scalars(query)}

    def history(self, name: str) -> builtins.list[ConfirmationRecord]:
        query = (
            select(m.ProfileConfirmation)
            .where(m.ProfileConfirmation.name == name)
            .order_by(m.ProfileConfirmation.id)
        )
        with self._uow.read() as session:
            return [_record(row) for row in session.scalars(query)]

    def hold_notice(self, notice_id: int, waiting_for: builtins.list[str]) -> None:
        """Mark a ``pending`` notice ``held`` until the values ``waiting_for`` are confirmed."""
        with self._uow.write() as session:
            row = self._uow.get(session, m.Notice, notice_id)
            if row.status not in ("pending", "held"):
                raise CaseStoreError(f"notice {row.number} is {row.status}; it cannot be held")
            if row.status == "pending":
                row.status = "held"
                session.flush()
                self._audit.chain(
                    session, "system", "notice.held", f"notice:{row.number}",
                    {"waiting_for": waiting_for},
                )  # fmt: skip
