"""A bill for the Village's removal of snow or ice deposited on a public way (§ 370-10 C)
carries the Village's reading of G (``snow_and_ice.deposit_removal_charge``) as the
profile sets it: held, and saying the reading waits for the Village attorney, while it
is unconfirmed; plain once the Village confirms it; no bill at all under the reading
``penalty only``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from sidewalk.alerts.accounts import bill_abatement
from sidewalk.alerts.billing import AbatementWork, BillingInputError
from sidewalk.alerts.confirm import confirm_value, unconfirmed_report
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.analytics.clocks.bill_terms import bill_terms
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.connect import open_cases
from tests.alerts.conftest import T0, flat, pdf_text

DEPOSIT = "snow_and_ice.deposit_removal_after_notice"
CHARGE = "snow_and_ice.deposit_removal_charge"
WORK = AbatementWork(crew_hours=Decimal("1.5"), equipment_hours=Decimal("0.5"))
PENDING = "the Village attorney has yet to confirm that reading"


@pytest.fixture
def pending(tmp_path: Path, profile: Profile) -> Iterator[CaseStore]:
    """A Village that confirmed every value the Code leaves open but the reading of G."""
    store = open_cases(f"sqlite:///{tmp_path / 'pending.sqlite3'}", profile)
    store.registry.upsert_owner("owner-smith", "Jane Smith", ["101 Main St", "Clyman, WI 53016"])
    store.registry.upsert_frontage(
        "main-101", site="clyman", parcel_number="026-0915-0001",
        street_address="101 Main St", length_ft=66.0, zone="residential",
        owner_id="owner-smith",
    )  # fmt: skip
    for item in unconfirmed_report(store, profile):
        if item.name != CHARGE and not item.confirmed:
            confirm_value(store, profile, item.name, by="Village Board",
                          reference="minutes item 3", at=T0, who="clerk")  # fmt: skip
    yield store
    store.close()


def _abatement(cases: CaseStore, key: str) -> int:
    violation = cases.clocks.record_violation(
        key, "main-101", DEPOSIT, T0, citation="§ 370-10 C (inferred)",
        evidence={"description": "snow from the driveway plowed into the street"},
    )  # fmt: skip
    return cases.bills.order_abatement(
        f"{key}/abatement", "main-101", "notice_expired", T0, violation_id=violation.id
    ).id


def _bill(issuer: NoticeIssuer, abatement_id: int):  # type: ignore[no-untyped-def]
    return bill_abatement(
        issuer, abatement_id, WORK, T0 + timedelta(hours=3), who="Clerk Lee",
        completed_at=T0 + timedelta(hours=2),
    )  # fmt: skip


def test_a_deposit_bill_carries_the_unconfirmed_reading_and_waits_for_it(
    issuer: NoticeIssuer, pending: CaseStore, profile: Profile
) -> None:
    cases = pending
    issuer = NoticeIssuer(cases, profile, letterhead=issuer.letterhead)
    reading = profile.snow_and_ice.deposit_removal_charge
    assert (reading.value, reading.unconfirmed) == ("charged under G", True)
    billed = _bill(issuer, _abatement(cases, "inspection:SN-1"))
    uses = {r.name: r for r in billed.notice.rules}
    assert CHARGE in uses, sorted(uses)
    assert (uses[CHARGE].value, uses[CHARGE].unconfirmed) == ("charged under G", True)
    # A bill resting on an unconfirmed reading is held, as the owner-change reading's is.
    assert billed.notice.status == "held", billed.notice.status
    # The clerk's preview of it says so in words the owner can read.
    text = flat(issuer.rendered(billed.notice).text)
    body = text.partition("The account of the expenses")[0]
    assert "deposited on a public way" in body, body
    assert PENDING in body, body
    assert "§ 370-10 G" in body, body
    assert "§ 370-10 F" not in text, text
    for ours in ("unconfirmed", "inferred", "deposit_removal", "charged under G"):
        assert ours not in body, ours
    # Confirmed by the Village: the held bill goes out, the reading stated plainly.
    confirm_value(cases, profile, CHARGE, by="Village Board", reference="minutes item 4",
                  at=T0, who="clerk")  # fmt: skip
    released = {n.id: n for n in issuer.release_held()}
    notice = released[billed.notice.id]
    assert notice.status == "rendered", notice.status
    letter = flat(notice.body_text or "")
    assert "as reaching that removal." in letter, letter
    assert PENDING not in letter
    assert "charged to the owner under § 370-10 G: confirmed by Village Board" in letter, letter


def test_a_snow_bill_carries_no_deposit_reading(issuer: NoticeIssuer, cases: CaseStore) -> None:
    abatement = cases.bills.order_abatement("v-snow/abatement", "main-101", "notice_expired", T0)
    billed = _bill(issuer, abatement.id)
    assert CHARGE not in {r.name for r in billed.notice.rules}
    assert "deposited on a public way" not in flat(
        pdf_text(notice_pdf(billed.notice, issuer.profile))
    )


def test_under_penalty_only_no_bill_is_made(cases: CaseStore, profile: Profile,
                                            issuer: NoticeIssuer) -> None:  # fmt: skip
    snow = profile.snow_and_ice
    other = snow.model_copy(update={
        "deposit_removal_charge": snow.deposit_removal_charge.model_copy(
            update={"value": "penalty only"}
        ),
    })  # fmt: skip
    penalty_only = profile.model_copy(update={"snow_and_ice": other})
    assert not bill_terms(penalty_only, "snow_deposit").chargeable
    assert bill_terms(profile, "snow_deposit").chargeable
    abatement_id = _abatement(cases, "inspection:SN-2")
    strict = NoticeIssuer(cases, penalty_only, letterhead=issuer.letterhead)
    with pytest.raises(BillingInputError, match="charging no one"):
        _bill(strict, abatement_id)
    assert cases.bills.list_expenses(abatement_id) == []
