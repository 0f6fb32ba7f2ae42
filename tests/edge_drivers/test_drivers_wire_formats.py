"""Pure parsers and compensation against datasheet vectors and wire-format files."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from sidewalk.edge.drivers.bme280 import (
    Bme280Calibration,
    compensate,
    parse_calibration,
    parse_raw_data,
)
from sidewalk.edge.drivers.crc import (
    crc8_maxim,
    crc8_sensirion,
    crc8_smbus_pec,
    crc16_modbus,
)
from sidewalk.edge.drivers.ds18b20 import parse_w1_slave
from sidewalk.edge.drivers.laser import (
    modbus_read_request,
    parse_modbus_read_response,
    parse_sdi12_data,
    parse_sdi12_measure_ack,
    registers_to_int16,
    sdi12_crc_chars,
)
from sidewalk.edge.drivers.mlx90614 import emissivity_corrected_c, parse_mlx90614_word
from sidewalk.edge.drivers.quality import Limits, Quality, QualityChecker, SensorFault
from sidewalk.edge.drivers.sht31 import parse_sht31
from sidewalk.edge.drivers.tipping_bucket import precipitation_mm, tips_since
from sidewalk.edge.drivers.ultrasonic import (
    parse_maxbotix_stream,
    snow_depth_from_range_mm,
    speed_of_sound_corrected_mm,
)

DATA = Path(__file__).parent / "data"

# Published examples: SHT3x datasheet §4.12 (0xBEEF -> 0x92); MLX90614 datasheet
# SMBus read example (0x5A, cmd 0x07, D2 3A -> PEC 0x30); Modbus spec request
# "01 03 00 00 00 0A C5 CD"; SDI-12 v1.4 §4.4.12 ("0+3.14" -> "OqZ"); DS18B20
# scratchpad "72 01 ... 57" as printed by the kernel w1_therm driver.


def test_crc_vectors_from_the_datasheets() -> None:
    assert crc8_sensirion(b"\xbe\xef") == 0x92
    assert crc8_smbus_pec(bytes([0xB4, 0x07, 0xB5, 0xD2, 0x3A])) == 0x30
    assert crc16_modbus(bytes.fromhex("01030000000a")) == 0xCDC5
    assert sdi12_crc_chars(b"0+3.14") == b"OqZ"
    assert crc8_maxim(bytes.fromhex("72014b467fff0e10")) == 0x57


# --- MaxBotix HRXL ---------------------------------------------------------


def test_maxbotix_stream_skips_noise_and_keeps_partial_tail() -> None:
    stream = (DATA / "maxbotix_hrxl_stream.bin").read_bytes()
    ranges, tail = parse_maxbotix_stream(stream)
    # The leading "34\r" is the end of a frame cut off by the port opening; the
    # "R15" before "R1504" was cut by a glitch; the final "R15" awaits more bytes.
    assert ranges == [1502, 1503, 1502, 1501, 1504, 1502, 1500]
    assert tail == b"R15"
    more, tail = parse_maxbotix_stream(tail + b"07\r")
    assert more == [1507]
    assert tail == b""


def test_maxbotix_stream_byte_by_byte_gives_the_same_ranges() -> None:
    stream = (DATA / "maxbotix_hrxl_stream.bin").read_bytes()
    tail = b""
    ranges: list[int] = []
    for i in range(len(stream)):
        found, tail = parse_maxbotix_stream(tail + stream[i : i + 1])
        ranges.extend(found)
    assert ranges == [1502, 1503, 1502, 1501, 1504, 1502, 1500]


def test_speed_of_sound_correction_follows_sr50a() -> None:
    # At 0 °C no correction; at -20 °C sound is slower, the true distance shorter.
    assert speed_of_sound_corrected_mm(2000.0, 0.0) == pytest.approx(2000.0)
    assert speed_of_sound_corrected_mm(2000.0, -20.0) == pytest.approx(
        2000.0 * math.sqrt(253.15 / 273.15)
    )
    assert speed_of_sound_corrected_mm(2000.0, -20.0) == pytest.approx(1925.4, abs=0.1)
    with pytest.raises(ValueError, match="absolute zero"):
        speed_of_sound_corrected_mm(1000.0, -300.0)


def test_snow_depth_is_ground_minus_surface() -> None:
    assert snow_depth_from_range_mm(2000.0, 1750.0) == 250.0


# --- Laser: Modbus RTU and SDI-12 -----------------------------------------


def _modbus_reply(slave: int, function: int, registers: list[int]) -> bytes:
    body = bytes([slave, function, 2 * len(registers)]) + struct.pack(
        f">{len(registers)}H", *registers
    )
    return body + struct.pack("<H", crc16_modbus(body))


def test_modbus_request_and_response() -> None:
    assert modbus_read_request(1, 0, 10, 3) == bytes.fromhex("01030000000ac5cd")
    reply = _modbus_reply(1, 4, [0x00FA, 0xFFF6])
    assert parse_modbus_read_response(reply, 1, 4, 2) == [250, 0xFFF6]
    assert registers_to_int16(0xFFF6) == -10


def test_modbus_response_faults() -> None:
    reply = bytearray(_modbus_reply(1, 4, [250]))
    reply[3] ^= 0x01
    with pytest.raises(SensorFault, match="CRC"):
        parse_modbus_read_response(bytes(reply), 1, 4, 1)
    with pytest.raises(SensorFault, match="header"):
        parse_modbus_read_response(_modbus_reply(2, 4, [250]), 1, 4, 1)
    exception = bytes([1, 0x84, 0x02])
    exception += struct.pack("<H", crc16_modbus(exception))
    with pytest.raises(SensorFault, match="exception code 2") as info:
        parse_modbus_read_response(exception, 1, 4, 1)
    assert info.value.quality is Quality.NO_DATA


def test_sdi12_measure_ack_and_data_with_crc() -> None:
    assert parse_sdi12_measure_ack(b"00053\r\n", "0") == (5, 3)
    body = b"0+1234.5-3.2+0"
    assert parse_sdi12_data(body + sdi12_crc_chars(body) + b"\r\n", "0", with_crc=True) == [
        1234.5,
        -3.2,
        0.0,
    ]
    assert parse_sdi12_data(b"0+3.14OqZ\r\n", "0", with_crc=True) == [3.14]
    with pytest.raises(SensorFault, match="CRC"):
        parse_sdi12_data(b"0+3.15OqZ\r\n", "0", with_crc=True)
    with pytest.raises(SensorFault, match="bad SDI-12 data"):
        parse_sdi12_data(b"1+3.14\r\n", "0", with_crc=False)
    with pytest.raises(SensorFault, match="values"):
        parse_sdi12_data(b"0+3.14x\r\n", "0", with_crc=False)


# --- DS18B20 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected_c"),
    [("w1_slave_ok.txt", 23.125), ("w1_slave_minus_10_125.txt", -10.125)],
)
def test_w1_slave_files_decode(name: str, expected_c: float) -> None:
    assert parse_w1_slave((DATA / name).read_text()) == expected_c


@pytest.mark.parametrize(
    ("name", "message", "quality"),
    [
        ("w1_slave_bad_crc.txt", "CRC", Quality.CHECKSUM),
        ("w1_slave_power_on_85.txt", "85", Quality.NO_DATA),
        ("w1_slave_all_zero.txt", "all-zero", Quality.NO_DATA),
    ],
)
def test_w1_slave_failures_are_rejected(name: str, message: str, quality: Quality) -> None:
    with pytest.raises(SensorFault, match=message) as info:
        parse_w1_slave((DATA / name).read_text())
    assert info.value.quality is quality


def test_w1_slave_lower_resolution_masks_undefined_bits() -> None:
    # 9-bit resolution (config 0x1f): the three lowest bits are undefined, here set.
    pad = bytes([0x77, 0x01, 0x4B, 0x46, 0x1F, 0xFF, 0x0E, 0x10])
    hexs = " ".join(f"{b:02x}" for b in pad + bytes([crc8_maxim(pad)]))
    assert parse_w1_slave(f"{hexs} : crc=00 YES\n{hexs} t=0\n") == 23.0


# --- SHT31 -----------------------------------------------------------------


def _sht31_bytes(raw_t: int, raw_rh: int) -> bytes:
    t, rh = raw_t.to_bytes(2, "big"), raw_rh.to_bytes(2, "big")
    return t + bytes([crc8_sensirion(t)]) + rh + bytes([crc8_sensirion(rh)])


def test_sht31_conversion_and_crc() -> None:
    temp_c, rh_pct = parse_sht31(_sht31_bytes(0x6666, 0x8000))
    assert temp_c == pytest.approx(-45 + 175 * 0x6666 / 65535)
    assert temp_c == pytest.approx(25.0, abs=0.01)
    assert rh_pct == pytest.approx(50.0, abs=0.01)
    bad = bytearray(_sht31_bytes(0x6666, 0x8000))
    bad[4] ^= 0x10
    with pytest.raises(SensorFault, match="CRC"):
        parse_sht31(bytes(bad))
    with pytest.raises(SensorFault, match="6"):
        parse_sht31(b"\x00\x00")


# --- BME280 ----------------------------------------------------------------

# Datasheet example trimming (BMP280 DS §3.12, same T/P formulas in the BME280)
# and typical humidity trimming values read from a BME280.
BOSCH_EXAMPLE = Bme280Calibration(
    27504,
    26435,
    -1000,
    36477,
    -10685,
    3024,
    2855,
    140,
    -7,
    15500,
    -14600,
    6000,
    75,
    362,
    0,
    313,
    50,
    30,
)


def test_bme280_temperature_and_pressure_match_the_datasheet_example() -> None:
    temp_c, pressure_pa, _ = compensate(BOSCH_EXAMPLE, 519888, 415148, 30000)
    assert temp_c == pytest.approx(25.08, abs=0.005)
    assert pressure_pa == pytest.approx(100653.27, abs=0.01)


def _humidity_int32(cal: Bme280Calibration, adc_t: int, adc_h: int) -> float:
    """The datasheet's integer humidity code (§4.2.3), an independent cross-check."""
    var1 = (((adc_t >> 3) - (cal.t1 << 1)) * cal.t2) >> 11
    var2 = (((((adc_t >> 4) - cal.t1) * ((adc_t >> 4) - cal.t1)) >> 12) * cal.t3) >> 14
    x = var1 + var2 - 76800  # t_fine - 76800
    a = (((adc_h << 14) - (cal.h4 << 20) - (cal.h5 * x)) + 16384) >> 15
    b = (
        ((((((x * cal.h6) >> 10) * (((x * cal.h3) >> 11) + 32768)) >> 10) + 2097152) * cal.h2)
        + 8192
    ) >> 14
    v = a * b
    v = v - (((((v >> 15) * (v >> 15)) >> 7) * cal.h1) >> 4)
    v = min(max(v, 0), 419430400)
    return (v >> 12) / 1024.0


