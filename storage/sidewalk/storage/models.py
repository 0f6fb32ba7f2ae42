"""Case-record tables: SQLAlchemy 2 declarative models.

Only ``sidewalk.storage.cases`` imports this module; everything outside the
storage package receives the frozen dataclasses ``cases`` returns.

Conventions:

- Every timestamp is a timezone-aware UTC ``datetime`` (``UTCDateTime``), on
  SQLite as on PostgreSQL. Event times (a clock's start, a transition) are the
  ``ts`` of the reading that caused them, never the time the row was written.
- Money is whole cents in a ``BIGINT`` exposed as ``Decimal`` (``Money``):
  exact on both backends (SQLite has no exact decimal type).
- Natural ids (frontage, owner, device) are the stable slugs of the message
  contract; records the system creates get integer keys plus a UNIQUE
  ``idempotency_key`` so a replayed decision never makes a second row.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Deterministic constraint names, so later migrations can drop or alter them by name.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend.

    SQLite keeps no offset, so naive values would silently mean "whatever the
    writer's zone was"; this type refuses naive input and returns UTC-aware
    values from both SQLite and PostgreSQL (``timestamptz``).
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: case records need timezone-aware times")
        utc = value.astimezone(UTC)
        # SQLite stores the text form; drop the offset so every row sorts as text.
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Money(TypeDecorator[Decimal]):
    """A Decimal amount stored as whole cents; sub-cent amounts are refused."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Decimal | None, dialect: Dialect) -> int | None:
        if value is None:
            return None
        if not isinstance(value, Decimal):
            raise TypeError(f"money must be Decimal, got {type(value).__name__}")
        cents = value * 100
        if cents != cents.to_integral_value():
            raise ValueError(f"{value} has a fraction of a cent")
        return int(cents)

    def process_result_value(self, value: int | None, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        return Decimal(value).scaleb(-2)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: dict[Any, Any] = {  # noqa: RUF012 (SQLAlchemy reads it as a class attribute)
        datetime: UTCDateTime(),
        Decimal: Money(),
        date: Date(),
        dict[str, Any]: JSON(),
        list[Any]: JSON(),
    }


class Owner(Base):
    """A property owner as the village's records know them (last-known address)."""

    __tablename__ = "owners"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    # Mailing address as printed, line by line: § 370-10 G mails to the last-known address.
    address_lines: Mapped[list[Any]]
    email: Mapped[str | None] = mapped_column(String(320))
    updated_at: Mapped[datetime]


class Device(Base):
    """A pole device; availability mirrors its retained status topic."""

    __tablename__ = "devices"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    site: Mapped[str] = mapped_column(String(64), index=True)
    last_seen: Mapped[datetime | None]
    availability: Mapped[str] = mapped_column(String(16), default="unknown")
    # The registry's pole: where it stands and what the Village calls it.
    label: Mapped[str | None] = mapped_column(String(200))
    latitude: Mapped[float | None] = mapped_column(Float)
    longitude: Mapped[float | None] = mapped_column(Float)
    # The calibration the pole says it runs (its hash, from its health message).
    reported_calibration: Mapped[str | None] = mapped_column(String(64))
    reported_calibration_at: Mapped[datetime | None]
    retired_at: Mapped[datetime | None]


class Frontage(Base):
    """One property's sidewalk frontage: the unit every clock runs on."""

    __tablename__ = "frontages"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    site: Mapped[str] = mapped_column(String(64), index=True)
    parcel_number: Mapped[str] = mapped_column(String(64), index=True)
    street_address: Mapped[str] = mapped_column(String(200))
    length_ft: Mapped[float] = mapped_column(Float)
    zone: Mapped[str] = mapped_column(String(16))
    owner_id: Mapped[str] = mapped_column(ForeignKey("owners.id"), index=True)
    device_id: Mapped[str | None] = mapped_column(ForeignKey("devices.id"), index=True)
    # § 370-10 C exception, decided per frontage.
    may_deposit_on_street: Mapped[bool] = mapped_column(Boolean, default=False)
    # From the registry: the parcel and street side it fronts (a corner lot has two).
    parcel_id: Mapped[str | None] = mapped_column(ForeignKey("parcels.id"), index=True)
    street: Mapped[str | None] = mapped_column(String(200))
    side: Mapped[str | None] = mapped_column(String(16))
    walk_width_ft: Mapped[float | None] = mapped_column(Float)
    corner: Mapped[bool] = mapped_column(Boolean, default=False)
    retired_at: Mapped[datetime | None]
    # False: "not watched yet" (no pole's clock runs on it; the Village inspects it by hand).
    watched: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())

    __table_args__ = (CheckConstraint("zone IN ('residential', 'commercial')", name="zone"),)


