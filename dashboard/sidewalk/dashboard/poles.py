"""The dashboard's line to the poles: commands out, health reports in.

``PoleLink`` holds two MQTT sessions to the site's broker: the edge's
``CommandClient`` (a request with a fresh transaction id, the reply that
carries it back) and the ingest ``HealthListener`` that records each pole's
retained health report in the registry (last heard, the calibration it runs).
It connects in the background, so the dashboard serves while the broker is
away; a command sent meanwhile is answered "not connected", in words.

``calibration_command`` builds the ``set_calibration`` argument from the
registry's cameras of one pole: the JSON the pole checks
(``sidewalk.edge.camera.installed``) and hashes exactly as the registry did.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from sidewalk.core.contract import CommandArg
from sidewalk.core.mqtt import MqttError, MqttSettings
from sidewalk.edge.commands import CommandClient, CommandTimeout
from sidewalk.ingest.health import HealthListener
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.cases.records import CameraRecord

log = logging.getLogger(__name__)

CALIBRATION_COMMAND = "set_calibration"

Outcome = Literal["ok", "error", "no_answer", "not_connected"]


@dataclass(frozen=True, slots=True)
class SentCommand:
    """What became of one command: the pole's answer, said for people."""

    outcome: Outcome
    transaction: str | None
    message: str
    data: dict[str, object]


def calibration_command(cameras: Sequence[CameraRecord]) -> str:
    """The ``cameras`` argument of ``set_calibration`` for these registry cameras."""
    return json.dumps(
        {
            "frontages": {
                c.frontage_id: {"region": c.region, "homography": c.homography}
                for c in sorted(cameras, key=lambda c: c.frontage_id)
            }
        },
        separators=(",", ":"),
    )


class PoleLink:
    """Commands to and health from the poles of one site (see module doc)."""

    def __init__(
        self,
        mqtt: MqttSettings,
        site: str,
        cases: CaseStore,
        *,
        timeout_s: float = 10.0,
        retry_s: float = 5.0,
    ) -> None:
        self.site = site
        self.timeout_s = timeout_s
        self._retry_s = retry_s
        base = mqtt.client_id
        self._commands = CommandClient(
            replace(mqtt, client_id=f"{base}-cmd", clean_start=True), site
        )
        self._health = HealthListener(
            replace(mqtt, client_id=f"{base}-health", clean_start=True),
            site,
            cases.registry,
        )
        self._ready = threading.Event()
        self._commands_up = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def connected(self) -> bool:
        """True once both sessions are up (each reconnects by itself afterwards)."""
        return self._ready.is_set()

    def start(self) -> None:
        """Connect in the background, retrying until the broker answers or ``close()``."""
        self._thread = threading.Thread(target=self._connect, name="pole-link", daemon=True)
        self._thread.start()

    def wait_connected(self, timeout_s: float) -> bool:
        """For tests and start-up: wait until connected."""
        return self._ready.wait(timeout_s)

    def _connect(self) -> None:
        while not self._stop.is_set():
            try:
                if not self._commands_up:
                    self._commands.connect()
                    self._commands_up = True
                self._health.connect()
                self._ready.set()
                return
            except MqttError as exc:
                log.warning("poles' broker not reachable (%s); retrying", exc)
                self._stop.wait(self._retry_s)

    def close(self) -> None:
        """Stop trying and disconnect."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._commands_up:
            self._commands.close()
        if self._ready.is_set():
            self._health.close()

    def send(self, device: str, name: str, args: dict[str, CommandArg]) -> SentCommand:
        """Send one command and wait for its reply (never raises for the pole's sake)."""
        if not self._ready.is_set():
            return SentCommand(
                "not_connected", None,
                "The dashboard is not connected to the poles' message broker; nothing was sent.",
                {},
            )  # fmt: skip
        try:
            result = self._commands.call(device, name, args, timeout_s=self.timeout_s)
        except CommandTimeout as exc:
            return SentCommand(
                "no_answer", exc.transaction,
                f"No answer from the pole within {self.timeout_s:g} seconds. It may be off or"
                " out of reach; send again once it is heard from.",
                {},
            )  # fmt: skip
        except MqttError as exc:
            return SentCommand("not_connected", None, f"Not sent: {exc}.", {})
        reply = result.reply
        if reply.status == "ok":
            return SentCommand("ok", reply.transaction, "The pole took it.", dict(reply.data))
        return SentCommand(
            "error", reply.transaction, f"The pole refused it: {reply.error}.", dict(reply.data)
        )
