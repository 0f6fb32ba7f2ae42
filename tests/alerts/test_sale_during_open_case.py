"""§ 370-10 F and G: a case is against the owner of record its notice was issued to.

first-storm through the runner leaves a clearing notice for 103 Main St (Bert
Brandt). The parcel is sold the next day. F: the Village's removal follows the
owner's failure "after receiving a written notice"; the profile's reading
(``billing.owner_changed_during_case``, for the Village attorney's confirmation)
bills the owner who was served, never the new owner, who received no notice; the
other reading ("new notice") refuses any bill to the new owner. Open cases are
counted from the case rows (a notice not yet served has no clock record).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from sidewalk.alerts.accounts import (
    OWNER_CHANGE,
    bill_abatement,
    held_words,
    owner_change_hold_words,
    place_owner_changes,
)
from sidewalk.alerts.billing import AbatementWork, BillingInputError
from sidewalk.alerts.confirm import confirm_value, waiting_for
from sidewalk.alerts.delivery import record_notice_delivery
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.analytics.casework import open_cases
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.profile import OwnerChangeRule, Profile, load_profile
from sidewalk.storage.cases import CaseStore, NoticeRecord

FRONTAGE = "main-st-103"


def with_parcel(cases: CaseStore, notice: NoticeRecord) -> None:
    """103 Main St as a parcel of the county's file, Bert Brandt its owner since 2020."""
    cases.registry.upsert_parcel("P-103", tax_parcel_id="026-0815-0103",
                                 site_address="103 Main St", source="test")  # fmt: skip
    f = cases.registry.get_frontage(FRONTAGE)
    cases.registry.upsert_frontage(
        FRONTAGE, site=f.site, parcel_number=f.parcel_number, street_address=f.street_address,
        # Ignored: the record's ``zone`` is a str; the store takes the ``Zone`` literal.
        length_ft=f.length_ft, zone=f.zone, owner_id=f.owner_id, device_id=f.device_id,  # type: ignore[arg-type]
        parcel_id="P-103",
    )  # fmt: skip
    since = notice.issued_at - timedelta(days=2000)
    cases.registry.set_owner_of_record("P-103", notice.owner_id, since, source="test")


def sell(cases: CaseStore, at: datetime) -> None:
    cases.registry.upsert_owner("owner-newcomer", "Pat Newcomer", ["PO Box 424", "Clyman, WI"])
    cases.registry.set_owner_of_record("P-103", "owner-newcomer", at, source="county file")


def abated(runner: AnalyticsRunner, cases: CaseStore, notice: NoticeRecord) -> tuple[int, datetime]:
    """Served the morning after the notice; the 24 hours run out; the crew clears."""
    key = cases.clocks.get_violation(notice.violation_id or 0).key
    served = notice.issued_at + timedelta(hours=16)
    record_notice_delivery(cases, notice.id, served, "Pat Clerk", "hand", profile=load_profile())
    runner.tick()
    runner.advance(served + timedelta(hours=25))
    abatement = cases.bills.abatement_by_key(f"{key}/abatement")
    assert abatement is not None
    done = served + timedelta(hours=30)
    cases.actions.record("abatement_done", key, done, "Crew chief Ortiz")
    runner.tick()
    return abatement.id, done


def unconfirm_the_reading(cases: CaseStore, at: datetime) -> None:
    """The demo village confirmed every open value; here the Village had confirmed the
    other reading, so the profile's "owner served" is unconfirmed again (a confirmation
    is of a value)."""
    cases.confirmations.confirm(
        OWNER_CHANGE, "new notice", confirmed_by="Village Board", reference="an earlier reading",
        confirmed_at=at, who="clerk",
    )  # fmt: skip


def notice_of(cases: CaseStore) -> NoticeRecord:
    [notice] = cases.notices.list(kind="clearing_violation", frontage_id=FRONTAGE)
    return notice


