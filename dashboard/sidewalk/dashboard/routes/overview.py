"""The overview page: every frontage and its state, the running clocks, alerts, the map.

Each page reads its rows through ``cases.pages`` (the columns shown, one query per kind
of record, one read transaction): the Overview of a 2,000-frontage village is four
queries, whatever its size.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field
from pydantic_core import to_json

from sidewalk.analytics.clocks.enforcement import ENFORCEMENT
from sidewalk.dashboard.clock_rows import clock_row
from sidewalk.dashboard.geometry import frontage_features, generated_rings, generated_streets
from sidewalk.dashboard.routes.deps import (
    Cases,
    Context,
    DashboardContext,
    GeometryFile,
    Now,
    Reader,
    VillageProfile,
    iso,
)
from sidewalk.dashboard.routes.views import (
    ClockView,
    FrontageView,
    clock_view,
    deciding_clocks,
    frontage_view,
)
from sidewalk.dashboard.states import ALERT_ACTIONS, CATEGORIES, STATE_WORDS, category
from sidewalk.dashboard.words import CLOCK_KINDS, alert_about, alert_words

router = APIRouter()


class CategoryStyle(BaseModel):
    label: str
    color: str = Field(description="CSS colour of the map and the badges")


class AlertView(BaseModel):
    """An audit row people should see (ALERT_ACTIONS)."""

    id: int
    action: str
    subject: str
    what: str = Field("", description="the alert in the clerk's words")
    about: str = Field("", description="the notice's number or the frontage's address")
    actor: str
    at: str | None


class StorageView(BaseModel):
    """The stores' disk against ingest's free-space floor (below it ingest takes nothing)."""

    free_bytes: int
    floor_bytes: int
    ok: bool
    reason: str | None = Field(description="why ingest refuses new messages, when it does")


class Overview(BaseModel):
    """Every frontage with its state, the running clocks (soonest first), new alerts."""

    village: str
    zone: str = Field(description="the village's IANA time zone")
    now: str = Field(description="the dashboard's clock: countdowns keep only the offset")
    categories: dict[str, CategoryStyle]
    counts: dict[str, int] = Field(description="frontages per category")
    frontages: list[FrontageView]
    clocks: list[ClockView]
    alerts: list[AlertView]
    storage: StorageView | None = Field(
        default=None, description="free disk space against ingest's floor (when known)"
    )


class FrontageProperties(BaseModel):
    frontage: str
    address: str
    geometry_source: Literal["file", "records", "generated"]
    state: str | None
    category: str


class FrontageFeature(BaseModel):
    """A frontage as a GeoJSON feature (WGS 84)."""

    type: Literal["Feature"]
    id: str
    geometry: dict[str, Any] = Field(description="a GeoJSON geometry")
    properties: FrontageProperties


class StreetProperties(BaseModel):
    street: str


class StreetFeature(BaseModel):
    """A generated street's carriageway, curb to curb (GeoJSON)."""

    type: Literal["Feature"]
    id: str
    geometry: dict[str, Any] = Field(description="a GeoJSON geometry")
    properties: StreetProperties


class FrontageMap(BaseModel):
    """A GeoJSON FeatureCollection of the frontages, plus the generated streets."""

    type: Literal["FeatureCollection"]
    features: list[FrontageFeature]
    streets: list[StreetFeature]


