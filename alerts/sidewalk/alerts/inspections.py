"""Inspecting a frontage (§ 370-5), start to finish: measure, store, and issue the notice.

``sidewalk.analytics.inspect.measure_files`` measures each file and stores the
inspections and the owner's 80 % count; this module decides from them whether
a repair (or full-replacement) notice is due and issues its record through
``NoticeIssuer``. Nothing is sent from here: delivery is ``sidewalk notices``'.
A notice is keyed by frontage and the set of files measured (repair) or by
owner and the set of defective blocks (replacement), so running the same
batch again issues nothing new.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.letterhead import Letterhead
from sidewalk.alerts.notices import BlockDefect, Evidence, Photo
from sidewalk.analytics.defects import (
    CameraCalibration,
    DepthIntrinsics,
    FiducialSpec,
    FrontageCondition,
    LaserRig,
    LevelReference,
    OwnerReplacement,
)
from sidewalk.analytics.inspect import FileOutcome, Kind, MeasuredBatch, Progress, measure_files
from sidewalk.analytics.survey import BlockSurvey
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import (
    BlockConditionRecord,
    CaseStore,
    InspectionRecord,
    NoticeRecord,
)
from sidewalk.storage.evidence import EvidenceStore


@dataclass(frozen=True)
class InspectionReport:
    """What one ``inspect_files`` batch did."""

    frontage_id: str
    owner_id: str
    files: tuple[FileOutcome, ...]
    owner_status: OwnerReplacement
    notice: NoticeRecord | None
    # Stationed joints of this frontage (all its inspections), and the
    # frontage's joint-spacing and walk-width checks.
    joint_stations_mm: tuple[float, ...] = ()
    frontage: FrontageCondition | None = None
    # Why no notice was issued although blocks are defective (None: not held).
    notice_held: str | None = None

    @property
    def failures(self) -> tuple[FileOutcome, ...]:
        return tuple(f for f in self.files if not f.ok)


def inspect_files(
    paths: Iterable[str | Path],
    *,
    frontage: str,
    kind: Kind,
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
    calibration: CameraCalibration | None = None,
    fiducial: FiducialSpec | None = None,
    intrinsics: DepthIntrinsics | None = None,
    level: LevelReference | None = None,
    rig: LaserRig | None = None,
    stations_mm: Sequence[float] | None = None,
    frontage_blocks: int | None = None,
    surveyed_at: datetime | None = None,
    at: datetime | None = None,
    first_block: int = 0,
    progress: Progress | None = None,
    template_dir: Path | None = None,
    issue_notice: bool = True,
    letterhead: Letterhead | None = None,
) -> InspectionReport:
    """Measure, classify and store every file (``measure_files``), then issue the
    § 370-5 notice if due. With ``issue_notice=False`` the batch is only stored,
    for review before issuing; ``at`` is when the notice is issued (default now).
    """
    batch = measure_files(
        paths, frontage=frontage, kind=kind, cases=cases, evidence=evidence, profile=profile,
        calibration=calibration, fiducial=fiducial, intrinsics=intrinsics, level=level, rig=rig,
        stations_mm=stations_mm, frontage_blocks=frontage_blocks, surveyed_at=surveyed_at,
        first_block=first_block, progress=progress,
    )  # fmt: skip
    notice = None
    held = None
    if issue_notice:
        notice, held = repair_notice(
            NoticeIssuer(cases, profile, template_dir, letterhead=letterhead),
            batch,
            at=at or datetime.now(UTC),
        )
    return InspectionReport(
        batch.frontage_id, batch.owner_id, batch.files, batch.owner_status, notice,
        batch.joint_stations_mm, batch.frontage, held,
    )  # fmt: skip


def repair_notice(
    issuer: NoticeIssuer, batch: MeasuredBatch, *, at: datetime
) -> tuple[NoticeRecord | None, str | None]:
    """The notice a measured batch calls for (issued through ``issuer``), or why it is held."""
    return _issue_notice(
        issuer,
        frontage=batch.frontage_id,
        owner_id=batch.owner_id,
        measured=[o.inspection for o in batch.files if o.ok],
        conditions=batch.conditions,
        status=batch.owner_status,
        survey=batch.survey,
        replacement_fraction=batch.limits.replacement_fraction,
        surveyed_at=batch.surveyed_at,
        at=at,
    )


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:32]


def _defects(checks: Iterable[Mapping[str, Any]], block: int) -> list[BlockDefect]:
    return [
        BlockDefect(block, str(c["rule"]), float(c["measured_mm"]), float(c["uncertainty_mm"]))
        for c in checks
        if c["failed"]
    ]


def _issue_notice(
    issuer: NoticeIssuer,
    *,
    frontage: str,
    owner_id: str,
    measured: Sequence[InspectionRecord],
    conditions: Sequence[BlockConditionRecord],
    status: OwnerReplacement,
    survey: BlockSurvey,
    replacement_fraction: float,
    surveyed_at: datetime,
    at: datetime,
) -> tuple[NoticeRecord | None, str | None]:
    """The repair notice for this frontage's defective blocks, or the replacement
    notice (every defective block of the owner) when the 80 % rule is met;
    with the reason when a due notice is held instead."""
    batch = {r.id for r in measured}
    # Only blocks this batch measured (and still the latest word on) call for a repair notice.
    here = [c for c in conditions if c.defective and c.inspection_id in batch]
    if not here and not status.replace_entire_sidewalk:
        return None, None
    # The notice's share is of the owner's block count when known.
    total = status.owner_blocks if status.owner_blocks is not None else status.total_blocks
    if status.replace_entire_sidewalk:
        # Blocks of several frontages share numbers; number them owner-wide. One
        # replacement notice per set of defective blocks, whichever batch tipped it.
        bad = [c for c in conditions if c.defective]
        defects = [d for i, c in enumerate(bad) for d in _defects(c.checks, i)]
        ident: list[Any] = sorted([c.frontage_id, c.block] for c in bad)
        key = f"replacement/{owner_id}/{_digest(ident)}"
    else:
        share = Decimal(len({c.block for c in here})) / Decimal(max(total, 1))
        if share >= Decimal(str(replacement_fraction)):
            # The issuer would read this share of the surveyed blocks as the
            # whole walk; without the owner's block count that is not known.
            return None, (
                f"incomplete survey: {status.total_blocks} of ? blocks; record the"
                " frontage's block count (or station its joints) to issue the notice"
            )
        defects = [d for c in here for d in _defects(c.checks, c.block)]
        key = f"{frontage}/{_digest(sorted(r.source_sha256 for r in measured))}"
    photos = tuple(
        Photo(r.evidence_sha256, r.surveyed_at, caption=Path(r.source_name).name)
        for r in measured
        if r.evidence_sha256 is not None
    )
    notice = issuer.repair_notice(
        key,
        frontage,
        at,
        surveyed_at=surveyed_at,
        defects=defects,
        survey=survey,
        evidence=Evidence(photos=photos),
    )
    return notice, None
