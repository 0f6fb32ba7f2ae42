"""Replayable storms: a TOML description expanded into a pole's readings.

A scenario names its frontages (with made-up owners), its snowfalls and the
owners' clearing actions, and what notices it should produce. ``expand``
turns it into the readings one pole would publish: weather every few minutes
(ultrasonic depth with bounded noise, a 0.2-mm tipping bucket, air
temperature) and a camera measurement per frontage. Expansion is
deterministic (seeded), so a replay and a run through the broker see the same
readings.
"""

from __future__ import annotations

import random
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sidewalk.core.clock import to_ms
from sidewalk.core.contract import SLUG, AnyReading, SnowMeasurement, WeatherReading
from sidewalk.core.units import MM_PER_FOOT
from sidewalk.edge.simulated import ScenarioReading

TIP_MM = 0.2  # one tip of a standard tipping-bucket gauge
COVER_AFTER = timedelta(minutes=15)  # new snow hides a cleared path this soon after it starts


class ScenarioError(ValueError):
    """A scenario file that cannot be played; names the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScenarioHeader(_Strict):
    name: str
    description: str = ""
    site: Annotated[str, Field(pattern=SLUG)]
    device: Annotated[str, Field(pattern=SLUG)]
    start: datetime
    end: datetime
    weather_interval_minutes: Annotated[int, Field(ge=1, le=60)] = 5
    camera_interval_minutes: Annotated[int, Field(ge=1, le=240)] = 15
    air_temp_c: float = -4.0
    depth_noise_mm: Annotated[float, Field(ge=0, le=50)] = 2.0
    seed: int = 0


class ScenarioFrontage(_Strict):
    id: Annotated[str, Field(pattern=SLUG)]
    address: str
    parcel: str
    length_ft: Annotated[float, Field(gt=0)]
    walk_width_ft: Annotated[float, Field(gt=0)]
    owner: str
    mailing_address: list[str] = Field(min_length=1)


class Snowfall(_Strict):
    start: datetime
    end: datetime
    rate_mm_per_hour: Annotated[float, Field(gt=0, le=200)]
    precip_mm_per_hour: Annotated[float, Field(ge=0, le=50)] = 0.0

    @model_validator(mode="after")
    def _ordered(self) -> Snowfall:
        if self.end <= self.start:
            raise ValueError("a snowfall must end after it starts")
        return self


class Clearing(_Strict):
    frontage: str
    at: datetime
    cleared_width_ft: Annotated[float, Field(ge=0)]


class Surface(_Strict):
    """What the camera sees on a frontage's walk from ``at`` on (§ 370-10 A's ice).

    Every camera measurement of ``frontage`` from ``at`` until the next entry for
    it carries ``surface_state`` and, when given, the pavement's ``surface_temp_c``.
    """

    frontage: str
    at: datetime
    state: Literal["dry", "wet", "ice", "treated"]
    surface_temp_c: Annotated[float, Field(ge=-60, le=80)] | None = None


class Expectation(_Strict):
    frontage: str
    notice: Literal["clearing_violation"]
    deadline: datetime


_F = TypeVar("_F", Clearing, Surface, Expectation)


class Scenario(_Strict):
    scenario: ScenarioHeader
    frontage: list[ScenarioFrontage] = Field(min_length=1)
    snowfall: list[Snowfall] = []
    clearing: list[Clearing] = []
    surface: list[Surface] = []
    expect: list[Expectation] = []

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        for name, value in (
            ("scenario.start", self.scenario.start),
            ("scenario.end", self.scenario.end),
        ):
            if value.tzinfo is None:
                raise ValueError(f"{name} needs a UTC offset")
        ids = {f.id for f in self.frontage}
        for c in self.clearing:
            if c.frontage not in ids:
                raise ValueError(f"clearing names unknown frontage {c.frontage!r}")
        for f in self.surface:
            if f.frontage not in ids:
                raise ValueError(f"surface names unknown frontage {f.frontage!r}")
        return self

    def renamed(self, ids: Mapping[str, str]) -> Scenario:
        """The same story with frontage ids replaced (``{old: new}``): the registry's ids
        once the street came in through the county's parcel file (the demo)."""

        def moved(items: list[_F]) -> list[_F]:
            return [i.model_copy(update={"frontage": ids.get(i.frontage, i.frontage)})
                    for i in items]  # fmt: skip

        frontages = [f.model_copy(update={"id": ids.get(f.id, f.id)}) for f in self.frontage]
        return self.model_copy(
            update={
                "frontage": frontages,
                "clearing": moved(self.clearing),
                "surface": moved(self.surface),
                "expect": moved(self.expect),
            }
        )


