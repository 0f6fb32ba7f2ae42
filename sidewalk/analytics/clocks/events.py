"""What the clock engine says: transitions and decisions, each with its cause."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

CauseKind = Literal["reading", "frame", "person", "deadline"]


@dataclass(frozen=True)
class Cause:
    """Why a transition happened: a reading (device, seq), a person, or a deadline passing."""

    kind: CauseKind
    at: datetime
    device: str | None = None
    seq: int | None = None
    who: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "at": self.at.isoformat(),
            "device": self.device,
            "seq": self.seq,
            "who": self.who,
        }


@dataclass(frozen=True)
class Transition:
    """A clock moved from one state to another at an event time."""

    frontage: str
    clock: str
    from_state: str
    to_state: str
    at: datetime
    cause: Cause
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClearingViolation:
    """§ 370-10 A not met at the deadline: the basis for a written notice.

    ``key`` identifies the decision: the same storm and frontage always give the
    same key, so a replay or a restart can never make a second notice.
    """

    key: str
    frontage: str
    rule: str
    citation: str
    cessation_at: datetime
    deadline: datetime
    decided_at: datetime
    required_width_mm: float
    measured_width_mm: float | None
    measured_at: datetime | None
    measured_by: str | None
    measured_seq: int | None
    snow_depth_peak_mm: float | None
    unconfirmed: bool
    history: tuple[Transition, ...]


@dataclass(frozen=True)
class ClearingUnverified:
    """The deadline passed with no fresh camera measurement: an inspector must look."""

    key: str
    frontage: str
    deadline: datetime
    last_measured_at: datetime | None


Event = Transition | ClearingViolation | ClearingUnverified
