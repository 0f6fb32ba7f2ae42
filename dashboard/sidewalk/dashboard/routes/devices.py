"""The poles: availability, what ingest stored of each, seq gaps, and dead letters.

Each pole and refused message is also said in words for the page (``name``, ``heard``,
``received``, ``pole``, ``why``): the pole by its name, times on the village's clock,
what was wrong with the message — never a reason code, epoch milliseconds or a topic.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from sidewalk.core.contract import REJECTION_REASONS
from sidewalk.dashboard.routes.deps import Cases, Now, Reader, TimeSeries, VillageProfile, iso
from sidewalk.dashboard.routes.registry import CALIBRATION_WORDS, calibration_state
from sidewalk.dashboard.time_words import village_time
from sidewalk.storage.cases.records import CameraRecord

router = APIRouter()

# Why ingest refused a message, for the person reading the Devices page (every reason of
# the contract's ``REJECTION_REASONS``, and a pole sending under an unregistered id).
DEAD_LETTER_WORDS: Final[dict[str, str]] = {
    "bad_topic": "sent to an address the poles do not use",
    "unknown_stream": "a kind of message the poles do not send",
    "malformed_json": "unreadable: not a well-formed message",
    "unknown_schema": "a message version this server does not read",
    "missing_field": "a value the message must carry is missing",
    "extra_field": "the message carries a value it should not have",
    "out_of_range": "a value outside what the pole can measure",
    "invalid_value": "a value of the wrong kind",
    "topic_mismatch": "the message names another pole or kind than where it was sent",
    "not_jpeg": "a picture that is not one whole JPEG",
    "internal_error": "the server failed to check it (a fault to report)",
    "no_evidence_store": "a picture arrived, but no picture store is set up",
    "too_large": "too large for its kind of message",
    "evidence_quota": "over the pole's daily allowance of pictures",
    "unreferenced_frame": "a picture no reading named (removed)",
    "seq_conflict": "sent again with different content than the first time",
    "retained": "an old message the broker replayed, not one from the pole",
    "implausible_time": "the pole's clock was wrong when it took this reading",
    "unknown_device": "from a pole not registered under that id",
}
AVAILABILITY_WORDS: Final[dict[str, str]] = {
    "online": "Online",
    "offline": "Offline",
    "stopped": "Stopped (switched off on purpose)",
}


def reason_words(reason: str) -> str:
    """A dead letter's reason in words (a reason new to this table: the contract's own)."""
    return DEAD_LETTER_WORDS.get(reason) or REJECTION_REASONS.get(reason) or "refused"


def topic_pole(topic: str) -> str | None:
    """The pole a message was sent as (``sidewalk/v1/<site>/<pole>/<stream>``), if any."""
    parts = topic.split("/")
    return parts[3] if len(parts) >= 5 and parts[:2] == ["sidewalk", "v1"] and parts[3] else None


def heard_words(
    availability: str, last_heard: datetime | None, now: datetime, zone: ZoneInfo
) -> str:
    """What is known of whether a pole reports: its own last status when it sent one,
    else when it was last heard from (a pole that reports but never said "online")."""
    heard = f"last heard {village_time(last_heard, now, zone)}" if last_heard else ""
    said = AVAILABILITY_WORDS.get(availability)
    if said:
        return f"{said}, {heard}" if heard else said
    return f"Reporting: {heard}" if heard else "Never heard from"


def _ms(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


class SeqGapView(BaseModel):
    """Seqs ``from``..``to`` never stored: open, or given up by the device (lost)."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)

    from_: int = Field(alias="from")
    to: int
    lost: bool


class DeviceView(BaseModel):
    """A pole; the stream fields come from the time-series store, when there is one."""

    id: str
    name: str = Field(description="the pole's name (its id when it has none)")
    site: str
    availability: str
    heard: str = Field(description="availability in words: what is known, when last heard")
    last_seen: str | None
    status: str | None = Field(default=None, description="retained: online, offline, stopped")
    status_at_ms: int | None = None
    last_seen_ms: int | None = None
    max_seq: int | None = None
    stored_up_to: int | None = Field(default=None, description="the contiguous watermark")
    backlog: int | None = Field(default=None, description="seqs sent past the watermark")
    gaps: list[SeqGapView] | None = None
    dead_letters: int | None = None
    readings: int | None = None
    epoch: str | None = Field(default=None, description="the pole's current seq space")
    clock_faults: int | None = Field(
        default=None, description="readings quarantined for an implausible time (clock jumped)"
    )
    clock_fault: str | None = Field(default=None, description="why the last one was")
    calibration: str = Field(
        default="not calibrated", description="whether the pole runs the registry's calibration"
    )
    calibrated_at: str | None = Field(
        default=None, description="when the newest of its cameras was calibrated (registry)"
    )
    calibrated_by: str | None = None
    calibration_reported_at: str | None = Field(
        default=None, description="when the pole last said which calibration it runs"
    )


