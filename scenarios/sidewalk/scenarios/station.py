"""Bring your own weather: a village's station file, NOAA ISD / GHCN-Daily, an airport export.

``load_station_file(path, fmt)`` reads one file into a ``StationRecord`` (hours
for hourly files, days for GHCN-Daily), ``station_winter(record, winter)``
cuts the snow season out of it (the one the file covers, or ``--winter``'s)
as the ``WeatherHour``s the pole simulator takes, with the record's own
snowfall for that season. Every problem with a file is a ``WeatherFileError``
whose message is one line naming the file, the column or the date.

Formats (``docs/replay.md`` documents them with examples):

* ``csv``: the station's own readings. Columns ``time`` (ISO 8601 with a UTC
  offset, or local times with a ``tz`` column, a ``# tz: Area/City`` line or
  ``--tz``), ``air_temp_c``/``air_temp_f``, ``precip_mm``/``precip_in`` (fallen
  since the row before), ``snow_depth_mm``/``snow_depth_cm``/``snow_depth_in``,
  optional ``weather`` (METAR codes ``-SN`` or words ``light snow``). Rows are
  merged into clock hours.
* ``isd``: NOAA Global Hourly (ISD) CSV from NCEI's access service: ``DATE``
  (UTC; extracts' ``datetime``, ``date_time``, ``timestamp`` … read too),
  ``REPORT_TYPE``, ``TMP`` (``-0056,1``: tenths of °C, quality), ``AA1``
  (``01,0005,9,5``: hours, tenths of mm, condition (2 = trace), quality),
  ``AJ1`` (``0010,1,5,…``: snow depth cm, condition, quality), ``AL1``
  (``24,012,1,5``: new snow over hours, cm: the record's own snowfall),
  ``MW1`` (``71,1``: WMO 4677 present weather, quality). Missing values
  (``+9999``, ``9999``) and values with quality codes 2, 3, 6, 7 (suspect or
  erroneous) are dropped; summary rows (``SOD``, ``SOM``) are skipped. A
  routine report's one-hour amount is the hour before it, observed at that
  hour's middle.
* ``ghcn-daily``: NOAA's per-station GHCN-Daily CSV, wide (``STATION``,
  ``DATE``, ``PRCP``, ``SNOW``, ``SNWD``, ``TMAX``, ``TMIN``, as the access
  service's ``USW00014839.csv``: tenths of mm, mm, mm, tenths of °C; or a
  Climate Data Online export in inches/°F or mm/°C, told apart by its
  decimals) or long (``by_station``: ``ID,YYYYMMDD,ELEMENT,VALUE,…``, no
  header). The bundled Milwaukee conversion (its SNOW/SNWD × 10 quirk) is
  recognised only as that very file.
* ``metar``: an ASOS/METAR export (``station,valid,…,metar``), read by
  ``metar.read_asos_csv`` and ``metar.hourly_weather``; the remarks' 6-hour
  snowfall (``931sss``) is the record's own snowfall, their ``4/sss`` depth.

A trace (``T`` in a station CSV, AA1 condition 2) is some precipitation, too
little to measure: ``TRACE_MM`` of water, snow in the cold, rain in the warm.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sidewalk.core.units import MM_PER_INCH, f_to_c
from sidewalk.scenarios.weather import (
    SNOW_WATER_MM_H,
    WeatherDataMissing,
    WeatherDay,
    WeatherHour,
    daily_to_hours,
    load_milwaukee,
    record_path,
    winter_bounds,
)

Format = Literal["csv", "isd", "ghcn-daily", "metar"]
FORMATS: tuple[str, ...] = get_args(Format)
# Snow at or below this air temperature when the record names no weather (°C).
SNOW_MAX_AIR_C = 1.0
# A rise in reported depth this large within an hour, in the cold, is snowfall (mm).
DEPTH_RISE_SNOW_MM = 5.0
SNOW_TO_WATER = 10.0
HALF_HOUR = timedelta(minutes=30)


class WeatherFileError(ValueError):
    """A weather file that cannot be replayed as asked; the message is one line."""


@dataclass(frozen=True)
class StationRecord:
    """One weather file, read: hourly (``hours``) or daily (``days``), in UTC and SI units.

    ``depth_rises`` are (UTC time, mm) rises of the reported snow depth, for
    the record's snowfall when it has no snowfall column.
    """

    path: Path
    fmt: Format
    station: str
    hours: tuple[WeatherHour, ...] = ()
    days: tuple[WeatherDay, ...] = ()
    depth_rises: tuple[tuple[datetime, float], ...] = ()
    has_depth: bool = False
    # The record's own snowfall amounts (UTC time, mm), when it has a snowfall field.
    snowfall: tuple[tuple[datetime, float], ...] = ()

    @property
    def daily(self) -> bool:
        return self.fmt == "ghcn-daily"

    def span(self) -> tuple[date, date]:
        """First and last date in the record (UTC dates for hourly files)."""
        if self.daily:
            return self.days[0].day, self.days[-1].day
        return self.hours[0].start.date(), self.hours[-1].start.date()

    def winters(self) -> list[str]:
        """The snow seasons (October to April) the record has any data in, oldest first."""
        dates = {d.day for d in self.days} if self.daily else {h.start.date() for h in self.hours}
        found = set()
        for d in dates:
            if d.month >= 10:
                found.add(d.year)
            elif d.month < 5:
                found.add(d.year - 1)
        return [f"{y}-{(y + 1) % 100:02d}" for y in sorted(found)]


@dataclass(frozen=True)
class StationWinter:
    """A season cut from a station file: the hours to simulate and the record's own snowfall."""

    winter: str
    label: str  # "file.csv (csv, KMSP)"
    hours: list[WeatherHour]
    hourly: bool
    record_snowfall_mm: float | None
    snowfall_basis: str