class Clock(Base):
    """One ordinance clock, running or finished, with the rule values it used."""

    __tablename__ = "clocks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"))
    kind: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime]
    deadline: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]
    cause: Mapped[dict[str, Any]]
    citation: Mapped[str | None] = mapped_column(String(200))
    rules: Mapped[list[Any]]
    unconfirmed: Mapped[bool] = mapped_column(Boolean)

    __table_args__ = (Index("ix_clocks_frontage_open", "frontage_id", "closed_at"),)


class ClockTransition(Base):
    """Append-only history of a clock; a replayed transition is not stored twice.

    ``revision``: the corrections of the case's facts made before it (a case corrected
    back to a state at a time it stood at before moves again: a new row)."""

    __tablename__ = "clock_transitions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    clock_id: Mapped[int] = mapped_column(ForeignKey("clocks.id"), index=True)
    from_state: Mapped[str] = mapped_column(String(32))
    to_state: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime]
    cause: Mapped[dict[str, Any]]
    detail: Mapped[dict[str, Any]]
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    __table_args__ = (UniqueConstraint("clock_id", "at", "to_state", "revision"),)


class Violation(Base):
    __tablename__ = "violations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"), index=True)
    clock_id: Mapped[int | None] = mapped_column(ForeignKey("clocks.id"), index=True)
    rule: Mapped[str] = mapped_column(String(100))
    citation: Mapped[str | None] = mapped_column(String(200))
    detected_at: Mapped[datetime]
    evidence: Mapped[dict[str, Any]]
    # § 370-10 E: each 24-hour period is a separate offense.
    offense_count: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(16))


class NoticeCounter(Base):
    """Last notice number issued per year; its row lock serialises allocation."""

    __tablename__ = "notice_counters"

    year: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_number: Mapped[int] = mapped_column(Integer)


class Notice(Base):
    """A written notice: a legal document, so the owner is snapshotted at issue."""

    __tablename__ = "notices"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    number: Mapped[str] = mapped_column(String(32), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(40), index=True)
    violation_id: Mapped[int | None] = mapped_column(ForeignKey("violations.id"), index=True)
    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"), index=True)
    owner_id: Mapped[str] = mapped_column(ForeignKey("owners.id"))
    owner_name: Mapped[str] = mapped_column(String(200))
    owner_address_lines: Mapped[list[Any]]
    issued_at: Mapped[datetime]
    deadline: Mapped[datetime | None]
    citation: Mapped[str | None] = mapped_column(String(200))
    rules: Mapped[list[Any]]
    detail: Mapped[dict[str, Any]]
    body_text: Mapped[str | None] = mapped_column(Text)
    body_html: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), index=True)
    rendered_at: Mapped[datetime | None]
    delivered_at: Mapped[datetime | None]
    received_at: Mapped[datetime | None]

    __table_args__ = (
        CheckConstraint(
            "status IN ('pending', 'held', 'rendered', 'delivered')", name="status"
        ),  # held: relies on a profile value the Village has not confirmed (0007)
    )


