"""The frontages the clocks watch, from the registry, at any moment of event time.

The registry changes while analytics runs (a frontage added, a pole
reassigned, a parcel gone), and each change carries its own effective time
(``registry_events``). The engine's frontage set at event time ``t`` is a
fold of those events up to ``t`` over the registry's frontages, so a live run
(which applies a change once the wall clock passes it) and a replay through
the broker (which applies it once the readings' event time passes it) watch
the same frontages at the same moments and decide the same notices.

Frontages registered before the registry kept events (or seeded by a
scenario) have no ``frontage.added`` event: they are watched from the start.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from datetime import datetime

from sidewalk.analytics.clocks.engine import FrontageSpec
from sidewalk.storage.cases import CaseStore, FrontageRecord
from sidewalk.storage.cases.records import RegistryEventRecord

# The events that change which pole a frontage listens to, or whether it is watched.
_FRONTAGE_EVENTS = frozenset(
    {"frontage.added", "frontage.changed", "frontage.retired", "pole.assigned",
     "frontage.watched", "frontage.unwatched"}
)  # fmt: skip


def _spec(f: FrontageRecord, device: str | None, watched: bool) -> FrontageSpec | None:
    if device is None:
        return None
    return FrontageSpec(
        f.id, device, zone=f.zone, may_deposit_on_street=f.may_deposit_on_street,
        watched=watched,
    )  # fmt: skip


def frontage_specs_at(
    frontages: Iterable[FrontageRecord],
    events: Sequence[RegistryEventRecord],
    at: datetime | None,
    *,
    site: str | None = None,
) -> list[FrontageSpec]:
    """The watched frontages at event time ``at`` (``None``: as the registry stands now).

    A frontage is watched from its ``frontage.added`` event (always, if it has
    none) until its retirement, by the pole of the latest assignment effective
    by ``at`` (the registry's current pole when none is yet). A frontage marked
    "not watched yet" by ``at`` is there for the cases a person enters, but its
    pole's snowfall opens no clock on it."""
    history: dict[str, list[RegistryEventRecord]] = {}
    for e in sorted(events, key=lambda e: (e.effective_at, e.id)):
        fid = e.detail.get("frontage")
        if e.kind in _FRONTAGE_EVENTS and isinstance(fid, str):
            history.setdefault(fid, []).append(e)
    specs: list[FrontageSpec] = []
    for f in sorted(frontages, key=lambda f: f.id):
        if site is not None and f.site != site:
            continue
        if f.retired_at is not None and (at is None or f.retired_at <= at):
            continue
        device, watched = f.device_id, f.watched
        if at is not None:
            past = [e for e in history.get(f.id, []) if e.effective_at <= at]
            added = [e for e in history.get(f.id, []) if e.kind == "frontage.added"]
            if added and added[0].effective_at > at:
                continue  # not yet in the registry at this moment
            assigned = [e for e in past if e.kind != "frontage.retired" and "pole" in e.detail]
            if assigned:
                pole = assigned[-1].detail["pole"]
                device = pole if isinstance(pole, str) else None
            marked = [e for e in past if e.kind in {"frontage.watched", "frontage.unwatched"}]
            # Before its first mark a frontage was as that mark changed it from.
            first = [e for e in history.get(f.id, []) if "watched" in e.detail]
            if marked:
                watched = marked[-1].kind == "frontage.watched"
            elif first:
                watched = first[0].kind != "frontage.watched"
        spec = _spec(f, device, watched)
        if spec is not None:
            specs.append(spec)
    return specs


def frontage_specs(cases: CaseStore, site: str | None = None) -> list[FrontageSpec]:
    """Every frontage watched now, and the pole whose weather tells its snowfall."""
    return frontage_specs_at(cases.registry.list_frontages(site=site), (), None)


class RegistryWatch:
    """What a runner needs to follow the registry: the frontages at any event time,
    and the moments at which that set changes (the change times still ahead)."""

    def __init__(self, cases: CaseStore, site: str | None) -> None:
        self._cases = cases
        self._site = None if site in (None, "+") else site
        self.last_event_id = 0
        self._frontages: list[FrontageRecord] = []
        self._events: list[RegistryEventRecord] = []
        self._times: list[datetime] = []

    def refresh(self) -> bool:
        """Read the registry's new events (the log is append-only), and its frontages
        again if there were any; True if there were."""
        new = self._cases.registry.events_since(self.last_event_id, limit=1_000_000)
        if not new and self._frontages:
            return False
        self._frontages = self._cases.registry.list_frontages(include_retired=True)
        self._events += [e for e in new if e.kind in _FRONTAGE_EVENTS]
        times = {e.effective_at for e in self._events}
        times.update(f.retired_at for f in self._frontages if f.retired_at is not None)
        self._times = sorted(times)
        if new:
            self.last_event_id = new[-1].id
        return bool(new)

    def specs_at(self, at: datetime | None) -> list[FrontageSpec]:
        return frontage_specs_at(self._frontages, self._events, at, site=self._site)

    def next_change_after(self, at: datetime | None) -> datetime | None:
        """The first moment after ``at`` at which the watched set may change."""
        if at is None:
            return self._times[0] if self._times else None
        i = bisect.bisect_right(self._times, at)
        return self._times[i] if i < len(self._times) else None
