"""Configuration: a TOML file plus environment overrides, strict about unknown keys.

Precedence: environment (``SIDEWALK_<SECTION>__<FIELD>``) over the TOML file
over defaults. Every default is the embedded one: SQLite for both stores and,
with no ``mqtt.url``, an embedded broker for the demo.

Secrets (broker password, InfluxDB token, database password) are read only
from the environment; a secret found in the file is refused with the variable
to use instead, so a config file can be committed or mailed safely.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from sidewalk.core.contract import SLUG, TimePolicy
from sidewalk.core.mqtt import MqttSettings, TlsSettings

ENV_PREFIX = "SIDEWALK_"

# secret name in the file -> the environment variable that must carry it instead
SECRET_KEYS = {
    ("mqtt", "password"): "SIDEWALK_MQTT_PASSWORD",
    ("timeseries", "influx_token"): "SIDEWALK_INFLUX_TOKEN",
    ("observability", "metrics_token"): "SIDEWALK_METRICS_TOKEN",
    ("cases", "password"): "SIDEWALK_DB_PASSWORD",
    ("delivery", "smtp_password"): "SIDEWALK_SMTP_PASSWORD",
}


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the field."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MqttConfig(_Section):
    url: str | None = Field(
        default=None,
        description="mqtt://host:port or mqtts://host:port; unset = embedded broker (demo only)",
    )
    client_id: Annotated[str, Field(pattern=SLUG, description="MQTT client id")] = "sidewalk-ingest"
    username: str | None = Field(default=None, description="MQTT login (password in secrets)")
    ca_file: Path | None = Field(default=None, description="CA certificate for mqtts://")
    ack_batch: Annotated[
        int, Field(ge=1, le=65_535, description="messages stored per commit before acknowledging")
    ] = 500
    shared_group: Annotated[str, Field(pattern=SLUG)] | None = Field(
        default=None, description="consume through $share/<group>/… to spread ingest over workers"
    )

    @field_validator("url")
    @classmethod
    def _scheme(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme not in {"mqtt", "mqtts"} or not parts.hostname:
            raise ValueError("must look like mqtt://host:1883 or mqtts://host:8883")
        if parts.password:
            raise ValueError("put the password in SIDEWALK_MQTT_PASSWORD, not in the URL")
        _ = parts.port  # ValueError for a port out of range or not a number, here and not later
        return value

    @property
    def host(self) -> str:
        return urlsplit(self.url or "mqtt://127.0.0.1").hostname or "127.0.0.1"

    @property
    def port(self) -> int:
        parts = urlsplit(self.url or "mqtt://127.0.0.1")
        return parts.port or (8883 if parts.scheme == "mqtts" else 1883)

    @property
    def tls(self) -> bool:
        return (self.url or "").startswith("mqtts://")


class TimeSeriesConfig(_Section):
    sqlite_path: Path = Field(
        default=Path("var/timeseries.sqlite3"), description="the embedded time-series file"
    )
    influx_url: str | None = Field(default=None, description="InfluxDB v2 write API base URL")
    influx_org: str = Field(default="clyman", description="InfluxDB organization")
    influx_bucket: str = Field(default="sidewalk", description="InfluxDB bucket readings go to")

    @field_validator("influx_url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        if value is not None and urlsplit(value).password:
            raise ValueError("put the token in SIDEWALK_INFLUX_TOKEN, not in the URL")
        return value


class CasesConfig(_Section):
    database_url: str = Field(
        default="sqlite:///var/cases.sqlite3",
        description="SQLAlchemy URL; postgresql+psycopg://user@host/db for PostgreSQL",
    )

    @field_validator("database_url")
    @classmethod
    def _no_password(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.password:
            raise ValueError("put the password in SIDEWALK_DB_PASSWORD, not in the URL")
        _ = parts.port  # ValueError for a port out of range or not a number
        return value


class AnalyticsConfig(_Section):
    client_id: Annotated[str, Field(pattern=SLUG, description="MQTT client id")] = (
        "sidewalk-analytics"
    )
    tick_seconds: Annotated[
        float, Field(gt=0, le=3600, description="seconds between ticks advancing the clocks")
    ] = 30.0
    # A Village decision (docs/clocks.md): how long a deadline waits
    # for its pole's readings up to it, counted while analytics holds everything the
    # server has of the pole, before it goes to a person as "camera evidence missing".
    evidence_wait_minutes: Annotated[
        float, Field(ge=10, le=7 * 24 * 60, description="wait for a pole's readings to a deadline")
    ] = 120.0


class TimeConfig(_Section):
    """When a reading's ``ts`` is implausible (``TimePolicy``); ingest and analytics alike."""

    max_ahead_s: Annotated[float, Field(ge=0)] | None = Field(
        default=600.0, description="a ts this far past its receipt is quarantined; unset: no check"
    )
    max_step_back_s: Annotated[float, Field(ge=0)] | None = Field(
        default=600.0,
        description="a newer seq this far older than the pole's last reading is quarantined",
    )

    def policy(self) -> TimePolicy:
        def ms(seconds: float | None) -> int | None:
            return None if seconds is None else round(seconds * 1000)

        return TimePolicy(ms(self.max_ahead_s), ms(self.max_step_back_s))


