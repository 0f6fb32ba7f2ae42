"""METAR remarks to minute-resolution snow truth: the parser, the export loader, the intervals."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from sidewalk.scenarios.independent import in_window, resolved_error, score_station
from sidewalk.scenarios.metar import (
    MetarFormatError,
    PrecipEvent,
    Report,
    hourly_reports,
    hourly_weather,
    is_snow,
    parse_event_group,
    precip_events,
    present_snow,
    read_asos_csv,
    report_time,
    snow_periods,
    snow_storms,
)

JFK = Path(__file__).resolve().parents[1] / "data" / "metar" / "jfk_2019-2020_asos.csv.gz"


def at(day: int, hour: int, minute: int, month: int = 1, year: int = 2020) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def ev(ph: str, kind: str, when: datetime) -> PrecipEvent:
    return PrecipEvent(ph, "begin" if kind == "B" else "end", when)


# --- remark groups ---------------------------------------------------------------------------

ISSUED = at(10, 14, 53)


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ("SNB15E32", [ev("SN", "B", at(10, 14, 15)), ev("SN", "E", at(10, 14, 32))]),
        # Minutes after the report's own minute belong to the hour before.
        ("SNE32", [ev("SN", "E", at(10, 14, 32))]),
        ("SNE53", [ev("SN", "E", at(10, 14, 53))]),
        ("SNE55", [ev("SN", "E", at(10, 13, 55))]),
        ("SNB55E10", [ev("SN", "B", at(10, 13, 55)), ev("SN", "E", at(10, 14, 10))]),
        ("RAE05SNB05", [ev("RA", "E", at(10, 14, 5)), ev("SN", "B", at(10, 14, 5))]),
        (
            "SNB11E25B42",
            [
                ev("SN", "B", at(10, 14, 11)),
                ev("SN", "E", at(10, 14, 25)),
                ev("SN", "B", at(10, 14, 42)),
            ],
        ),
        ("SNE1159", [ev("SN", "E", at(10, 11, 59))]),
        ("SNB1356E02", [ev("SN", "B", at(10, 13, 56)), ev("SN", "E", at(10, 14, 2))]),
        # Hours later than the report's: the day before.
        ("SNE1621B1638", [ev("SN", "E", at(9, 16, 21)), ev("SN", "B", at(9, 16, 38))]),
        ("-SNB20", [ev("-SN", "B", at(10, 14, 20))]),
        ("+SNE20", [ev("+SN", "E", at(10, 14, 20))]),
        ("SHSNB05E20", [ev("SHSN", "B", at(10, 14, 5)), ev("SHSN", "E", at(10, 14, 20))]),
        (
            "RAB43SNE43PLB44",
            [
                ev("RA", "B", at(10, 14, 43)),
                ev("SN", "E", at(10, 14, 43)),
                ev("PL", "B", at(10, 14, 44)),
            ],
        ),
        (
            "SNB28E39PLB34E49",
            [
                ev("SN", "B", at(10, 14, 28)),
                ev("SN", "E", at(10, 14, 39)),
                ev("PL", "B", at(10, 14, 34)),
                ev("PL", "E", at(10, 14, 49)),
            ],
        ),
        ("FZRAB0455", [ev("FZRA", "B", at(10, 4, 55))]),
        ("UPE07RAB07", [ev("UP", "E", at(10, 14, 7)), ev("RA", "B", at(10, 14, 7))]),
        ("TSB04", [ev("TS", "B", at(10, 14, 4))]),
    ],
)
def test_event_groups_give_minutes_in_the_right_hour(
    group: str, expected: list[PrecipEvent]
) -> None:
    assert parse_event_group(group, ISSUED) == expected


@pytest.mark.parametrize(
    "group",
    [
        "SNINCR",
        "SN",
        "SLP123",
        "TSNO",
        "PNO",
        "FZRANO",
        "P0000",
        "T00171044",
        "4/001",
        "DSNT",
        "PRESFR",
        "VIRGA",
        "SNB",
        "SNB1",
        "SNB15X",
        "RMK",
        "AO2",
        "931005",
        "SNE15Z",
    ],
)
def test_other_remarks_are_not_events(group: str) -> None:
    assert parse_event_group(group, ISSUED) == []


def test_hour_rolls_back_over_midnight() -> None:
    issued = at(1, 0, 10)
    assert parse_event_group("SNE55", issued) == [
        ev("SN", "E", at(31, 23, 55, month=12, year=2019))
    ]
    assert parse_event_group("SNE2350", issued) == [
        ev("SN", "E", at(31, 23, 50, month=12, year=2019))
    ]
    assert parse_event_group("SNE0005", issued) == [ev("SN", "E", at(1, 0, 5))]


def test_out_of_range_times_are_refused() -> None:
    with pytest.raises(MetarFormatError):
        parse_event_group("SNE75", ISSUED)
    with pytest.raises(MetarFormatError):
        parse_event_group("SNE2599", ISSUED)


def test_snow_is_falling_snow_only() -> None:
    for ph in ("SN", "-SN", "+SN", "SHSN", "-SHSN", "RASN", "-RASN", "SNPL", "-PLSNRA", "TSSN"):
        assert is_snow(ph), ph
    for ph in ("RA", "FZRA", "BLSN", "DRSN", "PL", "UP", "TS", "VCSH", "SG", "-FZDZ"):
        assert not is_snow(ph), ph


def test_events_are_read_from_the_remarks_only() -> None:
    metar = (
        "KJFK 021951Z 34013KT 1SM R04R/5500VP6000FT -SN BR BKN007 OVC015 01/01 A2948"
        " RMK AO2 SFC VIS 2 1/2 RAE46 SNB05PLE38 SN FEW000 SLP983 P0007 T00060006"
    )
    issued = at(2, 19, 51, month=12, year=2019)
    assert precip_events(metar, issued) == [
        ev("RA", "E", at(2, 19, 46, month=12, year=2019)),
        ev("SN", "B", at(2, 19, 5, month=12, year=2019)),
        ev("PL", "E", at(2, 19, 38, month=12, year=2019)),
    ]
    assert precip_events("KJFK 021951Z 34013KT 1SM -SN OVC015 01/01 A2948", issued) == []
    assert present_snow(metar) == "-SN"


@pytest.mark.parametrize(
    ("metar", "group"),
    [
        ("KJFK 121751Z 31022KT 6SM -SN FEW024 02/M02 A2990 RMK AO2 SNB31", "-SN"),
        ("KJFK 181808Z 24023KT 1/4SM +SN BKN013 M03/M06 A3040 RMK AO2", "+SN"),
        ("KJFK 021829Z 34012KT 4SM -RASNPL BR BKN008 02/02 A2948 RMK AO2 SNB05", "-RASNPL"),
        ("KJFK 170851Z 02023KT 1/2SM -SN BR BLSN VV006 00/M01 A2969 RMK AO2", "-SN"),
        ("KJFK 170851Z 02023KT 3SM BLSN VV006 00/M01 A2969 RMK AO2 SN FEW000", None),
        ("KJFK 182346Z 17018KT 5SM PLRA BR SCT009 02/02 A3004 RMK AO2 RAB43SNE43PLB44", None),
        ("KJFK 081351Z 35014KT 10SM OVC028 M01/M06 A2977 RMK AO2 SNE1257 VCSH S", None),
    ],
)
def test_present_snow_reads_the_body(metar: str, group: str | None) -> None:
    assert present_snow(metar) == group


def test_report_time_comes_from_the_report_in_the_month_of_the_export() -> None:
    valid = at(1, 0, 51, month=12, year=2019)
    assert report_time("KJFK 010051Z 34010KT 10SM CLR", valid) == valid
    # An export stamp a minute off, across a month boundary.
    assert report_time("KJFK 010005Z AUTO 34010KT", at(30, 23, 59, month=11, year=2019)) == at(
        1, 0, 5, month=12, year=2019
    )
    assert report_time("KJFK 312355Z 34010KT", at(1, 0, 1)) == at(31, 23, 55, month=12, year=2019)
    # No time group: the export's stamp.
    assert report_time("KJFK AUTO 34010KT", valid) == valid


# --- the export loader -----------------------------------------------------------------------

EXPORT = """#DEBUG: Format Typ    -> csv
#DEBUG: Time Zone     -> Etc/UTC
station,valid,tmpf,dwpf,p01i,wxcodes,metar
JFK,2020-01-06 05:51,35.00,M,T,-SN,KJFK 060551Z 4SM -SN OVC032 02/M05 RMK AO2 SNB30 SLP158 P0000
JFK,2020-01-06 06:05,34.00,M,0.00,-SN,KJFK 060605Z 2SM -SN OVC025 01/M02 RMK AO2 P0000
JFK,2020-01-06 06:05,34.00,M,0.00,-SN,KJFK 060605Z 2SM -SN OVC025 01/M02 RMK AO2 P0000
JFK,2020-01-06 06:51,33.00,M,0.02,-SN BR,KJFK 060651Z 2SM -SN BR OVC028 RMK AO2 SLP156 P0002
JFK,2020-01-06 07:51,32.00,M,M,M,M
JFK,2020-01-06 09:51,M,M,0.00,M,KJFK 060951Z 27009KT 10SM OVC046 01/M02 A2994 RMK AO2 SNE33 SLP139
"""


def test_export_loader_reads_time_temperature_precipitation_and_skips_noise() -> None:
    reports = read_asos_csv(io.StringIO(EXPORT))
    assert [r.at for r in reports] == [at(6, 5, 51), at(6, 6, 5), at(6, 6, 51), at(6, 9, 51)]
    first = reports[0]
    assert first.station == "JFK"
    assert first.air_temp_c == pytest.approx(1.67, abs=0.01)
    assert first.precip_mm == 0.0
    assert first.trace
    assert reports[2].precip_mm == pytest.approx(0.51)
    assert reports[3].air_temp_c is None
    assert first.routine
    assert not reports[1].routine


def test_export_loader_names_what_is_wrong() -> None:
    with pytest.raises(MetarFormatError, match="metar"):
        read_asos_csv(io.StringIO("station,valid,tmpf\nJFK,2020-01-06 05:51,35\n"))
    with pytest.raises(MetarFormatError, match="line 2"):
        read_asos_csv(io.StringIO("station,valid,metar\nJFK,06/01/2020 05:51,KJFK 060551Z\n"))


# --- truth intervals -------------------------------------------------------------------------


def report(
    when: datetime, metar: str, temp: float | None = -2.0, p01i: float | None = None
) -> Report:
    return Report("TST", when, metar, temp, p01i)


def test_snow_periods_to_the_minute_with_speci_repeats_and_lulls() -> None:
    reports = [
        report(at(6, 5, 51), "KTST 060551Z 4SM -SN OVC032 RMK AO2 SNB30 SLP158"),
        report(at(6, 6, 20), "KTST 060620Z 10SM OVC025 RMK AO2 SNE12"),  # a SPECI
        report(at(6, 6, 51), "KTST 060651Z 3SM -SN OVC025 RMK AO2 SNE12B40 SLP150"),  # repeats E12
        report(at(6, 7, 51), "KTST 060751Z 3SM -SN OVC025 RMK AO2 SLP150"),
        report(at(6, 8, 51), "KTST 060851Z 10SM OVC046 RMK AO2 SNE0759 SLP139"),
        # Three hours later: a new storm, its end only bracketed by two reports.
        report(at(6, 11, 51), "KTST 061151Z 1SM SN OVC010 RMK SLP120"),
        report(at(6, 12, 51), "KTST 061251Z 10SM OVC046 RMK SLP120"),
    ]
    periods = snow_periods(reports)
    assert [(p.begin, p.end, p.end_lo) for p in periods] == [
        (at(6, 5, 30), at(6, 6, 12), at(6, 6, 12)),
        (at(6, 6, 40), at(6, 7, 59), at(6, 7, 59)),
        (at(6, 11, 51), at(6, 12, 51), at(6, 11, 51)),
    ]
    assert periods[0].end_resolution == timedelta(minutes=1)
    assert periods[2].end_resolution == timedelta(hours=1)
    storms = snow_storms(periods)
    assert [(s.onset, s.end, s.periods) for s in storms] == [
        (at(6, 5, 30), at(6, 7, 59), 2),
        (at(6, 11, 51), at(6, 12, 51), 1),
    ]
    assert storms[0].snowing_minutes == 42 + 79


def test_a_late_remark_sharpens_an_end_the_bodies_bracketed() -> None:
    reports = [
        report(at(6, 5, 51), "KTST 060551Z 4SM -SN OVC032 RMK SLP158"),
        report(at(6, 6, 51), "KTST 060651Z 10SM OVC032 RMK SLP158"),
        report(at(6, 7, 51), "KTST 060751Z 10SM OVC032 RMK AO2 SNE0617 SLP158"),
    ]
    [period] = snow_periods(reports)
    assert (period.end, period.end_lo) == (at(6, 6, 17), at(6, 6, 17))


def test_storms_merge_lulls_up_to_two_hours() -> None:
    base = "KTST 06{}Z 10SM OVC032 RMK AO2 {} SLP158"
    reports = [
        report(at(6, 5, 51), base.format("0551", "SNB10E20")),
        report(at(6, 7, 51), base.format("0751", "SNB20E30")),  # 2 h after 05:20: one storm
        report(at(6, 10, 51), base.format("1051", "SNB31E45")),  # 3 h 1 min after 07:30: new
    ]
    storms = snow_storms(snow_periods(reports))
    assert [(s.onset, s.end) for s in storms] == [
        (at(6, 5, 10), at(6, 7, 30)),
        (at(6, 10, 31), at(6, 10, 45)),
    ]


def test_hourly_input_keeps_one_routine_report_an_hour_and_never_the_remarks() -> None:
    reports = [
        report(at(6, 5, 51), "KTST 060551Z 4SM -SN OVC032 RMK AO2 SNB30 SLP158", -1.0, 0.5),
        report(at(6, 6, 5), "KTST 060605Z 1SM SN OVC025 RMK AO2", -1.0, 1.0),  # SPECI
        report(at(6, 6, 51), "KTST 060651Z 1SM SN OVC025 RMK AO2 SLP150", -1.5, 0.0),
        report(at(6, 7, 30), "KTST 060730Z 10SM OVC025 RMK AO2 SNE12", -1.5, None),  # SPECI
        report(at(6, 7, 51), "KTST 060751Z 10SM -RA OVC025 RMK AO2 SLP150", 2.0, 0.8),
    ]
    kept = hourly_reports(reports)
    assert [r.at for r in kept] == [at(6, 5, 51), at(6, 6, 51), at(6, 7, 51)]
    hours = hourly_weather(reports)
    assert [h.start for h in hours] == [at(6, 5, 51), at(6, 6, 51), at(6, 7, 51)]
    assert [h.snow_label for h in hours] == ["-SN", "SN", None]
    # Measured one-hour precipitation when there is some, else the intensity band.
    assert [h.snow_water_mm_h for h in hours] == [0.5, 1.5, 0.0]
    assert hours[2].rain_mm_h == 0.8
    assert hours[2].air_temp_c == 2.0


def test_resolved_error_is_signed_and_zero_inside_an_interval() -> None:
    lo, hi = at(6, 11, 51), at(6, 12, 51)
    assert resolved_error(at(6, 12, 0), lo, hi) == 0.0
    assert resolved_error(at(6, 13, 1), lo, hi) == 10.0
    assert resolved_error(at(6, 11, 41), lo, hi) == -10.0
    assert resolved_error(at(6, 12, 51), hi, hi) == 0.0


# --- the real record kept under tests/data/metar/ ----------------------------------------------


@pytest.fixture(scope="module")
def jfk() -> list[Report]:
    return read_asos_csv(JFK)


def test_jfk_record_gives_its_storms_to_the_minute(jfk: list[Report]) -> None:
    winter = in_window(jfk, date(2019, 10, 1), date(2020, 5, 1))
    storms = snow_storms(snow_periods(winter))
    assert len(storms) == 12
    ends = {s.end for s in storms}
    # KJFK 031217Z ... RMK AO2 SNE1159: the 2-3 Dec 2019 storm ended at 11:59.
    assert at(3, 11, 59, month=12, year=2019) in ends
    # KJFK 182346Z ... RAB43SNE43PLB44: snow turned to sleet at 23:43 on 18 Jan 2020.
    assert at(18, 23, 43) in ends
    assert all(s.end_resolution == timedelta(minutes=1) for s in storms)


def test_jfk_december_2020_scored_from_its_hourly_record(jfk: list[Report]) -> None:
    december = in_window(jfk, date(2020, 12, 1), date(2021, 1, 1))
    result = score_station(december, "JFK 2020-12", seed=1)
    # 16-17 Dec 2020 (SNE02 at 17:02) and 8 Dec; docs/cessation.md has the bench's figures.
    assert result.scored == 2
    assert result.missed == 0
    # Late, the owner's side: the hourly input's snow ends after the truth's (+21, +26 min)
    # and a light storm's end is the latest the gauge allows.
    assert all(-10 <= e <= 90 for e in result.errors)
    # The pole snowing over the remarks' minutes (the detector's own error): 17 Dec reaches
    # 10 mm on this pole, 8 Dec does not; never early by more than 10 minutes.
    minute = score_station(december, "JFK 2020-12", seed=1, minute_input=True)
    assert (minute.scored, minute.missed) == (1, 0)
    assert all(-10 <= e <= 90 for e in minute.errors)
    assert [round(inp) for _, inp, _ in minute.parts] == [3]  # the input ends with the truth
