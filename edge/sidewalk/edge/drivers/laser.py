"""Snow depth from a laser distance sensor (Lufft SHM31 class) over Modbus RTU or SDI-12.

A laser needs no air-temperature correction, which is why it is the alternative
to the ultrasonic ranger where a frontage is worth the price.

Modbus RTU (Modbus over serial line spec v1.02): request = slave, function,
start register (big-endian), count (big-endian), CRC-16 (low byte first); a
read response = slave, function, byte count, data, CRC; an exception response
sets the function's high bit and carries one exception code.

SDI-12 (v1.4): ``aM!`` answers ``atttn`` (address, seconds until ready, number
of values); ``aD0!`` answers the address followed by sign-prefixed values
(``0+1234.5-3.2``). With the ``aMC!`` variant three CRC characters precede the
CR LF; each holds six bits of the CRC-16 ORed with 0x40.

The SHM31's register / value positions are configuration (``LaserChannel``):
take them from the unit's manual at installation; defaults are placeholders
that the installation checklist makes the installer confirm.
"""

from __future__ import annotations

import re
import struct
import time
from dataclasses import dataclass

from sidewalk.edge.drivers.crc import crc16_modbus, crc16_sdi12
from sidewalk.edge.drivers.ports import Clock, SerialPort, utc_now
from sidewalk.edge.drivers.quality import (
    Limits,
    Quality,
    QualityChecker,
    SensorFault,
    SensorReading,
)

READ_HOLDING_REGISTERS = 0x03
READ_INPUT_REGISTERS = 0x04


def modbus_read_request(slave: int, start_register: int, count: int, function: int) -> bytes:
    """Build a Modbus RTU read request (function 3 or 4) with its CRC."""
    body = struct.pack(">BBHH", slave, function, start_register, count)
    return body + struct.pack("<H", crc16_modbus(body))


def parse_modbus_read_response(frame: bytes, slave: int, function: int, count: int) -> list[int]:
    """Return the ``count`` 16-bit registers of a read response, or raise SensorFault."""
    if len(frame) >= 5 and frame[1] == function | 0x80:
        if crc16_modbus(frame[:3]) != struct.unpack("<H", frame[3:5])[0]:
            raise SensorFault("modbus exception frame with bad CRC")
        raise SensorFault(f"modbus exception code {frame[2]}", Quality.NO_DATA)
    expected = 5 + 2 * count
    if len(frame) != expected:
        raise SensorFault(f"modbus frame is {len(frame)} bytes, expected {expected}")
    if crc16_modbus(frame[:-2]) != struct.unpack("<H", frame[-2:])[0]:
        raise SensorFault("modbus CRC mismatch")
    if frame[0] != slave or frame[1] != function or frame[2] != 2 * count:
        raise SensorFault("modbus response header does not match the request")
    return list(struct.unpack(f">{count}H", frame[3:-2]))


def registers_to_int16(register: int) -> int:
    """Signed 16-bit value of one register."""
    return register - 0x10000 if register & 0x8000 else register


_SDI12_VALUE = re.compile(rb"[+-]\d+(?:\.\d+)?")


def sdi12_crc_chars(data: bytes) -> bytes:
    """The three-character SDI-12 CRC of ``data`` (address through the last value)."""
    crc = crc16_sdi12(data)
    return bytes([0x40 | (crc >> 12), 0x40 | ((crc >> 6) & 0x3F), 0x40 | (crc & 0x3F)])


def parse_sdi12_measure_ack(response: bytes, address: str) -> tuple[int, int]:
    """Parse an ``aM!`` reply ``atttn``: seconds until data are ready, number of values."""
    text = response.rstrip(b"\r\n")
    if len(text) != 5 or text[:1] != address.encode() or not text[1:].isdigit():
        raise SensorFault(f"bad SDI-12 measure reply {response!r}")
    return int(text[1:4]), int(text[4:5])


