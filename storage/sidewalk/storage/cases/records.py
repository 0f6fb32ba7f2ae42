"""The records the case store returns: frozen dataclasses, each defined once.

A record is the public shape of one table's row. Each field reads the ORM
attribute of the same name unless its ``metadata`` says otherwise
(``stored(column=…, load=…)``: another attribute, and how to turn the stored
value into the field's type); ``stored(computed=True)`` fields are not
columns and are handed in by the repository (a bill's ``paid``). ``from_row``
is the one converter for every record, so adding a column to a record means
adding one field here and, if it is new, one column in ``models`` (and a
migration) — nothing else. No ORM object leaves the package.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

if TYPE_CHECKING:
    from sidewalk.core.contract import Reading
    from sidewalk.core.profile import Rule

CauseKind = Literal["reading", "frame", "person", "deadline"]
Zone = Literal["residential", "commercial"]
Availability = Literal["online", "offline", "stopped", "unknown"]
NoticeStatus = Literal["pending", "held", "rendered", "delivered"]
ViolationStatus = Literal["open", "cured", "abated", "closed"]
DeliveryStatus = Literal["sent", "delivered", "failed", "returned"]
DashboardRole = Literal["viewer", "inspector", "clerk", "admin"]
InspectionKind = Literal["photo", "depth", "laser"]

R = TypeVar("R")

_SOURCE: Final = "sidewalk.storage.cases.source"


class _Keep:
    """Sentinel: leave the clock's deadline as it is."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP: Final = _Keep()


# ---------------------------------------------------------------- the one converter


@dataclass(frozen=True)
class _Source:
    column: str | None
    load: Callable[[Any], Any] | None
    computed: bool


def stored(
    column: str | None = None, load: Callable[[Any], Any] | None = None, *, computed: bool = False
) -> dict[str, _Source]:
    """Field metadata: where a record field comes from on the ORM row.

    Use as ``key: str = field(metadata=stored("idempotency_key"))``.
    """
    return {_SOURCE: _Source(column, load, computed)}


_Plan = tuple[tuple[str, str, Callable[[Any], Any] | None], ...]
_PLANS: dict[type, _Plan] = {}


def columns_of(record: type) -> dict[str, str]:
    """``{field: ORM attribute}`` for every stored (not computed) field of ``record``."""
    return {name: column for name, column, _load in _plan(record)}


def _plan(record: type) -> _Plan:
    plan = _PLANS.get(record)
    if plan is None:
        steps: list[tuple[str, str, Callable[[Any], Any] | None]] = []
        for f in fields(record):
            source: _Source | None = f.metadata.get(_SOURCE)
            if source is None:
                steps.append((f.name, f.name, None))
            elif not source.computed:
                steps.append((f.name, source.column or f.name, source.load))
        plan = _PLANS[record] = tuple(steps)
    return plan


def from_row(record: type[R], row: object, **computed: Any) -> R:
    """Build ``record`` from an ORM ``row`` (plus its ``computed`` fields)."""
    values = {
        name: getattr(row, column) if load is None else load(getattr(row, column))
        for name, column, load in _plan(record)
    }
    values.update(computed)
    return record(**values)


def _dict(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})


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


# The unit of a RuleUse whose value is words (a reading of the text), not a number.
TEXT_UNIT: Final = "text"


@dataclass(frozen=True)
class RuleUse:
    """A profile value as a decision used it, with its citation and gap mark. A setting
    that is a reading of the text, not a number (``billing.owner_changed_during_case``),
    is kept as its words with the unit ``text``."""

    name: str
    value: Decimal | str
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
            value=str(data["value"]) if data["unit"] == TEXT_UNIT else Decimal(data["value"]),
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


def _rule_uses(stored_rules: list[Any]) -> tuple[RuleUse, ...]:
    return tuple(RuleUse.from_json(r) for r in stored_rules)


def _blocks(stored_blocks: list[Any] | None) -> tuple[Mapping[str, Any], ...]:
    return tuple(dict(b) for b in stored_blocks or ())


# ---------------------------------------------------------------- registry


@dataclass(frozen=True)
class OwnerRecord:
    id: str
    name: str
    address_lines: tuple[str, ...] = field(metadata=stored(load=tuple))
    email: str | None
    updated_at: datetime


@dataclass(frozen=True)
class DeviceRecord:
    id: str
    site: str
    last_seen: datetime | None
    availability: str
    label: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    reported_calibration: str | None = None
    reported_calibration_at: datetime | None = None
    retired_at: datetime | None = None


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
    parcel_id: str | None = None
    street: str | None = None
    side: str | None = None
    walk_width_ft: float | None = None
    corner: bool = False
    retired_at: datetime | None = None
    # False: "not watched yet" (no automatic clock; the Village inspects it by hand).
    watched: bool = True


@dataclass(frozen=True)
class StreetRecord:
    id: str
    name: str


@dataclass(frozen=True)
class ParcelRecord:
    id: str
    tax_parcel_id: str | None
    site_address: str | None
    place: str | None
    zip_code: str | None
    geometry: dict[str, Any] | None
    source: str
    updated_at: datetime
    retired_at: datetime | None


@dataclass(frozen=True)
class OwnershipRecord:
    """An owner of record of a parcel over ``[effective_from, effective_to)``."""

    id: int
    parcel_id: str
    owner_id: str
    effective_from: datetime
    effective_to: datetime | None
    source: str
    recorded_at: datetime


OccupantRole = Literal["occupant", "person in charge"]