# -- sniffing --------------------------------------------------------------------------


def _text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise WeatherFileError(f"{path}: cannot read the file ({exc.strerror})") from None
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except OSError:
            raise WeatherFileError(f"{path}: not a gzip file") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise WeatherFileError(f"{path}: not UTF-8 text (a CSV file is expected)") from None


def _header(text: str) -> list[str]:
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            return [c.strip().strip('"').lower() for c in next(csv.reader([line]))]
    return []


_LONG_GHCN = re.compile(r"^[A-Z0-9]{11},\d{8},[A-Z0-9]{4},")


def sniff(path: Path, text: str) -> Format:
    """The format from the file's header; ``WeatherFileError`` naming what it found otherwise."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if _LONG_GHCN.match(first):
        return "ghcn-daily"
    cols = set(_header(text))
    if {"station", "valid", "metar"} <= cols:
        return "metar"
    isd = set(_isd_columns(list(cols)).values())
    if {"DATE", "TMP"} <= isd and isd & {"REPORT_TYPE", "AA1", "STATION"}:
        return "isd"
    if "date" in cols and cols & {"prcp", "snow", "snwd", "tmax", "tmin"}:
        return "ghcn-daily"
    if "time" in cols:
        return "csv"
    shown = ", ".join(sorted(cols)[:8]) or "nothing"
    raise WeatherFileError(
        f"{path}: not a weather file this reads (header has {shown}); "
        "give --format csv|isd|ghcn-daily|metar or see docs/replay.md"
    )


def load_station_file(path: Path, fmt: str | None = None, tz: str | None = None) -> StationRecord:
    """Read ``path`` as ``fmt`` (sniffed when None)."""
    if fmt is not None and fmt not in FORMATS:
        raise WeatherFileError(f"--format {fmt!r}: one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise WeatherFileError(f"{path}: no such file")
    text = _text(path)
    # Ignored: ``fmt`` was checked against FORMATS above; ``Format`` is their literal.
    chosen: Format = fmt or sniff(path, text)  # type: ignore[assignment]
    if chosen == "csv":
        record = _read_csv(path, text, tz)
    elif chosen == "isd":
        record = _read_isd(path, text)
    elif chosen == "ghcn-daily":
        record = _read_ghcn(path, text)
    else:
        record = _read_metar(path, text)
    if not (record.days or record.hours):
        raise WeatherFileError(f"{path}: no usable readings in the file ({chosen})")
    return record


# -- seasons ---------------------------------------------------------------------------


def station_winter(record: StationRecord, winter: str | None, seed: int) -> StationWinter:
    """The season to replay: ``winter``, or the only one the file covers."""
    covered = record.winters()
    first, last = record.span()
    name = record.path.name
    if not covered:
        raise WeatherFileError(
            f"{name}: its dates ({first} to {last}) cover no snow season (October to April)"
        )
    if winter is None:
        if len(covered) > 1:
            raise WeatherFileError(
                f"{name} covers {len(covered)} winters ({', '.join(covered)}): "
                "pick one with --winter"
            )
        winter = covered[0]
    try:
        start, end = winter_bounds(winter)
    except ValueError as exc:
        raise WeatherFileError(f"--winter: {exc}") from None
    if winter not in covered:
        raise WeatherFileError(
            f"{name} does not cover winter {winter}: its dates run {first} to {last} "
            f"(winters {', '.join(covered)})"
        )
    label = f"{name} ({record.fmt}{', ' + record.station if record.station else ''})"
    if record.daily:
        days = [d for d in record.days if start <= d.day < end]
        snow = [d.snowfall_mm for d in days if d.snowfall_mm is not None]
        return StationWinter(
            winter,
            label,
            daily_to_hours(days, seed),
            False,
            sum(snow) if snow else None,
            "the daily SNOW column",
        )
    lo = datetime(start.year, start.month, start.day, tzinfo=UTC)
    hi = datetime(end.year, end.month, end.day, tzinfo=UTC)
    hours = [h for h in record.hours if lo <= h.start < hi]
    if record.snowfall:
        fallen = sum(mm for at, mm in record.snowfall if lo <= at < hi)
        return StationWinter(
            winter, label, hours, True, fallen, "the record's own snowfall amounts"
        )
    total = sum(mm for at, mm in record.depth_rises if lo <= at < hi)
    return StationWinter(
        winter,
        label,
        hours,
        True,
        total if record.has_depth else None,
        "the rises in the reported snow depth"
        if record.has_depth
        else "no snow depth in the record",
    )


# -- hourly assembly (csv, isd) --------------------------------------------------------


@dataclass
class _Bucket:
    temps: list[float]
    precip: float | None = None
    depth: float | None = None
    snow_label: str | None = None
    snow_rate: float = 0.0
    rain: bool = False
    named: bool = False  # the record said what fell (a weather code or word)
    trace: bool = False  # a trace: precipitation fell, too little to measure
    snowfall: tuple[int, float] | None = None  # the record's new snow: (period h, mm)


def _assemble(
    buckets: dict[datetime, _Bucket], path: Path
) -> tuple[list[WeatherHour], list[tuple[datetime, float]], bool]:
    """Hours from per-hour buckets (key = the hour's observation time, UTC)."""
    hours: list[WeatherHour] = []
    rises: list[tuple[datetime, float]] = []
    last_depth: float | None = None
    temp: float | None = None
    has_depth = False
    for at in sorted(buckets):
        b = buckets[at]
        if b.temps:
            temp = sum(b.temps) / len(b.temps)
        if temp is None:
            continue  # nothing to say about the air yet
        rise = 0.0
        if b.depth is not None:
            has_depth = True
            if last_depth is not None and b.depth > last_depth:
                rise = b.depth - last_depth
                rises.append((at, rise))
            last_depth = b.depth
        precip = b.precip or 0.0
        if precip == 0 and b.trace:
            precip = TRACE_MM  # something fell: in the cold, a trace of snow
        label = b.snow_label
        snow = 0.0
        if label is not None:
            snow = precip if precip > 0 else b.snow_rate or SNOW_WATER_MM_H["light snow"]
        elif not b.named and temp <= SNOW_MAX_AIR_C and (precip > 0 or rise >= DEPTH_RISE_SNOW_MM):
            snow = precip if precip > 0 else rise / SNOW_TO_WATER
            label = "light snow" if snow < 1.0 else "snow" if snow < 2.5 else "heavy snow"
        rain = 0.0
        if label is None and precip > 0 and (b.rain or temp > SNOW_MAX_AIR_C or b.named):
            rain = precip
        hours.append(WeatherHour(at, round(temp, 2), min(snow, 10.0), min(rain, 50.0), label))
    if not hours:
        raise WeatherFileError(f"{path}: no row has a usable air temperature")
    return hours, rises, has_depth


# -- csv -------------------------------------------------------------------------------

_UNITS: dict[str, dict[str, float]] = {
    "air_temp": {"c": 1.0, "f": 1.0},
    "precip": {"mm": 1.0, "in": MM_PER_INCH},
    "snow_depth": {"mm": 1.0, "cm": 10.0, "in": MM_PER_INCH},
}
_TZ_LINE = re.compile(r"^#\s*tz\s*[:=]\s*(\S+)", re.IGNORECASE)


def _unit_column(cols: Sequence[str], quantity: str, path: Path) -> tuple[str, str] | None:
    """(column, unit) for a quantity; a column without a unit is an error naming the choices."""
    choices = _UNITS[quantity]
    for col in cols:
        if col.startswith(quantity + "_") and col[len(quantity) + 1 :] in choices:
            return col, col[len(quantity) + 1 :]
    if quantity in cols or any(c.startswith(quantity + "_") for c in cols):
        bad = next(c for c in cols if c == quantity or c.startswith(quantity + "_"))
        named = " or ".join(f"{quantity}_{u}" for u in choices)
        raise WeatherFileError(f"{path}: column {bad!r} does not state its unit: name it {named}")
    return None


def _zone(name: str, path: Path) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise WeatherFileError(f"{path}: time zone {name!r} is not an IANA zone name") from None


def _number(text: str | None) -> float | None:
    text = (text or "").strip()
    if text in {"", "NA", "M", "null", "nan"}:
        return None
    return float(text)


def _weather_word(text: str) -> tuple[str | None, float, bool]:
    """(snow label, snow water mm/h, rain) from a METAR group or plain words."""
    from sidewalk.scenarios.metar import SNOW_INTENSITY_MM_H, is_snow

    text = text.strip()
    lower = text.lower()
    if not text:
        return None, 0.0, False
    for group in text.split():
        if re.fullmatch(r"[+-]?(?:VC)?[A-Z]{2,8}", group) and is_snow(group):
            intensity = group[0] if group[0] in "+-" else ""
            return group, SNOW_INTENSITY_MM_H[intensity], False
    if "snow" in lower and not re.search(r"blowing|drifting", lower):
        rate = SNOW_WATER_MM_H.get(
            lower, 3.0 if "heavy" in lower else 0.5 if "light" in lower else 1.5
        )
        return lower, rate, False
    rain = bool(re.search(r"rain|drizzle|\bRA\b|\bDZ\b|[+-]?(?:FZ|SH)?(?:RA|DZ)\b", text, re.I))
    return None, 0.0, rain


def _read_csv(  # noqa: PLR0912, PLR0915 - one pass over the rows, each column checked once
    path: Path, text: str, tz: str | None
) -> StationRecord:
    lines = text.splitlines()
    zone_name = tz
    for line in lines:
        m = _TZ_LINE.match(line)
        if m and zone_name is None:
            zone_name = m.group(1)
    rows = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    reader = csv.DictReader(rows)
    cols = [c.strip().lower() for c in reader.fieldnames or []]
    reader.fieldnames = cols
    if "time" not in cols:
        raise WeatherFileError(f"{path}: no 'time' column (ISO 8601 with a UTC offset)")
    temp_col = _unit_column(cols, "air_temp", path)
    precip_col = _unit_column(cols, "precip", path)
    depth_col = _unit_column(cols, "snow_depth", path)
    if temp_col is None:
        raise WeatherFileError(f"{path}: no air temperature column (air_temp_c or air_temp_f)")
    if precip_col is None and depth_col is None:
        raise WeatherFileError(
            f"{path}: no precipitation or snow depth column "
            "(precip_mm, precip_in, snow_depth_mm, snow_depth_cm or snow_depth_in)"
        )
    weather_col = next((c for c in ("weather", "present_weather") if c in cols), None)
    default_zone = _zone(zone_name, path) if zone_name else None
    buckets: dict[datetime, _Bucket] = {}
    for n, row in enumerate(reader, start=2):
        try:
            at = datetime.fromisoformat(row["time"].strip())
        except ValueError:
            raise WeatherFileError(
                f"{path}: row {n}: time {row['time']!r} is not ISO 8601"
            ) from None
        if at.tzinfo is None:
            zone = _zone(row["tz"].strip(), path) if row.get("tz") else default_zone
            if zone is None:
                raise WeatherFileError(
                    f"{path}: row {n}: time {row['time']!r} has no UTC offset; "
                    "add one, a tz column, a '# tz: America/Chicago' line or --tz"
                )
            at = at.replace(tzinfo=zone)
        at = at.astimezone(UTC)
        try:
            temp = _number(row.get(temp_col[0]))
            precip_text = (row.get(precip_col[0]) or "").strip() if precip_col else ""
            trace = precip_text.upper() in {"T", "TRACE"}
            precip = 0.0 if trace else _number(precip_text) if precip_col else None
            depth = _number(row.get(depth_col[0])) if depth_col else None
        except ValueError as exc:
            raise WeatherFileError(f"{path}: row {n}: {exc}") from None
        # A reading closes the interval before it: 06:00 belongs to 05:00-06:00.
        hour = (at - timedelta(microseconds=1)).replace(minute=0, second=0, microsecond=0)
        b = buckets.setdefault(hour + HALF_HOUR, _Bucket([]))
        if temp is not None:
            b.temps.append(temp if temp_col[1] == "c" else f_to_c(temp))
        if precip is not None and precip_col:
            b.precip = (b.precip or 0.0) + precip * _UNITS["precip"][precip_col[1]]
            b.trace = b.trace or trace
        if depth is not None and depth_col:
            b.depth = depth * _UNITS["snow_depth"][depth_col[1]]
        if weather_col and row.get(weather_col, "").strip():
            label, rate, rain = _weather_word(row[weather_col])
            b.named = True
            b.rain = b.rain or rain
            if label is not None and rate >= b.snow_rate:
                b.snow_label, b.snow_rate = label, rate
    hours, rises, has_depth = _assemble(buckets, path)
    return StationRecord(path, "csv", "", tuple(hours), (), tuple(rises), has_depth)


# -- isd -------------------------------------------------------------------------------

_BAD_QUALITY = {"2", "3", "6", "7"}
# WMO code table 4677 (MW1): falling snow, with its water rate by intensity (mm/h).
_MW_SNOW: dict[int, tuple[str, float]] = {
    22: ("snow", 0.5), 26: ("shower snow", 0.5), 68: ("light rain and snow", 0.5),
    69: ("rain and snow", 1.5), 70: ("light snow", 0.5), 71: ("light snow", 0.5),
    72: ("snow", 1.5), 73: ("snow", 1.5), 74: ("heavy snow", 3.0), 75: ("heavy snow", 3.0),
    77: ("snow grains", 0.5), 83: ("light rain and snow", 0.5), 84: ("rain and snow", 1.5),
    85: ("light shower snow", 0.5), 86: ("shower snow", 1.5), 87: ("snow pellets", 0.5),
    88: ("snow pellets", 1.5),
}  # fmt: skip
_MW_RAIN = set(range(20, 22)) | set(range(24, 26)) | set(range(50, 68)) | {80, 81, 82, 91, 92}


def _isd_parts(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",")]


