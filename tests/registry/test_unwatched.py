"""A frontage "not watched yet": its pole's snowfall opens no clock on it, while a
person's case on it (an inspector's obstruction) runs as on any other frontage.

The engine and the registry fold are pure code: unit tests, no services.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import Transition
from sidewalk.analytics.registry import frontage_specs_at
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import FrontageRecord
from sidewalk.storage.cases.records import RegistryEventRecord
from tests.clocks.streams import DEVICE, Pole, storm

CHICAGO = ZoneInfo("America/Chicago")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)


def _frontage(fid: str, watched: bool = True) -> FrontageRecord:
    return FrontageRecord(
        id=fid, site="clyman", parcel_number=fid, street_address=fid, length_ft=66.0,
        zone="residential", owner_id="o", device_id=DEVICE, may_deposit_on_street=False,
        watched=watched,
    )  # fmt: skip


def _event(eid: int, kind: str, fid: str, at: datetime) -> RegistryEventRecord:
    return RegistryEventRecord(
        id=eid, kind=kind, subject=f"frontage:{fid}", effective_at=at,
        detail={"frontage": fid, "watched": kind == "frontage.watched"},
        recorded_by="Pat IT", recorded_at=at,
    )  # fmt: skip


def test_a_storm_opens_no_clock_on_a_frontage_not_watched_yet_but_an_inspectors_case_runs() -> None:
    engine = ClockEngine(
        load_profile(), [FrontageSpec("a", DEVICE), FrontageSpec("b", DEVICE, watched=False)]
    )
    pole = Pole()
    events = engine.feed(storm(pole, ONSET, hours=4))
    opened = {e.frontage for e in events if isinstance(e, Transition) and e.from_state == "idle"}
    assert opened == {"a"}
    assert engine.clocks["b"].state == "idle"

    at = ONSET + timedelta(hours=5)
    detail = {"frontage": "b", "description": "dumpster", "kind": "other", "area": "sidewalk",
              "clear_width_ft": 1}  # fmt: skip
    acted = engine.act(parse_action("record_obstruction", "obs-1", detail, at=at, who="Vogel"))
    assert any(isinstance(e, Transition) and "b" in str(e) for e in acted), acted


def test_the_registry_fold_follows_the_mark_at_its_own_time() -> None:
    marked = datetime(2026, 12, 5, tzinfo=UTC)
    now_unwatched = [_frontage("a"), _frontage("b", watched=False)]
    events = [_event(1, "frontage.unwatched", "b", marked)]

    def watched(at: datetime | None) -> dict[str, bool]:
        return {s.id: s.watched for s in frontage_specs_at(now_unwatched, events, at)}

    assert watched(None) == {"a": True, "b": False}
    assert watched(marked + timedelta(hours=1)) == {"a": True, "b": False}
    assert watched(marked - timedelta(hours=1)) == {"a": True, "b": True}  # before the mark
    again = [*events, _event(2, "frontage.watched", "b", marked + timedelta(days=1))]
    back = {s.id: s.watched for s in frontage_specs_at(
        [_frontage("a"), _frontage("b")], again, marked + timedelta(days=2))}  # fmt: skip
    assert back == {"a": True, "b": True}
