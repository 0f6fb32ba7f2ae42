"""The narrow I/O surfaces the drivers need, so tests can hand them a pty or a fake bus."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from smbus2 import SMBus, i2c_msg

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Event time for a reading: the moment it came off the wire, in UTC."""
    return datetime.now(UTC)


class SerialPort(Protocol):
    """What the serial drivers use of ``serial.Serial``."""

    def read(self, size: int = 1) -> bytes:
        """Read up to ``size`` bytes, returning fewer on timeout."""
        ...

    def write(self, data: bytes, /) -> int | None:
        """Send ``data``."""
        ...

    def reset_input_buffer(self) -> None:
        """Drop bytes received before the current request."""
        ...


class SMBusLike(Protocol):
    """What the I2C drivers use of ``smbus2.SMBus`` (a fake implements the same)."""

    def read_i2c_block_data(
        self, i2c_addr: int, register: int, length: int, force: bool | None = None
    ) -> list[int]:
        """Write ``register`` then read ``length`` bytes."""
        ...

    def write_i2c_block_data(
        self, i2c_addr: int, register: int, data: Sequence[int], force: bool | None = None
    ) -> None:
        """Write ``register`` followed by ``data``."""
        ...

    def write_byte_data(
        self, i2c_addr: int, register: int, value: int, force: bool | None = None
    ) -> None:
        """Write one byte to ``register``."""
        ...

    def read_byte_data(self, i2c_addr: int, register: int, force: bool | None = None) -> int:
        """Read one byte from ``register``."""
        ...


class RawI2C(Protocol):
    """Plain I2C transfers without a register byte, which command-based chips (SHT3x) need."""

    def write(self, i2c_addr: int, data: bytes) -> None:
        """Write ``data`` to the device in one transfer."""
        ...

    def read(self, i2c_addr: int, length: int) -> bytes:
        """Read ``length`` bytes from the device in one transfer."""
        ...


class SMBus2Raw:
    """``RawI2C`` over an ``smbus2.SMBus`` using ``i2c_rdwr`` transfers."""

    def __init__(self, bus: SMBus) -> None:
        self.bus = bus

    def write(self, i2c_addr: int, data: bytes) -> None:
        """Write ``data`` to the device in one transfer."""
        self.bus.i2c_rdwr(i2c_msg.write(i2c_addr, data))

    def read(self, i2c_addr: int, length: int) -> bytes:
        """Read ``length`` bytes from the device in one transfer."""
        msg = i2c_msg.read(i2c_addr, length)
        self.bus.i2c_rdwr(msg)
        return bytes(msg)
