"""What the ordinance itself says a notice must be, written from the Code's text.

Nothing here imports the engine, the profile or the renderer: the numbers come
from the seed text of § 370-10 A (``../shared/seeds``), so a change in the
engine that a reader of the Code would call wrong fails the acceptance suite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class ClearingRule:
    """§ 370-10 A as the Code states it."""

    hours_to_clear: int  # "within 24 hours from the time the snow ceases to accumulate"
    min_width_ft: int  # "to a minimum of four feet in width"
    section: str = "§ 370-10"


def clearing_rule(seeds: Path) -> ClearingRule:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(seeds.glob("*.txt")))
    start = text.index("§ 370-10 Snow and ice removal.")
    body = text[start : start + 4000]
    hours = re.search(r"within (\d+) hours from the time the snow ceases", body)
    width = re.search(r"minimum of (\w+) feet in width", body)
    if hours is None or width is None:
        raise ValueError("§ 370-10 A's period or width is not in the seed text")
    return ClearingRule(int(hours.group(1)), WORDS[width.group(1)])


@dataclass(frozen=True)
class Expected:
    """A clearing notice the Code calls for: whose walk, after which storm, to whom."""

    address: str
    storm: int
    snow_ceased: datetime
    owner: str  # the owner of record when the notice is due
    mailing: tuple[str, ...]

    def due(self, rule: ClearingRule) -> datetime:
        return self.snow_ceased + timedelta(hours=rule.hours_to_clear)


def violates(rule: ClearingRule, widths_ft: list[tuple[datetime, float]], due: datetime) -> bool:
    """True when the walk's cleared width at ``due`` is under the Code's minimum.

    ``widths_ft``: (when, cleared width) as the owner cleared it; before the
    first entry after the snow, nothing is cleared."""
    cleared = 0.0
    for at, width in sorted(widths_ft):
        if at <= due:
            cleared = width
    return cleared < rule.min_width_ft
