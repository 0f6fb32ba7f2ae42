"""A simulated pole: plays a scenario's readings through the real publisher path.

Each reading is buffered exactly as a sensor driver's would be (seq assigned,
durable on disk) and the ``Publisher`` sends it. With ``speed=None`` the
scenario plays as fast as the buffer takes it; with ``speed=60`` one scenario
minute passes per wall-clock second.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from sidewalk.core.contract import AnyReading
from sidewalk.edge.publisher import Publisher


@dataclass(frozen=True, slots=True)
class ScenarioReading:
    """One timestamped reading of a scenario.

    ``values`` holds the stream's measurement fields, e.g. ``{"air_temp_c": -4.0}``
    for weather or ``{"frontage": "main-st-101", "snow_cover_fraction": 0.8,
    "cleared_width_mm": 300.0}`` for snow.
    """

    ts_ms: int
    stream: Literal["weather", "snow"]
    values: dict[str, Any] = field(default_factory=dict)


class SimulatedPole:
    """Feeds a scenario into a publisher, at full speed or scaled to wall time."""

    def __init__(
        self,
        publisher: Publisher,
        scenario: Iterable[ScenarioReading],
        *,
        speed: float | None = None,
    ) -> None:
        if speed is not None and speed <= 0:
            raise ValueError("speed must be positive (or None for as fast as possible)")
        self.publisher = publisher
        self._scenario = scenario
        self._speed = speed
        self._stop = threading.Event()

    def run(self) -> list[AnyReading]:
        """Play the whole scenario (or until ``stop()``); returns what was buffered."""
        played: list[AnyReading] = []
        first_ts: int | None = None
        started = time.monotonic()
        for item in self._scenario:
            if self._stop.is_set():
                break
            if self._speed is not None:
                first_ts = item.ts_ms if first_ts is None else first_ts
                due = started + (item.ts_ms - first_ts) / 1000 / self._speed
                if self._stop.wait(max(0.0, due - time.monotonic())):
                    break
            played.append(self.publisher.record(item.stream, item.ts_ms, item.values))
        return played

    def stop(self) -> None:
        """Stop playing after the current reading."""
        self._stop.set()
