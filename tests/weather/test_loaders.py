"""Loaders for the shared weather records: units, the Milwaukee snow quirk, local time."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from sidewalk.scenarios.weather import (
    daily_to_hours,
    data_dir,
    load_milwaukee,
    load_minneapolis,
    winter_bounds,
)

MILWAUKEE_HEADER = "year,month,day,date,day_of_year,PRCP,SNOW,SNWD,TMAX,TMIN\n"
MINNEAPOLIS_HEADER = (
    "holiday,temp,rain_1h,snow_1h,clouds_all,weather_main,"
    "weather_description,date_time,traffic_volume\n"
)


def test_milwaukee_snow_columns_are_multiplied_by_ten(tmp_path: Path) -> None:
    """Upstream turned whole mm into 'inches' with the tenths-of-mm factor: 100 mm reads 0.3937."""
    csv = tmp_path / "ghcn.csv"
    csv.write_text(MILWAUKEE_HEADER + "2019,01,19,2019-01-19,19,0.5,0.393701,0.787402,32,14\n")
    [day] = load_milwaukee(date(2019, 1, 1), date(2019, 2, 1), csv)
    assert day.snowfall_mm == pytest.approx(100.0, abs=0.01)
    assert day.snow_depth_mm == pytest.approx(200.0, abs=0.01)
    assert day.precip_mm == pytest.approx(12.7)  # PRCP is right as it stands
    assert day.tmax_c == pytest.approx(0.0)
    assert day.tmin_c == pytest.approx(-10.0)


def test_milwaukee_missing_values_stay_missing(tmp_path: Path) -> None:
    csv = tmp_path / "ghcn.csv"
    csv.write_text(MILWAUKEE_HEADER + "1938,04,01,1938-04-01,91,NA,NA,NA,35.96,30.02\n")
    [day] = load_milwaukee(date(1938, 1, 1), date(1939, 1, 1), csv)
    assert (day.precip_mm, day.snowfall_mm, day.snow_depth_mm) == (None, None, None)


def test_real_milwaukee_winter_2018_19_had_about_49_inches(milwaukee_csv: Path) -> None:
    """The upstream README's own check: the column sums to 4.9, the truth is 49 in."""
    days = load_milwaukee(date(2018, 11, 1), date(2019, 4, 1), milwaukee_csv)
    total_in = sum(d.snowfall_mm or 0.0 for d in days) / 25.4
    assert 45 < total_in < 53
    assert max(d.snow_depth_mm or 0.0 for d in days) > 100  # a real Milwaukee pack, not 10 mm


def test_minneapolis_rows_of_one_hour_merge_and_kelvin_becomes_celsius(tmp_path: Path) -> None:
    csv = tmp_path / "mpls.csv"
    csv.write_text(
        MINNEAPOLIS_HEADER
        + "None,268.15,0.0,0.0,90,Mist,mist,2017-12-04 20:00:00,1\n"
        + "None,268.15,0.0,0.0,90,Snow,heavy snow,2017-12-04 20:00:00,1\n"
        + "None,268.15,0.0,0.0,90,Snow,light snow,2017-12-04 20:00:00,1\n"
        + "None,280.15,1.5,0.0,90,Rain,light rain,2017-12-04 21:00:00,1\n"
    )
    snow, rain = load_minneapolis(date(2017, 12, 1), date(2017, 12, 31), csv)
    assert snow.start == datetime(2017, 12, 5, 2, 0, tzinfo=UTC)  # 20:00 CST
    assert snow.air_temp_c == pytest.approx(-5.0)
    assert snow.snow_label == "heavy snow"
    assert snow.snow_water_mm_h == 3.0
    assert not rain.snowing
    assert rain.rain_mm_h == 1.5


def test_minneapolis_repeated_fall_back_hour_is_its_first_pass(tmp_path: Path) -> None:
    csv = tmp_path / "mpls.csv"
    csv.write_text(
        MINNEAPOLIS_HEADER + "None,275.0,0.0,0.0,1,Clear,sky is clear,2017-11-05 01:00:00,1\n"
    )
    [hour] = load_minneapolis(date(2017, 11, 1), date(2017, 11, 30), csv)
    assert hour.start == datetime(2017, 11, 5, 6, 0, tzinfo=UTC)  # 01:00 CDT


def test_real_minneapolis_winter_2017_18_is_complete_enough(minneapolis_csv: Path) -> None:
    hours = load_minneapolis(*winter_bounds("2017-18"), minneapolis_csv)
    assert len(hours) > 4500
    assert sum(h.snowing for h in hours) > 600
    assert all(a.start < b.start for a, b in itertools.pairwise(hours))
    assert -40 < min(h.air_temp_c for h in hours) < -20  # Celsius, not kelvin


def test_winter_bounds() -> None:
    assert winter_bounds("2017-18") == (date(2017, 10, 1), date(2018, 5, 1))
    assert winter_bounds("1999-2000") == (date(1999, 10, 1), date(2000, 5, 1))
    with pytest.raises(ValueError, match="follow"):
        winter_bounds("2017-19")
    with pytest.raises(ValueError, match="like"):
        winter_bounds("winter")


def test_data_dir_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SIDEWALK_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path
    monkeypatch.delenv("SIDEWALK_DATA_DIR")
    assert (data_dir() / "weather").resolve() == (
        Path(__file__).resolve().parents[3] / "shared" / "data" / "weather"
    ).resolve()


def test_daily_snow_becomes_one_labelled_snowfall_of_the_right_water(tmp_path: Path) -> None:
    csv = tmp_path / "ghcn.csv"
    # 0.393701 -> 100 mm of snow -> 10 mm of water over 2 + 4 = 6 hours.
    csv.write_text(MILWAUKEE_HEADER + "2019,01,19,2019-01-19,19,0.4,0.393701,0,25,14\n")
    hours = daily_to_hours(load_milwaukee(date(2019, 1, 1), date(2019, 2, 1), csv), seed=1)
    assert len(hours) == 24
    snowing = [h for h in hours if h.snowing]
    assert len(snowing) == 6
    assert sum(h.snow_water_mm_h for h in snowing) == pytest.approx(10.0)
    assert {h.snow_label for h in snowing} == {"snow"}
    assert max(h.air_temp_c for h in hours) == pytest.approx(-3.89, abs=0.01)