@pytest.mark.parametrize("adc_h", [22000, 27000, 30000, 34000, 38000])
def test_bme280_humidity_agrees_with_the_integer_formula(adc_h: int) -> None:
    _, _, rh = compensate(BOSCH_EXAMPLE, 519888, 415148, adc_h)
    assert 0.0 < rh < 100.0
    assert rh == pytest.approx(_humidity_int32(BOSCH_EXAMPLE, 519888, adc_h), abs=0.01)


def test_bme280_register_decoding() -> None:
    block_88 = struct.pack(
        "<HhhHhhhhhhhh",
        27504,
        26435,
        -1000,
        36477,
        -10685,
        3024,
        2855,
        140,
        -7,
        15500,
        -14600,
        6000,
    ) + bytes([0x00, 75])
    # dig_H4 = 0x139 = 313 -> E4=0x13, E5 low nibble 9; dig_H5 = 50 = 0x032 -> E6=0x03, E5 high 2.
    block_e1 = struct.pack("<hB", 362, 0) + bytes([0x13, 0x29, 0x03]) + struct.pack("<b", 30)
    assert parse_calibration(block_88, block_e1) == BOSCH_EXAMPLE
    # adc_T 519888 = 0x7EED0, adc_P 415148 = 0x655AC, adc_H 30000 = 0x7530
    raw = bytes([0x65, 0x5A, 0xC0, 0x7E, 0xED, 0x00, 0x75, 0x30])
    assert parse_raw_data(raw) == (519888, 415148, 30000)


