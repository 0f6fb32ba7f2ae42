"""A running clock's row in the Overview's clock table, as plain data.

One function makes it for the page's first read (``/api/overview/page``) and for the live
feed's events (``live.LiveFeed``), so a clock a live event brings is drawn exactly as a
reload draws it: the same fields, the same "unconfirmed" mark.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sidewalk.alerts.confirm import still_waiting
from sidewalk.dashboard.states import category
from sidewalk.storage.cases import ConfirmationRecord, RuleUse


class RowClock(Protocol):
    """What the row reads of a clock: a whole ``ClockRecord`` or a lean ``RunningClock``."""

    @property
    def id(self) -> int: ...
    @property
    def frontage_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def deadline(self) -> datetime | None: ...
    @property
    def unconfirmed(self) -> bool: ...
    @property
    def rules(self) -> Sequence[RuleUse]: ...


def clock_row(
    c: RowClock, address: str | None, in_force: dict[str, ConfirmationRecord]
) -> dict[str, Any]:
    """The clock's row. ``in_force``: the Village's confirmations; the clock's own flag is
    the profile's mark when it started, so it is "unconfirmed" only while a value it used
    still waits for the Village's confirmation."""
    return {
        "id": c.id,
        "frontage": c.frontage_id,
        "address": address,
        "kind": c.kind,
        "state": c.state,
        "category": category(c.state),
        "deadline": None if c.deadline is None else c.deadline.isoformat(),
        "unconfirmed": c.unconfirmed and bool(still_waiting(c.rules, in_force)),
    }
