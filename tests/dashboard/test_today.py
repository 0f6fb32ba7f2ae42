"""Today's lists from the records, and the steps a § 370-10 case offers, from the engine.

Today reads each kind of record once: the test counts the SQL statements for a
village, doubles the village, and counts again (no statement per frontage). The
steps a notice shows come from the clock engine's own ``Enforcement`` on a copy
of the case (``casework``): only those it would accept.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import event

from sidewalk.analytics.clocks.states import CaseState
from sidewalk.core.profile import Profile, load_profile
from sidewalk.dashboard.casework import case_now
from sidewalk.dashboard.routes.today import build_today
from sidewalk.storage.cases import ActionRecord, CaseStore, Cause, ClockRecord, ViolationRecord

NOW = datetime(2026, 12, 12, 18, 0, tzinfo=UTC)
STREETS = ("Main St", "Church St", "Oak St", "Elm St")


@pytest.fixture
def cases(tmp_path: Path) -> Iterator[CaseStore]:
    store = CaseStore(f"sqlite:///{tmp_path / 'cases.sqlite3'}")
    store.create_schema()
    store.registry.upsert_device("pole-1", "clyman")
    yield store
    store.close()


def add_block(cases: CaseStore, start: int, count: int) -> None:
    """``count`` frontages, each with something for Today: a notice to serve, a running
    deadline, a review, an abatement, an overdue bill, in turn."""
    for i in range(start, start + count):
        fid, address = f"f-{i:04d}", f"{101 + 2 * i} {STREETS[i % len(STREETS)]}"
        cases.registry.upsert_owner(f"o-{i:04d}", f"Owner {i}", [address, "Clyman, WI 53016"])
        cases.registry.upsert_frontage(
            fid, site="clyman", parcel_number=f"026-{i:04d}", street_address=address,
            length_ft=66, zone="residential", owner_id=f"o-{i:04d}", device_id="pole-1",
        )  # fmt: skip
        cause = Cause(kind="reading", ts=int(NOW.timestamp() * 1000), device="pole-1")
        clock = cases.clocks.open(fid, "clearing", "snowing", NOW - timedelta(hours=30), cause)
        kind = i % 5
        if kind == 1:  # snow stopped: the owner's clearing deadline runs out tonight
            cases.clocks.record_transition(
                clock.id, "clearing_period", NOW - timedelta(hours=6), cause,
                deadline=NOW + timedelta(hours=6),
            )  # fmt: skip
            continue
        if kind == 2:  # the deadline passed and the camera's pictures never came
            cases.clocks.record_transition(
                clock.id, "needs_review", NOW - timedelta(hours=1), cause,
                deadline=NOW - timedelta(hours=3),
            )  # fmt: skip
            continue
        violation = cases.clocks.record_violation(
            f"{fid}:clearing", fid, "snow_and_ice.clearing_deadline", NOW - timedelta(hours=2),
            evidence={"deadline": (NOW - timedelta(hours=2)).isoformat()},
        )  # fmt: skip
        if kind == 0:
            notice = cases.notices.create(
                f"notice/{fid}", "clearing_violation", fid, NOW - timedelta(hours=1),
                violation_id=violation.id,
            )  # fmt: skip
            cases.notices.set_rendered(notice.id, "body", "<p>body</p>")
        elif kind == 3:
            cases.bills.order_abatement(
                f"abate/{fid}", fid, "notice_expired", NOW - timedelta(hours=1),
                violation_id=violation.id,
            )  # fmt: skip
        else:
            abatement = cases.bills.order_abatement(
                f"done/{fid}", fid, "notice_expired", NOW - timedelta(days=40),
                violation_id=violation.id,
            )  # fmt: skip
            cases.bills.complete_abatement(abatement.id, NOW - timedelta(days=39))
            cases.bills.add_expense(abatement.id, Decimal("85"), NOW - timedelta(days=39), "crew")
            bill = cases.bills.create(f"bill/{fid}", abatement.id, NOW - timedelta(days=38))
            due = (NOW - timedelta(days=27)).date()
            cases.bills.set_received(bill.id, NOW - timedelta(days=37), due)


def statements(cases: CaseStore, profile: Profile) -> tuple[int, dict[str, int]]:
    """How many SQL statements one Today costs, and how many lines each list has."""
    seen: list[str] = []
    engine = cases.unit_of_work.engine

    def count(*args: object) -> None:
        if str(args[2]).lstrip().upper().startswith("SELECT"):  # not the transactions' BEGIN
            seen.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", count)
    try:
        today = build_today(cases, profile, NOW)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len(seen), {g.key: len(g.items) for g in today.groups}


def test_today_reads_each_kind_of_record_once_whatever_the_size_of_the_village(
    cases: CaseStore,
) -> None:
    profile = load_profile()
    add_block(cases, 0, 5)
    small, lists = statements(cases, profile)
    assert lists == {"serve": 1, "deadlines": 1, "review": 1, "dispatch": 1, "overdue": 1}
    add_block(cases, 5, 15)
    large, lists = statements(cases, profile)
    assert lists == {"serve": 4, "deadlines": 4, "review": 4, "dispatch": 4, "overdue": 4}
    # Frontages, notices, running clocks, violations, audit rows of two kinds, work orders,
    # open bills with their payments: seven reads; and the parcels' owners of record with
    # the frontages' parcels (a sale after a case's notice): nine, for 5 frontages or 20.
    assert large == small == 9, (small, large)


def test_today_is_in_the_clerks_words(cases: CaseStore) -> None:
    add_block(cases, 0, 5)
    today = build_today(cases, load_profile(), NOW)
    by_key = {g.key: g for g in today.groups}
    serve = by_key["serve"].items[0]
    assert (serve.address, serve.what) == (
        "101 Main St", "Notice to clear snow and ice, not yet served"
    )  # fmt: skip
    assert by_key["deadlines"].items[0].what.startswith("Snow stopped: the owner must clear")
    assert (
        by_key["review"].items[0].what == "Deadline passed: the camera's pictures did not come in"
    )
    assert by_key["dispatch"].items[0].what == (
        "Village to do the work: the owner did not clear it by the deadline in the notice"
    )
    assert by_key["overdue"].items[0].what == "Bill of $85.00: $85.00 unpaid"
    words = " ".join(f"{i.what} {i.todo}" for g in today.groups for i in g.items)
    for internal in ("_", "violation:", "clearing_period", "needs_review", "f-000"):
        assert internal not in words


# -- the steps a case offers (pure: the engine's copy, no store) ---------------------


def violation() -> ViolationRecord:
    return ViolationRecord(
        id=1, key="main-st-105:clearing", frontage_id="main-st-105", clock_id=None,
        rule="snow_and_ice.clearing_deadline", citation="§ 370-10 A", detected_at=NOW,
        evidence={"deadline": NOW.isoformat(), "required_width_mm": 1219.2}, offense_count=1,
        status="open",
    )  # fmt: skip


def clock(state: CaseState, deadline: datetime | None = None) -> ClockRecord:
    return ClockRecord(
        id=9, key="main-st-105/enforcement/main-st-105:clearing", frontage_id="main-st-105",
        kind="enforcement", state=state, started_at=NOW, deadline=deadline, closed_at=None,
        cause=Cause(kind="deadline", ts=int(NOW.timestamp() * 1000)), citation=None, rules=(),
        unconfirmed=False,
    )  # fmt: skip


def action(kind: str, at: datetime, detail: dict[str, str] | None = None) -> ActionRecord:
    return ActionRecord(
        id=1, kind=kind, target="main-st-105:clearing", at=at, who="Pat", detail=detail or {},
        recorded_at=at, applied_at=None, error=None,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("state", "steps"),
    [
        (CaseState.NOTICE_ISSUED, {"record_delivery", "confirm_hazard", "inspected_clear"}),
        (CaseState.NOTICE_PERIOD, {"confirm_hazard", "inspected_clear"}),
        (
            CaseState.HAZARD_NOTICE_ISSUED,
            {"record_delivery", "owner_unavailable", "inspected_clear"},
        ),
        (CaseState.HAZARD_PERIOD, {"inspected_clear"}),
        (CaseState.ABATEMENT_ORDERED, {"abatement_done"}),
        (CaseState.ABATED, {"bill_received", "paid_in_full"}),
        (CaseState.BILLED, {"paid_in_full"}),
        (CaseState.PAID, set()),
        (CaseState.CURED, set()),
    ],
)
def test_370_10_b_to_g_a_case_offers_only_the_steps_its_state_accepts(
    state: CaseState, steps: set[str]
) -> None:
    now = case_now(load_profile(), violation(), clock(state), [], NOW)
    assert set(now.steps) == steps


def test_370_10_b_the_owners_deadline_runs_from_a_service_not_yet_applied() -> None:
    """A service recorded a moment ago counts at once: the copy of the case is in its
    notice period, with the deadline the engine computes from the service."""
    profile = load_profile()
    served = NOW + timedelta(hours=1)
    pending = [action("record_delivery", served, {"method": "posted"})]
    now = case_now(profile, violation(), None, pending, NOW + timedelta(hours=2))
    assert now.state == CaseState.NOTICE_PERIOD
    assert now.owner_deadline == served + profile.snow_and_ice.nonhazard_notice_period.duration
    assert "record_delivery" not in now.steps
    assert now.pending == 1
