"""Replay a real winter through the clock engine: snow events, deadlines and notices for a village.

``run_season`` loads the winter (hourly Minneapolis, or daily Milwaukee spread
over hours), simulates one pole per ``FRONTAGES_PER_POLE`` frontages (each pole
its own seeded sensor faults, ``sensors.simulate_pole``), simulates the owners
under the compliance model below, and feeds every reading to the same
``ClockEngine`` the live system runs. With ``profile_path`` the same readings
also go through a second engine under that profile (what-if), and the report
puts the two side by side.

Compliance model (seeded; ``OWNER_TYPES``), per frontage, drawn once:

* ``prompt`` (60 %): after each snowfall clears the full walk after a
  lognormal delay (median 3 h, σ = 0.9), except 5 % of storms it skips;
* ``late`` (20 %): clears the full walk 12-48 h (uniform) after the snow stops;
* ``narrow`` (12 %): clears promptly (median 4 h) but only a 2.0-3.5 ft path;
* ``never`` (8 %): never clears; only melt bares the walk.

Owners react to the true end of each storm that covered the walk (the
labelled storm), not to the detector. The walk is covered once ``COVER_MM`` of
new snow lies on it since it was last cleared, and bare again when the pack
melts below that. Walks are 5 ft wide (70 %) or 6 ft (30 %). The camera
measures each frontage hourly (cleared width ± 30 mm, never more than the walk).
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import (
    ClearingUnverified,
    ClearingViolation,
    Event,
    Transition,
)
from sidewalk.analytics.clocks.states import ClearingState
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import AnyReading, SnowMeasurement
from sidewalk.core.profile import Profile, load_profile
from sidewalk.core.units import MM_PER_FOOT
from sidewalk.scenarios.accuracy import (
    Storm,
    StormScore,
    detect_episodes,
    score,
    storms_from_hours,
    with_new_snow,
)
from sidewalk.scenarios.sensors import SimulatedStep, SimulatedStream, simulate_pole
from sidewalk.scenarios.weather import (
    CHICAGO,
    WeatherHour,
    daily_to_hours,
    load_milwaukee,
    load_minneapolis,
    winter_bounds,
)

if TYPE_CHECKING:
    from sidewalk.scenarios.station import StationWinter

FRONTAGES_PER_POLE = 10
COVER_MM = 5.0
MIN_STORM_SNOW_MM = 10.0
WALK_WIDTHS_FT = (5.0, 6.0)
WALK_WIDTH_WEIGHTS = (0.7, 0.3)
CAMERA_EVERY = timedelta(hours=1)
STREETS = (
    "main-st",
    "oak-st",
    "elm-st",
    "church-st",
    "mill-st",
    "park-ave",
    "water-st",
    "depot-st",
)
DECIDED = (ClearingState.COMPLIED, ClearingState.VIOLATION, ClearingState.UNVERIFIED)
OwnerKind = Literal["prompt", "late", "narrow", "never"]
OWNER_TYPES: tuple[tuple[OwnerKind, float], ...] = (
    ("prompt", 0.60),
    ("late", 0.20),
    ("narrow", 0.12),
    ("never", 0.08),
)
COMPLIANCE_MODEL = (
    "owners drawn once (seeded): prompt 60 % (full width, lognormal delay median 3 h, "
    "skips 5 % of storms), "
    "late 20 % (full width, 12-48 h after), narrow 12 % (2.0-3.5 ft path, median 4 h), never 8 %; "
    "walks 5 ft (70 %) or 6 ft (30 %) wide"
)


@dataclass(frozen=True)
class Outcome:
    """What one engine decided over the winter."""

    profile: str
    complied: int
    violations: int
    unverified: int
    notices: tuple[ClearingViolation, ...]
    notices_by_month: dict[str, int]


@dataclass(frozen=True)
class StormRow:
    """One accumulating storm: truth, what pole 1 detected, and the decisions it led to."""

    onset: datetime
    end: datetime
    new_snow_mm: float
    detected_end: datetime | None
    deadline: datetime | None
    complied: int
    violations: int
    unverified: int


@dataclass
class SeasonReport:
    """The season replay: storms, deadlines and notices, and what-if beside it."""

    winter: str
    source: str
    frontages: int
    poles: int
    seed: int
    readings: int
    compliance_model: str
    owners: dict[str, int]
    storms: list[StormRow]
    light_storms: int
    # Decisions after storms too light to list (and after false alarms).
    light_decisions: dict[str, int]
    outcome: Outcome
    what_if: Outcome | None = None
    cessation_median_min: float | None = None
    cessation_p90_min: float | None = None
    notes: list[str] = field(default_factory=list)
    # The record's own snowfall over the season (None: the record has none), and
    # the new snow the simulated pack at pole-01 gained, both mm of snow.
    record_snowfall_mm: float | None = None
    record_snowfall_basis: str = ""
    simulated_snowfall_mm: float | None = None


@dataclass
class _Walk:
    frontage: str
    kind: OwnerKind
    walk_ft: float
    cleared_ft: float = 0.0
    snow_since_clear_mm: float = 0.0
    plan: list[tuple[datetime, float]] = field(default_factory=list)


def season_hours(
    winter: str, source: Literal["minneapolis", "milwaukee"], seed: int
) -> list[WeatherHour]:
    """The winter's weather as hours, from the chosen record."""
    start, end = winter_bounds(winter)
    if source == "minneapolis":
        return load_minneapolis(start, end)
    return daily_to_hours(load_milwaukee(start, end), seed)