class ObservabilityConfig(_Section):
    host: str = Field(
        default="127.0.0.1", description="address of /metrics, /healthz, /readyz (loopback)"
    )
    ingest_port: Annotated[int, Field(ge=1, le=65_535)] | None = Field(
        default=None, description="serve ingest's endpoints here (documented: 9464); unset = off"
    )
    analytics_port: Annotated[int, Field(ge=1, le=65_535)] | None = Field(
        default=None, description="serve analytics' endpoints here (documented: 9465)"
    )
    log_format: Literal["text", "json"] = Field(
        default="text", description="json = one JSON object per line, for a log collector"
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="least severe level logged"
    )


class IngestConfig(_Section):
    """What ingest takes and when it refuses (docs/storage.md, "Quotas and retention")."""

    max_message_bytes: Annotated[int, Field(ge=1024, le=1_048_576)] = Field(
        default=16 * 1024,
        description="largest weather/snow/frame/status payload; larger is a too_large dead letter",
    )
    max_jpeg_bytes: Annotated[int, Field(ge=1024, le=20_000_000)] = Field(
        default=4 * 1024 * 1024,
        description="largest evidence JPEG (…/jpeg); keep mosquitto's max_packet_size above it",
    )
    evidence_quota_bytes_per_day: Annotated[int, Field(ge=0)] | None = Field(
        default=200 * 1024 * 1024,
        description="evidence bytes one device may add in 24 h (evidence_quota); unset: none",
    )
    min_free_bytes: Annotated[int, Field(ge=0)] = Field(
        default=1024**3, description="below this many free bytes ingest takes no new messages"
    )
    min_free_percent: Annotated[float, Field(ge=0, lt=100)] = Field(
        default=5.0, description="... or below this share of the disk, whichever is larger"
    )
    dead_letter_prefix_bytes: Annotated[int, Field(ge=0, le=1_048_576)] = Field(
        default=4096, description="bytes of a dead letter's payload kept (plus length and sha256)"
    )
    known_devices_only: bool = Field(
        default=True,
        description="store readings only from poles in the registry (others: unknown_device)",
    )


class RetentionConfig(_Section):
    """How long the time-series and evidence stores keep data; unset = forever."""

    readings_days: Annotated[float, Field(gt=0)] | None = Field(
        default=730, description="readings older than this are pruned; unset = kept"
    )
    dead_letters_days: Annotated[float, Field(gt=0)] | None = Field(
        default=90, description="dead letters older than this are pruned; unset = kept"
    )
    evidence_days: Annotated[float, Field(gt=0)] | None = Field(
        default=90, description="uncited evidence JPEGs older than this are pruned; unset = kept"
    )
    records_retention_days: Annotated[float, Field(gt=0)] = Field(
        default=7 * 365,
        description="the Village's records-retention period: evidence a notice cites is kept",
    )
    unreferenced_evidence_grace_s: Annotated[float, Field(ge=0)] = Field(
        default=3600, description="a JPEG no frame message names is deleted after this"
    )
    prune_interval_s: Annotated[float, Field(gt=0)] | None = Field(
        default=3600, description="how often ingest prunes; unset: never (prune by hand)"
    )