def _isd_tmp(value: str | None) -> float | None:
    parts = _isd_parts(value)
    if len(parts) < 2 or parts[0] in {"", "+9999", "9999"} or parts[1] in _BAD_QUALITY:
        return None
    return int(parts[0]) / 10


# Names published extracts give the ISD columns (matched case-, space- and dash-blind).
_ISD_ALIASES: dict[str, tuple[str, ...]] = {
    "DATE": ("DATE", "DATETIME", "DATE_TIME", "TIMESTAMP", "OBS_TIME", "TIME", "VALID"),
    "REPORT_TYPE": ("REPORT_TYPE", "REPORTTYPE", "TYPE"),
    "STATION": ("STATION", "STATION_ID", "STATIONID", "USAF_WBAN", "ID"),
}
# AA1 condition code 2: a trace, precipitation too little to measure (ISD format
# document, LIQUID-PRECIPITATION). Taken as this much water: under the 0.01 in
# (0.25 mm) a US gauge first reports.
_ISD_TRACE = "2"
TRACE_MM = 0.1


def _isd_name(column: str) -> str:
    return re.sub(r"[\s\-]+", "_", column.strip().strip('"').upper())


def _isd_columns(names: Sequence[str]) -> dict[str, str]:
    """Each file column's ISD name: the aliases of DATE, REPORT_TYPE and STATION resolved."""
    out: dict[str, str] = {}
    for name in names:
        plain = _isd_name(name)
        canonical = next((k for k, v in _ISD_ALIASES.items() if plain in v), plain)
        if canonical not in out.values():  # the first of two aliases wins
            out[name] = canonical
    return out


