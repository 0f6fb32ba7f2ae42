"""A bill's steps are offered only when the case allows them (§ 370-10 G), pure and fast.

A hazard case the Village abated (B(1)) accepts "Owner received the bill" and "Paid in
full" in the engine's state as soon as the crew finished; the page must not offer them
before the bill exists, nor "Paid in full" while money is owed, nor the receipt twice.
The route test (test_crew_bill.py) drives the same through the real app.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from sidewalk.analytics.casework import CaseNow
from sidewalk.analytics.clocks.states import CaseState
from sidewalk.dashboard.auth import User
from sidewalk.dashboard.routes.notices import bill_step_refusal, valid_steps
from sidewalk.storage.cases import BillRecord, NoticeRecord

AT = datetime(2026, 12, 14, 16, 0, tzinfo=UTC)
CLERK = User("clerk", "clerk", "csrf", "hash")
HAZARD = NoticeRecord(
    id=7, number="CLY-2026-000007", key="notice/hazard", kind="hazard_notice", violation_id=3,
    frontage_id="main-st-105", owner_id="o-1", owner_name="Clara Christoph",
    owner_address_lines=("105 Main St", "Clyman, WI 53016"), issued_at=AT, deadline=None,
    citation=None, rules=(), detail={}, body_text="…", body_html=None, status="delivered",
    rendered_at=AT, delivered_at=AT, received_at=None,
)  # fmt: skip
ABATED = CaseNow(
    violation_key="main-st-105:hazard:1", state=CaseState.ABATED, owner_deadline=None,
    steps=("bill_received", "paid_in_full"), pending=0,
)  # fmt: skip


def bill(*, paid: str = "0.00", received: bool = False) -> BillRecord:
    return BillRecord(
        id=1, key="bill/x", abatement_id=2, frontage_id="main-st-105",
        owner_name="Clara Christoph", owner_address_lines=("105 Main St",),
        amount=Decimal("302.50"), paid=Decimal(paid), costs_incurred_at=AT, issued_at=AT,
        received_at=AT if received else None, due_date=date(2026, 12, 24) if received else None,
        status="open" if Decimal(paid) < Decimal("302.50") else "paid",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("the_bill", "offered"),
    [
        (None, []),
        (bill(), ["bill_received"]),
        (bill(received=True), []),
        (bill(paid="100.00", received=True), []),
        (bill(paid="302.50", received=True), ["paid_in_full"]),
    ],
)
def test_a_hazard_case_offers_a_bills_steps_only_once_it_allows_them(
    the_bill: BillRecord | None, offered: list[str]
) -> None:
    assert valid_steps(HAZARD, ABATED, CLERK, the_bill) == offered


def test_the_refusals_say_why_in_words() -> None:
    assert bill_step_refusal("paid_in_full", None) == (
        "“Paid in full” cannot be recorded now: no bill has been issued for this case yet."
        " Bill the Village's work first (Notices: Village work, costs and payments)."
    )
    owed = bill_step_refusal("paid_in_full", bill(paid="100.00"))
    assert owed is not None
    assert "the bill has $202.50 left to pay" in owed
    assert bill_step_refusal("bill_received", bill(received=True)) == (
        "“Owner received the bill” is recorded already: the owner's receipt of this bill is on"
        " record."
    )
    assert bill_step_refusal("abatement_done", None) is None
