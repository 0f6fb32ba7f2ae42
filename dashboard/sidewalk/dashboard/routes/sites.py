"""The site page: one pole's weather and camera series, and the evidence frames."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, HTTPException, Query, Response
from pydantic import BaseModel, Field

from sidewalk.alerts.wording import feet_short
from sidewalk.core.contract import SnowMeasurement, WeatherReading
from sidewalk.dashboard.routes.deps import (
    Cases,
    Evidence,
    Now,
    Reader,
    TimeSeries,
    VillageProfile,
)

router = APIRouter()


class WeatherSeries(BaseModel):
    """Parallel arrays, one entry per weather reading (null: not measured)."""

    ts: list[int] = Field(description="event time, ms since the epoch")
    snow_depth_mm: list[float | None]
    air_temp_c: list[float | None]
    surface_temp_c: list[float | None]
    ground_temp_c: list[float | None]


class WidthSeries(BaseModel):
    """One frontage's measured clear width over time."""

    ts: list[int]
    mm: list[float]


class LatestMeasurement(BaseModel):
    """A frontage's newest camera measurement, with its frame when the store has it."""

    ts: int
    cleared_width_mm: float
    cleared_width_text: str = Field(
        description="the width as a letter states it: to the 1/4 in, with the camera's uncertainty"
    )
    snow_cover_fraction: float
    ice_suspected: bool
    frame_sha256: str | None
    frame_url: str | None


class SiteSeries(BaseModel):
    """Weather and camera series for one pole over a window of event time."""

    device: str
    start: str
    end: str
    required_width_mm: float = Field(description="the clear width the ordinance requires")
    weather: WeatherSeries
    cleared_width: dict[str, WidthSeries] = Field(description="by frontage")
    latest: dict[str, LatestMeasurement] = Field(description="by frontage")
    addresses: dict[str, str] = Field(
        default_factory=dict, description="each frontage's street address, for the labels"
    )


class JpegResponse(Response):
    media_type = "image/jpeg"


@router.get("/sites/{device}/series", tags=["site"])
def series(
    *,
    device: str,
    user: Reader,
    ts: TimeSeries,
    evidence: Evidence,
    profile: VillageProfile,
    now: Now,
    cases: Cases,
    hours: float = Query(72, gt=0, le=24 * 60),
) -> SiteSeries:
    """Weather and camera series for one pole over the last ``hours`` of event time."""
    if ts is None:
        raise HTTPException(404, "no time-series store configured")
    end = now
    start = end - timedelta(hours=hours)
    start_ms, end_ms = int(start.timestamp() * 1000), int(end.timestamp() * 1000) + 1
    weather = [
        w
        for w in ts.readings(device=device, stream="weather", start_ms=start_ms, end_ms=end_ms)
        if isinstance(w, WeatherReading)
    ]
    snow = [
        s
        for s in ts.readings(device=device, stream="snow", start_ms=start_ms, end_ms=end_ms)
        if isinstance(s, SnowMeasurement)
    ]
    need = profile.snow_and_ice.clearing_min_width.length_mm
    tolerance = profile.snow_and_ice.width_tolerance.length_mm
    latest: dict[str, SnowMeasurement] = {}
    for s in snow:
        latest[s.frontage] = s
    return SiteSeries(
        device=device,
        start=start.isoformat(),
        end=end.isoformat(),
        required_width_mm=float(profile.snow_and_ice.clearing_min_width.length_mm),
        weather=WeatherSeries(
            ts=[w.ts for w in weather],
            snow_depth_mm=[w.snow_depth_mm for w in weather],
            air_temp_c=[w.air_temp_c for w in weather],
            surface_temp_c=[w.surface_temp_c for w in weather],
            ground_temp_c=[w.ground_temp_c for w in weather],
        ),
        cleared_width={
            f: WidthSeries(ts=[s.ts for s in snow if s.frontage == f],
                           mm=[s.cleared_width_mm for s in snow if s.frontage == f])
            for f in sorted(latest)
        },
        latest={
            f: LatestMeasurement(
                ts=s.ts, cleared_width_mm=s.cleared_width_mm,
                cleared_width_text=feet_short(s.cleared_width_mm, tolerance, short_of_mm=need),
                snow_cover_fraction=s.snow_cover_fraction, ice_suspected=s.ice_suspected,
                frame_sha256=s.frame_sha256,
                frame_url=(f"/api/frames/{s.frame_sha256}"
                           if s.frame_sha256 and evidence is not None
                           and s.frame_sha256 in evidence else None),
            )
            for f, s in latest.items()
        },
        addresses={f.id: f.street_address for f in cases.registry.list_frontages()
                   if f.id in latest},
    )  # fmt: skip


@router.get(
    "/frames/{sha256}",
    tags=["site"],
    response_class=JpegResponse,
    responses={200: {"content": {"image/jpeg": {}}, "description": "the JPEG"}},
)
def frame(sha256: str, user: Reader, evidence: Evidence) -> Response:
    """An evidence JPEG by its sha256 (immutable, so cacheable for good)."""
    if evidence is None or sha256 not in evidence:
        raise HTTPException(404, "no such frame")
    return JpegResponse(
        evidence.get(sha256),
        headers={"Cache-Control": "private, max-age=31536000, immutable"},
    )
