"""Commissioning a pole (admin only): register it, assign frontages, calibrate, send.

The calibration view: the person clicks the walk's four corners for one
frontage on the pole's newest frame, in this order: where the frontage
starts on the street side of the walk, where it ends on the street side,
where it ends on the house side, where it starts on the house side. With the
walk's length and width those four points fix the image-to-ground homography
(``sidewalk.edge.camera.geometry.homography_from_points``, millimetres in the
frontage frame: x along the frontage, y across the walk from its street
edge), computed here and stored with the clicked region (``set_camera``).
"Send to pole" publishes every camera of the pole as one ``set_calibration``
command with a transaction id and reports the pole's reply in words; the
pole's health report then carries the hash of what it runs, which
``PoleView.calibration`` compares with the registry's.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, Field

from sidewalk.core.contract import SLUG, FrameRef, SnowMeasurement
from sidewalk.core.units import MM_PER_FOOT
from sidewalk.dashboard.auth import User, require
from sidewalk.dashboard.poles import CALIBRATION_COMMAND, PoleLink, calibration_command
from sidewalk.dashboard.routes.deps import Cases, Evidence, Now, RequestBody, TimeSeries, iso
from sidewalk.storage.cases import CaseStore, NotFoundError, RegistryError
from sidewalk.storage.cases.records import FrontageRecord
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

router = APIRouter()

# Commissioning changes what the clocks measure: the admin role only.
Admin = Annotated[User, Depends(require("users"))]

CalibrationState = Literal["matches", "differs", "not_reported", "not_calibrated"]
CALIBRATION_WORDS: dict[CalibrationState, str] = {
    "matches": "calibration matches",
    "differs": "pole runs a different calibration — send again",
    "not_reported": "pole has not reported its calibration yet — send it",
    "not_calibrated": "not calibrated",
}
Point = tuple[float, float]
# The frames considered for "the pole's latest picture".
FRAME_WINDOW = timedelta(days=60)
SNOW_FRAME_WINDOW = timedelta(days=2)


def pole_link(request: Request) -> PoleLink | None:
    """The wiring's link to the broker (``app.state.poles``); None: not configured."""
    link: PoleLink | None = getattr(request.app.state, "poles", None)
    return link


Link = Annotated[PoleLink | None, Depends(pole_link)]


class FrontageChoice(BaseModel):
    """A frontage as the person picks it: by address."""

    id: str
    address: str
    pole: str | None
    length_ft: float
    walk_width_ft: float | None
    calibrated: bool


class CameraView(BaseModel):
    """One frontage's calibrated view on this pole."""

    frontage: str
    address: str
    region: list[Point] = Field(description="the clicked corners, image pixels")
    calibrated_at: str
    calibrated_by: str


class PoleView(BaseModel):
    """A pole as the Poles page shows it."""

    id: str
    label: str | None
    latitude: float | None
    longitude: float | None
    last_heard: str | None
    frontages: list[FrontageChoice]
    cameras: list[CameraView]
    calibration: CalibrationState
    calibration_words: str
    calibration_reported_at: str | None = Field(
        description="when the pole last said which calibration it runs"
    )
    frame_url: str | None = Field(description="the pole's newest picture, if any is stored")
    frame_at_ms: int | None


class PoleIn(RequestBody):
    """Register a pole (or change its label and location)."""

    device_id: Annotated[str, Field(pattern=SLUG, description="the id the pole is set up with")]
    label: Annotated[str, Field(min_length=1, max_length=80)]
    latitude: Annotated[float, Field(ge=-90, le=90)] | None = None
    longitude: Annotated[float, Field(ge=-180, le=180)] | None = None
    site: Annotated[str, Field(pattern=SLUG)] | None = None


class AssignIn(RequestBody):
    """The frontages this pole watches (added to those it already watches)."""

    frontages: Annotated[list[str], Field(min_length=1, max_length=32)]


