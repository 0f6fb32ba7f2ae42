"""Snowfall to the minute from airport observations: METAR/SPECI remarks, ASOS exports.

Why: the hourly record's labels can place the end of snow only to about ±30
minutes, and a pole simulated from those same labels measures the detector
against its own simulator. An ASOS/AWOS METAR carries, in its remarks, when
each precipitation type began and ended, to the minute (Federal Meteorological
Handbook No. 1, § 12.7.1 (m)):

* ``SNB15E32``: snow began at minute 15 and ended at minute 32;
* ``RAE05SNB05``: rain ended and snow began at minute 05 (a combination group);
* ``SNE1159``: snow ended at 11:59 (the hour is given when it differs from the
  report's own hour);
* ``SNB11E25B42``: began, ended, began again.

Minutes without an hour belong to the report's hour if they are not later
than the report's own minute, otherwise to the hour before (``SNE32`` in a
report at 1453Z is 14:32, ``SNE55`` in that report 13:55): remarks cover the
time since the previous routine report. A SPECI's remarks are repeated by the
next routine report, so events are de-duplicated.

``snow_periods`` turns a station's reports into snowfall intervals: the
remarks' events where there are any, and otherwise the present weather in the
reports' bodies (a begin or end between two reports, known only to that
interval). ``snow_storms`` merges intervals split by lulls of at most two
hours, as the hourly truth does. ``hourly_weather`` makes the *input* side:
one routine report per hour, its present weather as a label and its
one-hour precipitation as the water rate, as an hourly record would have them.

Exports: the Iowa Environmental Mesonet's ASOS download (``station,valid,...,
metar``; ``valid`` in UTC; missing values ``M``; trace ``T``), plain or gzip.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from sidewalk.scenarios.weather import RAIN_MM_H, WeatherHour

# Present-weather phenomena (FMH-1 table 12-2) that are precipitation, and descriptors.
_PRECIP = ("DZ", "RA", "SN", "SG", "IC", "PL", "PE", "GR", "GS", "UP")
_DESCRIPTOR = ("SH", "TS", "FZ", "BL", "DR", "MI", "BC", "PR")
_PHENOMENON = re.compile(rf"[+-]?(?:VC)?(?:{'|'.join(_DESCRIPTOR)})?(?:{'|'.join(_PRECIP)})*")
_TIMES = re.compile(r"(?:[BE](?:\d{4}|\d{2}))+")
_TIME = re.compile(r"([BE])(\d{4}|\d{2})")
_REPORT_TIME = re.compile(r"\b(\d{2})(\d{2})(\d{2})Z\b")
# A body weather group: intensity/proximity, descriptor, phenomena.
_WX_GROUP = re.compile(
    r"^(?:[+-]|VC)?(?:SH|TS|FZ|BL|DR|MI|BC|PR)?(?:DZ|RA|SN|SG|IC|PL|PE|GR|GS|UP|BR|FG|FU|VA|DU|SA|HZ|PY|PO|SQ|FC|SS|DS)+$"
)
# Water equivalent of snow by the report's intensity, mm/h (the usual bands).
SNOW_INTENSITY_MM_H = {"-": 0.5, "": 1.5, "+": 3.0}
MM_PER_INCH = 25.4
# Lulls up to this long stay inside one storm (the hourly truth's rule).
MERGE_GAP = timedelta(hours=2)


class MetarFormatError(ValueError):
    """A report or export that cannot be read; the message names the field."""


@dataclass(frozen=True)
class PrecipEvent:
    """A begin or end of one precipitation type, from a report's remarks."""

    phenomenon: str  # as written: "SN", "SHSN", "-SN", "FZRA" ...
    kind: Literal["begin", "end"]
    at: datetime

    @property
    def snow(self) -> bool:
        return is_snow(self.phenomenon)


