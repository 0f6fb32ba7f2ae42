"""Builders for device tests: a pole's settings, a running device, a raw subscriber."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sidewalk.core.mqtt import MqttClient, MqttMessage
from sidewalk.edge.config import EdgeSecrets, EdgeSettings
from sidewalk.edge.device import Device, DeviceClock
from tests.ingest.pipeline import T0, settings, slug

START = datetime.fromtimestamp(T0 / 1000, tz=UTC)
NO_SECRETS = EdgeSecrets()


@contextmanager
def fast_dir() -> Iterator[Path]:
    """A directory on tmpfs when there is one: a day of fsync'd appends takes
    45 s on this VM's disk and 0.5 s in memory; durability is the buffer's own
    tests' business, not these."""
    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="sidewalk-pole-", dir=base) as tmp:
        yield Path(tmp)


def sim_sensor(sensor_id: str, quantity: str, **kw: Any) -> dict[str, Any]:
    """A simulated sensor table, as it would appear in the TOML."""
    table: dict[str, Any] = {"id": sensor_id, "kind": "simulated", "quantity": quantity}
    if quantity == "ground_temp_c":
        table["probe_depth_mm"] = kw.pop("probe_depth_mm", 300)
    return table | kw


EIGHT_SENSORS = [
    sim_sensor("air", "air_temp_c", base=-5.0, amplitude=4.0),
    sim_sensor("rh", "relative_humidity_pct", base=80.0, amplitude=10.0),
    sim_sensor("surface", "surface_temp_c", base=-3.0, amplitude=6.0),
    sim_sensor("depth", "snow_depth_mm", base=120.0, amplitude=30.0),
    sim_sensor("gauge", "precip_mm", base=0.2, amplitude=0.2),
    sim_sensor("ground-50", "ground_temp_c", probe_depth_mm=50, base=-1.0),
    sim_sensor("ground-300", "ground_temp_c", probe_depth_mm=300, base=1.0),
    sim_sensor("ground-1200", "ground_temp_c", probe_depth_mm=1200, base=4.0),
]


def pole_settings(
    host: str, port: int, state_dir: Path, *, site: str, device: str, **kw: Any
) -> EdgeSettings:
    """Settings for a pole on the test broker; ``kw`` overrides any field."""
    data: dict[str, Any] = {
        "device": device,
        "site": site,
        "state_dir": state_dir,
        "mqtt": {"url": f"mqtt://{host}:{port}"},
        "sensors": EIGHT_SENSORS,
    }
    return EdgeSettings(**(data | kw))


@contextmanager
def running_device(
    cfg: EdgeSettings, clock: DeviceClock | None = None, *, loop: bool = True, **kw: Any
) -> Iterator[Device]:
    """A started device; with ``loop`` its loop runs on a thread until the block ends
    (without, the test drives ``run(until=…)`` itself)."""
    # Short reconnect delays, like the other data-path tests.
    options = {"retry_connect_s": 0.2} | kw.pop("publisher_options", {})
    device = Device(cfg, clock=clock, secrets=NO_SECRETS, publisher_options=options, **kw)
    device.start()
    thread = threading.Thread(target=device.run, daemon=True) if loop else None
    if thread is not None:
        thread.start()
    try:
        yield device
    finally:
        device.stop()
        if thread is not None:
            thread.join(10)
        device.close()


class Recorder:
    """A raw subscriber that keeps every message it gets, with a condition to wait on."""

    def __init__(self, host: str, port: int, topic: str, **kw: Any) -> None:
        self.messages: list[MqttMessage] = []
        self._cond = threading.Condition()
        self.client = MqttClient(settings(host, port, slug("rec"), **kw), on_message=self._got)
        self.client.connect()
        self.client.subscribe(topic, 1)

    def _got(self, msg: MqttMessage) -> None:
        with self._cond:
            self.messages.append(msg)
            self._cond.notify_all()

    def wait(self, predicate: Callable[[list[MqttMessage]], bool], timeout_s: float = 10.0) -> bool:
        """Wait until ``predicate(messages)`` holds."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self.messages), timeout_s)

    def close(self) -> None:
        """Disconnect."""
        self.client.disconnect()
