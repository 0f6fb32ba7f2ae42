"""The lean reads behind the busiest pages (``cases.pages``): the same answers as the whole
records give, in a number of queries that does not grow with the village.

The module shares one SQLite store (migrating one costs seconds); each test writes
frontages of its own and asks only about what does not depend on the others'. The
random clock histories and the property's records are written in one transaction
straight through the ORM (the repositories' one write per call would cost seconds).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import event

from sidewalk.analytics.clocks.enforcement import ENFORCEMENT
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.auth import User
from sidewalk.dashboard.casework import case_clock_key
from sidewalk.dashboard.live import LiveFeed
from sidewalk.dashboard.routes.deps import DashboardContext
from sidewalk.dashboard.routes.overview import (
    OverviewPage,
    frontage_map,
    overview,
    overview_page_data,
)
from sidewalk.dashboard.routes.property import property_page
from sidewalk.dashboard.routes.today import case_key
from sidewalk.dashboard.routes.views import deciding_clocks
from sidewalk.storage import models as m
from sidewalk.storage.cases import CaseStore, Cause, ViolationRecord
from sidewalk.storage.cases.pages import ViolationKey

NOW = datetime(2026, 12, 12, 18, 0, tzinfo=UTC)
CLERK = User(username="pat", role="clerk", csrf_token="-", token_hash="-")
CAUSE = Cause(kind="reading", ts=int(NOW.timestamp() * 1000), device="pole-1")


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CaseStore]:
    store = CaseStore(f"sqlite:///{tmp_path_factory.mktemp('pages') / 'cases.sqlite3'}")
    store.create_schema()
    store.registry.upsert_device("pole-1", "clyman")
    yield store
    store.close()


def statements(cases: CaseStore, read: Callable[[], Any]) -> int:
    """How many SQL statements ``read`` costs (not the transactions' BEGIN)."""
    seen: list[str] = []

    def count(*args: object) -> None:
        if str(args[2]).lstrip().upper().startswith("SELECT"):
            seen.append(str(args[2]))

    engine = cases.unit_of_work.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        read()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len(seen)


def add_frontages(
    cases: CaseStore, prefix: str, *, start: int, count: int, clocks: int, seed: int
) -> None:
    """``count`` frontages, each with up to ``clocks`` clocks of random kinds, open or
    closed, in random start order: one write transaction."""
    rng = random.Random(seed)
    ids = [f"{prefix}-{i:03d}" for i in range(start, start + count)]
    with cases.unit_of_work.write() as session:
        session.add_all(
            m.Owner(
                id=f"o-{f}",
                name=f"Owner {f}",
                address_lines=[f"{f} Elm St"],
                email=None,
                updated_at=NOW,
            )
            for f in ids
        )
        session.flush()
        session.add_all(
            m.Frontage(
                id=f,
                site="clyman",
                parcel_number=f"026-{f}",
                street_address=f"{n} Elm St",
                length_ft=66.0,
                zone="residential",
                owner_id=f"o-{f}",
                device_id="pole-1",
            )
            for n, f in enumerate(ids, start=100)
        )
        session.flush()
        for fid in ids:
            for n in range(rng.randint(0, clocks)):
                kind = rng.choice((ENFORCEMENT, "clearing", "clearing", "keep_off"))
                started = NOW - timedelta(hours=rng.randint(0, 3) * 10)  # ties on purpose
                session.add(m.Clock(
                    idempotency_key=f"{fid}/{n}", frontage_id=fid, kind=kind,
                    state=rng.choice(("snowing", "clearing_period", "notice_period")),
                    started_at=started, deadline=NOW + timedelta(hours=n) if n % 2 else None,
                    closed_at=None if rng.random() < 0.4 else started + timedelta(hours=1),
                    cause=CAUSE.to_json(), citation=None, rules=[], unconfirmed=False,
                ))  # fmt: skip


def test_the_clocks_read_for_colours_decide_as_the_whole_history_does(cases: CaseStore) -> None:
    add_frontages(cases, "d", start=0, count=100, clocks=6, seed=15)
    history = cases.clocks.list()
    whole = {f: c.id for f, c in deciding_clocks(history).items()}
    lean = cases.pages.map(case_kind=ENFORCEMENT).deciding
    assert {f: c.id for f, c in deciding_clocks(lean).items()} == whole
    # Past clocks no later one of theirs can lose to are not read at all.
    assert len(lean) < len(history)
    # The Overview reads the running clocks in the same query: the colours are the same.
    rows = cases.pages.overview(
        case_kind=ENFORCEMENT, owners=False, alert_actions=(), alert_window=400
    )
    assert {f: c.id for f, c in deciding_clocks(rows.deciding).items()} == whole
    assert [c.id for c in rows.running] == [c.id for c in history if c.active]


def test_overview_and_map_cost_the_same_queries_for_any_village_size(cases: CaseStore) -> None:
    profile = load_profile()
    context = DashboardContext(cases, None, profile, lambda: NOW)

    def pages() -> None:
        overview(CLERK, cases, profile, NOW, context)
        frontage_map(CLERK, cases, {})

    add_frontages(cases, "s", start=0, count=5, clocks=3, seed=1)
    small = statements(cases, pages)
    add_frontages(cases, "s", start=5, count=40, clocks=3, seed=2)
    large = statements(cases, pages)
    # Overview: frontages with owners, the clocks (deciding and running), alerts; the map:
    # frontages, deciding clocks, stored lines.
    assert small == large == 6, (small, large)


def test_the_overview_page_is_what_overview_and_map_say_in_one_lean_response(
    cases: CaseStore,
) -> None:
    """``/overview/page`` (the page's one request): the rows, colours, deadlines and shapes
    of ``/overview`` and ``/map``, only the fields drawn, in five reads for any size."""
    profile = load_profile()
    context = DashboardContext(cases, None, profile, lambda: NOW)
    page: dict[str, Any] = {}

    def read() -> None:
        page.update(overview_page_data(
            True, cases=cases, profile=profile, now=NOW, context=context, geometry_file={}
        ))  # fmt: skip

    add_frontages(cases, "o", start=0, count=5, clocks=3, seed=3)
    small = statements(cases, read)
    add_frontages(cases, "o", start=5, count=40, clocks=3, seed=4)
    large = statements(cases, read)
    # Frontages with owners, the clocks (deciding and running), alerts; the stored lines
    # (with the frontages they are drawn for).
    assert small == large == 5, (small, large)
    page = json.loads(json.dumps(page))  # as sent
    OverviewPage.model_validate(page)
    whole = overview(CLERK, cases, profile, NOW, context)
    assert page["frontages"] == [
        {"id": f.id, "address": f.address, "kind": f.clock_kind, "state": f.state,
         "category": f.category, "deadline": f.deadline,
         "owner": f.owner.name if f.owner else None}
        for f in whole.frontages
    ]  # fmt: skip
    assert page["clocks"] == [
        {"id": c.id, "frontage": c.frontage, "address": c.address, "kind": c.kind,
         "state": c.state, "category": c.category, "deadline": c.deadline,
         "unconfirmed": c.unconfirmed}
        for c in whole.clocks
    ]  # fmt: skip
    assert page["counts"] == whole.counts
    drawn = frontage_map(CLERK, cases, {})
    assert page["shapes"] == [
        {"id": f.id, "category": f.properties.category, "geometry": f.geometry}
        for f in drawn.features
    ]
    assert page["streets"] == [s.model_dump() for s in drawn.streets]


def test_a_property_page_costs_the_same_queries_whatever_its_frontages_and_bills(
    cases: CaseStore,
) -> None:
    reg = cases.registry
    reg.upsert_owner("o-1", "Olga Owner", ["1 Elm St"])
    reg.upsert_parcel("P-1", tax_parcel_id="T-1", site_address="1 Elm St", source="t", who="t")
    reg.set_owner_of_record("P-1", "o-1", NOW - timedelta(days=9), source="t", who="t")

    def frontage_with_a_paid_bill(fid: str) -> None:
        """A frontage of the parcel with a clock, a notice and a bill paid twice."""
        with cases.unit_of_work.write() as session:
            session.add(m.Frontage(
                id=fid, site="clyman", parcel_number="T-1", street_address=f"{fid} Elm St",
                length_ft=66.0, zone="residential", owner_id="o-1", device_id="pole-1",
                parcel_id="P-1",
            ))  # fmt: skip
            session.flush()
            session.add(m.Clock(
                idempotency_key=f"c/{fid}", frontage_id=fid, kind="clearing", state="snowing",
                started_at=NOW, deadline=None, closed_at=None, cause=CAUSE.to_json(),
                citation=None, rules=[], unconfirmed=False,
            ))  # fmt: skip
            session.add(m.Notice(
                number=f"CLY-2026-{fid}", idempotency_key=f"n/{fid}", kind="clearing_violation",
                violation_id=None, frontage_id=fid, owner_id="o-1", owner_name="Olga Owner",
                owner_address_lines=["1 Elm St"], issued_at=NOW, deadline=None, citation=None,
                rules=[], detail={}, body_text=None, body_html=None, status="pending",
                rendered_at=None, delivered_at=None, received_at=None,
            ))  # fmt: skip
            work = m.Abatement(
                idempotency_key=f"a/{fid}", frontage_id=fid, violation_id=None, notice_id=None,
                reason="notice_expired", ordered_at=NOW, completed_at=NOW, status="completed",
                detail={},
            )  # fmt: skip
            session.add(work)
            session.flush()
            bill = m.Bill(
                idempotency_key=f"b/{fid}", abatement_id=work.id, frontage_id=fid,
                owner_name="Olga Owner", owner_address_lines=["1 Elm St"],
                amount=Decimal("85.00"), costs_incurred_at=NOW, issued_at=NOW,
                received_at=None, due_date=None, status="open",
            )  # fmt: skip
            session.add(bill)
            session.flush()
            for n in range(2):
                session.add(m.Payment(
                    idempotency_key=f"p/{fid}/{n}", bill_id=bill.id, amount=Decimal("10.00"),
                    paid_at=NOW + timedelta(minutes=n), method="cash", reference=None,
                ))  # fmt: skip

    def page() -> Any:
        return property_page(
            cases, "P-1", user=CLERK, geometry_file={}, timeseries=None, evidence=None,
            zone="America/Chicago", now=NOW,
        )  # fmt: skip

    frontage_with_a_paid_bill("1")
    one = statements(cases, page)
    frontage_with_a_paid_bill("3")
    frontage_with_a_paid_bill("5")
    three = statements(cases, page)
    assert [len(b.payments) for b in page().bills] == [2, 2, 2]
    assert one == three, (one, three)


def test_the_live_feed_reads_a_burst_of_transitions_in_two_queries(cases: CaseStore) -> None:
    add_frontages(cases, "l", start=0, count=3, clocks=0, seed=3)
    feed = LiveFeed(cases)
    feed._marks = cases.dashboard.marks()
    clocks = [cases.clocks.open(f"l-{i:03d}", "clearing", "snowing", NOW, CAUSE) for i in range(3)]
    at, deadline = NOW + timedelta(minutes=5), NOW + timedelta(hours=12)
    moved = [
        cases.clocks.record_transition(c.id, "clearing_period", at, CAUSE, deadline=deadline)
        for c in clocks
    ]
    cases.audit.append("analytics", "hazard.candidate", "violation:l-000:clearing", {})
    events: list[dict[str, Any]] = []
    # Two marks, then the transitions with their clocks, the running clocks (for their
    # rows, as a reload draws them) and the audit rows: five reads.
    assert statements(cases, lambda: events.extend(feed._poll())) == 5
    transitions = [e for e in events if e["type"] == "transition"]
    assert [e["id"] for e in transitions] == [t.id for t in moved]
    first = {k: v for k, v in transitions[0].items() if k != "detected_ms"}
    assert first == {
        "type": "transition", "id": moved[0].id, "clock_id": clocks[0].id,
        "clock_kind": "clearing", "frontage": "l-000", "from": "snowing",
        "to": "clearing_period", "category": "clearing", "at": moved[0].at.isoformat(),
        "deadline": (NOW + timedelta(hours=12)).isoformat(), "active": True, "cause": "reading",
        "clock": {
            "id": clocks[0].id, "frontage": "l-000", "address": None, "kind": "clearing",
            "state": "clearing_period", "category": "clearing",
            "deadline": (NOW + timedelta(hours=12)).isoformat(), "unconfirmed": False,
        },
    }  # fmt: skip
    (alert,) = [e for e in events if e["type"] == "audit"]
    assert (alert["action"], alert["alert"]) == ("hazard.candidate", True)
    assert feed._poll() == []  # nothing new: the marks alone


def test_today_ties_a_case_to_its_clock_by_the_recorders_key() -> None:
    record = ViolationRecord(
        id=1, key="main-st-105:clearing", frontage_id="main-st-105", clock_id=None,
        rule="snow_and_ice.clearing_deadline", citation=None, detected_at=NOW, evidence={},
        offense_count=1, status="open",
    )  # fmt: skip
    lean = ViolationKey(record.id, record.key, record.frontage_id)
    assert case_key(lean) == case_clock_key(record)
