"""Drivers end to end against simulated ports: a pty pair, a fake SMBus, sysfs-like files."""

from __future__ import annotations

import os
import struct
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import serial  # type: ignore[import-untyped]  # pyserial ships no type information

from sidewalk.edge.drivers.bme280 import BME280
from sidewalk.edge.drivers.crc import crc8_sensirion, crc8_smbus_pec, crc16_modbus
from sidewalk.edge.drivers.ds18b20 import GroundProbe, GroundTemperatureString
from sidewalk.edge.drivers.laser import LaserChannel, LaserSnowDepth, sdi12_crc_chars
from sidewalk.edge.drivers.mlx90614 import MLX90614
from sidewalk.edge.drivers.ports import SerialPort
from sidewalk.edge.drivers.quality import Quality
from sidewalk.edge.drivers.sht31 import SHT31
from sidewalk.edge.drivers.testing import FakeSMBus
from sidewalk.edge.drivers.tipping_bucket import TippingBucket
from sidewalk.edge.drivers.ultrasonic import MaxbotixModel, UltrasonicSnowDepth

DATA = Path(__file__).parent / "data"
T0 = datetime(2026, 1, 10, 6, 0, tzinfo=UTC)


def fixed_clock() -> datetime:
    return T0


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, SerialPort]]:
    """A pseudo-terminal: the test writes the sensor side, the driver opens the tty."""
    master, slave = os.openpty()
    port = serial.Serial(os.ttyname(slave), baudrate=9600, timeout=0.05)
    try:
        yield master, port
    finally:
        port.close()
        os.close(slave)
        os.close(master)


def stream_frames(master: int, frames: bytes, stop: threading.Event) -> threading.Thread:
    """Play ``frames`` repeatedly, as the HRXL streams continuously."""

    def run() -> None:
        while not stop.is_set():
            os.write(master, frames)
            time.sleep(0.02)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


# --- Ultrasonic over a pty ------------------------------------------------


def test_ultrasonic_over_pty_gives_corrected_depth(pty_pair: tuple[int, SerialPort]) -> None:
    master, port = pty_pair
    sensor = UltrasonicSnowDepth(
        port, ground_distance_mm=2000.0, sensor_id="sonic-1", clock=fixed_clock
    )
    stop = threading.Event()
    thread = stream_frames(master, b"R1800\rR1801\rR1799\r", stop)
    try:
        reading = sensor.read(air_temp_c=-20.0)
    finally:
        stop.set()
        thread.join()
    # median 1800 mm at the 0 °C sound speed -> 1800 x sqrt(253.15/273.15) = 1732.8 mm
    assert reading.quality is Quality.GOOD
    assert reading.value == pytest.approx(2000.0 - 1800.0 * (253.15 / 273.15) ** 0.5, abs=0.06)
    assert reading.quantity == "snow_depth_mm"
    assert reading.ts == T0


def test_ultrasonic_no_target_and_missing_temperature(pty_pair: tuple[int, SerialPort]) -> None:
    master, port = pty_pair
    sensor = UltrasonicSnowDepth(
        port, ground_distance_mm=2000.0, sensor_id="sonic-1", clock=fixed_clock, timeout_s=1.0
    )
    stop = threading.Event()
    thread = stream_frames(master, b"R5000\r", stop)
    try:
        no_target = sensor.read(air_temp_c=0.0)
    finally:
        stop.set()
        thread.join()
    assert no_target.quality is Quality.NO_DATA
    assert no_target.value is None
    uncompensated = sensor.reading_from_ranges([1500] * 7, air_temp_c=None)
    assert uncompensated.quality is Quality.UNCOMPENSATED
    assert uncompensated.value == 500.0
    too_close = sensor.reading_from_ranges([300] * 7, air_temp_c=0.0)
    assert too_close.quality is Quality.OUT_OF_RANGE
    # A ranger that compensates itself is not corrected again and needs no air temperature.
    self_compensating = UltrasonicSnowDepth(
        port,
        ground_distance_mm=2000.0,
        sensor_id="sonic-2",
        model=MaxbotixModel(compensates_internally=True),
        clock=fixed_clock,
    )
    for air in (None, -20.0):
        reading = self_compensating.reading_from_ranges([1500] * 7, air_temp_c=air)
        assert (reading.value, reading.quality) == (500.0, Quality.GOOD)


def test_ultrasonic_silent_port_is_no_data(pty_pair: tuple[int, SerialPort]) -> None:
    _, port = pty_pair
    sensor = UltrasonicSnowDepth(
        port, ground_distance_mm=2000.0, sensor_id="sonic-1", timeout_s=0.3, clock=fixed_clock
    )
    assert sensor.read(air_temp_c=0.0).quality is Quality.NO_DATA


