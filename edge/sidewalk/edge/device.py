"""The pole device: samples its sensors and camera on their intervals and publishes.

One thread runs the loop: every task (each sensor, the camera, the health
report) has an interval and a next due time on the device's clock; the loop
sleeps until the earliest is due or a command wakes it. Commands arrive on
paho's thread, are queued, and run on the loop thread between samples, so no
handler races a sample.

What leaves the device:

- ``weather``: each sensor sample's ``good`` values, mapped onto
  ``WeatherReading`` fields (one reading per ground probe, with its depth).
  Values the driver flagged are withheld and counted in ``DeviceHealth``.
- ``snow``: per frontage, the camera's cover and cleared width; a frontage the
  camera cannot see at all (NaN width) is skipped, not published as zero.
- ``frame``: when the evidence policy (or ``capture_now``) says so, the JPEG
  bytes on ``…/jpeg`` and then a ``FrameRef`` naming their sha256.
- ``…/status/health`` (retained): flagged counts, buffer size, intervals and
  the clock offset.

Readings go through the disk buffer and the ``Publisher`` (QoS 1, end to end
via the server's watermark). The pole holds one MQTT connection, the
publisher's persistent session, so the broker can make its client id its
login (``use_username_as_clientid``) and no pole can take another client's
session over. Commands, replies, JPEG bytes and health go on it too:

- commands are subscribed at QoS 0, so the broker does not keep requests for
  a pole that is away (Mosquitto queues no QoS 0 for an offline session:
  ``queue_qos0_messages false``), and a timed-out command never runs later;
- the bulky or ephemeral messages wait behind at most the publisher's window
  of readings (``max_in_flight``), never a day's backlog, which stays on the
  pole's disk.

Clock offset: ingest stamps its ``stored`` watermark with its own clock when it
commits. The reading it covers was recorded at ``t0`` and the watermark arrives
at ``t3`` (device clock), so the server's stamp lies between them, and the
offset is ``(t0 + t3) / 2 - stamp`` within ``± (t3 - t0) / 2``: NTP's bound with
the server's two stamps being one. The tightest recent sample is reported.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import queue
import socket
import statistics
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import serial  # type: ignore[import-untyped]  # pyserial ships no type information
from pydantic import ValidationError
from smbus2 import SMBus

from sidewalk.core.contract import (
    CommandArg,
    CommandRequest,
    ContractError,
    DeviceHealth,
    StoredWatermark,
    command_subscription,
    health_topic,
    jpeg_topic,
    parse_command_topic,
    parse_json_model,
    topic_for,
)
from sidewalk.core.mqtt import (
    MqttConnectRefused,
    MqttMessage,
    MqttPacketTooLarge,
)
from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.edge.commands import CommandFailed, Handler, answer
from sidewalk.edge.config import (
    EdgeSecrets,
    EdgeSettings,
    FrontageConfig,
    SensorConfig,
    SimulatedSensor,
    UltrasonicSensor,
    device_mqtt_settings,
)
from sidewalk.edge.drivers.bme280 import BME280
from sidewalk.edge.drivers.ds18b20 import GroundProbe, GroundTemperatureString
from sidewalk.edge.drivers.laser import LaserChannel, LaserSnowDepth
from sidewalk.edge.drivers.mlx90614 import MLX90614
from sidewalk.edge.drivers.ports import SerialPort, SMBus2Raw
from sidewalk.edge.drivers.quality import Quality, SensorReading
from sidewalk.edge.drivers.sht31 import SHT31
from sidewalk.edge.drivers.tipping_bucket import TippingBucket
from sidewalk.edge.drivers.ultrasonic import (
    MaxbotixModel,
    UltrasonicSnowDepth,
    open_maxbotix_port,
    speed_of_sound_corrected_mm,
)
from sidewalk.edge.publisher import Publisher

log = logging.getLogger(__name__)

# SensorReading quantities that are WeatherReading fields; the rest (pressure,
# the IR sensor's own temperature) have no field in the contract yet.
WEATHER_FIELDS = frozenset(
    {
        "snow_depth_mm",
        "precip_mm",
        "air_temp_c",
        "surface_temp_c",
        "relative_humidity_pct",
        "ground_temp_c",
    }
)
CAMERA_TASK = "camera"
# Commands at QoS 0 on the persistent session: the broker keeps none for a
# pole that is away, so a request that timed out never runs hours later.
COMMAND_QOS = 0
HEALTH_TASK = "health"
# An air temperature older than this no longer corrects the ranger's speed of sound.
AIR_TEMP_MAX_AGE = timedelta(minutes=15)
MIN_INTERVAL_S = 1.0
MAX_INTERVAL_S = 86_400.0


# --- time ----------------------------------------------------------------------


class DeviceClock(Protocol):
    """The device's notion of now, and a sleep that a command can cut short."""

    def now(self) -> datetime:
        """The current time, UTC."""
        ...

    def wait(self, wake: threading.Event, seconds: float) -> bool:
        """Sleep up to ``seconds``; True if ``wake`` was set."""
        ...