def _isd_time(text: str) -> datetime:
    """A report's UTC time: ISO 8601, with or without ``T``, a ``Z`` or an offset."""
    at = datetime.fromisoformat(text.strip().replace(" ", "T", 1))
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _read_isd(path: Path, text: str) -> StationRecord:  # noqa: PLR0912, PLR0915 - one branch per group
    reader = csv.DictReader(io.StringIO(text))
    names = _isd_columns(reader.fieldnames or [])
    cols = set(names.values())
    if "DATE" not in cols or "TMP" not in cols:
        raise WeatherFileError(
            f"{path}: an ISD file needs DATE and TMP columns (DATE may be named "
            "datetime, date_time or timestamp)"
        )
    if not cols & {"AA1", "AJ1", "MW1"}:
        raise WeatherFileError(
            f"{path}: no precipitation (AA1), snow depth (AJ1) or present weather (MW1) column"
        )
    buckets: dict[datetime, _Bucket] = {}
    routine_precip: dict[datetime, float] = {}
    # The time of the report whose hour a bucket is: the routine one, else the bucket's last.
    ends: dict[datetime, tuple[bool, datetime]] = {}
    station = ""
    for n, raw in enumerate(reader, start=2):
        row = {names[k]: v for k, v in raw.items() if k in names}
        kind = (row.get("REPORT_TYPE") or "").strip()
        if kind.startswith(("SOD", "SOM")):
            continue
        station = station or (row.get("STATION") or "").strip()
        try:
            at = _isd_time(row["DATE"])
            # Reports from hh:45 to hh+1:44 share one hour (as metar.hourly_reports).
            hour = (at + timedelta(minutes=15)).replace(minute=0, second=0, microsecond=0)
            routine = kind == "FM-15"
            kept = ends.get(hour)
            if kept is None or (routine, at) >= kept:
                ends[hour] = (routine, at)
            b = buckets.setdefault(hour, _Bucket([]))
            temp = _isd_tmp(row.get("TMP"))
            if temp is not None:
                b.temps.append(temp)
            aa = _isd_parts(row.get("AA1"))
            if len(aa) >= 4 and aa[1] not in {"", "9999"} and aa[3] not in _BAD_QUALITY:
                period, mm = int(aa[0] or 99), int(aa[1]) / 10
                if period == 1:
                    if mm == 0 and aa[2] == _ISD_TRACE:
                        b.trace = True
                    if routine:
                        routine_precip[hour] = mm
                    b.precip = max(b.precip or 0.0, mm)
            aj = _isd_parts(row.get("AJ1"))
            if len(aj) >= 3 and aj[0] not in {"", "9999"} and aj[2] not in _BAD_QUALITY:
                b.depth = int(aj[0]) * 10.0
            al = _isd_parts(row.get("AL1"))
            if len(al) >= 4 and al[1] not in {"", "999"} and al[3] not in _BAD_QUALITY:
                # SNOW-ACCUMULATION: period (hours), new snow (cm); the longest period kept.
                period_h, cm = int(al[0] or 0), int(al[1])
                if b.snowfall is None or period_h >= b.snowfall[0]:
                    b.snowfall = (period_h, cm * 10.0)
            mw = _isd_parts(row.get("MW1"))
            if mw[0].isdigit() and (len(mw) < 2 or mw[1] not in _BAD_QUALITY):
                code = int(mw[0])
                b.named = True
                if code in _MW_SNOW:
                    label, rate = _MW_SNOW[code]
                    if rate >= b.snow_rate:
                        b.snow_label, b.snow_rate = label, rate
                b.rain = b.rain or code in _MW_RAIN
        except (ValueError, KeyError) as exc:
            raise WeatherFileError(f"{path}: row {n}: {exc}") from None
    for hour, mm in routine_precip.items():
        buckets[hour].precip = mm  # the routine report's one-hour total is the hour's
        buckets[hour].trace = buckets[hour].trace and mm == 0
    # A report's one-hour amount covers the hour *before* it: the hour ending at the
    # routine report (13:53-14:53 for the 14:53 report), observed at its middle (14:23).
    covered = {ends[hour][1] - HALF_HOUR: b for hour, b in buckets.items()}
    hours, rises, has_depth = _assemble(covered, path)
    snowfall = _isd_snowfall(covered)
    return StationRecord(path, "isd", station, tuple(hours), (), tuple(rises), has_depth, snowfall)