class Delivery(Base):
    """One attempt to deliver a notice or bill by one channel."""

    __tablename__ = "deliveries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    notice_id: Mapped[int | None] = mapped_column(ForeignKey("notices.id"), index=True)
    bill_id: Mapped[int | None] = mapped_column(ForeignKey("bills.id"), index=True)
    channel: Mapped[str] = mapped_column(String(16))
    target: Mapped[str] = mapped_column(String(400))
    attempted_at: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(16))
    detail: Mapped[dict[str, Any]]


class Abatement(Base):
    """A village work order to remove what the owner did not (§ 370-10 B(1), F)."""

    __tablename__ = "abatements"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"), index=True)
    violation_id: Mapped[int | None] = mapped_column(ForeignKey("violations.id"))
    notice_id: Mapped[int | None] = mapped_column(ForeignKey("notices.id"))
    reason: Mapped[str] = mapped_column(String(200))  # a key: alerts.wording.ABATEMENT_REASONS
    ordered_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(16))
    detail: Mapped[dict[str, Any]]


class Expense(Base):
    """One ledger line of an abatement's cost (§ 370-10 G "an account shall be kept")."""

    __tablename__ = "expenses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    abatement_id: Mapped[int] = mapped_column(ForeignKey("abatements.id"), index=True)
    incurred_at: Mapped[datetime]
    description: Mapped[str] = mapped_column(String(400))
    amount: Mapped[Decimal] = mapped_column("amount_cents")

    __table_args__ = (CheckConstraint("amount_cents > 0", name="positive"),)


class Bill(Base):
    """The bill for an abatement's expenses; the caller computes the due date."""

    __tablename__ = "bills"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    abatement_id: Mapped[int] = mapped_column(ForeignKey("abatements.id"), unique=True)
    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"), index=True)
    owner_name: Mapped[str] = mapped_column(String(200))
    owner_address_lines: Mapped[list[Any]]
    amount: Mapped[Decimal] = mapped_column("amount_cents")
    costs_incurred_at: Mapped[datetime]
    issued_at: Mapped[datetime]
    received_at: Mapped[datetime | None]
    due_date: Mapped[date | None]
    status: Mapped[str] = mapped_column(String(16))


class Payment(Base):
    __tablename__ = "payments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    bill_id: Mapped[int] = mapped_column(ForeignKey("bills.id"), index=True)
    amount: Mapped[Decimal] = mapped_column("amount_cents")
    paid_at: Mapped[datetime]
    method: Mapped[str] = mapped_column(String(32))
    reference: Mapped[str | None] = mapped_column(String(100))
    # Set when a correction voided it (the row stays; balances count it no more).
    voided_at: Mapped[datetime | None]

    __table_args__ = (CheckConstraint("amount_cents > 0", name="positive"),)


class TaxRollEntry(Base):
    """An unpaid bill certified onto the tax roll as a special tax (§ 66.0907(5))."""

    __tablename__ = "tax_roll_entries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bill_id: Mapped[int] = mapped_column(ForeignKey("bills.id"), unique=True)
    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"))
    parcel_number: Mapped[str] = mapped_column(String(64))
    amount: Mapped[Decimal] = mapped_column("amount_cents")
    tax_year: Mapped[int] = mapped_column(Integer)
    certified_at: Mapped[datetime]
    citation: Mapped[str | None] = mapped_column(String(200))


class AuditEntry(Base):
    """Append-only, hash-chained: ``hash`` covers this row and ``prev_hash``.

    ``prev_hash`` is UNIQUE, so two writers racing for the chain's head cannot
    both link to it; the loser retries on the new head.
    """

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    recorded_at: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(100))
    subject: Mapped[str] = mapped_column(String(200), index=True)
    # Stored as the exact canonical JSON text that was hashed.
    detail_json: Mapped[str] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(String(64), unique=True)
    hash: Mapped[str] = mapped_column(String(64), unique=True)


