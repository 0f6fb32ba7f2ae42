"""Snow depth from a MaxBotix HRXL-MaxSonar-WR ultrasonic ranger on a serial line.

Wire format (HRXL-MaxSonar-WR datasheet, pin 5 serial output): 9600 baud, 8N1,
no flow control; the sensor streams frames of an ASCII ``R``, four ASCII digits
of range in millimetres, and a carriage return (``R1234\\r``). On the 5 m models
(MB736x/738x) ``R5000`` means "no target" and ``R0300`` means "target at or
inside 300 mm" (e.g. snow heaped up against the sensor). The MB736x TTL output is
inverted; the wiring document covers that.

Sound travels slower in cold air, so the range is corrected as the Campbell
SR50A manual prescribes: ``distance x sqrt(T / 273.15)``, T the air temperature
in kelvin. Snow depth is the true distance to bare ground (taped at
installation) minus the corrected distance to the snow surface.
"""

from __future__ import annotations

import math
import re
import statistics
import time
from dataclasses import dataclass

import serial  # type: ignore[import-untyped]  # pyserial ships no type information

from sidewalk.edge.drivers.ports import Clock, SerialPort, utc_now
from sidewalk.edge.drivers.quality import Limits, Quality, QualityChecker, SensorReading

_FRAME = re.compile(rb"R(\d{4})\r")
# A frame is 6 bytes; keep at most one partial frame between reads.
_MAX_TAIL = 5
ZERO_C_IN_K = 273.15


def parse_maxbotix_stream(buffer: bytes) -> tuple[list[int], bytes]:
    """Extract every complete ``R####\\r`` range (mm) from ``buffer``.

    Returns the ranges in order and the unparsed tail to prepend to the next
    read. Bytes that are not part of a frame (line noise, a frame cut by a port
    reopen) are skipped, never guessed at.
    """
    ranges = [int(m.group(1)) for m in _FRAME.finditer(buffer)]
    last_cr = buffer.rfind(b"\r")
    tail = buffer[last_cr + 1 :] if last_cr >= 0 else buffer
    start = tail.rfind(b"R")
    tail = tail[start:] if start >= 0 else b""
    return ranges, tail[-_MAX_TAIL:]


def speed_of_sound_corrected_mm(distance_mm: float, air_temp_c: float) -> float:
    """Correct a range measured at the 0 °C speed of sound to the actual air temperature.

    SR50A manual: corrected = reading x sqrt(T_K / 273.15).
    """
    kelvin = air_temp_c + ZERO_C_IN_K
    if kelvin <= 0:
        raise ValueError(f"air temperature {air_temp_c} °C is below absolute zero")
    return distance_mm * math.sqrt(kelvin / ZERO_C_IN_K)


def snow_depth_from_range_mm(ground_distance_mm: float, surface_distance_mm: float) -> float:
    """Snow depth: the distance to bare ground minus the distance to the snow surface."""
    return ground_distance_mm - surface_distance_mm


@dataclass(frozen=True, slots=True)
class MaxbotixModel:
    """Range limits of one ranger model (the limit values are its error codes), and
    whether its output is already temperature compensated.

    ``compensates_internally`` must follow the datasheet of the unit ordered: a
    ranger that reports at the 0 °C speed of sound (the SR50A convention) needs
    the air-temperature correction here; one that compensates with its own
    sensor must not be corrected twice.
    """

    min_mm: int = 300
    max_mm: int = 5000  # HRXL 5 m models; 10 m models (MB7369/7389) report 9999
    compensates_internally: bool = False


class UltrasonicSnowDepth:
    """Reads a burst of frames, takes the median, corrects for temperature, returns depth.

    ``ground_distance_mm`` is the true distance from the transducer face to the
    bare snow board, taped at installation (hardware/calibration.md).
    """

    def __init__(
        self,
        port: SerialPort,
        *,
        ground_distance_mm: float,
        sensor_id: str,
        model: MaxbotixModel | None = None,
        frames_per_reading: int = 7,
        timeout_s: float = 3.0,
        limits: Limits | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.port = port
        self.ground_distance_mm = ground_distance_mm
        self.sensor_id = sensor_id
        self.model = model or MaxbotixModel()
        self.frames_per_reading = frames_per_reading
        self.timeout_s = timeout_s
        # The temperature-corrected depth changes with every air-temperature step, so an
        # hour of bit-identical values (at one reading a minute) means a frozen output.
        self.checker = QualityChecker(
            limits or Limits(low=-50.0, high=ground_distance_mm, stuck_after=60)
        )
        self.clock = clock

    def read_ranges(self) -> list[int]:
        """Collect ``frames_per_reading`` fresh ranges (fewer if the port times out)."""
        self.port.reset_input_buffer()
        deadline = time.monotonic() + self.timeout_s
        buffer = b""
        ranges: list[int] = []
        while len(ranges) < self.frames_per_reading and time.monotonic() < deadline:
            chunk = self.port.read(64)
            if not chunk:
                continue
            found, buffer = parse_maxbotix_stream(buffer + chunk)
            ranges.extend(found)
        return ranges[: self.frames_per_reading]

    def reading_from_ranges(self, ranges: list[int], air_temp_c: float | None) -> SensorReading:
        """Turn raw ranges into a snow-depth reading (pure; no I/O)."""
        ts = self.clock()

        def flagged(quality: Quality, detail: str, value: float | None = None) -> SensorReading:
            return SensorReading("snow_depth_mm", value, quality, self.sensor_id, ts, detail=detail)

        if not ranges:
            return flagged(Quality.NO_DATA, "no frames from sensor")
        median = statistics.median(ranges)
        if median >= self.model.max_mm:
            return flagged(Quality.NO_DATA, f"no target (R{self.model.max_mm})")
        if median <= self.model.min_mm:
            return flagged(Quality.OUT_OF_RANGE, "target inside minimum range")
        if self.model.compensates_internally:
            depth = snow_depth_from_range_mm(self.ground_distance_mm, median)
        elif air_temp_c is None:
            raw_depth = snow_depth_from_range_mm(self.ground_distance_mm, median)
            return flagged(Quality.UNCOMPENSATED, "no air temperature", round(raw_depth, 1))
        else:
            depth = snow_depth_from_range_mm(
                self.ground_distance_mm, speed_of_sound_corrected_mm(median, air_temp_c)
            )
        # Bare ground reads a few mm either side of zero; the contract has no negative depth.
        return flagged(self.checker.check(depth), "", round(max(depth, 0.0), 1))

    def read(self, air_temp_c: float | None) -> SensorReading:
        """One snow-depth reading; pass the current GOOD air temperature or None."""
        return self.reading_from_ranges(self.read_ranges(), air_temp_c)


def open_maxbotix_port(device: str) -> SerialPort:
    """Open the serial device at the HRXL's fixed settings (9600 8N1)."""
    port: SerialPort = serial.Serial(
        device, baudrate=9600, bytesize=8, parity="N", stopbits=1, timeout=0.2
    )
    return port