# --- MLX90614 --------------------------------------------------------------


def test_mlx90614_word_and_pec() -> None:
    # 0x3AD2 = 15058 x 0.02 K = 301.16 K = 28.01 °C
    assert parse_mlx90614_word(0x5A, 0x07, bytes([0xD2, 0x3A, 0x30])) == pytest.approx(28.01)
    with pytest.raises(SensorFault, match="PEC"):
        parse_mlx90614_word(0x5A, 0x07, bytes([0xD3, 0x3A, 0x30]))
    flagged = bytes([0x00, 0x80])
    pec = crc8_smbus_pec(bytes([0xB4, 0x07, 0xB5]) + flagged)
    with pytest.raises(SensorFault, match="error flag"):
        parse_mlx90614_word(0x5A, 0x07, flagged + bytes([pec]))


def test_emissivity_correction_warms_a_cold_surface_reading() -> None:
    # A surface colder than the sensor reflects the warmer sensor: the raw reading
    # is too warm, so the corrected value is colder; at e=1 nothing changes.
    assert emissivity_corrected_c(-5.0, 10.0, 1.0) == pytest.approx(-5.0)
    corrected = emissivity_corrected_c(-5.0, 10.0, 0.96)
    assert -7.0 < corrected < -5.0


# --- Tipping bucket --------------------------------------------------------


