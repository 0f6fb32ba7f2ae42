"""A pole device's configuration: one TOML file plus environment overrides.

Strict like the server's (``extra="forbid"`` everywhere, bounds on every
number, cross-field rules in validators). Precedence: environment
(``SIDEWALK_EDGE_<FIELD>`` / ``SIDEWALK_EDGE_<SECTION>__<FIELD>``) over the file
over defaults. Secrets never come from the file: the broker password is
``SIDEWALK_EDGE_MQTT_PASSWORD`` and the client key's path is
``SIDEWALK_EDGE_TLS_KEYFILE`` (a systemd credential or a root-only file); a
file that names either is refused with the variable to use instead.

Sensors are a list of tables discriminated by ``kind``; each carries the
settings its driver needs (bus and address, serial port, 1-Wire ids and
depths, the ranger's taped ground distance, mm per bucket tip) and its own
sampling interval. ``kind = "simulated"`` stands in for hardware on a laptop
and in tests.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import SettingsConfigDict

from sidewalk.core.config import FileThenEnvSettings, read_toml, validation_problems
from sidewalk.core.contract import SLUG
from sidewalk.core.mqtt import MqttSettings, TlsSettings

ENV_PREFIX = "SIDEWALK_EDGE_"
PASSWORD_ENV = "SIDEWALK_EDGE_MQTT_PASSWORD"
KEYFILE_ENV = "SIDEWALK_EDGE_TLS_KEYFILE"
_SECRET_KEYS = {"password": PASSWORD_ENV, "key_file": KEYFILE_ENV}

SlugStr = Annotated[str, Field(pattern=SLUG)]
Interval = Annotated[float, Field(gt=0, le=86_400, description="seconds between samples")]
I2cAddress = Annotated[int, Field(ge=0x03, le=0x77)]
Point = tuple[float, float]

# The quantities a simulated sensor may produce: the contract's weather fields.
SimQuantity = Literal[
    "snow_depth_mm",
    "precip_mm",
    "air_temp_c",
    "surface_temp_c",
    "relative_humidity_pct",
    "ground_temp_c",
]


class EdgeConfigError(ValueError):
    """A device configuration that cannot be used; the message names the field."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EdgeMqttConfig(_Section):
    """How the pole reaches the broker, with per-device credentials."""

    url: str = Field(description="mqtt://host:1883 or mqtts://host:8883")
    username: str | None = Field(
        default=None, description="broker login; default the device id (the ACL keys on it)"
    )
    ca_file: Path | None = Field(default=None, description="CA that signed the broker's cert")
    cert_file: Path | None = Field(default=None, description="this device's client certificate")
    keepalive_s: Annotated[int, Field(ge=5, le=3600)] = 30

    @field_validator("url")
    @classmethod
    def _scheme(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"mqtt", "mqtts"} or not parts.hostname:
            raise ValueError("must look like mqtt://host:1883 or mqtts://host:8883")
        if parts.password:
            raise ValueError(f"put the password in {PASSWORD_ENV}, not in the URL")
        _ = parts.port  # ValueError for a port out of range or not a number, here and not later
        return value

    @model_validator(mode="after")
    def _tls_files_need_tls(self) -> EdgeMqttConfig:
        if (self.ca_file or self.cert_file) and not self.url.startswith("mqtts://"):
            raise ValueError("ca_file/cert_file given but the url is not mqtts://")
        return self

    @property
    def host(self) -> str:
        """The broker's host name."""
        return urlsplit(self.url).hostname or ""

    @property
    def port(self) -> int:
        """The broker's port (1883 / 8883 by scheme when not given)."""
        parts = urlsplit(self.url)
        return parts.port or (8883 if parts.scheme == "mqtts" else 1883)


class _Sensor(_Section):
    id: SlugStr = Field(description="stable sensor id, used in health counters and commands")
    interval_s: Interval = 60.0


class Sht31Sensor(_Sensor):
    """Sensirion SHT31 air temperature and humidity on I2C."""

    kind: Literal["sht31"]
    bus: Annotated[int, Field(ge=0, le=15)] = 1
    address: I2cAddress = 0x44


class Bme280Sensor(_Sensor):
    """Bosch BME280 (alternative air sensor) on I2C."""

    kind: Literal["bme280"]
    bus: Annotated[int, Field(ge=0, le=15)] = 1
    address: I2cAddress = 0x76


class Mlx90614Sensor(_Sensor):
    """Melexis MLX90614 infrared surface temperature on SMBus."""

    kind: Literal["mlx90614"]
    bus: Annotated[int, Field(ge=0, le=15)] = 1
    address: I2cAddress = 0x5A
    emissivity: Annotated[float, Field(gt=0.1, le=1.0)] = 0.96