def _isd_snowfall(buckets: dict[datetime, _Bucket]) -> tuple[tuple[datetime, float], ...]:
    """The record's own new snow (AL1), each amount once: a report's period that
    ends within an earlier-counted one (a 6-h total inside a 24-h total) is not
    counted again. Empty when the record has no AL1 amounts."""
    out: list[tuple[datetime, float]] = []
    counted_to: datetime | None = None
    for at in sorted(buckets, reverse=True):  # latest first: the longest totals are at day ends
        fall = buckets[at].snowfall
        if fall is None:
            continue
        period_h, mm = fall
        if counted_to is not None and at >= counted_to:
            continue
        out.append((at, mm))
        counted_to = at - timedelta(hours=max(period_h, 1)) + HALF_HOUR
    return tuple(sorted(out))


# -- ghcn-daily ------------------------------------------------------------------------

_ELEMENTS = ("PRCP", "SNOW", "SNWD", "TMAX", "TMIN")


def _is_bundled_milwaukee(path: Path) -> bool:
    try:
        return path.resolve().samefile(record_path("milwaukee"))
    except (WeatherDataMissing, OSError):
        return False


def _ghcn_day(day: date, values: dict[str, float | None], scale: dict[str, float]) -> WeatherDay:
    def get(element: str) -> float | None:
        v = values.get(element)
        return None if v is None else v * scale[element]

    tmax, tmin = get("TMAX"), get("TMIN")
    if scale.get("F"):
        tmax = None if tmax is None else f_to_c(tmax)
        tmin = None if tmin is None else f_to_c(tmin)
    return WeatherDay(day, get("PRCP"), get("SNOW"), get("SNWD"), tmax, tmin)


