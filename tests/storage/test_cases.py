"""Case records on SQLite and on a real PostgreSQL (every test runs on both)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from sidewalk.core.profile import Rule
from sidewalk.storage.cases import (
    KEEP,
    MIGRATIONS_DIR,
    BillingError,
    CaseStore,
    CaseStoreError,
    Cause,
    ClockStateError,
    NotFoundError,
    RuleUse,
)
from sidewalk.storage.models import Base
from tests.storage.conftest import T0

T = TypeVar("T")
CHICAGO = ZoneInfo("America/Chicago")
TABLES = {
    "owners", "devices", "frontages", "clocks", "clock_transitions", "violations",
    "notice_counters", "notices", "deliveries", "abatements", "expenses", "bills",
    "payments", "tax_roll_entries", "audit_log",
}  # fmt: skip


def ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def reading_cause(at: datetime, seq: int = 1) -> Cause:
    return Cause(kind="reading", ts=ms(at), device="pole-1", seq=seq)


def raw_execute(store: CaseStore, sql: str, **params: Any) -> list[Any]:
    """Run SQL behind the store's back (to tamper, or to look at stored bytes)."""
    return raw_execute_url(store.url, sql, **params)


def raw_execute_url(url: str, sql: str, **params: Any) -> list[Any]:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            result = conn.execute(text(sql), params)
            return list(result) if result.returns_rows else []
    finally:
        engine.dispose()


def in_threads(count: int, work: Callable[[int], T]) -> list[T]:
    """Run ``work(i)`` on ``count`` threads started together; re-raise any failure."""
    barrier = threading.Barrier(count)
    results: list[T | None] = [None] * count
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if errors:
        raise errors[0]
    return [r for r in results if r is not None]


# ---------------------------------------------------------------- schema


def test_migrations_apply_from_empty_and_match_the_models(empty_store: CaseStore) -> None:
    engine = create_engine(empty_store.url)
    try:
        assert TABLES.isdisjoint(inspect(engine).get_table_names())
        empty_store.create_schema()
        empty_store.create_schema()  # a second upgrade is a no-op
        assert set(inspect(engine).get_table_names()) >= TABLES
        with engine.connect() as conn:
            head = ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()
            assert conn.scalar(text("SELECT version_num FROM alembic_version")) == head
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            # The hand-reviewed migration must create exactly what the models declare.
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


def test_sqlite_runs_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    store = CaseStore(f"sqlite:///{tmp_path / 'cases.db'}")
    try:
        store.create_schema()
        # WAL is a property of the file: any connection sees it.
        assert raw_execute(store, "PRAGMA journal_mode") == [("wal",)]
        store.registry.upsert_owner("o", "O", ["x"])
        # While another writer holds the write lock, reads go on and writes wait.
        writer = sqlite3.connect(
            tmp_path / "cases.db", isolation_level=None, check_same_thread=False
        )
        writer.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        assert store.registry.get_owner("o").name == "O"
        assert time.monotonic() - started < 1
        threading.Timer(0.5, writer.commit).start()
        store.registry.upsert_owner("o", "Owen", ["x"])
        assert time.monotonic() - started >= 0.5
        writer.close()
    finally:
        store.close()


def test_database_enforces_foreign_keys(case_store: CaseStore) -> None:
    # Only the database checks violation_id; on SQLite that needs PRAGMA foreign_keys.
    with pytest.raises(CaseStoreError, match=r"(?i)foreign key"):
        case_store.notices.create("k", "clearing_violation", "main-101", T0, violation_id=999)
    assert case_store.notices.list() == []


def test_apscheduler_job_store_shares_the_database(case_store: CaseStore) -> None:
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.background import BackgroundScheduler

    scheduler = BackgroundScheduler(jobstores={"default": SQLAlchemyJobStore(url=case_store.url)})
    scheduler.start(paused=True)
    try:
        scheduler.add_job(print, "date", run_date=T0 + timedelta(days=3650), id="deadline-1")
        assert scheduler.get_job("deadline-1") is not None
    finally:
        scheduler.shutdown(wait=False)
    # A later upgrade must leave APScheduler's table alone.
    case_store.create_schema()
    rows = raw_execute(case_store, "SELECT id FROM apscheduler_jobs")
    assert [r[0] for r in rows] == ["deadline-1"]
    # The store's own job store (its engine, its password) sees the same job.
    assert [job.id for job in case_store.job_store().get_all_jobs()] == ["deadline-1"]


