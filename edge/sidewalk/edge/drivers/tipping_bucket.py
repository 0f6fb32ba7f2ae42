"""Precipitation from a heated tipping-bucket gauge counted on a GPIO pin.

The bucket's reed switch closes once per tip. The kernel counts the edges
(the ``interrupt-cnt`` counter driver, bound to the pin by a device-tree
overlay; see hardware/wiring.md), so no tip is lost while Python sleeps, and
exposes a free-running count at ``/sys/bus/counter/devices/counterN/count0/count``.
The driver turns count differences into millimetres of water; the heater melts
snow so a tip is snow water equivalent. Reed bounce is filtered in hardware
(RC + Schmitt trigger); an impossible rate is flagged rather than published.
"""

from __future__ import annotations

from pathlib import Path

from sidewalk.edge.drivers.ports import Clock, utc_now
from sidewalk.edge.drivers.quality import Limits, Quality, QualityChecker, SensorReading

COUNTER_MODULUS = 2**32  # interrupt-cnt keeps the count in a 32-bit atomic


def tips_since(previous: int, current: int, modulus: int = COUNTER_MODULUS) -> int:
    """Tips between two counter values, across a wrap or a counter reset (reboot).

    A smaller value after a value in the upper half of the range is a wrap; after
    a value in the lower half it is a reset, and the new count is all tips since.
    """
    if current >= previous:
        return current - previous
    if previous >= modulus // 2:
        return current + modulus - previous
    return current


def precipitation_mm(tips: int, mm_per_tip: float) -> float:
    """Water depth for ``tips`` tips of a bucket of ``mm_per_tip`` resolution."""
    return tips * mm_per_tip


class TippingBucket:
    """Reports the precipitation since the previous read from a kernel edge counter."""

    def __init__(
        self,
        count_path: Path,
        sensor_id: str,
        mm_per_tip: float = 0.2,
        max_mm_per_reading: float = 25.0,
        clock: Clock = utc_now,
    ) -> None:
        self.count_path = count_path
        self.sensor_id = sensor_id
        self.mm_per_tip = mm_per_tip
        # No stuck test: zero for days is ordinary. The limit catches switch chatter.
        self.checker = QualityChecker(Limits(0.0, max_mm_per_reading))
        self.clock = clock
        self._previous: int | None = None

    def read(self) -> SensorReading:
        """Precipitation since the last call; the first call only establishes the baseline."""
        ts = self.clock()
        try:
            current = int(self.count_path.read_text(encoding="ascii").strip())
        except (OSError, ValueError) as exc:
            return SensorReading(
                "precip_mm", None, Quality.NO_DATA, self.sensor_id, ts, detail=str(exc)
            )
        previous, self._previous = self._previous, current
        if previous is None:
            return SensorReading(
                "precip_mm", None, Quality.NO_DATA, self.sensor_id, ts, detail="baseline"
            )
        mm = precipitation_mm(tips_since(previous, current), self.mm_per_tip)
        return SensorReading("precip_mm", round(mm, 3), self.checker.check(mm), self.sensor_id, ts)
