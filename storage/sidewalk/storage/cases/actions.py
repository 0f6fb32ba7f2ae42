"""The person-action queue: what people recorded for the clocks, applied by the runner."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select

from sidewalk.storage import models as m
from sidewalk.storage.cases.audit import AuditRepository
from sidewalk.storage.cases.errors import CaseStoreError
from sidewalk.storage.cases.records import ActionRecord, from_row
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, jsonable, now


class ActionRepository:
    """``cases.actions``: append-only, applied in id order by the analytics runner."""

    def __init__(self, uow: UnitOfWork, audit: AuditRepository) -> None:
        self._uow = uow
        self._audit = audit

    def record(
        self,
        kind: str,
        target: str,
        at: datetime,
        who: str,
        detail: Mapping[str, Any] | None = None,
    ) -> ActionRecord:
        """Append a person's action (and an audit row naming them) for the runner to apply."""
        at = aware("at", at)
        if not who.strip():
            raise CaseStoreError("an action must name who recorded it")
        with self._uow.write() as session:
            row = m.PersonAction(
                kind=kind, target=target, at=at, who=who, detail=jsonable(detail),
                recorded_at=now(), applied_at=None, error=None,
            )  # fmt: skip
            session.add(row)
            session.flush()
            self._audit.chain(
                session,
                who,
                f"action.{kind}",
                target,
                {"action_id": row.id, "at": at.isoformat(), **jsonable(detail)},
            )
            return from_row(ActionRecord, row)

    def get(self, action_id: int) -> ActionRecord:
        with self._uow.read() as session:
            return from_row(ActionRecord, self._uow.get(session, m.PersonAction, action_id))

    def pending(self) -> builtins.list[ActionRecord]:
        """Actions not yet applied, in the order they were recorded."""
        query = (
            select(m.PersonAction)
            .where(m.PersonAction.applied_at.is_(None))
            .order_by(m.PersonAction.id)
        )
        with self._uow.read() as session:
            return [from_row(ActionRecord, r) for r in session.scalars(query)]

    def list(self, target: str | None = None) -> builtins.list[ActionRecord]:
        query = select(m.PersonAction).order_by(m.PersonAction.id)
        if target is not None:
            query = query.where(m.PersonAction.target == target)
        with self._uow.read() as session:
            return [from_row(ActionRecord, r) for r in session.scalars(query)]

    def mark_applied(self, action_id: int, error: str | None = None) -> ActionRecord:
        """Mark an action applied (``error`` says why it was refused, if it was)."""
        with self._uow.write() as session:
            row = self._uow.get(session, m.PersonAction, action_id)
            row.applied_at = now()
            row.error = error
            session.flush()
            return from_row(ActionRecord, row)
