"""Billing arithmetic: exact cents, lines that add up, the 10 and 60 calendar days."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidewalk.alerts.billing import (
    AbatementWork,
    BillingInputError,
    Material,
    bill_due_date,
    cents,
    is_overdue,
    ledger,
    rates_of,
    tax_roll_date,
    total,
)
from sidewalk.core.profile import Profile, load_profile

PROFILE = load_profile()
RATES = rates_of(PROFILE)
# § 370-6 is the one section that adds "20% for administration" to a bill.
SHARE = PROFILE.permits.repair_administration_share
hours = st.decimals(min_value=0, max_value=200, places=2, allow_nan=False, allow_infinity=False)
money = st.decimals(min_value="0.01", max_value=5000, places=2)


def test_half_a_cent_rounds_up() -> None:
    assert cents(Decimal("0.125")) == Decimal("0.13")
    assert cents(Decimal("0.124")) == Decimal("0.12")


def test_a_ledger_with_every_kind_of_line() -> None:
    work = AbatementWork(
        crew_hours=Decimal("1.333"),
        equipment_hours=Decimal(1),
        materials=(Material("sand", Decimal("9.99")),),
    )
    assert "Administration" not in [x.description for x in ledger(work, RATES)]
    lines = ledger(work, RATES, administration=SHARE)
    assert [(x.description, x.amount) for x in lines] == [
        ("Crew labor", Decimal("59.99")),  # 1.333 × 45.00 = 59.985
        ("Equipment", Decimal("65.00")),
        ("Materials: sand", Decimal("9.99")),
        ("Administration", Decimal("27.00")),  # 20 % of 134.98 = 26.996
    ]
    assert total(lines) == Decimal("161.98")
    assert all(
        x.unconfirmed for x in lines if x.description not in {"Materials: sand", "Administration"}
    )


@given(crew=hours, machine=hours, materials=st.lists(money, max_size=4))
def test_lines_always_add_up_to_the_total_in_whole_cents(
    crew: Decimal, machine: Decimal, materials: list[Decimal]
) -> None:
    if crew == 0 and machine == 0 and not materials:
        return
    work = AbatementWork(
        crew, machine, tuple(Material(f"m{i}", m) for i, m in enumerate(materials))
    )
    lines = ledger(work, RATES, administration=SHARE)
    assert all(isinstance(x.amount, Decimal) and x.amount == cents(x.amount) for x in lines)
    assert total(lines) == sum((x.amount for x in lines), Decimal(0))
    subtotal = total(lines[:-1])
    assert lines[-1].amount == cents(subtotal * Decimal("0.20"))


def test_work_that_cannot_be_priced_is_refused() -> None:
    with pytest.raises(BillingInputError, match="crew_hours"):
        AbatementWork(crew_hours=Decimal(-1))
    with pytest.raises(BillingInputError, match="whole cents"):
        AbatementWork(Decimal(1), materials=(Material("salt", Decimal("1.005")),))
    with pytest.raises(BillingInputError, match="no labor"):
        ledger(AbatementWork(Decimal(0)), RATES)
    bare = Profile.model_validate({**PROFILE.model_dump(), "abatement_rates": None})
    with pytest.raises(BillingInputError, match="no \\[abatement_rates\\]"):
        rates_of(bare)


def test_due_date_and_tax_roll_date_count_village_calendar_days() -> None:
    # 11:30 PM Dec 31 in Clyman is already Jan 1 in UTC: the local date counts.
    received = datetime(2027, 1, 1, 5, 30, tzinfo=UTC)
    assert bill_due_date(received, PROFILE) == date(2027, 1, 10)
    assert tax_roll_date(received, PROFILE) == date(2027, 3, 1)
    at = datetime(2027, 1, 11, 6, 30, tzinfo=UTC)  # 12:30 AM Jan 11, Clyman
    assert is_overdue("open", date(2027, 1, 10), Decimal("1.00"), at, PROFILE)
    assert not is_overdue("open", date(2027, 1, 10), Decimal("0.00"), at, PROFILE)
    assert not is_overdue("open", date(2027, 1, 11), Decimal("1.00"), at, PROFILE)
