"""NOAA Local Climatological Data files as METAR truth and hourly input (the cessation bench)."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.cessation_independent import read_lcd_csv, read_reports
from sidewalk.scenarios.metar import MetarFormatError, hourly_weather, snow_periods, snow_storms

LNK = Path(__file__).resolve().parents[1] / "data" / "metar" / "lnk_2023_lcd.csv.gz"
JFK = Path(__file__).resolve().parents[1] / "data" / "metar" / "jfk_2019-2020_asos.csv.gz"

HEADER = (
    "STATION,DATE,REPORT_TYPE,HourlyDryBulbTemperature,HourlyPrecipitation,"
    "HourlyPresentWeatherType,REM\n"
)
# Lincoln, 3 Jan 2023 (local standard time = UTC - 6): snow began 17:03Z, ended 18:13Z.
METRIC_ROWS = (
    "USW00014939,2023-01-03T11:15:00,FM-16,1.1,T,-SN:03 |SN |SN,"
    "MET11601/03/23 11:15:02 SPECI KLNK 031715Z 30007KT 4SM -SN BR SCT005 OVC013 01/00"
    " A2953 RMK AO2 SNB03 P0000 T00110000 (RT)\n"
    "USW00014939,2023-01-03T11:54:00,FM-15,0,0.5,-SN:03 |SN |SN,"
    "MET14101/03/23 11:54:02 METAR KLNK 031754Z 31015KT 2SM -SN BR OVC010 00/M02 A2953"
    " RMK AO2 SNB03 SLP010 P0002 60000 T00001022 (RT)\n"
    "USW00014939,2023-01-03T12:00:00,FM-12,0,,,SYN AAXX 03184 72551 ...\n"
    "USW00014939,2023-01-03T12:54:00,FM-15,-1.1s,0,,"
    "MET10601/03/23 12:54:02 METAR KLNK 031854Z 31015KT 10SM BKN013 M01/M04 A2955"
    " RMK AO2 SNE13 SLP017 P0000 T10111039 (RC)\n"
)


def write(tmp_path: Path, text: str, name: str = "lcd.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_lcd_rows_become_reports_at_their_own_utc_time(tmp_path: Path) -> None:
    reports = read_lcd_csv(write(tmp_path, HEADER + METRIC_ROWS))
    # The synoptic (FM-12) row is not a METAR; DATE is local, the time comes from DDHHMMZ.
    assert [r.at for r in reports] == [
        datetime(2023, 1, 3, 17, 15, tzinfo=UTC),
        datetime(2023, 1, 3, 17, 54, tzinfo=UTC),
        datetime(2023, 1, 3, 18, 54, tzinfo=UTC),
    ]
    first, routine, last = reports
    assert first.station == "LNK"
    assert first.metar.startswith("KLNK 031715Z")
    assert first.metar.endswith("T00110000")  # the editor's initials "(RT)" dropped
    assert first.trace
    assert first.precip_mm == 0.0
    assert routine.routine
    assert (routine.precip_mm, routine.air_temp_c) == (0.5, 0.0)
    assert last.air_temp_c == -1.1  # the suspect flag "s" dropped, the value kept
    (period,) = snow_periods(reports)
    assert (period.begin, period.end, period.end_lo) == (
        datetime(2023, 1, 3, 17, 3, tzinfo=UTC),
        datetime(2023, 1, 3, 18, 13, tzinfo=UTC),
        datetime(2023, 1, 3, 18, 13, tzinfo=UTC),
    )


def test_imperial_lcd_is_converted_to_metric(tmp_path: Path) -> None:
    imperial = (
        METRIC_ROWS.replace(",FM-16,1.1,T,", ",FM-16,34,T,")
        .replace(",FM-15,0,0.5,", ",FM-15,32,0.02,")
        .replace(",FM-15,-1.1s,0,", ",FM-15,30s,0.00,")
    )
    reports = read_lcd_csv(write(tmp_path, HEADER + imperial))
    assert [r.air_temp_c for r in reports] == [1.11, 0.0, -1.11]
    assert reports[1].precip_mm == 0.51


def test_lcd_whose_temperatures_fit_no_unit_is_refused(tmp_path: Path) -> None:
    wrong = METRIC_ROWS.replace(",FM-15,0,0.5,", ",FM-15,75,0.5,").replace(
        ",FM-16,1.1,T,", ",FM-16,80,T,"
    )
    with pytest.raises(MetarFormatError, match="HourlyDryBulbTemperature"):
        read_lcd_csv(write(tmp_path, HEADER + wrong))


def test_lcd_without_rem_column_names_it(tmp_path: Path) -> None:
    text = HEADER.replace(",REM", "") + "USW00014939,2023-01-03T11:15:00,FM-16,1.1,T,-SN\n"
    with pytest.raises(MetarFormatError, match="REM"):
        read_lcd_csv(write(tmp_path, text))


def test_bad_lcd_date_names_the_line(tmp_path: Path) -> None:
    text = HEADER + METRIC_ROWS.replace("2023-01-03T11:54:00", "03/01/2023 11:54")
    with pytest.raises(MetarFormatError, match=r"line 3: DATE"):
        read_lcd_csv(write(tmp_path, text))


def test_reader_is_chosen_by_header(tmp_path: Path) -> None:
    lcd = tmp_path / "x.csv.gz"
    lcd.write_bytes(gzip.compress((HEADER + METRIC_ROWS).encode()))
    assert [r.station for r in read_reports(lcd)] == ["LNK"] * 3
    asos = write(
        tmp_path,
        "station,valid,tmpf,p01i,metar\nJFK,2020-01-10 14:51,30.0,T,"
        "KJFK 101451Z 32012KT 9SM -SN OVC070 M01/M05 A2948 RMK AO2 SNB14 SLP981 P0000\n",
        "asos.csv",
    )
    (report,) = read_reports(asos)
    assert (report.station, report.trace) == ("JFK", True)


def test_lincoln_winter_has_minute_resolution_storm_ends() -> None:
    reports = read_reports(LNK)
    assert {r.station for r in reports} == {"LNK"}
    assert reports[0].at == datetime(2023, 1, 1, 6, 54, tzinfo=UTC)
    storms = snow_storms(snow_periods(reports))
    ends = {s.end for s in storms}
    # SNE07 in the 23:54Z report of 21 Jan; SNE0856 in the 09:54Z report of 28 Jan.
    assert datetime(2023, 1, 21, 23, 7, tzinfo=UTC) in ends
    assert datetime(2023, 1, 28, 8, 56, tzinfo=UTC) in ends
    assert len(storms) == 14
    # One end (16 Feb, remark "SNEMM": minutes missing) is known only between two reports.
    assert sum(1 for s in storms if s.end == s.end_lo) == 13
    # The input side: one hour per routine report, snow labels from the bodies.
    hours = hourly_weather(reports)
    assert sum(1 for h in hours if h.snow_label) > 20
