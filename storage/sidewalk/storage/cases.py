"""Case records: the one module that owns SQLAlchemy sessions.

``CaseStore(url)`` works on SQLite (``sqlite:///path``, the embedded default)
and PostgreSQL (``postgresql+psycopg://…``). Every method runs in its own
transaction and returns frozen dataclasses; no ORM object leaves this module.

Replay safety: everything the system decides (clocks, violations, notices,
abatements, bills, payments) is created through an idempotency key, so the
same decision replayed returns the existing record instead of making another.
Notices, violations, abatements, bills, payments and tax-roll entries also
append to the hash-chained audit log in the same transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar
from zoneinfo import ZoneInfo

from alembic import command
from alembic.config import Config
from sqlalchemy import (
    URL,
    Engine,
    create_engine,
    delete,
    event,
    func,
    make_url,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from sidewalk.storage import models as m

if TYPE_CHECKING:
    from sidewalk.core.contract import Reading
    from sidewalk.core.profile import Rule

MIGRATIONS_DIR: Final = Path(__file__).with_name("migrations")
GENESIS_HASH: Final = "0" * 64
# Any constant works; it only has to be the same for every writer of one database.
_AUDIT_LOCK_ID: Final = 370_10

CauseKind = Literal["reading", "frame", "person", "deadline"]
Zone = Literal["residential", "commercial"]
Availability = Literal["online", "offline", "stopped", "unknown"]
NoticeStatus = Literal["pending", "rendered", "delivered"]
ViolationStatus = Literal["open", "cured", "abated", "closed"]
DeliveryStatus = Literal["sent", "delivered", "failed", "returned"]

T = TypeVar("T")


class CaseStoreError(Exception):
    """Base class for case-record errors."""


class NotFoundError(CaseStoreError, LookupError):
    """The record asked for does not exist."""


class ClockStateError(CaseStoreError):
    """A transition that the clock's current state does not allow (it is closed)."""


class BillingError(CaseStoreError, ValueError):
    """A money operation that the ledger refuses (e.g. certifying a paid bill)."""


class _Keep:
    """Sentinel: leave the clock's deadline as it is."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP: Final = _Keep()


# ---------------------------------------------------------------- value types


@dataclass(frozen=True)
class Cause:
    """What made a clock start or move: the evidence trail of a decision.

    ``reading``/``frame``: the device and, for a single message, its ``seq``
    (``seq`` is absent when the time is derived from many readings, e.g. a
    fitted cessation). ``person``: who confirmed, and when (``ts``).
    ``deadline``: a deadline passing, at ``ts``. ``ts`` is always event time
    in ms since the epoch.
    """

    kind: CauseKind
    ts: int
    device: str | None = None
    seq: int | None = None
    who: str | None = None

    def __post_init__(self) -> None:
        if self.kind in ("reading", "frame") and self.device is None:
            raise ValueError(f"a {self.kind} cause needs the device")
        if self.kind == "person" and not self.who:
            raise ValueError("a person cause needs who")

    @classmethod
    def from_reading(cls, reading: Reading) -> Cause:
        """The cause for a decision taken on one contract reading."""
        kind: CauseKind = "frame" if getattr(reading, "stream", None) == "frame" else "reading"
        return cls(kind=kind, ts=reading.ts, device=reading.device, seq=reading.seq)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cause:
        return cls(
            kind=data["kind"],
            ts=int(data["ts"]),
            device=data.get("device"),
            seq=data.get("seq"),
            who=data.get("who"),
        )

    @property
    def at(self) -> datetime:
        """The event time as an aware UTC datetime."""
        return datetime.fromtimestamp(self.ts / 1000, tz=UTC)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "ts": self.ts}
        for name in ("device", "seq", "who"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


@dataclass(frozen=True)
class RuleUse:
    """A profile value as a decision used it, with its citation and gap mark."""

    name: str
    value: Decimal
    unit: str
    citation: str | None
    unconfirmed: bool
    note: str | None = None

    @classmethod
    def from_rule(cls, name: str, rule: Rule) -> RuleUse:
        """Snapshot ``rule`` (e.g. ``profile.snow_and_ice.clearing_deadline``) under ``name``."""
        return cls(name, rule.value, rule.unit, rule.citation, rule.unconfirmed, rule.note)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RuleUse:
        return cls(
            name=data["name"],
            value=Decimal(data["value"]),
            unit=data["unit"],
            citation=data.get("citation"),
            unconfirmed=bool(data["unconfirmed"]),
            note=data.get("note"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": str(self.value),
            "unit": self.unit,
            "citation": self.citation,
            "unconfirmed": self.unconfirmed,
            "note": self.note,
        }


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class OwnerRecord:
    id: str
    name: str
    address_lines: tuple[str, ...]
    email: str | None
    updated_at: datetime


@dataclass(frozen=True)
class DeviceRecord:
    id: str
    site: str
    last_seen: datetime | None
    availability: str


@dataclass(frozen=True)
class FrontageRecord:
    id: str
    site: str
    parcel_number: str
    street_address: str
    length_ft: float
    zone: str
    owner_id: str
    device_id: str | None
    may_deposit_on_street: bool


@dataclass(frozen=True)
class ClockRecord:
    id: int
    key: str
    frontage_id: str
    kind: str
    state: str
    started_at: datetime
    deadline: datetime | None
    closed_at: datetime | None
    cause: Cause
    citation: str | None
    rules: tuple[RuleUse, ...]
    unconfirmed: bool

    @property
    def active(self) -> bool:
        return self.closed_at is None


@dataclass(frozen=True)
class TransitionRecord:
    id: int
    clock_id: int
    from_state: str
    to_state: str
    at: datetime
    cause: Cause
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class ViolationRecord:
    id: int
    key: str
    frontage_id: str
    clock_id: int | None
    rule: str
    citation: str | None
    detected_at: datetime
    evidence: Mapping[str, Any]
    offense_count: int
    status: str


@dataclass(frozen=True)
class NoticeRecord:
    id: int
    number: str
    key: str
    kind: str
    violation_id: int | None
    frontage_id: str
    owner_id: str
    owner_name: str
    owner_address_lines: tuple[str, ...]
    issued_at: datetime
    deadline: datetime | None
    citation: str | None
    rules: tuple[RuleUse, ...]
    detail: Mapping[str, Any]
    body_text: str | None
    body_html: str | None
    status: str
    rendered_at: datetime | None
    delivered_at: datetime | None
    received_at: datetime | None


@dataclass(frozen=True)
class DeliveryRecord:
    id: int
    notice_id: int | None
    bill_id: int | None
    channel: str
    target: str
    attempted_at: datetime
    status: str
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class AbatementRecord:
    id: int
    key: str
    frontage_id: str
    violation_id: int | None
    notice_id: int | None
    reason: str
    ordered_at: datetime
    completed_at: datetime | None
    status: str
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class ExpenseRecord:
    id: int
    abatement_id: int
    incurred_at: datetime
    description: str
    amount: Decimal


@dataclass(frozen=True)
class BillRecord:
    id: int
    key: str
    abatement_id: int
    frontage_id: str
    owner_name: str
    owner_address_lines: tuple[str, ...]
    amount: Decimal
    paid: Decimal
    costs_incurred_at: datetime
    issued_at: datetime
    received_at: datetime | None
    due_date: date | None
    status: str

    @property
    def balance(self) -> Decimal:
        return self.amount - self.paid


@dataclass(frozen=True)
class PaymentRecord:
    id: int
    key: str
    bill_id: int
    amount: Decimal
    paid_at: datetime
    method: str
    reference: str | None


@dataclass(frozen=True)
class TaxRollRecord:
    id: int
    bill_id: int
    frontage_id: str
    parcel_number: str
    amount: Decimal
    tax_year: int
    certified_at: datetime
    citation: str | None


@dataclass(frozen=True)
class AuditRecord:
    id: int
    recorded_at: datetime
    actor: str
    action: str
    subject: str
    detail: Mapping[str, Any]
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class AuditVerification:
    """Result of walking the audit chain; ``first_bad_id`` names the first broken row."""

    ok: bool
    rows: int
    first_bad_id: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ActionRecord:
    """A person's recorded action for the clocks, and what became of it."""

    id: int
    kind: str
    target: str
    at: datetime
    who: str
    detail: Mapping[str, Any]
    recorded_at: datetime
    applied_at: datetime | None
    error: str | None


# ---------------------------------------------------------------- helpers


def _json_default(value: object) -> object:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def canonical_json(value: object) -> str:
    """The exact text the audit log hashes: sorted keys, no spaces, UTF-8."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default
    )


def _jsonable(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """Decimals and datetimes made JSON-safe before a JSON column sees them."""
    loaded: dict[str, Any] = json.loads(canonical_json(dict(value or {})))
    return loaded


def _audit_hash(row: m.AuditEntry) -> str:
    """sha256 over the row's content and its predecessor's hash (not its id)."""
    content = canonical_json(
        {
            "recorded_at": row.recorded_at.astimezone(UTC).isoformat(),
            "actor": row.actor,
            "action": row.action,
            "subject": row.subject,
            "detail": row.detail_json,
            "prev_hash": row.prev_hash,
        }
    )
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def _aware(name: str, value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, got {value!r}")
    return value.astimezone(UTC)


def _check_amount(what: str, amount: Decimal) -> None:
    if not isinstance(amount, Decimal):
        raise BillingError(f"{what} amount must be a Decimal, got {type(amount).__name__}")
    if amount <= 0:
        raise BillingError(f"{what} amount must be positive, got {amount}")
    if amount != amount.quantize(Decimal("0.01")):
        raise BillingError(f"{what} amount {amount} has a fraction of a cent")


def _now() -> datetime:
    return datetime.now(UTC)


def normalize_url(url: str) -> str:
    """``postgresql://`` means psycopg 3 here (psycopg2 is not installed)."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return url


