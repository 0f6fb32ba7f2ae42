"""Real weather records, loaded into one common shape: hours of weather.

Two third-party records live in ``../shared/data/weather/`` (never copied into
the repository; ``SIDEWALK_DATA_DIR`` points elsewhere):

* ``minneapolis_i94_hourly_weather/`` (OpenWeatherMap via the UCI "Metro
  Interstate Traffic Volume" set, CC BY 4.0): one row per hour and weather
  condition; ``temp`` is in kelvin; ``date_time`` is local time
  (America/Chicago). ``weather_main == "Snow"`` labels snowfall hours.
* ``milwaukee_ghcn_daily/`` (NOAA GHCN-Daily, Milwaukee airport): one row per
  day; PRCP in inches, TMAX/TMIN in °F. **SNOW and SNWD were converted upstream
  with the wrong factor: true inches = column value × 10** (the README in that
  folder explains it). ``load_milwaukee`` applies the correction.

Both become ``WeatherHour``s (UTC start, air temperature in °C, snow water
equivalent and rain in mm per hour) which the sensor simulator turns into a
pole's 5-minute readings. Milwaukee's days are spread over hours by a seeded,
documented disaggregation (``daily_to_hours``): the daily record says how much,
not when.
"""

from __future__ import annotations

import csv
import math
import os
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

from sidewalk.core.units import MM_PER_INCH, f_to_c

CHICAGO = ZoneInfo("America/Chicago")
KELVIN_OFFSET = 273.15
# Upstream multiplied whole millimetres by 0.00393701 (as if tenths of mm).
MILWAUKEE_SNOW_FACTOR = 10.0
MINNEAPOLIS_DIR = "minneapolis_i94_hourly_weather"
MINNEAPOLIS_FILE = "Metro_Interstate_Traffic_Volume.csv"
MILWAUKEE_DIR = "milwaukee_ghcn_daily"
MILWAUKEE_FILE = "GHCN_USW00014839.csv"

Source = Literal["minneapolis", "milwaukee"]

# Liquid-equivalent intensity of each label, mm/h. The record gives no amounts
# (snow_1h is non-zero in 63 rows of 48,204, so it is not used); these are the
# usual METAR intensity bands for snow: light < 1 mm/h, moderate 1-2.5, heavy > 2.5.
SNOW_WATER_MM_H: dict[str, float] = {
    "light snow": 0.5,
    "light shower snow": 0.5,
    "light rain and snow": 0.5,
    "sleet": 0.5,
    "snow": 1.5,
    "shower snow": 1.5,
    "heavy snow": 3.0,
}
RAIN_MM_H: dict[str, float] = {
    "light intensity drizzle": 0.2,
    "drizzle": 0.3,
    "heavy intensity drizzle": 0.5,
    "light rain": 0.5,
    "light intensity shower rain": 0.5,
    "proximity shower rain": 0.5,
    "moderate rain": 2.0,
    "freezing rain": 1.0,
    "heavy intensity rain": 6.0,
    "very heavy rain": 10.0,
}


class WeatherDataMissing(FileNotFoundError):
    """The shared weather record is not where the data directory says."""


@dataclass(frozen=True)
class WeatherHour:
    """One hour of weather at the pole, starting at ``start`` (UTC).

    ``snow_label`` is the record's own word for the snowfall (``light snow`` …),
    or None when the record says it did not snow that hour.
    """

    start: datetime
    air_temp_c: float
    snow_water_mm_h: float
    rain_mm_h: float
    snow_label: str | None = None

    @property
    def snowing(self) -> bool:
        return self.snow_label is not None


@dataclass(frozen=True)
class WeatherDay:
    """One day of the Milwaukee record, in corrected SI units; None = missing."""

    day: date
    precip_mm: float | None
    snowfall_mm: float | None
    snow_depth_mm: float | None
    tmax_c: float | None
    tmin_c: float | None


