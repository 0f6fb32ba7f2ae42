"""§ 370-10 A's ice: was there untreated ice on the walk at the clearing deadline?

"Sidewalks are to be kept clear of snow and ice to a minimum of four feet in
width. In the event that ice has formed on any sidewalk in such a manner that it
cannot be removed, the owner … shall keep the sidewalk sprinkled with sand
and/or salt". A walk cleared to 4 ft with untreated ice on it has not complied:
the width alone never decides it.

What is seen, in event-time order, between the snow's cessation and the deadline:

* the pole (``sensor``): a camera measurement whose ``surface_state`` is wet or
  ice while the pavement is at or below 0 °C (the measurement's own
  ``surface_temp_c``, else the pole's latest weather ``surface_temp_c`` at most
  ``max_age`` before it) is untreated ice; ``treated`` is sand or salt seen on
  it; ``dry`` (or wet above freezing) is a clear surface. The older
  ``ice_suspected`` flag with a freezing surface is ice, treated or not unknown;
* the camera alone (``camera``): ice it suspects with no surface temperature (or
  one above freezing) is only a suspicion;
* an inspector (``inspector``): ``record_ice`` (untreated ice seen) and
  ``record_treated`` (sanded or salted).

The latest observation decides, except that ice whose treatment the camera
cannot tell (``ice_suspected``, a suspicion) does not undo a treatment recorded
before it. The finding says how it was known, with the readings or the person.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sidewalk.analytics.clocks.events import Cause

# Water on pavement at or below this freezes: physics, not an ordinance value.
FREEZING_C = 0.0

Seen = Literal["untreated", "treated", "clear", "ice", "suspected"]
KnownBy = Literal["sensor", "camera", "inspector"]
IceStatus = Literal["untreated", "treated", "suspected"]


@dataclass(frozen=True)
class SurfaceTemp:
    """One pavement temperature from a pole's weather reading."""

    at: datetime
    device: str
    seq: int
    temp_c: float


@dataclass(frozen=True)
class SurfaceSeen:
    """One observation of the walk's surface: what, when, by what, with which readings."""

    at: datetime
    seen: Seen
    known_by: KnownBy
    cause: Cause
    readings: dict[str, Any]


@dataclass(frozen=True)
class IceFinding:
    """The walk's ice at the deadline, and how it was known."""

    status: IceStatus
    known_by: KnownBy
    at: datetime
    cause: Cause
    readings: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """For the clock's history and the violation's evidence."""
        return {
            "status": self.status,
            "known_by": self.known_by,
            "seen_at": self.at.isoformat(),
            "by": self.cause.as_dict(),
            "readings": dict(self.readings),
        }

    def reason(self) -> str:
        """Plain words for a hazard candidate or a review."""
        if self.status == "untreated":
            how = {"sensor": "the pole's sensors", "inspector": "an inspector"}.get(
                self.known_by, "the camera"
            )
            return f"untreated ice on the walk (seen by {how})"
        if self.status == "suspected":
            return "ice suspected on the walk"
        return "ice sanded or salted"


def camera_surface(  # noqa: PLR0911 (one return per thing the camera can say)
    at: datetime,
    device: str,
    seq: int,
    *,
    surface_state: str | None,
    surface_temp_c: float | None,
    ice_suspected: bool,
    pole_temp: SurfaceTemp | None,
) -> SurfaceSeen | None:
    """What one camera measurement says of the surface (None: nothing about it)."""
    if surface_state is None and not ice_suspected:
        return None
    readings: dict[str, Any] = {"camera": {"device": device, "seq": seq, "at": at.isoformat()}}
    if surface_state is not None:
        readings["surface_state"] = surface_state
    if ice_suspected:
        readings["ice_suspected"] = True
    temp: float | None = surface_temp_c
    if temp is not None:
        readings["surface_temp_c"] = temp
    elif pole_temp is not None:
        temp = pole_temp.temp_c
        readings["surface_temp_c"] = temp
        readings["surface_temp"] = {
            "device": pole_temp.device, "seq": pole_temp.seq, "at": pole_temp.at.isoformat(),
        }  # fmt: skip
    freezing = temp is not None and temp <= FREEZING_C
    cause = Cause(kind="reading", at=at, device=device, seq=seq)
    if surface_state == "treated":
        return SurfaceSeen(at, "treated", "sensor", cause, readings)
    if surface_state in ("wet", "ice") and freezing:
        return SurfaceSeen(at, "untreated", "sensor", cause, readings)
    if surface_state == "dry" or (surface_state == "wet" and temp is not None):
        return SurfaceSeen(at, "clear", "sensor", cause, readings)
    if surface_state == "ice" or ice_suspected:
        if freezing:  # the older flag: ice, but whether it was sanded the camera cannot say
            return SurfaceSeen(at, "ice", "sensor", cause, readings)
        return SurfaceSeen(at, "suspected", "camera", cause, readings)
    return None  # wet, temperature unknown: says nothing of ice


def pole_temp_at(
    temps: Sequence[SurfaceTemp], at: datetime, max_age: timedelta
) -> SurfaceTemp | None:
    """The pole's latest pavement temperature at or before ``at``, if recent enough."""
    best = None
    for t in temps:
        if t.at <= at and at - t.at <= max_age and (best is None or t.at >= best.at):
            best = t
    return best


def person_surface(at: datetime, cause: Cause, *, treated: bool) -> SurfaceSeen:
    readings = {"inspector": cause.who, "at": at.isoformat()}
    return SurfaceSeen(at, "treated" if treated else "untreated", "inspector", cause, readings)


def ice_at(observations: Iterable[SurfaceSeen]) -> tuple[IceFinding | None, bool]:
    """The ice status the observations leave, and whether any ice was seen at all."""
    order = {"sensor": 0, "camera": 0, "inspector": 1}  # a person's entry wins a tie
    status: SurfaceSeen | None = None
    seen_ice = False
    for o in sorted(observations, key=lambda o: (o.at, order[o.known_by])):
        if o.seen in ("untreated", "ice", "suspected"):
            seen_ice = True
        if o.seen == "clear":
            status = None
        elif o.seen in ("ice", "suspected") and status is not None and status.seen == "treated":
            continue  # cannot tell treated ice from untreated: the treatment stands
        else:
            status = o
    if status is None:
        return None, seen_ice
    mapped: IceStatus = (
        "treated"
        if status.seen == "treated"
        else "suspected"
        if status.seen == "suspected"
        else "untreated"
    )
    return IceFinding(mapped, status.known_by, status.at, status.cause, status.readings), seen_ice
