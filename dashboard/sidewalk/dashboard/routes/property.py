"""A page per property: the parcel, its owners and occupants, its frontages on the map,
the clocks and notices in plain words, the frames at each decision, bills, surveys.

A property is a parcel of the registry with all its frontages; a frontage the
registry has not tied to a parcel is a property of its own. The page is asked
for by a frontage id or a parcel id (``#property/<id>``). Lengths are written
as the ordinance writes them (feet and inches) with the SI value beside them
for the hover title; owner names, occupants and mailing addresses go only to
roles with ``owner_details``, as everywhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from sidewalk.alerts.accounts import place_owner_changes
from sidewalk.alerts.letterhead import cited
from sidewalk.alerts.wording import feet_rule, feet_short, inches_short
from sidewalk.analytics.phone_cameras import MARKER_ONLY_NOTE
from sidewalk.analytics.survey import failure_words
from sidewalk.core.contract import SnowMeasurement
from sidewalk.core.profile import Profile
from sidewalk.core.units import MM_PER_FOOT
from sidewalk.dashboard.auth import User
from sidewalk.dashboard.geometry import frontage_features, parcel_features
from sidewalk.dashboard.routes.deps import (
    Cases,
    Evidence,
    GeometryFile,
    Now,
    Reader,
    TimeSeries,
    VillageProfile,
    iso,
)
from sidewalk.dashboard.states import CATEGORIES, category, label
from sidewalk.dashboard.words import NOTICE_STATUS, clock_kind, notice_kind
from sidewalk.storage.cases import (
    CaseStore,
    ClockRecord,
    FrontageRecord,
    NotFoundError,
    NoticeRecord,
    ViolationRecord,
)
from sidewalk.storage.cases.records import ParcelRecord
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

router = APIRouter()

RULES: dict[str, str] = {
    "snow_and_ice.clearing_deadline": "Snow and ice not cleared by the deadline",
    "snow_and_ice.ice": "Ice left untreated",
}
BILL_STATUS: dict[str, str] = {
    "open": "Open",
    "paid": "Paid",
    "tax_roll": "On the tax roll",
}
DEFECT_RULES: dict[str, str] = {}


def words(name: str, table: Mapping[str, str]) -> str:
    """A stored name in the clerk's words: the table's, or its last part with spaces."""
    return table.get(name, name.rsplit(".", 1)[-1].replace("_", " ").capitalize())


class Quantity(BaseModel):
    """A measure as the ordinance writes it, with the SI value for the hover title."""

    text: str = Field(description="feet and inches, inches or °F, as the ordinance writes it")
    si: str = Field(description="the same value in SI units")


def feet(ft: float) -> Quantity:
    """A length kept in feet (a frontage's length, a walk's width)."""
    total_in = round(ft * 12)
    whole, inch = divmod(total_in, 12)
    text = f"{whole} ft" if inch == 0 else f"{whole} ft {inch} in"
    return Quantity(text=text, si=f"{ft * MM_PER_FOOT / 1000:.2f} m")


def measured_width(
    mm: float, uncertainty_mm: float | None, required_mm: float | None
) -> Quantity:
    """A measured width as the letter states it (``alerts.wording.feet_short``): to the
    quarter inch with the camera's stated uncertainty, never reading as reaching a
    required width it falls short of."""
    return Quantity(
        text=feet_short(mm, uncertainty_mm, short_of_mm=required_mm),
        si=f"{mm:.1f} mm" if uncertainty_mm is None else f"{mm:.1f} mm ± {uncertainty_mm:.1f} mm",
    )


def required_width(mm: float) -> Quantity:
    """A width the Code sets, in its words (``4 feet``)."""
    return Quantity(text=feet_rule(mm), si=f"{mm:.1f} mm")


def defect_size(mm: float, uncertainty_mm: float | None, limit_mm: float | None) -> Quantity:
    """A defect's size as the defect letter states it (``alerts.wording.inches_short``):
    to the sixteenth of an inch, one at or over its limit never reading under it."""
    si = f"{mm:.1f} mm" if uncertainty_mm is None else f"{mm:.1f} mm ± {uncertainty_mm:.1f} mm"
    return Quantity(text=inches_short(mm, uncertainty_mm, at_least_mm=limit_mm), si=si)


class ParcelView(BaseModel):
    parcel: str | None = Field(description="the county's parcel number")
    tax_parcel: str | None = Field(description="the number on the tax roll")
    place: str | None
    zip_code: str | None


class OwnershipView(BaseModel):
    name: str
    address_lines: list[str]
    since: str
    until: str | None


class OccupantView(BaseModel):
    name: str
    role: str = Field(description="'Occupant' or 'Person in charge'")
    phone: str | None
    email: str | None
    since: str
    until: str | None


class PropertyFrontage(BaseModel):
    id: str
    address: str
    length: Quantity
    walk_width: Quantity | None
    zone: str
    corner: bool
    side: str | None
    state: str = Field(description="the deciding clock's state in words")
    category: str
    retired: bool


class ClockLine(BaseModel):
    address: str
    kind: str
    state: str
    category: str
    running: bool
    started_at: str | None
    deadline: str | None
    closed_at: str | None
    citation: str | None


class NoticeLine(BaseModel):
    number: str
    kind: str
    status: str
    issued_at: str | None
    deadline: str | None = Field(
        description="the owner's deadline once served (its case's running clock); null before"
    )
    served_at: str | None
    href: str = Field(description="the notice's own page (a hash route)")


class FrameView(BaseModel):
    url: str | None = Field(description="null when the evidence store no longer holds it")
    caption: str
    taken_at: str | None


class DecisionView(BaseModel):
    """A recorded violation: what was decided, when, the measure and the frames."""

    at: str | None
    address: str
    what: str
    citation: str | None
    measured: Quantity | None
    required: Quantity | None
    by_review: bool
    frames: list[FrameView]


class PaymentLine(BaseModel):
    amount: str
    paid_at: str | None
    method: str


class BillLine(BaseModel):
    id: int
    address: str
    amount: str
    paid: str
    balance: str
    status: str
    issued_at: str | None
    due_date: str | None
    payments: list[PaymentLine]


class DefectLine(BaseModel):
    block: int
    rule: str
    measured: Quantity | None
    limit: Quantity | None
    citation: str | None


class SurveyView(BaseModel):
    address: str
    surveyed_at: str | None
    kind: str
    measured: bool
    failure: str | None
    blocks: int
    defective_blocks: int
    defects: list[DefectLine]
    evidence_url: str | None


class CategoryStyle(BaseModel):
    label: str
    color: str


class PropertyPage(BaseModel):
    """Everything the Village knows about one property, in the clerk's words."""

    id: str
    address: str
    zone: str = Field(description="the village's IANA time zone")
    now: str = Field(description="the dashboard's clock")
    parcel: ParcelView
    owner: OwnershipView | None = Field(default=None, description="clerk and admin only")
    ownerships: list[OwnershipView] | None = Field(default=None, description="clerk and admin")
    occupants: list[OccupantView] | None = Field(default=None, description="clerk and admin")
    owner_changes: list[str] | None = Field(
        default=None,
        description="clerk and admin: an open case whose parcel changed hands, in words",
    )
    frontages: list[PropertyFrontage]
    map: dict[str, Any] = Field(description="GeoJSON FeatureCollection: parcel and frontages")
    categories: dict[str, CategoryStyle]
    clocks: list[ClockLine]
    notices: list[NoticeLine]
    decisions: list[DecisionView]
    bills: list[BillLine]
    surveys: list[SurveyView]