@dataclass(frozen=True, slots=True)
class PoleFrontage:
    """A frontage a registered pole watches, as the registry holds it."""

    id: str
    address: str
    length_ft: float
    walk_width_ft: float | None = None


def on_pole(
    story: Scenario, device: str, frontages: Sequence[PoleFrontage], ending: datetime
) -> Scenario:
    """The story played by the village's own pole on its own frontages, ending at ``ending``.

    ``sidewalk edge simulate --device``: the pole's id, the registry's frontage ids and
    addresses, every time moved so the story's end is ``ending`` (readings stamped in
    the present, which ingest accepts, instead of the story's own dates). The k-th
    frontage plays the story's (k mod n)-th frontage's clearing, so a pole watching
    more frontages than the story has repeats its scripts."""
    if not frontages:
        raise ScenarioError("the pole watches no frontage: nothing to play")
    shift = ending - story.scenario.end
    scripted = story.frontage

    def script(k: int) -> ScenarioFrontage:
        return scripted[k % len(scripted)]

    new_frontages = [
        script(k).model_copy(update={
            "id": f.id, "address": f.address, "parcel": f.id, "length_ft": f.length_ft,
            "walk_width_ft": f.walk_width_ft or script(k).walk_width_ft,
        })
        for k, f in enumerate(frontages)
    ]  # fmt: skip
    clearing = [
        c.model_copy(update={"frontage": f.id, "at": c.at + shift})
        for k, f in enumerate(frontages)
        for c in story.clearing
        if c.frontage == script(k).id
    ]
    surface = [
        c.model_copy(update={"frontage": f.id, "at": c.at + shift})
        for k, f in enumerate(frontages)
        for c in story.surface
        if c.frontage == script(k).id
    ]
    head = story.scenario.model_copy(update={
        "device": device, "start": story.scenario.start + shift, "end": ending,
    })  # fmt: skip
    snowfall = [
        s.model_copy(update={"start": s.start + shift, "end": s.end + shift})
        for s in story.snowfall
    ]
    return story.model_copy(update={
        "scenario": head, "frontage": new_frontages, "snowfall": snowfall,
        "clearing": clearing, "surface": surface, "expect": [],
    })  # fmt: skip


def bundled_parcels(name: str) -> Path | None:
    """The county-format parcel file a bundled scenario's street comes in through
    (``<name>-parcels.geojson``), if it has one."""
    found = resources.files("sidewalk.scenarios").joinpath(f"{name}-parcels.geojson")
    return Path(str(found)) if found.is_file() else None


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load a bundled scenario by name (``first-storm``) or a TOML file by path."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        text, source = path.read_text("utf-8"), str(path)
    else:
        bundled = resources.files("sidewalk.scenarios").joinpath(f"{name_or_path}.toml")
        if not bundled.is_file():
            raise ScenarioError(f"no bundled scenario {name_or_path!r} and no such file")
        text, source = bundled.read_text("utf-8"), f"{name_or_path}.toml"
    try:
        return Scenario.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise ScenarioError(f"{source}: " + "; ".join(problems)) from None