def test_password_is_used_but_kept_out_of_the_url() -> None:
    # No connection is made: the engine is lazy. Trust auth in the harness could not tell anyway.
    store = CaseStore("postgresql://sidewalk@127.0.0.1:1/cases", password="pw-secret")
    assert "pw-secret" not in store.url
    assert store.url.startswith("postgresql+psycopg://sidewalk:")
    assert store.unit_of_work.engine.url.password == "pw-secret"
    store.close()


@pytest.mark.services
def test_harness_runs_a_real_postgresql_15(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql+psycopg://")
    version = raw_execute_url(postgres_url, "SHOW server_version")[0][0]
    assert version.startswith("15.")


# ---------------------------------------------------------------- owners, frontages, devices


def test_frontage_and_owner_round_trip(case_store: CaseStore) -> None:
    frontage = case_store.registry.get_frontage("main-101")
    assert frontage.parcel_number == "026-0915-0001"
    assert frontage.zone == "residential"
    assert frontage.device_id == "pole-1"
    assert frontage.may_deposit_on_street is False

    case_store.registry.upsert_owner(
        "owner-jones", "Al Jones", ["PO Box 7", "Juneau, WI 53039"], "al@x.org"
    )
    updated = case_store.registry.upsert_frontage(
        "main-101", site="clyman", parcel_number="026-0915-0001", street_address="101 Main St",
        length_ft=70.5, zone="commercial", owner_id="owner-jones", may_deposit_on_street=True,
    )  # fmt: skip
    assert updated == case_store.registry.get_frontage("main-101")
    assert (updated.owner_id, updated.device_id, updated.length_ft) == ("owner-jones", None, 70.5)
    assert case_store.registry.get_owner("owner-jones").address_lines == (
        "PO Box 7",
        "Juneau, WI 53039",
    )
    assert [f.id for f in case_store.registry.list_frontages(site="clyman")] == ["main-101"]
    assert case_store.registry.list_frontages(site="elsewhere") == []

    with pytest.raises(NotFoundError):
        case_store.registry.upsert_frontage(
            "main-103", site="clyman", parcel_number="x", street_address="103 Main St",
            length_ft=50, zone="residential", owner_id="nobody",
        )  # fmt: skip
    with pytest.raises(NotFoundError):
        case_store.registry.get_frontage("main-999")


def test_device_last_seen_only_moves_forward(case_store: CaseStore) -> None:
    later = T0 + timedelta(minutes=5)
    case_store.registry.record_device_seen("pole-1", later, "online")
    device = case_store.registry.record_device_seen(
        "pole-1", T0, "offline"
    )  # late, out-of-order status
    assert (device.last_seen, device.availability) == (later, "online")
    assert case_store.registry.list_devices("clyman") == [device]


def test_times_come_back_aware_utc_and_naive_is_refused(case_store: CaseStore) -> None:
    local = datetime(2026, 11, 1, 1, 30, tzinfo=CHICAGO)  # the ambiguous DST hour (first pass)
    clock = case_store.clocks.open("main-101", "clearing", "running", local, reading_cause(local))
    stored = case_store.clocks.get(clock.id).started_at
    # (Python never calls a time in a DST fold equal across zones; compare in UTC.)
    assert stored == local.astimezone(UTC)
    assert stored.tzinfo is UTC
    assert stored.hour == 6  # 01:30 CDT is 06:30 UTC
    naive = datetime(2026, 1, 1)  # noqa: DTZ001 (the point of the test)
    with pytest.raises(ValueError, match="timezone-aware"):
        case_store.clocks.open("main-101", "clearing", "running", naive, reading_cause(T0))


# ---------------------------------------------------------------- clocks


def test_clock_lifecycle_history_and_replay(case_store: CaseStore) -> None:
    clearing = Rule(value=Decimal(24), unit="hours", citation="§ 370-10 A")
    gap = Rule(value=Decimal(24), unit="hours", unconfirmed=True, note="B(2) missing from the seed")
    rules = [
        RuleUse.from_rule("clearing_deadline", clearing),
        RuleUse.from_rule("nonhazard_notice_period", gap),
    ]
    deadline = T0 + clearing.duration
    clock = case_store.clocks.open(
        "main-101", "clearing", "running", T0, reading_cause(T0, seq=41),
        deadline=deadline, citation="§ 370-10 A", rules=rules,
    )  # fmt: skip
    assert clock.unconfirmed  # nonhazard_notice_period is a gap in the text
    assert clock.rules == tuple(rules)
    assert clock.cause.seq == 41
    assert clock.cause.at == T0
    again = case_store.clocks.open("main-101", "clearing", "running", T0, reading_cause(T0, seq=41))
    assert again == clock
    assert [c.id for c in case_store.clocks.list(active_only=True)] == [clock.id]

    snow = T0 + timedelta(hours=3)
    moved = case_store.clocks.record_transition(
        clock.id, "suspended", snow, reading_cause(snow, seq=77),
        detail={"depth_mm": Decimal("12.5")}, deadline=None,
    )  # fmt: skip
    assert (moved.from_state, moved.to_state, moved.detail) == (
        "running",
        "suspended",
        {"depth_mm": "12.5"},
    )
    assert case_store.clocks.get(clock.id).deadline is None
    # Replaying the same transition returns the stored one, not a second row.
    assert (
        case_store.clocks.record_transition(clock.id, "suspended", snow, reading_cause(snow, 77))
        == moved
    )

    restart = T0 + timedelta(hours=5)
    case_store.clocks.record_transition(
        clock.id,
        "running",
        restart,
        reading_cause(restart, 90),
        deadline=restart + timedelta(hours=24),
    )
    passed = restart + timedelta(hours=24)
    case_store.clocks.record_transition(
        clock.id, "violated", passed, Cause("deadline", ms(passed)), deadline=KEEP, closes=True
    )
    finished = case_store.clocks.get(clock.id)
    assert (finished.state, finished.closed_at, finished.active) == ("violated", passed, False)
    assert finished.deadline == passed
    assert [t.to_state for t in case_store.clocks.history(clock.id)] == [
        "suspended",
        "running",
        "violated",
    ]
    assert case_store.clocks.list(active_only=True) == []
    assert case_store.clocks.list(frontage_id="main-101", kind="clearing") == [finished]
    with pytest.raises(ClockStateError):
        case_store.clocks.record_transition(
            clock.id, "running", passed + timedelta(hours=1), Cause("deadline", 0)
        )


def test_cause_needs_its_evidence() -> None:
    with pytest.raises(ValueError, match="device"):
        Cause("reading", ts=1)
    fitted = Cause("reading", ts=ms(T0), device="pole-1")  # a time fitted over many readings
    assert Cause.from_json(fitted.to_json()) == fitted
    with pytest.raises(ValueError, match="who"):
        Cause("person", ts=1)
    officer = Cause("person", ts=ms(T0), who="officer-kraus")
    assert Cause.from_json(officer.to_json()) == officer


# ---------------------------------------------------------------- violations and notices


def test_violation_is_recorded_once_per_key(case_store: CaseStore) -> None:
    evidence = {"cleared_width_mm": 812.0, "snow_seqs": [41, 42], "measured_at": T0}
    first = case_store.clocks.record_violation(
        "main-101/clearing/1", "main-101", "clearing_min_width", T0, citation="§ 370-10 A",
        evidence=evidence,
    )  # fmt: skip
    again = case_store.clocks.record_violation("main-101/clearing/1", "main-101", "other", T0)
    assert again == first
    assert first.evidence == {
        "cleared_width_mm": 812.0,
        "snow_seqs": [41, 42],
        "measured_at": T0.isoformat(),
    }
    assert case_store.clocks.set_violation_offenses(first.id, 3).offense_count == 3
    assert (
        case_store.clocks.set_violation_offenses(first.id, 2).offense_count == 3
    )  # replays never lower it
    assert case_store.clocks.set_violation_status(first.id, "abated").status == "abated"


def test_notice_is_created_once_per_idempotency_key(case_store: CaseStore) -> None:
    violation = case_store.clocks.record_violation("v1", "main-101", "clearing_deadline", T0)
    first = case_store.notices.create(
        "notice/v1", "clearing_violation", "main-101", T0, violation_id=violation.id,
        deadline=T0 + timedelta(hours=24), citation="§ 370-10 B(2)",
    )  # fmt: skip
    second = case_store.notices.create("notice/v1", "clearing_violation", "main-101", T0)
    assert second == first
    assert len(case_store.notices.list()) == 1
    assert first.number == "CLY-2026-000001"
    assert (first.status, first.owner_name) == ("pending", "Jane Smith")

    # The notice keeps the address it was issued to, whatever the owner record says later.
    case_store.registry.upsert_owner("owner-smith", "Jane Smith", ["9 New Rd", "Watertown, WI"])
    assert case_store.notices.get(first.id).owner_address_lines == (
        "101 Main St",
        "Clyman, WI 53016",
    )
    third = case_store.notices.create("notice/v2", "hazard", "main-101", T0)
    assert third.owner_address_lines == ("9 New Rd", "Watertown, WI")
    assert third.number == "CLY-2026-000002"


def test_a_transaction_keeps_all_of_it_or_none(case_store: CaseStore) -> None:
    """Calls inside ``transaction()`` are one transaction: each sees the ones before, a
    failure the caller handles (the database refusing one write) undoes only that write,
    and an exception leaving it undoes everything."""
    with case_store.transaction():
        first = case_store.actions.record("record_ice", "main-101", T0, "inspector")
        assert case_store.actions.get(first.id) == first  # seen inside, before the commit
        with pytest.raises(CaseStoreError, match="refused by the database"):
            case_store.notices.create("n/1", "hazard", "main-101", T0, violation_id=999)
        second = case_store.actions.record("record_ice", "main-101", T0, "inspector")
    assert [a.id for a in case_store.actions.list()] == [first.id, second.id]
    assert case_store.notices.list() == []

    def stopped() -> None:
        with case_store.transaction():
            case_store.actions.record("record_ice", "main-101", T0, "inspector")
            case_store.audit.append_once("inspector", "inspection.tap", "frontage:main-101",
                                         {}, key="k-1")  # fmt: skip
            raise RuntimeError("the server stopped")

    with pytest.raises(RuntimeError, match="server stopped"):
        stopped()
    assert len(case_store.actions.list()) == 2
    assert case_store.audit.keyed("frontage:main-101", "inspection.tap", "k-1") is None
    assert case_store.audit.verify_chain().ok


def test_notice_year_is_the_villages_year(case_store: CaseStore) -> None:
    new_years_eve = datetime(2026, 12, 31, 21, 0, tzinfo=CHICAGO)  # already 2027 in UTC
    notice = case_store.notices.create("nye", "clearing_violation", "main-101", new_years_eve)
    assert notice.number == "CLY-2026-000001"
    next_year = case_store.notices.create(
        "ny", "clearing_violation", "main-101", datetime(2027, 1, 2, tzinfo=UTC)
    )
    assert next_year.number == "CLY-2027-000001"


def test_notice_numbers_are_unique_under_concurrent_allocation(case_store: CaseStore) -> None:
    per_thread = 15

    def issue(thread: int) -> list[str]:
        return [
            case_store.notices.create(f"t{thread}/{i}", "clearing_violation", "main-101", T0).number
            for i in range(per_thread)
        ]

    numbers = [n for batch in in_threads(2, issue) for n in batch]
    assert len(numbers) == 2 * per_thread
    assert sorted(numbers) == [f"CLY-2026-{i:06d}" for i in range(1, 2 * per_thread + 1)]

    # Both threads replaying the same decisions at once still make one notice per key.
    def replay(_thread: int) -> list[str]:
        return [
            case_store.notices.create(f"race/{i}", "clearing_violation", "main-101", T0).number
            for i in range(5)
        ]

    first, second = in_threads(2, replay)
    assert first == second
    assert len(case_store.notices.list()) == 2 * per_thread + 5


def test_notice_status_flow_and_filters(case_store: CaseStore) -> None:
    notice = case_store.notices.create("n1", "hazard", "main-101", T0)
    other = case_store.notices.create("n2", "clearing_violation", "main-101", T0)
    rendered = case_store.notices.set_rendered(
        notice.id, "Remove the ice within 2 hours.", "<p>…</p>"
    )
    assert (rendered.status, rendered.body_html) == ("rendered", "<p>…</p>")
    delivered_at = T0 + timedelta(minutes=40)
    delivered = case_store.notices.set_delivered(notice.id, delivered_at)
    assert (delivered.status, delivered.delivered_at) == ("delivered", delivered_at)
    assert (
        case_store.notices.set_delivered(notice.id, delivered_at + timedelta(hours=1)).delivered_at
        == delivered_at
    )
    with pytest.raises(CaseStoreError, match="final"):
        case_store.notices.set_rendered(notice.id, "changed")
    received = case_store.notices.set_received(notice.id, delivered_at + timedelta(hours=2))
    assert received.received_at == delivered_at + timedelta(hours=2)

    case_store.notices.record_delivery(
        "hand", "101 Main St", delivered_at, "delivered", notice_id=notice.id
    )
    assert [d.channel for d in case_store.notices.list_deliveries(notice_id=notice.id)] == ["hand"]
    assert [n.id for n in case_store.notices.list(status="delivered")] == [notice.id]
    assert [n.id for n in case_store.notices.list(status="pending")] == [other.id]
    assert [n.id for n in case_store.notices.list(kind="clearing_violation")] == [other.id]
    assert case_store.notices.get_by_number(notice.number) == received


# ---------------------------------------------------------------- money


def _billed_abatement(store: CaseStore, *amounts: str) -> int:
    abatement = store.bills.order_abatement("ab1", "main-101", "notice_deadline_passed", T0)
    for i, amount in enumerate(amounts):
        store.bills.add_expense(abatement.id, Decimal(amount), T0 + timedelta(hours=i), f"line {i}")
    return store.bills.create("bill/ab1", abatement.id, T0 + timedelta(days=1)).id


def test_money_is_exact_decimal(case_store: CaseStore) -> None:
    bill_id = _billed_abatement(case_store, "0.10", "0.20")
    bill = case_store.bills.get(bill_id)
    assert bill.amount == Decimal("0.30")
    assert isinstance(bill.amount, Decimal)
    assert bill.costs_incurred_at == T0 + timedelta(hours=1)
    assert raw_execute(case_store, "SELECT amount_cents FROM bills")[0][0] == 30

    case_store.bills.record_payment(
        "pay/1", bill_id, Decimal("0.10"), T0, method="check", reference="1001"
    )
    assert case_store.bills.balance(bill_id) == Decimal("0.20")
    case_store.bills.record_payment("pay/1", bill_id, Decimal("0.10"), T0, method="check")  # replay
    assert case_store.bills.balance(bill_id) == Decimal("0.20")
    case_store.bills.record_payment("pay/2", bill_id, Decimal("0.20"), T0, method="cash")
    paid = case_store.bills.get(bill_id)
    assert (paid.balance, paid.status) == (Decimal("0.00"), "paid")

    other = case_store.bills.order_abatement("ab2", "main-101", "hazard_owner_unavailable", T0)
    with pytest.raises(BillingError, match="fraction of a cent"):
        case_store.bills.add_expense(other.id, Decimal("1.005"), T0, "bad")
    with pytest.raises(BillingError, match="positive"):
        case_store.bills.record_payment("pay/3", bill_id, Decimal("-1.00"), T0, method="cash")
    with pytest.raises(BillingError, match="Decimal"):
        # Ignored: a float on purpose: the store must refuse it.
        case_store.bills.add_expense(other.id, 0.1, T0, "float")  # type: ignore[arg-type]


def test_large_amounts_stay_exact(case_store: CaseStore) -> None:
    bill_id = _billed_abatement(case_store, "12345678901.23", "0.01")
    assert case_store.bills.get(bill_id).amount == Decimal("12345678901.24")


def test_abatement_work_order_and_its_ledger(case_store: CaseStore) -> None:
    violation = case_store.clocks.record_violation("v", "main-101", "hazard", T0)
    order = case_store.bills.order_abatement(
        "abate/v", "main-101", "hazard_owner_unavailable", T0, violation_id=violation.id,
        detail={"crew": "DPW-2"},
    )  # fmt: skip
    assert (
        case_store.bills.order_abatement("abate/v", "main-101", "other", T0 + timedelta(hours=1))
        == order
    )
    assert (order.status, order.completed_at, order.detail) == ("ordered", None, {"crew": "DPW-2"})
    done = case_store.bills.complete_abatement(order.id, T0 + timedelta(hours=2))
    assert (done.status, done.completed_at) == ("completed", T0 + timedelta(hours=2))
    case_store.bills.add_expense(
        order.id, Decimal("80.00"), T0 + timedelta(hours=2), "salt and labour"
    )
    case_store.bills.add_expense(order.id, Decimal("12.25"), T0 + timedelta(hours=1), "sand")
    assert [e.description for e in case_store.bills.list_expenses(order.id)] == [
        "sand",
        "salt and labour",
    ]
    assert [e.action for e in case_store.audit.list(f"abatement:{order.id}")] == [
        "abatement.ordered",
        "abatement.completed",
    ]
    with pytest.raises(ValueError, match="exactly one"):
        case_store.notices.record_delivery("mail", "x", T0, "sent")
    with pytest.raises(NotFoundError):
        case_store.bills.add_expense(9999, Decimal("1.00"), T0, "no such work order")


def test_bill_receipt_and_tax_roll(case_store: CaseStore) -> None:
    bill_id = _billed_abatement(case_store, "150.00", "37.50")
    with pytest.raises(BillingError, match="already billed"):
        case_store.bills.add_expense(
            case_store.bills.get(bill_id).abatement_id, Decimal("1.00"), T0, "late"
        )
    received = case_store.bills.set_received(bill_id, T0 + timedelta(days=2), date(2026, 12, 22))
    assert received.due_date == date(2026, 12, 22)
    case_store.bills.record_payment(
        "p", bill_id, Decimal("50.00"), T0 + timedelta(days=5), method="check"
    )
    entry = case_store.bills.certify_tax_roll(bill_id, T0 + timedelta(days=61), 2026, "§ 370-10 G")
    assert (entry.amount, entry.parcel_number) == (Decimal("137.50"), "026-0915-0001")
    assert case_store.bills.certify_tax_roll(bill_id, T0 + timedelta(days=62), 2026) == entry
    assert case_store.bills.get(bill_id).status == "certified"
    assert case_store.bills.list_tax_roll(2026) == [entry]


# ---------------------------------------------------------------- audit


def test_audit_chain_verifies_and_tampering_fails(case_store: CaseStore) -> None:
    case_store.audit.append("officer-kraus", "hazard.confirmed", "frontage:main-101", {"at": T0})
    case_store.notices.create("n1", "hazard", "main-101", T0)  # appends notice.issued
    case_store.audit.append("clerk", "note", "notice:CLY-2026-000001", {"text": "called owner"})
    # Registering the fixture's pole and frontages is audited too; look past it.
    entries = [e for e in case_store.audit.list() if not e.subject.startswith("registry:")]
    assert [e.action for e in entries] == ["hazard.confirmed", "notice.issued", "note"]
    assert entries[1].prev_hash == entries[0].hash
    assert case_store.audit.verify_chain().ok

    raw_execute(
        case_store, "UPDATE audit_log SET detail_json = :d WHERE id = :id",
        d='{"text":"never called"}', id=entries[2].id,
    )  # fmt: skip
    result = case_store.audit.verify_chain()
    assert (result.ok, result.first_bad_id) == (False, entries[2].id)


def test_audit_chain_detects_a_deleted_row(case_store: CaseStore) -> None:
    for i in range(3):
        case_store.audit.append("system", "tick", f"n:{i}")
    middle = case_store.audit.list()[1]
    raw_execute(case_store, "DELETE FROM audit_log WHERE id = :id", id=middle.id)
    result = case_store.audit.verify_chain()
    assert not result.ok
    assert result.reason == "link to previous row broken"


def test_audit_chain_holds_under_concurrent_appends(case_store: CaseStore) -> None:
    def append(thread: int) -> int:
        for i in range(20):
            case_store.audit.append(f"worker-{thread}", "tick", f"n:{i}")
        return thread

    before = case_store.audit.verify_chain().rows  # the fixture's registry entries
    in_threads(2, append)
    verification = case_store.audit.verify_chain()
    assert (verification.ok, verification.rows) == (True, before + 40)


def test_notice_counts_match_the_notices_and_the_database_answers_a_ping(
    case_store: CaseStore,
) -> None:
    assert case_store.notices.counts() == {}
    hazard = case_store.notices.create("c1", "hazard", "main-101", T0)
    case_store.notices.create("c2", "hazard", "main-101", T0)
    case_store.notices.create("c3", "clearing_violation", "main-101", T0)
    case_store.notices.set_rendered(hazard.id, "text")
    expected = Counter((n.kind, n.status) for n in case_store.notices.list())
    assert case_store.notices.counts() == dict(expected)
    assert case_store.notices.counts()[("hazard", "pending")] == 1
    case_store.ping()


def test_every_work_order_reason_is_a_short_key_with_words_and_fits_on_postgresql(
    case_store: CaseStore,
) -> None:
    # Two clocks wrote 44- and 55-character sentences into a 40-character column:
    # on PostgreSQL the insert failed and analytics retried that batch for ever.
    from sidewalk.alerts.wording import ABATEMENT_REASONS, abatement_reason

    for n, key in enumerate(ABATEMENT_REASONS):
        assert key.isidentifier(), key
        order = case_store.bills.order_abatement(f"reason-{n}", "main-101", key, T0)
        assert abatement_reason(order.reason) == ABATEMENT_REASONS[key]
    long_one = case_store.bills.order_abatement("long", "main-101", "x" * 120, T0)
    assert long_one.reason == "x" * 120
