"""The message contract: topics, payload models and the schema version.

This is the one module that maps each stream to its payload model. The edge
publishes with it, ingest validates with it, analytics reads with it.

Topic: ``sidewalk/v1/<site_id>/<device_id>/<stream>``.
Payload: JSON with ``schema`` (integer version), ``device``, ``seq``
(per-device, monotonic, survives reboots), ``ts`` (event time, UTC, integer
milliseconds since the Unix epoch) and readings whose names carry their unit.
An optional ``epoch`` names the pole's seq space (a re-imaged pole starts a
new one at seq 1); ``stored`` watermarks echo it, and ingest and analytics
key readings by ``(device, epoch, seq)``. ``TimePolicy`` says when a ``ts`` is
implausible (``implausible_time``): ingest quarantines such a reading and
analytics skips it. ``docs/data-path.md`` documents all of it.

Frames (evidence JPEGs) are content-addressed: the device publishes a ``frame``
message whose ``sha256`` names the image, and the JPEG bytes travel as the raw
body on ``…/<device>/jpeg`` (``jpeg_topic``), just before it. That topic has the
five levels ingest's ``sidewalk/v1/+/+/+`` already receives, so the server can
store the bytes under ``sha256(body)`` without a second subscription. Keeping
the JSON small keeps every reading inspectable with ``mosquitto_sub``; the hash
makes re-sends harmless.

Remote commands follow zigbee2mqtt's request/response: the server publishes a
``CommandRequest`` on ``…/<device>/cmd/<name>`` and the device answers with a
``CommandReply`` carrying the same ``transaction`` on ``…/cmd/<name>/reply``.
The device's retained ``DeviceHealth`` (sensor faults, clock offset, buffer)
lives on ``…/<device>/status/health``. Both are deeper than five levels, so
``parse_topic`` keeps its one rule and ingest's wildcard does not see them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import accumulate
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import CoreSchema, SchemaSerializer, SchemaValidator

SCHEMA_VERSION = 1
TOPIC_ROOT = "sidewalk"
TOPIC_VERSION = "v1"

SLUG = r"^[a-z0-9][a-z0-9-]{0,62}$"
# Used with fullmatch: "$" alone would let a trailing newline through.
_SLUG_RE = re.compile(SLUG)

Slug = Annotated[str, Field(pattern=SLUG)]
Seq = Annotated[int, Field(ge=0, le=2**63 - 1)]
# 2000-01-01 .. 2100-01-01: anything outside is a clock fault, not weather.
EventTimeMs = Annotated[int, Field(ge=946_684_800_000, le=4_102_444_800_000)]
# A pole's boot identity: random, created with its buffer's seq state (see ``Reading.epoch``).
EPOCH = r"^[0-9a-f]{16}$"
Epoch = Annotated[str, Field(pattern=EPOCH)]

Stream = Literal["weather", "snow", "frame", "status", "stored"]
READING_STREAMS: tuple[str, ...] = ("weather", "snow", "frame")


# Every reason a message can be dead-lettered for, with what it means. The
# contract's own codes come first; ``not_jpeg``/``internal_error`` are ingest's
# (validate.py), ``no_evidence_store`` its consumer's, ``seq_conflict`` the store's.
REJECTION_REASONS: dict[str, str] = {
    "bad_topic": "not sidewalk/v1/<slug>/<slug>/<stream>",
    "unknown_stream": "the topic names a stream the contract does not have",
    "malformed_json": "not UTF-8 JSON, not a JSON object, or too deep or too long a number",
    "unknown_schema": "schema missing or not a version this server reads",
    "missing_field": "a required field is absent",
    "extra_field": "a field the schema does not have",
    "out_of_range": "a value outside its bounds",
    "invalid_value": "wrong type or pattern",
    "topic_mismatch": "payload device/stream differ from the topic's",
    "not_jpeg": "bytes on …/jpeg that are not one whole JPEG",
    "internal_error": "the validator itself failed on this message (a bug)",
    "no_evidence_store": "a JPEG reached an ingest started without an evidence store",
    "too_large": "a message over ingest's size limit for its stream (kept: a prefix, length, "
    "sha256)",
    "evidence_quota": "a JPEG over its device's daily evidence quota (bytes per day)",
    "unreferenced_frame": "an evidence JPEG no frame message named within the grace period "
    "(deleted by the retention prune)",
    "seq_conflict": "a re-sent (device, seq) whose content differs from the stored one",
    "retained": "a reading, frame or JPEG the broker replayed from its retained store (published "
    "with the retain flag), not a delivery from the pole",
    "implausible_time": "a reading whose ts is implausible against its receipt or its pole's "
    "previous reading (quarantined: kept here, never stored as a reading)",
}
# Details quote the offending value; an oversized one is cut (the payload is kept whole).
MAX_DETAIL_CHARS = 300


def _clip(text: str) -> str:
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    return f"{text[: MAX_DETAIL_CHARS - 20]}… ({len(text)} chars)"


class ContractError(ValueError):
    """A message that breaks the contract; ``reason`` is a short stable code."""

    def __init__(self, reason: str, detail: str) -> None:
        detail = _clip(detail)
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    schema_: Literal[1] = Field(alias="schema", default=1)  # SCHEMA_VERSION
    device: Slug

    def to_json(self) -> bytes:
        """Serialise with the wire names (``schema``, not ``schema_``): the canonical JSON.

        The same bytes as ``model_dump_json(by_alias=True, exclude_none=True)``,
        straight from pydantic-core: the wrapper and the str round trip cost
        as much again as the serialising (ingest does this for every reading).
        """
        cls = type(self)
        serializer = _SERIALIZERS.get(cls)
        if serializer is None:
            # A class attribute read goes through pydantic's metaclass (slow): once per class.
            serializer = _SERIALIZERS[cls] = cls.__pydantic_serializer__
        return serializer.to_json(self, by_alias=True, exclude_none=True)


_SERIALIZERS: dict[type[_Payload], SchemaSerializer] = {}


class Reading(_Payload):
    """Every stored stream carries a per-device sequence number and event time.

    ``epoch`` names the pole's seq space: a random id the pole creates with its
    buffer's seq state, so a re-imaged pole (seq back at 1) starts a new one and
    the server keys readings by ``(device, epoch, seq)``. Optional within schema
    1: a pole that sends none has the one seq space ``''`` of older software.
    """

    seq: Seq
    ts: EventTimeMs
    epoch: Epoch | None = None

    @property
    def event_time(self) -> datetime:
        return datetime.fromtimestamp(self.ts / 1000, tz=UTC)


class WeatherReading(Reading):
    """A pole's weather sensors, one sample. Absent fields were not measured."""

    stream: Literal["weather"] = "weather"
    snow_depth_mm: Annotated[float, Field(ge=0, le=5000)] | None = None
    precip_mm: Annotated[float, Field(ge=0, le=500)] | None = None
    air_temp_c: Annotated[float, Field(ge=-60, le=60)] | None = None
    surface_temp_c: Annotated[float, Field(ge=-60, le=80)] | None = None
    relative_humidity_pct: Annotated[float, Field(ge=0, le=100)] | None = None
    ground_temp_c: Annotated[float, Field(ge=-60, le=60)] | None = None
    ground_probe_depth_mm: Annotated[int, Field(ge=0, le=3000)] | None = None

    @model_validator(mode="after")
    def _has_a_value(self) -> WeatherReading:
        # Runs for every weather reading received: plain comparisons on the
        # field dict (an attribute read on a model costs several dict lookups).
        v = self.__dict__
        if (
            v["snow_depth_mm"] is None
            and v["precip_mm"] is None
            and v["air_temp_c"] is None
            and v["surface_temp_c"] is None
            and v["relative_humidity_pct"] is None
            and v["ground_temp_c"] is None
        ):
            raise ValueError("a weather reading must carry at least one measured value")
        if (v["ground_temp_c"] is None) != (v["ground_probe_depth_mm"] is None):
            raise ValueError("ground_temp_c and ground_probe_depth_mm come together")
        return self


