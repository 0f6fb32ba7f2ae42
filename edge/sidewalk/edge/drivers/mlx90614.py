"""Sidewalk surface temperature from a Melexis MLX90614 infrared thermometer on SMBus.

Datasheet: RAM 0x06 = ambient (sensor die) temperature, 0x07 = object
temperature 1; a read returns LSB, MSB and the SMBus PEC, a CRC-8 (poly 0x07)
over the whole transaction: address+W, command, address+R, LSB, MSB.
T = raw x 0.02 K; bit 15 of an object reading is the error flag. The
emissivity (EEPROM 0x04) stays at the factory 1.0 and is corrected here,
since snow, ice and wet concrete all sit near 0.95-0.98.
"""

from __future__ import annotations

from datetime import datetime

from sidewalk.edge.drivers.crc import crc8_smbus_pec
from sidewalk.edge.drivers.ports import Clock, SMBusLike, utc_now
from sidewalk.edge.drivers.quality import (
    Limits,
    Quality,
    QualityChecker,
    Quantity,
    SensorFault,
    SensorReading,
)

MLX90614_ADDRESS = 0x5A
RAM_TA = 0x06
RAM_TOBJ1 = 0x07
KELVIN_OFFSET = 273.15


def parse_mlx90614_word(address: int, command: int, data: bytes) -> float:
    """Temperature in °C from the three bytes (LSB, MSB, PEC) of a RAM read."""
    if len(data) != 3:
        raise SensorFault(f"MLX90614 returned {len(data)} bytes, expected 3", Quality.NO_DATA)
    transaction = bytes([address << 1, command, (address << 1) | 1, data[0], data[1]])
    if crc8_smbus_pec(transaction) != data[2]:
        raise SensorFault("MLX90614 PEC mismatch")
    raw = data[0] | (data[1] << 8)
    if raw & 0x8000:
        raise SensorFault("MLX90614 error flag set", Quality.OUT_OF_RANGE)
    return raw * 0.02 - KELVIN_OFFSET


def emissivity_corrected_c(object_c: float, ambient_c: float, emissivity: float) -> float:
    """Correct a reading taken at emissivity 1.0 for a surface of ``emissivity``.

    The sensor measures radiance; with the reflected part approximated by the
    sensor's own (ambient) temperature: T_obj^4 = (T_m^4 - (1-e) T_a^4) / e, in kelvin.
    """
    t_m = object_c + KELVIN_OFFSET
    t_a = ambient_c + KELVIN_OFFSET
    t_obj4 = (t_m**4 - (1.0 - emissivity) * t_a**4) / emissivity
    return float(t_obj4**0.25 - KELVIN_OFFSET)


class MLX90614:
    """Reads the object (sidewalk surface) and sensor-ambient temperatures."""

    def __init__(
        self,
        bus: SMBusLike,
        sensor_id: str,
        emissivity: float = 0.96,
        address: int = MLX90614_ADDRESS,
        clock: Clock = utc_now,
    ) -> None:
        self.bus = bus
        self.sensor_id = sensor_id
        self.emissivity = emissivity
        self.address = address
        self.clock = clock
        # A Wisconsin sidewalk surface stays within -45..+70 °C; the chip's own range is wider.
        self.surface_checker = QualityChecker(Limits(-45.0, 70.0, stuck_after=60))
        self.ambient_checker = QualityChecker(Limits(-40.0, 125.0, stuck_after=60))

    def _read_c(self, command: int) -> float:
        data = bytes(self.bus.read_i2c_block_data(self.address, command, 3))
        return parse_mlx90614_word(self.address, command, data)

    def read(self) -> list[SensorReading]:
        """[surface_temp_c (emissivity corrected), sensor_ambient_temp_c]."""
        ts = self.clock()
        try:
            ambient_c = self._read_c(RAM_TA)
            surface_c = emissivity_corrected_c(self._read_c(RAM_TOBJ1), ambient_c, self.emissivity)
        except OSError as exc:
            return self._flagged(SensorFault(f"I2C error: {exc}", Quality.NO_DATA), ts)
        except SensorFault as fault:
            return self._flagged(fault, ts)
        return [
            SensorReading(
                "surface_temp_c",
                round(surface_c, 2),
                self.surface_checker.check(surface_c),
                self.sensor_id,
                ts,
            ),
            SensorReading(
                "sensor_ambient_temp_c",
                round(ambient_c, 2),
                self.ambient_checker.check(ambient_c),
                self.sensor_id,
                ts,
            ),
        ]

    def _flagged(self, fault: SensorFault, ts: datetime) -> list[SensorReading]:
        quantities: tuple[Quantity, ...] = ("surface_temp_c", "sensor_ambient_temp_c")
        return [
            SensorReading(q, None, fault.quality, self.sensor_id, ts, detail=str(fault))
            for q in quantities
        ]