class GroundProbeConfig(_Section):
    """One DS18B20 of the buried string."""

    w1_id: Annotated[str, Field(pattern=r"^28-[0-9a-f]{12}$")]
    depth_mm: Annotated[int, Field(ge=0, le=3000)]


class Ds18b20Sensor(_Sensor):
    """The buried DS18B20 string read through the kernel's w1_therm."""

    kind: Literal["ds18b20"]
    probes: Annotated[list[GroundProbeConfig], Field(min_length=1, max_length=16)]
    devices_dir: Path = Path("/sys/bus/w1/devices")

    @model_validator(mode="after")
    def _distinct(self) -> Ds18b20Sensor:
        ids = [p.w1_id for p in self.probes]
        if len(set(ids)) != len(ids):
            raise ValueError("a probe id is listed twice")
        return self


class UltrasonicSensor(_Sensor):
    """MaxBotix HRXL ranger over the snow board."""

    kind: Literal["ultrasonic"]
    port: str = "/dev/serial0"
    ground_distance_mm: Annotated[float, Field(gt=300, le=9999)] = Field(
        description="taped distance from the ranger face to the bare snow board"
    )
    max_mm: Annotated[int, Field(ge=1000, le=9999)] = 5000
    compensates_internally: bool = False


class LaserSensor(_Sensor):
    """Laser snow-depth sensor over RS-485 (Modbus RTU) or SDI-12."""

    kind: Literal["laser"]
    port: str
    baudrate: Annotated[int, Field(ge=1200, le=115_200)] = 9600
    protocol: Literal["modbus", "sdi12"] = "modbus"
    modbus_slave: Annotated[int, Field(ge=1, le=247)] = 1
    sdi12_address: Annotated[str, Field(pattern=r"^[0-9A-Za-z]$")] = "0"
    modbus_register: Annotated[int, Field(ge=0, le=65535)] = 0
    scale_to_mm: Annotated[float, Field(gt=0)] = 1.0


class TippingBucketSensor(_Sensor):
    """Heated tipping-bucket gauge counted by the kernel's interrupt-cnt."""

    kind: Literal["tipping_bucket"]
    count_path: Path = Path("/sys/bus/counter/devices/counter0/count0/count")
    mm_per_tip: Annotated[float, Field(gt=0, le=5)] = 0.2


class SimulatedSensor(_Sensor):
    """A stand-in for hardware: a smooth daily cycle around ``base``, no I/O.

    ``fault_every`` > 0 makes every n-th sample come back flagged (a stuck or
    out-of-range value), to exercise the quality path without hardware.
    """

    kind: Literal["simulated"]
    quantity: SimQuantity
    base: float = 0.0
    amplitude: Annotated[float, Field(ge=0)] = 1.0
    probe_depth_mm: Annotated[int, Field(ge=0, le=3000)] | None = None
    fault_every: Annotated[int, Field(ge=0)] = 0

    @model_validator(mode="after")
    def _depth_for_ground(self) -> SimulatedSensor:
        if (self.quantity == "ground_temp_c") != (self.probe_depth_mm is not None):
            raise ValueError("probe_depth_mm is required for ground_temp_c and only for it")
        return self


SensorConfig = Annotated[
    Sht31Sensor
    | Bme280Sensor
    | Mlx90614Sensor
    | Ds18b20Sensor
    | UltrasonicSensor
    | LaserSensor
    | TippingBucketSensor
    | SimulatedSensor,
    Field(discriminator="kind"),
]


class FrontageConfig(_Section):
    """One property frontage in the camera's view.

    ``image_points`` (pixels) and ``ground_points_mm`` pair up: ground x runs
    along the frontage from 0 to ``length_mm``, y across the walk from its
    street edge (0) to ``walk_width_mm`` (hardware/calibration.md).
    """

    id: SlugStr
    length_mm: Annotated[float, Field(gt=0, le=200_000)]
    walk_width_mm: Annotated[float, Field(gt=0, le=10_000)]
    image_points: Annotated[list[Point], Field(min_length=4, max_length=64)]
    ground_points_mm: Annotated[list[Point], Field(min_length=4, max_length=64)]

    @model_validator(mode="after")
    def _paired(self) -> FrontageConfig:
        if len(self.image_points) != len(self.ground_points_mm):
            raise ValueError("image_points and ground_points_mm must pair up one to one")
        return self


