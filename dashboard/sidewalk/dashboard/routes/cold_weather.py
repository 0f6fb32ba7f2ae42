"""The cold-weather page: frozen-ground and sump windows, subgrade per pole, pour rules."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from sidewalk.alerts.letterhead import cited
from sidewalk.analytics.clocks.cold_weather import subgrade_frozen, sump_discharge_window
from sidewalk.analytics.clocks.permits import in_frozen_ground_window
from sidewalk.core.contract import WeatherReading
from sidewalk.dashboard.routes.deps import Cases, Now, Reader, TimeSeries, VillageProfile
from sidewalk.dashboard.routes.views import ClockView, clock_view

router = APIRouter()

# The clocks this page shows.
COLD_WEATHER_CLOCKS = frozenset({"keep_off", "frozen_subgrade", "opening_permit"})


class FrozenGroundWindow(BaseModel):
    """The yearly window when street openings wait for thawed ground."""

    active: bool = Field(description="today is in the window")
    start: str = Field(description='"MM-DD"')
    end: str = Field(description='"MM-DD", included')
    citation: str | None
    unconfirmed: bool


class SumpDischargeWindow(BaseModel):
    active: bool
    citation: str | None
    unconfirmed: bool


class PourRules(BaseModel):
    """Concrete may be poured only above these temperatures (values as in the profile)."""

    min_temp_f: str
    window: str
    frozen_subgrade_at_or_below: str
    frozen_subgrade_unconfirmed: bool
    citation: str | None


class SubgradeReading(BaseModel):
    """A pole's newest ground-temperature reading and whether the subgrade is frozen."""

    device: str
    ts: int = Field(description="event time, ms since the epoch")
    ground_temp_c: float
    probe_depth_mm: int | None
    frozen: bool


class ColdWeather(BaseModel):
    today: str = Field(description="the village's local date")
    frozen_ground_window: FrozenGroundWindow
    sump_discharge_window: SumpDischargeWindow
    pour_rules: PourRules
    subgrade: list[SubgradeReading]
    clocks: list[ClockView]


@router.get("/cold-weather", tags=["cold weather"])
def cold_weather(
    user: Reader, cases: Cases, ts: TimeSeries, profile: VillageProfile, now: Now
) -> ColdWeather:
    """Frozen-ground and sump windows today, subgrade per pole, cold-weather clocks."""
    today = now.astimezone(profile.zone).date()
    sump = sump_discharge_window(today, profile)
    frozen_rule = profile.street_openings.frozen_ground_window
    subgrade = []
    if ts is not None:
        for d in cases.registry.list_devices():
            rows = [
                w for w in ts.readings(
                    device=d.id, stream="weather", end_ms=int(now.timestamp() * 1000) + 1
                )
                if isinstance(w, WeatherReading) and w.ground_temp_c is not None
            ]  # fmt: skip
            if rows:
                last = rows[-1]
                temp = float(last.ground_temp_c or 0.0)
                subgrade.append(
                    SubgradeReading(
                        device=d.id, ts=last.ts, ground_temp_c=temp,
                        probe_depth_mm=last.ground_probe_depth_mm,
                        frozen=subgrade_frozen(temp, profile),
                    )
                )  # fmt: skip
    addresses = {f.id: f.street_address for f in cases.registry.list_frontages()}
    clocks = [c for c in cases.clocks.list() if c.kind in COLD_WEATHER_CLOCKS]
    in_force = cases.confirmations.in_force()
    cw = profile.cold_weather
    return ColdWeather(
        today=today.isoformat(),
        frozen_ground_window=FrozenGroundWindow(
            active=in_frozen_ground_window(today, profile),
            start=frozen_rule.start, end=frozen_rule.end,
            citation=cited(frozen_rule.citation), unconfirmed=frozen_rule.unconfirmed,
        ),
        sump_discharge_window=SumpDischargeWindow(
            active=sump.active, citation=cited(sump.citation), unconfirmed=sump.unconfirmed,
        ),
        pour_rules=PourRules(
            min_temp_f=str(cw.pour_min_temp.value),
            window=str(cw.pour_forecast_window.value),
            frozen_subgrade_at_or_below=str(cw.frozen_subgrade_at_or_below.value),
            frozen_subgrade_unconfirmed=cw.frozen_subgrade_at_or_below.unconfirmed,
            citation=cited(cw.pour_min_temp.citation),
        ),
        subgrade=subgrade,
        clocks=[clock_view(c, addresses, in_force) for c in clocks],
    )  # fmt: skip