@router.get("/overview", tags=["pages"], response_model_exclude_unset=True)
def overview(
    user: Reader, cases: Cases, profile: VillageProfile, now: Now, context: Context
) -> Overview:
    """Every frontage with its state, the running clocks, and the newest alerts."""
    owners = user.may("owner_details")
    # Alerts: those among the newest 400 audit rows, newest first.
    rows = cases.pages.overview(
        case_kind=ENFORCEMENT, owners=owners, alert_actions=ALERT_ACTIONS, alert_window=400
    )
    addresses = {f.id: f.street_address for f in rows.frontages}
    states = deciding_clocks(rows.deciding)
    # "Unconfirmed" only while a value a clock used waits for the Village's confirmation.
    in_force = cases.confirmations.in_force() if any(c.unconfirmed for c in rows.running) else {}
    # Soonest deadline first; clocks without one (snowing) after them.
    active = sorted(rows.running, key=lambda c: (c.deadline is None, c.deadline or c.started_at))
    counts: dict[str, int] = {}
    views = []
    for f in rows.frontages:
        view = frontage_view(f, states.get(f.id), owners)
        counts[view.category] = counts.get(view.category, 0) + 1
        views.append(view)
    alerts = rows.alerts
    return Overview(
        village=profile.village.name,
        zone=profile.village.timezone,
        now=now.isoformat(),
        categories={k: CategoryStyle(label=v[0], color=v[1]) for k, v in CATEGORIES.items()},
        counts=counts,
        frontages=views,
        clocks=[clock_view(c, addresses, in_force) for c in active],
        alerts=[
            AlertView(
                id=a.id,
                action=a.action,
                subject=a.subject,
                what=alert_words(a.action),
                about=alert_about(a.subject, a.detail, addresses),
                actor=a.actor,
                at=iso(a.recorded_at),
            )
            for a in alerts
        ],
        storage=storage_view(context),
    )


def storage_view(context: DashboardContext) -> StorageView | None:
    """Free space against the floor, when the dashboard knows where the stores are."""
    if context.space is None:
        return None
    report = context.space.report()
    return StorageView(
        free_bytes=report.free_bytes,
        floor_bytes=report.floor_bytes,
        ok=report.ok,
        reason=report.reason,
    )


@router.get("/map", tags=["pages"])
def frontage_map(user: Reader, cases: Cases, geometry_file: GeometryFile) -> FrontageMap:
    """Every frontage with its state (GeoJSON), and the generated streets' centre lines."""
    rows = cases.pages.map(case_kind=ENFORCEMENT)
    frontages = rows.frontages
    states = deciding_clocks(rows.deciding)
    features = frontage_features(frontages, rows.geometries, geometry_file)
    features_by_id = {f["id"]: f["properties"]["geometry_source"] for f in features}
    for feature in features:
        clock = states.get(feature["id"])
        feature["properties"]["state"] = clock.state if clock else None
        feature["properties"]["category"] = category(clock.state) if clock else "none"
    generated = [f for f in frontages if features_by_id[f.id] == "generated"]
    streets = generated_streets(generated) if generated else []
    return FrontageMap.model_validate(
        {"type": "FeatureCollection", "features": features, "streets": streets}
    )


class PageFrontage(BaseModel):
    """A row of the Overview's "Frontages by state" (only what the page draws)."""

    id: str
    address: str
    kind: str | None = Field(description="the deciding clock's kind (its state's words: /words)")
    state: str | None
    category: str
    deadline: str | None = Field(description="the deciding clock's, while it runs")
    owner: str | None = Field(description="the owner's name: clerk and admin only")


class PageClock(BaseModel):
    """A row of the Overview's clock table."""

    id: int
    frontage: str
    address: str | None
    kind: str
    state: str
    category: str
    deadline: str | None
    unconfirmed: bool


class PageShape(BaseModel):
    """A frontage on the Overview's map: its GeoJSON geometry (WGS 84) and colour group."""

    id: str
    category: str
    geometry: dict[str, Any]


class OverviewPage(BaseModel):
    """The Overview page in one response, only the fields it draws: ``/overview`` and
    ``/map`` together cost the page two requests and twice the bytes."""

    village: str
    zone: str
    now: str
    categories: dict[str, CategoryStyle]
    counts: dict[str, int] = Field(description="frontages per category")
    frontages: list[PageFrontage]
    clocks: list[PageClock] = Field(description="running clocks, soonest deadline first")
    alerts: list[AlertView]
    storage: StorageView | None
    shapes: list[PageShape]
    streets: list[StreetFeature]