def data_dir() -> Path:
    """``$SIDEWALK_DATA_DIR`` or ``<repo>/../shared/data``."""
    # This file is <repo>/scenarios/sidewalk/scenarios/weather.py.
    override = os.environ.get("SIDEWALK_DATA_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def record_path(source: Source, root: Path | None = None) -> Path:
    """Path of a source's CSV; raises ``WeatherDataMissing`` if absent."""
    base = (root or data_dir()) / "weather"
    path = (
        base / MINNEAPOLIS_DIR / MINNEAPOLIS_FILE
        if source == "minneapolis"
        else base / MILWAUKEE_DIR / MILWAUKEE_FILE
    )
    if not path.is_file():
        raise WeatherDataMissing(
            f"{source} weather record not found at {path} (set SIDEWALK_DATA_DIR)"
        )
    return path


def winter_bounds(winter: str) -> tuple[date, date]:
    """``"2017-18"`` → (2017-10-01, 2018-05-01): the half-open span a snow season can use."""
    m = re.fullmatch(r"(\d{4})-(\d{2}|\d{4})", winter)
    if not m:
        raise ValueError(f"winter {winter!r} is not like 2017-18")
    first = int(m.group(1))
    second = m.group(2)
    if int(second[-2:]) != (first + 1) % 100:
        raise ValueError(f"winter {winter!r}: the second year must follow the first")
    return date(first, 10, 1), date(first + 1, 5, 1)


def local_to_utc(naive: datetime) -> datetime:
    """A record's local wall time to UTC; the repeated November hour is read as its first pass."""
    return naive.replace(tzinfo=CHICAGO, fold=0).astimezone(UTC)


def load_minneapolis(start: date, end: date, path: Path | None = None) -> list[WeatherHour]:
    """Hourly weather in [start, end) (local dates), one ``WeatherHour`` per recorded hour.

    The file has one row per simultaneous condition; rows of one hour are merged:
    it snowed if any row says ``Snow`` (the heaviest label wins), rain is the
    largest of ``rain_1h`` and the rain labels. Hours absent from the record
    stay absent (the simulator treats them as dry, carrying the temperature).
    """
    source = path or record_path("minneapolis")
    merged: dict[datetime, WeatherHour] = {}
    with source.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            naive = datetime.fromisoformat(row["date_time"])
            if not (start <= naive.date() < end):
                continue
            at = local_to_utc(naive)
            merged[at] = _merge(merged.get(at), _hour_from_row(at, row))
    return [merged[k] for k in sorted(merged)]


def _hour_from_row(at: datetime, row: dict[str, str]) -> WeatherHour:
    main, desc = row["weather_main"], row["weather_description"].strip().lower()
    snow = SNOW_WATER_MM_H.get(desc, SNOW_WATER_MM_H["light snow"]) if main == "Snow" else 0.0
    rain = max(float(row["rain_1h"] or 0.0), RAIN_MM_H.get(desc, 0.0))
    # A few rain_1h values are absurd (one is 9,831 mm); cap at a cloudburst.
    rain = min(rain, 50.0)
    return WeatherHour(
        at, float(row["temp"]) - KELVIN_OFFSET, snow, rain, desc if main == "Snow" else None
    )


def _merge(old: WeatherHour | None, new: WeatherHour) -> WeatherHour:
    if old is None:
        return new
    label = old.snow_label
    if new.snow_water_mm_h > old.snow_water_mm_h:
        label = new.snow_label
    return WeatherHour(
        old.start,
        old.air_temp_c,
        max(old.snow_water_mm_h, new.snow_water_mm_h),
        max(old.rain_mm_h, new.rain_mm_h),
        label,
    )


def _float(text: str) -> float | None:
    return None if text in {"", "NA"} else float(text)


def load_milwaukee(start: date, end: date, path: Path | None = None) -> list[WeatherDay]:
    """Daily Milwaukee weather in [start, end), with SNOW/SNWD corrected (× 10) and in mm."""
    source = path or record_path("milwaukee")
    days: list[WeatherDay] = []
    with source.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            day = date.fromisoformat(row["date"])
            if not (start <= day < end):
                continue
            prcp, snow, snwd = _float(row["PRCP"]), _float(row["SNOW"]), _float(row["SNWD"])
            tmax, tmin = _float(row["TMAX"]), _float(row["TMIN"])
            days.append(
                WeatherDay(
                    day=day,
                    precip_mm=None if prcp is None else prcp * MM_PER_INCH,
                    snowfall_mm=None
                    if snow is None
                    else snow * MILWAUKEE_SNOW_FACTOR * MM_PER_INCH,
                    snow_depth_mm=None
                    if snwd is None
                    else snwd * MILWAUKEE_SNOW_FACTOR * MM_PER_INCH,
                    tmax_c=None if tmax is None else f_to_c(tmax),
                    tmin_c=None if tmin is None else f_to_c(tmin),
                )
            )
    return days


# Snowfall-to-liquid ratio used to turn Milwaukee's measured snowfall into water.
DAILY_SNOW_RATIO = 10.0
# Snow under this much (mm of new snow) in a day is "trace": no storm.
DAILY_TRACE_SNOW_MM = 2.0


def daily_to_hours(days: Iterable[WeatherDay], seed: int) -> list[WeatherHour]:
    """Spread each day over 24 local hours: a seeded disaggregation, documented here.

    * Temperature: a sine between TMIN at 06:00 and TMAX at 15:00 local.
    * Snow: a day with snowfall ≥ ``DAILY_TRACE_SNOW_MM`` gets one snowfall of
      ``2 + snowfall_in_inches`` hours (capped at 18) starting at a seeded hour,
      its water (snowfall / 10) spread evenly; the label is ``light snow``,
      ``snow`` or ``heavy snow`` by that rate (< 1, < 2.5, ≥ 2.5 mm/h).
    * Rain: the day's precipitation beyond the snow's water, if the day was
      above freezing, spread over the 6 afternoon hours.

    The daily record cannot tell when snow stopped, so a Milwaukee replay counts
    events and deadlines; cessation accuracy is measured on the hourly record.
    """
    rng = random.Random(seed)
    hours: list[WeatherHour] = []
    for d in days:
        tmin = d.tmin_c if d.tmin_c is not None else (d.tmax_c if d.tmax_c is not None else 0.0)
        tmax = d.tmax_c if d.tmax_c is not None else tmin
        snow_mm = d.snowfall_mm or 0.0
        water = snow_mm / DAILY_SNOW_RATIO if snow_mm >= DAILY_TRACE_SNOW_MM else 0.0
        duration = min(18, 2 + round(snow_mm / MM_PER_INCH)) if water else 0
        begin = rng.randrange(0, 24 - duration + 1) if water else 0
        rate = water / duration if duration else 0.0
        label = (
            None
            if not water
            else "light snow"
            if rate < 1.0
            else "snow"
            if rate < 2.5
            else "heavy snow"
        )
        rain_total = max(0.0, (d.precip_mm or 0.0) - water) if tmax > 1.0 else 0.0
        midnight = datetime(d.day.year, d.day.month, d.day.day)  # noqa: DTZ001 - local wall time, zoned below
        for h in range(24):
            # 06:00 → TMIN, 15:00 → TMAX, a cosine between (and back over the night).
            phase = (h - 6) / 9 if 6 <= h <= 15 else (h + 24 - 15 if h < 6 else h - 15) / 15 + 1
            temp = tmin + (tmax - tmin) * (1 - math.cos(math.pi * phase)) / 2
            falling = begin <= h < begin + duration
            rain = rain_total / 6 if 12 <= h < 18 else 0.0
            start = local_to_utc(midnight + timedelta(hours=h))
            if hours and start <= hours[-1].start:
                continue  # 02:00 on the spring-forward day does not exist
            hours.append(
                WeatherHour(
                    start=start,
                    air_temp_c=round(temp, 2),
                    snow_water_mm_h=rate if falling else 0.0,
                    rain_mm_h=rain,
                    snow_label=label if falling else None,
                )
            )
    return hours