class SystemClock:
    """The real clock, optionally skewed (to rehearse a device whose clock is off)."""

    def __init__(self, skew: timedelta = timedelta(0)) -> None:
        self.skew = skew

    def now(self) -> datetime:
        """Wall-clock UTC plus the skew."""
        return datetime.now(UTC) + self.skew

    def wait(self, wake: threading.Event, seconds: float) -> bool:
        """Block on ``wake`` for up to ``seconds``."""
        return wake.wait(max(0.0, seconds))


class SimulatedClock:
    """Time that jumps: a wait returns at once with the clock moved on.

    A day of one-a-minute samples runs in the time the buffer needs to store
    them; a command (``wake``) still interrupts, without moving the clock.
    """

    def __init__(self, start: datetime) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> datetime:
        """The simulated instant."""
        with self._lock:
            return self._now

    def wait(self, wake: threading.Event, seconds: float) -> bool:
        """Advance by ``seconds`` unless woken."""
        if wake.is_set():
            return True
        with self._lock:
            self._now += timedelta(seconds=max(0.0, seconds))
        return False


def to_ms(t: datetime) -> int:
    """UTC milliseconds since the epoch, as the contract's ``ts``."""
    return int(t.timestamp() * 1000)


# --- sensors -------------------------------------------------------------------


class SensorSource(Protocol):
    """One configured sensor: a driver behind a uniform ``read``."""

    sensor_id: str

    def read(self, air_temp_c: float | None) -> list[SensorReading]:
        """One sample (flagged readings included); ``air_temp_c`` for the ranger."""
        ...


@dataclass(slots=True)
class _Adapter:
    """Wraps a driver whose ``read()`` needs no air temperature."""

    sensor_id: str
    read_fn: Callable[[], SensorReading | list[SensorReading]]

    def read(self, air_temp_c: float | None) -> list[SensorReading]:
        out = self.read_fn()
        return out if isinstance(out, list) else [out]


@dataclass(slots=True)
class UltrasonicSource:
    """The ranger; it needs the air temperature and can be re-zeroed on a bare board."""

    sensor_id: str
    driver: UltrasonicSnowDepth

    def read(self, air_temp_c: float | None) -> list[SensorReading]:
        return [self.driver.read(air_temp_c)]

    def recalibrate(self, air_temp_c: float | None) -> float:
        """Take the current (corrected) range as the bare-board distance; returns it."""
        ranges = self.driver.read_ranges()
        if not ranges:
            raise CommandFailed(f"{self.sensor_id}: no frames from the ranger")
        median = float(statistics.median(ranges))
        if not self.driver.model.compensates_internally:
            if air_temp_c is None:
                raise CommandFailed(f"{self.sensor_id}: no recent good air temperature")
            median = speed_of_sound_corrected_mm(median, air_temp_c)
        d = self.driver
        # A new driver, so its range check follows the new ground distance.
        self.driver = UltrasonicSnowDepth(
            d.port,
            ground_distance_mm=round(median, 1),
            sensor_id=d.sensor_id,
            model=d.model,
            frames_per_reading=d.frames_per_reading,
            timeout_s=d.timeout_s,
            clock=d.clock,
        )
        return self.driver.ground_distance_mm


@dataclass(slots=True)
class SimulatedSource:
    """A sensor without hardware: a daily sine around ``base``, faults on demand."""

    sensor_id: str
    cfg: SimulatedSensor
    clock: Callable[[], datetime]
    _samples: int = 0

    def read(self, air_temp_c: float | None) -> list[SensorReading]:
        ts = self.clock()
        self._samples += 1
        c = self.cfg
        day = (ts.timestamp() % 86_400) / 86_400
        value = round(c.base + c.amplitude * math.sin(2 * math.pi * day), 3)
        if c.quantity in ("snow_depth_mm", "precip_mm", "relative_humidity_pct"):
            value = max(value, 0.0)
        quality = Quality.GOOD
        if c.fault_every and self._samples % c.fault_every == 0:
            quality = Quality.OUT_OF_RANGE
        return [
            SensorReading(
                c.quantity, value, quality, self.sensor_id, ts, probe_depth_mm=c.probe_depth_mm
            )
        ]


