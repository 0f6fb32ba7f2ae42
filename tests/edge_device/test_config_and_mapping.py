"""The device configuration and the sensor-to-contract mapping (no broker)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidewalk.core.contract import (
    CommandReply,
    ContractError,
    command_topic,
    parse_command_topic,
)
from sidewalk.edge.config import (
    EdgeConfigError,
    EdgeSecrets,
    device_mqtt_settings,
    load_edge_settings,
)
from sidewalk.edge.device import (
    ClockOffsetEstimator,
    SimulatedClock,
    build_sensor,
    weather_from_sample,
)
from sidewalk.edge.drivers.quality import Quality, SensorReading

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "deploy" / "pole.example.toml"
W1_DATA = REPO / "tests" / "edge_drivers" / "data"
T = datetime(2025, 11, 30, 6, 0, tzinfo=UTC)


def test_the_example_file_loads_with_tls_from_the_environment() -> None:
    cfg = load_edge_settings(EXAMPLE)
    assert cfg.device == "pole-07"
    assert [s.kind for s in cfg.sensors] == [
        "sht31",
        "mlx90614",
        "ultrasonic",
        "tipping_bucket",
        "ds18b20",
    ]
    assert cfg.camera is not None
    assert [f.id for f in cfg.camera.frontages] == ["main-st-101", "main-st-103"]
    assert cfg.buffer_path == Path("/var/lib/sidewalk-edge/buffer.sqlite3")
    secrets = EdgeSecrets.from_env(
        {"SIDEWALK_EDGE_MQTT_PASSWORD": "s3cret", "SIDEWALK_EDGE_TLS_KEYFILE": "/run/k.pem"}
    )
    mqtt = device_mqtt_settings(cfg, secrets)
    assert (mqtt.host, mqtt.port, mqtt.username, mqtt.password) == (
        "sidewalk.clyman.example",
        8883,
        "pole-07",
        "s3cret",
    )
    assert mqtt.tls is not None
    assert mqtt.tls.keyfile == "/run/k.pem"
    # A client certificate without its key would only fail at the TLS handshake.
    with pytest.raises(EdgeConfigError, match="SIDEWALK_EDGE_TLS_KEYFILE"):
        device_mqtt_settings(cfg, EdgeSecrets())


def test_environment_overrides_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDEWALK_EDGE_DEVICE", "pole-08")
    monkeypatch.setenv("SIDEWALK_EDGE_MQTT__URL", "mqtts://10.0.0.2:8884")
    cfg = load_edge_settings(EXAMPLE)
    assert (cfg.device, cfg.mqtt.port) == ("pole-08", 8884)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('password = "x"', "SIDEWALK_EDGE_MQTT_PASSWORD"),
        ('key_file = "/k.pem"', "SIDEWALK_EDGE_TLS_KEYFILE"),
        ("colour = 1", "colour"),
    ],
)
def test_secrets_and_unknown_keys_are_refused(tmp_path: Path, extra: str, message: str) -> None:
    text = EXAMPLE.read_text().replace("keepalive_s = 30", f"keepalive_s = 30\n{extra}")
    path = tmp_path / "pole.toml"
    path.write_text(text)
    with pytest.raises(EdgeConfigError, match=message):
        load_edge_settings(path)


def test_cross_field_rules(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace('id = "surface"', 'id = "air"')
    path = tmp_path / "pole.toml"
    path.write_text(text)
    with pytest.raises(EdgeConfigError, match="listed twice"):
        load_edge_settings(path)


def _r(
    quantity: str, value: float | None, quality: Quality, depth: int | None = None
) -> SensorReading:
    return SensorReading(quantity, value, quality, "s1", T, probe_depth_mm=depth)  # type: ignore[arg-type]  # test literal


def test_only_good_contract_values_become_weather_readings() -> None:
    sample = [
        _r("air_temp_c", -4.5, Quality.GOOD),
        _r("relative_humidity_pct", 101.0, Quality.OUT_OF_RANGE),
        _r("air_pressure_hpa", 990.0, Quality.GOOD),  # no contract field: dropped
        _r("ground_temp_c", 1.5, Quality.GOOD, 300),
        _r("ground_temp_c", None, Quality.CHECKSUM, 600),
    ]
    weather, flagged = weather_from_sample(sample)
    ts = int(T.timestamp() * 1000)
    assert [(w.ts_ms, w.values) for w in weather] == [
        (ts, {"air_temp_c": -4.5}),
        (ts, {"ground_temp_c": 1.5, "ground_probe_depth_mm": 300}),
    ]
    assert [(r.quantity, r.quality) for r in flagged] == [
        ("relative_humidity_pct", Quality.OUT_OF_RANGE),
        ("ground_temp_c", Quality.CHECKSUM),
    ]


def test_real_ds18b20_driver_withholds_a_bad_crc_probe(tmp_path: Path) -> None:
    from sidewalk.edge.config import Ds18b20Sensor

    for w1_id, source in (
        ("28-000000000001", "w1_slave_ok.txt"),
        ("28-000000000002", "w1_slave_bad_crc.txt"),
    ):
        (tmp_path / w1_id).mkdir()
        (tmp_path / w1_id / "w1_slave").write_text((W1_DATA / source).read_text())
    cfg = Ds18b20Sensor(
        id="ground",
        kind="ds18b20",
        devices_dir=tmp_path,
        probes=[
            {"w1_id": "28-000000000001", "depth_mm": 50},
            {"w1_id": "28-000000000002", "depth_mm": 150},
        ],
    )
    weather, flagged = weather_from_sample(build_sensor(cfg, lambda: T).read(None))
    assert [w.values for w in weather] == [{"ground_temp_c": 23.125, "ground_probe_depth_mm": 50}]
    assert [(r.sensor_id, r.quality) for r in flagged] == [("28-000000000002", Quality.CHECKSUM)]


def test_clock_offset_is_bounded_by_record_and_arrival() -> None:
    est = ClockOffsetEstimator()
    est.recorded(5, 1_000_000)
    est.recorded(6, 1_000_500)
    # Server stamped 992_100 (its clock) between device times 1_000_000 and 1_000_400.
    assert est.watermark(5, 992_100, 1_000_400) is not None
    assert est.watermark(6, 992_900, 1_001_000) is not None  # wider: 250 ms
    assert est.watermark(99, 0, 1_001_000) is None  # seq not recorded by this process
    best = est.best(1_001_000)
    assert best is not None
    assert (best.offset_ms, best.error_ms) == (8_100, 200)
    assert est.best(1_001_000 + 2 * 3_600_000) is None  # too old


def test_simulated_clock_jumps_unless_woken() -> None:
    import threading

    clock, wake = SimulatedClock(T), threading.Event()
    assert clock.wait(wake, 60) is False
    assert clock.now() == T + timedelta(seconds=60)
    wake.set()
    assert clock.wait(wake, 60) is True
    assert clock.now() == T + timedelta(seconds=60)


def test_command_topics_and_reply_rule() -> None:
    topic = command_topic("clyman", "pole-07", "set_interval", reply=True)
    assert topic == "sidewalk/v1/clyman/pole-07/cmd/set_interval/reply"
    parts = parse_command_topic(topic)
    assert (parts.device, parts.name, parts.reply) == ("pole-07", "set_interval", True)
    for bad in (
        "sidewalk/v1/clyman/pole-07/cmd",
        "sidewalk/v1/clyman/pole-07/cmd/x/y",
        "sidewalk/v1/clyman/Pole/cmd/x",
    ):
        with pytest.raises(ContractError):
            parse_command_topic(bad)
    with pytest.raises(ValueError, match="error is set exactly"):
        CommandReply(
            device="pole-07",
            transaction="t1",
            status="error",
            received_ts=1_764_460_800_000,
            ts=1_764_460_800_000,
        )