SurfaceState = Literal["dry", "wet", "ice", "treated"]
"""What the camera sees on a walk's surface: ``treated`` is sand or salt on it."""


class SnowMeasurement(Reading):
    """The camera's measurement of one frontage.

    ``cleared_width_mm`` is the narrowest clear path along the whole frontage,
    which is what § 370-10 A's "minimum of four feet" is tested against.

    § 370-10 A's ice ("cleared of … snow and/or ice", or "sprinkled with sand
    and/or salt"): ``surface_state`` is what the camera sees on the cleared path,
    ``surface_temp_c`` the pavement temperature of this frontage (an infrared
    sensor aimed at it). Both optional within schema 1: absent, not measured (a
    weather reading's ``surface_temp_c`` from the same pole stands in for the
    temperature). A wet or icy surface at or below 0 °C is untreated ice.

    ``width_uncertainty_mm`` is the camera's stated one-sigma uncertainty of
    ``cleared_width_mm`` (grid, pixel and calibration error, ``width_uncertainty``
    on the pole). Optional within schema 1: absent, the pole stated none, and the
    server judges the width by the profile's tolerance alone.
    """

    stream: Literal["snow"] = "snow"
    frontage: Slug
    snow_cover_fraction: Annotated[float, Field(ge=0, le=1)]
    cleared_width_mm: Annotated[float, Field(ge=0, le=20_000)]
    ice_suspected: bool = False
    surface_state: SurfaceState | None = None
    surface_temp_c: Annotated[float, Field(ge=-60, le=80)] | None = None
    frame_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    width_uncertainty_mm: Annotated[float, Field(ge=0, le=5000)] | None = None


