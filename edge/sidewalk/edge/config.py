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
from typing import Annotated, Any, Literal, get_args
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
from pydantic.fields import FieldInfo
from pydantic_settings import SettingsConfigDict

from sidewalk.core.config import FileThenEnvSettings, read_toml
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

    url: str = Field(
        description=(
            "Required. The broker's address: mqtts://host:8883 (TLS, for a pole on the street)"
            " or mqtt://host:1883 (plain, a test bench). No password in it; a wrong host or"
            " port means the pole keeps its readings in the buffer and retries."
        )
    )
    username: str | None = Field(
        default=None,
        description=(
            "The broker login. Default: the device id, which the broker's access list keys"
            " on; a different name is refused by the broker or sees no topics."
        ),
    )
    ca_file: Path | None = Field(
        default=None,
        description=(
            "Path of the certificate authority that signed the broker's certificate (mqtts://"
            " only). Default: the system's trusted authorities; the wrong file fails the TLS"
            " handshake and the pole retries."
        ),
    )
    cert_file: Path | None = Field(
        default=None,
        description=(
            "Path of this pole's client certificate (mqtts:// only). Default: none (password"
            " login only). Its key's path goes in SIDEWALK_EDGE_TLS_KEYFILE, never here."
        ),
    )
    keepalive_s: Annotated[int, Field(ge=5, le=3600)] = Field(
        default=30,
        description=(
            "Seconds between keep-alive pings to the broker, 5 to 3600. Default 30. Larger"
            " means a dead link is noticed later; the broker marks the pole gone after 1.5x this."
        ),
    )

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
    id: SlugStr = Field(
        description=(
            "Required. A short name for this sensor (lower-case letters, digits, dashes), unique"
            " on the pole and kept for its life: health counts and commands (recalibrate) name"
            " it. \"camera\" is taken."
        )
    )
    interval_s: Interval = Field(
        default=60.0,
        description=(
            "Seconds between this sensor's samples, above 0 and at most 86400. Default 60."
            " Longer intervals make the server's snow and temperature decisions coarser."
        ),
    )


class Sht31Sensor(_Sensor):
    """Sensirion SHT31 air temperature and humidity on I2C."""

    kind: Literal["sht31"] = Field(description="The driver: \"sht31\".")
    bus: Annotated[int, Field(ge=0, le=15)] = Field(
        default=1,
        description="I2C bus number, 0 to 15 (/dev/i2c-N). Default 1, the Raspberry Pi's header.",
    )
    address: I2cAddress = Field(
        default=0x44,
        description=(
            "The chip's I2C address, 0x03 to 0x77. Default 0x44, the SHT31's factory address;"
            " a wrong one reads as a sensor fault (i2cdetect -y 1 lists what is on the bus)."
        ),
    )


class Bme280Sensor(_Sensor):
    """Bosch BME280 (alternative air sensor) on I2C."""

    kind: Literal["bme280"] = Field(description="The driver: \"bme280\".")
    bus: Annotated[int, Field(ge=0, le=15)] = Field(
        default=1,
        description="I2C bus number, 0 to 15 (/dev/i2c-N). Default 1, the Raspberry Pi's header.",
    )
    address: I2cAddress = Field(
        default=0x76,
        description=(
            "The chip's I2C address, 0x03 to 0x77. Default 0x76, the BME280's factory address;"
            " a wrong one reads as a sensor fault (i2cdetect -y 1 lists what is on the bus)."
        ),
    )


class Mlx90614Sensor(_Sensor):
    """Melexis MLX90614 infrared surface temperature on SMBus."""

    kind: Literal["mlx90614"] = Field(description="The driver: \"mlx90614\".")
    bus: Annotated[int, Field(ge=0, le=15)] = Field(
        default=1,
        description="I2C bus number, 0 to 15 (/dev/i2c-N). Default 1, the Raspberry Pi's header.",
    )
    address: I2cAddress = Field(
        default=0x5A,
        description=(
            "The chip's I2C address, 0x03 to 0x77. Default 0x5A, the MLX90614's factory address;"
            " a wrong one reads as a sensor fault (i2cdetect -y 1 lists what is on the bus)."
        ),
    )
    emissivity: Annotated[float, Field(gt=0.1, le=1.0)] = Field(
        default=0.96,
        description=(
            "Emissivity of the surface the sensor looks at, above 0.1 up to 1.0. Default 0.96"
            " (concrete, snow, ice). Too low reads the surface warmer than it is."
        ),
    )


