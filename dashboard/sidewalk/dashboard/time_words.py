"""Instants in the village's own words, as the dashboard's pages write them (when.js):
"today 9:30 AM", "yesterday 4:10 PM", "Sat, Dec 19, 9:30 AM" — on the village's clock,
never UTC or epoch milliseconds."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo


def clock_words(at: datetime, zone: ZoneInfo) -> str:
    """A time of day on the village's clock (9:30 AM)."""
    return at.astimezone(zone).strftime("%I:%M %p").lstrip("0")


def village_time(at: datetime, now: datetime, zone: ZoneInfo) -> str:
    """``at`` with its day said relative to ``now`` (both aware), in the village's zone."""
    local, today = at.astimezone(zone), now.astimezone(zone).date()
    day = {
        today: "today",
        today + timedelta(days=1): "tomorrow",
        today - timedelta(days=1): "yesterday",
    }.get(local.date())
    if day is None:
        day = f"{local:%a}, {local:%b} {local.day},"
    return f"{day} {clock_words(at, zone)}"