@dataclass(frozen=True)
class Report:
    """One METAR or SPECI as exported: when, what it says, and the hourly fields beside it."""

    station: str
    at: datetime  # UTC
    metar: str
    air_temp_c: float | None = None
    precip_mm: float | None = None  # since the last hourly reset; trace = 0.0
    trace: bool = False

    @property
    def routine(self) -> bool:
        """A routine hourly report (ASOS routine reports carry sea-level pressure)."""
        rmk = remarks(self.metar)
        return rmk is not None and re.search(r"\bSLP(?:\d{3}|NO)\b", rmk) is not None

    @property
    def snowing(self) -> bool:
        return present_snow(self.metar) is not None

    def events(self) -> list[PrecipEvent]:
        return precip_events(self.metar, self.at)


@dataclass(frozen=True)
class SnowPeriod:
    """Snow falling from ``begin`` to ``end``; ``end_lo`` < ``end`` when the end is known only
    to the interval between two reports (no remark), else ``end_lo == end`` (to the minute)."""

    begin: datetime
    end: datetime
    end_lo: datetime

    @property
    def end_resolution(self) -> timedelta:
        return max(self.end - self.end_lo, timedelta(minutes=1))


@dataclass(frozen=True)
class SnowStorm:
    """Snow periods merged across lulls of at most ``MERGE_GAP``: the truth for one clock."""

    onset: datetime
    end: datetime
    end_lo: datetime
    snowing_minutes: float
    periods: int

    @property
    def end_resolution(self) -> timedelta:
        return max(self.end - self.end_lo, timedelta(minutes=1))


def is_snow(phenomenon: str) -> bool:
    """Falling snow (``SN``, ``-SN``, ``SHSN``, ``RASN``, ``SNPL`` ...), not blowing or drifting."""
    core = phenomenon.lstrip("+-")
    if core.startswith("VC"):
        return False
    for d in _DESCRIPTOR:
        if core.startswith(d):
            if d in ("BL", "DR"):
                return False  # snow lifted off the ground by wind, not falling
            core = core[len(d) :]
            break
    return any(core[i : i + 2] == "SN" for i in range(0, len(core), 2))


def remarks(metar: str) -> str | None:
    """The text after ``RMK``, or None without remarks."""
    m = re.search(r"\bRMK\b(.*)$", metar)
    return m.group(1).strip() if m else None


def body(metar: str) -> str:
    """The report before ``RMK``."""
    return re.split(r"\bRMK\b", metar, maxsplit=1)[0]


def present_snow(metar: str) -> str | None:
    """The body's weather group with falling snow (``-SN``, ``+SN``, ``-RASN`` ...), or None."""
    for group in body(metar).split():
        if _WX_GROUP.match(group) and is_snow(group):
            return group
    return None


def report_time(metar: str, near: datetime) -> datetime:
    """The report's own ``DDHHMMZ`` time, placed in the month of ``near`` (within a day of it).

    Exports give a full timestamp beside the report; the report itself gives
    only day, hour and minute. Without the group, ``near`` is the time.
    """
    m = _REPORT_TIME.search(body(metar))
    if m is None:
        return near
    day, hour, minute = (int(g) for g in m.groups())
    if hour > 23 or minute > 59:
        raise MetarFormatError(f"report time {m.group(0)} is not a time: {metar!r}")
    for shift in (0, -1, 1):
        month = near.month + shift
        year = near.year + (month - 1) // 12
        month = (month - 1) % 12 + 1
        try:
            candidate = near.replace(year=year, month=month, day=day, hour=hour, minute=minute)
        except ValueError:
            continue
        if abs(candidate - near) <= timedelta(days=1):
            return candidate.replace(second=0, microsecond=0)
    return near


def _event_time(digits: str, issued: datetime) -> datetime:
    """``mm`` or ``hhmm`` of a remark, as the latest such time not after the report."""
    base = issued.replace(second=0, microsecond=0)
    if len(digits) == 2:
        minute = int(digits)
        if minute > 59:
            raise MetarFormatError(f"minute {digits} out of range")
        at = base.replace(minute=minute)
        return at - timedelta(hours=1) if at > base else at
    hour, minute = int(digits[:2]), int(digits[2:])
    if hour > 23 or minute > 59:
        raise MetarFormatError(f"time {digits} out of range")
    at = base.replace(hour=hour, minute=minute)
    return at - timedelta(days=1) if at > base else at