class GroundProbeConfig(_Section):
    """One DS18B20 of the buried string."""

    w1_id: Annotated[str, Field(pattern=r"^28-[0-9a-f]{12}$")] = Field(
        description=(
            "Required. The probe's 1-Wire id as listed in /sys/bus/w1/devices (28- and 12 hex"
            " digits). A probe not found reads as a sensor fault."
        )
    )
    depth_mm: Annotated[int, Field(ge=0, le=3000)] = Field(
        description=(
            "Required. How deep the probe is buried, in millimetres, 0 to 3000, measured at"
            " installation; the server's frost and pour rules read the temperature at depth."
        )
    )


class Ds18b20Sensor(_Sensor):
    """The buried DS18B20 string read through the kernel's w1_therm."""

    kind: Literal["ds18b20"] = Field(description='The driver: "ds18b20".')
    probes: Annotated[list[GroundProbeConfig], Field(min_length=1, max_length=16)] = Field(
        description="Required. The buried probes, 1 to 16, each with its id and depth."
    )
    devices_dir: Path = Field(
        default=Path("/sys/bus/w1/devices"),
        description=(
            "Where the kernel lists 1-Wire devices. Default /sys/bus/w1/devices; change only"
            " for a test bench."
        ),
    )

    @model_validator(mode="after")
    def _distinct(self) -> Ds18b20Sensor:
        ids = [p.w1_id for p in self.probes]
        if len(set(ids)) != len(ids):
            raise ValueError("a probe id is listed twice")
        return self


class UltrasonicSensor(_Sensor):
    """MaxBotix HRXL ranger over the snow board."""

    kind: Literal["ultrasonic"] = Field(description='The driver: "ultrasonic".')
    port: str = Field(
        default="/dev/serial0",
        description=(
            "Serial device the ranger is wired to (9600 baud, fixed). Default /dev/serial0;"
            " the wrong port gives no frames, reported as no data."
        ),
    )
    ground_distance_mm: Annotated[float, Field(gt=300, le=9999)] = Field(
        description=(
            "Required. Millimetres from the ranger's face to the bare snow board, taped at"
            " installation, above 300 up to 9999. Snow depth is this minus the measured range,"
            " so an error here is an error in every depth (recalibrate re-zeroes it)."
        )
    )
    max_mm: Annotated[int, Field(ge=1000, le=9999)] = Field(
        default=5000,
        description=(
            "The range the model reports when it sees no target, 1000 to 9999: 5000 for 5 m"
            " HRXL models, 9999 for 10 m models. Default 5000. Wrong, and a no-target reading"
            " passes as a depth or real ranges are discarded."
        ),
    )
    compensates_internally: bool = Field(
        default=False,
        description=(
            "true if the ordered model corrects its own range for air temperature (see its"
            " datasheet). Default false: the pole corrects with the air sensor and, with no"
            " air temperature, marks depths uncorrected. Wrong, and depths are off by about"
            " 2 % for every 10 degrees C away from 0."
        ),
    )


