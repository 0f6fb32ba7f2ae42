"""Remote commands over MQTT request/response, both ends.

The server (or a person at ``sidewalk edge command``) publishes a
``CommandRequest`` on ``…/<device>/cmd/<name>`` with a fresh ``transaction``;
the device answers on ``…/cmd/<name>/reply`` with ``{status, data, error,
transaction}`` (zigbee2mqtt's shape) plus its clock at receipt and reply. A
request that gets no reply in time raises ``CommandTimeout``; the device never
queues stale requests (it subscribes to its commands at QoS 0, which the broker
keeps for no offline session), so a timed-out command does not run hours later.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sidewalk.core.contract import (
    CommandArg,
    CommandReply,
    CommandRequest,
    ContractError,
    command_topic,
    parse_json_model,
)
from sidewalk.core.mqtt import MqttClient, MqttError, MqttMessage, MqttSettings

COMMAND_NAMES = ("capture_now", "recalibrate", "set_calibration", "set_interval")


class CommandFailed(Exception):
    """Raised by a command handler: the reply carries ``status: error`` and this text."""


class CommandTimeout(MqttError):
    """No reply with our transaction id came back in time."""

    def __init__(self, message: str, transaction: str | None = None) -> None:
        super().__init__(message)
        self.transaction = transaction


Handler = Callable[[Mapping[str, CommandArg]], dict[str, Any]]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def answer(
    device: str,
    name: str,
    request: CommandRequest,
    handlers: Mapping[str, Handler],
    *,
    received_ms: int,
    now_ms: Callable[[], int],
) -> CommandReply:
    """Run ``handlers[name]`` on the request and build the reply (never raises)."""
    handler = handlers.get(name)
    data: dict[str, Any] = {}
    error: str | None = None
    if handler is None:
        error = f"unknown command {name!r}; known: {', '.join(sorted(handlers))}"
    else:
        try:
            data = handler(request.args)
        except CommandFailed as exc:
            error = str(exc)
    return CommandReply(
        device=device,
        transaction=request.transaction,
        status="error" if error is not None else "ok",
        data=data,
        error=error,
        received_ts=received_ms,
        ts=now_ms(),
    )


@dataclass(frozen=True, slots=True)
class CommandResult:
    """A reply and what its four timestamps say about the device's clock.

    ``clock_offset_ms`` is the device clock minus ours (NTP's formula);
    ``round_trip_ms`` excludes the time the device spent on the command.
    """

    reply: CommandReply
    round_trip_ms: int
    clock_offset_ms: float


class CommandClient:
    """Sends commands to the devices of one site and waits for their replies."""

    def __init__(self, mqtt: MqttSettings, site: str) -> None:
        self.site = site
        self._client = MqttClient(mqtt, on_message=self._on_message)
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[threading.Event, list[tuple[CommandReply, int]]]] = {}

    def __enter__(self) -> CommandClient:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> None:
        """Connect and subscribe to every reply of the site (raises on refusal)."""
        self._client.connect()
        self._client.subscribe(f"sidewalk/v1/{self.site}/+/cmd/+/reply", 1)

    def close(self) -> None:
        """Disconnect."""
        self._client.disconnect()

    def _on_message(self, msg: MqttMessage) -> None:
        try:
            reply = parse_json_model(CommandReply, msg.payload)
        except ContractError:
            return
        with self._lock:
            waiter = self._waiting.get(reply.transaction)
        if waiter is not None:
            waiter[1].append((reply, _now_ms()))
            waiter[0].set()

    def call(
        self,
        device: str,
        name: str,
        args: Mapping[str, CommandArg] | None = None,
        *,
        timeout_s: float = 10.0,
    ) -> CommandResult:
        """Send one command and wait for its reply; raises ``CommandTimeout``."""
        transaction = uuid.uuid4().hex
        done = threading.Event()
        replies: list[tuple[CommandReply, int]] = []
        with self._lock:
            self._waiting[transaction] = (done, replies)
        try:
            sent = _now_ms()
            request = CommandRequest(
                device=device, transaction=transaction, ts=sent, args=dict(args or {})
            )
            self._client.publish(command_topic(self.site, device, name), request.to_json(), 1)
            if not done.wait(timeout_s):
                raise CommandTimeout(
                    f"{device} did not answer {name} in {timeout_s:.1f}s", transaction
                )
        finally:
            with self._lock:
                del self._waiting[transaction]
        reply, received = replies[0]
        offset = ((reply.received_ts - sent) + (reply.ts - received)) / 2
        rtt = (received - sent) - (reply.ts - reply.received_ts)
        return CommandResult(reply, rtt, offset)