class FrameRef(Reading):
    """Announces an evidence JPEG whose bytes travel on ``…/frame/<sha256>``."""

    stream: Literal["frame"] = "frame"
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    frontage: Slug | None = None
    bytes_len: Annotated[int, Field(ge=1, le=20_000_000)]


class Status(_Payload):
    """Retained availability. ``offline`` is the broker-sent last will."""

    stream: Literal["status"] = "status"
    state: Literal["online", "offline", "stopped"]
    ts: EventTimeMs
    # The lowest seq the device still holds in its buffer (or its next seq when
    # the buffer is empty). A seq below it that the server lacks is gone for
    # good, so ingest can stop waiting for it and let the watermark move on.
    buffer_floor_seq: Seq | None = None
    # The seq space the floor belongs to (``Reading.epoch``).
    epoch: Epoch | None = None


class StoredWatermark(_Payload):
    """Retained by ingest: every reading of ``device`` with seq <= ``seq`` is durable.

    ``epoch`` echoes the seq space the seqs belong to: a pole frees readings
    only by a watermark of its own epoch, so the retained watermark of a pole's
    earlier life (old seqs) can never free a re-imaged pole's new readings.
    """

    stream: Literal["stored"] = "stored"
    seq: Seq
    ts: EventTimeMs
    epoch: Epoch | None = None


# How far behind its receipt a reading may be stamped: two years. A pole's disk
# buffer (``BufferConfig.max_rows``, 1,000,000 rows) holds about a year of its
# readings at the default cadence, and a pole left unpowered all summer still
# delivers last winter's in the autumn. Older is no buffered reading but a
# clock that was never set (a fresh pole booting at 2000-01-01 without a
# network time).
MAX_BEHIND_MS = 731 * 86_400_000


