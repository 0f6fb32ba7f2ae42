"""How well does the detector find "snow ceases to accumulate"? Truth from labels, error per storm.

With the hourly labels as truth this is the *simulator self-check*: the pole is
simulated from the same labels, so it is circular. ``independent.py`` scores the
same matching against minute-resolution METAR truth (docs/cessation.md).

Ground truth (the Minneapolis hourly record):

* A label at hour ``h`` describes the weather around the observation, so a
  ``Snow`` hour snows over [h - 30 min, h + 30 min) (the simulator uses the
  same convention).
* Runs of ``Snow`` hours separated by at most ``merge_gap_hours`` (default 2)
  hours without a snow label (recorded dry, or missing from the record) are one
  storm: a 1-2 h lull is a pause inside a storm, not a cessation. Three dry
  hours end it. The storm ends 30 min after its last snow label.
* A storm is *accumulating* when the simulated (noise-free) pack gained at
  least ``min_new_snow_mm`` during it; snow that melts on contact starts no
  clock, and those storms are scored apart.

Matching: the detected snowfall episodes that overlap a storm (widened by the
merge gap before and a tolerance after) are its detection; the cessation of
the last one that began before the storm ended is the detected end, and the
error is detected minus true end (positive = late, the owner's side).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from sidewalk.analytics.clocks.cessation import DetectionParams, SnowfallChange, SnowfallDetector
from sidewalk.core.contract import WeatherReading
from sidewalk.scenarios.sensors import HALF_HOUR, SimulatedStep
from sidewalk.scenarios.weather import WeatherHour

MATCH_AFTER = timedelta(hours=6)


@dataclass(frozen=True)
class Storm:
    """A true snowfall: onset and end (UTC) and how much new snow it laid down."""

    onset: datetime
    end: datetime
    snow_hours: int
    new_snow_mm: float = 0.0


@dataclass(frozen=True)
class Episode:
    """One snowfall as the detector saw it."""

    onset: datetime
    cessation: datetime


@dataclass(frozen=True)
class StormScore:
    """One accumulating storm: the detected end and the cessation its clock ran from."""

    storm: Storm
    detected_end: datetime | None
    merged_with_next: bool
    clock_start: datetime | None = None

    @property
    def error_minutes(self) -> float | None:
        if self.detected_end is None:
            return None
        return (self.detected_end - self.storm.end).total_seconds() / 60

    @property
    def clock_error_minutes(self) -> float | None:
        if self.clock_start is None:
            return None
        return (self.clock_start - self.storm.end).total_seconds() / 60


@dataclass(frozen=True)
class CessationScore:
    """Per-storm results and the error distribution over the matched accumulating storms."""

    storms: tuple[StormScore, ...]
    light_storms: int
    false_alarms: int
    episodes: int

    @property
    def errors_minutes(self) -> list[float]:
        return [s.error_minutes for s in self.storms if s.error_minutes is not None]

    @property
    def clock_errors_minutes(self) -> list[float]:
        return [s.clock_error_minutes for s in self.storms if s.clock_error_minutes is not None]

    @property
    def missed(self) -> int:
        return sum(1 for s in self.storms if s.detected_end is None)

    @property
    def merged(self) -> int:
        return sum(1 for s in self.storms if s.merged_with_next)

    def abs_percentile(self, q: float, clock: bool = False) -> float:
        """``q``-th percentile of |error| in minutes (nan when nothing matched).

        ``clock=True`` scores the cessation each storm's clearing clock finally
        ran from instead (see ``score``).
        """
        errs = self.clock_errors_minutes if clock else self.errors_minutes
        return float(np.percentile(np.abs(errs), q)) if errs else float("nan")

    def signed_median(self) -> float:
        errs = self.errors_minutes
        return float(np.median(errs)) if errs else float("nan")


def storms_from_hours(hours: Sequence[WeatherHour], merge_gap_hours: int = 2) -> list[Storm]:
    """True storms from snow labels, merging runs split by at most ``merge_gap_hours`` dry hours."""
    storms: list[Storm] = []
    snow = [h for h in hours if h.snowing]
    if not snow:
        return storms
    limit = timedelta(hours=merge_gap_hours + 1)
    first = last = snow[0]
    count = 1
    for h in snow[1:]:
        if h.start - last.start <= limit:
            last, count = h, count + 1
            continue
        storms.append(Storm(first.start - HALF_HOUR, last.start + HALF_HOUR, count))
        first = last = h
        count = 1
    storms.append(Storm(first.start - HALF_HOUR, last.start + HALF_HOUR, count))
    return storms


def with_new_snow(storms: Iterable[Storm], truth: Sequence[SimulatedStep]) -> list[Storm]:
    """Attach the simulated new snow (mm) that fell inside each storm."""
    out: list[Storm] = []
    i = 0
    for s in storms:
        while i < len(truth) and truth[i].at < s.onset:
            i += 1
        total = 0.0
        j = i
        while j < len(truth) and truth[j].at < s.end:
            total += truth[j].new_snow_mm
            j += 1
        out.append(Storm(s.onset, s.end, s.snow_hours, round(total, 1)))
    return out


def detect_episodes(
    readings: Iterable[WeatherReading], device: str, params: DetectionParams | None = None
) -> list[Episode]:
    """Run one detector over a pole's stream, advancing with the stream's own time."""
    detector = SnowfallDetector(device, params or DetectionParams())
    changes: list[SnowfallChange] = []
    last: datetime | None = None
    for reading in readings:
        changes += detector.observe(reading)
        changes += detector.advance(reading.event_time)
        last = reading.event_time
    if last is not None:
        changes += detector.advance(last + timedelta(days=2))
    episodes: list[Episode] = []
    onset: datetime | None = None
    for change in changes:
        if change.kind == "onset":
            onset = change.at
        elif onset is not None:
            episodes.append(Episode(onset, change.at))
            onset = None
    return episodes


def score(
    storms: Sequence[Storm],
    episodes: Sequence[Episode],
    min_new_snow_mm: float = 10.0,
    merge_gap_hours: int = 2,
    clearing_deadline: timedelta = timedelta(hours=24),
) -> CessationScore:
    """Match episodes to accumulating storms; count misses, merges and false alarms.

    The clock start is what the ordinance feels: an onset detected before the
    clearing deadline restarts the clock (§ 370-10 A in the engine), so the
    clock of a storm runs from the last cessation of the chain of episodes that
    each begin before the previous one's deadline, up to the next true storm.
    """
    widen = timedelta(hours=merge_gap_hours)
    scored: list[StormScore] = []
    used: set[int] = set()
    for k, storm in enumerate(storms):
        lo, hi = storm.onset - widen, storm.end + MATCH_AFTER
        hits = [i for i, e in enumerate(episodes) if e.onset < hi and e.cessation > lo]
        used.update(hits)
        if storm.new_snow_mm < min_new_snow_mm:
            continue
        began = [i for i in hits if episodes[i].onset <= storm.end]
        if not began:
            scored.append(StormScore(storm, None, False))
            continue
        ep = episodes[began[-1]]
        nxt = storms[k + 1] if k + 1 < len(storms) else None
        merged = nxt is not None and ep.cessation > nxt.onset
        clock = ep.cessation
        for later in episodes[began[-1] + 1 :]:
            if later.onset >= clock + clearing_deadline or (
                nxt is not None and later.onset >= nxt.onset - widen
            ):
                break
            clock = later.cessation
        scored.append(StormScore(storm, ep.cessation, merged, clock))
    light = sum(1 for s in storms if s.new_snow_mm < min_new_snow_mm)
    false_alarms = sum(1 for i in range(len(episodes)) if i not in used)
    return CessationScore(tuple(scored), light, false_alarms, len(episodes))
