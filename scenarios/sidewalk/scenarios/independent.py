"""Cessation error against an independent, minute-resolution truth (docs/cessation.md).

Truth: the snow storms of an airport's METAR remarks (``metar.snow_storms``),
each ending at the minute the observer or the ASOS present-weather sensor
said snow ended. Input: the same station's *hourly* record (one routine report
per hour: its present weather and one-hour precipitation, ``metar.hourly_weather``)
turned into pole readings by the sensor simulator. The input never reads the
remarks' begin/end times, and the simulator snows over its labelled hours, not
over the truth's minutes, so the detector is scored on what it could not have
been tuned to reproduce.

Errors are detected end minus true end (+ = late, the owner's side). A true
end known only to an interval between two reports (no remark) counts as 0
when the detected end falls inside it and otherwise as the distance to the
nearer bound; ``minute_share`` says how many scored ends were to the minute.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import numpy as np

from sidewalk.analytics.clocks.cessation import DetectionParams
from sidewalk.scenarios.accuracy import (
    Storm,
    detect_episodes,
    score,
    storms_from_hours,
    with_new_snow,
)
from sidewalk.scenarios.metar import (
    SNOW_INTENSITY_MM_H,
    Report,
    SnowStorm,
    hourly_reports,
    hourly_weather,
    present_snow,
    raining,
    snow_periods,
    snow_storms,
)
from sidewalk.scenarios.sensors import HALF_HOUR, SensorModel, SimulatedStep, simulate_pole
from sidewalk.scenarios.weather import RAIN_MM_H, WeatherHour

# Storms that laid down less than this in the simulated pack start no clock
# (the same rule as the hourly figure, so the two are comparable).
MIN_NEW_SNOW_MM = 10.0


@dataclass
class IndependentScore:
    """One station-winter, one or more simulated poles: resolved errors and counts."""

    label: str
    errors: list[float] = field(default_factory=list)  # minutes, + = late
    minute_ends: int = 0
    truth_storms: int = 0  # all storms in the remarks, light or not, per pole
    scored: int = 0
    missed: int = 0
    false_alarms: int = 0
    poles: int = 0
    # Per scored storm: (true end, input part, detector part) in minutes; the
    # input part is the simulated pole's last snowing minute minus the true
    # end (what the hourly input gets wrong before any detector runs), the
    # detector part the detected end minus that minute.
    parts: list[tuple[datetime, float, float]] = field(default_factory=list)

    def add(self, other: IndependentScore) -> None:
        self.errors += other.errors
        self.parts += other.parts
        self.minute_ends += other.minute_ends
        self.truth_storms += other.truth_storms
        self.scored += other.scored
        self.missed += other.missed
        self.false_alarms += other.false_alarms
        self.poles += other.poles

    def abs_percentile(self, q: float) -> float:
        return float(np.percentile(np.abs(self.errors), q)) if self.errors else float("nan")

    def signed_median(self) -> float:
        return float(np.median(self.errors)) if self.errors else float("nan")

    @property
    def early(self) -> int:
        """Storms whose cessation was declared before the snow truly stopped."""
        return sum(1 for e in self.errors if e < 0)

    @property
    def minute_share(self) -> float:
        return self.minute_ends / len(self.errors) if self.errors else float("nan")


def resolved_error(detected: datetime, end_lo: datetime, end: datetime) -> float:
    """Minutes from the true end, 0 inside an interval-valued end; + = late."""
    if detected > end:
        return (detected - end).total_seconds() / 60
    if detected < end_lo:
        return (detected - end_lo).total_seconds() / 60
    return 0.0


def in_window(reports: Sequence[Report], start: date, end: date) -> list[Report]:
    return [r for r in reports if start <= r.at.date() < end]


def score_station(
    reports: Sequence[Report],
    label: str,
    seed: int,
    params: DetectionParams | None = None,
    model: SensorModel | None = None,
    *,
    minute_input: bool = False,
) -> IndependentScore:
    """Simulate one pole and score it against the remarks' storms.

    The pole snows over the hourly record's labelled hours, or with
    ``minute_input`` over the remarks' own minutes (``minute_weather``).
    """
    truth = snow_storms(snow_periods(reports))
    hours = minute_weather(reports) if minute_input else hourly_weather(reports)
    sim = simulate_pole(hours, "pole-1", seed=seed, model=model)
    storms = with_new_snow(
        [Storm(s.onset, s.end, round(s.snowing_minutes / 60)) for s in truth], sim.truth
    )
    result = score(storms, detect_episodes(sim.readings, "pole-1", params), MIN_NEW_SNOW_MM)
    by_end = {s.end: s for s in truth}
    out = IndependentScore(label, truth_storms=len(truth), poles=1)
    out.false_alarms = result.false_alarms
    out.missed = result.missed
    out.scored = len(result.storms)
    for scored in result.storms:
        if scored.detected_end is None:
            continue
        t: SnowStorm = by_end[scored.storm.end]
        err = resolved_error(scored.detected_end, t.end_lo, t.end)
        out.errors.append(err)
        out.minute_ends += t.end_resolution <= timedelta(minutes=1)
        sim_end = last_snowing(sim.truth, t.onset - SIM_MARGIN, t.end + SIM_MARGIN)
        if sim_end is not None:
            input_part = (sim_end - t.end).total_seconds() / 60
            out.parts.append((t.end, input_part, err - input_part))
    return out


# How far around a true storm the simulated pole's own snowfall is looked for.
SIM_MARGIN = timedelta(hours=2)


def last_snowing(steps: Sequence[SimulatedStep], start: datetime, end: datetime) -> datetime | None:
    """The end of the last step in [start, end] during which the simulated pole snowed."""
    last: datetime | None = None
    for i, st in enumerate(steps):
        if st.at > end:
            break
        if st.at >= start and st.snowing:
            last = steps[i + 1].at if i + 1 < len(steps) else st.at
    return last


def score_station_hourly_truth(
    reports: Sequence[Report], label: str, seed: int, params: DetectionParams | None = None
) -> IndependentScore:
    """The same pole scored the old way: truth = last labelled hour + 30 min (circular)."""
    hours = hourly_weather(reports)
    sim = simulate_pole(hours, "pole-1", seed=seed)
    truth = storms_from_hours(hours)
    result = score(
        with_new_snow(truth, sim.truth),
        detect_episodes(sim.readings, "pole-1", params),
        MIN_NEW_SNOW_MM,
    )
    out = IndependentScore(label, truth_storms=len(truth), poles=1)
    out.errors = result.errors_minutes
    out.scored = len(result.storms)
    out.missed = result.missed
    out.false_alarms = result.false_alarms
    return out


def shifted(score_: IndependentScore, margin_minutes: float, label: str) -> IndependentScore:
    """What-if: every declared cessation ``margin_minutes`` later (matching unchanged)."""
    out = IndependentScore(label)
    out.add(score_)
    out.label = label
    out.errors = [e + margin_minutes for e in score_.errors]
    return out


# The minute input's slots: the simulator's step.
SLOT = timedelta(minutes=5)


def minute_weather(reports: Sequence[Report]) -> list[WeatherHour]:
    """The pole's weather with the snow falling over the remarks' own minutes.

    What a pole at the airport would have seen: snow exactly over the truth's
    snow periods (``snow_periods``), at the rate of the hourly record (the
    one-hour precipitation of the routine report whose hour covers the
    minute, else its snow group's intensity band, else light snow), in the
    hourly record's air temperature. Without this the hourly input's own
    error (its snow ends at the last snow-labelled report + 30 min, up to an
    hour from the truth) is scored as the detector's.

    The simulator snows each entry from 30 min before its time to 30 min
    after and takes the entry nearest in time, so entries every ``SLOT``,
    each timed 30 min after the five minutes it stands for, snow exactly
    over those minutes (and the simulator's in-hour lulls, drawn per entry,
    stay out: the truth has its own).
    """
    hourly = hourly_reports(reports)
    if not hourly:
        return []
    periods = snow_periods(reports)
    start = hourly[0].at.replace(minute=0, second=0, microsecond=0)
    end = hourly[-1].at
    out: list[WeatherHour] = []
    k = 0  # hourly[k]: the first routine report at or after the slot (its hour covers it)
    p = 0
    temp = 0.0
    t = start
    while t < end:
        while k < len(hourly) - 1 and hourly[k].at < t:
            k += 1
        r = hourly[k]
        if r.air_temp_c is not None:
            temp = r.air_temp_c
        while p < len(periods) and periods[p].end <= t:
            p += 1
        snowing = p < len(periods) and periods[p].begin <= t < periods[p].end
        snow = rain = 0.0
        label: str | None = None
        measured = r.precip_mm if r.precip_mm and r.precip_mm > 0 else None
        if snowing:
            label = present_snow(r.metar) or "-SN"
            intensity = label[0] if label[0] in "+-" else ""
            snow = min(measured or SNOW_INTENSITY_MM_H.get(intensity, 0.5), 10.0)
        elif raining(r.metar):
            rain = min(measured or RAIN_MM_H["light rain"], 50.0)
        out.append(WeatherHour(t + HALF_HOUR, temp, snow, rain, label))
        t += SLOT
    return out
