"""When does "snow cease to accumulate" (§ 370-10 A)? Decided from one pole's weather stream.

Signals of accumulation, per reading:

* depth: the snow depth rose at least ``depth_rise_mm`` above a reference level
  (the depth at the last accumulation, lowered when snow settles or melts), so
  sensor noise smaller than that never starts or extends a snowfall;
* precipitation: the gauge tipped at least ``precip_min_mm`` while the air was at
  or below ``snow_max_air_temp_c`` (warmer precipitation is rain).

A snowfall begins at the first signal. It has ceased once ``quiet_period`` of
event time passes with no signal; the cessation time is then set in the
owner's favour: the later of the last signal and the first reading that came
within half the rise threshold of the snowfall's peak depth. A brief lull
shorter than ``quiet_period`` stays inside one storm.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from sidewalk.analytics.clocks.events import Cause
from sidewalk.core.contract import WeatherReading


@dataclass(frozen=True)
class DetectionParams:
    """Sensor-fusion parameters (engineering choices, not ordinance values)."""

    depth_rise_mm: float = 8.0
    precip_min_mm: float = 0.2
    snow_max_air_temp_c: float = 1.5
    quiet_period: timedelta = timedelta(hours=1)
    # A camera measurement older than this at the deadline is not evidence.
    evidence_max_age: timedelta = timedelta(hours=2)
    # Decide a deadline only after this much more event time, so readings
    # buffered on a pole during a short outage still count.
    decision_grace: timedelta = timedelta(minutes=10)

    def __post_init__(self) -> None:
        if self.depth_rise_mm <= 0 or self.precip_min_mm <= 0:
            raise ValueError("thresholds must be positive")
        if self.quiet_period <= timedelta(0) or self.decision_grace < timedelta(0):
            raise ValueError("quiet_period must be positive and decision_grace not negative")


@dataclass(frozen=True)
class SnowfallChange:
    kind: Literal["onset", "cessation"]
    at: datetime
    cause: Cause
    peak_depth_mm: float | None = None


@dataclass
class SnowfallDetector:
    """Onset and cessation of snowfall at one weather device. Event-time, deterministic."""

    device: str
    params: DetectionParams = field(default_factory=DetectionParams)
    accumulating: bool = False
    last_ts: datetime | None = None
    ref_depth_mm: float | None = None
    onset_at: datetime | None = None
    last_signal_at: datetime | None = None
    last_signal_cause: Cause | None = None
    peak_depth_mm: float | None = None
    # (ts, depth) since onset: the cessation estimate looks back over it.
    depths: list[tuple[datetime, float]] = field(default_factory=list)
    late_readings: int = 0

    def observe(self, reading: WeatherReading) -> list[SnowfallChange]:
        """Take one reading; returns the onset/cessation it reveals, in order."""
        at = reading.event_time
        if self.last_ts is not None and at <= self.last_ts:
            # Out of order or repeated: a trend cannot move backwards.
            self.late_readings += 1
            return []
        changes = self.advance(at)
        self.last_ts = at
        cause = Cause(kind="reading", at=at, device=reading.device, seq=reading.seq)
        signal = self._depth_signal(reading.snow_depth_mm) | self._precip_signal(reading)
        if self.accumulating and reading.snow_depth_mm is not None:
            self.depths.append((at, reading.snow_depth_mm))
            self.peak_depth_mm = max(self.peak_depth_mm or 0.0, reading.snow_depth_mm)
        if signal:
            if not self.accumulating:
                self.accumulating = True
                self.onset_at = at
                self.depths = [] if reading.snow_depth_mm is None else [(at, reading.snow_depth_mm)]
                self.peak_depth_mm = reading.snow_depth_mm
                changes.append(SnowfallChange("onset", at, cause))
            self.last_signal_at = at
            self.last_signal_cause = cause
        return changes

    def advance(self, to: datetime) -> list[SnowfallChange]:
        """Declare cessation once the quiet period has passed by ``to``."""
        if not self.accumulating or self.last_signal_at is None:
            return []
        if to < self.last_signal_at + self.params.quiet_period:
            return []
        assert self.last_signal_cause is not None
        ceased_at, cause = self._cessation_estimate()
        change = SnowfallChange("cessation", ceased_at, cause, self.peak_depth_mm)
        self.accumulating = False
        self.depths = []
        return [change]

    def _cessation_estimate(self) -> tuple[datetime, Cause]:
        assert self.last_signal_at is not None and self.last_signal_cause is not None
        ceased_at, cause = self.last_signal_at, self.last_signal_cause
        if self.peak_depth_mm is not None:
            near_peak = self.peak_depth_mm - self.params.depth_rise_mm / 2
            reached = next((ts for ts, depth in self.depths if depth >= near_peak), None)
            if reached is not None and reached > ceased_at:
                ceased_at = reached
                cause = Cause(kind="reading", at=reached, device=self.device)
        return ceased_at, cause

    def _depth_signal(self, depth: float | None) -> bool:
        if depth is None:
            return False
        if self.ref_depth_mm is None:
            self.ref_depth_mm = depth
            return False
        if depth >= self.ref_depth_mm + self.params.depth_rise_mm:
            self.ref_depth_mm = depth
            return True
        if depth <= self.ref_depth_mm - self.params.depth_rise_mm:
            self.ref_depth_mm = depth  # settling, melt or clearing under the sensor
        return False

    def _precip_signal(self, reading: WeatherReading) -> bool:
        if reading.precip_mm is None or reading.precip_mm < self.params.precip_min_mm:
            return False
        return reading.air_temp_c is None or reading.air_temp_c <= self.params.snow_max_air_temp_c
