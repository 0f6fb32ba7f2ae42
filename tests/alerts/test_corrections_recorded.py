"""Corrections as the case records keep them: after every correction, undo and new entry,
the stored clock (state and deadline), the removal order and the clerk's view of the case
equal what the engine's rules give from the corrected facts alone.

The clerk's side is the real one (``record_notice_delivery``, ``correct_entry``); the
runner's side is its loop in miniature (apply the pending actions in order, record the
events, advance to now). The oracle is a fresh engine given only the entries as they
stand. One SQLite database for the module; each test has its own violation.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic import TypeAdapter

from sidewalk.alerts.corrections import correct_entry
from sidewalk.alerts.delivery import record_notice_delivery
from sidewalk.analytics.casework import case_clock_key, case_now, entries, standing
from sidewalk.analytics.clocks.actions import EnforcementAction, parse_action
from sidewalk.analytics.clocks.enforcement import PERIOD_STATES, Enforcement, EnforcementCase
from sidewalk.analytics.clocks.states import CaseState
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.core.profile import Profile, load_profile
from sidewalk.storage.cases import CaseStore, ClockRecord

CHICAGO = ZoneInfo("America/Chicago")
MISSED = datetime(2026, 12, 10, 17, 0, tzinfo=CHICAGO)
SERVED = datetime(2026, 12, 11, 9, 0, tzinfo=CHICAGO)
DAY = timedelta(hours=24)  # the profile's § 370-10 B(2) period (unconfirmed)
HOUR = timedelta(hours=1)
FRONTAGE = "main-101"
_keys = itertools.count(1)
# The runner's snapshot of its cases (``ClockEngine.snapshot``) codes them this way.
SNAPSHOT = TypeAdapter(dict[str, EnforcementCase])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[CaseStore, Profile]]:
    path: Path = tmp_path_factory.mktemp("corrections") / "cases.db"
    cases = CaseStore(f"sqlite:///{path}")
    cases.create_schema()
    cases.registry.upsert_owner("owner-smith", "Jane Smith", ["101 Main St", "Clyman, WI"])
    cases.registry.upsert_device("pole-1", "clyman")
    cases.registry.upsert_frontage(
        FRONTAGE, site="clyman", parcel_number="026-0915-0001", street_address="101 Main St",
        length_ft=66.0, zone="residential", owner_id="owner-smith", device_id="pole-1",
    )  # fmt: skip
    yield cases, load_profile()
    cases.close()


@dataclass
class Desk:
    """One violation: the clerk records, the runner applies, the records are compared."""

    cases: CaseStore
    profile: Profile
    key: str
    engine: Enforcement
    recorder: CaseRecorder
    notice_id: int
    ticks: list[tuple[datetime, list[int]]] = field(default_factory=list)

    # -- the clerk ---------------------------------------------------------------

    def serve(self, at: datetime) -> None:
        record_notice_delivery(self.cases, self.notice_id, at, "Pat Clerk", "hand",
                               profile=self.profile)  # fmt: skip

    def step(self, kind: str, at: datetime) -> None:
        self.cases.actions.record(kind, self.key, at, "Crew Chief", {})

    def correct(self, kind: str, *, at: datetime | None = None, undo: bool = False) -> None:
        [entry] = [e for e in entries(self.cases.actions.list(self.key)) if e.kind == kind
                   and not e.undone]  # fmt: skip
        notice = self.cases.notices.get(self.notice_id)
        correct_entry(self.cases, self.profile, notice, entry.id, who="Pat Clerk",
                      reason="entered wrongly", at=at, undo=undo)  # fmt: skip

    # -- the runner --------------------------------------------------------------

    def tick(self, now: datetime) -> None:
        """Apply what was recorded, advance to ``now``, then check the records; then a
        restart from the snapshot (the case as the runner saves and restores it)."""
        pending = [a.id for a in self.cases.actions.pending() if a.target == self.key]
        self._run(self.engine, now, pending)
        for action_id in pending:
            self.cases.actions.mark_applied(action_id)
        self.ticks.append((now, pending))
        self.check(now)
        self.engine.load(SNAPSHOT.validate_json(SNAPSHOT.dump_json(self.engine.cases)))

    def _run(self, engine: Enforcement, now: datetime, action_ids: list[int]) -> None:
        for action_id in action_ids:
            a = self.cases.actions.get(action_id)
            action = parse_action(a.kind, a.target, a.detail, at=a.at, who=a.who)
            assert isinstance(action, EnforcementAction)
            self.recorder.record(engine.act(action))
        self.recorder.record(engine.advance(now))

    def replay(self) -> None:
        """The runner replaying it all after a crash: the same events, nothing stored twice."""
        clock = self.clock()
        before = self.cases.clocks.history(clock.id)
        again = Enforcement(self.profile)
        again.open(self.key, FRONTAGE, MISSED, 1219.2, MISSED)
        for now, action_ids in self.ticks:
            self._run(again, now, action_ids)
        assert self.cases.clocks.history(clock.id) == before
        assert self.clock() == clock

    def clock(self) -> ClockRecord:
        [clock] = [c for c in self.cases.clocks.list(frontage_id=FRONTAGE, kind="enforcement")
                   if c.key == f"{FRONTAGE}/enforcement/{self.key}"]  # fmt: skip
        return clock

    # -- the comparison ----------------------------------------------------------

    def oracle(self, now: datetime) -> Enforcement:
        """A fresh engine given only the entries as they stand (corrected, undone ones out)."""
        fresh = Enforcement(self.profile)
        fresh.open(self.key, FRONTAGE, MISSED, 1219.2, MISSED)
        facts = self.cases.actions.list(self.key)
        service, done = standing(facts, "record_delivery"), standing(facts, "abatement_done")
        for entry in (service, done):
            if entry is not None:
                fresh.advance(entry.at)
                fresh.act(self._action(entry.kind, entry.at, entry.method))
        fresh.advance(now)
        return fresh

    def _action(self, kind: str, at: datetime, method: str | None) -> EnforcementAction:
        detail = {"method": method} if method else {}
        action = parse_action(kind, self.key, detail, at=at, who="oracle")
        assert isinstance(action, EnforcementAction)
        return action

    def check(self, now: datetime) -> None:
        want = self.oracle(now).cases[self.key]
        clock = self.clock()
        assert clock.state == want.state
        if want.state in PERIOD_STATES | {CaseState.NOTICE_ISSUED, CaseState.ABATEMENT_ORDERED}:
            assert clock.deadline == want.notice_deadline
        order = self.cases.bills.abatement_by_key(f"{self.key}/abatement")
        if want.state == CaseState.ABATEMENT_ORDERED:
            assert order is not None
            assert (order.status, order.ordered_at) == ("ordered", want.notice_deadline)
        elif want.state == CaseState.ABATED:
            assert order is not None
            assert (order.status, order.completed_at) == ("completed", want.costs_incurred_at)
        else:
            assert order is None or order.status == "withdrawn"
        # The violation is open until the crew's completion stands (then abated).
        violation = self.cases.clocks.get_violation(self.notice_violation)
        assert violation.status == ("abated" if want.state == CaseState.ABATED else "open")
        # The clerk's view of the case (the dashboard's, ``sidewalk act``'s) agrees too.
        seen = case_now(self.profile, violation, clock, self.cases.actions.list(self.key), now)
        owner = want.notice_deadline if want.state in PERIOD_STATES else None
        assert (seen.state, seen.owner_deadline) == (want.state, owner)

    @property
    def notice_violation(self) -> int:
        violation_id = self.cases.notices.get(self.notice_id).violation_id
        assert violation_id is not None
        return violation_id


@pytest.fixture
def desk(store: tuple[CaseStore, Profile]) -> Desk:
    cases, profile = store
    key = f"violation-{next(_keys)}"
    violation = cases.clocks.record_violation(
        key, FRONTAGE, "clearing_deadline", MISSED,
        evidence={"deadline": MISSED.isoformat(), "required_width_mm": 1219.2},
    )  # fmt: skip
    notice = cases.notices.create(f"{key}/clearing_violation", "clearing_violation", FRONTAGE,
                                  MISSED, violation_id=violation.id)  # fmt: skip
    cases.notices.set_rendered(notice.id, "Notice of violation")
    engine = Enforcement(profile)
    engine.open(key, FRONTAGE, MISSED, 1219.2, MISSED)
    assert case_clock_key(violation) == f"{FRONTAGE}/enforcement/{key}"
    return Desk(cases, profile, key, engine, CaseRecorder(cases, profile), notice.id)


def test_370_10_f_a_service_corrected_back_after_its_period_ran_out_orders_removal_again(
    desk: Desk,
) -> None:
    """Served 9 AM; the period ran out at 9 AM the next day and removal was ordered. Corrected
    to noon (withdrawn, the period runs to noon), then back to 9 AM, the time it was first
    corrected away from: that period has run out, so removal stands ordered from 9 AM again.
    Then once more to noon, after noon has passed too: ordered from noon."""
    desk.serve(SERVED)
    desk.tick(SERVED + HOUR)
    desk.tick(SERVED + DAY + HOUR)  # ran out at SERVED + DAY: ordered
    desk.correct("record_delivery", at=SERVED + 3 * HOUR)
    desk.tick(SERVED + DAY + 2 * HOUR)  # the corrected period runs to noon: withdrawn
    desk.correct("record_delivery", at=SERVED)
    desk.tick(SERVED + DAY + 2 * HOUR)
    desk.correct("record_delivery", at=SERVED + 3 * HOUR)
    desk.tick(SERVED + DAY + 5 * HOUR)
    desk.replay()


def test_370_10_f_a_service_undone_then_entered_again_at_the_same_time_runs_its_period(
    desk: Desk,
) -> None:
    """Undone as entered on the wrong notice, then entered again at the same time (it was
    this notice after all): the period ran out then, so removal is ordered again."""
    desk.serve(SERVED)
    desk.tick(SERVED + DAY + HOUR)
    desk.correct("record_delivery", undo=True)
    desk.tick(SERVED + DAY + 2 * HOUR)
    desk.serve(SERVED)
    desk.tick(SERVED + DAY + 2 * HOUR)
    desk.correct("record_delivery", undo=True)
    desk.tick(SERVED + DAY + 3 * HOUR)
    desk.serve(SERVED + 4 * HOUR)
    desk.tick(SERVED + DAY + 3 * HOUR)


def test_370_10_g_the_crews_completion_corrected_twice_and_undone_then_entered_again(
    desk: Desk,
) -> None:
    """The costs' date follows the completion as it stands; each correction is on the
    clock's history, however often the same time comes back."""
    done = SERVED + 2 * DAY
    desk.serve(SERVED)
    desk.tick(SERVED + DAY + HOUR)
    desk.step("abatement_done", done)
    desk.tick(done + HOUR)
    desk.correct("abatement_done", at=done + DAY)
    desk.tick(done + DAY + HOUR)
    desk.correct("abatement_done", at=done)
    desk.tick(done + DAY + HOUR)
    desk.correct("abatement_done", undo=True)
    desk.tick(done + DAY + HOUR)
    desk.step("abatement_done", done)
    desk.tick(done + DAY + 2 * HOUR)
    corrected = [t for t in desk.cases.clocks.history(desk.clock().id) if "corrects" in t.detail]
    assert len(corrected) == 3  # to the next day, back, undone