def _owner(row: m.Owner) -> OwnerRecord:
    return OwnerRecord(row.id, row.name, tuple(row.address_lines), row.email, row.updated_at)


def _device(row: m.Device) -> DeviceRecord:
    return DeviceRecord(row.id, row.site, row.last_seen, row.availability)


def _frontage(row: m.Frontage) -> FrontageRecord:
    return FrontageRecord(
        id=row.id,
        site=row.site,
        parcel_number=row.parcel_number,
        street_address=row.street_address,
        length_ft=row.length_ft,
        zone=row.zone,
        owner_id=row.owner_id,
        device_id=row.device_id,
        may_deposit_on_street=row.may_deposit_on_street,
    )


def _clock(row: m.Clock) -> ClockRecord:
    return ClockRecord(
        id=row.id,
        key=row.idempotency_key,
        frontage_id=row.frontage_id,
        kind=row.kind,
        state=row.state,
        started_at=row.started_at,
        deadline=row.deadline,
        closed_at=row.closed_at,
        cause=Cause.from_json(row.cause),
        citation=row.citation,
        rules=tuple(RuleUse.from_json(r) for r in row.rules),
        unconfirmed=row.unconfirmed,
    )


def _transition(row: m.ClockTransition) -> TransitionRecord:
    return TransitionRecord(
        id=row.id,
        clock_id=row.clock_id,
        from_state=row.from_state,
        to_state=row.to_state,
        at=row.at,
        cause=Cause.from_json(row.cause),
        detail=row.detail,
    )


def _violation(row: m.Violation) -> ViolationRecord:
    return ViolationRecord(
        id=row.id,
        key=row.idempotency_key,
        frontage_id=row.frontage_id,
        clock_id=row.clock_id,
        rule=row.rule,
        citation=row.citation,
        detected_at=row.detected_at,
        evidence=row.evidence,
        offense_count=row.offense_count,
        status=row.status,
    )


def _notice(row: m.Notice) -> NoticeRecord:
    return NoticeRecord(
        id=row.id,
        number=row.number,
        key=row.idempotency_key,
        kind=row.kind,
        violation_id=row.violation_id,
        frontage_id=row.frontage_id,
        owner_id=row.owner_id,
        owner_name=row.owner_name,
        owner_address_lines=tuple(row.owner_address_lines),
        issued_at=row.issued_at,
        deadline=row.deadline,
        citation=row.citation,
        rules=tuple(RuleUse.from_json(r) for r in row.rules),
        detail=row.detail,
        body_text=row.body_text,
        body_html=row.body_html,
        status=row.status,
        rendered_at=row.rendered_at,
        delivered_at=row.delivered_at,
        received_at=row.received_at,
    )


def _delivery(row: m.Delivery) -> DeliveryRecord:
    return DeliveryRecord(
        row.id, row.notice_id, row.bill_id, row.channel, row.target, row.attempted_at,
        row.status, row.detail,
    )  # fmt: skip


def _abatement(row: m.Abatement) -> AbatementRecord:
    return AbatementRecord(
        id=row.id,
        key=row.idempotency_key,
        frontage_id=row.frontage_id,
        violation_id=row.violation_id,
        notice_id=row.notice_id,
        reason=row.reason,
        ordered_at=row.ordered_at,
        completed_at=row.completed_at,
        status=row.status,
        detail=row.detail,
    )


def _expense(row: m.Expense) -> ExpenseRecord:
    return ExpenseRecord(row.id, row.abatement_id, row.incurred_at, row.description, row.amount)


def _payment(row: m.Payment) -> PaymentRecord:
    return PaymentRecord(
        row.id, row.idempotency_key, row.bill_id, row.amount, row.paid_at, row.method, row.reference
    )


def _tax_roll(row: m.TaxRollEntry) -> TaxRollRecord:
    return TaxRollRecord(
        row.id, row.bill_id, row.frontage_id, row.parcel_number, row.amount, row.tax_year,
        row.certified_at, row.citation,
    )  # fmt: skip


def _audit(row: m.AuditEntry) -> AuditRecord:
    return AuditRecord(
        id=row.id,
        recorded_at=row.recorded_at,
        actor=row.actor,
        action=row.action,
        subject=row.subject,
        detail=json.loads(row.detail_json),
        prev_hash=row.prev_hash,
        hash=row.hash,
    )


# ---------------------------------------------------------------- the store


