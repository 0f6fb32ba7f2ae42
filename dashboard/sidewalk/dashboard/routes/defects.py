"""The defects page: stored § 370-5 inspections and each owner's 80 % status."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from sidewalk.alerts.letterhead import cited, cited_in
from sidewalk.analytics.inspect import defect_limits, owner_survey
from sidewalk.dashboard.routes.deps import Cases, Evidence, Reader, VillageProfile, iso
from sidewalk.dashboard.routes.views import owners_for
from sidewalk.storage.cases import FrontageRecord, InspectionRecord
from sidewalk.storage.evidence import EvidenceStore

router = APIRouter()


class ReplacementShare(BaseModel):
    """The defective share of an owner's blocks that calls for replacing the whole walk."""

    value: str
    unit: str
    citation: str | None


class DefectLimit(BaseModel):
    rule: str
    limit_mm: float
    citation: str | None


class DefectCheck(BaseModel):
    """One rule measured on one block: measured against the limit, with its citation."""

    model_config = ConfigDict(extra="allow")

    rule: str
    measured_mm: float | None
    uncertainty_mm: float | None
    limit_mm: float | None
    failed: bool
    confident: bool
    citation: str | None


class InspectionBlock(BaseModel):
    """One block (flag) of an inspected walk and its checks, as the inspection stored it."""

    model_config = ConfigDict(extra="allow")

    block: int
    image_block: int
    defective: bool
    checks: list[DefectCheck]


class InspectionView(BaseModel):
    """One stored inspection: per-block measured vs limit (with citation) and evidence."""

    id: int
    frontage: str
    address: str
    surveyed_at: str | None
    kind: str
    source: str = Field(description="the surveyed file's name")
    status: str
    failure: str | None
    blocks: list[InspectionBlock]
    evidence_url: str | None


class FrontageBlockCount(BaseModel):
    """How many blocks a frontage has, and how that was known."""

    frontage: str
    blocks: int | None
    basis: str
    spacing_ft: float | None


class DefectiveBlock(BaseModel):
    frontage: str
    block: int


class OwnerName(BaseModel):
    name: str


class OwnerDefects(BaseModel):
    """An owner's blocks: surveyed, defective, and whether the whole walk is to be replaced."""

    frontages: list[str]
    surveyed_blocks: int
    owner_blocks: int | None
    defective_blocks: int
    defective_fraction: float | None
    survey_complete: bool
    replace_entire_sidewalk: bool
    status: str
    counts: list[FrontageBlockCount]
    defective: list[DefectiveBlock]
    owner: OwnerName | None = Field(default=None, description="clerk and admin only")


class Defects(BaseModel):
    replacement_share: ReplacementShare
    limits: list[DefectLimit]
    inspections: list[InspectionView]
    owners: list[OwnerDefects]


def inspection_view(
    i: InspectionRecord, frontages: Mapping[str, FrontageRecord], evidence: EvidenceStore | None
) -> InspectionView:
    sha = i.evidence_sha256
    return InspectionView(
        id=i.id, frontage=i.frontage_id, address=frontages[i.frontage_id].street_address,
        surveyed_at=iso(i.surveyed_at), kind=i.kind, source=PurePath(i.source_name).name,
        status=i.status, failure=i.failure,
        blocks=[InspectionBlock.model_validate(dict(b)) for b in i.blocks],
        evidence_url=(f"/api/frames/{sha}"
                      if sha and evidence is not None and sha in evidence else None),
    )  # fmt: skip


@router.get("/defects", tags=["defects"], response_model_exclude_unset=True)
def defects(user: Reader, cases: Cases, profile: VillageProfile, evidence: Evidence) -> Defects:
    """Stored § 370-5 inspections per frontage and each owner's 80 % status."""
    cond = profile.sidewalk_condition
    share = cond.replacement_share
    limits = defect_limits(profile)
    frontages = {f.id: f for f in cases.registry.list_frontages()}
    inspections = [inspection_view(i, frontages, evidence) for i in cases.inspections.list()]
    owners = owners_for(cases, user)
    by_owner: dict[str, list[str]] = {}
    for f in frontages.values():
        by_owner.setdefault(f.owner_id, []).append(f.id)
    owner_rows = []
    for owner_id, fids in sorted(by_owner.items()):
        blocks = cases.inspections.owner_block_conditions(owner_id)
        if not blocks:
            continue
        # The notices' aggregation: the share is of the owner's blocks, not the surveyed.
        status, survey = owner_survey(cases, owner_id, limits, blocks)
        row = OwnerDefects(
            frontages=sorted(fids),
            surveyed_blocks=survey.surveyed_blocks,
            owner_blocks=survey.owner_blocks,
            defective_blocks=survey.defective_blocks,
            defective_fraction=None if survey.owner_blocks is None
            else round(status.defective_fraction, 4),
            survey_complete=survey.survey_complete,
            replace_entire_sidewalk=survey.replace_entire_sidewalk,
            status=cited_in(survey.describe()),
            counts=[FrontageBlockCount(frontage=c.frontage, blocks=c.blocks, basis=c.basis,
                                       spacing_ft=c.spacing_ft) for c in survey.frontages],
            defective=[DefectiveBlock(frontage=b.frontage_id, block=b.block)
                       for b in blocks if b.defective],
        )  # fmt: skip
        if owners is not None:
            row.owner = OwnerName(name=owners[owner_id].name)
        owner_rows.append(row)
    return Defects(
        replacement_share=ReplacementShare(
            value=str(share.value), unit=share.unit, citation=cited(share.citation)
        ),
        limits=[
            DefectLimit(rule=n, limit_mm=round(getattr(cond, n).length_mm, 2),
                        citation=cited(getattr(cond, n).citation))
            for n in ("vertical_differential", "horizontal_gap", "surface_deterioration")
        ],
        inspections=inspections,
        owners=owner_rows,
    )  # fmt: skip
