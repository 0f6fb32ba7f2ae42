"""Sorts each received message into what ingest does with it."""

from __future__ import annotations

from dataclasses import dataclass

from sidewalk.core.contract import (
    JPEG_STREAM,
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
class Evidence:
    """The raw bytes of an evidence JPEG (``…/<device>/jpeg``), kept by their hash."""

    device: str
    body: bytes


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message that broke the contract; it goes to dead letters."""

    dead_letter: DeadLetter


Verdict = Accepted | Availability | Evidence | Ignored | Rejected


def classify(msg: MqttMessage, received_at_ms: int) -> Verdict:
    """Validate one message against the contract and say where it goes."""
    levels = msg.topic.split("/")
    if len(levels) == 5 and levels[4] == "stored":
        return Ignored(msg.topic)
    if len(levels) == 5 and levels[4] == JPEG_STREAM and levels[:2] == ["sidewalk", "v1"]:
        if msg.payload[:3] == b"\xff\xd8\xff":
            return Evidence(levels[3], msg.payload)
        detail = "the jpeg stream carries JPEG bytes (they start FF D8 FF)"
        return Rejected(
            DeadLetter(received_at_ms, msg.topic, levels[3], msg.payload, "not_jpeg", detail)
        )
    try:
        payload = parse_payload(msg.topic, msg.payload)
    except ContractError as exc:
        reason, detail = exc.reason, exc.detail
    except RecursionError:
        # json.loads gives up on deeply nested input; parse_payload lets it through.
        reason, detail = "malformed_json", "nested too deeply"
    except Exception as exc:
        # A validator bug must not stop the stream: keep the message, say why.
        reason, detail = "internal_error", f"{type(exc).__name__}: {exc}"
    else:
        # parse_payload checked the topic's shape, so levels[2] is the site slug.
        if isinstance(payload, Status):
            return Availability(StatusUpdate(levels[2], payload))
        if isinstance(payload, WeatherReading | SnowMeasurement | FrameRef):
            return Accepted(levels[2], payload)
        reason, detail = "internal_error", f"parse_payload gave {type(payload).__name__}"
    device = levels[3] if reason != "bad_topic" and len(levels) == 5 else None
    return Rejected(DeadLetter(received_at_ms, msg.topic, device, msg.payload, reason, detail))
