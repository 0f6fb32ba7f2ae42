"""Remote commands, the clock offset and the camera loop, against real Mosquitto."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

# The server's ``sidewalk edge`` (with simulate) and the pole's ``sidewalk-edge``.
from sidewalk.cli.edge import edge_app as server_edge_app
from sidewalk.core.contract import (
    DeviceHealth,
    FrameRef,
    SnowMeasurement,
    WeatherReading,
    parse_json_model,
)
from sidewalk.edge.camera.synthetic import make_scene
from sidewalk.edge.camera.width import measure_frontage
from sidewalk.edge.cli import edge_app
from sidewalk.edge.commands import CommandClient, CommandTimeout
from sidewalk.edge.device import SystemClock
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.edge_device.poles import (
    Recorder,
    fast_dir,
    pole_settings,
    running_device,
    sim_sensor,
)
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, settings, slug

pytestmark = pytest.mark.services

SKEW = timedelta(seconds=7)


class FakeRanger:
    """A serial port streaming one MaxBotix range forever."""

    def __init__(self, range_mm: int) -> None:
        self.frame = f"R{range_mm:04d}\r".encode()

    def read(self, size: int = 1) -> bytes:
        return self.frame * max(1, size // len(self.frame))

    def write(self, data: bytes, /) -> int | None:
        return len(data)

    def reset_input_buffer(self) -> None:
        return None


def _client(broker: MosquittoServer, site: str) -> CommandClient:
    return CommandClient(settings(broker.host, broker.port, slug("cmd"), clean_start=True), site)


def test_commands_round_trip_with_transaction_ids_and_errors(
    broker: MosquittoServer,
) -> None:
    site, device = slug("site"), slug("pole")
    sensors = [
        sim_sensor("air", "air_temp_c", base=-10.0, amplitude=0.0, interval_s=0.5),
        {"id": "ranger", "kind": "ultrasonic", "ground_distance_mm": 2500, "interval_s": 3600},
    ]
    with fast_dir() as tmp:
        cfg = pole_settings(
            broker.host, broker.port, tmp / "pole", site=site, device=device, sensors=sensors
        )
        with (
            running_device(cfg, SystemClock(SKEW), open_serial=lambda _: FakeRanger(2000)),
            _client(broker, site) as cmd,
        ):
            ok = cmd.call(device, "set_interval", {"sensor": "air", "seconds": 2}, timeout_s=5)
            assert ok.reply.status == "ok"
            assert ok.reply.error is None
            assert ok.reply.data == {"sensor": "air", "seconds": 2.0, "previous": 0.5}
            # The reply's two device stamps put the device 7 s ahead, within the round trip.
            assert abs(ok.clock_offset_ms - SKEW.total_seconds() * 1000) <= ok.round_trip_ms / 2 + 5

            unknown = cmd.call(device, "self_destruct", timeout_s=5)
            assert unknown.reply.status == "error"
            assert unknown.reply.error is not None
            assert "unknown command 'self_destruct'" in unknown.reply.error
            assert unknown.reply.transaction != ok.reply.transaction

            bad = cmd.call(device, "set_interval", {"sensor": "air", "seconds": 0}, timeout_s=5)
            assert bad.reply.status == "error"
            no_camera = cmd.call(device, "capture_now", timeout_s=5)
            assert no_camera.reply.error == "this device has no camera"

            cal = cmd.call(device, "recalibrate", {"sensor": "ranger"}, timeout_s=5)
            assert cal.reply.status == "ok", cal.reply.error
            expected = round(2000 * math.sqrt((273.15 - 10.0) / 273.15), 1)
            assert cal.reply.data["ground_distance_mm"] == pytest.approx(expected)
            assert cal.reply.data["previous"] == 2500
            saved = json.loads((tmp / "pole" / "calibration.json").read_text())
            assert saved == {"ranger": pytest.approx(expected)}

            with pytest.raises(CommandTimeout):
                cmd.call(slug("absent"), "capture_now", timeout_s=0.5)


def test_health_reports_clock_offset_and_withheld_values(broker: MosquittoServer) -> None:
    """The device's clock runs 7 s fast; the flaky sensor's every second value is withheld."""
    site, device = slug("site"), slug("pole")
    sensors = [
        sim_sensor("air", "air_temp_c", base=-4.0, amplitude=2.0, interval_s=0.2),
        sim_sensor("flaky", "surface_temp_c", base=-2.0, interval_s=0.2, fault_every=2),
    ]
    with fast_dir() as tmp, running_ingest(broker.host, broker.port, tmp / "ts.db", site) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        health = Recorder(broker.host, broker.port, f"sidewalk/v1/{site}/{device}/status/health")
        cfg = pole_settings(
            broker.host,
            broker.port,
            tmp / "pole",
            site=site,
            device=device,
            sensors=sensors,
            health_interval_s=0.5,
        )
        try:
            with running_device(cfg, SystemClock(SKEW)) as pole:

                def measured(ms: list[Any]) -> bool:
                    h = parse_json_model(DeviceHealth, ms[-1].payload) if ms else None
                    return h is not None and h.clock_offset_ms is not None and h.flagged != {}

                assert health.wait(measured, timeout_s=15)
                pole.stop()
            last = parse_json_model(DeviceHealth, health.messages[-1].payload)
            assert last.clock_offset_ms is not None
            assert last.clock_offset_error_ms is not None
            assert abs(last.clock_offset_ms - 7000) <= last.clock_offset_error_ms + 5
            assert last.clock_offset_error_ms < 1000
            assert last.flagged["flaky/surface_temp_c/out_of_range"] >= 1
            flaky_samples = pole.stats.flagged["flaky/surface_temp_c/out_of_range"]
            assert ingest.wait_for(lambda: store.stored_up_to(device) == pole.stats.readings)
            stored = [r for r in store.readings(device=device) if isinstance(r, WeatherReading)]
            surface = [r for r in stored if r.surface_temp_c is not None]
            air = [r for r in stored if r.air_temp_c is not None]
            # The flaky sensor alternates good and flagged: only its good half was stored,
            # while the air sensor, sampled as often, lost nothing.
            assert len(surface) in (flaky_samples, flaky_samples + 1)
            assert len(air) >= 2 * flaky_samples - 1
        finally:
            health.close()


def test_capture_now_measures_frontages_and_sends_evidence(broker: MosquittoServer) -> None:
    """One frontage in view, one outside the picture: the first is measured and its
    frame sent (bytes on …/jpeg, then a FrameRef); the second is skipped, not zero."""
    site, device = slug("site"), slug("pole")
    scene = make_scene(3, 1200.0)
    length, width = scene.geometry.length_mm, scene.geometry.walk_width_mm
    ground = [[0.0, 0.0], [length, 0.0], [length, width], [0.0, width]]
    camera = {
        "source": "unused",
        "interval_s": 3600,
        "frontages": [
            {
                "id": "main-st-101",
                "length_mm": length,
                "walk_width_mm": width,
                "image_points": np.asarray(scene.walk_corners_px).tolist(),
                "ground_points_mm": ground,
            },
            {
                "id": "main-st-103",
                "length_mm": length,
                "walk_width_mm": width,
                "image_points": [[9000, 9000], [9900, 9000], [9900, 9300], [9000, 9300]],
                "ground_points_mm": ground,
            },
        ],
    }
    with fast_dir() as tmp, running_ingest(broker.host, broker.port, tmp / "ts.db", site) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        jpegs = Recorder(broker.host, broker.port, f"sidewalk/v1/{site}/{device}/jpeg")
        cfg = pole_settings(
            broker.host,
            broker.port,
            tmp / "pole",
            site=site,
            device=device,
            sensors=[],
            camera=camera,
        )
        try:
            with (
                running_device(cfg, frames=lambda: scene.frame) as pole,
                _client(broker, site) as cmd,
            ):
                result = cmd.call(device, "capture_now", timeout_s=20)
                assert result.reply.status == "ok", result.reply.error
                sha = result.reply.data["frame_sha256"]
                assert result.reply.data["not_visible"] == ["main-st-103"]
                assert jpegs.wait(lambda ms: len(ms) >= 2, timeout_s=10)
                assert {hashlib.sha256(m.payload).hexdigest() for m in jpegs.messages} >= {sha}
                assert pole.publisher is not None
                assert pole.publisher.wait_stored(timeout_s=10)
                assert pole.camera is not None
                geometry = pole.camera.geometry["main-st-101"]
            assert geometry.calibration_error_mm > 0  # from its clicked corners
            sigma = measure_frontage(scene.frame, geometry).width_uncertainty_mm
            snow = [r for r in store.readings(device=device) if isinstance(r, SnowMeasurement)]
            frames = [r for r in store.readings(device=device) if isinstance(r, FrameRef)]
            assert {r.frontage for r in snow} == {"main-st-101"}
            # The start-up pass (first frame: always evidence) and capture_now saw the
            # same still frame, so both measurements name the same image.
            forced = [r for r in snow if r.frame_sha256 == sha]
            assert len(forced) == len(snow) == 2
            assert forced[-1].cleared_width_mm == pytest.approx(1200.0, abs=100)
            # Each width states its one sigma, the clicked calibration's error in it.
            assert {r.width_uncertainty_mm for r in snow} == {round(sigma, 1)}
            assert sha in {f.sha256 for f in frames}
        finally:
            jpegs.close()


def test_systemd_hears_ready_watchdog_and_stopping(
    broker: MosquittoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    site, device = slug("site"), slug("pole")
    with fast_dir() as tmp, socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(tmp / "notify"))
        sock.settimeout(5)
        monkeypatch.setenv("NOTIFY_SOCKET", str(tmp / "notify"))
        monkeypatch.setenv("WATCHDOG_USEC", "300000")  # ping every 0.1 s
        # Sensors every hour: only the watchdog cap keeps the loop waking.
        cfg = pole_settings(
            broker.host,
            broker.port,
            tmp / "pole",
            site=site,
            device=device,
            sensors=[sim_sensor("air", "air_temp_c", interval_s=3600)],
            health_interval_s=3600,
        )
        heard: list[bytes] = []
        with running_device(cfg):
            while heard.count(b"WATCHDOG=1") < 3:
                heard.append(sock.recv(64))
        # A last ping may still come before the stop; the socket timeout bounds the wait.
        while heard[-1] != b"STOPPING=1":
            heard.append(sock.recv(64))
        assert heard[0] == b"READY=1"


def test_the_command_line_sends_commands_and_prints_replies(
    broker: MosquittoServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    monkeypatch.setenv("SIDEWALK_SITE", site)
    monkeypatch.setenv("SIDEWALK_MQTT__URL", f"mqtt://{broker.host}:{broker.port}")
    runner = CliRunner()
    with fast_dir() as tmp:
        cfg = pole_settings(broker.host, broker.port, tmp / "pole", site=site, device=device)
        with running_device(cfg):
            ok = runner.invoke(
                edge_app, ["command", device, "set_interval", "-a", "sensor=air", "-a", "seconds=5"]
            )
            assert ok.exit_code == 0, ok.output
            assert '"status": "ok"' in ok.output
            assert "device clock offset" in ok.output
            bad = runner.invoke(edge_app, ["command", device, "reboot"])
            assert bad.exit_code == 1
            assert "unknown command 'reboot'" in bad.output
    timeout = runner.invoke(edge_app, ["command", device, "capture_now", "--timeout", "0.3"])
    assert timeout.exit_code == 1
    broken = tmp_path / "pole.toml"
    broken.write_text('device = "pole-1"\n[mqtt]\nurl = "mqtt://x"\npassword = "p"\n')
    refused = runner.invoke(edge_app, ["run", "--config", str(broken)])
    assert refused.exit_code == 2
    assert "SIDEWALK_EDGE_MQTT_PASSWORD" in refused.output


def test_simulate_plays_a_scenario_until_stored(
    broker: MosquittoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = slug("site")
    with fast_dir() as tmp, running_ingest(broker.host, broker.port, tmp / "ts.db", site) as ingest:
        monkeypatch.setenv("SIDEWALK_SITE", site)
        monkeypatch.setenv("SIDEWALK_DATA_DIR", str(tmp / "data"))
        monkeypatch.setenv("SIDEWALK_MQTT__URL", f"mqtt://{broker.host}:{broker.port}")
        result = CliRunner().invoke(server_edge_app, ["simulate", "--scenario", "first-storm"])
        assert result.exit_code == 0, result.output
        assert "all stored" in result.output
        assert ingest.stats.stored > 0


def test_a_command_sent_while_the_pole_is_away_never_runs_later(broker: MosquittoServer) -> None:
    """The pole's one persistent session subscribes to its commands at QoS 0, which the
    broker keeps for no offline session: a request that timed out while the pole was
    away is not delivered when it comes back, while a fresh one is answered."""
    site, device = slug("site"), slug("pole")
    sensors = [sim_sensor("air", "air_temp_c", base=-10.0, amplitude=0.0, interval_s=0.5)]
    with fast_dir() as tmp:
        cfg = pole_settings(
            broker.host, broker.port, tmp / "pole", site=site, device=device, sensors=sensors
        )
        with _client(broker, site) as cmd:
            with running_device(cfg, SystemClock()):
                pass  # the session exists at the broker, and persists
            with pytest.raises(CommandTimeout):
                cmd.call(device, "set_interval", {"sensor": "air", "seconds": 60}, timeout_s=0.3)
            with running_device(cfg, SystemClock()) as pole:
                assert pole.publisher is not None
                assert pole.publisher.session_present  # the same session came back
                ok = cmd.call(device, "set_interval", {"sensor": "air", "seconds": 2}, timeout_s=5)
                # The stale request (60 s) never ran: the interval went from 0.5 to 2.
                assert ok.reply.data["previous"] == 0.5
                assert pole.stats.commands == 1
