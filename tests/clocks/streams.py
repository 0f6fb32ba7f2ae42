"""Reading streams for clock tests: one pole, a running seq, storms with known times."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from sidewalk.core.clock import to_ms
from sidewalk.core.contract import AnyReading, SnowMeasurement, WeatherReading

DEVICE = "pole-1"


class Pole:
    """Builds one pole's readings with a running seq."""

    def __init__(self) -> None:
        self.seq = 0

    def weather(self, at: datetime, depth: float, precip: float = 0.0) -> WeatherReading:
        self.seq += 1
        return WeatherReading(
            device=DEVICE,
            seq=self.seq,
            ts=to_ms(at),
            snow_depth_mm=depth,
            precip_mm=precip,
            air_temp_c=-5.0,
        )

    def camera(
        self,
        at: datetime,
        frontage: str,
        width_mm: float,
        *,
        ice: bool = False,
        surface: str | None = None,
        surface_temp_c: float | None = None,
        width_uncertainty_mm: float | None = None,
    ) -> SnowMeasurement:
        self.seq += 1
        return SnowMeasurement(
            device=DEVICE,
            seq=self.seq,
            ts=to_ms(at),
            frontage=frontage,
            cleared_width_mm=width_mm,
            snow_cover_fraction=0.5,
            ice_suspected=ice,
            # Ignored: the stream builder takes the surface state as a plain str.
            surface_state=surface,  # type: ignore[arg-type]
            surface_temp_c=surface_temp_c,
            width_uncertainty_mm=width_uncertainty_mm,
        )

    def pavement(self, at: datetime, surface_temp_c: float) -> WeatherReading:
        """The pole's infrared pavement temperature, alone in a weather reading."""
        self.seq += 1
        return WeatherReading(
            device=DEVICE, seq=self.seq, ts=to_ms(at), surface_temp_c=surface_temp_c
        )


def every(start: datetime, end: datetime, step: timedelta) -> Iterator[datetime]:
    """Instants ``step`` apart in real time (UTC: wall-clock steps skip or repeat at DST)."""
    t, end = start.astimezone(UTC), end.astimezone(UTC)
    while t <= end:
        yield t
        t += step


def storm(
    pole: Pole, onset: datetime, hours: float, rate_mm_h: float = 20.0, base: float = 0.0
) -> list[AnyReading]:
    """Five-minute weather readings: depth rising linearly for ``hours``, then flat for 3 h."""
    onset = onset.astimezone(UTC)  # elapsed-time arithmetic, right across DST
    end = onset + timedelta(hours=hours)
    readings: list[AnyReading] = []
    for t in every(onset - timedelta(minutes=30), end + timedelta(hours=3), timedelta(minutes=5)):
        falling = onset < t <= end
        elapsed = min(max((t - onset).total_seconds(), 0), hours * 3600) / 3600
        readings.append(pole.weather(t, base + rate_mm_h * elapsed, precip=0.4 if falling else 0.0))
    return readings
