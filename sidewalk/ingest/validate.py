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
    levels = msg.topic.split("/")
    if len(levels) == 5 and levels[4] == "stored":
        return Ignored(msg.topic)
    try:
        payload = parse_payload(msg.topic, msg.payload)
    except ContractError as exc:
        device = levels[3] if exc.reason != "bad_topic" and len(levels) == 5 else None
        return Rejected(
            DeadLetter(received_at_ms, msg.topic, device, msg.payload, exc.reason, exc.detail)
        )
    # parse_payload checked the topic's shape, so levels[2] is the site slug.
    if isinstance(payload, Status):
        return Availability(StatusUpdate(levels[2], payload))
    if isinstance(payload, WeatherReading | SnowMeasurement | FrameRef):
        return Accepted(levels[2], payload)
    raise AssertionError(f"parse_payload returned {type(payload).__name__} for {msg.topic}")