class LaserSensor(_Sensor):
    """Laser snow-depth sensor over RS-485 (Modbus RTU) or SDI-12."""

    kind: Literal["laser"] = Field(description='The driver: "laser".')
    port: str = Field(
        description="Required. Serial device of the RS-485 or SDI-12 adapter, e.g. /dev/ttyUSB0."
    )
    baudrate: Annotated[int, Field(ge=1200, le=115_200)] = Field(
        default=9600,
        description="Serial speed, 1200 to 115200, as set in the sensor. Default 9600.",
    )
    protocol: Literal["modbus", "sdi12"] = Field(
        default="modbus",
        description='How the sensor is asked: "modbus" (Modbus RTU) or "sdi12". Default modbus.',
    )
    modbus_slave: Annotated[int, Field(ge=1, le=247)] = Field(
        default=1,
        description="The sensor's Modbus address, 1 to 247 (modbus only). Default 1.",
    )
    sdi12_address: Annotated[str, Field(pattern=r"^[0-9A-Za-z]$")] = Field(
        default="0",
        description="The sensor's SDI-12 address, one letter or digit (sdi12 only). Default 0.",
    )
    modbus_register: Annotated[int, Field(ge=0, le=65535)] = Field(
        default=0,
        description=(
            "The input register holding the snow depth, 0 to 65535 (modbus only; see the"
            " sensor's manual). Default 0."
        ),
    )
    scale_to_mm: Annotated[float, Field(gt=0)] = Field(
        default=1.0,
        description=(
            "Multiplier from the sensor's unit to millimetres, above 0: 1 for mm, 10 for cm."
            " Default 1. Wrong, and every depth is off by that factor."
        ),
    )


class TippingBucketSensor(_Sensor):
    """Heated tipping-bucket gauge counted by the kernel's interrupt-cnt."""

    kind: Literal["tipping_bucket"] = Field(description='The driver: "tipping_bucket".')
    count_path: Path = Field(
        default=Path("/sys/bus/counter/devices/counter0/count0/count"),
        description=(
            "The kernel counter file the bucket's tips are counted in (interrupt-cnt overlay)."
            " Default counter0; a missing file reads as a sensor fault."
        ),
    )
    mm_per_tip: Annotated[float, Field(gt=0, le=5)] = Field(
        default=0.2,
        description=(
            "Millimetres of water per tip, above 0 up to 5, measured at installation (mm of"
            " water poured / tips counted). Default 0.2. Wrong, and precipitation is off by"
            " that ratio."
        ),
    )


class SimulatedSensor(_Sensor):
    """A stand-in for hardware: a smooth daily cycle around ``base``, no I/O.

    ``fault_every`` > 0 makes every n-th sample come back flagged (a stuck or
    out-of-range value), to exercise the quality path without hardware.
    """

    kind: Literal["simulated"] = Field(
        description='"simulated": no hardware, for a laptop or a test bench, never on a street.'
    )
    quantity: SimQuantity = Field(
        description=(
            "Required. What it pretends to measure: snow_depth_mm, precip_mm, air_temp_c,"
            " surface_temp_c, relative_humidity_pct or ground_temp_c."
        )
    )
    base: float = Field(
        default=0.0, description="The middle of the daily cycle, in the quantity's unit. Default 0."
    )
    amplitude: Annotated[float, Field(ge=0)] = Field(
        default=1.0,
        description="How far the daily cycle swings either side of base, 0 or more. Default 1.",
    )
    probe_depth_mm: Annotated[int, Field(ge=0, le=3000)] | None = Field(
        default=None,
        description=(
            "Depth in millimetres, 0 to 3000; required for ground_temp_c and refused for any"
            " other quantity."
        ),
    )
    fault_every: Annotated[int, Field(ge=0)] = Field(
        default=0,
        description=(
            "Flag every n-th sample as out of range, to exercise fault handling. Default 0 (never)."
        ),
    )

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

    id: SlugStr = Field(
        description=(
            "Required. The frontage's id as registered on the server (lower-case letters,"
            " digits, dashes); the server files the camera's measurements under it."
        )
    )
    length_mm: Annotated[float, Field(gt=0, le=200_000)] = Field(
        description=(
            "Required. The frontage's length along the walk in millimetres, above 0 up to"
            " 200000, from the parcel record or taped."
        )
    )
    walk_width_mm: Annotated[float, Field(gt=0, le=10_000)] = Field(
        description=(
            "Required. The walk's width in millimetres, above 0 up to 10000, taped; the cleared"
            " width the camera reports is measured against it."
        )
    )
    image_points: Annotated[list[Point], Field(min_length=4, max_length=64)] = Field(
        description=(
            "Required. 4 to 64 [x, y] pixel positions of marked points in the camera's image,"
            " from calibration; five or more, as four fit exactly and hide an error."
        )
    )
    ground_points_mm: Annotated[list[Point], Field(min_length=4, max_length=64)] = Field(
        description=(
            "Required. The same points on the ground in millimetres, one per image point in"
            " the same order: x along the frontage from 0, y across the walk from its street"
            " edge. A mismatch skews every width."
        )
    )

    @model_validator(mode="after")
    def _paired(self) -> FrontageConfig:
        if len(self.image_points) != len(self.ground_points_mm):
            raise ValueError("image_points and ground_points_mm must pair up one to one")
        return self


