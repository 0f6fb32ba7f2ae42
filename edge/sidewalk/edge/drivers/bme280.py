"""Air temperature, humidity and pressure from a Bosch BME280 on I2C.

Datasheet (BST-BME280-DS002): trimming parameters at 0x88..0xA1 and 0xE1..0xE7;
forced-mode measurement by writing ctrl_hum (0xF2) then ctrl_meas (0xF4); raw
data in the burst 0xF7..0xFE (press[19:0], temp[19:0], hum[15:0]). The
compensation below is the datasheet's floating-point code (section 8.1),
including t_fine shared by all three quantities.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from datetime import datetime

from sidewalk.edge.drivers.ports import Clock, SMBusLike, utc_now
from sidewalk.edge.drivers.quality import (
    Limits,
    Quality,
    QualityChecker,
    Quantity,
    SensorFault,
    SensorReading,
)

BME280_ADDRESS = 0x76
CHIP_ID_REGISTER = 0xD0
CHIP_ID = 0x60
CTRL_HUM, STATUS, CTRL_MEAS, DATA = 0xF2, 0xF3, 0xF4, 0xF7
OVERSAMPLE_X1 = 0b001
FORCED_MODE = 0b01
STATUS_MEASURING = 0x08


@dataclass(frozen=True, slots=True)
class Bme280Calibration:
    """The chip's factory trimming parameters (dig_T1 ... dig_H6)."""

    t1: int
    t2: int
    t3: int
    p1: int
    p2: int
    p3: int
    p4: int
    p5: int
    p6: int
    p7: int
    p8: int
    p9: int
    h1: int
    h2: int
    h3: int
    h4: int
    h5: int
    h6: int


def parse_calibration(block_88: bytes, block_e1: bytes) -> Bme280Calibration:
    """Decode the 26 bytes from 0x88 and the 7 bytes from 0xE1 (datasheet table 16)."""
    if len(block_88) != 26 or len(block_e1) != 7:
        raise SensorFault("BME280 calibration blocks have the wrong length", Quality.NO_DATA)
    t1, t2, t3, p1, p2, p3, p4, p5, p6, p7, p8, p9 = struct.unpack("<HhhHhhhhhhhh", block_88[:24])
    h1 = block_88[25]  # 0xA1; 0xA0 is unused
    h2, h3 = struct.unpack("<hB", block_e1[0:3])
    e4, e5, e6 = struct.unpack("<bBb", block_e1[3:6])
    # dig_H4 and dig_H5 are 12-bit values sharing the nibbles of 0xE5.
    h4 = (e4 << 4) | (e5 & 0x0F)
    h5 = (e6 << 4) | (e5 >> 4)
    h6 = struct.unpack("<b", block_e1[6:7])[0]
    return Bme280Calibration(t1, t2, t3, p1, p2, p3, p4, p5, p6, p7, p8, p9, h1, h2, h3, h4, h5, h6)


def parse_raw_data(block_f7: bytes) -> tuple[int, int, int]:
    """(adc_T, adc_P, adc_H) from the 8-byte burst at 0xF7."""
    b = block_f7
    adc_p = (b[0] << 12) | (b[1] << 4) | (b[2] >> 4)
    adc_t = (b[3] << 12) | (b[4] << 4) | (b[5] >> 4)
    adc_h = (b[6] << 8) | b[7]
    return adc_t, adc_p, adc_h


