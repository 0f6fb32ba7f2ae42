"""Clocks, their transitions, the violations they find, and the engine's snapshots."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sidewalk.storage import models as m
from sidewalk.storage.cases.audit import AuditRepository
from sidewalk.storage.cases.errors import ClockStateError, NotFoundError
from sidewalk.storage.cases.records import (
    KEEP,
    Cause,
    ClockRecord,
    RuleUse,
    TransitionRecord,
    ViolationRecord,
    ViolationStatus,
    _Keep,
    from_row,
)
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, jsonable, now


class ClockRepository:
    """``cases.clocks``: ordinance clocks, violations and the engine's saved state."""

    def __init__(self, uow: UnitOfWork, audit: AuditRepository) -> None:
        self._uow = uow
        self._audit = audit

    # -- clocks

    def open(
        self,
        frontage_id: str,
        kind: str,
        state: str,
        started_at: datetime,
        cause: Cause,
        *,
        deadline: datetime | None = None,
        citation: str | None = None,
        rules: Sequence[RuleUse] = (),
        key: str | None = None,
    ) -> ClockRecord:
        """Start a clock at the event time of its cause.

        ``key`` defaults to ``<frontage>/<kind>/<started_at ISO>``: replaying the
        same start returns the existing clock. ``unconfirmed`` is set when any
        rule used is an unconfirmed profile value.
        """
        started_at = aware("started_at", started_at)
        deadline = None if deadline is None else aware("deadline", deadline)
        key = key or f"{frontage_id}/{kind}/{started_at.isoformat()}"

        def build(session: Session) -> m.Clock:
            self._uow.get(session, m.Frontage, frontage_id)
            row = m.Clock(
                idempotency_key=key,
                frontage_id=frontage_id,
                kind=kind,
                state=state,
                started_at=started_at,
                deadline=deadline,
                closed_at=None,
                cause=cause.to_json(),
                citation=citation,
                rules=[r.to_json() for r in rules],
                unconfirmed=any(r.unconfirmed for r in rules),
            )
            session.add(row)
            return row

        return self._uow.create_once(
            m.Clock, key, build, lambda _s, row: from_row(ClockRecord, row)
        )

    def record_transition(
        self,
        clock_id: int,
        to_state: str,
        at: datetime,
        cause: Cause,
        *,
        detail: Mapping[str, Any] | None = None,
        deadline: datetime | _Keep | None = KEEP,
        closes: bool = False,
        revision: int = 0,
    ) -> TransitionRecord:
        """Append a transition and move the clock to ``to_state``.

        ``deadline``: a new deadline, ``None`` to clear it, or ``KEEP``.
        ``closes``: the clock is finished (it leaves ``list(active_only=True)``).
        ``revision``: the corrections of the case's facts made before it.
        The same ``(clock, at, to_state, revision)`` again returns the stored transition
        (a replay after a restart derives it again); after a correction the case may come
        back to a state at a time it stood at before, and that moves the clock again.
        """
        at = aware("at", at)
        with self._uow.write() as session:
            clock = session.get(m.Clock, clock_id, with_for_update=True)
            if clock is None:
                raise NotFoundError(f"no clock {clock_id}")
            existing = session.scalar(
                select(m.ClockTransition).where(
                    m.ClockTransition.clock_id == clock_id,
                    m.ClockTransition.at == at,
                    m.ClockTransition.to_state == to_state,
                    m.ClockTransition.revision == revision,
                )
            )
            if existing is not None:
                return from_row(TransitionRecord, existing)
            if clock.closed_at is not None:
                raise ClockStateError(f"clock {clock_id} closed at {clock.closed_at.isoformat()}")
            row = m.ClockTransition(
                clock_id=clock_id,
                from_state=clock.state,
                to_state=to_state,
                at=at,
                cause=cause.to_json(),
                detail=jsonable(detail),
                revision=revision,
            )
            session.add(row)
            clock.state = to_state
            if not isinstance(deadline, _Keep):
                clock.deadline = None if deadline is None else aware("deadline", deadline)
            if closes:
                clock.closed_at = at
            session.flush()
            return from_row(TransitionRecord, row)

    def get(self, clock_id: int) -> ClockRecord:
        with self._uow.read() as session:
            return from_row(ClockRecord, self._uow.get(session, m.Clock, clock_id))

    def list(
        self, *, active_only: bool = False, frontage_id: str | None = None, kind: str | None = None
    ) -> builtins.list[ClockRecord]:
        """Clocks in start order; ``active_only`` keeps those not yet closed."""
        query = select(m.Clock).order_by(m.Clock.started_at, m.Clock.id)
        if active_only:
            query = query.where(m.Clock.closed_at.is_(None))
        if frontage_id is not None:
            query = query.where(m.Clock.frontage_id == frontage_id)
        if kind is not None:
            query = query.where(m.Clock.kind == kind)
        with self._uow.read() as session:
            return [from_row(ClockRecord, r) for r in session.scalars(query)]

    def history(self, clock_id: int) -> builtins.list[TransitionRecord]:
        """The clock's transitions in event-time order."""
        query = (
            select(m.ClockTransition)
            .where(m.ClockTransition.clock_id == clock_id)
            .order_by(m.ClockTransition.at, m.ClockTransition.id)
        )
        with self._uow.read() as session:
            return [from_row(TransitionRecord, r) for r in session.scalars(query)]

    def transitions_after(self, after_id: int, limit: int = 500) -> builtins.list[TransitionRecord]:
        """Clock transitions stored after ``after_id``, in id (storage) order."""
        query = (
            select(m.ClockTransition)
            .where(m.ClockTransition.id > after_id)
            .order_by(m.ClockTransition.id)
            .limit(limit)
        )
        with self._uow.read() as session:
            return [from_row(TransitionRecord, r) for r in session.scalars(query)]

    # -- violations

    def record_violation(
        self,
        key: str,
        frontage_id: str,
        rule: str,
        detected_at: datetime,
        *,
        clock_id: int | None = None,
        citation: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        offense_count: int = 1,
    ) -> ViolationRecord:
        """Record a violation once per ``key``; a replay returns the stored one."""
        detected_at = aware("detected_at", detected_at)

        def build(session: Session) -> m.Violation:
            self._uow.get(session, m.Frontage, frontage_id)
            row = m.Violation(
                idempotency_key=key,
                frontage_id=frontage_id,
                clock_id=clock_id,
                rule=rule,
                citation=citation,
                detected_at=detected_at,
                evidence=jsonable(evidence),
                offense_count=offense_count,
                status="open",
            )
            session.add(row)
            session.flush()
            self._audit.chain(
                session, "system", "violation.recorded", f"violation:{row.id}",
                {"key": key, "frontage": frontage_id, "rule": rule, "citation": citation,
                 "detected_at": detected_at},
            )  # fmt: skip
            return row

        return self._uow.create_once(
            m.Violation, key, build, lambda _s, row: from_row(ViolationRecord, row)
        )

    def get_violation(self, violation_id: int) -> ViolationRecord:
        with self._uow.read() as session:
            return from_row(ViolationRecord, self._uow.get(session, m.Violation, violation_id))

    def violation_by_key(self, key: str) -> ViolationRecord | None:
        """The violation recorded under a decision key, if any."""
        with self._uow.read() as session:
            row = session.scalar(select(m.Violation).where(m.Violation.idempotency_key == key))
            return None if row is None else from_row(ViolationRecord, row)

    def list_violations(self) -> builtins.list[ViolationRecord]:
        """Every violation, in detection order."""
        query = select(m.Violation).order_by(m.Violation.detected_at, m.Violation.id)
        with self._uow.read() as session:
            return [from_row(ViolationRecord, r) for r in session.scalars(query)]

    def set_violation_offenses(self, violation_id: int, offense_count: int) -> ViolationRecord:
        """Raise the offense count (§ 370-10 E); a lower count is ignored (replays)."""
        with self._uow.write() as session:
            row = self._uow.get(session, m.Violation, violation_id)
            if offense_count > row.offense_count:
                row.offense_count = offense_count
                self._audit.chain(
                    session, "system", "violation.offenses", f"violation:{row.id}",
                    {"offense_count": offense_count},
                )  # fmt: skip
            session.flush()
            return from_row(ViolationRecord, row)

    def set_violation_status(self, violation_id: int, status: ViolationStatus) -> ViolationRecord:
        with self._uow.write() as session:
            row = self._uow.get(session, m.Violation, violation_id)
            if row.status != status:
                self._audit.chain(
                    session, "system", "violation.status", f"violation:{row.id}",
                    {"from": row.status, "to": status},
                )  # fmt: skip
                row.status = status
            session.flush()
            return from_row(ViolationRecord, row)

    # -- the engine's saved state

    def save_engine_snapshot(self, name: str, event_time: datetime | None, state_json: str) -> None:
        """Replace runner ``name``'s engine snapshot (one row per runner)."""
        with self._uow.write() as session:
            row = session.get(m.EngineSnapshot, name)
            if row is None:
                row = m.EngineSnapshot(name=name)
                session.add(row)
            row.event_time = None if event_time is None else aware("event_time", event_time)
            row.state_json = state_json
            row.saved_at = now()

    def load_engine_snapshot(self, name: str) -> str | None:
        """The saved engine state for runner ``name``, or None on a first start."""
        with self._uow.read() as session:
            row = session.get(m.EngineSnapshot, name)
            return None if row is None else row.state_json
