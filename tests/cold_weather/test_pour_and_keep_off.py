"""§ 370-5 (9) pour window and keep-off; § 370-7G street concrete; § 144-13 sump window."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.cold_weather import (
    NO_TEMPERATURE,
    ForecastPoint,
    Pour,
    keep_off_until,
    pour_window,
    sump_discharge_window,
    sump_discharge_window_active,
)
from sidewalk.core.calendar import plus_elapsed
from sidewalk.core.profile import load_profile

CHICAGO = ZoneInfo("America/Chicago")
CLYMAN = load_profile()
EXAMPLE = load_profile(Path(__file__).resolve().parents[1] / "data" / "example_village.toml")
POUR_AT = datetime(2026, 10, 20, 8, tzinfo=CHICAGO)


def hourly(
    start: datetime, hours: int, temp_f: float, dips: dict[int, float] | None = None
) -> list[ForecastPoint]:
    dips = dips or {}
    base = start.astimezone(UTC)
    return [ForecastPoint(base + timedelta(hours=h), dips.get(h, temp_f)) for h in range(hours + 1)]


def test_plus_elapsed_is_real_time_where_python_wall_arithmetic_is_not() -> None:
    saturday = datetime(2026, 10, 31, 10, tzinfo=CHICAGO)
    day = timedelta(hours=24)
    wall = saturday + day  # Python adds on the wall clock within one ZoneInfo
    assert wall.astimezone(UTC) - saturday.astimezone(UTC) == timedelta(hours=25)
    assert plus_elapsed(saturday, day) - saturday == day


# -- pour window -------------------------------------------------------------------


def test_a_forecast_that_stays_at_35_f_allows_the_pour() -> None:
    decision = pour_window(POUR_AT, hourly(POUR_AT, 72, 35.0), 4.0, CLYMAN)
    assert decision.status == "allowed"
    assert decision.reasons == ()


def test_any_forecast_below_35_f_within_72_hours_prohibits_it() -> None:
    decision = pour_window(POUR_AT, hourly(POUR_AT, 72, 45.0, {70: 34.9}), 4.0, CLYMAN)
    assert decision.status == "prohibited"
    [reason] = decision.reasons
    assert reason.rule == "cold_weather.pour_min_temp"
    assert reason.citation == "§ 370-5 (sidewalk construction) (9)"
    assert reason.at == plus_elapsed(POUR_AT, timedelta(hours=70))
    assert not decision.unconfirmed


def test_cold_after_the_72_hours_does_not_count() -> None:
    forecast = hourly(POUR_AT, 80, 45.0, {73: 20.0})
    assert pour_window(POUR_AT, forecast, 4.0, CLYMAN).status == "allowed"


def test_a_forecast_short_of_72_hours_leaves_the_pour_unknown() -> None:
    decision = pour_window(POUR_AT, hourly(POUR_AT, 71, 60.0), 4.0, CLYMAN)
    assert decision.status == "unknown"
    assert [r.rule for r in decision.reasons] == ["cold_weather.pour_forecast_window"]
    late_start = hourly(POUR_AT + timedelta(hours=1), 72, 60.0)
    assert pour_window(POUR_AT, late_start, 4.0, CLYMAN).status == "unknown"


def test_frozen_subgrade_prohibits_and_carries_the_unconfirmed_mark() -> None:
    forecast = hourly(POUR_AT, 72, 60.0)
    frozen = pour_window(POUR_AT, forecast, 0.0, CLYMAN)
    assert frozen.status == "prohibited"
    assert [r.rule for r in frozen.reasons] == ["cold_weather.frozen_subgrade_at_or_below"]
    assert frozen.unconfirmed
    assert pour_window(POUR_AT, forecast, 0.1, CLYMAN).status == "allowed"
    unknown = pour_window(POUR_AT, forecast, None, CLYMAN)
    assert unknown.status == "unknown"


def test_a_prohibition_outweighs_an_unknown_and_lists_both() -> None:
    decision = pour_window(POUR_AT, hourly(POUR_AT, 72, 30.0), None, CLYMAN)
    assert decision.status == "prohibited"
    assert [r.severity for r in decision.reasons] == ["violation", "unknown"]


def test_example_village_pours_by_its_own_numbers() -> None:
    at_38 = hourly(POUR_AT, 72, 38.0)
    assert pour_window(POUR_AT, at_38, 4.0, CLYMAN).status == "allowed"
    assert pour_window(POUR_AT, at_38, 4.0, EXAMPLE).status == "prohibited"
    cold_at_60h = hourly(POUR_AT, 72, 50.0, {60: 30.0})
    assert pour_window(POUR_AT, cold_at_60h, 4.0, CLYMAN).status == "prohibited"
    assert pour_window(POUR_AT, cold_at_60h, 4.0, EXAMPLE).status == "allowed"  # 48 h horizon
    assert pour_window(POUR_AT, hourly(POUR_AT, 72, 60.0), 0.5, EXAMPLE).status == "prohibited"


def test_the_72_hours_span_the_fall_change_in_real_time() -> None:
    pour_at = datetime(2026, 10, 30, 8, tzinfo=CHICAGO)
    last = ForecastPoint(datetime(2026, 11, 2, 8, tzinfo=CHICAGO), 60.0)
    forecast = [*hourly(pour_at, 71, 60.0), last]
    # 08:00 CST on Nov 2 is 73 real hours after 08:00 CDT on Oct 30: covered.
    assert pour_window(pour_at, forecast, 4.0, CLYMAN).status == "allowed"
    dip = [*forecast, ForecastPoint(datetime(2026, 11, 2, 7, 30, tzinfo=CHICAGO), 20.0)]
    # 07:30 CST is 72.5 real hours on: outside the window, though wall time says 71.5.
    assert pour_window(pour_at, dip, 4.0, CLYMAN).status == "allowed"


# -- keep-off ------------------------------------------------------------------------


def walk(at: datetime = POUR_AT) -> Pour:
    return Pour("pour-1", "sidewalk", at, "101 Main St", site="main-st")


def test_a_walk_at_50_f_is_kept_off_48_hours_and_below_it_96() -> None:
    normal = keep_off_until(walk(), 50.0, CLYMAN)
    cold = keep_off_until(walk(), 49.9, CLYMAN)
    assert normal.due == plus_elapsed(POUR_AT, timedelta(hours=48))
    assert normal.rule == "cold_weather.keep_off_normal"
    assert cold.due == plus_elapsed(POUR_AT, timedelta(hours=96))
    assert cold.rule == "cold_weather.keep_off_cold"
    assert cold.start == POUR_AT
    assert cold.citation == "§ 370-5 (sidewalk construction) (9)"


def test_with_no_temperature_the_cold_period_is_assumed_and_said() -> None:
    unknown = keep_off_until(walk(), None, CLYMAN)
    assert unknown.rule == "cold_weather.keep_off_cold"
    assert NO_TEMPERATURE in unknown.notes


def test_keep_off_is_elapsed_time_across_the_fall_change() -> None:
    saturday_noon = datetime(2026, 10, 31, 12, tzinfo=CHICAGO)
    deadline = keep_off_until(walk(saturday_noon), 70.0, CLYMAN)
    assert deadline.due - saturday_noon == timedelta(hours=48)
    assert deadline.due.astimezone(CHICAGO).hour == 11  # Monday 11 AM CST


def test_street_concrete_is_protected_three_days_whatever_the_weather() -> None:
    street = Pour("pour-2", "street", POUR_AT, "Main St at Elm")
    for temp in (None, 20.0, 80.0):
        deadline = keep_off_until(street, temp, CLYMAN)
        assert deadline.due == plus_elapsed(POUR_AT, timedelta(hours=72))
        assert deadline.citation == "§ 370-7G"
    assert keep_off_until(street, None, EXAMPLE).due == plus_elapsed(POUR_AT, timedelta(days=5))


def test_example_village_keeps_walks_off_by_its_own_numbers() -> None:
    at_52 = keep_off_until(walk(), 52.0, EXAMPLE)
    assert at_52.rule == "cold_weather.keep_off_cold"  # below Example's 55 °F
    assert at_52.due == plus_elapsed(POUR_AT, timedelta(hours=120))
    assert keep_off_until(walk(), 52.0, CLYMAN).due == plus_elapsed(POUR_AT, timedelta(hours=48))
    assert keep_off_until(walk(), 55.0, EXAMPLE).due == plus_elapsed(POUR_AT, timedelta(hours=72))


# -- § 144-13 sump discharge window ---------------------------------------------------


@pytest.mark.parametrize(
    ("day", "clyman", "example"),
    [
        (date(2026, 11, 14), False, False),
        (date(2026, 11, 15), True, False),
        (date(2026, 12, 1), True, True),
        (date(2026, 12, 31), True, True),
        (date(2027, 1, 1), True, True),
        (date(2028, 2, 29), True, True),
        (date(2027, 3, 31), True, True),
        (date(2027, 4, 1), True, False),
        (date(2027, 4, 15), True, False),
        (date(2027, 4, 16), False, False),
    ],
)
def test_the_sump_window_runs_nov_15_through_apr_15(day: date, clyman: bool, example: bool) -> None:
    assert sump_discharge_window_active(day, CLYMAN) is clyman
    assert sump_discharge_window_active(day, EXAMPLE) is example


def test_the_sump_window_says_which_winter_and_cites_chapter_144() -> None:
    status = sump_discharge_window(date(2027, 1, 1), CLYMAN)
    assert (status.first, status.last) == (date(2026, 11, 15), date(2027, 4, 15))
    assert status.citation == "§ 144-13 E (inferred)"
    off = sump_discharge_window(date(2027, 7, 1), CLYMAN)
    assert (off.active, off.first, off.last) == (False, None, None)
