"""Case records: the one package that owns SQLAlchemy sessions.

``CaseStore(url)`` works on SQLite (``sqlite:///path``, the embedded default)
and PostgreSQL (``postgresql+psycopg://…``). It owns one unit of work (one
engine, its sessions and transactions) and exposes one repository per
concern, all sharing it:

============================  ==================================================
``cases.registry``            owners, devices (poles), frontages, map geometry
``cases.clocks``              clocks, transitions, violations, engine snapshots
``cases.notices``             notices, delivery attempts, the delivery outbox
``cases.bills``               abatements, expenses, bills, payments, tax roll
``cases.audit``               the hash-chained audit log and its verification
``cases.inspections``         § 370-5 inspections and block conditions
``cases.actions``             the person-action queue the runner applies
``cases.dashboard``           dashboard users, sessions, login throttling
``cases.confirmations``       the Village's confirmations of unconfirmed profile values
``cases.pages``               lean reads for the dashboard's busiest pages (read-only)
============================  ==================================================

Every repository method runs in its own transaction and returns frozen
dataclasses (``records``); no ORM object leaves this package.

Replay safety: everything the system decides (clocks, violations, notices,
abatements, bills, payments) is created through an idempotency key, so the
same decision replayed returns the existing record instead of making another.
Notices, violations, abatements, bills, payments and tax-roll entries also
append to the hash-chained audit log in the same transaction.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any
from zoneinfo import ZoneInfo

from sidewalk.storage.cases.actions import ActionRepository
from sidewalk.storage.cases.audit import GENESIS_HASH, AuditRepository
from sidewalk.storage.cases.bills import BillRepository
from sidewalk.storage.cases.clocks import ClockRepository
from sidewalk.storage.cases.confirmations import ConfirmationRecord, ConfirmationRepository
from sidewalk.storage.cases.dashboard import DashboardRecords
from sidewalk.storage.cases.errors import (
    BillingError,
    CaseStoreError,
    ClockStateError,
    NotFoundError,
)
from sidewalk.storage.cases.inspections import InspectionRepository
from sidewalk.storage.cases.notices import NoticeRepository
from sidewalk.storage.cases.pages import PageReads
from sidewalk.storage.cases.records import (
    KEEP,
    TEXT_UNIT,
    AbatementRecord,
    ActionRecord,
    AuditRecord,
    AuditVerification,
    Availability,
    BillRecord,
    BlockConditionRecord,
    Cause,
    CauseKind,
    ClockRecord,
    DashboardRole,
    DashboardSessionRecord,
    DashboardUserRecord,
    DeliveryJobRecord,
    DeliveryRecord,
    DeliveryStatus,
    DeviceRecord,
    ExpenseRecord,
    FrontageRecord,
    InspectionKind,
    InspectionRecord,
    NoticeRecord,
    NoticeStatus,
    OwnerRecord,
    PaymentRecord,
    RuleUse,
    TaxRollRecord,
    TransitionRecord,
    ViolationRecord,
    ViolationStatus,
    Zone,
)
from sidewalk.storage.cases.registry import RegistryError, RegistryRepository
from sidewalk.storage.cases.unit_of_work import (
    MIGRATIONS_DIR,
    UnitOfWork,
    canonical_json,
    normalize_url,
)

__all__ = [
    "GENESIS_HASH",
    "KEEP",
    "MIGRATIONS_DIR",
    "TEXT_UNIT",
    "AbatementRecord",
    "ActionRecord",
    "ActionRepository",
    "AuditRecord",
    "AuditRepository",
    "AuditVerification",
    "Availability",
    "BillRecord",
    "BillRepository",
    "BillingError",
    "BlockConditionRecord",
    "CaseStore",
    "CaseStoreError",
    "Cause",
    "CauseKind",
    "ClockRecord",
    "ClockRepository",
    "ClockStateError",
    "ConfirmationRecord",
    "ConfirmationRepository",
    "DashboardRecords",
    "DashboardRole",
    "DashboardSessionRecord",
    "DashboardUserRecord",
    "DeliveryJobRecord",
    "DeliveryRecord",
    "DeliveryStatus",
    "DeviceRecord",
    "ExpenseRecord",
    "FrontageRecord",
    "InspectionKind",
    "InspectionRecord",
    "InspectionRepository",
    "NotFoundError",
    "NoticeRecord",
    "NoticeRepository",
    "NoticeStatus",
    "OwnerRecord",
    "PageReads",
    "PaymentRecord",
    "RegistryError",
    "RegistryRepository",
    "RuleUse",
    "TaxRollRecord",
    "TransitionRecord",
    "UnitOfWork",
    "ViolationRecord",
    "ViolationStatus",
    "Zone",
    "canonical_json",
    "normalize_url",
]


class CaseStore:
    """Case records on SQLite or PostgreSQL: one unit of work, one repository per concern.

    ``url``: ``sqlite:///path/to/cases.db`` or ``postgresql+psycopg://user@host/db``;
    ``password`` is kept out of the URL (``self.url`` is safe to log).
    ``notice_prefix`` and ``zone`` shape notice numbers: ``CLY-2026-000123``,
    the year taken in the village's zone at issue time.
    """

    def __init__(
        self,
        url: str,
        *,
        password: str | None = None,
        notice_prefix: str = "CLY",
        zone: str = "America/Chicago",
    ) -> None:
        self.unit_of_work = uow = UnitOfWork(url, password=password)
        self.url = uow.url
        self.notice_prefix = notice_prefix
        self.zone = ZoneInfo(zone)
        self.audit = AuditRepository(uow)
        self.registry = RegistryRepository(uow, self.audit)
        self.clocks = ClockRepository(uow, self.audit)
        self.notices = NoticeRepository(
            uow, self.audit, notice_prefix=notice_prefix, zone=self.zone
        )
        self.bills = BillRepository(uow, self.audit)
        self.inspections = InspectionRepository(uow)
        self.actions = ActionRepository(uow, self.audit)
        self.dashboard = DashboardRecords(uow, self.audit)
        self.confirmations = ConfirmationRepository(uow, self.audit)
        self.pages = PageReads(uow)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.unit_of_work.dialect

    def transaction(self) -> AbstractContextManager[None]:
        """Every repository call inside is one transaction: all of it is kept, or (on an
        exception, or a crash before the end) none of it (``UnitOfWork.transaction``)."""
        return self.unit_of_work.transaction()

    def create_schema(self) -> None:
        """Bring the database to the newest migration (``alembic upgrade head``)."""
        self.unit_of_work.create_schema()

    def close(self) -> None:
        """Release every pooled connection."""
        self.unit_of_work.close()

    def job_store(self, tablename: str = "apscheduler_jobs") -> Any:
        """An APScheduler ``SQLAlchemyJobStore`` in this database (see ``UnitOfWork``)."""
        return self.unit_of_work.job_store(tablename)

    def ping(self) -> None:
        """One round trip to the database; raises what the connection raises."""
        self.unit_of_work.ping()