def expand(scenario: Scenario) -> list[ScenarioReading]:
    """The readings the scenario's pole publishes, in event-time order."""
    head = scenario.scenario
    rng = random.Random(head.seed)
    out: list[ScenarioReading] = []
    step = timedelta(minutes=head.weather_interval_minutes)
    camera_step = timedelta(minutes=head.camera_interval_minutes)
    t = head.start
    gauge_mm = 0.0  # water in the bucket not yet tipped
    last = head.start
    next_camera = head.start
    while t <= head.end:
        depth = _depth_at(scenario, t)
        gauge_mm += _precip_between(scenario, last, t)
        tips = int(round(gauge_mm, 9) // TIP_MM)
        gauge_mm -= tips * TIP_MM
        noise = rng.uniform(-head.depth_noise_mm, head.depth_noise_mm)
        values: dict[str, Any] = {
            "snow_depth_mm": round(max(0.0, depth + noise), 1),
            "precip_mm": round(tips * TIP_MM, 1),
            "air_temp_c": head.air_temp_c,
        }
        out.append(ScenarioReading(to_ms(t), "weather", values))
        if t >= next_camera:
            for frontage in scenario.frontage:
                width_mm = _cleared_width_mm(scenario, frontage, t)
                walk_mm = frontage.walk_width_ft * MM_PER_FOOT
                snow = {
                    "frontage": frontage.id,
                    "cleared_width_mm": round(width_mm, 1),
                    "snow_cover_fraction": round(1 - min(width_mm, walk_mm) / walk_mm, 3),
                    **_surface_at(scenario, frontage.id, t),
                }
                out.append(ScenarioReading(to_ms(t), "snow", snow))
            next_camera = t + camera_step
        last = t
        t += step
    return out


def to_readings(scenario: Scenario, rows: list[ScenarioReading]) -> list[AnyReading]:
    """Contract readings with ``seq`` from 1, as a pole starting fresh would number them."""
    device = scenario.scenario.device
    readings: list[AnyReading] = []
    for seq, row in enumerate(rows, start=1):
        if row.stream == "weather":
            readings.append(WeatherReading(device=device, seq=seq, ts=row.ts_ms, **row.values))
        else:
            readings.append(SnowMeasurement(device=device, seq=seq, ts=row.ts_ms, **row.values))
    return readings


def _surface_at(scenario: Scenario, frontage: str, t: datetime) -> dict[str, Any]:
    """The camera's surface fields for ``frontage`` at ``t``: the latest entry at or before it."""
    latest = None
    for f in scenario.surface:
        if f.frontage == frontage and f.at <= t and (latest is None or f.at >= latest.at):
            latest = f
    if latest is None:
        return {}
    values: dict[str, Any] = {"surface_state": latest.state}
    if latest.surface_temp_c is not None:
        values["surface_temp_c"] = latest.surface_temp_c
    return values


def _overlap_hours(a0: datetime, a1: datetime, b0: datetime, b1: datetime) -> float:
    start, end = max(a0, b0), min(a1, b1)
    return max(0.0, (end - start).total_seconds() / 3600)


def _depth_at(scenario: Scenario, t: datetime) -> float:
    return sum(
        s.rate_mm_per_hour * _overlap_hours(s.start, s.end, s.start, t) for s in scenario.snowfall
    )


def _precip_between(scenario: Scenario, a: datetime, b: datetime) -> float:
    return sum(
        s.precip_mm_per_hour * _overlap_hours(s.start, s.end, a, b) for s in scenario.snowfall
    )


def _cleared_width_mm(scenario: Scenario, frontage: ScenarioFrontage, t: datetime) -> float:
    """Full width before any snow; covered once snow falls; then whatever the owner cleared last."""
    width = frontage.walk_width_ft * MM_PER_FOOT
    events: list[tuple[datetime, float]] = [(s.start + COVER_AFTER, 0.0) for s in scenario.snowfall]
    events += [
        (c.at, c.cleared_width_ft * MM_PER_FOOT)
        for c in scenario.clearing
        if c.frontage == frontage.id
    ]
    for at, value in sorted(events, key=lambda e: e[0]):
        if at <= t:
            width = value
    return width


def bundled_path(name: str) -> Path:
    """Filesystem path of a bundled scenario (for messages and docs)."""
    return Path(str(resources.files("sidewalk.scenarios").joinpath(f"{name}.toml")))
