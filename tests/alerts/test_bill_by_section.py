"""Each bill is under its own section, with that section's words,
addressee, period to pay and consequence; every period comes from the profile."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from sidewalk.alerts.accounts import BilledAbatement, bill_abatement, record_bill_receipt
from sidewalk.alerts.billing import AbatementWork, Material
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import TEMPLATES
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.analytics.clocks.bill_terms import bill_terms, kind_of
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0, flat, pdf_text

EXAMPLE = load_profile(Path(__file__).resolve().parents[1] / "data" / "example_village.toml")
WORK = AbatementWork(
    crew_hours=Decimal("2.5"),
    equipment_hours=Decimal("0.75"),
    materials=(Material("salt, 3 bags", Decimal("21.90")),),
)
# 2.5 h × 45.00 = 112.50; 0.75 h × 65.00 = 48.75; salt 21.90.
SUBTOTAL = Decimal("183.15")
CONTRACTOR = ("Acme Builders LLC", ["400 Industrial Dr", "Watertown, WI 53094"])


def _bill(
    issuer: NoticeIssuer,
    cases: CaseStore,
    key: str,
    rule: str | None = None,
    evidence: Mapping[str, object] | None = None,
) -> tuple[str, BilledAbatement]:
    violation_id = None
    if rule is not None:
        violation = cases.clocks.record_violation(
            key, "main-101", rule, T0, citation=None, evidence=dict(evidence or {})
        )
        violation_id = violation.id
    abatement = cases.bills.order_abatement(
        f"{key}/abatement", "main-101", "notice_expired", T0, violation_id=violation_id
    )
    billed = bill_abatement(
        issuer, abatement.id, WORK, T0 + timedelta(hours=3), who="Clerk Lee",
        completed_at=T0 + timedelta(hours=2),
    )  # fmt: skip
    return flat(pdf_text(notice_pdf(billed.notice, issuer.profile))), billed


def test_370_10_G_snow_bill_cites_G_with_its_periods_and_no_administration_share(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    text, billed = _bill(issuer, cases, "v1")
    assert billed.bill.amount == SUBTOTAL  # § 370-10 G provides no administrative share
    assert "Administration" not in text
    billing = issuer.profile.billing
    assert billed.notice.citation == "§ 370-10 G (inferred); § 66.0907(5), Wis. Stats."
    assert "within 10 calendar days after you receive this bill" in text
    assert "Costs still unpaid 60 calendar days after they were incurred" in text
    assert "tax roll as a special tax against parcel 026-0915-0001" in text
    assert f'"{billing.bill_payable.words}"' in text
    assert [r.name for r in billed.notice.rules][:2] == [
        "billing.bill_payable", "billing.tax_roll_after",
    ]  # fmt: skip


def test_370_8_F_obstruction_bill_has_its_own_words_and_periods(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    text, billed = _bill(
        issuer, cases, "obstruction:OB-1", "obstructions.sidewalk_removal_after_notice"
    )
    obs = issuer.profile.obstructions
    assert billed.notice.citation == "§ 370-8 F (inferred)"
    assert billed.bill.amount == SUBTOTAL
    assert f'"{obs.bill_payable.words}"' in text  # "Notice of the bill for abatement of the …"
    assert "within 10 calendar days after you receive this bill" in text
    assert "Costs still unpaid 60 calendar days after they were incurred" in text
    assert "§ 370-10 G" not in text.split("The Village Code's words")[0]


def test_144_17_sweeping_bill_goes_to_the_contractor_with_30_days_then_a_violation(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    evidence = {"contractor": CONTRACTOR[0], "contractor_address": CONTRACTOR[1]}
    text, billed = _bill(issuer, cases, "sweeping:SW-1", "streets.sweeping_deadline", evidence)
    notice = billed.notice
    assert (notice.owner_name, list(notice.owner_address_lines)) == (CONTRACTOR[0], CONTRACTOR[1])
    assert "Jane Smith" not in text  # not the frontage's owner
    assert notice.citation == "§ 144-17"
    assert "within 30 calendar days after you receive this bill" in text
    assert "is itself a violation of Village Code § 144-17" in text
    assert "tax roll" not in text
    assert "primary contractor" in text
    assert billed.bill.amount == SUBTOTAL
    # Received Dec 1: the 30 days end Dec 31.
    received = T0.replace(day=1)
    bill = record_bill_receipt(issuer, billed.bill.id, received, "Clerk Lee")
    assert bill.due_date is not None
    assert bill.due_date.isoformat() == "2026-12-31"


def test_144_17_sweeping_bill_without_a_contractor_on_record_is_refused(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    from sidewalk.alerts.billing import BillingInputError

    with pytest.raises(BillingInputError, match="primary contractor"):
        _bill(issuer, cases, "sweeping:SW-2", "streets.sweeping_deadline")


def test_370_6_repair_bill_adds_20_percent_for_administration_to_the_permittee(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    text, billed = _bill(issuer, cases, "repair:SO-1")
    # The only section that provides it: 20 % of 183.15 = 36.63.
    assert billed.bill.amount == SUBTOTAL + Decimal("36.63")
    assert "Administration: 20% of $183.15 = $36.63" in text
    assert "bill the permittee" in text
    assert "plus 20% for administration" in text
    assert "within 30 calendar days" in text
    assert "does not say what follows" in text
    assert "tax roll" not in text


def test_144_12_C_abandoned_excavation_goes_on_the_next_tax_roll_with_no_period(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    text, billed = _bill(
        issuer, cases, "inspection:EX-1", "construction.abandoned_excavation_after"
    )
    assert billed.notice.citation == "§ 144-12 C (inferred)"
    assert "next succeeding tax roll as a special charge" in text
    assert "Nothing is due by a date" in text
    assert "calendar days" not in text.split("The Village Code's words")[0]


def test_370_11_C_mailbox_bill_uses_the_unconfirmed_default_terms(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    _text, billed = _bill(
        issuer, cases, "inspection:MB-1", "terraces.mailbox_clearing_after_notice"
    )
    uses = {r.name: r for r in billed.notice.rules}
    assert uses["billing.other_bill_payable"].unconfirmed
    assert uses["billing.other_tax_roll_after"].unconfirmed
    assert kind_of("inspection:SN-1", "snow_and_ice.deposit_removal_after_notice") == (
        "snow_deposit"
    )


def test_every_period_comes_from_the_profile_not_a_template() -> None:
    period = re.compile(r"\b\d+\s+(calendar\s+|business\s+)?(day|hour|month|year)s?\b", re.I)
    for template in sorted(TEMPLATES.glob("*.j2")):
        found = period.findall(template.read_text("utf-8"))
        assert not found, f"{template.name} writes a period: {found}"
    # Another village's profile gives its own periods on the same bill kinds.
    for kind in ("obstruction", "sweeping"):
        payable = bill_terms(EXAMPLE, kind).payable
        assert payable is not None
        assert payable[1].days == 14
    administration = bill_terms(EXAMPLE, "opening_repair").administration
    assert administration is not None
    assert administration[1].value == 15
    assert bill_terms(EXAMPLE, "snow_and_ice").administration is None