class CameraConfig(_Section):
    """The camera and the frontages it measures."""

    source: str = Field(
        description=(
            'Required. The camera: a USB camera\'s index ("0"), an RTSP URL, or an image file'
            " (test bench). A source that does not answer is retried and reported in health."
        )
    )
    interval_s: Interval = Field(
        default=300.0,
        description=(
            "Seconds between measurements of the frontages, above 0 up to 86400. Default 300."
        ),
    )
    min_evidence_interval_s: Annotated[float, Field(ge=0, le=86_400)] = Field(
        default=60.0,
        description=(
            "Seconds, 0 to 86400: a photo is sent when the view changes, but not more often than"
            " this. Default 60. At most max_evidence_interval_s."
        ),
    )
    max_evidence_interval_s: Annotated[float, Field(gt=0, le=86_400)] = Field(
        default=3600.0,
        description=(
            "Seconds, above 0 up to 86400: a photo is sent at least this often even with no"
            " change. Default 3600."
        ),
    )
    jpeg_quality: Annotated[int, Field(ge=30, le=95)] = Field(
        default=85,
        description=(
            "JPEG quality of the photos sent as evidence, 30 to 95. Default 85; lower sends"
            " smaller files over a slow link at the cost of detail."
        ),
    )
    # May be empty: commissioning sends the views from the dashboard (set_calibration).
    frontages: list[FrontageConfig] = Field(
        default_factory=list,
        description=(
            "The frontages this camera measures. Default none: commissioning from the dashboard"
            " sends them, and those sent replace these."
        ),
    )

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

    path: Path | None = Field(
        default=None,
        description=(
            "Path of the buffer's SQLite file. Default <state_dir>/buffer.sqlite3. It must be"
            " on storage that survives a reboot, or readings not yet stored on the server are lost."
        ),
    )
    max_rows: Annotated[int, Field(ge=1000, le=100_000_000)] = Field(
        default=1_000_000,
        description=(
            "The most readings the buffer holds while the server is out of reach, 1000 to"
            " 100000000. Default 1000000: about ten weeks of the example pole (nine sensor"
            " readings a minute, five of them the ground probes, plus the camera's). Beyond it"
            " the oldest are dropped, counted, and shown as lost on the server."
        ),
    )