class CornersIn(RequestBody):
    """The four clicked corners of one frontage's walk and the walk's size."""

    frontage: str
    corners: Annotated[list[Point], Field(min_length=4, max_length=4)]
    length_ft: Annotated[float, Field(gt=0, le=650)]
    walk_width_ft: Annotated[float, Field(gt=0, le=30)]


class FitView(BaseModel):
    """The fitted mapping, drawn back onto the picture to check it."""

    frontage: str
    homography: list[list[float]] = Field(description="image pixels → ground millimetres")
    outline: list[list[Point]] = Field(
        description="the walk's edges and a line across every 5 ft, in image pixels"
    )


class CommandIn(RequestBody):
    """What to send to the pole."""

    command: Literal["send_calibration", "capture_now"]


class CommandView(BaseModel):
    """The pole's answer in words, with the command's transaction id."""

    outcome: Literal["ok", "error", "no_answer", "not_connected"]
    transaction: str | None
    message: str
    # The pole's calibration as it stands after the answer (the page's tag shows it
    # without a reload): what a reply says the pole runs is recorded as its report.
    calibration: CalibrationState | None = None
    calibration_words: str | None = None
    calibration_reported_at: str | None = None


# -- the pure parts --------------------------------------------------------------


def calibration_state(expected: str | None, reported: str | None) -> CalibrationState:
    """Compare what the registry holds with what the pole says it runs."""
    if expected is None:
        return "not_calibrated"
    if reported is None:
        return "not_reported"
    return "matches" if reported == expected else "differs"


def _convex(corners: Sequence[Point]) -> bool:
    """True when the four corners go round the walk without crossing over."""
    signs = []
    for i in range(4):
        (ax, ay), (bx, by), (cx, cy) = corners[i], corners[(i + 1) % 4], corners[(i + 2) % 4]
        signs.append((bx - ax) * (cy - by) - (by - ay) * (cx - bx))
    return all(s > 0 for s in signs) or all(s < 0 for s in signs)


def fit_corners(
    corners: Sequence[Point], length_ft: float, walk_width_ft: float
) -> tuple[list[list[float]], list[list[Point]]]:
    """Homography (image px → ground mm) from the four corners, and its outline.

    Raises ``ValueError`` (said for people) for corners that cannot be a walk.
    """
    import numpy as np

    from sidewalk.edge.camera.geometry import homography_from_points, project

    if not all(math.isfinite(v) and v >= 0 for p in corners for v in p):
        raise ValueError("corners: each corner must be a point on the picture")
    if not _convex(corners):
        raise ValueError(
            "corners: the four corners cross over or lie on a line; click them in order"
            " around the walk"
        )
    length, width = length_ft * MM_PER_FOOT, walk_width_ft * MM_PER_FOOT
    ground = np.array([[0.0, 0.0], [length, 0.0], [length, width], [0.0, width]], np.float64)
    h = homography_from_points(np.array(corners, np.float64), ground)
    back = np.asarray(np.linalg.inv(h), np.float64)
    lines = [
        [(0.0, 0.0), (length, 0.0)],
        [(0.0, width), (length, width)],
        [(0.0, width / 2), (length, width / 2)],
    ]
    step = 5 * MM_PER_FOOT
    lines += [[(x, 0.0), (x, width)] for x in np.append(np.arange(0.0, length, step), length)]
    outline = [
        [
            (round(float(u), 1), round(float(v), 1))
            for u, v in project(back, np.array(line, np.float64))
        ]
        for line in lines
    ]
    return [[float(v) for v in row] for row in h.tolist()], outline