def _property(cases: CaseStore, key: str) -> tuple[ParcelRecord | None, list[FrontageRecord]]:
    """The parcel and its frontages for a frontage id or a parcel id (404 if neither)."""
    try:
        frontage = cases.registry.get_frontage(key)
    except NotFoundError:
        frontage = None
    parcel_id = frontage.parcel_id if frontage is not None else key
    parcel = None
    if parcel_id is not None:
        try:
            parcel = cases.registry.get_parcel(parcel_id)
        except NotFoundError:
            parcel = None
    if parcel is None:
        if frontage is None:
            raise HTTPException(404, "No property with that frontage or parcel number")
        return None, [frontage]
    on_parcel = cases.dashboard.frontages_of_parcel(parcel.id)
    if not on_parcel:
        if frontage is None:
            raise HTTPException(404, "That parcel has no frontage on a sidewalk")
        on_parcel = [frontage]
    return parcel, on_parcel


def _deciding(clocks: list[ClockRecord]) -> ClockRecord | None:
    """The clock that decides a frontage's colour (as the overview: open enforcement first)."""
    chosen: ClockRecord | None = None
    for clock in clocks:
        held = chosen is not None and chosen.active and chosen.kind == "enforcement"
        if held and clock.kind != "enforcement":
            continue
        chosen = clock
    return chosen