def span_words(ms: int) -> str:
    """A duration as a person reads it: "1 day 0 h", "4 h 05 min", "26 years 12 days"."""
    s = abs(ms) // 1000
    days, rest = divmod(s, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days >= 365:
        years, days = divmod(days, 365)
        return f"{years} year{'s' * (years != 1)} {days} day{'s' * (days != 1)}"
    if days:
        return f"{days} day{'s' * (days != 1)} {hours} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {seconds:02d} s" if seconds else f"{minutes} min"
    return f"{seconds} s"


def stamp_words(ts_ms: int) -> str:
    """An event time for a log line: UTC as a person reads it, then the epoch ms
    the pole sent ("2026-12-11 22:00:00 UTC (ts 1765490400000)")."""
    try:
        at = datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        at = "beyond any date"
    return f"{at} (ts {ts_ms})"


@dataclass(frozen=True, slots=True)
class TimePolicy:
    """When a reading's event time is implausible (ingest and analytics judge alike).

    * ahead: ``ts`` more than ``max_ahead_ms`` after the time it was received;
    * too old: ``ts`` more than ``max_behind_ms`` before the time it was
      received (older than any pole's buffer holds: ``MAX_BEHIND_MS``);
    * stepped back: a seq newer than the pole's last accepted reading (same
      epoch) with a ``ts`` more than ``max_step_back_ms`` before that reading's.
      A re-sent old reading is not judged against the receive time: a pole
      legitimately delivers a day's buffer after an outage, in seq order.
    * out of line: a newer seq stamped more than ``max_step_back_ms`` after
      the pole's last accepted reading, whose next reading (``next_ts``, the
      pole's following seq in the same batch) falls back in line with that
      last reading: one reading stamped ahead of both its neighbours, as a
      buffer delivered after an outage can carry (it is not ahead of its late
      receipt). It is the outlier, so the readings after it are not "stepped
      back" from it. A pole off for a day resumes a day later: its next
      reading follows the jump, and the jump stands. When the jump is the
      last of its batch (no next reading to judge it by) and not stamped
      within ``max_step_back_ms`` of the time it arrived (then the broker's
      receipt vouches for it), ingest's store holds it (``hold``):
      acknowledged and kept durably, neither stored nor quarantined, until
      the pole's next reading decides (``judge_held``): in
      line with the readings before the jump, the held one is out of line
      and quarantined; following the jump (a clock reset, a reflash, a pole
      off for a while), the jump stands. With no next reading within
      ``max_hold_ms`` of its receipt it is quarantined (``judge_expired``: it
      was not stamped as it arrived, nor did its pole confirm it), so a
      reading nothing can judge never moves a deadline. A held reading moves
      no clock. A caller that does not hold (the analytics gate) accepts it;
      then a reading "stepped back" from it but in line with the accepted
      reading before it (``before_ts``) is judged by that one, so the good
      readings after the outlier are still kept.
    * still behind: once a pole's clock has stepped back, its seq space is
      ``suspect`` until a reading arrives stamped within ``max_step_back_ms``
      of its receipt (the clock is right again); until then every reading more
      than that behind its receipt is held too, so a clock left a day slow is
      not trusted again just because its time has caught up with the last
      good reading's.

    ``None`` turns a check off. A replay through the broker runs on the
    scenario's time, unrelated to the wall clock: it has no "ahead"
    (``max_ahead_ms=None``), and then no "too old" or "still behind" either.
    Such a reading is quarantined (``implausible_time``), never moves a clock
    and never becomes the reference a later reading is judged by.
    """

    max_ahead_ms: int | None = 600_000
    max_step_back_ms: int | None = 600_000
    max_behind_ms: int | None = MAX_BEHIND_MS
    # How long a reading out of line with its pole's run waits for the pole's next one.
    max_hold_ms: int | None = 900_000

    def problem(
        self,
        seq: int,
        ts: int,
        received_ms: int,
        last_seq: int,
        last_ts: int,
        *,
        suspect: bool = False,
        next_ts: int | None = None,
        before_ts: int | None = None,
    ) -> tuple[str, bool] | None:
        """None if ``ts`` is plausible; else why not (the dead letter's detail, in a
        person's words) and whether the seq space is ``suspect`` afterwards (the
        pole's clock is behind).

        ``last_seq``/``last_ts``: the pole's last accepted reading in this epoch.
        ``next_ts``: the ``ts`` of the pole's next seq after this one, when the
        caller holds it (the rest of its batch). ``before_ts``: the ``ts`` of the
        accepted reading before the last one, when known. An accepted reading
        clears ``suspect``.
        """
        reason = self._against_receipt(ts, received_ms)
        if reason is not None:
            return reason, suspect
        back = self.max_step_back_ms
        if (
            back is not None
            and before_ts is not None
            and last_ts > before_ts + back
            and before_ts - back <= ts < last_ts - back
        ):
            # The last accepted reading was the one out of line: judge by the one before.
            last_ts = before_ts
        return self._against_pole(seq, ts, received_ms, last_seq, last_ts, suspect, next_ts)

    def hold(self, seq: int, ts: int, received_ms: int, last_seq: int, last_ts: int) -> bool:
        """Whether a reading ``problem`` passed with no next reading to judge it by
        waits for its pole's next one: a newer seq stamped more than
        ``max_step_back_ms`` after the pole's last accepted reading, and not within
        that of the time it arrived (stamped as it arrived, the broker's receipt
        vouches for it: a pole back after a while, or one sampling less often)."""
        back = self.max_step_back_ms
        return (
            back is not None
            and self.max_hold_ms is not None
            and bool(last_seq)
            and seq > last_seq
            and ts > last_ts + back
            and (self.max_ahead_ms is None or ts < received_ms - back)
        )

    def judge_held(  # noqa: PLR0917 (the held reading, its pole's reference, the next)
        self,
        seq: int,
        ts: int,
        received_ms: int,
        last_seq: int,
        last_ts: int,
        next_ts: int,
        *,
        suspect: bool = False,
    ) -> tuple[bool, tuple[str, bool] | None]:
        """(decided, verdict) for a held reading, given the ``ts`` of its pole's next
        (newer) reading: ``problem``'s verdict on it with that neighbour, as if both
        had come in one batch. Not decided while the next one is stepped back from
        both (that one is judged first; the held one waits on)."""
        back = self.max_step_back_ms
        if back is not None and next_ts < last_ts - back:
            return False, None
        return True, self._against_pole(seq, ts, received_ms, last_seq, last_ts, suspect, next_ts)

    def judge_expired(
        self, ts: int, received_ms: int, last_seq: int, last_ts: int, *, suspect: bool = False
    ) -> tuple[str, bool] | None:
        """The verdict on a held reading no next reading came to judge within
        ``max_hold_ms``: by the broker's receipt time. It stands only if stamped
        within ``max_step_back_ms`` of the time it arrived (the pole's clock and
        the broker's agree); a replay has no receipt time to judge by, and a reading
        nothing can judge is quarantined, so it never moves a deadline earlier."""
        back = self.max_step_back_ms or 0
        jump = (
            f"stamped {span_words(ts - last_ts)} ahead of the pole's previous reading"
            f" (seq {last_seq}) and no reading of the pole came within"
            f" {span_words(self.max_hold_ms or 0)} to confirm it"
        )
        if self.max_ahead_ms is None:
            return f"{jump}, nor a time it arrived to judge it by (a replay)", suspect
        if ts < received_ms - back:
            return (
                f"{jump}; it was stamped {span_words(received_ms - ts)} before the time it"
                f" arrived (at most {span_words(back)}): the pole's clock did not move",
                suspect,
            )
        return None

    def _against_receipt(self, ts: int, received_ms: int) -> str | None:
        """Ahead of the time it arrived, or older than any pole's buffer holds."""
        ahead, behind = self.max_ahead_ms, self.max_behind_ms
        if ahead is None:
            return None
        if ts > received_ms + ahead:
            return (
                f"stamped {span_words(ts - received_ms)} ahead of the time it arrived"
                f" (a pole's clock may be at most {span_words(ahead)} ahead)"
            )
        if behind is not None and ts < received_ms - behind:
            return (
                f"stamped {span_words(received_ms - ts)} before the time it arrived, older than"
                f" a pole's buffer holds ({span_words(behind)}): the pole's clock was not set"
            )
        return None

    def _against_pole(  # noqa: PLR0917 (the reading and its pole's reference, as problem's)
        self,
        seq: int,
        ts: int,
        received_ms: int,
        last_seq: int,
        last_ts: int,
        suspect: bool,
        next_ts: int | None,
    ) -> tuple[str, bool] | None:
        """Stepped back, out of line with its neighbours, or still behind."""
        back = self.max_step_back_ms
        if back is None:
            return None
        newer = last_seq and seq > last_seq
        if newer and ts < last_ts - back:
            return (
                f"stamped {span_words(last_ts - ts)} before the pole's previous reading"
                f" (seq {last_seq}), though taken after it (at most {span_words(back)}):"
                " the pole's clock stepped back",
                True,
            )
        if (
            newer
            and next_ts is not None
            and ts > last_ts + back
            and last_ts - back <= next_ts < ts - back
        ):
            return (
                f"stamped {span_words(ts - last_ts)} ahead of the pole's previous reading"
                f" (seq {last_seq}) and {span_words(ts - next_ts)} ahead of its next one,"
                " though taken between them: one reading out of line with its pole's clock",
                suspect,
            )
        if suspect and self.max_ahead_ms is not None and ts < received_ms - back:
            return (
                f"stamped {span_words(received_ms - ts)} before the time it arrived, and the"
                " pole's clock stepped back before without being seen right since",
                True,
            )
        return None


AnyReading = WeatherReading | SnowMeasurement | FrameRef

STREAM_MODELS: dict[str, type[_Payload]] = {
    "weather": WeatherReading,
    "snow": SnowMeasurement,
    "frame": FrameRef,
    "status": Status,
    "stored": StoredWatermark,
}


class TopicParts(BaseModel):
    model_config = ConfigDict(frozen=True)

    site: str
    device: str
    stream: str


def topic_for(site: str, device: str, stream: str) -> str:
    """Build a topic; ids must be slugs so a topic never needs escaping."""
    for name, value in (("site", site), ("device", device)):
        if not _SLUG_RE.fullmatch(value):
            raise ValueError(f"{name} id {value!r} is not a slug ({SLUG})")
    if stream not in STREAM_MODELS:
        raise ValueError(f"unknown stream {stream!r}")
    return f"{TOPIC_ROOT}/{TOPIC_VERSION}/{site}/{device}/{stream}"


def subscription(site: str = "+") -> str:
    """The wildcard an ingest or analytics consumer subscribes to."""
    return f"{TOPIC_ROOT}/{TOPIC_VERSION}/{site}/+/+"


def parse_topic(topic: str) -> TopicParts:
    """Split a topic, or raise ``ContractError('bad_topic', …)``."""
    parts = _TOPIC_CACHE.get(topic)
    if parts is None:
        parts = _parse_topic(topic)
        # Few distinct topics (one per device and stream): remember them, but
        # bounded, so a flood of made-up topics cannot grow memory.
        if len(_TOPIC_CACHE) >= _TOPIC_CACHE_MAX:
            _TOPIC_CACHE.clear()
        _TOPIC_CACHE[topic] = parts
    return parts


_TOPIC_CACHE: dict[str, TopicParts] = {}
_TOPIC_CACHE_MAX = 65_536


def _parse_topic(topic: str) -> TopicParts:
    parts = topic.split("/")
    if len(parts) != 5 or parts[0] != TOPIC_ROOT or parts[1] != TOPIC_VERSION:
        raise ContractError(
            "bad_topic", f"{topic!r} is not {TOPIC_ROOT}/{TOPIC_VERSION}/site/device/stream"
        )
    site, device, stream = parts[2:]
    if not _SLUG_RE.fullmatch(site) or not _SLUG_RE.fullmatch(device):
        raise ContractError("bad_topic", f"site and device in {topic!r} must be slugs")
    if stream not in STREAM_MODELS:
        raise ContractError("unknown_stream", f"stream {stream!r} in {topic!r}")
    return TopicParts(site=site, device=device, stream=stream)


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "payload"
    kind = err["type"]
    if kind == "missing":
        return "missing_field", f"{where}: required"
    if kind == "extra_forbidden":
        return "extra_field", f"{where}: not in schema {SCHEMA_VERSION}"
    if kind in {"greater_than_equal", "less_than_equal", "greater_than", "less_than"}:
        return "out_of_range", f"{where}: {err['msg']} (got {err.get('input')!r})"
    return "invalid_value", f"{where}: {err['msg']}"


# No message of the contract nests deeper than 2. The cap is ours, not the
# JSON parser's: json.loads stops at Python's recursion limit, which depends on
# how deep the calling stack already is, so the same payload could be
# "nested too deeply" in one thread and another reason in the next.
MAX_JSON_NESTING = 32
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NESTING_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _nesting(payload: bytes) -> int:
    """How deep arrays and objects nest (strings skipped); only for bracket-heavy payloads."""
    brackets = _JSON_STRING.sub(b"", payload).translate(None, _NOT_BRACKETS)
    return max(accumulate(_NESTING_STEP[b] for b in brackets), default=0)


def _load_json(payload: bytes) -> dict[str, Any]:
    """Decode a JSON object, or raise ``ContractError('malformed_json', …)``."""
    if (
        payload.count(b"[") + payload.count(b"{") > MAX_JSON_NESTING
        and _nesting(payload) > MAX_JSON_NESTING
    ):
        raise ContractError("malformed_json", f"nested more than {MAX_JSON_NESTING} deep")
    try:
        raw: Any = json.loads(payload)
    except ValueError as exc:
        # JSONDecodeError, UnicodeDecodeError, and the int-digits limit ("9" * 5000).
        raise ContractError("malformed_json", str(exc)) from None
    except RecursionError:
        raise ContractError("malformed_json", "nested too deeply") from None
    if not isinstance(raw, dict):
        raise ContractError(
            "malformed_json", f"payload is a JSON {type(raw).__name__}, not an object"
        )
    return raw


def parse_payload(topic: str, payload: bytes) -> _Payload:
    """Validate one MQTT message against the contract.

    Raises ``ContractError`` with a stable ``reason`` code: ``bad_topic``,
    ``unknown_stream``, ``malformed_json``, ``unknown_schema``,
    ``missing_field``, ``extra_field``, ``out_of_range``, ``invalid_value``,
    ``topic_mismatch``.
    """
    parts = _TOPIC_CACHE.get(topic) or parse_topic(topic)
    msg = _parse_payload_fast(parts, payload)
    return msg if msg is not None else _parse_payload_slow(parts, payload)


def _parse_payload_fast(parts: TopicParts, payload: bytes) -> _Payload | None:
    """The well-formed payload in one pydantic-core call, or None for the slow path.

    Only ever accepts what ``_parse_payload_slow`` accepts, with an equal model;
    anything else (every rejection) goes the slow way, which gives the reason.
    The validator is the stream model's own with one change (``_fast_validator``):
    ``schema`` is required and a strict integer equal to 1, so the JSON-mode
    ``Literal[1]`` cannot take ``1.0``, ``true`` or a missing ``schema`` that
    the slow path rejects as ``unknown_schema``. Both parsers let a repeated
    key's last value win and unescape keys alike. Rejections between the
    parsers differ (UTF-8 BOM, NaN, 4,300-digit ints, nesting): none of those
    can be an accepted payload, as every stream model field is a bounded
    number, a pattern-checked string, a bool or a literal, and extra keys are
    forbidden.
    """
    try:
        msg: _Payload = _FAST_VALIDATORS[parts.stream].validate_json(payload)
    except Exception:
        return None
    if msg.__dict__["device"] != parts.device:
        return None
    # The slow path sets ``stream`` from the topic before validating.
    msg.__pydantic_fields_set__.add("stream")
    return msg


# ``schema`` as the fast path validates it: present, an integer (not 1.0, not true), 1.
_SCHEMA_FIELD: CoreSchema = {"type": "int", "strict": True, "ge": 1, "le": 1}


def _fast_validator(model: type[_Payload]) -> SchemaValidator:
    """``model``'s validator (same class, after-validators, config) with ``schema`` required."""

    def swap(schema: Any) -> tuple[Any, Any]:
        # Copies the path from the top down to the model's fields; returns (schema, config).
        if schema["type"] == "model-fields":
            fields = dict(schema["fields"])
            fields["schema_"] = {**fields["schema_"], "schema": _SCHEMA_FIELD}
            return {**schema, "fields": fields}, None
        inner, config = swap(schema["schema"])
        return {**schema, "schema": inner}, config or schema.get("config")

    core, config = swap(model.__pydantic_core_schema__)
    # pydantic-core reuses a complete model class's own validator for a "model"
    # schema naming that class, which would drop the change; built at import,
    # before any other thread can see the class half-marked.
    model.__pydantic_complete__ = False
    try:
        return SchemaValidator(core, config)
    finally:
        model.__pydantic_complete__ = True


_FAST_VALIDATORS: dict[str, SchemaValidator] = {
    stream: _fast_validator(model) for stream, model in STREAM_MODELS.items()
}


def fast_reading_validator(stream: str) -> Callable[[bytes], AnyReading]:
    """``parse_payload``'s fast path for a reading stream, for a caller's own loop.

    What it returns for a payload on topic T is ``parse_payload(T, payload)``
    once two steps follow: its ``device`` equals T's (else ``parse_payload``
    judges the payload) and ``"stream"`` is added to its
    ``__pydantic_fields_set__``. Whatever it raises on, ``parse_payload``
    judges (and gives the reason). For ingest's receive loop: one call per
    message instead of three Python calls around it.
    """
    if stream not in READING_STREAMS:
        raise ValueError(f"{stream!r} is not a reading stream")
    return _FAST_VALIDATORS[stream].validate_json


def _parse_payload_slow(parts: TopicParts, payload: bytes) -> _Payload:
    """The reference path: every rejection reason comes from here."""
    raw = _load_json(payload)
    schema = raw.get("schema")
    # Exactly the integer: 1.0 and true compare equal to 1 but are not a version.
    if type(schema) is not int or schema != SCHEMA_VERSION:
        raise ContractError(
            "unknown_schema", f"schema {schema!r}; this server reads {SCHEMA_VERSION}"
        )
    raw.setdefault("stream", parts.stream)
    if raw["stream"] != parts.stream:
        raise ContractError(
            "topic_mismatch", f"payload stream {raw['stream']!r} on topic stream {parts.stream!r}"
        )
    model = STREAM_MODELS[parts.stream]
    try:
        # Strict mode rejects "12" for a number, but JSON floats like 3 arrive as
        # int; pydantic strict accepts int for float, which is what we want.
        msg = model.model_validate(raw)
    except ValidationError as exc:
        reason, detail = _first_error(exc)
        raise ContractError(reason, detail) from None
    if msg.device != parts.device:
        raise ContractError(
            "topic_mismatch", f"payload device {msg.device!r} on topic device {parts.device!r}"
        )
    return msg


# --- Beyond the five-level streams: evidence bytes, commands, device health ---

JPEG_STREAM = "jpeg"
TRANSACTION = r"^[A-Za-z0-9_.:-]{1,64}$"
COMMAND_NAME = r"^[a-z][a-z0-9_]{0,31}$"
_COMMAND_NAME_RE = re.compile(COMMAND_NAME)
CommandArg = str | int | float | bool


class CommandRequest(_Payload):
    """Server → device: run command ``<name>`` (from the topic) with ``args``.

    ``ts`` is the sender's clock when sent; with the reply's two device times
    it gives the sender an NTP-style estimate of the device's clock offset.
    """

    transaction: Annotated[str, Field(pattern=TRANSACTION)]
    ts: EventTimeMs
    args: dict[str, CommandArg] = Field(default_factory=dict)


class CommandReply(_Payload):
    """Device → server: ``{status, data, error, transaction}`` as in zigbee2mqtt.

    ``received_ts`` and ``ts`` are the device's clock when the request came in
    and when this reply left.
    """

    transaction: Annotated[str, Field(pattern=TRANSACTION)]
    status: Literal["ok", "error"]
    data: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    received_ts: EventTimeMs
    ts: EventTimeMs

    @model_validator(mode="after")
    def _error_iff_failed(self) -> CommandReply:
        if (self.status == "error") != (self.error is not None):
            raise ValueError("error is set exactly when status is 'error'")
        return self


class DeviceHealth(_Payload):
    """Retained on ``…/status/health``: what the device knows about itself.

    ``flagged`` counts sensor values withheld as not ``good``, keyed
    ``<sensor>/<quantity>/<quality>``, since the device started.
    ``clock_offset_ms`` is the device clock minus the server's, and
    ``clock_offset_error_ms`` bounds its error (None until measured).
    ``calibration`` is the hash of the camera calibration the pole runs
    (``sidewalk.core.calibration.pole_calibration_hash``); absent on a pole
    without a camera, and from poles older than the field.
    """

    ts: EventTimeMs
    clock_offset_ms: int | None = None
    clock_offset_error_ms: Annotated[int, Field(ge=0)] | None = None
    flagged: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)
    buffered: Annotated[int, Field(ge=0)]
    dropped: Annotated[int, Field(ge=0)]
    intervals_s: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    calibration: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None