def build_sensor(  # noqa: PLR0911  # one return per sensor kind
    cfg: SensorConfig,
    clock: Callable[[], datetime],
    *,
    open_serial: Callable[[str], SerialPort] = open_maxbotix_port,
    ground_distance_mm: float | None = None,
) -> SensorSource:
    """The driver for one configured sensor; hardware ports open here."""
    if isinstance(cfg, SimulatedSensor):
        return SimulatedSource(cfg.id, cfg, clock)
    if isinstance(cfg, UltrasonicSensor):
        driver = UltrasonicSnowDepth(
            open_serial(cfg.port),
            ground_distance_mm=ground_distance_mm or cfg.ground_distance_mm,
            sensor_id=cfg.id,
            model=MaxbotixModel(
                max_mm=cfg.max_mm, compensates_internally=cfg.compensates_internally
            ),
            clock=clock,
        )
        return UltrasonicSource(cfg.id, driver)
    if cfg.kind == "ds18b20":
        probes = [GroundProbe(p.w1_id, p.depth_mm) for p in cfg.probes]
        ground = GroundTemperatureString(probes, cfg.devices_dir, clock=clock)
        return _Adapter(cfg.id, ground.read)
    if cfg.kind == "tipping_bucket":
        bucket = TippingBucket(cfg.count_path, cfg.id, cfg.mm_per_tip, clock=clock)
        return _Adapter(cfg.id, bucket.read)
    if cfg.kind == "laser":
        laser = LaserSnowDepth(
            serial.Serial(cfg.port, baudrate=cfg.baudrate, timeout=0.2),
            sensor_id=cfg.id,
            protocol=cfg.protocol,
            modbus_slave=cfg.modbus_slave,
            sdi12_address=cfg.sdi12_address,
            channel=LaserChannel(modbus_register=cfg.modbus_register, scale_to_mm=cfg.scale_to_mm),
            clock=clock,
        )
        return _Adapter(cfg.id, laser.read)
    bus = SMBus(cfg.bus)
    if cfg.kind == "sht31":
        return _Adapter(cfg.id, SHT31(SMBus2Raw(bus), cfg.id, cfg.address, clock).read)
    if cfg.kind == "bme280":
        return _Adapter(cfg.id, BME280(bus, cfg.id, cfg.address, clock).read)
    return _Adapter(cfg.id, MLX90614(bus, cfg.id, cfg.emissivity, cfg.address, clock).read)


@dataclass(frozen=True, slots=True)
class WeatherValues:
    """One ``weather`` reading to buffer: its event time and contract fields."""

    ts_ms: int
    values: dict[str, float | int]


def weather_from_sample(
    readings: list[SensorReading],
) -> tuple[list[WeatherValues], list[SensorReading]]:
    """Split one sensor sample into weather readings (good values) and the flagged rest.

    Each ground probe becomes its own reading (``ground_temp_c`` travels with
    its ``ground_probe_depth_mm``); the other good values of the sample share
    one reading. Quantities the contract has no field for are dropped silently.
    """
    flagged: list[SensorReading] = []
    shared: dict[str, float | int] = {}
    shared_ts: datetime | None = None
    out: list[WeatherValues] = []
    for r in readings:
        if r.quantity not in WEATHER_FIELDS:
            continue
        if r.quality is not Quality.GOOD or r.value is None:
            flagged.append(r)
        elif r.quantity == "ground_temp_c":
            if r.probe_depth_mm is None:
                flagged.append(r)
                continue
            values = {"ground_temp_c": r.value, "ground_probe_depth_mm": r.probe_depth_mm}
            out.append(WeatherValues(to_ms(r.ts), values))
        else:
            shared[r.quantity] = r.value
            shared_ts = shared_ts or r.ts
    if shared_ts is not None:
        out.insert(0, WeatherValues(to_ms(shared_ts), shared))
    return out, flagged


# --- clock offset ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetSample:
    """One bound on the device clock minus the server's."""

    at_ms: int
    offset_ms: float
    error_ms: float