class ProfileConfirmation(Base):
    """The Village confirming an ordinance-profile value the code text leaves open.

    One row per confirmation (a later one for the same ``name`` supersedes it);
    ``value`` is the value as confirmed (``24 hours``), so a profile that later
    changes it is unconfirmed again.
    """

    __tablename__ = "profile_confirmations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(120), index=True)
    value: Mapped[str] = mapped_column(String(200))
    confirmed_by: Mapped[str] = mapped_column(String(200))
    reference: Mapped[str] = mapped_column(Text)
    confirmed_at: Mapped[datetime]
    recorded_by: Mapped[str] = mapped_column(String(100))
    recorded_at: Mapped[datetime]


class EngineSnapshot(Base):
    """The clock engine's whole state, saved before the readings it covers are acknowledged.

    One row per runner (its client id): a restart restores it and the broker
    re-delivers what came after, so every clock resumes exactly.
    """

    __tablename__ = "engine_snapshots"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    event_time: Mapped[datetime | None]
    state_json: Mapped[str] = mapped_column(Text)
    saved_at: Mapped[datetime]


class PersonAction(Base):
    """What a person recorded for the clocks (hazard confirmed, notice delivered, …).

    Append-only and applied in id order by the analytics runner; ``applied_at``
    and ``error`` say what became of each.
    """

    __tablename__ = "person_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(40))
    target: Mapped[str] = mapped_column(String(300))
    at: Mapped[datetime]
    who: Mapped[str] = mapped_column(String(100))
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)
    recorded_at: Mapped[datetime]
    applied_at: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(Text)


class DeliveryJob(Base):
    """One notice to send by one channel to one target: the outbox row delivery works from.

    ``idempotency_key`` (notice, channel, target) makes a second enqueue return
    this row. A job is claimed (``sending``) before anything leaves the
    server; a job found still ``sending`` after a crash becomes ``uncertain``
    and waits for a person, so a restart never sends a notice twice.
    """

    __tablename__ = "delivery_jobs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(300), unique=True)
    notice_id: Mapped[int] = mapped_column(ForeignKey("notices.id"), index=True)
    channel: Mapped[str] = mapped_column(String(16))
    target: Mapped[str] = mapped_column(String(400))
    status: Mapped[str] = mapped_column(String(16), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None]
    claimed_at: Mapped[datetime | None]
    sent_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint(
            "status IN ('queued', 'sending', 'sent', 'failed', 'uncertain', 'cancelled')",
            name="status",
        ),
    )


class DashboardUser(Base):
    """A person who logs in to the dashboard; only a password hash is kept (argon2)."""

    __tablename__ = "dashboard_users"

    username: Mapped[str] = mapped_column(String(64), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("role IN ('viewer', 'inspector', 'clerk', 'admin')", name="role"),
    )


class DashboardSession(Base):
    """A login session; the cookie carries the token, the table only its sha256."""

    __tablename__ = "dashboard_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    username: Mapped[str] = mapped_column(ForeignKey("dashboard_users.username"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class LoginFailure(Base):
    """One failed dashboard login, counted per user name (``user``), per client
    address (``ip``) and per both (``pair``: a hash of the two; migration 0008).

    In the database, not in a process, so every dashboard worker and a
    restarted one see the same count (``sidewalk.dashboard.auth.LoginThrottle``).
    """

    __tablename__ = "login_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    key: Mapped[str] = mapped_column(String(100))
    at: Mapped[datetime] = mapped_column(index=True)

    __table_args__ = (
        CheckConstraint("kind IN ('user', 'ip', 'pair')", name="kind"),
        Index("ix_login_failures_kind_key_at", "kind", "key", "at"),
    )


class FrontageGeometry(Base):
    """A frontage's GeoJSON geometry (WGS 84) for the dashboard's map."""

    __tablename__ = "frontage_geometries"

    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"), primary_key=True)
    geometry: Mapped[dict[str, Any]]


