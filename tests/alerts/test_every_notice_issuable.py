"""Every notice issuable by a person: the service of an obstruction's or a finding's notice,
recorded on the notice, starts its case's period at the service's time; what the Code
itself excludes (§ 144-12 C's order by mail) and a service before issue are refused."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sidewalk.alerts.corrections import CorrectionRefused, correct_entry
from sidewalk.alerts.delivery import NotDeliveryError, record_notice_delivery
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0


def test_every_notice_issuable_the_service_starts_the_obstruction_case_at_its_time(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    case = cases.clocks.record_violation(
        "obstruction:OB-1", "main-101", "obstructions.sidewalk_removal_after_notice", T0,
        evidence={"area": "sidewalk", "description": "a trailer"},
    )  # fmt: skip
    notice = issuer.obstruction_notice(
        "OB-1", "main-101", T0, area="sidewalk", observed_at=T0, description="a trailer"
    )
    assert notice.violation_id == case.id
    with pytest.raises(ValueError, match="cannot have been served before it was issued"):
        record_notice_delivery(cases, notice.id, T0 - timedelta(minutes=1), "Pat", "hand",
                               profile=issuer.profile)  # fmt: skip
    served = T0 + timedelta(hours=2)
    record_notice_delivery(cases, notice.id, served, "Pat", "posted", profile=issuer.profile)
    [step] = cases.actions.list("OB-1")
    assert (step.kind, step.at, step.who) == ("obstruction_notice_delivered", served, "Pat")
    [delivery] = cases.notices.list_deliveries(notice_id=notice.id)
    assert (delivery.channel, delivery.attempted_at) == ("posted", served)


def test_every_notice_issuable_144_12_C_order_is_never_served_by_mail(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    order = issuer.inspection_notice(
        "EX-1", "main-101", T0, rule="abandoned_excavation", observed_at=T0, description="pit"
    )
    assert order.body_text is not None
    with pytest.raises(NotDeliveryError, match="§ 144-12 C"):
        record_notice_delivery(cases, order.id, T0, "Pat", "mail", profile=issuer.profile)
    assert cases.notices.get(order.id).delivered_at is None
    done = record_notice_delivery(cases, order.id, T0, "Pat", "hand", profile=issuer.profile)
    assert done.delivered_at == T0
    # A finding's notice other than the order may be mailed (the profile counts mail).
    fence = issuer.inspection_notice(
        "FE-1", "main-101", T0, rule="excavation_fence", observed_at=T0, description="trench"
    )
    mailed = record_notice_delivery(cases, fence.id, T0, "Pat", "mail", profile=issuer.profile)
    assert mailed.delivered_at == T0


def test_every_notice_issuable_a_service_correction_on_an_obstruction_notice_is_refused(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    """Only a § 370-10 notice's entries are corrected: an obstruction's clock takes no
    correction, so the correction is refused in one sentence naming what can be corrected
    (the dashboard shows the same sentence beside the entry) and nothing is recorded."""
    cases.clocks.record_violation(
        "obstruction:OB-2", "main-101", "obstructions.sidewalk_removal_after_notice", T0,
        evidence={"area": "sidewalk", "description": "a trailer"},
        citation="§ 370-8 D (inferred)",
    )  # fmt: skip
    notice = issuer.obstruction_notice(
        "OB-2", "main-101", T0, area="sidewalk", observed_at=T0, description="a trailer"
    )
    record_notice_delivery(cases, notice.id, T0 + timedelta(hours=1), "Pat", "hand",
                           profile=issuer.profile)  # fmt: skip
    recorded = len(cases.actions.list("OB-2"))
    with pytest.raises(CorrectionRefused) as refused:
        correct_entry(cases, issuer.profile, notice, 1, who="Pat", reason="wrong hour",
                      at=T0 + timedelta(hours=2))  # fmt: skip
    said = str(refused.value)
    assert said == (
        f"Notice {notice.number} (§ 370-8 D) is not a § 370-10 snow-and-ice notice: only a"
        " snow-and-ice notice's service and the crew's completion of the Village's work on it"
        " are corrected or undone here."
    )
    assert len(cases.actions.list("OB-2")) == recorded
    assert cases.notices.get(notice.id).delivered_at == T0 + timedelta(hours=1)
