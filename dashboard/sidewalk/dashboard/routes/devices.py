"""The poles: availability, what ingest stored of each, seq gaps, and dead letters."""

from __future__ import annotations

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from sidewalk.dashboard.routes.deps import Cases, Reader, TimeSeries, iso
from sidewalk.dashboard.routes.registry import CALIBRATION_WORDS, calibration_state
from sidewalk.storage.cases.records import CameraRecord

router = APIRouter()


class SeqGapView(BaseModel):
    """Seqs ``from``..``to`` never stored: open, or given up by the device (lost)."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)

    from_: int = Field(alias="from")
    to: int
    lost: bool


class DeviceView(BaseModel):
    """A pole; the stream fields come from the time-series store, when there is one."""

    id: str
    site: str
    availability: str
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


@router.get("/devices", tags=["devices"], response_model_exclude_unset=True)
def devices(user: Reader, cases: Cases, ts: TimeSeries) -> list[DeviceView]:
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
            id=d.id, site=d.site, availability=d.availability, last_seen=iso(d.last_seen),
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
        out.append(row)
    return out


@router.get("/dead-letters", tags=["devices"])
def dead_letters(
    user: Reader, ts: TimeSeries, limit: int = Query(50, ge=1, le=500)
) -> list[DeadLetterView]:
    if ts is None:
        return []
    rows = ts.dead_letters()[-limit:]
    return [
        DeadLetterView(
            received_at_ms=d.received_at_ms, topic=d.topic, device=d.device, reason=d.reason,
            detail=d.detail, bytes=d.payload_len if d.payload_len is not None else len(d.payload),
        )
        for d in reversed(rows)
    ]  # fmt: skip