def overview_page_data(
    owners: bool,
    *,
    cases: Cases,
    profile: VillageProfile,
    now: Now,
    context: DashboardContext,
    geometry_file: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """``OverviewPage`` as plain data: 2,000 frontages through pydantic models cost the
    server more than reading them (``tests/dashboard/test_pages.py`` validates the shape)."""
    rows = cases.pages.overview(
        case_kind=ENFORCEMENT,
        owners=owners,
        alert_actions=ALERT_ACTIONS,
        alert_window=400,
        lean=True,
    )
    _, stored = cases.pages.plan()
    # A clock is "unconfirmed" while a value it used still waits for the Village's
    # confirmation: the clock's own flag is the profile's mark when it started.
    in_force = cases.confirmations.in_force() if any(c.unconfirmed for c in rows.running) else {}
    addresses = {f.id: f.street_address for f in rows.frontages}
    states = deciding_clocks(rows.deciding)
    counts: dict[str, int] = {}
    frontages, categories = [], {}
    for f in rows.frontages:
        clock = states.get(f.id)
        kind = category(clock.state) if clock else "none"
        categories[f.id] = kind
        counts[kind] = counts.get(kind, 0) + 1
        frontages.append({
            "id": f.id, "address": f.street_address, "kind": clock.kind if clock else None,
            "state": clock.state if clock else None,
            "category": kind, "deadline": iso(clock.deadline) if clock and clock.active else None,
            "owner": f.owner_name if owners else None,
        })  # fmt: skip
    active = sorted(rows.running, key=lambda c: (c.deadline is None, c.deadline or c.started_at))
    # The geometries as they are (from the file, the records or the generated plan): only
    # serialised, so not copied per frontage as ``frontage_features`` does for the map.
    generated = [f for f in rows.frontages if f.id not in geometry_file and f.id not in stored]
    plan = generated_rings(generated) if generated else {}
    shapes = []
    for f in rows.frontages:
        geometry = geometry_file.get(f.id) or stored.get(f.id)
        if geometry is None:
            geometry = {"type": "Polygon", "coordinates": [plan[f.id]]}
        shapes.append({"id": f.id, "category": categories[f.id], "geometry": geometry})
    storage = storage_view(context)
    return {
        "village": profile.village.name,
        "zone": profile.village.timezone,
        "now": now.isoformat(),
        "categories": {k: {"label": v[0], "color": v[1]} for k, v in CATEGORIES.items()},
        "counts": counts,
        "frontages": frontages,
        "clocks": [clock_row(c, addresses.get(c.frontage_id), in_force) for c in active],
        "alerts": [
            {
                "id": a.id,
                "action": a.action,
                "subject": a.subject,
                "what": alert_words(a.action),
                "about": alert_about(a.subject, a.detail, addresses),
                "actor": a.actor,
                "at": iso(a.recorded_at),
            }
            for a in rows.alerts
        ],
        "storage": storage.model_dump() if storage else None,
        "shapes": shapes,
        "streets": generated_streets(generated) if generated else [],
    }


@router.get(
    "/overview/page", tags=["pages"], response_class=Response,
    responses={200: {"model": OverviewPage, "content": {"application/json": {}}}},
)  # fmt: skip
def overview_page(
    *,
    user: Reader,
    cases: Cases,
    profile: VillageProfile,
    now: Now,
    context: Context,
    geometry_file: GeometryFile,
) -> Response:
    """The Overview page's frontages, running clocks, alerts and map in one response."""
    data = overview_page_data(
        user.may("owner_details"),
        cases=cases,
        profile=profile,
        now=now,
        context=context,
        geometry_file=geometry_file,
    )
    # pydantic-core's encoder: the standard library's took a fifth of the request.
    return Response(to_json(data), media_type="application/json")


@router.get("/frontages", tags=["records"], response_model_exclude_unset=True)
def frontages(user: Reader, cases: Cases) -> list[FrontageView]:
    owners = user.may("owner_details")
    rows = cases.pages.frontages(case_kind=ENFORCEMENT, owners=owners)
    states = deciding_clocks(rows.deciding)
    return [frontage_view(f, states.get(f.id), owners) for f in rows.frontages]


class Words(BaseModel):
    """The clerk's words for what the pages' scripts get as stored names."""

    kinds: dict[str, str] = Field(description="a clock's kind → its name")
    states: dict[str, dict[str, str]] = Field(description="kind → state → words")


@router.get("/words", tags=["pages"])
def words(user: Reader) -> Words:
    """The words the pages show for clock kinds and states (the same for every village)."""
    return Words(kinds=CLOCK_KINDS, states=STATE_WORDS)
