"""Event time.

Every decision uses the event time a reading carries (``ts``), never the time a
message happened to arrive. Instants are timezone-aware UTC ``datetime``s;
arithmetic on them is in real elapsed time, so a 24-hour clock that spans a
DST change ends 24 real hours later. Local time is for display only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol
from zoneinfo import ZoneInfo


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """Wall-clock time, for the live runner."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class StreamClock:
    """Time as the stream tells it: the latest event time seen; never moves back.

    Replays advance this clock with the readings' own ``ts``, at any speed.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start

    def now(self) -> datetime:
        if self._now is None:
            raise RuntimeError("the stream has not told the time yet")
        return self._now

    def observe(self, instant: datetime) -> bool:
        """Move forward to ``instant``; returns False (and stays) if it is older."""
        require_aware(instant)
        if self._now is None or instant > self._now:
            self._now = instant
            return True
        return False


def require_aware(instant: datetime) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"naive datetime {instant!r}: event times must carry a zone")
    return instant


def from_ms(ts_ms: int) -> datetime:
    """Contract ``ts`` (UTC milliseconds) to an aware UTC datetime."""
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC)


def to_ms(instant: datetime) -> int:
    """Aware datetime to contract ``ts`` (UTC milliseconds), exactly."""
    require_aware(instant)
    delta = instant.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def local(instant: datetime, zone: ZoneInfo) -> datetime:
    """The same instant on the village's wall clock."""
    return require_aware(instant).astimezone(zone)


def format_local(instant: datetime, zone: ZoneInfo) -> str:
    """``Thursday, December 10, 2026 at 5:00 PM CST``: how a notice states a time."""
    wall = local(instant, zone)
    hour = wall.strftime("%I").lstrip("0")
    return (
        f"{wall.strftime('%A, %B')} {wall.day}, {wall.year} at {hour}:{wall.strftime('%M %p %Z')}"
    )