class CameraConfig(_Section):
    """The camera and the frontages it measures."""

    source: str = Field(description='USB index ("0"), RTSP URL or file path')
    interval_s: Interval = 300.0
    min_evidence_interval_s: Annotated[float, Field(ge=0, le=86_400)] = 60.0
    max_evidence_interval_s: Annotated[float, Field(gt=0, le=86_400)] = 3600.0
    jpeg_quality: Annotated[int, Field(ge=30, le=95)] = 85
    # May be empty: commissioning sends the views from the dashboard (set_calibration).
    frontages: list[FrontageConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _checks(self) -> CameraConfig:
        ids = [f.id for f in self.frontages]
        if len(set(ids)) != len(ids):
            raise ValueError("a frontage id is listed twice")
        if self.min_evidence_interval_s > self.max_evidence_interval_s:
            raise ValueError("min_evidence_interval_s exceeds max_evidence_interval_s")
        return self


class BufferConfig(_Section):
    """The disk buffer that holds readings until the server's watermark passes them."""

    path: Path | None = Field(default=None, description="default <state_dir>/buffer.sqlite3")
    max_rows: Annotated[int, Field(ge=1000, le=100_000_000)] = 1_000_000


class EdgeSettings(FileThenEnvSettings):
    """The whole configuration of one pole device."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", frozen=True
    )

    device: SlugStr
    site: SlugStr = "clyman"
    state_dir: Path = Field(
        default=Path("/var/lib/sidewalk-edge"),
        description="buffer, calibration overrides (systemd StateDirectory)",
    )
    health_interval_s: Interval = 60.0
    mqtt: EdgeMqttConfig
    buffer: BufferConfig = BufferConfig()
    sensors: list[SensorConfig] = Field(default_factory=list)
    camera: CameraConfig | None = None

    @model_validator(mode="after")
    def _checks(self) -> EdgeSettings:
        ids = [s.id for s in self.sensors]
        if len(set(ids)) != len(ids):
            raise ValueError("a sensor id is listed twice")
        if "camera" in ids:
            raise ValueError('"camera" is reserved for the camera loop')
        if not self.sensors and self.camera is None:
            raise ValueError("nothing to measure: configure sensors or a camera")
        return self

    @property
    def buffer_path(self) -> Path:
        """Where the disk buffer lives."""
        return self.buffer.path or self.state_dir / "buffer.sqlite3"


class EdgeSecrets(BaseModel):
    """The device's secrets, from the environment only."""

    model_config = ConfigDict(frozen=True)

    mqtt_password: SecretStr | None = None
    tls_keyfile: Path | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> EdgeSecrets:
        """Read ``SIDEWALK_EDGE_MQTT_PASSWORD`` and ``SIDEWALK_EDGE_TLS_KEYFILE``."""
        env = os.environ if environ is None else environ
        password = env.get(PASSWORD_ENV)
        keyfile = env.get(KEYFILE_ENV)
        return cls(
            mqtt_password=SecretStr(password) if password else None,
            tls_keyfile=Path(keyfile) if keyfile else None,
        )


def load_edge_settings(path: Path | str) -> EdgeSettings:
    """Read the device's TOML file and the environment into validated settings."""
    source = str(path)
    data = read_toml(path, EdgeConfigError)
    mqtt = data.get("mqtt")
    if isinstance(mqtt, dict):
        for key, env_name in _SECRET_KEYS.items():
            if key in mqtt:
                raise EdgeConfigError(
                    f"{source}: mqtt.{key}: secrets are read only from the environment; "
                    f"set {env_name}"
                )
    try:
        return EdgeSettings(**data)
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise EdgeConfigError(f"{source}: invalid configuration\n  {problems}") from None


def device_mqtt_settings(
    settings: EdgeSettings,
    secrets: EdgeSecrets | None = None,
    *,
    client_id: str | None = None,
    clean_start: bool = False,
) -> MqttSettings:
    """Broker settings for one of the device's connections.

    TLS is on for ``mqtts://``; the client certificate needs the key from
    ``SIDEWALK_EDGE_TLS_KEYFILE`` (refused without it, as a half-set pair would
    only fail later at the handshake).
    """
    secrets = secrets or EdgeSecrets.from_env()
    cfg = settings.mqtt
    tls: TlsSettings | None = None
    if cfg.url.startswith("mqtts://"):
        if cfg.cert_file is not None and secrets.tls_keyfile is None:
            raise EdgeConfigError(f"mqtt.cert_file is set but {KEYFILE_ENV} is not")
        tls = TlsSettings(
            ca_certs=str(cfg.ca_file) if cfg.ca_file else None,
            certfile=str(cfg.cert_file) if cfg.cert_file else None,
            keyfile=str(secrets.tls_keyfile) if cfg.cert_file and secrets.tls_keyfile else None,
        )
    password = secrets.mqtt_password.get_secret_value() if secrets.mqtt_password else None
    return MqttSettings(
        host=cfg.host,
        port=cfg.port,
        client_id=client_id or settings.device,
        clean_start=clean_start,
        username=cfg.username or settings.device,
        password=password,
        tls=tls,
        keepalive_s=cfg.keepalive_s,
    )
