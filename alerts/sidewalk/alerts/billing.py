"""Billing arithmetic for an abatement: exact Decimal, whole cents, no I/O.

§ 370-10 G: "An account of the expenses incurred by the Village ... shall be
kept"; the bill is "payable within 10 calendar days from the receipt thereof";
costs unpaid 60 days after they were incurred go on the tax roll. The rates
and the administrative share come from the profile's ``abatement_rates``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Final

from sidewalk.alerts.notices import LedgerLine
from sidewalk.core.calendar import add_calendar_days, local_date
from sidewalk.core.profile import AbatementRates, Profile, Rule

CENT: Final = Decimal("0.01")


class BillingInputError(ValueError):
    """Work that cannot be priced (negative hours, a fraction of a cent, no rates)."""


def cents(amount: Decimal) -> Decimal:
    """Round to the cent, halves away from zero (as a clerk rounds)."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Material:
    description: str
    cost: Decimal


@dataclass(frozen=True)
class AbatementWork:
    """What the crew did: person-hours, machine-hours and materials at cost."""

    crew_hours: Decimal
    equipment_hours: Decimal = Decimal(0)
    materials: Sequence[Material] = ()

    def __post_init__(self) -> None:
        for name in ("crew_hours", "equipment_hours"):
            value = getattr(self, name)
            if not isinstance(value, Decimal) or value < 0:
                raise BillingInputError(f"{name} must be a Decimal >= 0, got {value!r}")
        for m in self.materials:
            if not isinstance(m.cost, Decimal) or m.cost <= 0 or m.cost != cents(m.cost):
                raise BillingInputError(f"material {m.description!r}: cost must be whole cents > 0")


def rates_of(profile: Profile) -> AbatementRates:
    """The profile's fee schedule, or a ``BillingInputError`` saying it has none."""
    if profile.abatement_rates is None:
        raise BillingInputError(
            f"the {profile.village.name} profile has no [abatement_rates]: cannot price a bill"
        )
    return profile.abatement_rates


def ledger(
    work: AbatementWork, rates: AbatementRates, *, administration: Rule | None = None
) -> list[LedgerLine]:
    """The expense account: labor, equipment, materials, then any administrative share.

    ``administration`` is the share the bill's section adds (§ 370-6: "plus 20% for
    administration"; ``bill_terms``); a section that provides none gets no such
    line. Each line is rounded to the cent once; the share is taken on the sum of
    the rounded lines, so the lines always add up to the total.
    """
    lines: list[LedgerLine] = []
    crew, machine = rates.crew_hourly_rate, rates.equipment_hourly_rate
    if work.crew_hours > 0:
        lines.append(
            LedgerLine(
                "Crew labor", work.crew_hours, "h", crew.value,
                cents(work.crew_hours * crew.value), crew.unconfirmed,
            )
        )  # fmt: skip
    if work.equipment_hours > 0:
        lines.append(
            LedgerLine(
                "Equipment", work.equipment_hours, "h", machine.value,
                cents(work.equipment_hours * machine.value), machine.unconfirmed,
            )
        )  # fmt: skip
    lines += [
        LedgerLine(f"Materials: {m.description}", Decimal(1), "lot", m.cost, m.cost)
        for m in work.materials
    ]
    if not lines:
        raise BillingInputError("an abatement with no labor, equipment or materials has no bill")
    subtotal = sum((line.amount for line in lines), Decimal("0.00"))
    admin = administration
    if admin is not None and admin.value > 0:
        percent = admin.value if admin.unit == "percent" else admin.value * 100
        lines.append(
            LedgerLine(
                "Administration", percent, "%", percent,
                cents(subtotal * percent / 100), admin.unconfirmed,
            )
        )  # fmt: skip
    return lines


def total(lines: Sequence[LedgerLine]) -> Decimal:
    """The exact sum of the ledger lines."""
    return sum((line.amount for line in lines), Decimal("0.00"))


def bill_due_date(received_at: datetime, profile: Profile, payable: Rule | None = None) -> date:
    """The last local day to pay: receipt date + the bill's period (§ 370-10 G's 10 calendar
    days unless its section sets its own: ``bill_terms``)."""
    rule = profile.billing.bill_payable if payable is None else payable
    return add_calendar_days(local_date(received_at, profile.zone), rule.days)


def tax_roll_date(costs_incurred_at: datetime, profile: Profile) -> date:
    """The last local day before unpaid costs go on the tax roll (incurred + 60 days)."""
    return add_calendar_days(
        local_date(costs_incurred_at, profile.zone), profile.billing.tax_roll_after.days
    )


def is_overdue(
    status: str, due: date | None, balance: Decimal, at: datetime, profile: Profile
) -> bool:
    """An open bill with a balance whose last day to pay has passed (village time)."""
    return (
        status == "open" and due is not None and balance > 0 and local_date(at, profile.zone) > due
    )