class EdgeSettings(FileThenEnvSettings):
    """The whole configuration of one pole device."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", frozen=True
    )

    device: SlugStr = Field(
        description=(
            "Required. This pole's id (lower-case letters, digits, dashes), as registered on"
            " the server; it is also the broker login. The server refuses readings from an id"
            " it has not registered (kept aside as refused messages, not recorded)."
        )
    )
    site: SlugStr = Field(
        default="clyman",
        description=(
            "The village's id in message topics; must equal the server's site. Default clyman."
            " A different one and the server hears nothing from this pole."
        ),
    )
    state_dir: Path = Field(
        default=Path("/var/lib/sidewalk-edge"),
        description=(
            "Directory the pole keeps its buffer and calibrations in (systemd StateDirectory)."
            " Default /var/lib/sidewalk-edge; it must be writable and survive a reboot."
        ),
    )
    health_interval_s: Interval = Field(
        default=60.0,
        description=(
            "Seconds between health reports (faults, buffer size, clock offset), above 0 up to"
            " 86400. Default 60."
        ),
    )
    mqtt: EdgeMqttConfig = Field(description="Required. The [mqtt] table: how to reach the broker.")
    buffer: BufferConfig = Field(
        default=BufferConfig(),
        description="The [buffer] table: the disk store of readings not yet on the server.",
    )
    sensors: list[SensorConfig] = Field(
        default_factory=list,
        description=(
            "The [[sensors]] tables, one per sensor; kind picks the driver. Default none, but a"
            " pole needs sensors or a camera."
        ),
    )
    camera: CameraConfig | None = Field(
        default=None, description="The [camera] table. Default: no camera."
    )

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

    mqtt_password: SecretStr | None = Field(
        default=None,
        description=(
            "From SIDEWALK_EDGE_MQTT_PASSWORD only: the pole's broker password (mosquitto_passwd)."
            " Default none; the broker refuses a pole whose password is wrong or missing."
        ),
    )
    tls_keyfile: Path | None = Field(
        default=None,
        description=(
            "From SIDEWALK_EDGE_TLS_KEYFILE only: path of the client certificate's key, required"
            " when mqtt.cert_file is set."
        ),
    )

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
        problems = "\n  ".join(_problem(err, data) for err in exc.errors())
        raise EdgeConfigError(f"{source}: invalid configuration\n  {problems}") from None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's type holds (through ``list``, ``| None``, ``Annotated``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _field_at(loc: tuple[int | str, ...]) -> FieldInfo | None:
    """The field an error's location points at, or None (an unknown key, a whole table)."""
    models: list[type[BaseModel]] = [EdgeSettings]
    info: FieldInfo | None = None
    for part in loc:
        if isinstance(part, int):
            continue
        model = next((m for m in models if part in m.model_fields), None)
        if model is None:
            # A sensor's kind, as pydantic names the member of the union it tried.
            tagged = [
                m
                for m in models
                if "kind" in m.model_fields
                and get_args(m.model_fields["kind"].annotation) == (part,)
            ]
            if tagged:
                models, info = tagged, None
                continue
            return None
        info = model.model_fields[part]
        models = _models_in(info.annotation)
    return info


def _ordinal(index: int) -> str:
    n = index + 1
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _table_words(loc: tuple[int | str, ...], data: Mapping[str, Any]) -> str:
    """Which ``[[...]]`` table an error is in, by its place and id, for a list entry."""
    for name, rest in (("sensors", loc[1:]), ("camera.frontages", loc[2:])):
        head = tuple(name.split("."))
        if loc[: len(head)] != head or not rest or not isinstance(rest[0], int):
            continue
        entries: Any = data
        for key in head:
            entries = entries.get(key, {}) if isinstance(entries, Mapping) else {}
        entry = entries[rest[0]] if isinstance(entries, list) and rest[0] < len(entries) else {}
        ident = entry.get("id") if isinstance(entry, Mapping) else None
        named = f', id "{ident}"' if isinstance(ident, str) else ""
        return f" (the {_ordinal(rest[0])} [[{name}]] table{named})"
    return ""


def _problem(err: Any, data: Mapping[str, Any]) -> str:
    """One error: the dotted field, the table it is in, what is wrong, what the field is."""
    loc = tuple(err["loc"])
    where = ".".join(str(p) for p in loc) or "(top level)"
    line = f"{where}{_table_words(loc, data)}: {err['msg']}"
    if err["type"] == "extra_forbidden":
        return f"{line} (not a setting here: check the spelling and the table it is in)"
    # A whole table (``sensors.0``: an unknown kind) is named by the words above.
    info = _field_at(loc) if loc and isinstance(loc[-1], str) else None
    if info is not None and info.description:
        return f"{line}\n    {loc[-1]}: {info.description}"
    return line


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
