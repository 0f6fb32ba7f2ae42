"""The store's records and the ``TimeSeriesStore`` protocol ingest and readers use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sidewalk.core.contract import (
    AnyReading,
    FrameRef,
    SnowMeasurement,
    Status,
    TimePolicy,
    WeatherReading,
)

# A dead letter keeps this many bytes of its payload (plus length and sha256).
DEAD_LETTER_PREFIX = 4096


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A message that broke the contract.

    The store keeps the first ``dead_letter_prefix`` bytes of ``payload``
    (4 KiB by default: every well-formed reading whole) with the whole
    payload's length and sha256, so a flood of large payloads cannot fill the
    disk. Read back, ``payload`` is that prefix and ``payload_len`` /
    ``payload_sha256`` describe the original.
    """

    received_at_ms: int
    topic: str
    device: str | None
    payload: bytes
    reason: str
    detail: str
    payload_len: int | None = None
    payload_sha256: str | None = None

    @property
    def truncated(self) -> bool:
        """Whether ``payload`` is only a prefix of what was received."""
        return self.payload_len is not None and self.payload_len > len(self.payload)


@dataclass(frozen=True, slots=True)
class SeqGap:
    """Seqs ``from_seq..to_seq`` of ``device`` were never stored.

    ``lost_at_ms`` is set once the device reported it no longer holds them.
    """

    device: str
    from_seq: int
    to_seq: int
    detected_at_ms: int
    lost_at_ms: int | None


@dataclass(frozen=True, slots=True)
class DeviceState:
    """What the store knows of a device's stream and availability.

    ``epoch`` is the device's current seq space (None: a pole without epochs).
    ``clock_faults`` counts its readings quarantined for an implausible time;
    ``clock_fault`` says why the last one was, ``clock_fault_at_ms`` when.
    """

    device: str
    site: str | None
    max_seq: int
    floor_seq: int
    status: str | None
    status_ts_ms: int | None
    last_seen_at_ms: int | None
    epoch: str | None = None
    clock_faults: int = 0
    clock_fault_at_ms: int | None = None
    clock_fault: str | None = None


@dataclass(frozen=True, slots=True)
class SeqSpace:
    """One epoch of a device: stored seq = ``base`` + the pole's seq."""

    device: str
    epoch: str | None
    base: int
    started_at_ms: int
    closed_at_seq: int | None


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """A device's availability message and the site its topic named."""

    site: str
    status: Status


@dataclass(frozen=True, slots=True)
class ExportBatch:
    """Stored readings after a sink's cursor, in commit order, with their device's site."""

    last_id: int
    readings: list[tuple[AnyReading, str | None]]


@dataclass(slots=True)
class BatchResult:
    """What one ``write_batch`` did."""

    stored: list[AnyReading] = field(default_factory=list)
    # Re-sent copies the same as the stored reading, by (device, seq).
    duplicates: list[tuple[str, int]] = field(default_factory=list)
    # Re-sent copies whose content differs: ``seq_conflict`` dead letters, not duplicates.
    conflicts: list[tuple[str, int]] = field(default_factory=list)
    gaps_opened: list[SeqGap] = field(default_factory=list)
    # The watermark for every device the batch touched: stored up to, in the
    # seqs of the device's current epoch, and that epoch.
    watermarks: dict[str, int] = field(default_factory=dict)
    watermark_epochs: dict[str, str | None] = field(default_factory=dict)
    # Readings kept as implausible_time dead letters instead of being stored.
    quarantined: list[AnyReading] = field(default_factory=list)
    # Readings held (acknowledged, kept, neither stored nor quarantined) for their
    # pole's next reading to judge: stamped far ahead of the pole's run, last of
    # the batch. A later batch stores or quarantines them (``TimePolicy.hold``).
    held: list[AnyReading] = field(default_factory=list)
    # (device, epoch, base) of each seq space this batch began.
    epochs_started: list[tuple[str, str | None, int]] = field(default_factory=list)


class TimeSeriesStore(Protocol):
    """What ingest and readers need from a time-series store."""

    def write_batch(
        self,
        readings: Sequence[AnyReading],
        *,
        sites: Mapping[str, str] | None = None,
        statuses: Sequence[StatusUpdate] = (),
        dead_letters: Sequence[DeadLetter] = (),
        received_at_ms: int | None = None,
        time_policy: TimePolicy | None = None,
    ) -> BatchResult:
        """Store everything in one durable transaction."""
        ...

    def stored_up_to(self, device: str) -> int:
        """Highest seq S with every seq 1..S stored or known lost."""
        ...

    def readings(
        self,
        *,
        device: str | None = None,
        stream: str | None = None,
        frontage: str | None = None,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int | None = None,
    ) -> list[AnyReading]:
        """Readings matching every given filter, in event-time order."""
        ...

    def close(self) -> None:
        """Release the store."""
        ...


_READING_MODELS: dict[str, type[WeatherReading] | type[SnowMeasurement] | type[FrameRef]] = {
    "weather": WeatherReading,
    "snow": SnowMeasurement,
    "frame": FrameRef,
}


def _reading_from_json(stream: str, payload: str) -> AnyReading:
    return _READING_MODELS[stream].model_validate_json(payload)