_M = TypeVar("_M", bound=_Payload)


class CommandTopic(BaseModel):
    """A parsed ``…/<device>/cmd/<name>[/reply]`` topic."""

    model_config = ConfigDict(frozen=True)

    site: str
    device: str
    name: str
    reply: bool


def _device_prefix(site: str, device: str) -> str:
    for name, value in (("site", site), ("device", device)):
        if not _SLUG_RE.fullmatch(value):
            raise ValueError(f"{name} id {value!r} is not a slug ({SLUG})")
    return f"{TOPIC_ROOT}/{TOPIC_VERSION}/{site}/{device}"


def jpeg_topic(site: str, device: str) -> str:
    """Where a device publishes the raw bytes of an evidence JPEG."""
    return f"{_device_prefix(site, device)}/{JPEG_STREAM}"


def health_topic(site: str, device: str) -> str:
    """The device's retained ``DeviceHealth``."""
    return f"{_device_prefix(site, device)}/status/health"


def command_topic(site: str, device: str, name: str, *, reply: bool = False) -> str:
    """``…/<device>/cmd/<name>``, or its ``/reply`` topic."""
    if not _COMMAND_NAME_RE.fullmatch(name):
        raise ValueError(f"command name {name!r} does not match {COMMAND_NAME}")
    topic = f"{_device_prefix(site, device)}/cmd/{name}"
    return f"{topic}/reply" if reply else topic