def compensate(
    cal: Bme280Calibration, adc_t: int, adc_p: int, adc_h: int
) -> tuple[float, float, float]:
    """(°C, Pa, %RH) from raw values, by the datasheet's double-precision formulas."""
    var1 = (adc_t / 16384.0 - cal.t1 / 1024.0) * cal.t2
    var2 = (adc_t / 131072.0 - cal.t1 / 8192.0) ** 2 * cal.t3
    t_fine = var1 + var2
    temp_c = t_fine / 5120.0

    var1 = t_fine / 2.0 - 64000.0
    var2 = var1 * var1 * cal.p6 / 32768.0
    var2 = var2 + var1 * cal.p5 * 2.0
    var2 = var2 / 4.0 + cal.p4 * 65536.0
    var1 = (cal.p3 * var1 * var1 / 524288.0 + cal.p2 * var1) / 524288.0
    var1 = (1.0 + var1 / 32768.0) * cal.p1
    if var1 == 0.0:  # the datasheet's guard against division by zero
        raise SensorFault("BME280 pressure compensation divides by zero", Quality.OUT_OF_RANGE)
    pressure = 1048576.0 - adc_p
    pressure = (pressure - var2 / 4096.0) * 6250.0 / var1
    var1 = cal.p9 * pressure * pressure / 2147483648.0
    var2 = pressure * cal.p8 / 32768.0
    pressure = pressure + (var1 + var2 + cal.p7) / 16.0

    var_h = t_fine - 76800.0
    var_h = (adc_h - (cal.h4 * 64.0 + cal.h5 / 16384.0 * var_h)) * (
        cal.h2 / 65536.0 * (1.0 + cal.h6 / 67108864.0 * var_h * (1.0 + cal.h3 / 67108864.0 * var_h))
    )
    var_h = var_h * (1.0 - cal.h1 * var_h / 524288.0)
    humidity = min(100.0, max(0.0, var_h))
    return temp_c, pressure, humidity


class BME280:
    """Forced-mode BME280 driver; returns air temperature, humidity and pressure readings."""

    def __init__(
        self,
        bus: SMBusLike,
        sensor_id: str,
        address: int = BME280_ADDRESS,
        clock: Clock = utc_now,
    ) -> None:
        self.bus = bus
        self.sensor_id = sensor_id
        self.address = address
        self.clock = clock
        self._cal: Bme280Calibration | None = None
        self.checkers: dict[Quantity, QualityChecker] = {
            "air_temp_c": QualityChecker(Limits(-40.0, 85.0, stuck_after=60)),
            "relative_humidity_pct": QualityChecker(Limits(0.0, 100.0)),
            "air_pressure_hpa": QualityChecker(Limits(300.0, 1100.0, stuck_after=60)),
        }

    def _calibration(self) -> Bme280Calibration:
        if self._cal is None:
            chip = self.bus.read_byte_data(self.address, CHIP_ID_REGISTER)
            if chip != CHIP_ID:
                raise SensorFault(f"chip id 0x{chip:02x} is not a BME280", Quality.NO_DATA)
            self._cal = parse_calibration(
                bytes(self.bus.read_i2c_block_data(self.address, 0x88, 26)),
                bytes(self.bus.read_i2c_block_data(self.address, 0xE1, 7)),
            )
        return self._cal

    def _measure(self) -> tuple[int, int, int]:
        # ctrl_hum takes effect only after the following ctrl_meas write.
        self.bus.write_byte_data(self.address, CTRL_HUM, OVERSAMPLE_X1)
        ctrl_meas = (OVERSAMPLE_X1 << 5) | (OVERSAMPLE_X1 << 2) | FORCED_MODE
        self.bus.write_byte_data(self.address, CTRL_MEAS, ctrl_meas)
        deadline = time.monotonic() + 0.1
        time.sleep(0.01)  # x1 oversampling of all three: at most 9.3 ms
        while self.bus.read_byte_data(self.address, STATUS) & STATUS_MEASURING:
            if time.monotonic() > deadline:
                raise SensorFault("BME280 conversion did not finish", Quality.NO_DATA)
            time.sleep(0.002)
        return parse_raw_data(bytes(self.bus.read_i2c_block_data(self.address, DATA, 8)))

    def read(self) -> list[SensorReading]:
        """Trigger one forced measurement; [air_temp_c, relative_humidity_pct, air_pressure_hpa]."""
        ts = self.clock()
        try:
            temp_c, pressure_pa, rh_pct = compensate(self._calibration(), *self._measure())
        except OSError as exc:
            return self._flagged(SensorFault(f"I2C error: {exc}", Quality.NO_DATA), ts)
        except SensorFault as fault:
            return self._flagged(fault, ts)
        values: dict[Quantity, float] = {
            "air_temp_c": round(temp_c, 2),
            "relative_humidity_pct": round(rh_pct, 2),
            "air_pressure_hpa": round(pressure_pa / 100.0, 2),
        }
        return [
            SensorReading(q, v, self.checkers[q].check(v), self.sensor_id, ts)
            for q, v in values.items()
        ]

    def _flagged(self, fault: SensorFault, ts: datetime) -> list[SensorReading]:
        return [
            SensorReading(q, None, fault.quality, self.sensor_id, ts, detail=str(fault))
            for q in self.checkers
        ]