class DashboardConfig(_Section):
    """The dashboard behind a reverse proxy, and its login throttle (docs/security.md)."""

    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="addresses/CIDRs of reverse proxies whose X-Forwarded-For/-Proto count",
    )
    tls_certfile: Path | None = Field(
        default=None,
        description="serve HTTPS with this certificate (key: SIDEWALK_DASHBOARD_TLS_KEYFILE)",
    )
    host_names: list[str] = Field(
        default_factory=list,
        description="names the dashboard is reached by (besides IP addresses and localhost);"
        " a request for any other Host is refused",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        import ipaddress

        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an IP address or network") from None
        return value


class VillageConfig(_Section):
    """The letterhead and the issuing officer every letter to an owner carries.

    Required before the system mails anything: a notice is a letter the
    Village signs, so it names the officer, the office and how to reach it.
    The village's name comes from the ordinance profile.
    """

    office: str = Field(min_length=2, max_length=80, description='e.g. "Village Hall"')
    address_lines: list[Annotated[str, Field(min_length=2, max_length=80)]] = Field(
        min_length=1, max_length=3, description="the office's street and town lines"
    )
    telephone: str = Field(description='the number an owner calls, e.g. "(920) 555-0142"')
    email: str = Field(description="the office's e-mail address for questions")
    office_hours: str = Field(min_length=3, max_length=120, description='"Mon-Fri 8 AM-4 PM"')
    officer_name: str = Field(min_length=2, max_length=80, description="who signs the letters")
    officer_title: str = Field(min_length=2, max_length=80, description='e.g. "Clerk-Treasurer"')
    signature_image: Path | None = Field(
        default=None, description="PNG or JPEG of the officer's signature, printed above the name"
    )
    website: str | None = Field(
        default=None, max_length=80, description="the Village's website, if any"
    )

    @field_validator("telephone")
    @classmethod
    def _telephone(cls, value: str) -> str:
        digits = re.sub(r"\D", "", value)
        if not re.fullmatch(r"[0-9()+.\- ]+", value.strip()) or not 7 <= len(digits) <= 15:
            raise ValueError('a telephone number owners can dial, e.g. "(920) 555-0142"')
        return value.strip()

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", value.strip()):
            raise ValueError('an e-mail address, e.g. "clerk@clyman.example"')
        return value.strip()

    @field_validator("signature_image")
    @classmethod
    def _signature(cls, value: Path | None) -> Path | None:
        if value is None:
            return value
        if value.suffix.lower() not in {".png", ".jpg", ".jpeg"}:
            raise ValueError("the signature image must be a .png or .jpg file")
        if not value.is_file():
            raise ValueError(f"no signature image at {value}")
        return value


class CheckConfig(_Section):
    """What ``sidewalk check`` asks of the system before it goes live (docs/going-live.md)."""

    pole_reported_minutes: Annotated[float, Field(gt=0, le=7 * 24 * 60)] = Field(
        default=30.0,
        description="a pole watching a frontage must have reported within this many minutes",
    )


class DeliveryConfig(_Section):
    """How the Village's letters go out: printed for window envelopes and/or e-mailed.

    ``sidewalk check`` refuses to call the system ready until at least one way is
    set up. The SMTP password comes from SIDEWALK_SMTP_PASSWORD only.
    """

    methods: list[Literal["print", "email"]] = Field(
        default_factory=list,
        description="print = batches for window envelopes; email = sent through smtp_host",
    )
    print_dir: Path = Field(
        default=Path("var/print"), description="where print batches (PDF) are written"
    )
    smtp_host: str | None = Field(default=None, description="the mail server notices go through")
    smtp_port: Annotated[int, Field(ge=1, le=65_535, description="the mail server's port")] = 25
    sender: str | None = Field(default=None, description="the From: address of notices")
    smtp_user: str | None = Field(default=None, description="login at the mail server, if any")
    starttls: bool = Field(default=False, description="upgrade the SMTP connection with STARTTLS")


class RegistryConfig(_Section):
    """Bounds on ``sidewalk registry import`` a village may need to move (the others,
    sizes and counts no county file comes near, are constants in registry/county.py)."""

    import_memory_mb: Annotated[int, Field(ge=64, le=1 << 20)] = Field(
        default=4096,
        description="the most memory (MB) the county import may take while it reads and"
        " checks the file; past it the import stops in one line, writing nothing",
    )


class FileThenEnvSettings(BaseSettings):
    """Settings read from a TOML file's table (passed as init arguments), the
    environment winning over it; no dotenv, no secrets directory."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (env_settings, init_settings)


class Settings(FileThenEnvSettings):
    """The whole server/device configuration."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    site: Annotated[str, Field(pattern=SLUG, description="the village's id in topics")] = "clyman"
    data_dir: Path = Field(default=Path("var"), description="where evidence and files are kept")
    profile: Path | None = Field(default=None, description="ordinance profile TOML; unset = Clyman")
    mqtt: MqttConfig = Field(
        default=MqttConfig(), description="the message broker the poles publish to ([mqtt])"
    )
    timeseries: TimeSeriesConfig = Field(
        default=TimeSeriesConfig(),
        description="where the poles' readings are stored, and the optional InfluxDB copy",
    )
    cases: CasesConfig = Field(
        default=CasesConfig(),
        description="the case database: properties, owners, notices, bills (SQLite or PostgreSQL)",
    )
    analytics: AnalyticsConfig = Field(
        default=AnalyticsConfig(),
        description="the service that runs the ordinance's deadlines from the readings",
    )
    time: TimeConfig = Field(
        default=TimeConfig(),
        description="how far a pole's clock may be off before its readings are held back",
    )
    observability: ObservabilityConfig = Field(
        default=ObservabilityConfig(),
        description="health and metrics endpoints for monitoring, and the log's format and level",
    )
    ingest: IngestConfig = Field(
        default=IngestConfig(),
        description="size limits, disk-space floor and which poles the receiving service accepts",
    )
    retention: RetentionConfig = Field(
        default=RetentionConfig(),
        description="how long readings, refused messages and camera pictures are kept",
    )
    dashboard: DashboardConfig = Field(
        default=DashboardConfig(),
        description="the staff web pages: HTTPS, reverse proxy and the names they answer to",
    )
    check: CheckConfig = Field(
        default=CheckConfig(), description="what 'sidewalk check' requires before going live"
    )
    delivery: DeliveryConfig = Field(
        default=DeliveryConfig(),
        description="how letters to owners go out: printed for mailing, e-mailed, or both",
    )
    registry: RegistryConfig = Field(
        default=RegistryConfig(), description="limits on importing the county's parcel file"
    )
    # Unset: letters are signed by the office the code names, with no telephone (see check).
    village: VillageConfig | None = Field(
        default=None,
        description="the letterhead and signing officer on every letter; required before mailing",
    )


class Secrets(BaseModel):
    """Secrets, from the environment only."""

    model_config = ConfigDict(frozen=True)

    mqtt_password: SecretStr | None = Field(
        default=None, description="the broker login's password (SIDEWALK_MQTT_PASSWORD)"
    )
    influx_token: SecretStr | None = Field(
        default=None, description="the InfluxDB API token (SIDEWALK_INFLUX_TOKEN)"
    )
    db_password: SecretStr | None = Field(
        default=None, description="the case database's password (SIDEWALK_DB_PASSWORD)"
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        description="the token a monitoring server sends to read the dashboard's /metrics from"
        " another machine (SIDEWALK_METRICS_TOKEN)",
    )

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Secrets:
        env = os.environ if environ is None else environ

        def get(name: str) -> SecretStr | None:
            value = env.get(name)
            return SecretStr(value) if value else None

        return cls(
            mqtt_password=get("SIDEWALK_MQTT_PASSWORD"),
            influx_token=get("SIDEWALK_INFLUX_TOKEN"),
            db_password=get("SIDEWALK_DB_PASSWORD"),
            metrics_token=get("SIDEWALK_METRICS_TOKEN"),
        )


def _refuse_secrets(data: dict[str, Any], source: str) -> None:
    for (section, key), env_name in SECRET_KEYS.items():
        table = data.get(section)
        if isinstance(table, dict) and key in table:
            raise ConfigError(
                f"{source}: {section}.{key}: secrets are read only from the environment; "
                f"set {env_name}"
            )


def read_toml(path: Path | str, error: type[ValueError]) -> dict[str, Any]:
    """A TOML file as a table, or ``error`` naming the file (and the line, for syntax)."""
    source = str(path)
    try:
        text = Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise error(f"{source}: no such configuration file") from None
    except OSError as exc:
        raise error(f"{source}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{source}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        if "line" not in msg:  # "(at end of document)"
            msg += f" (the document ends at line {max(1, len(text.splitlines()))})"
        raise error(f"{source}: not valid TOML: {msg}") from None
    # pydantic-settings takes _-prefixed keyword arguments as its own options
    # (_env_prefix, _case_sensitive, …): a file must not reach them.
    for key in data:
        if key.startswith("_"):
            raise error(f"{source}: {key}: not a configuration field")
    return data


def validation_problems(exc: ValidationError) -> str:
    """One line per error: the dotted field, then what is wrong with it."""
    lines = [
        f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
        for err in exc.errors()
    ]
    return "\n  ".join(lines)


def load_settings(path: Path | str | None = None) -> Settings:
    """Read the TOML file (if any) and the environment into validated settings."""
    data: dict[str, Any] = {}
    source = "<defaults>"
    if path is not None:
        source = str(path)
        data = read_toml(path, ConfigError)
        _refuse_secrets(data, source)
    try:
        return Settings(**data)
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise ConfigError(f"{source}: invalid configuration\n  {problems}") from None


def mqtt_settings(
    settings: Settings,
    client_id: str,
    secrets: Secrets | None = None,
    protocol: Literal["auto", "5", "3.1.1"] = "auto",
) -> MqttSettings:
    """Connection settings for one client of the configured broker.

    Here, not in the wiring, because server-side tools that a pole's install
    also carries (``sidewalk-edge command``) connect with them.
    """
    secrets = secrets or Secrets.from_env()
    cfg = settings.mqtt
    password = secrets.mqtt_password.get_secret_value() if secrets.mqtt_password else None
    tls = TlsSettings(ca_certs=str(cfg.ca_file) if cfg.ca_file else None) if cfg.tls else None
    return MqttSettings(
        host=cfg.host,
        port=cfg.port,
        client_id=client_id,
        username=cfg.username,
        password=password,
        tls=tls,
        receive_maximum=max(cfg.ack_batch * 2, 20),
        protocol=protocol,
    )