class CaseStore:
    """Case records on SQLite or PostgreSQL.

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
        full = make_url(normalize_url(url))
        if password is not None:
            # The password comes from the environment (SIDEWALK_DB_PASSWORD), never the URL.
            full = full.set(password=password)
        self.url = full.render_as_string(hide_password=True)
        self.notice_prefix = notice_prefix
        self.zone = ZoneInfo(zone)
        self._engine = self._make_engine(full)
        # Reads skip SQLite's write lock; writes take it at BEGIN (see _make_engine).
        self._read_engine = self._engine.execution_options(sidewalk_read_only=True)
        self._writes = sessionmaker(self._engine, expire_on_commit=False)
        self._reads = sessionmaker(self._read_engine, expire_on_commit=False)

    @staticmethod
    def _make_engine(url: URL) -> Engine:
        if url.get_backend_name() != "sqlite":
            return create_engine(url, pool_pre_ping=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
            # Take BEGIN out of pysqlite's hands so we can say BEGIN IMMEDIATE.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            # A deferred transaction that reads, then writes, fails with SQLITE_BUSY
            # when another writer committed in between; IMMEDIATE waits instead.
            if conn.get_execution_options().get("sidewalk_read_only"):
                conn.exec_driver_sql("BEGIN")
            else:
                conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    def create_schema(self) -> None:
        """Bring the database to the newest migration (``alembic upgrade head``)."""
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        with self._engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    def job_store(self, tablename: str = "apscheduler_jobs") -> Any:
        """An APScheduler ``SQLAlchemyJobStore`` in this database, on this store's engine.

        Shares the pool and the password; its table is APScheduler's own and
        the migrations leave it alone.
        """
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

        return SQLAlchemyJobStore(engine=self._engine, tablename=tablename)

    @contextmanager
    def _write(self) -> Iterator[Session]:
        with self._writes() as session, session.begin():
            yield session

    @contextmanager
    def _read(self) -> Iterator[Session]:
        with self._reads() as session, session.begin():
            yield session

    def _create_once(
        self,
        model: type[m.Clock | m.Violation | m.Notice | m.Abatement | m.Bill | m.Payment],
        key: str,
        build: Callable[[Session], Any],
        convert: Callable[[Session, Any], T],
    ) -> T:
        """Create through ``build`` unless ``key`` exists; a lost race returns the winner."""
        lookup = select(model).where(model.idempotency_key == key)
        try:
            with self._write() as session:
                existing = session.scalar(lookup)
                if existing is not None:
                    return convert(session, existing)
                row = build(session)
                session.flush()
                return convert(session, row)
        except IntegrityError as exc:
            with self._read() as session:
                existing = session.scalar(lookup)
                if existing is None:
                    raise CaseStoreError(f"refused by the database: {exc.orig}") from exc
                return convert(session, existing)

    @staticmethod
    def _get(session: Session, model: type[T], key: object) -> T:
        row = session.get(model, key)
        if row is None:
            raise NotFoundError(f"no {model.__name__.lower()} {key!r}")
        return row

    # ------------------------------------------------------------ owners, devices, frontages

    def upsert_owner(
        self, owner_id: str, name: str, address_lines: Sequence[str], email: str | None = None
    ) -> OwnerRecord:
        """Create or update an owner (the last-known mailing address)."""
        with self._write() as session:
            row = session.get(m.Owner, owner_id)
            if row is None:
                row = m.Owner(id=owner_id)
                session.add(row)
            row.name = name
            row.address_lines = list(address_lines)
            row.email = email
            row.updated_at = _now()
            session.flush()
            return _owner(row)

    def get_owner(self, owner_id: str) -> OwnerRecord:
        with self._read() as session:
            return _owner(self._get(session, m.Owner, owner_id))

    def upsert_device(self, device_id: str, site: str) -> DeviceRecord:
        """Register a device (idempotent); availability starts ``unknown``."""
        with self._write() as session:
            row = session.get(m.Device, device_id)
            if row is None:
                row = m.Device(id=device_id, availability="unknown")
                session.add(row)
            row.site = site
            session.flush()
            return _device(row)

    def record_device_seen(
        self, device_id: str, at: datetime, availability: Availability | None = None
    ) -> DeviceRecord:
        """Move ``last_seen`` forward (never back: messages arrive out of order)."""
        at = _aware("at", at)
        with self._write() as session:
            row = self._get(session, m.Device, device_id)
            if row.last_seen is None or at >= row.last_seen:
                row.last_seen = at
                if availability is not None:
                    row.availability = availability
            session.flush()
            return _device(row)

    def list_devices(self, site: str | None = None) -> list[DeviceRecord]:
        query = select(m.Device).order_by(m.Device.id)
        if site is not None:
            query = query.where(m.Device.site == site)
        with self._read() as session:
            return [_device(r) for r in session.scalars(query)]

    def upsert_frontage(
        self,
        frontage_id: str,
        *,
        site: str,
        parcel_number: str,
        street_address: str,
        length_ft: float,
        zone: Zone,
        owner_id: str,
        device_id: str | None = None,
        may_deposit_on_street: bool = False,
    ) -> FrontageRecord:
        """Create or update a frontage; its owner (and device, if any) must exist."""
        with self._write() as session:
            self._get(session, m.Owner, owner_id)
            if device_id is not None:
                self._get(session, m.Device, device_id)
            row = session.get(m.Frontage, frontage_id)
            if row is None:
                row = m.Frontage(id=frontage_id)
                session.add(row)
            row.site = site
            row.parcel_number = parcel_number
            row.street_address = street_address
            row.length_ft = length_ft
            row.zone = zone
            row.owner_id = owner_id
            row.device_id = device_id
            row.may_deposit_on_street = may_deposit_on_street
            session.flush()
            return _frontage(row)

    def get_frontage(self, frontage_id: str) -> FrontageRecord:
        with self._read() as session:
            return _frontage(self._get(session, m.Frontage, frontage_id))

    def list_frontages(
        self, *, site: str | None = None, device_id: str | None = None
    ) -> list[FrontageRecord]:
        query = select(m.Frontage).order_by(m.Frontage.id)
        if site is not None:
            query = query.where(m.Frontage.site == site)
        if device_id is not None:
            query = query.where(m.Frontage.device_id == device_id)
        with self._read() as session:
            return [_frontage(r) for r in session.scalars(query)]

    # ------------------------------------------------------------ clocks

    def open_clock(
        self,
        frontage_id: str,
        kind: str,
        state: str,
        started_at: datetime,
        cause: Cause,
        *,
        deadline: datetime | None = None,
        citation: str | None = None,
        rules: Sequence[RuleUse] = (),
        key: str | None = None,
    ) -> ClockRecord:
        """Start a clock at the event time of its cause.

        ``key`` defaults to ``<frontage>/<kind>/<started_at ISO>``: replaying the
        same start returns the existing clock. ``unconfirmed`` is set when any
        rule used is an unconfirmed profile value.
        """
        started_at = _aware("started_at", started_at)
        deadline = None if deadline is None else _aware("deadline", deadline)
        key = key or f"{frontage_id}/{kind}/{started_at.isoformat()}"

        def build(session: Session) -> m.Clock:
            self._get(session, m.Frontage, frontage_id)
            row = m.Clock(
                idempotency_key=key,
                frontage_id=frontage_id,
                kind=kind,
                state=state,
                started_at=started_at,
                deadline=deadline,
                closed_at=None,
                cause=cause.to_json(),
                citation=citation,
                rules=[r.to_json() for r in rules],
                unconfirmed=any(r.unconfirmed for r in rules),
            )
            session.add(row)
            return row

        return self._create_once(m.Clock, key, build, lambda _s, row: _clock(row))

    def record_transition(
        self,
        clock_id: int,
        to_state: str,
        at: datetime,
        cause: Cause,
        *,
        detail: Mapping[str, Any] | None = None,
        deadline: datetime | _Keep | None = KEEP,
        closes: bool = False,
    ) -> TransitionRecord:
        """Append a transition and move the clock to ``to_state``.

        ``deadline``: a new deadline, ``None`` to clear it, or ``KEEP``.
        ``closes``: the clock is finished (it leaves ``list_clocks(active_only=True)``).
        The same ``(clock, at, to_state)`` again returns the stored transition.
        """
        at = _aware("at", at)
        with self._write() as session:
            clock = session.get(m.Clock, clock_id, with_for_update=True)
            if clock is None:
                raise NotFoundError(f"no clock {clock_id}")
            existing = session.scalar(
                select(m.ClockTransition).where(
                    m.ClockTransition.clock_id == clock_id,
                    m.ClockTransition.at == at,
                    m.ClockTransition.to_state == to_state,
                )
            )
            if existing is not None:
                return _transition(existing)
            if clock.closed_at is not None:
                raise ClockStateError(f"clock {clock_id} closed at {clock.closed_at.isoformat()}")
            row = m.ClockTransition(
                clock_id=clock_id,
                from_state=clock.state,
                to_state=to_state,
                at=at,
                cause=cause.to_json(),
                detail=_jsonable(detail),
            )
            session.add(row)
            clock.state = to_state
            if not isinstance(deadline, _Keep):
                clock.deadline = None if deadline is None else _aware("deadline", deadline)
            if closes:
                clock.closed_at = at
            session.flush()
            return _transition(row)

    def get_clock(self, clock_id: int) -> ClockRecord:
        with self._read() as session:
            return _clock(self._get(session, m.Clock, clock_id))

    def list_clocks(
        self, *, active_only: bool = False, frontage_id: str | None = None, kind: str | None = None
    ) -> list[ClockRecord]:
        """Clocks in start order; ``active_only`` keeps those not yet closed."""
        query = select(m.Clock).order_by(m.Clock.started_at, m.Clock.id)
        if active_only:
            query = query.where(m.Clock.closed_at.is_(None))
        if frontage_id is not None:
            query = query.where(m.Clock.frontage_id == frontage_id)
        if kind is not None:
            query = query.where(m.Clock.kind == kind)
        with self._read() as session:
            return [_clock(r) for r in session.scalars(query)]

    def clock_history(self, clock_id: int) -> list[TransitionRecord]:
        """The clock's transitions in event-time order."""
        query = (
            select(m.ClockTransition)
            .where(m.ClockTransition.clock_id == clock_id)
            .order_by(m.ClockTransition.at, m.ClockTransition.id)
        )
        with self._read() as session:
            return [_transition(r) for r in session.scalars(query)]

    # ------------------------------------------------------------ violations

    def record_violation(
        self,
        key: str,
        frontage_id: str,
        rule: str,
        detected_at: datetime,
        *,
        clock_id: int | None = None,
        citation: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        offense_count: int = 1,
    ) -> ViolationRecord:
        """Record a violation once per ``key``; a replay returns the stored one."""
        detected_at = _aware("detected_at", detected_at)

        def build(session: Session) -> m.Violation:
            self._get(session, m.Frontage, frontage_id)
            row = m.Violation(
                idempotency_key=key,
                frontage_id=frontage_id,
                clock_id=clock_id,
                rule=rule,
                citation=citation,
                detected_at=detected_at,
                evidence=_jsonable(evidence),
                offense_count=offense_count,
                status="open",
            )
            session.add(row)
            session.flush()
            self._append_audit(
                session, "system", "violation.recorded", f"violation:{row.id}",
                {"key": key, "frontage": frontage_id, "rule": rule, "citation": citation,
                 "detected_at": detected_at},
            )  # fmt: skip
            return row

        return self._create_once(m.Violation, key, build, lambda _s, row: _violation(row))

    def get_violation(self, violation_id: int) -> ViolationRecord:
        with self._read() as session:
            return _violation(self._get(session, m.Violation, violation_id))

    def set_violation_offenses(self, violation_id: int, offense_count: int) -> ViolationRecord:
        """Raise the offense count (§ 370-10 E); a lower count is ignored (replays)."""
        with self._write() as session:
            row = self._get(session, m.Violation, violation_id)
            if offense_count > row.offense_count:
                row.offense_count = offense_count
                self._append_audit(
                    session, "system", "violation.offenses", f"violation:{row.id}",
                    {"offense_count": offense_count},
                )  # fmt: skip
            session.flush()
            return _violation(row)

    def set_violation_status(self, violation_id: int, status: ViolationStatus) -> ViolationRecord:
        with self._write() as session:
            row = self._get(session, m.Violation, violation_id)
            if row.status != status:
                self._append_audit(
                    session, "system", "violation.status", f"violation:{row.id}",
                    {"from": row.status, "to": status},
                )  # fmt: skip
                row.status = status
            session.flush()
            return _violation(row)

    # ------------------------------------------------------------ notices

    def _next_notice_number(self, session: Session, issued_at: datetime) -> str:
        """Allocate ``PREFIX-YYYY-NNNNNN``; the counter row's lock serialises allocators."""
        year = issued_at.astimezone(self.zone).year
        insert = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        session.execute(
            insert(m.NoticeCounter)
            .values(year=year, last_number=0)
            .on_conflict_do_nothing(index_elements=["year"])
        )
        number = session.execute(
            update(m.NoticeCounter)
            .where(m.NoticeCounter.year == year)
            .values(last_number=m.NoticeCounter.last_number + 1)
            .returning(m.NoticeCounter.last_number)
        ).scalar_one()
        return f"{self.notice_prefix}-{year}-{number:06d}"

    def create_notice(
        self,
        idempotency_key: str,
        kind: str,
        frontage_id: str,
        issued_at: datetime,
        *,
        violation_id: int | None = None,
        deadline: datetime | None = None,
        citation: str | None = None,
        rules: Sequence[RuleUse] = (),
        detail: Mapping[str, Any] | None = None,
    ) -> NoticeRecord:
        """Issue a notice, or return the one already issued under ``idempotency_key``.

        The owner's name and address are copied from the frontage's current
        owner: a notice keeps the address it was mailed to. Status starts
        ``pending``.
        """
        issued_at = _aware("issued_at", issued_at)
        deadline = None if deadline is None else _aware("deadline", deadline)

        def build(session: Session) -> m.Notice:
            frontage = self._get(session, m.Frontage, frontage_id)
            owner = self._get(session, m.Owner, frontage.owner_id)
            row = m.Notice(
                number=self._next_notice_number(session, issued_at),
                idempotency_key=idempotency_key,
                kind=kind,
                violation_id=violation_id,
                frontage_id=frontage_id,
                owner_id=owner.id,
                owner_name=owner.name,
                owner_address_lines=list(owner.address_lines),
                issued_at=issued_at,
                deadline=deadline,
                citation=citation,
                rules=[r.to_json() for r in rules],
                detail=_jsonable(detail),
                status="pending",
            )
            session.add(row)
            session.flush()
            self._append_audit(
                session, "system", "notice.issued", f"notice:{row.number}",
                {"key": idempotency_key, "kind": kind, "frontage": frontage_id,
                 "violation": violation_id, "issued_at": issued_at, "deadline": deadline},
            )  # fmt: skip
            return row

        return self._create_once(m.Notice, idempotency_key, build, lambda _s, row: _notice(row))

    def get_notice(self, notice_id: int) -> NoticeRecord:
        with self._read() as session:
            return _notice(self._get(session, m.Notice, notice_id))

    def get_notice_by_number(self, number: str) -> NoticeRecord:
        with self._read() as session:
            row = session.scalar(select(m.Notice).where(m.Notice.number == number))
            if row is None:
                raise NotFoundError(f"no notice {number!r}")
            return _notice(row)

    def list_notices(
        self,
        *,
        status: NoticeStatus | None = None,
        kind: str | None = None,
        frontage_id: str | None = None,
    ) -> list[NoticeRecord]:
        """Notices in issue order, optionally filtered."""
        query = select(m.Notice).order_by(m.Notice.issued_at, m.Notice.id)
        if status is not None:
            query = query.where(m.Notice.status == status)
        if kind is not None:
            query = query.where(m.Notice.kind == kind)
        if frontage_id is not None:
            query = query.where(m.Notice.frontage_id == frontage_id)
        with self._read() as session:
            return [_notice(r) for r in session.scalars(query)]

    def notice_counts(self) -> dict[tuple[str, str], int]:
        """How many notices there are per (kind, status), counted by the database."""
        query = select(m.Notice.kind, m.Notice.status, func.count()).group_by(
            m.Notice.kind, m.Notice.status
        )
        with self._read() as session:
            return {(kind, status): int(n) for kind, status, n in session.execute(query)}

    def ping(self) -> None:
        """One round trip to the database; raises what the connection raises."""
        with self._read() as session:
            session.execute(select(1))

    def set_notice_rendered(
        self, notice_id: int, body_text: str, body_html: str | None = None
    ) -> NoticeRecord:
        """Store the rendered body; a delivered notice's body is never replaced."""
        with self._write() as session:
            row = self._get(session, m.Notice, notice_id)
            if row.status == "delivered":
                raise CaseStoreError(f"notice {row.number} is delivered; its text is final")
            row.body_text = body_text
            row.body_html = body_html
            row.status = "rendered"
            row.rendered_at = _now()
            session.flush()
            self._append_audit(
                session, "system", "notice.rendered", f"notice:{row.number}",
                {"sha256": hashlib.sha256(body_text.encode()).hexdigest()},
            )  # fmt: skip
            return _notice(row)

    def set_notice_delivered(self, notice_id: int, delivered_at: datetime) -> NoticeRecord:
        """Record delivery; § 370-10 B(1)'s 2 h clock starts here. First delivery wins."""
        delivered_at = _aware("delivered_at", delivered_at)
        with self._write() as session:
            row = self._get(session, m.Notice, notice_id)
            if row.delivered_at is None:
                row.delivered_at = delivered_at
                row.status = "delivered"
                self._append_audit(
                    session, "system", "notice.delivered", f"notice:{row.number}",
                    {"delivered_at": delivered_at},
                )  # fmt: skip
            session.flush()
            return _notice(row)

    def set_notice_received(self, notice_id: int, received_at: datetime) -> NoticeRecord:
        """Record the owner's receipt (e.g. certified-mail return). First receipt wins."""
        received_at = _aware("received_at", received_at)
        with self._write() as session:
            row = self._get(session, m.Notice, notice_id)
            if row.received_at is None:
                row.received_at = received_at
                self._append_audit(
                    session, "system", "notice.received", f"notice:{row.number}",
                    {"received_at": received_at},
                )  # fmt: skip
            session.flush()
            return _notice(row)

    def record_delivery(
        self,
        channel: str,
        target: str,
        attempted_at: datetime,
        status: DeliveryStatus,
        *,
        notice_id: int | None = None,
        bill_id: int | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> DeliveryRecord:
        """Log one delivery attempt of a notice or a bill (print batch, e-mail, webhook)."""
        if (notice_id is None) == (bill_id is None):
            raise ValueError("a delivery is for exactly one of notice_id, bill_id")
        with self._write() as session:
            row = m.Delivery(
                notice_id=notice_id,
                bill_id=bill_id,
                channel=channel,
                target=target,
                attempted_at=_aware("attempted_at", attempted_at),
                status=status,
                detail=_jsonable(detail),
            )
            session.add(row)
            session.flush()
            return _delivery(row)

    def list_deliveries(
        self, *, notice_id: int | None = None, bill_id: int | None = None
    ) -> list[DeliveryRecord]:
        query = select(m.Delivery).order_by(m.Delivery.attempted_at, m.Delivery.id)
        if notice_id is not None:
            query = query.where(m.Delivery.notice_id == notice_id)
        if bill_id is not None:
            query = query.where(m.Delivery.bill_id == bill_id)
        with self._read() as session:
            return [_delivery(r) for r in session.scalars(query)]

    # ------------------------------------------------------------ abatement and money

    def order_abatement(
        self,
        key: str,
        frontage_id: str,
        reason: str,
        ordered_at: datetime,
        *,
        violation_id: int | None = None,
        notice_id: int | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> AbatementRecord:
        """Open a village work order once per ``key``."""
        ordered_at = _aware("ordered_at", ordered_at)

        def build(session: Session) -> m.Abatement:
            self._get(session, m.Frontage, frontage_id)
            row = m.Abatement(
                idempotency_key=key,
                frontage_id=frontage_id,
                violation_id=violation_id,
                notice_id=notice_id,
                reason=reason,
                ordered_at=ordered_at,
                completed_at=None,
                status="ordered",
                detail=_jsonable(detail),
            )
            session.add(row)
            session.flush()
            self._append_audit(
                session, "system", "abatement.ordered", f"abatement:{row.id}",
                {"key": key, "frontage": frontage_id, "reason": reason, "ordered_at": ordered_at},
            )  # fmt: skip
            return row

        return self._create_once(m.Abatement, key, build, lambda _s, row: _abatement(row))

    def complete_abatement(self, abatement_id: int, completed_at: datetime) -> AbatementRecord:
        completed_at = _aware("completed_at", completed_at)
        with self._write() as session:
            row = self._get(session, m.Abatement, abatement_id)
            if row.completed_at is None:
                row.completed_at = completed_at
                row.status = "completed"
                self._append_audit(
                    session, "system", "abatement.completed", f"abatement:{row.id}",
                    {"completed_at": completed_at},
                )  # fmt: skip
            session.flush()
            return _abatement(row)

    def add_expense(
        self, abatement_id: int, amount: Decimal, incurred_at: datetime, description: str
    ) -> ExpenseRecord:
        """Add a ledger line to an abatement (before it is billed)."""
        _check_amount("expense", amount)
        with self._write() as session:
            self._get(session, m.Abatement, abatement_id)
            if session.scalar(select(m.Bill.id).where(m.Bill.abatement_id == abatement_id)):
                raise BillingError(f"abatement {abatement_id} is already billed")
            row = m.Expense(
                abatement_id=abatement_id,
                incurred_at=_aware("incurred_at", incurred_at),
                description=description,
                amount=amount,
            )
            session.add(row)
            session.flush()
            return _expense(row)

    def list_expenses(self, abatement_id: int) -> list[ExpenseRecord]:
        query = (
            select(m.Expense)
            .where(m.Expense.abatement_id == abatement_id)
            .order_by(m.Expense.incurred_at, m.Expense.id)
        )
        with self._read() as session:
            return [_expense(r) for r in session.scalars(query)]

    @staticmethod
    def _paid(session: Session, bill_id: int) -> Decimal:
        # SUM keeps the Money type, so the total comes back as exact Decimal dollars.
        paid = session.scalar(
            select(func.coalesce(func.sum(m.Payment.amount), 0)).where(m.Payment.bill_id == bill_id)
        )
        return paid if isinstance(paid, Decimal) else Decimal("0.00")

    def _bill(self, session: Session, row: m.Bill) -> BillRecord:
        return BillRecord(
            id=row.id,
            key=row.idempotency_key,
            abatement_id=row.abatement_id,
            frontage_id=row.frontage_id,
            owner_name=row.owner_name,
            owner_address_lines=tuple(row.owner_address_lines),
            amount=row.amount,
            paid=self._paid(session, row.id),
            costs_incurred_at=row.costs_incurred_at,
            issued_at=row.issued_at,
            received_at=row.received_at,
            due_date=row.due_date,
            status=row.status,
        )

    def create_bill(
        self, key: str, abatement_id: int, issued_at: datetime, *, due_date: date | None = None
    ) -> BillRecord:
        """Bill the sum of an abatement's expenses to the frontage's current owner.

        ``costs_incurred_at`` is the latest expense's time (the § 370-10 G
        60-day tax-roll clock counts from it). ``due_date`` is the caller's
        (receipt + 10 calendar days), often set later by ``set_bill_received``.
        """
        issued_at = _aware("issued_at", issued_at)

        def build(session: Session) -> m.Bill:
            abatement = self._get(session, m.Abatement, abatement_id)
            frontage = self._get(session, m.Frontage, abatement.frontage_id)
            owner = self._get(session, m.Owner, frontage.owner_id)
            expenses = list(
                session.scalars(select(m.Expense).where(m.Expense.abatement_id == abatement_id))
            )
            if not expenses:
                raise BillingError(f"abatement {abatement_id} has no expenses to bill")
            row = m.Bill(
                idempotency_key=key,
                abatement_id=abatement_id,
                frontage_id=frontage.id,
                owner_name=owner.name,
                owner_address_lines=list(owner.address_lines),
                amount=sum((e.amount for e in expenses), Decimal("0.00")),
                costs_incurred_at=max(e.incurred_at for e in expenses),
                issued_at=issued_at,
                received_at=None,
                due_date=due_date,
                status="open",
            )
            session.add(row)
            session.flush()
            self._append_audit(
                session, "system", "bill.issued", f"bill:{row.id}",
                {"key": key, "abatement": abatement_id, "amount": row.amount,
                 "issued_at": issued_at, "due_date": due_date},
            )  # fmt: skip
            return row

        return self._create_once(m.Bill, key, build, self._bill)

    def set_bill_received(self, bill_id: int, received_at: datetime, due_date: date) -> BillRecord:
        """Record receipt of the bill and the due date the caller computed from it."""
        received_at = _aware("received_at", received_at)
        with self._write() as session:
            row = self._get(session, m.Bill, bill_id)
            if row.received_at is None:
                row.received_at = received_at
                row.due_date = due_date
                self._append_audit(
                    session, "system", "bill.received", f"bill:{row.id}",
                    {"received_at": received_at, "due_date": due_date},
                )  # fmt: skip
            session.flush()
            return self._bill(session, row)

    def get_bill(self, bill_id: int) -> BillRecord:
        with self._read() as session:
            return self._bill(session, self._get(session, m.Bill, bill_id))

    def bill_balance(self, bill_id: int) -> Decimal:
        """Amount still owed on a bill (exact Decimal; negative if overpaid)."""
        return self.get_bill(bill_id).balance

    def record_payment(
        self,
        key: str,
        bill_id: int,
        amount: Decimal,
        paid_at: datetime,
        *,
        method: str,
        reference: str | None = None,
    ) -> PaymentRecord:
        """Record a payment once per ``key``; a bill paid in full becomes ``paid``."""
        _check_amount("payment", amount)
        paid_at = _aware("paid_at", paid_at)

        def build(session: Session) -> m.Payment:
            bill = self._get(session, m.Bill, bill_id)
            row = m.Payment(
                idempotency_key=key,
                bill_id=bill_id,
                amount=amount,
                paid_at=paid_at,
                method=method,
                reference=reference,
            )
            session.add(row)
            session.flush()
            if bill.status == "open" and self._paid(session, bill_id) >= bill.amount:
                bill.status = "paid"
            self._append_audit(
                session, "system", "payment.recorded", f"bill:{bill_id}",
                {"key": key, "amount": amount, "paid_at": paid_at, "method": method},
            )  # fmt: skip
            return row

        return self._create_once(m.Payment, key, build, lambda _s, row: _payment(row))

    def certify_tax_roll(
        self, bill_id: int, certified_at: datetime, tax_year: int, citation: str | None = None
    ) -> TaxRollRecord:
        """Enter a bill's unpaid balance on the tax roll (once per bill)."""
        certified_at = _aware("certified_at", certified_at)
        with self._write() as session:
            existing = session.scalar(
                select(m.TaxRollEntry).where(m.TaxRollEntry.bill_id == bill_id)
            )
            if existing is not None:
                return _tax_roll(existing)
            bill = self._get(session, m.Bill, bill_id)
            balance = bill.amount - self._paid(session, bill_id)
            if balance <= 0:
                raise BillingError(f"bill {bill_id} has no unpaid balance")
            frontage = self._get(session, m.Frontage, bill.frontage_id)
            row = m.TaxRollEntry(
                bill_id=bill_id,
                frontage_id=frontage.id,
                parcel_number=frontage.parcel_number,
                amount=balance,
                tax_year=tax_year,
                certified_at=certified_at,
                citation=citation,
            )
            session.add(row)
            bill.status = "certified"
            session.flush()
            self._append_audit(
                session, "system", "tax_roll.certified", f"bill:{bill_id}",
                {"parcel": frontage.parcel_number, "amount": balance, "tax_year": tax_year},
            )  # fmt: skip
            return _tax_roll(row)

    def list_tax_roll(self, tax_year: int | None = None) -> list[TaxRollRecord]:
        query = select(m.TaxRollEntry).order_by(m.TaxRollEntry.id)
        if tax_year is not None:
            query = query.where(m.TaxRollEntry.tax_year == tax_year)
        with self._read() as session:
            return [_tax_roll(r) for r in session.scalars(query)]

    # ------------------------------------------------------------ audit log

    def _append_audit(
        self,
        session: Session,
        actor: str,
        action: str,
        subject: str,
        detail: Mapping[str, Any] | None,
        *,
        at: datetime | None = None,
    ) -> m.AuditEntry:
        if self.dialect == "postgresql":
            # Held to commit: writers take the chain's head one at a time.
            # (SQLite writers are already serialised by BEGIN IMMEDIATE.)
            session.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _AUDIT_LOCK_ID})
        prev = session.scalar(select(m.AuditEntry.hash).order_by(m.AuditEntry.id.desc()).limit(1))
        row = m.AuditEntry(
            recorded_at=_aware("at", at) if at is not None else _now(),
            actor=actor,
            action=action,
            subject=subject,
            detail_json=canonical_json(dict(detail or {})),
            prev_hash=prev or GENESIS_HASH,
        )
        row.hash = _audit_hash(row)
        session.add(row)
        session.flush()
        return row

    def append_audit(
        self,
        actor: str,
        action: str,
        subject: str,
        detail: Mapping[str, Any] | None = None,
        *,
        at: datetime | None = None,
    ) -> AuditRecord:
        """Log that ``actor`` (a person, or ``system``) did ``action`` to ``subject``.

        ``at`` defaults to now; the row's hash covers its content and the
        previous row's hash.
        """
        with self._write() as session:
            return _audit(self._append_audit(session, actor, action, subject, detail, at=at))

    def append_audit_once(
        self,
        actor: str,
        action: str,
        subject: str,
        detail: Mapping[str, Any] | None,
        *,
        key: str,
        at: datetime | None = None,
    ) -> AuditRecord:
        """``append_audit`` unless a row for ``subject`` already has ``detail["key"] == key``
        (a finding judged again after a replay or a restart); returns the stored row."""
        with self._write() as session:
            if self.dialect == "postgresql":
                # The chain's lock (re-entrant in the transaction) also serialises the check.
                session.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _AUDIT_LOCK_ID})
            same = select(m.AuditEntry).where(
                m.AuditEntry.subject == subject, m.AuditEntry.action == action
            )
            for row in session.scalars(same):
                if json.loads(row.detail_json).get("key") == key:
                    return _audit(row)
            row = self._append_audit(
                session, actor, action, subject, {**(detail or {}), "key": key}, at=at
            )
            return _audit(row)

    def list_audit(self, subject: str | None = None) -> list[AuditRecord]:
        query = select(m.AuditEntry).order_by(m.AuditEntry.id)
        if subject is not None:
            query = query.where(m.AuditEntry.subject == subject)
        with self._read() as session:
            return [_audit(r) for r in session.scalars(query)]

    def verify_audit_chain(self) -> AuditVerification:
        """Recompute every row's hash and link; report the first row that fails."""
        prev_hash = GENESIS_HASH
        rows = 0
        query = select(m.AuditEntry).order_by(m.AuditEntry.id).execution_options(yield_per=1000)
        with self._read() as session:
            for row in session.scalars(query):
                rows += 1
                if row.prev_hash != prev_hash:
                    return AuditVerification(False, rows, row.id, "link to previous row broken")
                if row.hash != _audit_hash(row):
                    return AuditVerification(False, rows, row.id, "content does not match hash")
                prev_hash = row.hash
        return AuditVerification(True, rows)

    # ------------------------------------------------------------ engine state and actions

    def save_engine_snapshot(self, name: str, event_time: datetime | None, state_json: str) -> None:
        """Replace runner ``name``'s engine snapshot (one row per runner)."""
        with self._write() as session:
            row = session.get(m.EngineSnapshot, name)
            if row is None:
                row = m.EngineSnapshot(name=name)
                session.add(row)
            row.event_time = None if event_time is None else _aware("event_time", event_time)
            row.state_json = state_json
            row.saved_at = _now()

    def load_engine_snapshot(self, name: str) -> str | None:
        """The saved engine state for runner ``name``, or None on a first start."""
        with self._read() as session:
            row = session.get(m.EngineSnapshot, name)
            return None if row is None else row.state_json

    def record_action(
        self,
        kind: str,
        target: str,
        at: datetime,
        who: str,
        detail: Mapping[str, Any] | None = None,
    ) -> ActionRecord:
        """Append a person's action (and an audit row naming them) for the runner to apply."""
        at = _aware("at", at)
        if not who.strip():
            raise CaseStoreError("an action must name who recorded it")
        with self._write() as session:
            row = m.PersonAction(
                kind=kind, target=target, at=at, who=who, detail=_jsonable(detail),
                recorded_at=_now(), applied_at=None, error=None,
            )  # fmt: skip
            session.add(row)
            session.flush()
            self._append_audit(
                session,
                who,
                f"action.{kind}",
                target,
                {"action_id": row.id, "at": at.isoformat(), **_jsonable(detail)},
            )
            return _action(row)

    def pending_actions(self) -> list[ActionRecord]:
        """Actions not yet applied, in the order they were recorded."""
        query = (
            select(m.PersonAction)
            .where(m.PersonAction.applied_at.is_(None))
            .order_by(m.PersonAction.id)
        )
        with self._read() as session:
            return [_action(r) for r in session.scalars(query)]

    def list_actions(self, target: str | None = None) -> list[ActionRecord]:
        query = select(m.PersonAction).order_by(m.PersonAction.id)
        if target is not None:
            query = query.where(m.PersonAction.target == target)
        with self._read() as session:
            return [_action(r) for r in session.scalars(query)]

    def mark_action_applied(self, action_id: int, error: str | None = None) -> ActionRecord:
        """Mark an action applied (``error`` says why it was refused, if it was)."""
        with self._write() as session:
            row = self._get(session, m.PersonAction, action_id)
            row.applied_at = _now()
            row.error = error
            session.flush()
            return _action(row)

    def violation_by_key(self, key: str) -> ViolationRecord | None:
        """The violation recorded under a decision key, if any."""
        with self._read() as session:
            row = session.scalar(select(m.Violation).where(m.Violation.idempotency_key == key))
            return None if row is None else _violation(row)

    def bill_for_abatement(self, abatement_id: int) -> BillRecord | None:
        """The bill sent for an abatement, if the clerk has billed it."""
        with self._read() as session:
            row = session.scalar(select(m.Bill).where(m.Bill.abatement_id == abatement_id))
        return None if row is None else self.get_bill(row.id)

    def abatement_by_key(self, key: str) -> AbatementRecord | None:
        with self._read() as session:
            row = session.scalar(select(m.Abatement).where(m.Abatement.idempotency_key == key))
            return None if row is None else _abatement(row)

    # ------------------------------------------------------------ delivery outbox

    def enqueue_delivery(
        self,
        notice_id: int,
        channel: str,
        target: str,
        at: datetime,
        *,
        detail: Mapping[str, Any] | None = None,
    ) -> DeliveryJobRecord:
        """Queue a notice for one channel and target, once: the same triple returns the job."""
        at = _aware("at", at)
        key = f"notice:{notice_id}/{channel}/{target}"
        lookup = select(m.DeliveryJob).where(m.DeliveryJob.idempotency_key == key)
        try:
            with self._write() as session:
                existing = session.scalar(lookup)
                if existing is not None:
                    return _delivery_job(existing)
                notice = self._get(session, m.Notice, notice_id)
                row = m.DeliveryJob(
                    idempotency_key=key, notice_id=notice_id, channel=channel, target=target,
                    status="queued", attempts=0, next_attempt_at=at, claimed_at=None,
                    sent_at=None, last_error=None, detail=_jsonable(detail), created_at=at,
                )  # fmt: skip
                session.add(row)
                session.flush()
                self._append_audit(
                    session, "system", "delivery.queued", f"notice:{notice.number}",
                    {"job": row.id, "channel": channel, "target": target},
                )  # fmt: skip
                return _delivery_job(row)
        except IntegrityError:
            with self._read() as session:
                return _delivery_job(session.scalars(lookup).one())

    def claim_delivery(self, job_id: int, at: datetime) -> DeliveryJobRecord | None:
        """Take a due ``queued`` job for sending; None if another worker has it or it is done.

        The conditional UPDATE is the lock: of two workers, exactly one claims it.
        """
        at = _aware("at", at)
        with self._write() as session:
            claimed = session.execute(
                update(m.DeliveryJob)
                .where(
                    m.DeliveryJob.id == job_id,
                    m.DeliveryJob.status == "queued",
                    m.DeliveryJob.next_attempt_at <= at,
                )
                .values(status="sending", claimed_at=at, attempts=m.DeliveryJob.attempts + 1)
            )
            if claimed.rowcount != 1:  # type: ignore[attr-defined]
                return None
            return _delivery_job(self._get(session, m.DeliveryJob, job_id))

    def finish_delivery(
        self,
        job_id: int,
        at: datetime,
        *,
        sent: bool,
        error: str | None = None,
        retry_at: datetime | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> DeliveryJobRecord:
        """Close a claimed attempt: ``sent``, back to ``queued`` at ``retry_at``, or ``failed``."""
        at = _aware("at", at)
        with self._write() as session:
            row = self._get(session, m.DeliveryJob, job_id)
            if row.status != "sending":
                raise CaseStoreError(f"delivery job {job_id} is {row.status}, not sending")
            notice = self._get(session, m.Notice, row.notice_id)
            if sent:
                row.status, row.sent_at, row.last_error = "sent", at, None
                action = "delivery.sent"
            elif retry_at is not None:
                row.status, row.next_attempt_at = "queued", _aware("retry_at", retry_at)
                row.last_error = error
                action = "delivery.retry"
            else:
                row.status, row.last_error = "failed", error
                action = "delivery.failed"
            row.detail = {**row.detail, **_jsonable(detail)}
            session.add(
                m.Delivery(
                    notice_id=row.notice_id, bill_id=None, channel=row.channel, target=row.target,
                    attempted_at=row.claimed_at or at, status="sent" if sent else "failed",
                    detail=_jsonable({"job": row.id, "attempt": row.attempts, "error": error,
                                      **dict(detail or {})}),
                )
            )  # fmt: skip
            session.flush()
            self._append_audit(
                session, "system", action, f"notice:{notice.number}",
                {"job": row.id, "channel": row.channel, "attempt": row.attempts, "error": error,
                 "retry_at": retry_at},
                at=at,
            )  # fmt: skip
            return _delivery_job(row)

    def due_delivery_jobs(
        self, at: datetime, channel: str | None = None
    ) -> list[DeliveryJobRecord]:
        """Queued jobs whose next attempt is due at ``at``, oldest first."""
        query = (
            select(m.DeliveryJob)
            .where(
                m.DeliveryJob.status == "queued", m.DeliveryJob.next_attempt_at <= _aware("at", at)
            )
            .order_by(m.DeliveryJob.next_attempt_at, m.DeliveryJob.id)
        )
        if channel is not None:
            query = query.where(m.DeliveryJob.channel == channel)
        with self._read() as session:
            return [_delivery_job(r) for r in session.scalars(query)]

    def list_delivery_jobs(
        self,
        *,
        status: str | None = None,
        notice_id: int | None = None,
        channel: str | None = None,
    ) -> list[DeliveryJobRecord]:
        """Delivery jobs in queue order, optionally filtered."""
        query = select(m.DeliveryJob).order_by(m.DeliveryJob.id)
        if status is not None:
            query = query.where(m.DeliveryJob.status == status)
        if notice_id is not None:
            query = query.where(m.DeliveryJob.notice_id == notice_id)
        if channel is not None:
            query = query.where(m.DeliveryJob.channel == channel)
        with self._read() as session:
            return [_delivery_job(r) for r in session.scalars(query)]

    def mark_stale_deliveries_uncertain(self, claimed_before: datetime) -> list[DeliveryJobRecord]:
        """Jobs left ``sending`` by a crash: they may have gone out, so a person decides."""
        cutoff = _aware("claimed_before", claimed_before)
        with self._write() as session:
            rows = list(
                session.scalars(
                    select(m.DeliveryJob).where(
                        m.DeliveryJob.status == "sending", m.DeliveryJob.claimed_at < cutoff
                    )
                )
            )
            for row in rows:
                row.status = "uncertain"
                notice = self._get(session, m.Notice, row.notice_id)
                self._append_audit(
                    session, "system", "delivery.uncertain", f"notice:{notice.number}",
                    {"job": row.id, "channel": row.channel, "claimed_at": row.claimed_at},
                )  # fmt: skip
            session.flush()
            return [_delivery_job(r) for r in rows]

    def resolve_delivery(
        self, job_id: int, *, sent: bool, at: datetime, who: str
    ) -> DeliveryJobRecord:
        """A person settles an ``uncertain`` or ``failed`` job: it went out, or send it again."""
        at = _aware("at", at)
        if not who.strip():
            raise CaseStoreError("resolving a delivery must name who decided")
        with self._write() as session:
            row = self._get(session, m.DeliveryJob, job_id)
            if row.status not in ("uncertain", "failed"):
                raise CaseStoreError(f"delivery job {job_id} is {row.status}; nothing to resolve")
            notice = self._get(session, m.Notice, row.notice_id)
            if sent:
                row.status, row.sent_at = "sent", at
            else:
                row.status, row.next_attempt_at = "queued", at
            self._append_audit(
                session, who, "delivery.resolved", f"notice:{notice.number}",
                {"job": row.id, "sent": sent}, at=at,
            )  # fmt: skip
            session.flush()
            return _delivery_job(row)

    def refresh_notice_owner(self, notice_id: int) -> NoticeRecord:
        """Re-copy the owner's name and address onto a notice that is still ``pending``.

        A notice kept pending for a missing address is issued again to the
        corrected address; one already rendered or delivered keeps its snapshot.
        """
        with self._write() as session:
            row = self._get(session, m.Notice, notice_id)
            if row.status != "pending":
                raise CaseStoreError(f"notice {row.number} is {row.status}; its addressee is final")
            frontage = self._get(session, m.Frontage, row.frontage_id)
            owner = self._get(session, m.Owner, frontage.owner_id)
            if (row.owner_id, row.owner_name, row.owner_address_lines) != (
                owner.id,
                owner.name,
                list(owner.address_lines),
            ):
                row.owner_id, row.owner_name = owner.id, owner.name
                row.owner_address_lines = list(owner.address_lines)
                self._append_audit(
                    session, "system", "notice.readdressed", f"notice:{row.number}",
                    {"owner": owner.id, "address_lines": list(owner.address_lines)},
                )  # fmt: skip
            session.flush()
            return _notice(row)

    def get_delivery_job(self, job_id: int) -> DeliveryJobRecord:
        with self._read() as session:
            return _delivery_job(self._get(session, m.DeliveryJob, job_id))

    # ------------------------------------------------------------ bills (listing)

    def list_bills(self, *, status: str | None = None) -> list[BillRecord]:
        """Bills in issue order (``open``, ``paid`` or ``certified``)."""
        query = select(m.Bill).order_by(m.Bill.issued_at, m.Bill.id)
        if status is not None:
            query = query.where(m.Bill.status == status)
        with self._read() as session:
            return [self._bill(session, r) for r in session.scalars(query)]

    def list_payments(self, bill_id: int) -> list[PaymentRecord]:
        """A bill's payments in the order they were made."""
        query = select(m.Payment).where(m.Payment.bill_id == bill_id).order_by(m.Payment.paid_at)
        with self._read() as session:
            return [_payment(r) for r in session.scalars(query)]

    def get_abatement(self, abatement_id: int) -> AbatementRecord:
        with self._read() as session:
            return _abatement(self._get(session, m.Abatement, abatement_id))

    # -- § 370-5 condition inspections (issue 4); records and helpers at the end of the module

    def record_inspection(
        self,
        frontage_id: str,
        *,
        surveyed_at: datetime,
        kind: InspectionKind,
        source_name: str,
        source_sha256: str,
        result: Mapping[str, Any],
        blocks: Sequence[Mapping[str, Any]] = (),
        evidence_sha256: str | None = None,
        failure: str | None = None,
    ) -> InspectionRecord:
        """Store one inspected file, or return the row already stored for it.

        The key is frontage + the file's sha256, so inspecting the same file
        again never adds a row. ``failure`` set means the file could not be
        measured (status ``failed``); ``blocks`` are the per-block verdicts
        (``block``, ``defective``, ``checks``) the 80 % rule reads.
        """
        key = f"inspection/{frontage_id}/{source_sha256}"
        lookup = select(m.Inspection).where(m.Inspection.idempotency_key == key)
        row_data = m.Inspection(
            idempotency_key=key,
            frontage_id=frontage_id,
            surveyed_at=_aware("surveyed_at", surveyed_at),
            recorded_at=_now(),
            kind=kind,
            source_name=source_name[:500],
            source_sha256=source_sha256,
            status="failed" if failure is not None else "ok",
            failure=None if failure is None else failure[:500],
            result=_jsonable(result),
            blocks=json.loads(canonical_json(list(blocks))),
            evidence_sha256=evidence_sha256,
        )
        try:
            with self._write() as session:
                existing = session.scalar(lookup)
                if existing is not None:
                    return _inspection(existing)
                self._get(session, m.Frontage, frontage_id)
                session.add(row_data)
                session.flush()
                return _inspection(row_data)
        except IntegrityError:
            with self._read() as session:
                winner = session.scalar(lookup)
                if winner is None:
                    raise
                return _inspection(winner)

    def list_inspections(
        self, frontage_id: str | None = None, owner_id: str | None = None
    ) -> list[InspectionRecord]:
        """Inspections, oldest survey first, of one frontage and/or one owner's frontages."""
        query = select(m.Inspection).order_by(m.Inspection.surveyed_at, m.Inspection.id)
        if frontage_id is not None:
            query = query.where(m.Inspection.frontage_id == frontage_id)
        if owner_id is not None:
            query = query.join(m.Frontage, m.Frontage.id == m.Inspection.frontage_id).where(
                m.Frontage.owner_id == owner_id
            )
        with self._read() as session:
            return [_inspection(r) for r in session.scalars(query)]

    def owner_block_conditions(self, owner_id: str) -> list[BlockConditionRecord]:
        """Every surveyed block of the owner's frontages, the latest inspection's verdict each.

        A block is (frontage, block number); a later survey of it replaces an
        earlier one (ties broken by the later row). Failed files say nothing.
        """
        latest: dict[tuple[str, int], BlockConditionRecord] = {}
        for insp in self.list_inspections(owner_id=owner_id):
            if insp.status != "ok":
                continue
            for b in insp.blocks:
                block = int(b["block"])
                latest[(insp.frontage_id, block)] = BlockConditionRecord(
                    insp.frontage_id, block, bool(b["defective"]), insp.id, insp.surveyed_at,
                    tuple(dict(c) for c in b.get("checks", ())),
                )  # fmt: skip
        return [latest[k] for k in sorted(latest)]


def _action(row: m.PersonAction) -> ActionRecord:
    return ActionRecord(
        row.id, row.kind, row.target, row.at, row.who, dict(row.detail or {}),
        row.recorded_at, row.applied_at, row.error,
    )  # fmt: skip


@dataclass(frozen=True)
class DeliveryJobRecord:
    """A notice queued for one channel and target, and how far its delivery has got."""

    id: int
    key: str
    notice_id: int
    channel: str
    target: str
    status: str
    attempts: int
    next_attempt_at: datetime | None
    claimed_at: datetime | None
    sent_at: datetime | None
    last_error: str | None
    detail: Mapping[str, Any]
    created_at: datetime


def _delivery_job(row: m.DeliveryJob) -> DeliveryJobRecord:
    return DeliveryJobRecord(
        row.id, row.idempotency_key, row.notice_id, row.channel, row.target, row.status,
        row.attempts, row.next_attempt_at, row.claimed_at, row.sent_at, row.last_error,
        dict(row.detail or {}), row.created_at,
    )  # fmt: skip


# ---------------------------------------------------------------- dashboard (issue 7)

DashboardRole = Literal["viewer", "inspector", "clerk", "admin"]


@dataclass(frozen=True)
class DashboardUserRecord:
    username: str
    password_hash: str
    role: str
    disabled: bool
    created_at: datetime


@dataclass(frozen=True)
class DashboardSessionRecord:
    token_hash: str
    username: str
    csrf_token: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None


def _dashboard_user(row: m.DashboardUser) -> DashboardUserRecord:
    return DashboardUserRecord(
        row.username, row.password_hash, row.role, row.disabled, row.created_at
    )


def _dashboard_session(row: m.DashboardSession) -> DashboardSessionRecord:
    return DashboardSessionRecord(
        row.token_hash, row.username, row.csrf_token, row.created_at, row.expires_at,
        row.revoked_at,
    )  # fmt: skip


class DashboardRecords:
    """The dashboard's reads and account writes on a ``CaseStore``'s database.

    Kept beside ``CaseStore`` (its sessions, this module) so that only this
    module touches SQLAlchemy: ``DashboardRecords(cases)``.
    """

    def __init__(self, store: CaseStore) -> None:
        self._store = store

    # -- accounts and sessions

    def add_user(
        self, username: str, password_hash: str, role: DashboardRole, who: str
    ) -> DashboardUserRecord:
        """Create an account (refused if the name is taken); audited as ``who``."""
        with self._store._write() as session:
            if session.get(m.DashboardUser, username) is not None:
                raise CaseStoreError(f"user {username!r} exists")
            row = m.DashboardUser(
                username=username, password_hash=password_hash, role=role, disabled=False,
                created_at=_now(),
            )  # fmt: skip
            session.add(row)
            session.flush()
            self._store._append_audit(
                session, who, "user.created", f"user:{username}", {"role": role}
            )
            return _dashboard_user(row)

    def update_user(
        self,
        username: str,
        who: str,
        *,
        role: DashboardRole | None = None,
        password_hash: str | None = None,
        disabled: bool | None = None,
    ) -> DashboardUserRecord:
        """Change an account's role, password or disabled flag; sessions end on any change."""
        with self._store._write() as session:
            row = self._store._get(session, m.DashboardUser, username)
            changed: dict[str, Any] = {}
            if role is not None and role != row.role:
                changed["role"] = role
                row.role = role
            if password_hash is not None:
                changed["password"] = "changed"
                row.password_hash = password_hash
            if disabled is not None and disabled != row.disabled:
                changed["disabled"] = disabled
                row.disabled = disabled
            if changed:
                session.execute(
                    update(m.DashboardSession)
                    .where(
                        m.DashboardSession.username == username,
                        m.DashboardSession.revoked_at.is_(None),
                    )
                    .values(revoked_at=_now())
                )
                self._store._append_audit(session, who, "user.changed", f"user:{username}", changed)
            session.flush()
            return _dashboard_user(row)

    def get_user(self, username: str) -> DashboardUserRecord | None:
        with self._store._read() as session:
            row = session.get(m.DashboardUser, username)
            return None if row is None else _dashboard_user(row)

    def list_users(self) -> list[DashboardUserRecord]:
        query = select(m.DashboardUser).order_by(m.DashboardUser.username)
        with self._store._read() as session:
            return [_dashboard_user(r) for r in session.scalars(query)]

    def create_session(
        self, token_hash: str, username: str, csrf_token: str, expires_at: datetime
    ) -> DashboardSessionRecord:
        """Store a new login session (the audit row names the person who logged in)."""
        with self._store._write() as session:
            row = m.DashboardSession(
                token_hash=token_hash, username=username, csrf_token=csrf_token,
                created_at=_now(), expires_at=_aware("expires_at", expires_at), revoked_at=None,
            )  # fmt: skip
            session.add(row)
            session.flush()
            self._store._append_audit(session, username, "session.login", f"user:{username}", {})
            return _dashboard_session(row)

    def get_session(self, token_hash: str) -> DashboardSessionRecord | None:
        with self._store._read() as session:
            row = session.get(m.DashboardSession, token_hash)
            return None if row is None else _dashboard_session(row)

    def revoke_session(self, token_hash: str) -> None:
        """End a session (logout); audited as its user."""
        with self._store._write() as session:
            row = session.get(m.DashboardSession, token_hash)
            if row is not None and row.revoked_at is None:
                row.revoked_at = _now()
                self._store._append_audit(
                    session, row.username, "session.logout", f"user:{row.username}", {}
                )

    # -- login throttling (shared by every dashboard worker)

    def add_login_failure(
        self, keys: Sequence[tuple[str, str]], at: datetime, keep_s: float
    ) -> None:
        """Record one failed login under each ``(kind, key)``; forget failures older than
        ``keep_s`` seconds (they no longer count)."""
        at = _aware("at", at)
        with self._store._write() as session:
            session.execute(
                delete(m.LoginFailure).where(m.LoginFailure.at < at - timedelta(seconds=keep_s))
            )
            session.add_all(m.LoginFailure(kind=kind, key=key, at=at) for kind, key in keys)

    def login_failures_since(self, kind: str, key: str, since: datetime) -> list[datetime]:
        """When ``key`` failed to log in at or after ``since``, oldest first."""
        query = (
            select(m.LoginFailure.at)
            .where(
                m.LoginFailure.kind == kind,
                m.LoginFailure.key == key,
                m.LoginFailure.at >= _aware("since", since),
            )
            .order_by(m.LoginFailure.at)
        )
        with self._store._read() as session:
            return list(session.scalars(query))

    def clear_login_failures(self, kind: str, key: str) -> None:
        with self._store._write() as session:
            session.execute(
                delete(m.LoginFailure).where(m.LoginFailure.kind == kind, m.LoginFailure.key == key)
            )

    # -- map geometry

    def set_frontage_geometry(self, frontage_id: str, geometry: Mapping[str, Any]) -> None:
        """Store (or replace) a frontage's GeoJSON geometry."""
        with self._store._write() as session:
            self._store._get(session, m.Frontage, frontage_id)
            row = session.get(m.FrontageGeometry, frontage_id)
            if row is None:
                row = m.FrontageGeometry(frontage_id=frontage_id)
                session.add(row)
            row.geometry = _jsonable(geometry)

    def frontage_geometries(self) -> dict[str, dict[str, Any]]:
        with self._store._read() as session:
            return {
                r.frontage_id: dict(r.geometry) for r in session.scalars(select(m.FrontageGeometry))
            }

    # -- reads for the pages and the live feed

    def marks(self) -> tuple[int, int]:
        """The newest clock-transition id and audit-row id (0 when empty)."""
        with self._store._read() as session:
            transition = session.scalar(select(func.max(m.ClockTransition.id))) or 0
            audit = session.scalar(select(func.max(m.AuditEntry.id))) or 0
            return int(transition), int(audit)

    def transitions_after(self, after_id: int, limit: int = 500) -> list[TransitionRecord]:
        """Clock transitions stored after ``after_id``, in id (storage) order."""
        query = (
            select(m.ClockTransition)
            .where(m.ClockTransition.id > after_id)
            .order_by(m.ClockTransition.id)
            .limit(limit)
        )
        with self._store._read() as session:
            return [_transition(r) for r in session.scalars(query)]

    def audit_after(self, after_id: int, limit: int = 500) -> list[AuditRecord]:
        query = (
            select(m.AuditEntry)
            .where(m.AuditEntry.id > after_id)
            .order_by(m.AuditEntry.id)
            .limit(limit)
        )
        with self._store._read() as session:
            return [_audit(r) for r in session.scalars(query)]

    def recent_audit(self, limit: int = 50) -> list[AuditRecord]:
        """The newest audit rows, newest first."""
        query = select(m.AuditEntry).order_by(m.AuditEntry.id.desc()).limit(limit)
        with self._store._read() as session:
            return [_audit(r) for r in session.scalars(query)]

    def list_violations(self) -> list[ViolationRecord]:
        query = select(m.Violation).order_by(m.Violation.detected_at, m.Violation.id)
        with self._store._read() as session:
            return [_violation(r) for r in session.scalars(query)]

    def list_abatements(self) -> list[AbatementRecord]:
        query = select(m.Abatement).order_by(m.Abatement.ordered_at, m.Abatement.id)
        with self._store._read() as session:
            return [_abatement(r) for r in session.scalars(query)]

    def list_bills(self) -> list[BillRecord]:
        query = select(m.Bill).order_by(m.Bill.issued_at, m.Bill.id)
        with self._store._read() as session:
            return [self._store._bill(session, r) for r in session.scalars(query)]

    def list_owners(self) -> list[OwnerRecord]:
        with self._store._read() as session:
            return [_owner(r) for r in session.scalars(select(m.Owner).order_by(m.Owner.id))]


# ---------------------------------------------------------------- inspections (issue 4)

InspectionKind = Literal["photo", "depth", "laser"]


@dataclass(frozen=True)
class InspectionRecord:
    """One inspected file: its measurements, verdicts per block and evidence image."""

    id: int
    key: str
    frontage_id: str
    surveyed_at: datetime
    recorded_at: datetime
    kind: str
    source_name: str
    source_sha256: str
    status: str  # ok | failed
    failure: str | None
    result: Mapping[str, Any]
    blocks: tuple[Mapping[str, Any], ...]
    evidence_sha256: str | None


@dataclass(frozen=True)
class BlockConditionRecord:
    """One block's latest verdict under § 370-5 (11)."""

    frontage_id: str
    block: int
    defective: bool
    inspection_id: int
    surveyed_at: datetime
    checks: tuple[Mapping[str, Any], ...]


def _inspection(row: m.Inspection) -> InspectionRecord:
    return InspectionRecord(
        row.id, row.idempotency_key, row.frontage_id, row.surveyed_at, row.recorded_at, row.kind,
        row.source_name, row.source_sha256, row.status, row.failure, dict(row.result or {}),
        tuple(dict(b) for b in row.blocks or ()), row.evidence_sha256,
    )  # fmt: skip