def latest_frame(
    ts: SqliteTimeSeriesStore | None, evidence: EvidenceStore | None, device: str, now: datetime
) -> tuple[str, int] | None:
    """The newest stored picture of ``device``: (sha256, event time ms), or None."""
    if ts is None or evidence is None:
        return None
    now_ms = int(now.timestamp() * 1000)
    found: list[tuple[int, str]] = []
    for r in ts.readings(
        device=device, stream="frame", start_ms=now_ms - int(FRAME_WINDOW.total_seconds() * 1000)
    ):
        if isinstance(r, FrameRef):
            found.append((r.ts, r.sha256))
    # A measurement also names its frame (the demo's and older ingests' only trace).
    for r in ts.readings(
        device=device,
        stream="snow",
        start_ms=now_ms - int(SNOW_FRAME_WINDOW.total_seconds() * 1000),
    ):
        if isinstance(r, SnowMeasurement) and r.frame_sha256:
            found.append((r.ts, r.frame_sha256))
    for at, sha in sorted(found, reverse=True):
        if sha in evidence:
            return sha, at
    return None


# -- routes --------------------------------------------------------------------


def _pole_view(
    cases: CaseStore,
    device_id: str,
    ts: SqliteTimeSeriesStore | None,
    evidence: EvidenceStore | None,
    now: datetime,
) -> PoleView:
    registry = cases.registry
    d = registry.get_device(device_id)
    watched = registry.list_frontages(device_id=device_id)
    cameras = registry.cameras(device_id=device_id)
    calibrated = {c.frontage_id for c in cameras}
    address = {f.id: f.street_address for f in watched}
    state = calibration_state(registry.expected_calibration(device_id), d.reported_calibration)
    frame = latest_frame(ts, evidence, device_id, now)
    return PoleView(
        id=d.id, label=d.label, latitude=d.latitude, longitude=d.longitude,
        last_heard=iso(d.last_seen),
        frontages=[_choice(f, f.id in calibrated) for f in watched],
        cameras=[
            CameraView(
                frontage=c.frontage_id, address=address.get(c.frontage_id, c.frontage_id),
                region=list(c.region), calibrated_at=iso(c.calibrated_at) or "",
                calibrated_by=c.calibrated_by,
            )
            for c in cameras
        ],
        calibration=state, calibration_words=CALIBRATION_WORDS[state],
        calibration_reported_at=iso(d.reported_calibration_at),
        frame_url=f"/api/frames/{frame[0]}" if frame else None,
        frame_at_ms=frame[1] if frame else None,
    )  # fmt: skip


def _choice(f: FrontageRecord, calibrated: bool) -> FrontageChoice:
    return FrontageChoice(
        id=f.id, address=f.street_address, pole=f.device_id, length_ft=f.length_ft,
        walk_width_ft=f.walk_width_ft, calibrated=calibrated,
    )  # fmt: skip


def _known_pole(cases: CaseStore, device: str) -> None:
    try:
        cases.registry.get_device(device)
    except NotFoundError:
        raise HTTPException(404, f"no pole {device!r} is registered") from None


@router.get("/registry/poles", tags=["registry"])
def poles(
    user: Admin, cases: Cases, ts: TimeSeries, evidence: Evidence, now: Now
) -> list[PoleView]:
    """Every registered pole: last heard, frontages, cameras, calibration, newest frame."""
    return [_pole_view(cases, d.id, ts, evidence, now) for d in cases.registry.list_devices()]


class KnockingPole(BaseModel):
    """A pole sending to the broker that the registry does not hold."""

    device_id: str = Field(description="the id it sends as (register it under this id)")
    messages: int = Field(description="its messages refused in the last day")
    last_at: str = Field(description="when the last one arrived (ISO 8601)")


# How far back a refused pole is still shown as knocking.
KNOCKING_WINDOW = timedelta(days=1)