class ClockOffsetEstimator:
    """NTP-style offset from record times and the server's stamped watermark.

    Keeps the record time of the last ``remember`` seqs; for a watermark that
    covers one of them, the server's stamp lies between that record time and
    the watermark's arrival. Reports the tightest sample of the last ``window``.
    """

    def __init__(self, remember: int = 4096, window: timedelta = timedelta(hours=1)) -> None:
        self._recorded: OrderedDict[int, int] = OrderedDict()
        self._remember = remember
        self._window_ms = window.total_seconds() * 1000
        self._samples: deque[OffsetSample] = deque(maxlen=256)
        self._lock = threading.Lock()

    def recorded(self, seq: int, at_ms: int) -> None:
        """A reading got ``seq`` at device time ``at_ms``."""
        with self._lock:
            self._recorded[seq] = at_ms
            while len(self._recorded) > self._remember:
                self._recorded.popitem(last=False)

    def watermark(self, seq: int, server_ms: int, arrived_ms: int) -> OffsetSample | None:
        """A watermark for ``seq`` stamped ``server_ms`` arrived at ``arrived_ms``."""
        with self._lock:
            sent = self._recorded.get(seq)
            if sent is None or arrived_ms < sent:
                return None
            sample = OffsetSample(
                arrived_ms, (sent + arrived_ms) / 2 - server_ms, (arrived_ms - sent) / 2
            )
            self._samples.append(sample)
            return sample

    def best(self, now_ms: int) -> OffsetSample | None:
        """The tightest sample of the window, or None."""
        with self._lock:
            recent = [s for s in self._samples if now_ms - s.at_ms <= self._window_ms]
        return min(recent, key=lambda s: s.error_ms, default=None)


# --- camera ------------------------------------------------------------------


Frame = Any  # numpy BGR image; numpy stays out of this module's annotations
FrontageViewT = Any  # sidewalk.edge.camera.installed.FrontageView (imported with the camera)
FrameSource = Callable[[], Frame | None]


@dataclass(frozen=True, slots=True)
class CameraCycle:
    """What one camera pass produced, for ``capture_now``'s reply."""

    measured: dict[str, dict[str, float]]
    frame_sha256: str | None
    skipped: list[str]


class CameraLoop:
    """The camera's side of the device: the frame source, each frontage's geometry
    and evidence selector (``Device.camera_cycle`` runs a pass over them).

    The views come from the TOML's frontages until commissioning sends others
    (``apply``); ``calibration`` is the hash of the views in use, for the health report.
    """

    def __init__(
        self,
        frontages: list[FrontageConfig],
        frames: FrameSource,
        *,
        min_evidence_s: float,
        max_evidence_s: float,
        jpeg_quality: int,
    ) -> None:
        # Deferred, like every camera import here: OpenCV and NumPy take a second
        # or more to load on a pole, and a pole without a camera never needs them.
        import numpy as np

        from sidewalk.edge.camera.evidence import EvidencePolicy
        from sidewalk.edge.camera.geometry import homography_from_points
        from sidewalk.edge.camera.installed import FrontageView

        self.frames = frames
        self.jpeg_quality = jpeg_quality
        self._policy = EvidencePolicy(min_interval_s=min_evidence_s, max_interval_s=max_evidence_s)
        self.geometry: dict[str, Any] = {}
        self.selectors: dict[str, Any] = {}
        self.views: dict[str, FrontageView] = {}
        self.calibration: str | None = None
        configured = {}
        for f in frontages:
            h = homography_from_points(
                np.array(f.image_points, np.float64), np.array(f.ground_points_mm, np.float64)
            )
            configured[f.id] = FrontageView(
                f.id,
                tuple((x, y) for x, y in f.image_points),
                tuple((float(r[0]), float(r[1]), float(r[2])) for r in h.tolist()),
                f.length_mm,
                f.walk_width_mm,
            )
        self.apply(configured)

    def apply(self, views: Mapping[str, FrontageViewT]) -> None:
        """Measure these frontages from now on (a frontage kept keeps its evidence timing)."""
        import numpy as np

        from sidewalk.edge.camera.evidence import EvidenceSelector
        from sidewalk.edge.camera.geometry import FrontageGeometry, edge_error_mm
        from sidewalk.edge.camera.installed import pole_hash

        def geometry(v: FrontageViewT) -> FrontageGeometry:
            # The walk's corners were clicked: the calibration's own error goes into
            # every width's stated uncertainty.
            h = np.array(v.homography, np.float64)
            error = edge_error_mm(h, v.length_mm, v.walk_width_mm)
            return FrontageGeometry(h, v.length_mm, v.walk_width_mm, calibration_error_mm=error)

        self.geometry = {fid: geometry(v) for fid, v in views.items()}
        self.selectors = {
            fid: self.selectors.get(fid) or EvidenceSelector(self._policy) for fid in views
        }
        self.views = dict(views)
        self.calibration = pole_hash(views)


@dataclass(slots=True)
class _Task:
    interval_s: float
    due: datetime


@dataclass(slots=True)
class DeviceStats:
    """Counters since start (for tests and the health report)."""

    samples: int = 0
    readings: int = 0
    flagged: dict[str, int] = field(default_factory=dict)
    snow: int = 0
    frames: int = 0
    commands: int = 0


