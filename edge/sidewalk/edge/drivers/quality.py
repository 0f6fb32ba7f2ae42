"""The reading every driver returns, its quality flag, and the range/stuck checker.

A reading that fails a check is still returned (flagged), so the server can show
that the sensor spoke but was not believed; only ``Quality.GOOD`` readings may
be used as evidence.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Literal

# Payload field names: the unit is part of the name, as the message contract requires.
Quantity = Literal[
    "snow_depth_mm",
    "ground_temp_c",
    "air_temp_c",
    "relative_humidity_pct",
    "air_pressure_hpa",
    "surface_temp_c",
    "sensor_ambient_temp_c",
    "precip_mm",
]


class Quality(StrEnum):
    """How far a reading may be trusted; only GOOD readings count as evidence."""

    GOOD = "good"
    OUT_OF_RANGE = "out_of_range"  # outside the sensor's physical range or a known error code
    STUCK = "stuck"  # the same value too many times in a row for a live sensor
    CHECKSUM = "checksum"  # CRC / PEC failure on the wire
    UNCOMPENSATED = "uncompensated"  # a needed correction (e.g. air temperature) was missing
    NO_DATA = "no_data"  # timeout, no target, missing device


class SensorFault(Exception):
    """A frame that cannot be turned into a value (malformed, CRC, error code)."""

    def __init__(self, message: str, quality: Quality = Quality.CHECKSUM) -> None:
        super().__init__(message)
        self.quality = quality


@dataclass(frozen=True, slots=True)
class SensorReading:
    """One measured value, named by its payload field (unit in the name).

    ``value`` is None when nothing usable came off the wire (quality is then not
    GOOD); ``probe_depth_mm`` says where a ground probe sits below the surface.
    """

    quantity: Quantity
    value: float | None
    quality: Quality
    sensor_id: str
    ts: datetime
    probe_depth_mm: int | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Limits:
    """Plausibility limits for one sensor channel.

    ``stuck_after`` is how many identical consecutive values make a live sensor
    suspect (None disables the check, e.g. for a rain gauge that reads 0 for days).
    Values within ``stuck_tolerance`` of each other count as identical.
    """

    low: float
    high: float
    stuck_after: int | None = None
    stuck_tolerance: float = 0.0


class QualityChecker:
    """Flags out-of-range values and values that stop changing, per channel.

    It is stateful only in remembering the last few values of one channel; make
    one per sensor channel.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        history = limits.stuck_after if limits.stuck_after is not None else 1
        self._recent: deque[float] = deque(maxlen=history)

    def check(self, value: float) -> Quality:
        """Return the quality of ``value`` and remember it for the stuck test."""
        lim = self.limits
        if not lim.low <= value <= lim.high:
            return Quality.OUT_OF_RANGE
        self._recent.append(value)
        if (
            lim.stuck_after is not None
            and len(self._recent) == lim.stuck_after
            and max(self._recent) - min(self._recent) <= lim.stuck_tolerance
        ):
            return Quality.STUCK
        return Quality.GOOD