@router.get("/registry/knocking", tags=["registry"])
def knocking(user: Admin, cases: Cases, ts: TimeSeries, now: Now) -> list[KnockingPole]:
    """Poles whose messages ingest refused in the last day because none is registered
    under their id: on the Poles page, each with Register."""
    if ts is None:
        return []
    since = int((now - KNOCKING_WINDOW).timestamp() * 1000)
    registered = {d.id for d in cases.registry.list_devices()}
    return [
        KnockingPole(
            device_id=device,
            messages=n,
            last_at=datetime.fromtimestamp(last / 1000, UTC).isoformat(),
        )
        for device, n, last in ts.unknown_senders(since)
        if device not in registered
    ]


def address_order(address: str) -> tuple[str, int, str]:
    """Street, then house number as a number: 9 Main St before 10 Main St, and every
    Main St together, as a person looks one up."""
    number, _, street = address.partition(" ")
    digits = "".join(itertools.takewhile(str.isdigit, number))
    if not digits or not street:
        return address.casefold(), 0, ""
    return street.casefold(), int(digits), number[len(digits) :].casefold()


@router.get("/registry/frontages", tags=["registry"])
def frontages(user: Admin, cases: Cases) -> list[FrontageChoice]:
    """Every frontage in service, by street and house number, with the pole that watches it."""
    calibrated = {c.frontage_id for c in cases.registry.cameras()}
    rows = sorted(cases.registry.list_frontages(), key=lambda f: address_order(f.street_address))
    return [_choice(f, f.id in calibrated) for f in rows]


@router.post("/registry/poles", tags=["registry"])
def register_pole(
    *,
    body: PoleIn, user: Admin, cases: Cases, link: Link, ts: TimeSeries, evidence: Evidence,
    now: Now,
) -> PoleView:  # fmt: skip
    """Register a pole, or change its label and location."""
    if (body.latitude is None) != (body.longitude is None):
        raise HTTPException(422, "location: give both latitude and longitude, or neither")
    site = body.site or (link.site if link is not None else None)
    if site is None:
        sites = {d.site for d in cases.registry.list_devices()}
        sites |= {f.site for f in cases.registry.list_frontages()}
        if len(sites) != 1:
            raise HTTPException(422, "site: say which site the pole belongs to")
        site = sites.pop()
    try:
        cases.registry.upsert_device(
            body.device_id, site, label=body.label, latitude=body.latitude,
            longitude=body.longitude, who=user.username,
        )  # fmt: skip
    except RegistryError as exc:
        raise HTTPException(422, str(exc)) from None
    return _pole_view(cases, body.device_id, ts, evidence, now)


@router.put("/registry/poles/{device}/frontages", tags=["registry"])
def assign(
    *,
    device: str, body: AssignIn, user: Admin, cases: Cases, ts: TimeSeries,
    evidence: Evidence, now: Now,
) -> PoleView:  # fmt: skip
    """Make this pole the one that watches these frontages (from now)."""
    _known_pole(cases, device)
    try:
        cases.registry.assign_pole(device, body.frontages, at=now, who=user.username)
    except NotFoundError as exc:
        raise HTTPException(422, f"frontages: {exc}") from None
    except RegistryError as exc:
        raise HTTPException(422, str(exc)) from None
    return _pole_view(cases, device, ts, evidence, now)


def _fit(cases: CaseStore, device: str, body: CornersIn) -> FitView:
    _known_pole(cases, device)
    watched = {f.id for f in cases.registry.list_frontages(device_id=device)}
    if body.frontage not in watched:
        raise HTTPException(422, "frontage: this pole does not watch that frontage; assign it")
    try:
        h, outline = fit_corners(body.corners, body.length_ft, body.walk_width_ft)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    return FitView(frontage=body.frontage, homography=h, outline=outline)


@router.post("/registry/poles/{device}/cameras/preview", tags=["registry"])
def preview(device: str, body: CornersIn, user: Admin, cases: Cases) -> FitView:
    """The mapping the corners give, drawn back on the picture; nothing is saved."""
    return _fit(cases, device, body)