class DeadLetterView(BaseModel):
    """A message that broke the contract (its payload's size, not its bytes)."""

    received_at_ms: int
    topic: str
    device: str | None
    reason: str
    detail: str
    bytes: int
    received: str = Field(description="when, on the village's clock")
    pole: str = Field(description="the pole by name, as registered, else as it called itself")
    why: str = Field(description="the reason in words")


@router.get("/devices", tags=["devices"], response_model_exclude_unset=True)
def devices(
    user: Reader, cases: Cases, ts: TimeSeries, profile: VillageProfile, now: Now
) -> list[DeviceView]:
    """Availability, last seen, buffer backlog, seq gaps and dead letters per pole."""
    out = []
    cameras: dict[str, list[CameraRecord]] = {}
    for c in cases.registry.cameras():
        cameras.setdefault(c.device_id, []).append(c)
    for d in cases.registry.list_devices():
        calibrated = calibration_state(
            cases.registry.expected_calibration(d.id), d.reported_calibration
        )
        newest = max(cameras.get(d.id, []), key=lambda c: c.calibrated_at, default=None)
        row = DeviceView(
            id=d.id, name=d.label or d.id, site=d.site, availability=d.availability,
            heard=heard_words(d.availability, d.last_seen, now, profile.zone),
            last_seen=iso(d.last_seen),
            calibration=CALIBRATION_WORDS[calibrated],
            calibrated_at=iso(newest.calibrated_at) if newest else None,
            calibrated_by=newest.calibrated_by if newest else None,
            calibration_reported_at=iso(d.reported_calibration_at),
        )  # fmt: skip
        if ts is not None:
            state = ts.device_state(d.id)
            stored = ts.stored_up_to(d.id)
            row.status = state.status if state else None
            row.status_at_ms = state.status_ts_ms if state else None
            row.last_seen_ms = state.last_seen_at_ms if state else None
            row.max_seq = state.max_seq if state else 0
            row.stored_up_to = stored
            # Seqs the device sent past the contiguous watermark: still
            # in its disk buffer until the gap is filled or given up.
            row.backlog = (state.max_seq - stored) if state else 0
            row.gaps = [
                SeqGapView(from_=g.from_seq, to=g.to_seq, lost=g.lost_at_ms is not None)
                for g in ts.gaps(d.id)  # open and lost alike
            ]
            row.dead_letters = len(ts.dead_letters(device=d.id))
            row.readings = ts.count(d.id)
            row.epoch = state.epoch if state else None
            row.clock_faults = state.clock_faults if state else 0
            row.clock_fault = state.clock_fault if state else None
            heard = max(filter(None, (d.last_seen, _ms(row.last_seen_ms))), default=None)
            row.heard = heard_words(d.availability, heard, now, profile.zone)
        out.append(row)
    return out


@router.get("/dead-letters", tags=["devices"])
def dead_letters(
    *,
    user: Reader,
    ts: TimeSeries,
    cases: Cases,
    profile: VillageProfile,
    now: Now,
    limit: int = Query(50, ge=1, le=500),
) -> list[DeadLetterView]:
    if ts is None:
        return []
    rows = ts.dead_letters()[-limit:]
    names = {d.id: d.label or d.id for d in cases.registry.list_devices()}

    def pole(device: str | None, topic: str) -> str:
        sent_as = device or topic_pole(topic)
        if sent_as is None:
            return "unknown pole"
        return names.get(sent_as, f"{sent_as} (not registered)")

    return [
        DeadLetterView(
            received_at_ms=d.received_at_ms, topic=d.topic, device=d.device, reason=d.reason,
            detail=d.detail, bytes=d.payload_len if d.payload_len is not None else len(d.payload),
            received=village_time(_ms(d.received_at_ms) or now, now, profile.zone),
            pole=pole(d.device, d.topic), why=reason_words(d.reason),
        )
        for d in reversed(rows)
    ]  # fmt: skip
