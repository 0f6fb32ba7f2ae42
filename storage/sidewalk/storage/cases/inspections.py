"""§ 370-5 condition inspections: measured files and each block's verdict."""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from sidewalk.storage import models as m
from sidewalk.storage.cases.records import (
    BlockConditionRecord,
    InspectionKind,
    InspectionRecord,
    from_row,
)
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, canonical_json, jsonable, now


class InspectionRepository:
    """``cases.inspections``: inspected survey files and the blocks' latest condition."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    def record(
        self,
        frontage_id: str,
        *,
        surveyed_at: datetime,
        kind: InspectionKind,
        source_name: str,
        source_sha256: str,
        result: Mapping[str, Any],
        blocks: Sequence[Mapping[str, Any]] = (),
        evidence_sha256: str | None = None,
        failure: str | None = None,
        again: str | None = None,
    ) -> InspectionRecord:
        """Store one inspected file, or return the row already stored for it.

        The key is frontage + the file's sha256, so inspecting the same file
        again never adds a row. ``failure`` set means the file could not be
        measured (status ``failed``); ``blocks`` are the per-block verdicts
        (``block``, ``defective``, ``checks``) the 80 % rule reads. ``again``
        labels a later measurement of a stored file (new options): its own
        row beside the first, once per label.
        """
        key = f"inspection/{frontage_id}/{source_sha256}"
        if again is not None:
            key += f"/again/{again}"
        lookup = select(m.Inspection).where(m.Inspection.idempotency_key == key)
        row_data = m.Inspection(
            idempotency_key=key,
            frontage_id=frontage_id,
            surveyed_at=aware("surveyed_at", surveyed_at),
            recorded_at=now(),
            kind=kind,
            source_name=source_name[:500],
            source_sha256=source_sha256,
            status="failed" if failure is not None else "ok",
            failure=None if failure is None else failure[:500],
            result=jsonable(result),
            blocks=json.loads(canonical_json(builtins.list(blocks))),
            evidence_sha256=evidence_sha256,
        )
        try:
            with self._uow.write() as session:
                existing = session.scalar(lookup)
                if existing is not None:
                    return from_row(InspectionRecord, existing)
                self._uow.get(session, m.Frontage, frontage_id)
                session.add(row_data)
                session.flush()
                return from_row(InspectionRecord, row_data)
        except IntegrityError:
            with self._uow.read() as session:
                winner = session.scalar(lookup)
                if winner is None:
                    raise
                return from_row(InspectionRecord, winner)

    def list(
        self, frontage_id: str | None = None, owner_id: str | None = None
    ) -> builtins.list[InspectionRecord]:
        """Inspections, oldest survey first, of one frontage and/or one owner's frontages."""
        query = select(m.Inspection).order_by(m.Inspection.surveyed_at, m.Inspection.id)
        if frontage_id is not None:
            query = query.where(m.Inspection.frontage_id == frontage_id)
        if owner_id is not None:
            query = query.join(m.Frontage, m.Frontage.id == m.Inspection.frontage_id).where(
                m.Frontage.owner_id == owner_id
            )
        with self._uow.read() as session:
            return [from_row(InspectionRecord, r) for r in session.scalars(query)]

    def owner_block_conditions(self, owner_id: str) -> builtins.list[BlockConditionRecord]:
        """Every surveyed block of the owner's frontages, the latest inspection's verdict each.

        A block is (frontage, block number); a later survey of it replaces an
        earlier one (ties broken by the later row). Failed files say nothing.
        """
        latest: dict[tuple[str, int], BlockConditionRecord] = {}
        for insp in self.list(owner_id=owner_id):
            if insp.status != "ok":
                continue
            for b in insp.blocks:
                block = int(b["block"])
                latest[(insp.frontage_id, block)] = BlockConditionRecord(
                    insp.frontage_id, block, bool(b["defective"]), insp.id, insp.surveyed_at,
                    tuple(dict(c) for c in b.get("checks", ())),
                )  # fmt: skip
        return [latest[k] for k in sorted(latest)]
