"""§ 370-10 B: what delivery starts a notice period, on the real runner and SMTP server.

B(1): "written notice to the owner, occupant or person in charge … within two
hours from the delivery of the notice". What counts as delivery is the profile's
``notice_delivery`` (the Village confirms it): by default personal service,
posting on the premises, or mail from its receipt; the hazard notice by personal
service or posting. An e-mail server accepting the message starts nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from sidewalk.alerts.delivery import (
    Deliverer,
    NotDeliveryError,
    SmtpChannel,
    SmtpSettings,
    queue_notice,
    record_notice_delivery,
)
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import NoticeError
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.profile import DeliveryMethodsRule, Profile
from sidewalk.storage.cases import CaseStore, NoticeRecord
from tests.alerts.conftest import Mailbox, pdf_text


def _clearing_notice(cases: CaseStore, frontage: str = "main-st-103") -> tuple[NoticeRecord, str]:
    [notice] = cases.notices.list(kind="clearing_violation", frontage_id=frontage)
    return notice, cases.clocks.get_violation(notice.violation_id or 0).key


def _email(
    cases: CaseStore, profile: Profile, notice: NoticeRecord, port: int, at: datetime
) -> None:
    owner = cases.registry.get_owner(notice.owner_id)
    cases.registry.upsert_owner(owner.id, owner.name, owner.address_lines, "owner@example.org")
    queue_notice(cases, notice.id, ["email"], at)
    settings = SmtpSettings("127.0.0.1", port, "dpw@clyman.example")
    channel = SmtpChannel(settings, profile, clock=lambda: at)
    report = Deliverer(cases, profile, {"email": channel}, clock=lambda: at).run_once()
    assert len(report.sent) == 1


def test_370_10_B_an_email_accepted_by_the_smtp_server_does_not_start_a_period(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile,
    smtp_server: tuple[Mailbox, int],
) -> None:  # fmt: skip
    runner, cases = stormed
    mailbox, port = smtp_server
    notice, key = _clearing_notice(cases)
    assert runner.engine.now is not None
    sent_at = runner.engine.now + timedelta(minutes=30)
    _email(cases, profile, notice, port, sent_at)
    assert len(mailbox.messages) == 1  # the server took it
    runner.tick()
    case = runner.engine.enforcement.cases[key]
    assert case.state == "notice_issued"  # no period runs
    assert case.notice_deadline is None
    assert cases.notices.get(notice.id).delivered_at is None
    assert [a.kind for a in cases.actions.list(target=key)] == []
    [audit] = [r for r in cases.audit.list(f"notice:{notice.number}")
               if r.action == "delivery.not_counted"]  # fmt: skip
    assert audit.detail["setting"] == "notice_delivery.starts_period"
    assert audit.detail["unconfirmed"] is True
    # A person cannot enter it as delivery either.
    with pytest.raises(NotDeliveryError, match=r"delivery by email does not start its period"):
        record_notice_delivery(cases, notice.id, sent_at, "Clerk Lee", "email", profile=profile)


@pytest.mark.parametrize("method", ["hand", "posted", "mail"])
def test_370_10_B2_personal_service_posting_or_mail_by_its_receipt_starts_the_period_then(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile, method: str
) -> None:
    runner, cases = stormed
    notice, key = _clearing_notice(cases)
    assert runner.engine.now is not None
    at = runner.engine.now + timedelta(hours=3)  # the time served, posted or received
    record_notice_delivery(cases, notice.id, at, "Officer Quinn", method, profile=profile)
    runner.tick()
    case = runner.engine.enforcement.cases[key]
    assert case.state == "notice_period"
    period = profile.snow_and_ice.nonhazard_notice_period.duration
    assert case.notice_deadline == at + period
    [move] = [t for t in case.history if t.to_state == "notice_period"]
    assert move.at == at
    assert move.detail["method"] == method


def test_370_10_B1_the_hazard_notice_posted_with_its_time_starts_the_two_hours_from_that_time(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile,
    smtp_server: tuple[Mailbox, int],
) -> None:  # fmt: skip
    runner, cases = stormed
    _, port = smtp_server
    _, key = _clearing_notice(cases, "main-st-105")
    assert runner.engine.now is not None
    confirmed = runner.engine.now + timedelta(minutes=20)
    cases.actions.record("confirm_hazard", key, confirmed, "Officer Quinn")
    runner.tick()
    [hazard] = cases.notices.list(kind="hazard_notice")
    _email(cases, profile, hazard, port, confirmed + timedelta(minutes=5))
    runner.tick()
    assert runner.engine.enforcement.cases[key].state == "hazard_notice_issued"
    # Mail does not deliver the 2-hour notice (by default): refused, nothing starts.
    with pytest.raises(NotDeliveryError, match=r"notice_delivery\.hazard_notice: hand, posted"):
        record_notice_delivery(
            cases, hazard.id, confirmed + timedelta(hours=1), "Officer Quinn", "mail",
            profile=profile,
        )  # fmt: skip
    posted = confirmed + timedelta(minutes=40)
    record_notice_delivery(cases, hazard.id, posted, "Officer Quinn", "posted", profile=profile)
    runner.tick()
    case = runner.engine.enforcement.cases[key]
    assert case.state == "hazard_period"
    assert case.notice_deadline == posted + timedelta(hours=2)
    runner.advance(posted + timedelta(hours=2) - timedelta(seconds=1))
    assert cases.bills.abatement_by_key(f"{key}/abatement") is None
    runner.advance(posted + timedelta(hours=2))
    abatement = cases.bills.abatement_by_key(f"{key}/abatement")
    assert abatement is not None
    assert abatement.ordered_at == posted + timedelta(hours=2)


def test_370_10_B1_the_owners_copy_of_a_posted_hazard_notice_states_its_deadline(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    _, key = _clearing_notice(cases, "main-st-105")
    assert runner.engine.now is not None
    confirmed = runner.engine.now + timedelta(minutes=20)
    cases.actions.record("confirm_hazard", key, confirmed, "Officer Quinn")
    runner.tick()
    [hazard] = cases.notices.list(kind="hazard_notice")
    issuer = NoticeIssuer(cases, profile)
    with pytest.raises(NoticeError, match="delivered hazard notice"):
        issuer.owner_copy(hazard)
    posted = datetime(2026, 12, 12, 9, 40, tzinfo=ZoneInfo("America/Chicago"))
    record_notice_delivery(cases, hazard.id, posted, "Officer Quinn", "posted", profile=profile)
    copy = issuer.owner_copy(cases.notices.get(hazard.id))
    assert copy.body_text is not None
    text = " ".join(copy.body_text.split())
    assert "posted on the premises on Saturday, December 12, 2026 at 9:40 AM CST" in text
    assert "Remove the snow and ice by Saturday, December 12, 2026 at 11:40 AM CST" in text
    assert "______" not in text
    assert "Remove by" in (cases.notices.get(hazard.id).body_text or "")  # the posted form
    assert "11:40 AM" in " ".join(pdf_text(notice_pdf(copy, profile)).split())


def test_370_10_B_a_village_that_confirms_email_as_delivery_starts_the_period_at_acceptance(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile,
    smtp_server: tuple[Mailbox, int],
) -> None:  # fmt: skip
    runner, cases = stormed
    _, port = smtp_server
    with_email = profile.notice_delivery.model_copy(
        update={
            "starts_period": DeliveryMethodsRule(
                value=("hand", "posted", "mail", "email"), citation="Village Board, 2027-01-12"
            )
        }
    )
    village = profile.model_copy(update={"notice_delivery": with_email})
    runner.engine.enforcement.profile = village
    notice, key = _clearing_notice(cases)
    assert runner.engine.now is not None
    sent_at = runner.engine.now + timedelta(minutes=30)
    _email(cases, village, notice, port, sent_at)
    runner.tick()
    case = runner.engine.enforcement.cases[key]
    assert case.state == "notice_period"
    assert case.notice_deadline == sent_at + profile.snow_and_ice.nonhazard_notice_period.duration


def test_370_10_B1_the_hazard_notice_goes_to_the_person_in_charge_the_copy_to_the_owner(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    """B(1): "written notice to the owner, occupant or person in charge": served at the
    property on the person in charge the registry records; the owner gets the copy."""
    from tests.clocks.live import set_frontage

    runner, cases = stormed
    _, key = _clearing_notice(cases, "main-st-105")
    cases.registry.upsert_parcel(
        "P105", tax_parcel_id="026-0815-0105", site_address="105 Main St", place="Clyman",
        zip_code="53016", source="test",
    )  # fmt: skip
    set_frontage(cases, "main-st-105", parcel_id="P105")
    cases.registry.add_occupant("P105", "Ed Engel", role="occupant")
    cases.registry.add_occupant("P105", "Frieda Fuchs", role="person in charge")
    assert runner.engine.now is not None
    confirmed = runner.engine.now + timedelta(minutes=20)
    cases.actions.record("confirm_hazard", key, confirmed, "Officer Quinn")
    runner.tick()
    [hazard] = cases.notices.list(kind="hazard_notice")
    assert (hazard.owner_name, hazard.owner_address_lines) == (
        "Frieda Fuchs", ("105 Main St", "Clyman WI 53016"),
    )  # fmt: skip
    assert hazard.detail["served_on"] == {"name": "Frieda Fuchs", "role": "person in charge"}
    posted = confirmed + timedelta(minutes=10)
    record_notice_delivery(cases, hazard.id, posted, "Officer Quinn", "hand", profile=profile)
    assert "Dear Frieda Fuchs" in (cases.notices.get(hazard.id).body_text or "")
    copy = NoticeIssuer(cases, profile).owner_copy(cases.notices.get(hazard.id))
    assert copy.body_text is not None
    assert "Dear Clara Christoph" in copy.body_text