def command_subscription(site: str, device: str) -> str:
    """What a device subscribes to for its requests (replies are one level deeper)."""
    return f"{_device_prefix(site, device)}/cmd/+"


def parse_command_topic(topic: str) -> CommandTopic:
    """Split a command or reply topic, or raise ``ContractError('bad_topic', …)``."""
    parts = topic.split("/")
    ok = (
        len(parts) in (6, 7)
        and parts[:2] == [TOPIC_ROOT, TOPIC_VERSION]
        and parts[4] == "cmd"
        and (len(parts) == 6 or parts[6] == "reply")
    )
    if not ok:
        raise ContractError("bad_topic", f"{topic!r} is not …/<device>/cmd/<name>[/reply]")
    site, device, name = parts[2], parts[3], parts[5]
    if not (
        _SLUG_RE.fullmatch(site) and _SLUG_RE.fullmatch(device) and _COMMAND_NAME_RE.fullmatch(name)
    ):
        raise ContractError("bad_topic", f"site, device and command in {topic!r} are not valid")
    return CommandTopic(site=site, device=device, name=name, reply=len(parts) == 7)


def parse_json_model(model: type[_M], payload: bytes) -> _M:
    """Validate a JSON payload against one of the models above (not topic-routed).

    Raises ``ContractError`` with the same reason codes as ``parse_payload``.
    """
    raw = _load_json(payload)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        reason, detail = _first_error(exc)
        raise ContractError(reason, detail) from None