@router.put("/registry/poles/{device}/cameras", tags=["registry"])
def save_camera(*, device: str, body: CornersIn, user: Admin, cases: Cases, now: Now) -> FitView:
    """Save the frontage's region and homography in the registry (not yet sent to the pole),
    and the walk's length and width the person measured, when they differ from the record."""
    fit = _fit(cases, device, body)
    try:
        cases.registry.set_camera(
            device, body.frontage, region=body.corners, homography=fit.homography,
            calibrated_at=now, who=user.username,
        )  # fmt: skip
        _record_size(cases, body, user.username)
    except RegistryError as exc:
        raise HTTPException(422, str(exc)) from None
    return fit


def _record_size(cases: CaseStore, body: CornersIn, who: str) -> None:
    """Write the calibrator's walk length and width back to the frontage's record."""
    f = cases.registry.get_frontage(body.frontage)
    if (f.length_ft, f.walk_width_ft) == (body.length_ft, body.walk_width_ft):
        return
    cases.registry.upsert_frontage(
        f.id, site=f.site, parcel_number=f.parcel_number, street_address=f.street_address,
        # Ignored: the record's ``zone`` is a ``str``; the store takes the ``Zone`` literal.
        length_ft=body.length_ft, zone=f.zone,  # type: ignore[arg-type]
        owner_id=f.owner_id, device_id=f.device_id,
        may_deposit_on_street=f.may_deposit_on_street, parcel_id=f.parcel_id, street=f.street,
        side=f.side, walk_width_ft=body.walk_width_ft, corner=f.corner, who=who,
    )  # fmt: skip
    cases.audit.append(
        who, "frontage.measured", f"frontage:{f.id}",
        {"length_ft": [f.length_ft, body.length_ft],
         "walk_width_ft": [f.walk_width_ft, body.walk_width_ft], "by": "pole calibration"},
    )  # fmt: skip


@router.post("/registry/poles/{device}/commands", tags=["registry"])
def send_command(
    *, device: str, body: CommandIn, user: Admin, cases: Cases, link: Link, now: Now
) -> CommandView:
    """Send the registry's calibration (or a request for a fresh picture) and wait for the
    reply. The calibration a reply says the pole runs is recorded as the pole's report (as
    its next health report would), and the answer carries the pole's calibration state."""
    _known_pole(cases, device)
    if link is None:
        return CommandView(
            outcome="not_connected", transaction=None,
            message="This dashboard has no connection to the poles' message broker; nothing"
            " was sent.",
        )  # fmt: skip
    if body.command == "capture_now":
        sent = link.send(device, "capture_now", {})
        message = sent.message
        if sent.outcome == "ok":
            message = "The pole took a picture; it shows here once it has arrived (reload)."
    else:
        cameras = cases.registry.cameras(device_id=device)
        if not cameras:
            raise HTTPException(422, "calibration: save at least one frontage's corners first")
        expected = cases.registry.expected_calibration(device)
        sent = link.send(device, CALIBRATION_COMMAND, {"cameras": calibration_command(cameras)})
        message = sent.message
        runs = sent.data.get("calibration")
        if isinstance(runs, str) and re.fullmatch(r"[0-9a-f]{64}", runs):
            cases.registry.record_reported_calibration(device, runs, now)
        if sent.outcome == "ok":
            message = (
                "The pole took the calibration and runs it now."
                if runs == expected
                else "The pole answered but runs a different calibration; send again."
            )
    cases.audit.append(
        user.username, f"pole.{body.command}", f"registry:pole:{device}",
        {"transaction": sent.transaction, "outcome": sent.outcome},
    )  # fmt: skip
    d = cases.registry.get_device(device)
    state = calibration_state(cases.registry.expected_calibration(device), d.reported_calibration)
    return CommandView(
        outcome=sent.outcome, transaction=sent.transaction, message=message,
        calibration=state, calibration_words=CALIBRATION_WORDS[state],
        calibration_reported_at=iso(d.reported_calibration_at),
    )  # fmt: skip
