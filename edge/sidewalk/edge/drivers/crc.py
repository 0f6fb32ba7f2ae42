"""The check codes the sensors' wire formats use, each as its datasheet defines it."""

from __future__ import annotations


def _crc8_msb_first(data: bytes, poly: int, init: int) -> int:
    crc = init
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ poly) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def crc8_maxim(data: bytes) -> int:
    """Dallas/Maxim 1-Wire CRC-8 (x^8+x^5+x^4+1, LSB first, init 0), DS18B20 scratchpad."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8C if crc & 1 else crc >> 1
    return crc


def crc8_sensirion(data: bytes) -> int:
    """Sensirion CRC-8 (poly 0x31, init 0xFF), SHT3x datasheet §4.12."""
    return _crc8_msb_first(data, 0x31, 0xFF)


def crc8_smbus_pec(data: bytes) -> int:
    """SMBus packet error code (CRC-8, poly 0x07, init 0), used by the MLX90614."""
    return _crc8_msb_first(data, 0x07, 0x00)


def _crc16_reflected(data: bytes, init: int) -> int:
    crc = init
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def crc16_modbus(data: bytes) -> int:
    """Modbus RTU CRC-16 (poly 0xA001 reflected, init 0xFFFF); sent low byte first."""
    return _crc16_reflected(data, 0xFFFF)


def crc16_sdi12(data: bytes) -> int:
    """SDI-12 CRC-16 (poly 0xA001 reflected, init 0), SDI-12 v1.4 §4.4.12."""
    return _crc16_reflected(data, 0x0000)
