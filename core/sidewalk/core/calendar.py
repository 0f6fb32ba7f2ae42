"""The village calendar: local dates, business days and month-day windows. Pure.

Three kinds of time are kept apart, because the ordinance uses all three:

* elapsed time ("24 hours", "three days" of curing): real time, added to an
  aware instant, so a 24-hour clock across a DST change ends 24 real hours later;
* calendar days ("within 60 days of the date of the permit"): whole local
  dates in the village's zone; such a period runs to the *end* of its last day;
* business days ("not later than the next business day"): local dates that are
  one of the profile's business weekdays and not on its holiday list.

A ``Deadline.due`` is always the first instant at which time is up, so "by the
end of June 1" is due at local midnight starting June 2. Local midnight is
computed from the date in the zone, never by adding 24 hours, so it is right
on the 23- and 25-hour days of the DST changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

WEEKDAY_NAMES: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTH_DAY = re.compile(r"^(\d{2})-(\d{2})$")
# A year without Feb 29, so a window edge is a date every year.
_COMMON_YEAR = 2001


def _aware(instant: datetime) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"naive datetime {instant!r}: instants must carry a zone")
    return instant


def plus_elapsed(instant: datetime, duration: timedelta) -> datetime:
    """``instant`` plus real elapsed time, in UTC.

    Python adds a timedelta to an instant in a ``ZoneInfo`` zone on the wall
    clock (10 AM + 24 h is 10 AM the next day, 25 real hours across the fall
    change), so elapsed-time rules always add in UTC.
    """
    return _aware(instant).astimezone(UTC) + duration


def local_date(instant: datetime, zone: ZoneInfo) -> date:
    """The village's wall-clock date of an instant."""
    return _aware(instant).astimezone(zone).date()


def start_of_day(day: date, zone: ZoneInfo) -> datetime:
    """Local midnight beginning ``day``, as an aware UTC instant."""
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def end_of_day(day: date, zone: ZoneInfo) -> datetime:
    """The first instant after ``day`` ends locally (local midnight starting the next day)."""
    return start_of_day(day + timedelta(days=1), zone)


def add_calendar_days(day: date, days: int) -> date:
    """``day`` plus whole calendar days (negative goes back)."""
    return day + timedelta(days=days)