def _frontage_features(
    cases: CaseStore,
    frontages: list[FrontageRecord],
    geometry_file: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The property's frontages as drawn on the map page: the file's or the stored line,
    else where the generated street plan puts them (which needs every frontage without one,
    so it is read only when the property has such a frontage)."""
    ids = {f.id for f in frontages}
    stored = cases.dashboard.frontage_geometries_of(list(ids))
    if all(f.id in stored or f.id in geometry_file for f in frontages):
        return frontage_features(frontages, stored, geometry_file)
    every, stored = cases.pages.plan()
    return [f for f in frontage_features(every, stored, geometry_file) if f["id"] in ids]


def owners_deadline(notice: NoticeRecord, clocks: list[ClockRecord]) -> str | None:
    """The deadline that matters to the owner: none before service (the period starts when
    the notice is served); after it, the running enforcement clock's of the frontage. The
    notice's own ``deadline`` is the clearing deadline that had passed when it was issued."""
    if notice.delivered_at is None:
        return None
    running = [
        c for c in clocks
        if c.kind == "enforcement" and c.active and c.deadline is not None
        and c.started_at >= notice.issued_at
    ]  # fmt: skip
    return iso(running[-1].deadline) if running else None


def _ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        return None


def _frame_url(sha: str | None, evidence: EvidenceStore | None) -> str | None:
    return f"/api/frames/{sha}" if sha and evidence is not None and sha in evidence else None


def _decision_frames(
    v: ViolationRecord,
    timeseries: SqliteTimeSeriesStore | None,
    evidence: EvidenceStore | None,
    cited: list[Mapping[str, Any]],
) -> list[FrameView]:
    """The frame the decision measured (its device and seq), else the newest frame of
    the frontage in the six hours before the decision; then the frames its notices cite."""
    frames: list[FrameView] = []
    seen: set[str] = set()
    decided_ms = int(v.detected_at.timestamp() * 1000)
    if timeseries is not None:
        measured_ms = _ms(v.evidence.get("measured_at"))
        device, seq = v.evidence.get("measured_by"), v.evidence.get("measured_seq")
        found: SnowMeasurement | None = None
        if measured_ms is not None and isinstance(device, str):
            for r in timeseries.readings(
                device=device, frontage=v.frontage_id, start_ms=measured_ms, end_ms=measured_ms + 1
            ):
                if isinstance(r, SnowMeasurement) and r.frame_sha256 and r.seq == seq:
                    found = r
        caption = "Camera frame the decision measured"
        if found is None:
            caption = "Newest camera frame before the decision"
            for r in timeseries.readings(
                frontage=v.frontage_id, start_ms=decided_ms - 6 * 3_600_000, end_ms=decided_ms + 1
            ):
                if isinstance(r, SnowMeasurement) and r.frame_sha256:
                    found = r
        if found is not None and found.frame_sha256:
            seen.add(found.frame_sha256)
            taken = datetime.fromtimestamp(found.ts / 1000, v.detected_at.tzinfo)
            frames.append(
                FrameView(
                    url=_frame_url(found.frame_sha256, evidence),
                    caption=caption,
                    taken_at=taken.isoformat(),
                )
            )
    for photo in cited:
        sha = photo.get("sha256")
        if not isinstance(sha, str) or sha in seen:
            continue
        seen.add(sha)
        caption = str(photo.get("caption") or "Photograph cited by the notice")
        when = photo.get("taken_at")
        frames.append(
            FrameView(
                url=_frame_url(sha, evidence),
                caption=caption,
                taken_at=when if isinstance(when, str) else None,
            )
        )
    return frames


def property_page(
    cases: CaseStore,
    key: str,
    *,
    user: User,
    geometry_file: Mapping[str, Mapping[str, Any]],
    timeseries: SqliteTimeSeriesStore | None,
    evidence: EvidenceStore | None,
    zone: str,
    now: datetime,
    profile: Profile | None = None,
) -> PropertyPage:
    parcel, frontages = _property(cases, key)
    ids = [f.id for f in frontages]
    address_of = {f.id: f.street_address for f in frontages}
    # One query per kind of record for all the property's frontages (issue order, start order).
    records = cases.pages.property(ids)
    clocks, notices = records.clocks, records.notices
    violations = cases.dashboard.violations_of_frontages(ids)
    features = _frontage_features(cases, frontages, geometry_file)
    views: list[PropertyFrontage] = []
    for f in frontages:
        clock = _deciding(clocks[f.id])
        cat = category(clock.state) if clock else "none"
        views.append(
            PropertyFrontage(
                id=f.id,
                address=f.street_address,
                length=feet(f.length_ft),
                walk_width=feet(f.walk_width_ft) if f.walk_width_ft else None,
                zone=f.zone.capitalize(),
                corner=f.corner,
                side=f.side,
                state=label(clock.state, clock.kind) if clock else "No clock yet",
                category=cat,
                retired=f.retired_at is not None,
            )
        )
    for feature in features:
        view = next(v for v in views if v.id == feature["id"])
        feature["properties"].update(category=view.category, state=view.state, kind="frontage")
    if parcel is not None and parcel.geometry:
        features.insert(
            0,
            {
                "type": "Feature",
                "id": f"parcel:{parcel.id}",
                "geometry": parcel.geometry,
                "properties": {"kind": "parcel", "address": parcel.site_address or ""},
            },
        )
    photos_by_violation: dict[int, list[Mapping[str, Any]]] = {}
    for n in notices:
        if n.violation_id is not None:
            photos_by_violation.setdefault(n.violation_id, []).extend(
                p for p in n.detail.get("photos", ()) or () if isinstance(p, Mapping)
            )
    tolerance = None if profile is None else profile.snow_and_ice.width_tolerance.length_mm
    decisions = []
    for v in violations:
        ev = v.evidence
        measured, required = ev.get("measured_width_mm"), ev.get("required_width_mm")
        need = float(required) if isinstance(required, int | float) else None
        # The uncertainty the decision used; a record from before it was kept: the camera's
        # stated one (the letter's rule).
        stated = ev.get("width_uncertainty_mm")
        uncertainty = float(stated) if isinstance(stated, int | float) else tolerance
        decisions.append(
            DecisionView(
                at=iso(v.detected_at),
                address=address_of.get(v.frontage_id, v.frontage_id),
                what=words(v.rule, RULES),
                citation=cited(v.citation),
                measured=measured_width(float(measured), uncertainty, need)
                if isinstance(measured, int | float)
                else None,
                required=None if need is None else required_width(need),
                by_review=bool(ev.get("review")),
                frames=_decision_frames(v, timeseries, evidence, photos_by_violation.get(v.id, [])),
            )
        )
    bills = []
    for b in cases.dashboard.bills_of_frontages(ids):
        bills.append(
            BillLine(
                id=b.id,
                address=address_of.get(b.frontage_id, b.frontage_id),
                amount=str(b.amount),
                paid=str(b.paid),
                balance=str(b.balance),
                status=words(b.status, BILL_STATUS),
                issued_at=iso(b.issued_at),
                due_date=iso(b.due_date),
                payments=[
                    PaymentLine(amount=str(p.amount), paid_at=iso(p.paid_at), method=p.method)
                    for p in records.payments.get(b.id, [])
                ],
            )
        )
    surveys = []
    for fid in ids:
        for i in records.inspections[fid]:
            defects = [
                DefectLine(
                    block=int(b.get("block", 0)),
                    rule=words(str(c.get("rule", "")), DEFECT_RULES),
                    measured=defect_size(
                        float(c["measured_mm"]),
                        None if c.get("uncertainty_mm") is None else float(c["uncertainty_mm"]),
                        None if c.get("limit_mm") is None else float(c["limit_mm"]),
                    )
                    if c.get("measured_mm") is not None
                    else None,
                    limit=Quantity(text=inches_short(float(c["limit_mm"])),
                                   si=f"{float(c['limit_mm']):.1f} mm")
                    if c.get("limit_mm") is not None
                    else None,
                    citation=cited(c.get("citation")),
                )
                for b in i.blocks
                for c in b.get("checks", ())
                if c.get("failed")
            ]
            surveys.append(
                SurveyView(
                    address=address_of[fid],
                    surveyed_at=iso(i.surveyed_at),
                    kind=f"{i.kind.capitalize()} survey" + _camera_words(i.result),
                    measured=i.status == "ok",
                    failure=failure_words(i.failure) if i.failure else None,
                    blocks=len(i.blocks),
                    defective_blocks=sum(1 for b in i.blocks if b.get("defective")),
                    defects=defects,
                    evidence_url=_frame_url(i.evidence_sha256, evidence),
                )
            )
    first = frontages[0]
    page = PropertyPage(
        id=key,
        zone=zone,
        now=now.isoformat(),
        address=(parcel.site_address if parcel and parcel.site_address else first.street_address),
        parcel=ParcelView(
            parcel=parcel.id if parcel else None,
            tax_parcel=(
                parcel.tax_parcel_id if parcel and parcel.tax_parcel_id else first.parcel_number
            ),
            place=parcel.place if parcel else None,
            zip_code=parcel.zip_code if parcel else None,
        ),
        frontages=views,
        map={"type": "FeatureCollection", "features": features},
        categories={k: CategoryStyle(label=v[0], color=v[1]) for k, v in CATEGORIES.items()},
        clocks=[
            ClockLine(
                address=address_of[c.frontage_id],
                kind=clock_kind(c.kind),
                state=label(c.state, c.kind),
                category=category(c.state),
                running=c.active,
                started_at=iso(c.started_at),
                deadline=iso(c.deadline),
                closed_at=iso(c.closed_at),
                citation=cited(c.citation),
            )
            for fid in ids
            for c in reversed(clocks[fid])
        ],
        notices=[
            NoticeLine(
                number=n.number,
                kind=notice_kind(n.kind),
                status=NOTICE_STATUS.get(n.status, words(n.status, {})),
                issued_at=iso(n.issued_at),
                deadline=owners_deadline(n, clocks[n.frontage_id]),
                served_at=iso(n.delivered_at),
                href=f"#notice/{n.number}",
            )
            for n in reversed(notices)
        ],
        decisions=list(reversed(decisions)),
        bills=bills,
        surveys=list(reversed(surveys)),
    )
    if user.may("owner_details"):
        _owner_details(cases, page, parcel, first)
        if profile is not None:  # a sale during an open case: what it means for the bill
            page.owner_changes = place_owner_changes(cases, profile, ids)
    return page


def _owner_details(
    cases: CaseStore, page: PropertyPage, parcel: ParcelRecord | None, first: FrontageRecord
) -> None:
    """Owner of record, its history and the occupants: only for roles that may see them."""
    records = cases.registry.ownerships(parcel.id) if parcel is not None else []
    # Only the owners this page names (the village's thousands are not read).
    owners = cases.pages.owners({o.owner_id for o in records} | {first.owner_id})
    history: list[OwnershipView] = []
    if parcel is not None:
        for o in records:
            owner = owners.get(o.owner_id)
            history.append(
                OwnershipView(
                    name=owner.name if owner else "Unknown owner",
                    address_lines=list(owner.address_lines) if owner else [],
                    since=o.effective_from.isoformat(),
                    until=iso(o.effective_to),
                )
            )
    current = next((o for o in reversed(history) if o.until is None), None)
    if current is None and first.owner_id in owners:
        owner = owners[first.owner_id]
        current = OwnershipView(
            name=owner.name,
            address_lines=list(owner.address_lines),
            since=owner.updated_at.isoformat(),
            until=None,
        )
    page.owner = current
    page.ownerships = list(reversed(history))
    page.occupants = (
        [
            OccupantView(
                name=o.name,
                role="Person in charge" if o.role == "person in charge" else "Occupant",
                phone=o.phone,
                email=o.email,
                since=o.effective_from.isoformat(),
                until=iso(o.effective_to),
            )
            for o in cases.registry.occupants(parcel.id)
        ]
        if parcel is not None
        else []
    )


@router.get("/properties/{key}", tags=["pages"], response_model_exclude_unset=True)
def get_property(
    key: str,
    *,
    user: Reader,
    cases: Cases,
    geometry_file: GeometryFile,
    timeseries: TimeSeries,
    evidence: Evidence,
    profile: VillageProfile,
    now: Now,
) -> PropertyPage:
    """One property by a frontage id or a parcel number: everything on its page."""
    return property_page(
        cases,
        key,
        user=user,
        geometry_file=geometry_file,
        timeseries=timeseries,
        evidence=evidence,
        zone=profile.village.timezone,
        now=now,
        profile=profile,
    )


class ParcelMap(BaseModel):
    """The registry's parcel boundaries as a GeoJSON FeatureCollection (WGS 84), with the
    map's state categories (colour and words) for its legend and filter."""

    type: str = "FeatureCollection"
    features: list[dict[str, Any]]
    categories: dict[str, CategoryStyle]


@router.get("/parcels", tags=["pages"])
def parcels(user: Reader, cases: Cases) -> ParcelMap:
    """Every parcel with a boundary, drawn under the frontages on the map page."""
    return ParcelMap(
        features=parcel_features(cases.registry.list_parcels()),
        categories={k: CategoryStyle(label=v[0], color=v[1]) for k, v in CATEGORIES.items()},
    )


def _camera_words(result: Mapping[str, Any]) -> str:
    """A phone photo measured with the marker alone says so beside the survey (a hearing
    reads it there; ``analytics.phone_cameras``)."""
    note = (result.get("survey") or {}).get("camera")
    return f" ({note})" if note == MARKER_ONLY_NOTE else ""