def frontage_ids(count: int) -> list[str]:
    """Slugs like ``main-st-101``: odd numbers on one side, 100 per block (§ 370-16)."""
    ids = []
    for i in range(count):
        block, house = divmod(i, FRONTAGES_PER_POLE)
        street = STREETS[block % len(STREETS)]
        hundred = 100 * (1 + block // len(STREETS))
        ids.append(f"{street}-{hundred + 1 + 2 * house}")
    return ids


def _owners(ids: Sequence[str], rng: random.Random) -> list[_Walk]:
    kinds = [k for k, _ in OWNER_TYPES]
    weights = [w for _, w in OWNER_TYPES]
    walks = []
    for f in ids:
        walk_ft = rng.choices(WALK_WIDTHS_FT, WALK_WIDTH_WEIGHTS)[0]
        walks.append(_Walk(f, rng.choices(kinds, weights)[0], walk_ft, cleared_ft=walk_ft))
    return walks


def _plan_clearing(walk: _Walk, storms: Sequence[Storm], rng: random.Random) -> None:
    for storm in storms:
        delay_h, width = math.inf, walk.walk_ft
        if walk.kind == "prompt" and rng.random() >= 0.05:
            delay_h = rng.lognormvariate(math.log(3.0), 0.9)
        elif walk.kind == "late":
            delay_h = rng.uniform(12.0, 48.0)
        elif walk.kind == "narrow":
            delay_h, width = rng.lognormvariate(math.log(4.0), 0.9), rng.uniform(2.0, 3.5)
        if math.isfinite(delay_h):
            walk.plan.append((storm.end + timedelta(hours=delay_h), width))
    walk.plan.sort()


def _camera_stream(
    walks: Sequence[_Walk], truth: Sequence[SimulatedStep], device: str, rng: random.Random
) -> Iterator[SnowMeasurement]:
    """Hourly measurements of each walk on this pole, from the pole's true snowpack."""
    next_camera = truth[0].at
    pending = {w.frontage: 0 for w in walks}
    seq = 10**9  # camera seqs after the weather seqs of the same device
    never = truth[-1].at + CAMERA_EVERY
    next_plan = min((w.plan[0][0] for w in walks if w.plan), default=never)
    bare = False  # the last step found the pack below COVER_MM and bared every walk
    for step in truth:
        # A step with no new snow and no clearing due changes no walk when the pack
        # lies (a covered walk stays covered) or was already bare: skip the walks.
        quiet = step.new_snow_mm == 0 and step.at < next_plan
        if not (quiet and (bare or step.true_depth_mm >= COVER_MM)):
            for w in walks:
                i = pending[w.frontage]
                while i < len(w.plan) and w.plan[i][0] <= step.at:
                    w.cleared_ft, w.snow_since_clear_mm = w.plan[i][1], 0.0
                    i += 1
                pending[w.frontage] = i
                w.snow_since_clear_mm += step.new_snow_mm
                if w.snow_since_clear_mm >= COVER_MM:
                    w.cleared_ft = 0.0
                if step.true_depth_mm < COVER_MM:
                    w.cleared_ft, w.snow_since_clear_mm = w.walk_ft, 0.0
            next_plan = min(
                (
                    w.plan[pending[w.frontage]][0]
                    for w in walks
                    if pending[w.frontage] < len(w.plan)
                ),
                default=never,
            )
        bare = step.true_depth_mm < COVER_MM
        if step.at < next_camera:
            continue
        next_camera = step.at + CAMERA_EVERY
        ts = to_ms(step.at)
        for w in walks:
            walk_mm = w.walk_ft * MM_PER_FOOT
            width = min(walk_mm, max(0.0, w.cleared_ft * MM_PER_FOOT + rng.gauss(0.0, 30.0)))
            seq += 1
            yield SnowMeasurement(
                device=device,
                seq=seq,
                ts=ts,
                frontage=w.frontage,
                snow_cover_fraction=round(1 - width / walk_mm, 3),
                cleared_width_mm=width,
            )


def _outcome(profile: Profile, events: Sequence[Event]) -> Outcome:
    decided = Counter(
        e.to_state
        for e in events
        if isinstance(e, Transition) and e.from_state == ClearingState.CLEARING_PERIOD
    )
    notices = tuple(e for e in events if isinstance(e, ClearingViolation))
    by_month = Counter(n.deadline.astimezone(CHICAGO).strftime("%Y-%m") for n in notices)
    return Outcome(
        profile=profile.village.name,
        complied=decided[ClearingState.COMPLIED],
        violations=decided[ClearingState.VIOLATION],
        unverified=sum(1 for e in events if isinstance(e, ClearingUnverified)),
        notices=notices,
        notices_by_month=dict(sorted(by_month.items())),
    )


def run_season(  # noqa: PLR0917 - one positional per `sidewalk replay` option
    winter: str,
    source: Literal["minneapolis", "milwaukee"],
    profile_path: Path | None,
    frontages: int,
    seed: int,
    console: Console,
    *,
    weather: StationWinter | None = None,
) -> SeasonReport:
    """Replay ``winter`` for ``frontages`` simulated frontages; with ``profile_path``, also what-if.

    The baseline is always the embedded Village of Clyman profile; a given
    profile runs on exactly the same readings. Shows rich progress bars on
    ``console`` while it runs. ``weather`` (a season cut from a station file,
    ``station.station_winter``) replaces the bundled ``source``.
    """
    if frontages < 1:
        raise ValueError("frontages must be at least 1")
    record_snow: float | None = None
    basis = ""
    if weather is not None:
        hours, hourly = weather.hours, weather.hourly
        record_snow, basis = weather.record_snowfall_mm, weather.snowfall_basis
    elif source == "milwaukee":
        start, end = winter_bounds(winter)
        days = load_milwaukee(start, end)
        hours, hourly = daily_to_hours(days, seed), False
        snow = [d.snowfall_mm for d in days if d.snowfall_mm is not None]
        record_snow, basis = (sum(snow) if snow else None), "the daily SNOW column"
    else:
        hours, hourly = season_hours(winter, source, seed), True
        basis = "the hourly record has no snowfall amounts"
    if not hours:
        raise ValueError(f"no {source} weather for winter {winter}")
    rng = random.Random(seed)
    ids = frontage_ids(frontages)
    walks = _owners(ids, rng)
    specs = [FrontageSpec(f, _pole(i // FRONTAGES_PER_POLE)) for i, f in enumerate(ids)]
    profiles = [load_profile()] + ([load_profile(profile_path)] if profile_path else [])
    engines = [ClockEngine(profile, specs) for profile in profiles]
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        streams, first = _simulate_village(hours, walks, seed, rng, progress)
        events = _replay(engines, streams, hours[-1].start + timedelta(days=3), progress)
    storms = with_new_snow(storms_from_hours(hours), first.truth)
    scored = score(storms, detect_episodes(first.readings, _pole(0)), MIN_STORM_SNOW_MM)
    outcomes = [_outcome(e.profile, ev) for e, ev in zip(engines, events, strict=True)]
    rows, light = _storm_rows(storms, scored.storms, events[0], profiles[0])
    report = SeasonReport(
        winter=winter,
        source=source if weather is None else weather.label,
        frontages=frontages,
        poles=len(streams),
        seed=seed,
        readings=sum(len(s) for s in streams),
        compliance_model=COMPLIANCE_MODEL,
        owners=dict(Counter(w.kind for w in walks)),
        storms=rows,
        light_storms=sum(1 for s in storms if s.new_snow_mm < MIN_STORM_SNOW_MM),
        light_decisions=dict(light),
        outcome=outcomes[0],
        what_if=outcomes[1] if len(outcomes) > 1 else None,
        record_snowfall_mm=record_snow,
        record_snowfall_basis=basis,
        simulated_snowfall_mm=round(sum(step.new_snow_mm for step in first.truth), 1),
    )
    if weather is None and source == "minneapolis":
        report.cessation_median_min = scored.abs_percentile(50)
        report.cessation_p90_min = scored.abs_percentile(90)
    elif hourly:
        report.notes.append(
            "hourly station record: snow timing to the hour; no minute truth to score cessation"
        )
    else:
        report.notes.append(
            "daily record: storm timing within a day is simulated, so no cessation accuracy"
        )
    return report


def _simulate_village(
    hours: Sequence[WeatherHour],
    walks: Sequence[_Walk],
    seed: int,
    rng: random.Random,
    progress: Progress,
) -> tuple[list[list[AnyReading]], SimulatedStream]:
    """Each pole's weather and camera readings in time order; pole 1's stream with its truth."""
    poles = math.ceil(len(walks) / FRONTAGES_PER_POLE)
    task = progress.add_task(f"simulating {poles} poles", total=poles)
    streams: list[list[AnyReading]] = []
    first = SimulatedStream()
    for p in range(poles):
        sim = simulate_pole(hours, _pole(p), seed=seed * 1000 + p)
        if p == 0:
            # Owners react to the snow they see: the storms at the first pole.
            first = sim
            storms = with_new_snow(storms_from_hours(hours), sim.truth)
            covering = [s for s in storms if s.new_snow_mm >= COVER_MM]
            for w in walks:
                _plan_clearing(w, covering, rng)
        pole_walks = walks[p * FRONTAGES_PER_POLE : (p + 1) * FRONTAGES_PER_POLE]
        cams = list(_camera_stream(pole_walks, sim.truth, _pole(p), rng))
        streams.append(list(heapq.merge(sim.readings, cams, key=lambda r: r.ts)))
        progress.advance(task)
    return streams, first


def _replay(
    engines: Sequence[ClockEngine],
    streams: Sequence[list[AnyReading]],
    end: datetime,
    progress: Progress,
) -> list[list[Event]]:
    """Feed every reading to every engine in event-time order, advancing when something is due.

    ``feed`` advances after every reading; advancing only once ``next_due`` has
    come gives the same events (an advance before then decides nothing).
    ``next_due`` moves when the engine reports an event, and earlier without one
    when a reading brings in the evidence a deadline waits for, so from the
    engine's ``evidence_watch`` instant on it is asked again after each reading.
    """
    total = sum(len(s) for s in streams)
    task = progress.add_task("replaying readings through the clock engine", total=total)
    events: list[list[Event]] = [[] for _ in engines]
    due = [engine.next_due() for engine in engines]
    watch = [engine.evidence_watch() for engine in engines]
    for n, reading in enumerate(heapq.merge(*streams, key=lambda r: r.ts), start=1):
        at = reading.event_time
        for i, engine in enumerate(engines):
            found = engine.observe(reading)
            watched = watch[i]
            if found or (watched is not None and at >= watched):
                due[i], watch[i] = engine.next_due(), engine.evidence_watch()
            next_due = due[i]
            if next_due is not None and at >= next_due:
                found += engine.advance(at)
                due[i], watch[i] = engine.next_due(), engine.evidence_watch()
            events[i].extend(found)
        if n % 20_000 == 0:
            progress.update(task, completed=n)
    for engine, found in zip(engines, events, strict=True):
        found.extend(engine.advance(end))
    progress.update(task, completed=total)
    return events


def _storm_rows(
    storms: Sequence[Storm], scored: Sequence[StormScore], events: Sequence[Event], profile: Profile
) -> tuple[list[StormRow], Counter[str]]:
    """Rows for the accumulating storms, and the decisions after lighter storms (or none).

    Each decision goes to the storm its cessation followed: the last storm whose
    onset came before the deadline less the clearing period.
    """
    deadline_after = profile.snow_and_ice.clearing_deadline.duration
    decisions = [
        e
        for e in events
        if isinstance(e, Transition)
        and e.from_state == ClearingState.CLEARING_PERIOD
        and e.to_state in DECIDED
    ]
    onsets = [s.onset for s in storms]
    tallies: list[Counter[str]] = [Counter() for _ in storms]
    deadlines: list[datetime | None] = [None for _ in storms]
    other: Counter[str] = Counter()
    for d in decisions:
        k = bisect.bisect_right(onsets, d.at - deadline_after) - 1
        if k < 0:
            other[d.to_state] += 1
            continue
        tallies[k][d.to_state] += 1
        first = deadlines[k]
        deadlines[k] = d.at if first is None else min(first, d.at)
    detected = {s.storm.onset: s.detected_end for s in scored}
    rows: list[StormRow] = []
    for k, storm in enumerate(storms):
        if storm.new_snow_mm < MIN_STORM_SNOW_MM:
            other.update(tallies[k])
            continue
        rows.append(
            StormRow(
                onset=storm.onset,
                end=storm.end,
                new_snow_mm=storm.new_snow_mm,
                detected_end=detected.get(storm.onset),
                deadline=deadlines[k],
                complied=tallies[k][ClearingState.COMPLIED],
                violations=tallies[k][ClearingState.VIOLATION],
                unverified=tallies[k][ClearingState.UNVERIFIED],
            )
        )
    return rows, other


def _pole(index: int) -> str:
    return f"pole-{index + 1:02d}"


def _local(instant: datetime | None) -> str:
    return "-" if instant is None else instant.astimezone(CHICAGO).strftime("%b %d %H:%M")


def _bars(counts: dict[str, int], width: int = 40) -> list[str]:
    top = max(counts.values(), default=0) or 1
    return [f"{month}  {'█' * round(width * n / top):<{width}} {n}" for month, n in counts.items()]


def render_report(report: SeasonReport, console: Console) -> None:
    """Print the season report: summary, storms and deadlines, notices, and a chart by month."""
    console.rule(f"Season replay {report.winter} ({report.source})")
    console.print(
        f"{report.frontages} frontages on {report.poles} simulated poles, seed {report.seed}, "
        f"{report.readings:,} readings replayed"
    )
    console.print(f"Compliance model: {report.compliance_model}")
    console.print(
        "Owners drawn: " + ", ".join(f"{k} {v}" for k, v in sorted(report.owners.items()))
    )
    for note in report.notes:
        console.print(f"[dim]{note}[/dim]")
    if report.simulated_snowfall_mm is not None:
        recorded = (
            "not stated"
            if report.record_snowfall_mm is None
            else f"{report.record_snowfall_mm:,.0f} mm ({report.record_snowfall_mm / 25.4:.1f} in)"
        )
        simulated = report.simulated_snowfall_mm
        console.print(
            f"Snowfall over the season: record {recorded} ({report.record_snowfall_basis}); "
            f"simulated at pole-01 {simulated:,.0f} mm ({simulated / 25.4:.1f} in)"
        )
    table = Table(
        title=f"Snow events (≥ {MIN_STORM_SNOW_MM:.0f} mm new snow; "
        f"{report.light_storms} lighter ones summed in the last row)"
    )
    for name in (
        "onset",
        "snow ended",
        "new snow",
        "detected end",
        "error",
        "first deadline",
        "ok",
        "notices",
        "unverified",
    ):
        table.add_column(name, justify="right")
    for row in report.storms:
        error = (
            "-"
            if row.detected_end is None
            else f"{(row.detected_end - row.end).total_seconds() / 60:+.0f} min"
        )
        table.add_row(
            _local(row.onset),
            _local(row.end),
            f"{row.new_snow_mm:.0f} mm",
            _local(row.detected_end),
            error,
            _local(row.deadline),
            str(row.complied),
            str(row.violations),
            str(row.unverified),
        )
    light = report.light_decisions
    table.add_row(
        f"{report.light_storms} lighter",
        "",
        "",
        "",
        "",
        "",
        *(str(light.get(k, 0)) for k in DECIDED),
    )
    console.print(table)
    if report.cessation_median_min is not None:
        console.print(
            "Cessation error on pole-01 against the labels: "
            f"median {report.cessation_median_min:.0f} min, "
            f"90th percentile {report.cessation_p90_min:.0f} min"
        )
    outcomes = [report.outcome] + ([report.what_if] if report.what_if else [])
    summary = Table(title="Clearing clocks decided (§ 370-10 A)")
    summary.add_column("profile")
    for name in ("complied", "violations = notices", "unverified"):
        summary.add_column(name, justify="right")
    for o in outcomes:
        summary.add_row(o.profile, str(o.complied), str(o.violations), str(o.unverified))
    console.print(summary)
    for o in outcomes:
        console.print(f"[bold]Notices by month of deadline, {o.profile}[/bold]")
        for line in _bars(o.notices_by_month):
            console.print(line)
        for n in o.notices[:5]:
            console.print(
                f"  {n.frontage}: deadline {_local(n.deadline)}, "
                f"measured {n.measured_width_mm or 0:.1f} mm "
                f"< {n.required_width_mm:.1f} mm ({n.citation})"
            )
        if len(o.notices) > 5:
            console.print(f"  … and {len(o.notices) - 5} more")