def test_the_bill_goes_to_the_owner_served_not_to_the_buyer(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    notice = notice_of(cases)
    with_parcel(cases, notice)
    violations = [v for v in cases.clocks.list_violations() if v.frontage_id == FRONTAGE]
    assert cases.clocks.list(active_only=True, frontage_id=FRONTAGE, kind="enforcement") == []
    assert len(open_cases(violations, cases.clocks.list(frontage_id=FRONTAGE))) == 1
    assert place_owner_changes(cases, profile, [FRONTAGE]) == []  # no sale yet

    sell(cases, notice.issued_at + timedelta(days=1))
    [said] = place_owner_changes(cases, profile, [FRONTAGE])
    assert said.startswith("Owner of record changed while a case was open: notice")
    assert "Pat Newcomer" in said
    assert "The notice has not been served" in said

    abatement_id, done = abated(runner, cases, notice)
    unconfirm_the_reading(cases, done)
    billed = bill_abatement(NoticeIssuer(cases, profile), abatement_id,
                            AbatementWork(crew_hours=Decimal(1)), done + timedelta(days=1),
                            who="Clerk Lee")  # fmt: skip
    served = cases.registry.get_owner(notice.owner_id)
    assert billed.bill.owner_name == served.name == notice.owner_name
    assert billed.bill.owner_address_lines == served.address_lines
    assert billed.notice.owner_name == served.name
    # The bill rests on the unconfirmed reading: held, not sent, and the clerk told why.
    assert billed.notice.status == "held"
    assert OWNER_CHANGE in waiting_for(cases, billed.notice)
    why = held_words(cases, billed.notice)
    assert why is not None
    assert why.startswith(
        "this bill goes to the owner who was served the notice, not the new owner; the Village"
        " attorney has not confirmed this reading of § 370-10 F: confirm it with `sidewalk"
        " profile confirm billing.owner_changed_during_case"
    ), why
    # The Village confirms the rates; the bill still waits for the reading alone.
    issuer = NoticeIssuer(cases, profile)
    for name in waiting_for(cases, billed.notice):
        if name != OWNER_CHANGE:
            confirm_value(cases, profile, name, by="Village Board", reference="fee schedule",
                          at=done, who="clerk", issuer=issuer)  # fmt: skip
    still = cases.notices.get(billed.notice.id)
    assert still.status == "held"
    assert held_words(cases, still) == owner_change_hold_words()
    # The attorney confirms it: the bill is released, written to the owner served.
    _, released = confirm_value(cases, profile, OWNER_CHANGE, by="Village attorney",
                                reference="opinion of 2027-01-05", at=done, who="clerk",
                                issuer=issuer)  # fmt: skip
    [sent] = [n for n in released if n.id == billed.notice.id]
    assert sent.status == "rendered"
    assert sent.body_text is not None
    assert served.name in sent.body_text
    assert "Pat Newcomer" not in sent.body_text
    assert (
        "After a sale during the case, the bill goes to the owner who was served the notice:"
        " confirmed by Village attorney" in " ".join(sent.body_text.split())
    )
    assert held_words(cases, sent) is None
    [said] = place_owner_changes(cases, profile, [FRONTAGE])
    assert f"goes to {served.name}, who was served the notice on" in said
    assert "not to Pat Newcomer, who received no notice" in said
    assert "for the Village attorney's confirmation" in said or "Confirmed by" in said


def test_the_other_reading_refuses_a_bill_to_an_owner_never_served(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    reading = OwnerChangeRule(value="new notice", unconfirmed=True, note="the other reading")
    other = profile.model_copy(
        update={
            "billing": profile.billing.model_copy(update={"owner_changed_during_case": reading})
        }
    )
    notice = notice_of(cases)
    with_parcel(cases, notice)
    sell(cases, notice.issued_at + timedelta(days=1))
    abatement_id, done = abated(runner, cases, notice)
    with pytest.raises(BillingInputError, match="no bill goes to a new owner before a written"):
        bill_abatement(NoticeIssuer(cases, other), abatement_id,
                       AbatementWork(crew_hours=Decimal(1)), done + timedelta(days=1),
                       who="Clerk Lee")  # fmt: skip
    assert cases.bills.list() == []
    [said] = place_owner_changes(cases, other, [FRONTAGE])
    assert "no bill goes to Pat Newcomer before a written notice is served on them" in said


def test_a_sale_after_the_case_is_cured_changes_nothing(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    notice = notice_of(cases)
    with_parcel(cases, notice)
    key = cases.clocks.get_violation(notice.violation_id or 0).key
    cases.actions.record("record_delivery", key, notice.issued_at + timedelta(hours=1),
                         "Pat Clerk", {"method": "hand"})  # fmt: skip
    cases.actions.record("inspected_clear", key, notice.issued_at + timedelta(hours=5),
                         "Inspector Ray")  # fmt: skip
    runner.tick()
    violations = [v for v in cases.clocks.list_violations() if v.frontage_id == FRONTAGE]
    assert open_cases(violations, cases.clocks.list(frontage_id=FRONTAGE)) == []
    sell(cases, notice.issued_at + timedelta(days=1))
    assert place_owner_changes(cases, profile, [FRONTAGE]) == []
