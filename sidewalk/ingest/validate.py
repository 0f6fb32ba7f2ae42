"""Sorts each received message into what ingest does with it."""

from __future__ import annotations

from dataclasses import dataclass

from sidewalk.core.contract import (
    AnyReading,
    ContractError,
    FrameRef,
    SnowMeasurement,
    Status,
    WeatherReading,
    parse_payload,
    parse_topic,
)
from sidewalk.core.mqtt import MqttMessage
from sidewalk.storage.timeseries import DeadLetter, StatusUpdate


@dataclass(frozen=True, slots=True)
class Accepted:
    """A reading to store, with the site its topic named."""

    site: str
    reading: AnyReading


@dataclass(frozen=True, slots=True)
class Availability:
    """A device's status message, recorded for last-seen and availability."""

    update: StatusUpdate


@dataclass(frozen=True, slots=True)
class Ignored:
    """Ingest's own watermark coming back to it: acknowledged, not stored."""

    topic: str


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message that broke the contract; it goes to dead letters."""

    dead_letter: DeadLetter


Verdict = Accepted | Availability | Ignored | Rejected


def classify(msg: MqttMessage, received_at_ms: int) -> Verdict:
    """Validate one message against the contract and say where it goes."""
    device: str | None = None
    try:
        parts = parse_topic(msg.topic)
        device = parts.device
        if parts.stream == "stored":
            return Ignored(msg.topic)
        payload = parse_payload(msg.topic, msg.payload)
    except ContractError as exc:
        return Rejected(
            DeadLetter(received_at_ms, msg.topic, device, msg.payload, exc.reason, exc.detail)
        )
    if isinstance(payload, Status):
        return Availability(StatusUpdate(parts.site, payload))
    if isinstance(payload, WeatherReading | SnowMeasurement | FrameRef):
        return Accepted(parts.site, payload)
    raise AssertionError(f"parse_payload returned {type(payload).__name__} for {msg.topic}")