# GHCN-Daily's own units: tenths of mm, mm, mm, tenths of °C.
_RAW = {"PRCP": 0.1, "SNOW": 1.0, "SNWD": 1.0, "TMAX": 0.1, "TMIN": 0.1}
_CDO_METRIC = {"PRCP": 1.0, "SNOW": 1.0, "SNWD": 1.0, "TMAX": 1.0, "TMIN": 1.0}
_CDO_STANDARD = {e: MM_PER_INCH for e in ("PRCP", "SNOW", "SNWD")} | {
    "TMAX": 1.0,
    "TMIN": 1.0,
    "F": 1.0,
}


def _read_ghcn(path: Path, text: str) -> StationRecord:
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if _LONG_GHCN.match(first):
        return _read_ghcn_long(path, text)
    cols = _header(text)
    if cols[:5] == ["year", "month", "day", "date", "day_of_year"]:
        if _is_bundled_milwaukee(path):  # the one file whose SNOW/SNWD quirk is known
            corrected = load_milwaukee(date.min, date.max, path)
            return StationRecord(path, "ghcn-daily", "USW00014839", days=tuple(corrected))
        raise WeatherFileError(
            f"{path}: a third-party conversion of GHCN-Daily whose SNOW/SNWD units are not "
            "stated; use NOAA's own per-station CSV (STATION, DATE, PRCP, SNOW, SNWD, TMAX, TMIN)"
        )
    reader = csv.DictReader(io.StringIO(text))
    reader.fieldnames = [c.strip().upper() for c in reader.fieldnames or []]
    if "DATE" not in reader.fieldnames:
        raise WeatherFileError(f"{path}: a GHCN-Daily file needs a DATE column")
    present = [e for e in _ELEMENTS if e in reader.fieldnames]
    if not {"SNOW", "PRCP"} & set(present) or not {"TMAX", "TMIN"} & set(present):
        raise WeatherFileError(
            f"{path}: no usable columns: needs SNOW or PRCP, and TMAX or TMIN (has "
            f"{', '.join(present) or 'none of them'})"
        )
    rows = list(reader)
    texts = [(r.get(e) or "").strip() for r in rows for e in present]
    decimals = [t.split(".", 1)[1] for t in texts if "." in t]
    if not decimals:
        scale = _RAW
    elif any(len(t.split(".")[-1]) == 2 for t in (r.get("PRCP") or "" for r in rows) if "." in t):
        scale = _CDO_STANDARD  # inches to the hundredth, °F
    else:
        scale = _CDO_METRIC
    days: list[WeatherDay] = []
    station = ""
    for n, row in enumerate(rows, start=2):
        station = station or (row.get("STATION") or "").strip()
        try:
            day = date.fromisoformat(row["DATE"].strip())
            values = {e: _number(row.get(e)) for e in present}
        except ValueError as exc:
            raise WeatherFileError(f"{path}: row {n}: {exc}") from None
        days.append(_ghcn_day(day, values, scale))
    days.sort(key=lambda d: d.day)
    return StationRecord(path, "ghcn-daily", station, days=tuple(days))