def parse_event_group(group: str, issued: datetime) -> list[PrecipEvent]:
    """One remark group (``SNB15E32``, ``RAE05SNB05``, ``SNE1159``) as events; [] if it is not one.

    The group must be consumed whole by phenomenon + begin/end times, repeated,
    so other remarks (``SNINCR``, ``SLP123``, ``TSNO``) are not events.
    """
    events: list[PrecipEvent] = []
    pos = 0
    while pos < len(group):
        ph = _PHENOMENON.match(group, pos)
        assert ph is not None  # the pattern can match empty
        phenomenon = ph.group(0)
        if not phenomenon.lstrip("+-") or phenomenon.lstrip("+-") in ("VC",):
            return []
        times = _TIMES.match(group, ph.end())
        if times is None:
            return []
        for kind, digits in _TIME.findall(times.group(0)):
            events.append(
                PrecipEvent(
                    phenomenon, "begin" if kind == "B" else "end", _event_time(digits, issued)
                )
            )
        pos = times.end()
    return events


def precip_events(metar: str, issued: datetime) -> list[PrecipEvent]:
    """Begin/end events in a report's remarks, in the order written; ``issued`` is its UTC time."""
    rmk = remarks(metar)
    if rmk is None:
        return []
    events: list[PrecipEvent] = []
    for group in rmk.split():
        events += parse_event_group(group, issued)
    return events


