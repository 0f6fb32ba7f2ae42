"""Bring your own weather: the four file formats, their units, seasons and refusals.

The files under ``tests/data/weather/`` are small hand-made ones (a few storm
days each) in the layouts the sources really use; ``docs/replay.md`` documents
the station CSV.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sidewalk.scenarios.station import (
    WeatherFileError,
    load_station_file,
    sniff,
    station_winter,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "weather"
CSV = DATA / "clyman_station_2025-01.csv"
ISD = DATA / "isd_72641014837_2025-02.csv"
GHCN = DATA / "USW00014837_2025-01.csv"
METAR = DATA / "kmsn_asos_2025-01-18.csv"


@pytest.mark.parametrize(
    ("path", "fmt"), [(CSV, "csv"), (ISD, "isd"), (GHCN, "ghcn-daily"), (METAR, "metar")]
)
def test_the_format_is_sniffed_from_the_header(path: Path, fmt: str) -> None:
    assert sniff(path, path.read_text(encoding="utf-8")) == fmt
    record = load_station_file(path)
    assert record.fmt == fmt
    assert record.winters() == ["2024-25"]


def test_station_csv_units_zone_and_hours() -> None:
    record = load_station_file(CSV)
    season = station_winter(record, None, seed=1)
    assert season.winter == "2024-25"
    assert season.hourly
    # Readings every 30 min merged into clock hours; the 14:30-15:00 local readings (CST,
    # -06:00) of the first snow hour are the 20:00-21:00 UTC hour, observed mid-hour.
    first = next(h for h in season.hours if h.snowing)
    assert first.start == datetime(2025, 1, 5, 20, 30, tzinfo=UTC)
    assert first.snow_label == "SN"
    # 0.01 + 0.02 in of water in that hour, in mm; °F to °C.
    assert first.snow_water_mm_h == pytest.approx(0.03 * 25.4)
    assert -3.0 < first.air_temp_c < -1.5
    # The record's snowfall is the sum of the depth's rises (inches → mm): about 10.7 in.
    assert season.record_snowfall_mm == pytest.approx(272, abs=2)
    assert "snow depth" in season.snowfall_basis


def test_local_times_with_a_tz_line_or_option(tmp_path: Path) -> None:
    rows = "time,air_temp_c,precip_mm\n2025-01-05T14:30,-2.0,0.8\n2025-01-05T15:00,-2.2,1.0\n"
    naive = tmp_path / "naive.csv"
    naive.write_text(rows, encoding="utf-8")
    with pytest.raises(WeatherFileError, match="no UTC offset"):
        load_station_file(naive)
    by_option = load_station_file(naive, tz="America/Chicago")
    lined = tmp_path / "lined.csv"
    lined.write_text("# tz: America/Chicago\n" + rows, encoding="utf-8")
    by_line = load_station_file(lined)
    assert by_option.hours == by_line.hours
    [hour] = by_line.hours
    assert hour.start == datetime(2025, 1, 5, 20, 30, tzinfo=UTC)
    # No weather column: cold precipitation is snow.
    assert hour.snowing
    assert hour.snow_water_mm_h == pytest.approx(1.8)


def test_isd_scaled_values_quality_and_summary_rows() -> None:
    record = load_station_file(ISD)
    assert record.station == "72641014837"
    hours = {h.start: h for h in record.hours}
    # The routine 03:53Z report: TMP -0072 tenths °C, AA1 0024 tenths of mm over the hour
    # before it (02:53-03:53, so placed at its middle, 03:23), MW1 75 (heavy snow); the
    # SPECI at 04:20 belongs to the next hour.
    heavy = hours[datetime(2025, 2, 12, 3, 23, tzinfo=UTC)]
    assert heavy.snow_label == "heavy snow"
    assert heavy.air_temp_c == pytest.approx(-6.6, abs=0.8)
    assert 2.0 < heavy.snow_water_mm_h < 3.0
    # Summary-of-day rows (TMP +9999, a 24-h AA1) are not hours of weather.
    assert all(-20 < h.air_temp_c < 5 for h in record.hours)
    assert max(h.snow_water_mm_h for h in record.hours) < 3.0
    # AJ1 snow depth is in whole cm: the pack rose from 3 cm to about 39.
    season = station_winter(record, "2024-25", seed=1)
    assert season.record_snowfall_mm == pytest.approx(360, abs=40)


def test_ghcn_daily_is_read_in_noaas_units_without_the_milwaukee_correction() -> None:
    record = load_station_file(GHCN)
    day = next(d for d in record.days if d.day.isoformat() == "2025-01-18")
    assert day.precip_mm == pytest.approx(9.9)  # tenths of mm
    assert day.snowfall_mm == pytest.approx(140)  # mm, not ×10
    assert day.snow_depth_mm == pytest.approx(229)
    assert day.tmax_c == pytest.approx(-2.2)  # tenths of °C
    missing = next(d for d in record.days if d.day.isoformat() == "2025-01-16")
    assert missing.snowfall_mm is None
    season = station_winter(record, None, seed=1)
    assert not season.hourly
    assert season.record_snowfall_mm == pytest.approx(368)
    assert len(season.hours) >= 21 * 24 - 1


def test_ghcn_daily_long_by_station_form(tmp_path: Path) -> None:
    long = tmp_path / "USW00014837.csv"
    long.write_text(
        "USW00014837,20250118,PRCP,99,,,W,2400\n"
        "USW00014837,20250118,SNOW,140,,,W,\n"
        "USW00014837,20250118,SNWD,229,,,W,\n"
        "USW00014837,20250118,TMAX,-22,,,W,\n"
        "USW00014837,20250118,TMIN,-94,,,W,\n"
        "USW00014837,20250119,SNOW,999,,X,W,\n"  # failed a quality check: dropped
        "USW00014837,20250119,TMAX,-117,,,W,\n",
        encoding="utf-8",
    )
    record = load_station_file(long)
    assert record.fmt == "ghcn-daily"
    first, second = record.days
    assert first.snowfall_mm == pytest.approx(140)
    assert first.tmin_c == pytest.approx(-9.4)
    assert second.snowfall_mm is None


def test_a_cdo_export_in_inches_and_fahrenheit(tmp_path: Path) -> None:
    cdo = tmp_path / "cdo.csv"
    cdo.write_text(
        '"STATION","NAME","DATE","PRCP","SNOW","SNWD","TMAX","TMIN"\n'
        '"USW00014837","MADISON, WI US","2025-01-18","0.39","5.5","9","28","15"\n',
        encoding="utf-8",
    )
    [day] = load_station_file(cdo).days
    assert day.snowfall_mm == pytest.approx(5.5 * 25.4)
    assert day.tmax_c == pytest.approx(-2.22, abs=0.01)


def test_a_milwaukee_layout_file_is_not_corrected_unless_it_is_the_bundled_one(
    tmp_path: Path, milwaukee_csv: Path
) -> None:
    copy = tmp_path / "GHCN_USW00014837.csv"
    copy.write_text(
        "year,month,day,date,day_of_year,PRCP,SNOW,SNWD,TMAX,TMIN\n"
        "2019,01,19,2019-01-19,19,0.5,0.393701,0.787402,32,14\n",
        encoding="utf-8",
    )
    with pytest.raises(WeatherFileError, match="units are not stated"):
        load_station_file(copy)
    bundled = load_station_file(milwaukee_csv)
    season = station_winter(bundled, "2018-19", seed=1)
    assert season.record_snowfall_mm is not None
    # The × 10 correction applied: about 49 in from November to March, 56 in October-April.
    assert 45 < season.record_snowfall_mm / 25.4 < 60


def test_metar_export_reuses_the_metar_loader() -> None:
    record = load_station_file(METAR)
    assert record.station == "KMSN"
    snowing = [h for h in record.hours if h.snowing]
    assert snowing[0].start == datetime(2025, 1, 18, 14, 53, tzinfo=UTC)
    assert {h.snow_label for h in snowing} == {"-SN", "SN", "+SN"}
    season = station_winter(record, None, seed=1)
    assert season.record_snowfall_mm is None  # an export with no depth states none


def test_a_file_covering_several_winters_needs_winter(tmp_path: Path) -> None:
    two = tmp_path / "two.csv"
    two.write_text(
        "time,air_temp_c,precip_mm\n2023-12-01T06:00Z,-3,1.0\n2025-01-05T06:00Z,-3,1.0\n",
        encoding="utf-8",
    )
    record = load_station_file(two)
    with pytest.raises(WeatherFileError, match=r"2 winters \(2023-24, 2024-25\).*--winter"):
        station_winter(record, None, seed=1)
    season = station_winter(record, "2023-24", seed=1)
    assert [h.start.year for h in season.hours] == [2023]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("time,air_temp,precip_mm\n2025-01-05T06:00Z,-3,1\n", "does not state its unit"),
        ("time,precip_mm\n2025-01-05T06:00Z,1\n", "no air temperature column"),
        ("time,air_temp_f\n2025-01-05T06:00Z,20\n", "no precipitation or snow depth"),
        ("time,air_temp_c,precip_mm\nyesterday,-3,1\n", "not ISO 8601"),
        ("when,what\n1,2\n", "not a weather file"),
        ('"STATION","DATE","TMAX","TMIN"\n"X","2025-01-05","10","-20"\n', "no usable columns"),
    ],
)
def test_files_without_a_usable_column(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(WeatherFileError, match=message) as caught:
        load_station_file(bad)
    assert "\n" not in str(caught.value)


def test_a_winter_the_file_does_not_cover() -> None:
    record = load_station_file(GHCN)
    with pytest.raises(WeatherFileError, match="does not cover winter 2019-20"):
        station_winter(record, "2019-20", seed=1)
    with pytest.raises(WeatherFileError, match="--winter"):
        station_winter(record, "winter", seed=1)


def test_a_summer_file_covers_no_season(tmp_path: Path) -> None:
    summer = tmp_path / "summer.csv"
    summer.write_text("time,air_temp_c,precip_mm\n2025-07-04T12:00-05:00,28,0\n", "utf-8")
    with pytest.raises(WeatherFileError, match="cover no snow season"):
        station_winter(load_station_file(summer), None, seed=1)


def _isd(tmp_path: Path, rows: list[str], time_column: str = "datetime") -> Path:
    """A tiny NOAA ISD extract: STATION, the time under ``time_column``, and the groups."""
    path = tmp_path / "isd_extract.csv"
    header = f"STATION,{time_column},REPORT_TYPE,TMP,AA1,AJ1,AL1,MW1"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_isd_with_a_datetime_column_is_read_and_each_amount_is_the_hour_it_covers(
    tmp_path: Path,
) -> None:
    # 13:53 dry; the 14:53 report's 1.2 mm fell over 13:53-14:53 (MW1 71, light snow);
    # 15:53 dry again. The snow is the hour *before* 14:53, observed at its middle.
    path = _isd(
        tmp_path,
        [
            '72641014837,2025-02-12 13:53:00,FM-15,"-0040,5","01,0000,9,5",,,',
            '72641014837,2025-02-12 14:53:00,FM-15,"-0045,5","01,0012,9,5",,,"71,1"',
            '72641014837,2025-02-12 15:53:00,FM-15,"-0050,5","01,0000,9,5",,,',
        ],
    )
    assert sniff(path, path.read_text(encoding="utf-8")) == "isd"
    record = load_station_file(path)
    assert record.station == "72641014837"
    [snow] = [h for h in record.hours if h.snowing]
    assert snow.start == datetime(2025, 2, 12, 14, 23, tzinfo=UTC)  # simulated 13:53-14:53
    assert snow.snow_water_mm_h == pytest.approx(1.2)
    assert [h.start.minute for h in record.hours] == [23, 23, 23]


@pytest.mark.parametrize("name", ["DATE", "date_time", "Timestamp", "DATETIME"])
def test_isd_time_column_variants(tmp_path: Path, name: str) -> None:
    row = '72641014837,2025-02-12T14:53:00Z,FM-15,"-0045,5","01,0012,9,5",,,"71,1"'
    record = load_station_file(_isd(tmp_path, [row], time_column=name), "isd")
    assert [h.start for h in record.hours] == [datetime(2025, 2, 12, 14, 23, tzinfo=UTC)]


def test_isd_trace_hours_are_a_trace_of_what_fell(tmp_path: Path) -> None:
    # AA1 condition 2 = trace: precipitation fell, too little to measure. No present
    # weather: in the cold it is a trace of snow, in the warm a trace of rain; a dry hour
    # (condition 9) is neither.
    path = _isd(
        tmp_path,
        [
            '72641014837,2025-02-12T13:53:00,FM-15,"-0040,5","01,0000,2,5",,,',
            '72641014837,2025-02-12T14:53:00,FM-15,"+0060,5","01,0000,2,5",,,',
            '72641014837,2025-02-12T15:53:00,FM-15,"-0050,5","01,0000,9,5",,,',
        ],
    )
    cold, warm, dry = load_station_file(path).hours
    assert cold.snowing
    assert cold.snow_water_mm_h == pytest.approx(0.1)
    assert not warm.snowing
    assert warm.rain_mm_h == pytest.approx(0.1)
    assert not dry.snowing
    assert dry.rain_mm_h == 0


def test_station_csv_trace_precipitation(tmp_path: Path) -> None:
    path = tmp_path / "station.csv"
    path.write_text(
        "time,air_temp_c,precip_in\n2025-01-05T14:30Z,-3.0,T\n2025-01-05T15:30Z,-3.0,0\n",
        encoding="utf-8",
    )
    trace, dry = load_station_file(path).hours
    assert trace.snowing
    assert trace.snow_water_mm_h == pytest.approx(0.1)
    assert not dry.snowing


def test_isd_snowfall_is_the_records_own_where_it_has_it(tmp_path: Path) -> None:
    # AL1: 6-h snowfall 5 cm at 11:53, 24-h 12 cm at 23:53 (the 6-h inside it: once);
    # the AJ1 depth (whose rises would give 30 cm) is not the snowfall then.
    rows = [
        '72641014837,2025-02-12T05:53:00,FM-15,"-0040,5","01,0000,9,5","0010,1,5",,',
        '72641014837,2025-02-12T11:53:00,FM-15,"-0040,5","01,0010,9,5","0040,1,5",'
        '"06,005,1,5","71,1"',
        '72641014837,2025-02-12T23:53:00,FM-15,"-0040,5","01,0000,9,5","0020,1,5","24,012,1,5",',
    ]
    season = station_winter(load_station_file(_isd(tmp_path, rows)), None, seed=1)
    assert season.record_snowfall_mm == pytest.approx(120)
    assert season.snowfall_basis == "the record's own snowfall amounts"


def test_metar_export_snowfall_is_the_remarks_own(tmp_path: Path) -> None:
    # 931sss: snowfall in the last 6 h, tenths of an inch (1.2 in at 06Z, 0.8 in at 12Z);
    # 4/sss: snow depth, whole inches. A SPECI between them carries neither.
    path = tmp_path / "kmsn.csv"
    path.write_text(
        "station,valid,tmpf,p01i,metar\n"
        "KMSN,2025-01-18 05:53,24.00,0.02,KMSN 180553Z 32014KT 2SM -SN OVC015 M04/M07 A3012"
        " RMK AO2 SLP210 P0002 931012 4/003\n"
        "KMSN,2025-01-18 06:20,24.00,0.01,KMSN 180620Z 32014KT 2SM -SN OVC015 M04/M07 A3012"
        " RMK AO2 P0001\n"
        "KMSN,2025-01-18 11:53,24.00,0.00,KMSN 181153Z 32014KT 10SM OVC015 M04/M07 A3012"
        " RMK AO2 SLP210 P0000 931008 4/004\n",
        encoding="utf-8",
    )
    season = station_winter(load_station_file(path), None, seed=1)
    assert season.record_snowfall_mm == pytest.approx(2.0 * 25.4)
    assert season.snowfall_basis == "the record's own snowfall amounts"