def _read_ghcn_long(path: Path, text: str) -> StationRecord:
    by_day: dict[date, dict[str, float | None]] = {}
    station = ""
    for n, parts in enumerate(csv.reader(io.StringIO(text)), start=1):
        if len(parts) < 4 or parts[2] not in _ELEMENTS:
            continue
        if len(parts) > 5 and parts[5].strip():
            continue  # a quality flag: the value failed a check
        station = station or parts[0]
        try:
            ymd = parts[1]
            day = date(int(ymd[:4]), int(ymd[4:6]), int(ymd[6:]))
            value = None if parts[3].strip() == "-9999" else float(parts[3])
        except ValueError as exc:
            raise WeatherFileError(f"{path}: line {n}: {exc}") from None
        by_day.setdefault(day, {})[parts[2]] = value
    present = {e for v in by_day.values() for e in v}
    if not {"SNOW", "PRCP"} & present or not {"TMAX", "TMIN"} & present:
        raise WeatherFileError(f"{path}: no usable elements: needs SNOW or PRCP, and TMAX or TMIN")
    days = [_ghcn_day(d, by_day[d], _RAW) for d in sorted(by_day)]
    return StationRecord(path, "ghcn-daily", station, days=tuple(days))


# -- metar -----------------------------------------------------------------------------