def add_months(day: date, months: int) -> date:
    """``day`` plus calendar months; a day the target month lacks becomes its last day.

    Jan 31 + 1 month is Feb 28 (Feb 29 in a leap year); Feb 29 + 12 months is Feb 28.
    """
    index = day.year * 12 + (day.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    next_month = date(year + (month == 12), month % 12 + 1, 1)
    last = (next_month - timedelta(days=1)).day
    return date(year, month, min(day.day, last))


@dataclass(frozen=True, order=True)
class MonthDay:
    """A date without a year (``11-15``); Feb 29 is refused as it is not a date every year."""

    month: int
    day: int

    def __post_init__(self) -> None:
        try:
            date(_COMMON_YEAR, self.month, self.day)
        except ValueError:
            raise ValueError(f"{self.month:02d}-{self.day:02d} is not a date every year") from None

    @classmethod
    def parse(cls, text: str) -> MonthDay:
        """``"MM-DD"`` → ``MonthDay``."""
        match = _MONTH_DAY.match(text)
        if match is None:
            raise ValueError(f"{text!r} is not MM-DD")
        return cls(int(match.group(1)), int(match.group(2)))

    def in_year(self, year: int) -> date:
        return date(year, self.month, self.day)

    def following(self, day: date) -> date:
        """The first date strictly after ``day`` that falls on this month-day."""
        this_year = self.in_year(day.year)
        return this_year if this_year > day else self.in_year(day.year + 1)

    def __str__(self) -> str:
        return f"{self.month:02d}-{self.day:02d}"


@dataclass(frozen=True)
class MonthDayWindow:
    """A yearly window of dates, both ends included; wraps the year end when end < start."""

    start: MonthDay
    end: MonthDay

    @property
    def wraps(self) -> bool:
        return self.end < self.start

    def contains(self, day: date) -> bool:
        """Whether ``day`` lies inside the window (Feb 29 sorts between 02-28 and 03-01)."""
        key = (day.month, day.day)
        start = (self.start.month, self.start.day)
        end = (self.end.month, self.end.day)
        if self.wraps:
            return key >= start or key <= end
        return start <= key <= end

    def occurrence(self, day: date) -> tuple[date, date] | None:
        """The first and last date of the window's occurrence containing ``day``, if any."""
        if not self.contains(day):
            return None
        if not self.wraps:
            return self.start.in_year(day.year), self.end.in_year(day.year)
        if (day.month, day.day) >= (self.start.month, self.start.day):
            return self.start.in_year(day.year), self.end.in_year(day.year + 1)
        return self.start.in_year(day.year - 1), self.end.in_year(day.year)

    def next_occurrence(self, day: date) -> tuple[date, date]:
        """The occurrence containing ``day``, or else the next one to begin after it."""
        current = self.occurrence(day)
        if current is not None:
            return current
        first = self.start.following(day)
        last = self.end.in_year(first.year + 1 if self.wraps else first.year)
        return first, last


@dataclass(frozen=True)
class BusinessCalendar:
    """Business days: the listed weekdays (0 = Monday) that are not holidays."""

    weekdays: frozenset[int] = frozenset(range(5))
    holidays: frozenset[date] = frozenset()

    def __post_init__(self) -> None:
        if not self.weekdays or not self.weekdays <= set(range(7)):
            raise ValueError("business weekdays must be a non-empty subset of 0..6")

    @classmethod
    def of(cls, weekday_names: Iterable[str], holidays: Iterable[date]) -> BusinessCalendar:
        """Build from weekday names (``"mon"`` …) and holiday dates."""
        return cls(frozenset(WEEKDAY_NAMES.index(n) for n in weekday_names), frozenset(holidays))

    def is_business_day(self, day: date) -> bool:
        return day.weekday() in self.weekdays and day not in self.holidays

    def next_business_day(self, day: date) -> date:
        """The first business day strictly after ``day``."""
        day += timedelta(days=1)
        while not self.is_business_day(day):
            day += timedelta(days=1)
        return day

    def previous_business_day(self, day: date) -> date:
        """The last business day strictly before ``day``."""
        day -= timedelta(days=1)
        while not self.is_business_day(day):
            day -= timedelta(days=1)
        return day

    def add_business_days(self, day: date, count: int) -> date:
        """The ``count``-th business day after ``day`` (``day`` itself for 0); count >= 0."""
        if count < 0:
            raise ValueError("count must not be negative")
        for _ in range(count):
            day = self.next_business_day(day)
        return day

    def business_days_between(self, after: date, through: date) -> int:
        """How many business days lie in (``after``, ``through``]."""
        count = 0
        day = after + timedelta(days=1)
        while day <= through:
            count += self.is_business_day(day)
            day += timedelta(days=1)
        return count


class CitedRule(Protocol):
    """What a deadline needs to know of the profile value(s) behind it."""

    @property
    def citation(self) -> str | None: ...
    @property
    def unconfirmed(self) -> bool: ...
    @property
    def note(self) -> str | None: ...


@dataclass(frozen=True)
class Deadline:
    """When a clock runs out, and which rule says so.

    ``start`` is the event time of what caused the clock (a pour, a notice's
    delivery, a permit's approval); ``due`` is the first instant at which time
    is up. ``unconfirmed`` is set when any value behind it is a gap in the text.
    """

    rule: str
    start: datetime
    due: datetime
    citation: str | None
    unconfirmed: bool = False
    notes: tuple[str, ...] = ()

    def passed(self, at: datetime) -> bool:
        """Whether time is up at ``at``."""
        return _aware(at) >= self.due

    @classmethod
    def of(
        cls,
        rule: str,
        start: datetime,
        due: datetime,
        *sources: CitedRule,
        notes: tuple[str, ...] = (),
    ) -> Deadline:
        """A deadline citing every profile value it was computed from."""
        citations = list(dict.fromkeys(s.citation for s in sources if s.citation))
        return cls(
            rule=rule,
            start=_aware(start),
            due=_aware(due).astimezone(UTC),
            citation="; ".join(citations) or None,
            unconfirmed=any(s.unconfirmed for s in sources),
            notes=tuple(dict.fromkeys([*(s.note for s in sources if s.note), *notes])),
        )
