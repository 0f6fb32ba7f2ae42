"""Test doubles shipped with the drivers: a register-level fake I2C bus.

The fake holds a byte array per device address, like the chip's register map,
so a test writes the bytes a real chip would hold and the driver runs unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence


class FakeSMBus:
    """Implements the ``SMBusLike`` and ``RawI2C`` surfaces over in-memory register maps.

    ``command_replies`` holds whole replies for chips whose commands are not
    byte addresses (the MLX90614 answers a 16-bit word plus PEC per command);
    ``raw_reads`` queues the replies of register-less reads. An address with no
    map raises OSError, as a NACK does.
    """

    def __init__(self) -> None:
        self.registers: dict[int, bytearray] = {}
        self.raw_reads: dict[int, list[bytes]] = {}
        self.command_replies: dict[tuple[int, int], bytes] = {}
        self.writes: list[tuple[int, bytes]] = []

    def _map(self, i2c_addr: int) -> bytearray:
        if i2c_addr not in self.registers:
            raise OSError(121, "Remote I/O error")  # what Linux returns on a NACK
        return self.registers[i2c_addr]

    def set_registers(self, i2c_addr: int, start: int, data: bytes) -> None:
        """Put ``data`` into the device's map from register ``start`` on."""
        regs = self.registers.setdefault(i2c_addr, bytearray(256))
        regs[start : start + len(data)] = data

    def read_i2c_block_data(
        self, i2c_addr: int, register: int, length: int, force: bool | None = None
    ) -> list[int]:
        """The command's reply if one is set, else bytes ``register`` onwards."""
        reply = self.command_replies.get((i2c_addr, register))
        if reply is not None:
            return list(reply[:length])
        return list(self._map(i2c_addr)[register : register + length])

    def read_byte_data(self, i2c_addr: int, register: int, force: bool | None = None) -> int:
        """One register."""
        return self._map(i2c_addr)[register]

    def write_byte_data(
        self, i2c_addr: int, register: int, value: int, force: bool | None = None
    ) -> None:
        """Record and apply a one-byte register write."""
        self.write_i2c_block_data(i2c_addr, register, [value])

    def write_i2c_block_data(
        self, i2c_addr: int, register: int, data: Sequence[int], force: bool | None = None
    ) -> None:
        """Record and apply a register write."""
        self.write(i2c_addr, bytes([register, *data]))

    def write(self, i2c_addr: int, data: bytes) -> None:
        """Register-less write (a command); stored into the map after the first byte."""
        regs = self._map(i2c_addr)
        self.writes.append((i2c_addr, data))
        regs[data[0] : data[0] + len(data) - 1] = data[1:]

    def read(self, i2c_addr: int, length: int) -> bytes:
        """Register-less read: the next queued reply."""
        self._map(i2c_addr)
        queue = self.raw_reads.get(i2c_addr)
        if not queue:
            raise OSError(121, "Remote I/O error")
        return queue.pop(0)[:length]
