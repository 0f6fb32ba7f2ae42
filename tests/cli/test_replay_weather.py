"""``sidewalk replay --weather FILE``: a village's own weather, end to end through the command.

Each file replays to a season report that states the record's own snowfall
beside the simulated one; each file the command cannot replay gets one line
on stderr and exit status 2, no traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.cli import app

DATA = Path(__file__).resolve().parents[1] / "data" / "weather"
WIDE = {"COLUMNS": "200"}


def _replay(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["replay", *args], env=WIDE)
    assert "Traceback" not in result.output
    if result.exit_code not in (0, 2):
        raise AssertionError(result.output) from result.exception
    return result.exit_code, result.output


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@pytest.mark.parametrize(
    ("name", "fmt", "record"),
    [
        ("clyman_station_2025-01.csv", None, "record 272 mm (10.7 in) (the rises in the reported"),
        ("isd_72641014837_2025-02.csv", "isd", "(the rises in the reported snow depth)"),
        ("USW00014837_2025-01.csv", None, "record 368 mm (14.5 in) (the daily SNOW column)"),
        ("kmsn_asos_2025-01-18.csv", None, "record not stated (no snow depth in the record)"),
    ],
    ids=["csv", "isd", "ghcn-daily", "metar"],
)
def test_a_station_file_replays_to_a_season_report(name: str, fmt: str | None, record: str) -> None:
    args = ["--weather", str(DATA / name), "--frontages", "20", "--seed", "3"]
    code, out = _replay(*args, *(["--format", fmt] if fmt else []))
    assert code == 0, out
    assert f"Season replay 2024-25 ({name} (" in out
    assert "20 frontages on 2 simulated poles" in out
    assert record in out
    assert "simulated at pole-01" in out
    assert "Clearing clocks decided" in out
    assert "Village of Clyman" in out
    # At least one storm deep enough to be listed and decided.
    assert "Jan" in out or "Feb" in out


def test_winter_picks_the_season_and_a_profile_still_compares(tmp_path: Path) -> None:
    source = (DATA / "clyman_station_2025-01.csv").read_text(encoding="utf-8")
    earlier = source.replace("2025-01-", "2023-12-")
    rows = [line for line in source.splitlines() if line.startswith("2025-")]
    both = tmp_path / "two_winters.csv"
    both.write_text(earlier + "\n".join(rows) + "\n", encoding="utf-8")
    code, out = _replay("--weather", str(both), "--frontages", "10")
    assert code == 2
    assert "covers 2 winters (2023-24, 2024-25): pick one with --winter" in _one_line(out)
    example = Path(__file__).resolve().parents[1] / "data" / "example_village.toml"
    args = ["--weather", str(both), "--winter", "2023-24", "--frontages", "10"]
    code, out = _replay(*args, "--profile", str(example))
    assert code == 0, out
    assert "Season replay 2023-24" in out
    assert "Example Village" in out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--winter", "2019-20"], "does not cover winter 2019-20"),
        (["--winter", "2019"], "--winter: winter '2019' is not like 2017-18"),
        (["--format", "grib"], "--format 'grib': one of csv, isd, ghcn-daily, metar"),
        (["--format", "isd"], "an ISD file needs DATE and TMP columns"),
        (["--frontages", "0"], "--frontages must be at least 1"),
    ],
    ids=["not-covered", "bad-winter", "bad-format", "wrong-format", "no-frontages"],
)
def test_what_a_good_file_cannot_do_is_one_line(args: list[str], said: str) -> None:
    code, out = _replay("--weather", str(DATA / "USW00014837_2025-01.csv"), *args)
    assert code == 2
    assert said in _one_line(out)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("time,air_temp,precip_mm\n2025-01-05T06:00Z,-3,1\n", "column 'air_temp' does not state"),
        ("time,precip_mm\n2025-01-05T06:00Z,1.0\n", "no air temperature column"),
        ("time,air_temp_f\n2025-01-05T06:00Z,20\n", "no precipitation or snow depth column"),
        ("time,air_temp_c,precip_mm\n2025-01-05T06:00,-3,1\n", "has no UTC offset"),
        ("time,air_temp_c,precip_mm\n2025-07-04T12:00Z,28,0\n", "cover no snow season"),
        (
            '"STATION","DATE","SNWD","TMAX"\n"X","2025-01-05","25","-20"\n',
            "no usable columns: needs SNOW or PRCP",
        ),
        (
            '"STATION","DATE","REPORT_TYPE","TMP","WND"\n"1","2025-01-05T00:53:00","FM-15","-0050,5",""\n',
            "no precipitation (AA1), snow depth (AJ1) or present weather (MW1) column",
        ),
        ("station,valid,metar\nKMSN,Jan 5,KMSN 050053Z\n", "is not YYYY-MM-DD HH:MM"),
        ("what,ever\n1,2\n", "not a weather file this reads"),
    ],
    ids=[
        "unit-not-stated",
        "no-temperature",
        "no-precip-or-depth",
        "no-zone",
        "summer-only",
        "ghcn-no-snow-or-precip",
        "isd-no-weather",
        "metar-bad-time",
        "unknown",
    ],
)
def test_a_file_the_command_cannot_replay_is_one_line(
    tmp_path: Path, content: str, said: str
) -> None:
    bad = tmp_path / "station.csv"
    bad.write_text(content, encoding="utf-8")
    code, out = _replay("--weather", str(bad))
    assert code == 2
    assert said in _one_line(out)


def test_a_missing_file_and_options_without_a_file(tmp_path: Path) -> None:
    code, out = _replay("--weather", str(tmp_path / "nope.csv"))
    assert code == 2
    assert "nope.csv: no such file" in _one_line(out)
    code, out = _replay("--winter", "2017-18", "--format", "csv")
    assert code == 2
    assert "--format and --tz go with --weather FILE" in _one_line(out)


def test_a_bundled_record_outside_its_dates_is_one_line() -> None:
    from sidewalk.scenarios.weather import WeatherDataMissing, record_path

    try:
        record_path("milwaukee")
    except WeatherDataMissing as exc:
        pytest.skip(f"shared weather data absent: {exc}")
    code, out = _replay("--winter", "2030-31", "--source", "milwaukee")
    assert code == 2
    line = _one_line(out)
    assert "no milwaukee weather for winter 2030-31" in line
    assert "--weather FILE" in line
    code, out = _replay("--winter", "2017-18", "--source", "madison")
    assert code == 2
    assert "--source is minneapolis or milwaukee" in _one_line(out)
