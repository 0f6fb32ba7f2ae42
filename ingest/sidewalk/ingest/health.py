"""The poles' health reports, into the registry: when each was heard, what calibration it runs.

Each pole publishes a retained ``DeviceHealth`` on ``…/<device>/status/health``
(six levels: the readings' consumer never sees it). ``HealthListener``
subscribes to the site's, so on (re)connect the broker hands it every pole's
last report at once, and records, for a registered pole, ``last_seen`` (never
later than our own clock, and never moved back) and the calibration hash the
pole reports (``record_reported_calibration``), which the dashboard compares
with the registry's (``expected_calibration``). A report from a pole the
registry does not know, or one that breaks the contract, is skipped and logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from sidewalk.core.contract import (
    TOPIC_ROOT,
    TOPIC_VERSION,
    ContractError,
    DeviceHealth,
    parse_json_model,
)
from sidewalk.core.mqtt import MqttClient, MqttMessage, MqttSettings
from sidewalk.storage.cases.errors import NotFoundError
from sidewalk.storage.cases.registry import RegistryRepository

log = logging.getLogger(__name__)


def health_subscription(site: str) -> str:
    """Every pole's retained health report of one site."""
    return f"{TOPIC_ROOT}/{TOPIC_VERSION}/{site}/+/status/health"


def record_health(registry: RegistryRepository, health: DeviceHealth, now: datetime) -> bool:
    """Record one report; False when the pole is not registered."""
    at = min(datetime.fromtimestamp(health.ts / 1000, tz=UTC), now)
    try:
        registry.record_device_seen(health.device, at)
        if health.calibration is not None:
            registry.record_reported_calibration(health.device, health.calibration, at)
    except NotFoundError:
        return False
    return True


class HealthListener:
    """Subscribes to the site's health reports and records them (see module doc)."""

    def __init__(
        self,
        mqtt: MqttSettings,
        site: str,
        registry: RegistryRepository,
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_recorded: Callable[[DeviceHealth], None] | None = None,
    ) -> None:
        self._registry = registry
        self._now = now
        self._on_recorded = on_recorded
        self._topic = health_subscription(site)
        self._client = MqttClient(mqtt, on_message=self._received)
        # While reports fail to record: since when (monotonic) and the error's type.
        self._failing_since: float | None = None
        self._failure = ""

    @property
    def record_problem(self) -> str | None:
        """Why the poles' reports are not being recorded (None: the last one was)."""
        since = self._failing_since
        if since is None:
            return None
        ago = time.monotonic() - since
        return (
            f"recording pole health to the case database failing for {ago:.0f} s "
            f"({self._failure})"
        )

    @property
    def listen_problem(self) -> str | None:
        """Why the poles' reports are not being received (None: its broker session is well)."""
        problem = self._client.problem
        return None if problem is None else f"pole health reports not received: {problem}"

    @property
    def mqtt(self) -> MqttClient:
        """The listener's broker session."""
        return self._client

    def connect(self) -> None:
        """Connect and subscribe (raises ``MqttError``); reconnects by itself afterwards."""
        self._client.connect()
        self._client.subscribe(self._topic, 1)

    def close(self) -> None:
        """Disconnect."""
        self._client.disconnect()

    def _received(self, msg: MqttMessage) -> None:
        if not msg.payload:
            return  # a cleared retained report
        try:
            health = parse_json_model(DeviceHealth, msg.payload)
        except ContractError as exc:
            log.warning("health report on %s not understood: %s", msg.topic, exc)
            return
        if msg.topic.split("/")[3] != health.device:
            log.warning("health report on %s names another pole (%s)", msg.topic, health.device)
            return
        try:
            known = record_health(self._registry, health, self._now())
        except Exception as exc:
            # The database is away: the next report (a minute on) tries again.
            log.exception("health report of %s not recorded", health.device)
            if self._failing_since is None:
                self._failing_since = time.monotonic()
            first = str(exc).splitlines()[0] if str(exc) else ""
            self._failure = f"{type(exc).__name__}: {first}"[:200]  # not the SQL that follows
            return
        self._failing_since = None
        if not known:
            log.info("health report from %s, which is not registered", health.device)
        elif self._on_recorded is not None:
            self._on_recorded(health)