def test_ultrasonic_stuck_output_is_flagged() -> None:
    class Unused:
        def read(self, size: int = 1) -> bytes:
            raise AssertionError("not used")

        def write(self, data: bytes, /) -> int | None:
            raise AssertionError("not used")

        def reset_input_buffer(self) -> None:
            raise AssertionError("not used")

    sensor = UltrasonicSnowDepth(
        Unused(), ground_distance_mm=2000.0, sensor_id="sonic-1", clock=fixed_clock
    )
    qualities = [sensor.reading_from_ranges([1700] * 7, -5.0).quality for _ in range(60)]
    assert qualities[:59] == [Quality.GOOD] * 59
    assert qualities[59] is Quality.STUCK


# --- Laser over a pty: the test plays the Modbus slave / SDI-12 sensor -----


def _serve_once(
    master: int, request_size: int, reply: bytes, seen: list[bytes]
) -> threading.Thread:
    def run() -> None:
        request = b""
        while len(request) < request_size:
            request += os.read(master, request_size - len(request))
        seen.append(request)
        os.write(master, reply)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_laser_modbus_over_pty(pty_pair: tuple[int, SerialPort]) -> None:
    master, port = pty_pair
    body = struct.pack(">BBBH", 7, 4, 2, 1234)
    reply = body + struct.pack("<H", crc16_modbus(body))
    seen: list[bytes] = []
    thread = _serve_once(master, 8, reply, seen)
    sensor = LaserSnowDepth(
        port,
        sensor_id="laser-1",
        modbus_slave=7,
        channel=LaserChannel(modbus_register=0x10, scale_to_mm=0.1),
        clock=fixed_clock,
    )
    reading = sensor.read()
    thread.join()
    # slave 7, read input registers, register 0x0010, one register, CRC low byte first
    assert seen == [
        bytes.fromhex("070400100001")
        + struct.pack("<H", crc16_modbus(bytes.fromhex("070400100001")))
    ]
    assert reading.quality is Quality.GOOD
    assert reading.value == pytest.approx(123.4)


def test_laser_modbus_exception_reply_is_flagged(pty_pair: tuple[int, SerialPort]) -> None:
    master, port = pty_pair
    body = bytes([1, 0x84, 0x02])
    thread = _serve_once(master, 8, body + struct.pack("<H", crc16_modbus(body)), [])
    reading = LaserSnowDepth(port, sensor_id="laser-1", clock=fixed_clock).read()
    thread.join()
    assert reading.quality is Quality.NO_DATA
    assert "exception code 2" in reading.detail


def test_laser_sdi12_over_pty(pty_pair: tuple[int, SerialPort]) -> None:
    master, port = pty_pair

    def sensor_side() -> None:
        assert os.read(master, 4) == b"0MC!"
        os.write(master, b"00002\r\n")
        assert os.read(master, 4) == b"0D0!"
        body = b"0+0.412+1"
        os.write(master, body + sdi12_crc_chars(body) + b"\r\n")

    thread = threading.Thread(target=sensor_side, daemon=True)
    thread.start()
    reading = LaserSnowDepth(
        port,
        sensor_id="laser-1",
        protocol="sdi12",
        channel=LaserChannel(sdi12_value_index=0, scale_to_mm=1000.0),
        clock=fixed_clock,
    ).read()
    thread.join()
    assert reading.quality is Quality.GOOD
    assert reading.value == pytest.approx(412.0)


# --- DS18B20 string over a sysfs-shaped directory --------------------------


def test_ground_string_reads_each_probe(tmp_path: Path) -> None:
    files = {
        "28-000000000a01": "w1_slave_ok.txt",
        "28-000000000a02": "w1_slave_minus_10_125.txt",
        "28-000000000a03": "w1_slave_power_on_85.txt",
    }
    for w1_id, name in files.items():
        (tmp_path / w1_id).mkdir()
        (tmp_path / w1_id / "w1_slave").write_text((DATA / name).read_text())
    probes = [
        GroundProbe("28-000000000a02", 600),
        GroundProbe("28-000000000a01", 50),
        GroundProbe("28-000000000a03", 1200),
        GroundProbe("28-00000000dead", 900),
    ]
    readings = GroundTemperatureString(probes, devices_dir=tmp_path, clock=fixed_clock).read()
    assert [r.probe_depth_mm for r in readings] == [50, 600, 900, 1200]
    assert [r.value for r in readings] == [23.125, -10.125, None, None]
    assert [r.quality for r in readings] == [
        Quality.GOOD,
        Quality.GOOD,
        Quality.NO_DATA,
        Quality.NO_DATA,
    ]
    assert "cannot read" in readings[2].detail
    assert all(r.quantity == "ground_temp_c" for r in readings)


# --- I2C sensors on a fake bus ---------------------------------------------


