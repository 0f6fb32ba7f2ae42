"""Sorts each received message into what ingest does with it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sidewalk.core.contract import (
    JPEG_STREAM,
    MAX_DETAIL_CHARS,
    READING_STREAMS,
    SLUG,
    AnyReading,
    ContractError,
    FrameRef,
    SnowMeasurement,
    Status,
    WeatherReading,
    fast_reading_validator,
    parse_payload,
    parse_topic,
)
from sidewalk.core.mqtt import MqttMessage
from sidewalk.storage.timeseries import DEAD_LETTER_PREFIX, DeadLetter, StatusUpdate


# Not frozen, unlike the other verdicts: one is made per reading received, and a
# frozen dataclass's __init__ (object.__setattr__ per field) costs 2.5 times as much.
@dataclass(slots=True)
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

_SLUG_RE = re.compile(SLUG)
# The models parse_payload returns for a reading. Checked by exact type: an
# isinstance against a pydantic model goes through its metaclass's ABC check,
# about 1.5 µs a call on this project's machine, twice per message before.
_READING_TYPES = frozenset({WeatherReading, SnowMeasurement, FrameRef})
# FrameRef.bytes_len's bound: a larger body could never be cited by a frame message.
MAX_JPEG_BYTES = 20_000_000


@dataclass(frozen=True, slots=True)
class SizeLimits:
    """The largest payload ingest takes, per stream; larger is a ``too_large`` dead letter.

    A reading, status or watermark is a few hundred bytes (16 KiB leaves room);
    an evidence JPEG is a few hundred KB (4 MiB by default, at most the
    contract's 20,000,000). Checked before anything parses the payload.
    Keep the broker's ``max_packet_size`` (``deploy/mosquitto.conf``) just above
    ``jpeg_bytes`` plus the topic, so the broker refuses larger packets first.
    """

    message_bytes: int = 16 * 1024
    jpeg_bytes: int = 4 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.message_bytes < 1024 or not 1024 <= self.jpeg_bytes <= MAX_JPEG_BYTES:
            raise ValueError(f"message_bytes >= 1024 and 1024 <= jpeg_bytes <= {MAX_JPEG_BYTES}")


DEFAULT_LIMITS = SizeLimits()


def _jpeg_problem(body: bytes) -> tuple[str, str] | None:
    """Why ``body`` is not one whole JPEG (reason, detail), or None if it is."""
    if body[:3] != b"\xff\xd8\xff":
        return "not_jpeg", "the jpeg stream carries JPEG bytes (they start FF D8 FF)"
    if len(body) > MAX_JPEG_BYTES:
        return "out_of_range", f"{len(body)} bytes; a frame is at most {MAX_JPEG_BYTES}"
    if not body.endswith(b"\xff\xd9"):
        # Evidence cited in a notice must open: a cut-off image is not kept as one.
        return "not_jpeg", "truncated JPEG: it does not end with the FF D9 end-of-image marker"
    return None


def _evidence(msg: MqttMessage, device: str, received_at_ms: int) -> Evidence | Rejected:
    problem = _jpeg_problem(msg.payload)
    if problem is None:
        return Evidence(device, msg.payload)
    reason, detail = problem
    return Rejected(DeadLetter(received_at_ms, msg.topic, device, msg.payload, reason, detail))


def _split_topic(topic: str) -> tuple[tuple[str, ...], bool]:
    """The topic's levels, and whether it has our five-level shape with slug ids."""
    known = _TOPICS.get(topic)
    if known is None:
        levels = tuple(topic.split("/"))
        ours = (
            len(levels) == 5
            and levels[:2] == ("sidewalk", "v1")
            and all(_SLUG_RE.fullmatch(level) for level in levels[2:4])
        )
        known = levels, ours
        # One entry per device and stream; bounded against made-up topics.
        if len(_TOPICS) >= _TOPICS_MAX:
            _TOPICS.clear()
        _TOPICS[topic] = known
    return known


_TOPICS: dict[str, tuple[tuple[str, ...], bool]] = {}
_TOPICS_MAX = 65_536


def _too_large(
    msg: MqttMessage,
    levels: tuple[str, ...],
    ours: bool,
    received_at_ms: int,
    limits: SizeLimits,
) -> Rejected | None:
    size = len(msg.payload)
    jpeg = ours and levels[4] == JPEG_STREAM
    limit = limits.jpeg_bytes if jpeg else limits.message_bytes
    if size <= limit:
        return None
    kind = "an evidence JPEG" if jpeg else "a message on this stream"
    device = levels[3] if ours else None
    detail = f"{size} bytes; {kind} is at most {limit}"
    return Rejected(DeadLetter(received_at_ms, msg.topic, device, msg.payload, "too_large", detail))


def _without_body(letter: DeadLetter) -> DeadLetter:
    """The dead letter as the store keeps it: a prefix, the length and the hash."""
    body = letter.payload
    return dataclasses.replace(
        letter,
        payload=body[:DEAD_LETTER_PREFIX],
        payload_len=len(body),
        payload_sha256=hashlib.sha256(body).hexdigest(),
    )


def _retained(msg: MqttMessage, levels: tuple[str, ...], received_at_ms: int) -> Rejected:
    """A reading or image the broker replayed from its retained store, not the pole's delivery."""
    detail = (
        f"the broker replayed this {levels[4]} message as retained (published with the retain"
        " flag), as it does to every new subscriber: a pole's readings are never retained"
    )
    letter = DeadLetter(received_at_ms, msg.topic, levels[3], msg.payload, "retained", detail)
    return Rejected(letter)


class _DuplicateKey(ValueError):
    pass


def _no_repeats(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(
                f"the key {json.dumps(key)} appears twice ({json.dumps(seen[key])[:40]}, then"
                f" {json.dumps(value)[:40]}): a message names each field once"
            )
        seen[key] = value
    return seen


def duplicate_key(body: bytes) -> str | None:
    """Why ``body`` is refused for naming a key twice (any object in it), or None.

    pydantic, like ``json.loads``, keeps the last of two values for one key:
    ``{"seq": 16, "seq": 17}`` was stored as seq 17 without a word.
    """
    try:
        json.loads(body, object_pairs_hook=_no_repeats)
    except _DuplicateKey as exc:
        return str(exc)[:MAX_DETAIL_CHARS]
    except (ValueError, RecursionError):
        return None  # not JSON: the parser's own reason stands
    return None


def _by_stream(msg: MqttMessage, levels: tuple[str, ...], received_at_ms: int) -> Verdict | None:
    """What an our-shaped topic's stream decides before any parsing (None: parse it)."""
    stream = levels[4]
    if stream == "stored":
        return Ignored(msg.topic)
    if msg.retain and (stream == JPEG_STREAM or stream in READING_STREAMS):
        return _retained(msg, levels, received_at_ms)
    if stream == JPEG_STREAM:
        return _evidence(msg, levels[3], received_at_ms)
    return None


def classify(msg: MqttMessage, received_at_ms: int, limits: SizeLimits = DEFAULT_LIMITS) -> Verdict:
    """Validate one message against the contract and say where it goes.

    Runs for every message ingest receives: one topic lookup, then the
    contract's parser; no other call on the way of a well-formed reading.
    """
    topic, body = msg.topic, msg.payload
    known = _TOPICS.get(topic)
    levels, ours = known if known is not None else _split_topic(topic)
    if len(body) > limits.message_bytes:
        # Before any parsing: an oversize payload is never decoded.
        oversize = _too_large(msg, levels, ours, received_at_ms, limits)
        if oversize is not None:
            return oversize
    if ours:
        early = _by_stream(msg, levels, received_at_ms)
        if early is not None:
            return early
    try:
        payload = parse_payload(topic, body)
    except ContractError as exc:
        reason, detail = exc.reason, exc.detail
    except RecursionError:
        # parse_payload turns a too-deep JSON into malformed_json; this is a
        # last guard should validation itself recurse too far.
        reason, detail = "malformed_json", "nested too deeply"
    except Exception as exc:
        # A validator bug must not stop the stream: keep the message, say why.
        reason, detail = "internal_error", f"{type(exc).__name__}: {exc}"[:MAX_DETAIL_CHARS]
    else:
        repeated = duplicate_key(body)
        if repeated is not None:
            device = levels[3] if len(levels) == 5 else None
            return Rejected(
                DeadLetter(received_at_ms, topic, device, body, "malformed_json", repeated)
            )
        # parse_payload checked the topic's shape, so levels[2] is the site slug.
        if type(payload) in _READING_TYPES:
            return Accepted(levels[2], payload)  # type: ignore[arg-type]  # one of _READING_TYPES
        if isinstance(payload, Status):
            return Availability(StatusUpdate(levels[2], payload))
        reason, detail = "internal_error", f"parse_payload gave {type(payload).__name__}"
    device = levels[3] if reason != "bad_topic" and len(levels) == 5 else None
    return Rejected(DeadLetter(received_at_ms, topic, device, body, reason, detail))


# What ``judge_many`` says of a message: a well-formed reading as a plain
# ``(site, device, reading)`` tuple (the Accepted that ``classify`` gives for it,
# built for 100 instructions instead of 1,500, with the reading's device, which
# is the topic's), anything else as ``classify``'s verdict.
Judged = tuple[str, str, AnyReading] | Verdict
# A reading topic's fast path: the stream's validator, the topic's device and site.
_Lane = tuple[Callable[[bytes], AnyReading], str, str]
_LANES: dict[str, _Lane | None] = {}


def _lane(topic: str) -> _Lane | None:
    """The fast path for a topic (None: not a reading topic of ours), remembered."""
    try:
        parts = parse_topic(topic)
    except ContractError:
        lane = None
    else:
        lane = None
        if parts.stream in READING_STREAMS:
            lane = (fast_reading_validator(parts.stream), parts.device, parts.site)
    # One entry per device and stream; bounded against made-up topics.
    if len(_LANES) >= _TOPICS_MAX:
        _LANES.clear()
    _LANES[topic] = lane
    return lane


def judge_many(msgs: Sequence[MqttMessage], limits: SizeLimits = DEFAULT_LIMITS) -> list[Judged]:
    """``classify`` each message (received at 0: the consumer stamps dead letters
    at commit), a well-formed reading as ``(site, device, reading)``.

    Ingest's receive loop: a reading within the size limit goes straight to its
    stream's validator (``fast_reading_validator``); whatever that refuses, and
    every other message, goes through ``classify``, which gives the reason. A
    failure of ``classify`` itself becomes an ``internal_error`` dead letter, so
    the receiving thread never dies of one message.
    A retained reading (the broker's replay) and one whose colons outnumber its
    fields (maybe a key named twice) go through ``classify`` too.
    """
    out: list[Judged] = []
    add = out.append
    lanes = _LANES
    size_limit = limits.message_bytes
    for msg in msgs:
        topic, body = msg[0], msg[1]
        lane = lanes.get(topic)
        if lane is None and topic not in lanes:
            lane = _lane(topic)
        if lane is not None and not msg[3] and len(body) <= size_limit:
            try:
                reading = lane[0](body)
            except Exception:
                pass  # classify, below, says why
            else:
                device = lane[1]
                # Each key of a well-formed reading has one colon (no value holds
                # one): more colons than fields set may be a repeated key, which
                # classify finds (the validator kept the last of the two values).
                if (
                    reading.__dict__["device"] == device
                    and body.count(b":") <= len(reading.__pydantic_fields_set__)
                ):
                    # As parse_payload's fast path: the slow one sets stream from the topic.
                    reading.__pydantic_fields_set__.add("stream")
                    add((lane[2], device, reading))
                    continue
        try:
            add(classify(msg, 0, limits))
        except Exception as exc:
            # classify catches the validator's failures; this guards the receiving thread.
            detail = f"{type(exc).__name__}: {exc}"[:MAX_DETAIL_CHARS]
            add(Rejected(DeadLetter(0, topic, None, body, "internal_error", detail)))
    return out


def shed_bodies(msgs: list[MqttMessage], verdicts: list[Judged], limits: SizeLimits) -> None:
    """Drop the body of each ``too_large`` message of ``judge_many``'s lists, in place.

    Only the ack needs the message now, and the dead letter only a prefix, the
    length and the hash: the body leaves memory on receipt, not when the batch
    commits (a dozen 15 MB bodies waiting in the queue made a 396 MB peak).
    """
    limit = limits.message_bytes
    for i, msg in enumerate(msgs):
        if len(msg[1]) > limit:
            verdict = verdicts[i]
            if type(verdict) is Rejected and verdict.dead_letter.reason == "too_large":
                msgs[i] = msg._replace(payload=b"")
                verdicts[i] = Rejected(_without_body(verdict.dead_letter))