def _number(text: str) -> float | None:
    text = text.strip()
    if text in ("", "M", "null", "NA"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def read_asos_csv(source: Path | str | io.TextIOBase) -> list[Report]:
    """Reports from an ASOS/METAR export with columns ``station``, ``valid`` and ``metar``.

    ``valid`` is read as UTC (``YYYY-MM-DD HH:MM``); ``tmpf`` (°F) and ``p01i``
    (inches, ``T`` = trace) are used when present. Lines starting with ``#``
    (the download's debug header) are skipped; ``.gz`` files are read as gzip.
    Reports come back in time order, exact duplicates dropped.
    """
    if isinstance(source, str | Path):
        path = Path(source)
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    else:
        text = source.read()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    reader = csv.DictReader(lines)
    missing = {"station", "valid", "metar"} - set(reader.fieldnames or [])
    if missing:
        raise MetarFormatError(f"export lacks column(s) {', '.join(sorted(missing))}")
    seen: set[tuple[str, datetime, str]] = set()
    reports: list[Report] = []
    for n, row in enumerate(reader, start=2):
        metar = (row["metar"] or "").strip()
        if not metar or metar in ("M", "null"):
            continue
        try:
            valid = datetime.strptime(row["valid"].strip(), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
        except ValueError as exc:
            raise MetarFormatError(
                f"line {n}: valid {row['valid']!r} is not YYYY-MM-DD HH:MM"
            ) from exc
        tmpf = _number(row.get("tmpf", "") or "")
        p01i = (row.get("p01i", "") or "").strip()
        key = (row["station"], valid, metar)
        if key in seen:
            continue
        seen.add(key)
        reports.append(
            Report(
                station=row["station"].strip(),
                at=report_time(metar, valid),
                metar=metar,
                air_temp_c=None if tmpf is None else round((tmpf - 32) * 5 / 9, 2),
                precip_mm=0.0 if p01i == "T" else _mm(_number(p01i)),
                trace=p01i == "T",
            )
        )
    reports.sort(key=lambda r: r.at)
    return reports


def _mm(inches: float | None) -> float | None:
    return None if inches is None else round(inches * MM_PER_INCH, 2)


def snow_periods(reports: Sequence[Report]) -> list[SnowPeriod]:
    """Snowfall intervals at one station, to the minute where the remarks say.

    Each report's remark events are applied in time order (de-duplicated: a
    SPECI's events reappear in the next routine report), then its body: snow
    in the body with no open period opens one at the report (its begin was
    not remarked); no snow in the body while a period is open closes it, the
    end known only to lie between the last report or event that showed snow
    and this report. A later remark ending snow inside that interval sharpens
    it to the minute.
    """
    periods: list[SnowPeriod] = []
    open_at: datetime | None = None
    last_snow: datetime | None = None  # last moment known to be snowing
    seen: set[tuple[str, datetime]] = set()
    for report in reports:
        events = sorted(
            (e for e in report.events() if e.snow), key=lambda e: (e.at, e.kind == "begin")
        )
        for e in events:
            if (e.kind, e.at) in seen:
                continue
            seen.add((e.kind, e.at))
            if e.kind == "begin":
                if open_at is None:
                    open_at = e.at
                last_snow = max(last_snow or e.at, e.at)
            elif open_at is not None:
                if e.at >= open_at:
                    periods.append(SnowPeriod(open_at, e.at, e.at))
                open_at = None
            elif periods and periods[-1].end_lo <= e.at <= periods[-1].end:
                last = periods[-1]  # the remark places an end the body bracketed
                periods[-1] = SnowPeriod(last.begin, e.at, e.at)
        if report.snowing:
            if open_at is None:
                open_at = report.at
            last_snow = report.at
        elif open_at is not None and last_snow is not None and report.at > last_snow:
            periods.append(SnowPeriod(open_at, report.at, max(last_snow, open_at)))
            open_at = None
    if open_at is not None and last_snow is not None:
        periods.append(SnowPeriod(open_at, last_snow, last_snow))
    return [p for p in periods if p.end >= p.begin]


def snow_storms(periods: Iterable[SnowPeriod], merge_gap: timedelta = MERGE_GAP) -> list[SnowStorm]:
    """Periods merged across lulls up to ``merge_gap``; the storm ends with its last period."""
    storms: list[SnowStorm] = []
    current: list[SnowPeriod] = []
    for p in sorted(periods, key=lambda p: p.begin):
        if current and p.begin - max(q.end for q in current) > merge_gap:
            storms.append(_storm(current))
            current = []
        current.append(p)
    if current:
        storms.append(_storm(current))
    return storms


def _storm(periods: list[SnowPeriod]) -> SnowStorm:
    last = max(periods, key=lambda p: p.end)
    minutes = sum((p.end - p.begin).total_seconds() / 60 for p in periods)
    return SnowStorm(periods[0].begin, last.end, last.end_lo, minutes, len(periods))


def hourly_reports(reports: Sequence[Report]) -> list[Report]:
    """One report per hour, as an hourly record keeps: the routine one, else the hour's last.

    Hours are the routine reports' hours: a report at 14:51 is the 15:00 hour's
    (reports from hh:45 to hh+1:44 share an hour).
    """
    by_hour: dict[datetime, Report] = {}
    for r in reports:
        hour = (r.at + timedelta(minutes=15)).replace(minute=0, second=0, microsecond=0)
        kept = by_hour.get(hour)
        if (
            kept is None
            or (r.routine and not kept.routine)
            or (r.routine == kept.routine and r.at > kept.at)
        ):
            by_hour[hour] = r
    return [by_hour[h] for h in sorted(by_hour)]


def hourly_weather(reports: Sequence[Report]) -> list[WeatherHour]:
    """The hourly record an hourly source would give, for the sensor simulator.

    Per hour (``hourly_reports``): the observation time, air temperature, the
    body's snow group as the label (``-SN`` …), and as the snow's water rate the
    hour's measured precipitation (``p01i``) when above trace, else the
    intensity band (light 0.5, moderate 1.5, heavy 3 mm/h). Rain likewise when
    the body reports rain or drizzle without snow. Nothing here reads the
    remarks' begin/end times: those are the truth.
    """
    hours: list[WeatherHour] = []
    temp = 0.0
    for r in hourly_reports(reports):
        if r.air_temp_c is not None:
            temp = r.air_temp_c
        group = present_snow(r.metar)
        measured = r.precip_mm if r.precip_mm and r.precip_mm > 0 else None
        snow = rain = 0.0
        if group is not None:
            intensity = group[0] if group[0] in "+-" else ""
            snow = min(measured or SNOW_INTENSITY_MM_H[intensity], 10.0)
        elif raining(r.metar):
            rain = min(measured or RAIN_MM_H["light rain"], 50.0)
        hours.append(WeatherHour(r.at, temp, snow, rain, group))
    return hours


def raining(metar: str) -> bool:
    return any(
        _WX_GROUP.match(g) and ("RA" in g or "DZ" in g) and not g.startswith("VC")
        for g in body(metar).split()
    )
