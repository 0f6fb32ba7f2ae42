"""Air temperature and relative humidity from a Sensirion SHT31 on I2C.

Datasheet (SHT3x-DIS): single-shot measurement, high repeatability, no clock
stretching = command 0x2400; the result is ready within 15.5 ms and is read as
six bytes: T msb, T lsb, CRC, RH msb, RH lsb, CRC (CRC-8 poly 0x31, init 0xFF).
T = -45 + 175 x S_T / 65535 °C; RH = 100 x S_RH / 65535 %.
"""

from __future__ import annotations

import time
from datetime import datetime

from sidewalk.edge.drivers.crc import crc8_sensirion
from sidewalk.edge.drivers.ports import Clock, RawI2C, utc_now
from sidewalk.edge.drivers.quality import (
    Limits,
    Quality,
    QualityChecker,
    Quantity,
    SensorFault,
    SensorReading,
)

SHT31_ADDRESS = 0x44
SINGLE_SHOT_HIGH_REPEATABILITY = bytes([0x24, 0x00])
MEASUREMENT_TIME_S = 0.016


def parse_sht31(data: bytes) -> tuple[float, float]:
    """(air °C, relative humidity %) from the six measurement bytes; CRCs checked."""
    if len(data) != 6:
        raise SensorFault(f"SHT31 returned {len(data)} bytes, expected 6", Quality.NO_DATA)
    for word, crc in ((data[0:2], data[2]), (data[3:5], data[5])):
        if crc8_sensirion(word) != crc:
            raise SensorFault("SHT31 CRC mismatch")
    raw_t = int.from_bytes(data[0:2], "big")
    raw_rh = int.from_bytes(data[3:5], "big")
    return -45.0 + 175.0 * raw_t / 65535.0, 100.0 * raw_rh / 65535.0


class SHT31:
    """Single-shot SHT31 driver; returns an air-temperature and a humidity reading."""

    def __init__(
        self,
        i2c: RawI2C,
        sensor_id: str,
        address: int = SHT31_ADDRESS,
        clock: Clock = utc_now,
    ) -> None:
        self.i2c = i2c
        self.sensor_id = sensor_id
        self.address = address
        # 16-bit raw values step by 0.003 °C / 0.0015 %RH: an hour (60 readings)
        # of identical values means the chip stopped converting.
        self.temp_checker = QualityChecker(Limits(-40.0, 125.0, stuck_after=60))
        self.rh_checker = QualityChecker(Limits(0.0, 100.0, stuck_after=60))
        self.clock = clock

    def read(self) -> list[SensorReading]:
        """Trigger one measurement and return [air_temp_c, relative_humidity_pct]."""
        ts = self.clock()
        try:
            self.i2c.write(self.address, SINGLE_SHOT_HIGH_REPEATABILITY)
            time.sleep(MEASUREMENT_TIME_S)
            temp_c, rh_pct = parse_sht31(self.i2c.read(self.address, 6))
        except OSError as exc:  # NACK from an absent or busy chip
            fault = SensorFault(f"I2C error: {exc}", Quality.NO_DATA)
            return self._flagged(fault, ts)
        except SensorFault as fault:
            return self._flagged(fault, ts)
        return [
            SensorReading(
                "air_temp_c", round(temp_c, 2), self.temp_checker.check(temp_c), self.sensor_id, ts
            ),
            SensorReading(
                "relative_humidity_pct",
                round(rh_pct, 2),
                self.rh_checker.check(rh_pct),
                self.sensor_id,
                ts,
            ),
        ]

    def _flagged(self, fault: SensorFault, ts: datetime) -> list[SensorReading]:
        quantities: tuple[Quantity, ...] = ("air_temp_c", "relative_humidity_pct")
        return [
            SensorReading(q, None, fault.quality, self.sensor_id, ts, detail=str(fault))
            for q in quantities
        ]