class Inspection(Base):
    """One measured file of a § 370-5 condition survey, ok or failed.

    ``blocks`` holds the per-block verdicts (block number on the frontage,
    defective, every rule check) so the owner's 80 % rule is computed from the
    rows alone; ``result`` holds the measurements with units and uncertainties.
    """

    __tablename__ = "inspections"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # frontage + source sha256: the same file inspected again is the same row.
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"), index=True)
    surveyed_at: Mapped[datetime]
    recorded_at: Mapped[datetime]
    kind: Mapped[str] = mapped_column(String(16))
    source_name: Mapped[str] = mapped_column(String(500))
    source_sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    failure: Mapped[str | None] = mapped_column(String(500))
    result: Mapped[dict[str, Any]]
    blocks: Mapped[list[Any]]
    evidence_sha256: Mapped[str | None] = mapped_column(String(64))

    __table_args__ = (
        CheckConstraint("kind IN ('photo', 'depth', 'laser')", name="kind"),
        CheckConstraint("status IN ('ok', 'failed')", name="status"),
    )


# ---------------------------------------------------------------- the registry


class Street(Base):
    """A street the Village's frontages face, by its name as the county writes it."""

    __tablename__ = "streets"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)


class Parcel(Base):
    """A tax parcel from the county's parcel file (Statewide Parcel Map schema)."""

    __tablename__ = "parcels"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # PARCELID
    tax_parcel_id: Mapped[str | None] = mapped_column(String(64), index=True)
    site_address: Mapped[str | None] = mapped_column(String(200))
    place: Mapped[str | None] = mapped_column(String(100))
    zip_code: Mapped[str | None] = mapped_column(String(16))
    # WGS 84 GeoJSON, whatever coordinate system the county's file used.
    geometry: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    source: Mapped[str] = mapped_column(String(300))
    updated_at: Mapped[datetime]
    retired_at: Mapped[datetime | None]


class Ownership(Base):
    """An owner of record of a parcel from ``effective_from`` until ``effective_to``.

    A sale closes one row and opens the next: notices from then on go to the
    new owner; one already issued keeps the name and address it was mailed to.
    """

    __tablename__ = "ownerships"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    parcel_id: Mapped[str] = mapped_column(ForeignKey("parcels.id"), index=True)
    owner_id: Mapped[str] = mapped_column(ForeignKey("owners.id"), index=True)
    effective_from: Mapped[datetime]
    effective_to: Mapped[datetime | None]
    source: Mapped[str] = mapped_column(String(300))
    recorded_at: Mapped[datetime]


class Occupant(Base):
    """An occupant or person in charge of a parcel (§ 370-10 B(1)'s hazard notice)."""

    __tablename__ = "occupants"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    parcel_id: Mapped[str] = mapped_column(ForeignKey("parcels.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))
    phone: Mapped[str | None] = mapped_column(String(40))
    email: Mapped[str | None] = mapped_column(String(320))
    address_lines: Mapped[list[Any]]
    effective_from: Mapped[datetime]
    effective_to: Mapped[datetime | None]
    recorded_at: Mapped[datetime]

    __table_args__ = (CheckConstraint("role IN ('occupant', 'person in charge')", name="role"),)


class Camera(Base):
    """A pole camera's view of one frontage: image region, ground homography, calibration."""

    __tablename__ = "cameras"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    device_id: Mapped[str] = mapped_column(ForeignKey("devices.id"), index=True)
    frontage_id: Mapped[str] = mapped_column(ForeignKey("frontages.id"), index=True)
    # Image polygon [[x, y], …] in pixels, and the 3×3 image → ground (feet) homography.
    region: Mapped[list[Any]]
    homography: Mapped[list[Any]]
    calibrated_at: Mapped[datetime]
    calibrated_by: Mapped[str] = mapped_column(String(100))
    # Hash of region + homography: what the pole must report it runs.
    calibration_hash: Mapped[str] = mapped_column(String(64))

    __table_args__ = (UniqueConstraint("device_id", "frontage_id"),)


class RegistryEvent(Base):
    """A registry change with its own time, for a running analytics to pick up in order."""

    __tablename__ = "registry_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(40))
    subject: Mapped[str] = mapped_column(String(200), index=True)
    effective_at: Mapped[datetime]
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)
    recorded_by: Mapped[str] = mapped_column(String(100))
    recorded_at: Mapped[datetime]
