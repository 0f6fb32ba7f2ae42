"""Ground temperature at several depths from DS18B20 probes on the Linux 1-wire bus.

The kernel's w1_therm driver exposes each probe as
``/sys/bus/w1/devices/28-<serial>/w1_slave`` with two lines::

    72 01 4b 46 7f ff 0e 10 57 : crc=57 YES
    72 01 4b 46 7f ff 0e 10 57 t=23125

The nine hex bytes are the scratchpad: temperature LSB, MSB (signed, 1/16 °C),
TH, TL, configuration, three reserved bytes and the CRC-8 of the first eight.
We recompute the CRC rather than trust the driver's YES, decode the temperature
from the bytes, and reject two values the bus produces when it fails but whose
CRC is valid: 85.0 °C (the power-on reset value, a conversion that never ran)
and an all-zero scratchpad (a shorted bus reads zeros, whose CRC is zero).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sidewalk.edge.drivers.crc import crc8_maxim
from sidewalk.edge.drivers.ports import Clock, utc_now
from sidewalk.edge.drivers.quality import (
    Limits,
    Quality,
    QualityChecker,
    SensorFault,
    SensorReading,
)

W1_DEVICES = Path("/sys/bus/w1/devices")
POWER_ON_RESET_RAW = 0x0550  # 85.0 °C
# DS18B20 datasheet: -55 °C to +125 °C.
DS18B20_LIMITS = Limits(low=-55.0, high=125.0)


def parse_w1_slave(text: str) -> float:
    """Temperature in °C from the text of a ``w1_slave`` file, or raise SensorFault."""
    lines = text.strip().splitlines()
    if len(lines) != 2:
        raise SensorFault(f"w1_slave has {len(lines)} lines, expected 2", Quality.NO_DATA)
    try:
        scratchpad = bytes(int(h, 16) for h in lines[0].split(":")[0].split())
    except ValueError as exc:
        raise SensorFault(f"bad scratchpad {lines[0]!r}") from exc
    if len(scratchpad) != 9:
        raise SensorFault(f"scratchpad has {len(scratchpad)} bytes, expected 9")
    if crc8_maxim(scratchpad[:8]) != scratchpad[8]:
        raise SensorFault("scratchpad CRC mismatch")
    if scratchpad == bytes(9):
        raise SensorFault("all-zero scratchpad (bus shorted or probe missing)", Quality.NO_DATA)
    raw = int.from_bytes(scratchpad[0:2], "little", signed=True)
    # Configuration bits R1:R0 give the resolution; lower bits are undefined below 12 bits.
    resolution_bits = 9 + ((scratchpad[4] >> 5) & 0b11)
    raw &= ~((1 << (12 - resolution_bits)) - 1)
    if raw == POWER_ON_RESET_RAW:
        raise SensorFault("85 °C power-on value: conversion did not run", Quality.NO_DATA)
    return raw / 16.0


@dataclass(frozen=True, slots=True)
class GroundProbe:
    """One probe on the string: its 1-wire id (``28-...``) and depth below the surface."""

    w1_id: str
    depth_mm: int


class GroundTemperatureString:
    """Reads every DS18B20 of a buried probe string, one reading per depth."""

    def __init__(
        self,
        probes: list[GroundProbe],
        devices_dir: Path = W1_DEVICES,
        stuck_after: int = 240,
        clock: Clock = utc_now,
    ) -> None:
        self.probes = probes
        self.devices_dir = devices_dir
        # Deep soil changes slowly: a probe is stuck only after hours of bit-identical
        # 1/16 °C values (240 readings at one a minute).
        self.checkers = {
            p.w1_id: QualityChecker(
                Limits(DS18B20_LIMITS.low, DS18B20_LIMITS.high, stuck_after=stuck_after)
            )
            for p in probes
        }
        self.clock = clock

    def read_probe(self, probe: GroundProbe) -> SensorReading:
        """One probe's reading; a missing file or bad frame becomes a flagged reading."""
        ts = self.clock()
        path = self.devices_dir / probe.w1_id / "w1_slave"
        try:
            temp_c = parse_w1_slave(path.read_text(encoding="ascii"))
        except OSError as exc:
            fault = SensorFault(f"cannot read {path}: {exc.strerror}", Quality.NO_DATA)
            return self._flagged(probe, fault, ts)
        except SensorFault as fault:
            return self._flagged(probe, fault, ts)
        quality = self.checkers[probe.w1_id].check(temp_c)
        return SensorReading(
            "ground_temp_c", temp_c, quality, probe.w1_id, ts, probe_depth_mm=probe.depth_mm
        )

    @staticmethod
    def _flagged(probe: GroundProbe, fault: SensorFault, ts: datetime) -> SensorReading:
        return SensorReading(
            "ground_temp_c",
            None,
            fault.quality,
            probe.w1_id,
            ts,
            probe_depth_mm=probe.depth_mm,
            detail=str(fault),
        )

    def read(self) -> list[SensorReading]:
        """All probes, shallowest first."""
        return [self.read_probe(p) for p in sorted(self.probes, key=lambda p: p.depth_mm)]