@dataclass(frozen=True)
class OccupantRecord:
    id: int
    parcel_id: str
    name: str
    role: str
    phone: str | None
    email: str | None
    address_lines: tuple[str, ...] = field(metadata=stored(load=tuple))
    effective_from: datetime
    effective_to: datetime | None
    recorded_at: datetime


@dataclass(frozen=True)
class CameraRecord:
    """A pole camera's calibrated view of one frontage."""

    id: int
    device_id: str
    frontage_id: str
    region: tuple[tuple[float, float], ...] = field(
        metadata=stored(load=lambda v: tuple((float(x), float(y)) for x, y in v))
    )
    homography: tuple[tuple[float, float, float], ...] = field(
        metadata=stored(load=lambda v: tuple(tuple(float(c) for c in row) for row in v))
    )
    calibrated_at: datetime
    calibrated_by: str
    calibration_hash: str


RegistryEventKind = Literal[
    "frontage.added",
    "frontage.changed",
    "frontage.retired",
    "frontage.watched",
    "frontage.unwatched",
    "pole.registered",
    "pole.assigned",
    "pole.retired",
    "owner.changed",
    "camera.calibrated",
]


@dataclass(frozen=True)
class RegistryEventRecord:
    """A registry change with its own time (``effective_at``), applied in ``id`` order."""

    id: int
    kind: str
    subject: str
    effective_at: datetime
    detail: dict[str, Any] = field(metadata=stored(load=_dict))
    recorded_by: str
    recorded_at: datetime


# ---------------------------------------------------------------- clocks and violations


@dataclass(frozen=True)
class ClockRecord:
    id: int
    key: str = field(metadata=stored("idempotency_key"))
    frontage_id: str
    kind: str
    state: str
    started_at: datetime
    deadline: datetime | None
    closed_at: datetime | None
    cause: Cause = field(metadata=stored(load=Cause.from_json))
    citation: str | None
    rules: tuple[RuleUse, ...] = field(metadata=stored(load=_rule_uses))
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
    cause: Cause = field(metadata=stored(load=Cause.from_json))
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class ViolationRecord:
    id: int
    key: str = field(metadata=stored("idempotency_key"))
    frontage_id: str
    clock_id: int | None
    rule: str
    citation: str | None
    detected_at: datetime
    evidence: Mapping[str, Any]
    offense_count: int
    status: str


# ---------------------------------------------------------------- notices and delivery


@dataclass(frozen=True)
class NoticeRecord:
    id: int
    number: str
    key: str = field(metadata=stored("idempotency_key"))
    kind: str
    violation_id: int | None
    frontage_id: str
    owner_id: str
    owner_name: str
    owner_address_lines: tuple[str, ...] = field(metadata=stored(load=tuple))
    issued_at: datetime
    deadline: datetime | None
    citation: str | None
    rules: tuple[RuleUse, ...] = field(metadata=stored(load=_rule_uses))
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
class DeliveryJobRecord:
    """A notice queued for one channel and target, and how far its delivery has got."""

    id: int
    key: str = field(metadata=stored("idempotency_key"))
    notice_id: int
    channel: str
    target: str
    status: str
    attempts: int
    next_attempt_at: datetime | None
    claimed_at: datetime | None
    sent_at: datetime | None
    last_error: str | None
    detail: Mapping[str, Any] = field(metadata=stored(load=_dict))
    created_at: datetime


# ---------------------------------------------------------------- abatement and money


@dataclass(frozen=True)
class AbatementRecord:
    id: int
    key: str = field(metadata=stored("idempotency_key"))
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
    key: str = field(metadata=stored("idempotency_key"))
    abatement_id: int
    frontage_id: str
    owner_name: str
    owner_address_lines: tuple[str, ...] = field(metadata=stored(load=tuple))
    amount: Decimal
    # The sum of the bill's payments, counted by the database when the record is read.
    paid: Decimal = field(metadata=stored(computed=True))
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
    key: str = field(metadata=stored("idempotency_key"))
    bill_id: int
    amount: Decimal
    paid_at: datetime
    method: str
    reference: str | None
    voided_at: datetime | None = None  # a correction voided it: it no longer counts


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


# ---------------------------------------------------------------- audit


@dataclass(frozen=True)
class AuditRecord:
    id: int
    recorded_at: datetime
    actor: str
    action: str
    subject: str
    detail: Mapping[str, Any] = field(metadata=stored("detail_json", json.loads))
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class AuditVerification:
    """Result of walking the audit chain; ``first_bad_id`` names the first broken row."""

    ok: bool
    rows: int
    first_bad_id: int | None = None
    reason: str | None = None


# ---------------------------------------------------------------- person actions


@dataclass(frozen=True)
class ActionRecord:
    """A person's recorded action for the clocks, and what became of it."""

    id: int
    kind: str
    target: str
    at: datetime
    who: str
    detail: Mapping[str, Any] = field(metadata=stored(load=_dict))
    recorded_at: datetime
    applied_at: datetime | None
    error: str | None


# ---------------------------------------------------------------- inspections


@dataclass(frozen=True)
class InspectionRecord:
    """One inspected file: its measurements, verdicts per block and evidence image."""

    id: int
    key: str = field(metadata=stored("idempotency_key"))
    frontage_id: str
    surveyed_at: datetime
    recorded_at: datetime
    kind: str
    source_name: str
    source_sha256: str
    status: str  # ok | failed
    failure: str | None
    result: Mapping[str, Any] = field(metadata=stored(load=_dict))
    blocks: tuple[Mapping[str, Any], ...] = field(metadata=stored(load=_blocks))
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


# ---------------------------------------------------------------- dashboard accounts


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
