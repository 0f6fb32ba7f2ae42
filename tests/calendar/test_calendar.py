"""The village calendar: DST-safe days, business days, month-day windows, leap day."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidewalk.core.calendar import (
    BusinessCalendar,
    Deadline,
    MonthDay,
    MonthDayWindow,
    add_calendar_days,
    add_months,
    end_of_day,
    local_date,
    start_of_day,
)
from sidewalk.core.profile import load_profile

CHICAGO = ZoneInfo("America/Chicago")
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example_village.toml"
CLYMAN = load_profile()
CLYMAN_DAYS = CLYMAN.business_calendar
WINDOW = MonthDayWindow(MonthDay(11, 15), MonthDay(4, 1))


# -- local days across DST ------------------------------------------------------


def test_the_spring_change_day_is_23_hours_and_the_fall_one_25() -> None:
    spring, fall, plain = date(2026, 3, 8), date(2026, 11, 1), date(2026, 11, 2)
    assert end_of_day(spring, CHICAGO) - start_of_day(spring, CHICAGO) == timedelta(hours=23)
    assert end_of_day(fall, CHICAGO) - start_of_day(fall, CHICAGO) == timedelta(hours=25)
    assert end_of_day(plain, CHICAGO) - start_of_day(plain, CHICAGO) == timedelta(hours=24)


def test_end_of_day_is_local_midnight_in_either_offset() -> None:
    assert end_of_day(date(2026, 6, 1), CHICAGO) == datetime(2026, 6, 2, 5, tzinfo=UTC)  # CDT
    assert end_of_day(date(2026, 12, 1), CHICAGO) == datetime(2026, 12, 2, 6, tzinfo=UTC)  # CST


def test_local_date_is_the_village_wall_date_not_utc() -> None:
    late_evening = datetime(2026, 12, 31, 23, 30, tzinfo=CHICAGO)
    assert late_evening.astimezone(UTC).date() == date(2027, 1, 1)
    assert local_date(late_evening, CHICAGO) == date(2026, 12, 31)
    with pytest.raises(ValueError, match="naive"):
        local_date(datetime(2026, 12, 31, 23, 30), CHICAGO)  # noqa: DTZ001 - the point of the test


# -- calendar days and months ---------------------------------------------------


def test_calendar_days_cross_leap_day_and_year_end() -> None:
    assert add_calendar_days(date(2028, 2, 28), 1) == date(2028, 2, 29)
    assert add_calendar_days(date(2028, 1, 1), 60) == date(2028, 3, 1)
    assert add_calendar_days(date(2027, 1, 1), 60) == date(2027, 3, 2)
    assert add_calendar_days(date(2026, 12, 31), 1) == date(2027, 1, 1)


@pytest.mark.parametrize(
    ("start", "months", "expected"),
    [
        (date(2027, 1, 31), 1, date(2027, 2, 28)),
        (date(2028, 1, 31), 1, date(2028, 2, 29)),
        (date(2027, 11, 30), 3, date(2028, 2, 29)),
        (date(2026, 11, 30), 3, date(2027, 2, 28)),
        (date(2028, 2, 29), 12, date(2029, 2, 28)),
        (date(2028, 2, 29), 60, date(2033, 2, 28)),
        (date(2026, 10, 15), 3, date(2027, 1, 15)),
        (date(2026, 12, 15), 1, date(2027, 1, 15)),
    ],
)
def test_add_months_clamps_to_the_last_day_of_the_month(
    start: date, months: int, expected: date
) -> None:
    assert add_months(start, months) == expected


# -- month-day windows ----------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "inside"),
    [
        (date(2026, 11, 14), False),
        (date(2026, 11, 15), True),
        (date(2026, 12, 31), True),
        (date(2027, 1, 1), True),
        (date(2028, 2, 29), True),
        (date(2027, 4, 1), True),
        (date(2027, 4, 2), False),
        (date(2027, 7, 4), False),
    ],
)
def test_a_window_that_wraps_the_year_end_includes_both_named_days(day: date, inside: bool) -> None:
    assert WINDOW.wraps
    assert WINDOW.contains(day) is inside


def test_the_occurrence_of_a_wrapping_window_spans_two_years() -> None:
    winter = (date(2026, 11, 15), date(2027, 4, 1))
    assert WINDOW.occurrence(date(2026, 12, 31)) == winter
    assert WINDOW.occurrence(date(2027, 1, 1)) == winter
    assert WINDOW.occurrence(date(2027, 4, 2)) is None
    assert WINDOW.next_occurrence(date(2027, 4, 2)) == (date(2027, 11, 15), date(2028, 4, 1))
    summer = MonthDayWindow(MonthDay(6, 1), MonthDay(8, 31))
    assert not summer.wraps
    assert summer.occurrence(date(2027, 6, 1)) == (date(2027, 6, 1), date(2027, 8, 31))
    assert summer.contains(date(2027, 8, 31))
    assert not summer.contains(date(2027, 9, 1))
    assert not summer.contains(date(2027, 5, 31))
    assert summer.next_occurrence(date(2027, 9, 1)) == (date(2028, 6, 1), date(2028, 8, 31))


def test_month_days_parse_and_refuse_feb_29_and_nonsense() -> None:
    assert MonthDay.parse("11-15") == MonthDay(11, 15)
    assert str(MonthDay(6, 1)) == "06-01"
    assert MonthDay(6, 1).following(date(2027, 1, 10)) == date(2027, 6, 1)
    assert MonthDay(6, 1).following(date(2027, 6, 1)) == date(2028, 6, 1)
    for bad in ("02-29", "13-01", "11-31", "1115", "Nov 15"):
        with pytest.raises(ValueError, match=r"not MM-DD|not a date every year"):
            MonthDay.parse(bad)


# -- business days --------------------------------------------------------------


def test_a_friday_is_followed_by_monday() -> None:
    friday = date(2026, 12, 4)
    assert CLYMAN_DAYS.next_business_day(friday) == date(2026, 12, 7)
    assert CLYMAN_DAYS.next_business_day(date(2026, 12, 5)) == date(2026, 12, 7)  # Saturday


def test_a_holiday_monday_is_skipped_to_tuesday() -> None:
    labor_day = date(2026, 9, 7)
    assert not CLYMAN_DAYS.is_business_day(labor_day)
    assert CLYMAN_DAYS.next_business_day(date(2026, 9, 4)) == date(2026, 9, 8)


def test_business_days_cross_the_year_end_holidays() -> None:
    # Dec 31, 2027 is New Year's Day 2028 observed; Jan 1-2 are a weekend.
    assert CLYMAN_DAYS.next_business_day(date(2027, 12, 30)) == date(2028, 1, 3)
    assert CLYMAN_DAYS.previous_business_day(date(2028, 1, 3)) == date(2027, 12, 30)
    assert CLYMAN_DAYS.add_business_days(date(2027, 12, 23), 2) == date(2027, 12, 28)


def test_calendar_days_and_business_days_differ() -> None:
    thursday = date(2026, 11, 26)  # Thanksgiving
    assert add_calendar_days(thursday, 3) == date(2026, 11, 29)
    assert CLYMAN_DAYS.add_business_days(thursday, 3) == date(2026, 12, 1)  # Fri, Mon, Tue
    assert CLYMAN_DAYS.business_days_between(thursday, date(2026, 11, 29)) == 1


def test_another_villages_calendar_counts_saturdays_and_its_own_holidays() -> None:
    example = load_profile(EXAMPLE).business_calendar
    assert example.next_business_day(date(2026, 12, 4)) == date(2026, 12, 5)
    assert example.next_business_day(date(2026, 11, 25)) == date(2026, 11, 28)
    assert CLYMAN_DAYS.next_business_day(date(2026, 11, 25)) == date(2026, 11, 27)


def test_a_calendar_needs_a_business_weekday_and_a_count_that_is_not_negative() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        BusinessCalendar(frozenset())
    with pytest.raises(ValueError, match="negative"):
        CLYMAN_DAYS.add_business_days(date(2026, 12, 4), -1)
    assert CLYMAN_DAYS.add_business_days(date(2026, 12, 5), 0) == date(2026, 12, 5)


_days = st.dates(min_value=date(2025, 1, 1), max_value=date(2030, 12, 31))
_holidays = st.frozensets(_days, max_size=40)
_weekdays = st.frozensets(st.integers(0, 6), min_size=1)


@given(start=_days, count=st.integers(1, 40), holidays=_holidays, weekdays=_weekdays)
def test_adding_business_days_lands_on_one_and_counts_back(
    start: date, count: int, holidays: frozenset[date], weekdays: frozenset[int]
) -> None:
    calendar = BusinessCalendar(weekdays, holidays)
    end = calendar.add_business_days(start, count)
    assert calendar.is_business_day(end)
    assert end.weekday() in weekdays
    assert end not in holidays
    assert calendar.business_days_between(start, end) == count
    assert calendar.business_days_between(start, end - timedelta(days=1)) == count - 1


@given(start=_days, count=st.integers(1, 40))
def test_clyman_business_days_never_fall_on_a_weekend_or_holiday(start: date, count: int) -> None:
    end = CLYMAN_DAYS.add_business_days(start, count)
    assert end.weekday() < 5
    assert end not in CLYMAN.calendar.holidays
    assert end > start
    assert CLYMAN_DAYS.previous_business_day(CLYMAN_DAYS.next_business_day(end)) == end


@given(day=st.dates(min_value=date(2024, 1, 1), max_value=date(2032, 12, 31)))
def test_a_day_is_in_the_window_exactly_when_its_occurrence_holds_it(day: date) -> None:
    occurrence = WINDOW.occurrence(day)
    assert (occurrence is not None) == WINDOW.contains(day)
    if occurrence is not None:
        first, last = occurrence
        assert first <= day <= last
        assert (first.month, first.day, last.month, last.day) == (11, 15, 4, 1)


@given(day=st.dates(min_value=date(2024, 1, 1), max_value=date(2032, 12, 31)))
def test_every_local_day_starts_where_the_last_one_ended(day: date) -> None:
    assert end_of_day(day, CHICAGO) == start_of_day(day + timedelta(days=1), CHICAGO)
    length = end_of_day(day, CHICAGO) - start_of_day(day, CHICAGO)
    assert length in {timedelta(hours=23), timedelta(hours=24), timedelta(hours=25)}


# -- deadlines carry their rules ------------------------------------------------


def test_a_deadline_cites_every_rule_and_carries_the_unconfirmed_mark() -> None:
    rule = CLYMAN.street_openings.emergency_permit_application
    start = datetime(2026, 12, 4, 22, tzinfo=CHICAGO)
    due = end_of_day(date(2026, 12, 7), CHICAGO)
    deadline = Deadline.of("x", start, due, rule, CLYMAN.calendar)
    assert deadline.citation == "§ 370-7 H"
    assert deadline.unconfirmed
    assert any("business day" in note for note in deadline.notes)
    assert deadline.due.tzinfo is UTC
    assert not deadline.passed(due - timedelta(microseconds=1))
    assert deadline.passed(due)
    confirmed = Deadline.of("x", start, due, rule)
    assert not confirmed.unconfirmed
    assert confirmed.notes == ()