def test_sht31_on_fake_bus() -> None:
    bus = FakeSMBus()
    bus.set_registers(0x44, 0, b"")
    t, rh = (0x6666).to_bytes(2, "big"), (0x8000).to_bytes(2, "big")
    bus.raw_reads[0x44] = [t + bytes([crc8_sensirion(t)]) + rh + bytes([crc8_sensirion(rh)])]
    temp, humidity = SHT31(bus, "sht-1", clock=fixed_clock).read()
    assert bus.writes == [(0x44, bytes([0x24, 0x00]))]
    assert (temp.quantity, temp.value, temp.quality) == ("air_temp_c", 25.0, Quality.GOOD)
    assert humidity.value == pytest.approx(50.0, abs=0.01)


def test_sht31_absent_chip_is_no_data() -> None:
    readings = SHT31(FakeSMBus(), "sht-1", clock=fixed_clock).read()
    assert [r.quality for r in readings] == [Quality.NO_DATA, Quality.NO_DATA]


def test_bme280_on_fake_bus() -> None:
    bus = FakeSMBus()
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
    block_e1 = struct.pack("<hB", 362, 0) + bytes([0x13, 0x29, 0x03]) + struct.pack("<b", 30)
    bus.set_registers(0x76, 0x88, block_88)
    bus.set_registers(0x76, 0xE1, block_e1)
    bus.set_registers(0x76, 0xD0, bytes([0x60]))
    bus.set_registers(0x76, 0xF7, bytes([0x65, 0x5A, 0xC0, 0x7E, 0xED, 0x00, 0x75, 0x30]))
    temp, rh, pressure = BME280(bus, "bme-1", clock=fixed_clock).read()
    assert temp.value == pytest.approx(25.08, abs=0.01)
    assert pressure.value == pytest.approx(1006.53, abs=0.01)
    assert rh.value == pytest.approx(55.0, abs=0.01)
    assert all(r.quality is Quality.GOOD for r in (temp, rh, pressure))
    # ctrl_hum (0xF2) is written before ctrl_meas (0xF4), forced mode, x1 oversampling.
    assert [w[1] for w in bus.writes] == [bytes([0xF2, 0x01]), bytes([0xF4, 0x25])]


def test_bme280_wrong_chip_is_no_data() -> None:
    bus = FakeSMBus()
    bus.set_registers(0x76, 0xD0, bytes([0x58]))  # a BMP280 answers 0x58
    readings = BME280(bus, "bme-1", clock=fixed_clock).read()
    assert {r.quality for r in readings} == {Quality.NO_DATA}
    assert "not a BME280" in readings[0].detail


def _mlx_word(command: int, raw: int) -> bytes:
    data = raw.to_bytes(2, "little")
    return data + bytes([crc8_smbus_pec(bytes([0xB4, command, 0xB5]) + data)])


def test_mlx90614_on_fake_bus() -> None:
    bus = FakeSMBus()
    bus.command_replies[0x5A, 0x06] = _mlx_word(0x06, round((5.0 + 273.15) / 0.02))
    bus.command_replies[0x5A, 0x07] = _mlx_word(0x07, round((-3.0 + 273.15) / 0.02))
    surface, ambient = MLX90614(bus, "ir-1", emissivity=1.0, clock=fixed_clock).read()
    assert surface.quantity == "surface_temp_c"
    assert surface.value == pytest.approx(-3.0, abs=0.01)
    assert ambient.value == pytest.approx(5.0, abs=0.01)
    # A surface reading above any Wisconsin sidewalk's range is flagged, not published as good.
    bus.command_replies[0x5A, 0x07] = _mlx_word(0x07, round((95.0 + 273.15) / 0.02))
    hot, _ = MLX90614(bus, "ir-1", emissivity=1.0, clock=fixed_clock).read()
    assert hot.quality is Quality.OUT_OF_RANGE


def test_mlx90614_bad_pec_is_checksum() -> None:
    bus = FakeSMBus()
    bus.command_replies[0x5A, 0x06] = _mlx_word(0x06, 14000)
    bus.command_replies[0x5A, 0x07] = bytes([0x00, 0x3A, 0x00])
    readings = MLX90614(bus, "ir-1", clock=fixed_clock).read()
    assert {r.quality for r in readings} == {Quality.CHECKSUM}


# --- Tipping bucket over a counter file ------------------------------------


def test_tipping_bucket_from_counter_file(tmp_path: Path) -> None:
    count = tmp_path / "count"
    gauge = TippingBucket(count, "bucket-1", mm_per_tip=0.2, clock=fixed_clock)
    count.write_text("41\n")
    assert gauge.read().quality is Quality.NO_DATA  # baseline only
    count.write_text("46\n")
    reading = gauge.read()
    assert (reading.quantity, reading.value, reading.quality) == ("precip_mm", 1.0, Quality.GOOD)
    count.write_text("1046\n")  # 200 mm in one interval: switch chatter
    assert gauge.read().quality is Quality.OUT_OF_RANGE
    count.unlink()
    assert gauge.read().quality is Quality.NO_DATA