def test_tipping_bucket_counter_wrap_and_reset() -> None:
    assert tips_since(100, 105) == 5
    assert tips_since(2**32 - 2, 3) == 5  # wrapped
    assert tips_since(500, 4) == 4  # device rebooted, count restarted
    assert precipitation_mm(5, 0.2) == pytest.approx(1.0)


# --- Quality checker -------------------------------------------------------


def test_checker_flags_range_and_stuck_values() -> None:
    checker = QualityChecker(Limits(-40.0, 60.0, stuck_after=3, stuck_tolerance=0.0))
    assert checker.check(61.0) is Quality.OUT_OF_RANGE
    assert checker.check(1.0) is Quality.GOOD
    assert checker.check(1.0) is Quality.GOOD
    assert checker.check(1.0) is Quality.STUCK
    assert checker.check(1.5) is Quality.GOOD


def test_checker_without_stuck_test_accepts_repeated_zero() -> None:
    checker = QualityChecker(Limits(0.0, 25.0))
    assert all(checker.check(0.0) is Quality.GOOD for _ in range(1000))


def test_drivers_import_neither_numpy_nor_opencv() -> None:
    # The drivers must run on the smallest device: importing them loads no numpy or cv2.
    import subprocess
    import sys

    code = (
        "import sys, pkgutil, importlib, sidewalk.edge.drivers as d\n"
        "for m in pkgutil.iter_modules(d.__path__):\n"
        "    importlib.import_module(f'{d.__name__}.{m.name}')\n"
        "print(sorted(m for m in ('numpy', 'cv2') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