def parse_sdi12_data(response: bytes, address: str, with_crc: bool) -> list[float]:
    """Parse an ``aD0!`` reply into its values, checking the CRC when one was requested."""
    if not response.endswith(b"\r\n") or response[:1] != address.encode():
        raise SensorFault(f"bad SDI-12 data reply {response!r}")
    body = response[:-2]
    if with_crc:
        body, crc = body[:-3], body[-3:]
        if sdi12_crc_chars(body) != crc:
            raise SensorFault("SDI-12 CRC mismatch")
    values = body[1:]
    found = _SDI12_VALUE.findall(values)
    if b"".join(found) != values:
        raise SensorFault(f"bad SDI-12 values {values!r}")
    return [float(v) for v in found]


@dataclass(frozen=True, slots=True)
class LaserChannel:
    """Where the snow depth sits in the sensor's answer, and its scale to millimetres."""

    modbus_register: int = 0
    modbus_function: int = READ_INPUT_REGISTERS
    sdi12_value_index: int = 0
    scale_to_mm: float = 1.0


class LaserSnowDepth:
    """Polls a laser snow-depth sensor; one transport (Modbus RTU or SDI-12) per instance."""

    def __init__(
        self,
        port: SerialPort,
        *,
        sensor_id: str,
        protocol: str = "modbus",
        modbus_slave: int = 1,
        sdi12_address: str = "0",
        channel: LaserChannel | None = None,
        limits: Limits | None = None,
        timeout_s: float = 2.0,
        clock: Clock = utc_now,
    ) -> None:
        if protocol not in ("modbus", "sdi12"):
            raise ValueError(f"unknown protocol {protocol!r}")
        self.port = port
        self.sensor_id = sensor_id
        self.protocol = protocol
        self.modbus_slave = modbus_slave
        self.sdi12_address = sdi12_address
        self.channel = channel or LaserChannel()
        self.checker = QualityChecker(limits or Limits(low=-50.0, high=4000.0, stuck_after=60))
        self.timeout_s = timeout_s
        self.clock = clock

    def _read_exactly(self, size: int) -> bytes:
        deadline = time.monotonic() + self.timeout_s
        data = b""
        while len(data) < size and time.monotonic() < deadline:
            data += self.port.read(size - len(data))
        return data

    def _read_line(self) -> bytes:
        deadline = time.monotonic() + self.timeout_s
        data = b""
        while not data.endswith(b"\r\n") and time.monotonic() < deadline:
            data += self.port.read(1)
        return data

    def _modbus_depth_mm(self) -> float:
        ch = self.channel
        self.port.reset_input_buffer()
        self.port.write(
            modbus_read_request(self.modbus_slave, ch.modbus_register, 1, ch.modbus_function)
        )
        # An exception reply is 5 bytes; read that much first, then the rest if any.
        head = self._read_exactly(5)
        if len(head) < 5:
            raise SensorFault("modbus timeout", Quality.NO_DATA)
        frame = head if head[1] & 0x80 else head + self._read_exactly(2)
        register = parse_modbus_read_response(frame, self.modbus_slave, ch.modbus_function, 1)[0]
        return registers_to_int16(register) * ch.scale_to_mm

    def _sdi12_depth_mm(self) -> float:
        addr = self.sdi12_address
        self.port.reset_input_buffer()
        self.port.write(f"{addr}MC!".encode())
        seconds, count = parse_sdi12_measure_ack(self._read_line(), addr)
        if count <= self.channel.sdi12_value_index:
            raise SensorFault(f"sensor returns {count} values", Quality.NO_DATA)
        time.sleep(seconds)
        self.port.write(f"{addr}D0!".encode())
        values = parse_sdi12_data(self._read_line(), addr, with_crc=True)
        return values[self.channel.sdi12_value_index] * self.channel.scale_to_mm

    def read(self) -> SensorReading:
        """One snow-depth reading, flagged rather than raised on any wire fault."""
        ts = self.clock()
        try:
            depth = self._modbus_depth_mm() if self.protocol == "modbus" else self._sdi12_depth_mm()
        except SensorFault as fault:
            return SensorReading(
                "snow_depth_mm", None, fault.quality, self.sensor_id, ts, detail=str(fault)
            )
        return SensorReading("snow_depth_mm", depth, self.checker.check(depth), self.sensor_id, ts)