# METAR remarks (FMH-1 § 12.7.2): ``931sss`` snowfall in the last 6 h, tenths of an inch;
# ``4/sss`` snow depth, whole inches (augmented stations, 00/06/12/18 UTC reports).
_METAR_SNOWFALL = re.compile(r"(?<!\S)931(\d{3})(?!\S)")
_METAR_DEPTH = re.compile(r"(?<!\S)4/(\d{3})(?!\S)")


def _read_metar(path: Path, text: str) -> StationRecord:
    from sidewalk.scenarios.metar import MetarFormatError, hourly_weather, read_asos_csv, remarks

    try:
        reports = read_asos_csv(io.StringIO(text))
    except MetarFormatError as exc:
        raise WeatherFileError(f"{path}: {exc}") from None
    hours = hourly_weather(reports)
    station = reports[0].station if reports else ""
    snowfall: dict[datetime, float] = {}  # by report time: a SPECI repeats nothing here
    rises: list[tuple[datetime, float]] = []
    last_depth: float | None = None
    for r in reports:
        rmk = remarks(r.metar) or ""
        fall = _METAR_SNOWFALL.search(rmk)
        if fall is not None:
            snowfall[r.at] = int(fall.group(1)) / 10 * MM_PER_INCH
        depth = _METAR_DEPTH.search(rmk)
        if depth is not None:
            mm = int(depth.group(1)) * MM_PER_INCH
            if last_depth is not None and mm > last_depth:
                rises.append((r.at, mm - last_depth))
            last_depth = mm
    return StationRecord(
        path,
        "metar",
        station,
        tuple(hours),
        (),
        tuple(rises),
        last_depth is not None,
        tuple(sorted(snowfall.items())),
    )