def sd_notify(message: str) -> None:
    """Tell systemd (``Type=notify``, ``WatchdogSec``) about us; a no-op outside it."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    if address.startswith("@"):
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(message.encode(), address)


class Device:
    """One pole: its sensors, camera, disk buffer, publisher and command handlers.

    ``start()`` opens the buffer and the publisher (the pole's one MQTT session);
    ``run(until=…)`` loops on the injected clock until ``stop()`` or ``until``.
    """

    def __init__(
        self,
        settings: EdgeSettings,
        *,
        clock: DeviceClock | None = None,
        secrets: EdgeSecrets | None = None,
        frames: FrameSource | None = None,
        open_serial: Callable[[str], SerialPort] = open_maxbotix_port,
        publisher_options: Mapping[str, Any] | None = None,
        fresh_watermark_wait_s: float = 0.5,
    ) -> None:
        self.settings = settings
        self.site = settings.site
        self.device = settings.device
        self.clock: DeviceClock = clock or SystemClock()
        self.stats = DeviceStats()
        self.offset = ClockOffsetEstimator()
        self._secrets = secrets or EdgeSecrets.from_env()
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        self._calibration_path = settings.state_dir / "calibration.json"
        overrides = self._load_calibration()
        self.sensors: dict[str, SensorSource] = {
            cfg.id: build_sensor(
                cfg,
                self.clock.now,
                open_serial=open_serial,
                ground_distance_mm=overrides.get(cfg.id),
            )
            for cfg in settings.sensors
        }
        now = self.clock.now()
        self._tasks: dict[str, _Task] = {
            cfg.id: _Task(cfg.interval_s, now) for cfg in settings.sensors
        }
        self._tasks[HEALTH_TASK] = _Task(settings.health_interval_s, now)
        self.camera: CameraLoop | None = None
        cam = settings.camera
        if cam is not None:
            if frames is None:
                from sidewalk.edge.camera.capture import Capture, parse_source

                frames = Capture(parse_source(cam.source)).read
            self.camera = CameraLoop(
                cam.frontages,
                frames,
                min_evidence_s=cam.min_evidence_interval_s,
                max_evidence_s=cam.max_evidence_interval_s,
                jpeg_quality=cam.jpeg_quality,
            )
            self._tasks[CAMERA_TASK] = _Task(cam.interval_s, now)
            self._load_camera_views()
        self._air: tuple[float, datetime] | None = None
        self._handlers: dict[str, Handler] = {
            "capture_now": self._cmd_capture_now,
            "recalibrate": self._cmd_recalibrate,
            "set_calibration": self._cmd_set_calibration,
            "set_interval": self._cmd_set_interval,
        }
        self._inbox: queue.SimpleQueue[tuple[MqttMessage, int]] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._watermark_seen = threading.Event()
        self._fresh_wait_s = fresh_watermark_wait_s
        self._stop = threading.Event()
        self._publisher_options = dict(publisher_options or {})
        self.buffer: ReadingBuffer | None = None
        self.publisher: Publisher | None = None
        self._stored_topic = topic_for(self.site, self.device, "stored")

    # --- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Open the buffer and start the publisher, whose one session carries everything.

        Raises ``MqttConnectRefused`` when the broker rejects the device's
        credentials (retrying would not help); an unreachable broker is retried
        in the background while readings buffer.
        """
        path = self.settings.buffer_path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.buffer = ReadingBuffer(path, self.device, max_rows=self.settings.buffer.max_rows)
        mqtt = device_mqtt_settings(self.settings, self._secrets)
        self.publisher = Publisher(
            self.buffer,
            mqtt,
            site=self.site,
            subscriptions={command_subscription(self.site, self.device): COMMAND_QOS},
            on_message=self._on_control_message,
            **self._publisher_options,
        )
        try:
            if self.publisher.connect_now():
                self._resume_after_server(self._fresh_wait_s)
            else:
                log.warning("%s: broker not reachable yet; retrying", self.device)
        except MqttConnectRefused:
            self.buffer.close()
            raise
        self.publisher.start()
        sd_notify("READY=1")

    def _resume_after_server(self, wait_s: float) -> None:
        """On an empty disk (new or re-imaged), continue after the server's watermark.

        Otherwise the first readings would get seqs the server already holds,
        and the retained watermark, arriving a moment later, would free them
        from the buffer unsent. The retained message follows the SUBACK on the
        same connection, so a short wait suffices. This only ever applied to a
        buffer without an epoch: a new seq state has one, the server keeps its
        seqs apart, and a watermark of another epoch is ignored (it could not
        protect a pole that boots with the broker down anyway).
        """
        assert self.buffer is not None
        if self.buffer.next_seq != 1 or not self._watermark_seen.wait(wait_s):
            return
        self._drain_inbox()
        released = self.buffer.next_seq - 1
        if released:
            log.warning(
                "%s: empty buffer; continuing after the server's seq %d", self.device, released
            )

    def stop(self) -> None:
        """End the loop (thread-safe, e.g. from a signal handler); ``close()`` follows."""
        self._stop.set()
        self._wake.set()

    def close(self) -> None:
        """Stop the publisher (and with it the pole's connection) and close the buffer."""
        sd_notify("STOPPING=1")
        self._stop.set()
        if self.publisher is not None:
            self.publisher.stop()
        if self.buffer is not None:
            self.buffer.close()

    # --- the loop ----------------------------------------------------------------

    def run(self, until: datetime | None = None) -> None:
        """Sample, measure and answer commands until ``stop()`` or the clock passes ``until``."""
        # Under systemd's WatchdogSec, ping at a third of it and never sleep longer.
        watchdog_usec = os.environ.get("WATCHDOG_USEC")
        ping_s = int(watchdog_usec) / 3e6 if watchdog_usec else None
        last_ping = time.monotonic()
        while not self._stop.is_set():
            self._drain_inbox()
            now = self.clock.now()
            if until is not None and now >= until:
                return
            for name, task in list(self._tasks.items()):
                if task.due <= now:
                    self._run_task(name)
                    task.due += timedelta(seconds=task.interval_s)
                    if task.due <= now:  # fell behind (slow camera): skip, don't burst
                        task.due = now + timedelta(seconds=task.interval_s)
            due = min(t.due for t in self._tasks.values())
            if until is not None:
                due = min(due, until)
            wait_s = (due - self.clock.now()).total_seconds()
            if ping_s is not None:
                if time.monotonic() - last_ping >= ping_s:
                    sd_notify("WATCHDOG=1")
                    last_ping = time.monotonic()
                wait_s = min(wait_s, ping_s)
            if wait_s > 0 and self.clock.wait(self._wake, wait_s):
                self._wake.clear()

    def _run_task(self, name: str) -> None:
        try:
            if name == HEALTH_TASK:
                self.publish_health()
            elif name == CAMERA_TASK:
                self.camera_cycle(force_evidence=False)
            else:
                self.sample(name)
        except CommandFailed as exc:
            log.warning("%s: %s", self.device, exc)  # e.g. camera down: it reconnects itself
        except Exception:
            # A broken sensor or camera must not stop the others.
            log.exception("%s: task %s failed", self.device, name)

    def sample(self, sensor_id: str) -> None:
        """Read one sensor and buffer its good values; count the flagged ones."""
        assert self.publisher is not None
        readings = self.sensors[sensor_id].read(self._air_temp())
        self.stats.samples += 1
        weather, flagged = weather_from_sample(readings)
        for r in flagged:
            self._count_flagged(f"{r.sensor_id}/{r.quantity}/{r.quality}")
        for w in weather:
            try:
                reading = self.publisher.record("weather", w.ts_ms, w.values)
            except ValidationError:
                # Good by the driver's limits but outside the contract's: withheld.
                for quantity in w.values:
                    self._count_flagged(f"{sensor_id}/{quantity}/contract_range")
                continue
            self.offset.recorded(reading.seq, to_ms(self.clock.now()))
            self.stats.readings += 1
            if "air_temp_c" in w.values:
                self._air = (float(w.values["air_temp_c"]), self.clock.now())

    def _count_flagged(self, key: str) -> None:
        self.stats.flagged[key] = self.stats.flagged.get(key, 0) + 1

    def _air_temp(self) -> float | None:
        if self._air is None or self.clock.now() - self._air[1] > AIR_TEMP_MAX_AGE:
            return None
        return self._air[0]

    def camera_cycle(self, *, force_evidence: bool) -> CameraCycle:
        """Measure every frontage in one frame; send evidence when due or forced."""
        from sidewalk.edge.camera.evidence import encode_jpeg
        from sidewalk.edge.camera.width import measure_frontage

        cam, publisher = self.camera, self.publisher
        assert cam is not None
        assert publisher is not None
        frame = cam.frames()
        if frame is None:
            raise CommandFailed("camera: no frame (source down, reconnecting)")
        now = self.clock.now()
        ts_ms = to_ms(now)
        results: dict[str, tuple[float, float, bool, float]] = {}
        skipped: list[str] = []
        evidence = force_evidence
        for fid, geometry in cam.geometry.items():
            m = measure_frontage(frame, geometry)
            if math.isnan(m.cleared_width_mm):
                skipped.append(fid)  # the camera sees none of it: no measurement, not zero
                continue
            cover, width = m.snow_cover_fraction, m.cleared_width_mm
            chosen = cam.selectors[fid].consider(frame, cover, width, now.timestamp())
            evidence = evidence or chosen
            results[fid] = (cover, width, chosen, m.width_uncertainty_mm)
        sha: str | None = None
        # Forced (capture_now): the frame goes even with nothing measured in it, so a
        # pole not yet commissioned shows the dashboard what it sees.
        if (evidence and results) or force_evidence:
            sha = self._send_frame(encode_jpeg(frame, cam.jpeg_quality), ts_ms)
        for fid, (cover, width, _, sigma) in results.items():
            values: dict[str, Any] = {
                "frontage": fid,
                "snow_cover_fraction": round(min(max(cover, 0.0), 1.0), 4),
                "cleared_width_mm": round(min(width, 20_000.0), 1),
            }
            if math.isfinite(sigma):
                # The width's stated one sigma (calibration error in it): the server
                # judges a shortfall against it, in the owner's favour.
                values["width_uncertainty_mm"] = round(min(max(sigma, 0.0), 5000.0), 1)
            if sha is not None:
                values["frame_sha256"] = sha
            reading = publisher.record("snow", ts_ms, values)
            self.offset.recorded(reading.seq, ts_ms)
            self.stats.snow += 1
        measured = {
            f: {"snow_cover_fraction": c, "cleared_width_mm": w}
            for f, (c, w, _, _) in results.items()
        }
        return CameraCycle(measured, sha, skipped)

    def _send_frame(self, jpeg: bytes, ts_ms: int) -> str:
        """JPEG bytes on ``…/jpeg`` (when connected), then the buffered ``FrameRef``."""
        assert self.publisher is not None
        sha = hashlib.sha256(jpeg).hexdigest()
        try:
            if not self.publisher.send(jpeg_topic(self.site, self.device), jpeg):
                # Not queued in memory for a long outage: the FrameRef still records
                # that this frame existed; capture_now asks for a fresh one.
                log.warning("%s: offline, frame %s not sent", self.device, sha[:12])
        except MqttPacketTooLarge as exc:
            # The broker would cut the connection over it (docs/storage.md):
            # say so here; the FrameRef still records the frame existed.
            log.error("%s: frame %s not sent: %s", self.device, sha[:12], exc)
        self.publisher.record("frame", ts_ms, {"sha256": sha, "bytes_len": len(jpeg)})
        self.stats.frames += 1
        return sha

    def health(self) -> DeviceHealth:
        """The current ``DeviceHealth`` message."""
        assert self.buffer is not None
        now_ms = to_ms(self.clock.now())
        best = self.offset.best(now_ms)
        return DeviceHealth(
            device=self.device,
            ts=now_ms,
            clock_offset_ms=round(best.offset_ms) if best else None,
            clock_offset_error_ms=math.ceil(best.error_ms) if best else None,
            flagged=dict(self.stats.flagged),
            buffered=len(self.buffer),
            dropped=self.buffer.dropped,
            intervals_s={name: t.interval_s for name, t in self._tasks.items()},
            calibration=self.camera.calibration if self.camera is not None else None,
        )

    def publish_health(self) -> None:
        """Publish the retained health report if the pole's session is up."""
        if self.publisher is not None:
            topic = health_topic(self.site, self.device)
            self.publisher.send(topic, self.health().to_json(), retain=True)

    # --- messages from paho's thread, handled on the loop thread -------------------

    def _on_control_message(self, msg: MqttMessage) -> None:
        self._inbox.put((msg, to_ms(self.clock.now())))
        if msg.topic == self._stored_topic:
            self._watermark_seen.set()
        self._wake.set()

    def _drain_inbox(self) -> None:
        while True:
            try:
                msg, arrived_ms = self._inbox.get_nowait()
            except queue.Empty:
                return
            if msg.topic == self._stored_topic:
                self._on_watermark(msg.payload, arrived_ms)
            else:
                self._on_command(msg, arrived_ms)

    def _on_watermark(self, payload: bytes, arrived_ms: int) -> None:
        try:
            mark = parse_json_model(StoredWatermark, payload)
        except ContractError:
            return
        assert self.buffer is not None
        if mark.epoch != self.buffer.epoch:
            return  # another seq space (this pole before a re-image): frees and measures nothing
        if self.buffer.next_seq <= mark.seq:
            # Only an empty disk is behind the server; moves next_seq past it.
            self.buffer.release_through(mark.seq)
        self.offset.watermark(mark.seq, mark.ts, arrived_ms)

    def _on_command(self, msg: MqttMessage, arrived_ms: int) -> None:
        try:
            parts = parse_command_topic(msg.topic)
            request = parse_json_model(CommandRequest, msg.payload)
        except ContractError as exc:
            log.warning("%s: ignoring bad command on %s: %s", self.device, msg.topic, exc)
            return
        self.stats.commands += 1
        reply = answer(
            self.device,
            parts.name,
            request,
            self._handlers,
            received_ms=arrived_ms,
            now_ms=lambda: to_ms(self.clock.now()),
        )
        if self.publisher is not None and not self.publisher.send(
            f"{msg.topic}/reply", reply.to_json()
        ):
            log.warning("%s: offline, reply to %s not sent", self.device, parts.name)

    # --- command handlers --------------------------------------------------------

    def _cmd_capture_now(self, args: Mapping[str, CommandArg]) -> dict[str, Any]:
        if self.camera is None:
            raise CommandFailed("this device has no camera")
        cycle = self.camera_cycle(force_evidence=True)
        return {
            "frame_sha256": cycle.frame_sha256,
            "measured": cycle.measured,
            "not_visible": cycle.skipped,
        }

    def _cmd_recalibrate(self, args: Mapping[str, CommandArg]) -> dict[str, Any]:
        sensor_id = args.get("sensor")
        source = self.sensors.get(str(sensor_id))
        if not isinstance(source, UltrasonicSource):
            rangers = [s for s, src in self.sensors.items() if isinstance(src, UltrasonicSource)]
            raise CommandFailed(
                f"recalibrate needs sensor=<ranger id> over a bare snow board; rangers: {rangers}"
            )
        previous = source.driver.ground_distance_mm
        new = source.recalibrate(self._air_temp())
        overrides = self._load_calibration()
        overrides[source.sensor_id] = new
        tmp = self._calibration_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(overrides, indent=1))
        tmp.replace(self._calibration_path)
        return {"sensor": source.sensor_id, "ground_distance_mm": new, "previous": previous}

    def _load_camera_views(self) -> None:
        """Run the calibration commissioning sent, if one was saved (else the TOML's)."""
        from sidewalk.edge.camera.installed import CalibrationRejected, load_views

        assert self.camera is not None
        try:
            saved = load_views(self.settings.state_dir)
        except (CalibrationRejected, OSError) as exc:
            # Measuring with the configured views beats measuring nothing; the
            # health hash then tells the dashboard to send the calibration again.
            log.error("%s: saved camera calibration not usable (%s)", self.device, exc)
            return
        if saved is not None:
            self.camera.apply(saved)

    def _cmd_set_calibration(self, args: Mapping[str, CommandArg]) -> dict[str, Any]:
        from sidewalk.edge.camera.installed import CalibrationRejected, parse_views, save_views

        if self.camera is None:
            raise CommandFailed("this device has no camera")
        text = args.get("cameras")
        if not isinstance(text, str):
            raise CommandFailed(
                "set_calibration needs cameras=<JSON: each frontage's region and homography>"
            )
        try:
            views = parse_views(text)
        except CalibrationRejected as exc:
            raise CommandFailed(str(exc)) from None
        try:
            save_views(self.settings.state_dir, views)
        except OSError as exc:
            raise CommandFailed(f"could not save the calibration on the pole: {exc}") from None
        self.camera.apply(views)
        self.publish_health()  # the server sees the new hash now, not a minute later
        return {"calibration": self.camera.calibration, "frontages": sorted(views)}

    def _cmd_set_interval(self, args: Mapping[str, CommandArg]) -> dict[str, Any]:
        name, seconds = args.get("sensor"), args.get("seconds")
        task = self._tasks.get(str(name))
        if task is None:
            raise CommandFailed(f"sensor must be one of {sorted(self._tasks)}")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise CommandFailed("seconds must be a number")
        if not MIN_INTERVAL_S <= seconds <= MAX_INTERVAL_S:
            raise CommandFailed(f"seconds must be within {MIN_INTERVAL_S:g}..{MAX_INTERVAL_S:g}")
        previous = task.interval_s
        task.interval_s = float(seconds)
        task.due = min(task.due, self.clock.now() + timedelta(seconds=seconds))
        return {"sensor": name, "seconds": float(seconds), "previous": previous}

    def _load_calibration(self) -> dict[str, float]:
        try:
            raw = json.loads(self._calibration_path.read_text())
        except FileNotFoundError:
            return {}
        return {str(k): float(v) for k, v in raw.items()}
