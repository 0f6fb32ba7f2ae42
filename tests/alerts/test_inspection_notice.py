"""The written notice for each rule an inspector enforces by sight, with
the period to correct from the profile and the section that bills the Village's work."""

from __future__ import annotations

import pytest

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.analytics.clocks.inspections import NOTICE_PERIOD, rule_value
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0, flat

EXPECTED = {
    # rule: (the period as printed, the section cited for it, what the owner is to do)
    "snow_on_street": ("24 hours", "§ 370-10 C", "Remove the snow or ice"),
    "mailbox": ("24 hours", "§ 370-11 C", "Clear the snow from the mailbox"),
    "dumping": ("24 hours", "§ 370-14", "Remove what was dumped"),
    "excavation_fence": ("30 calendar days", "§ 144-21 B(1)", "Put up a fence"),
    "demolition_fill": ("30 calendar days", "§ 144-21 B(1)", "Fill, grade and level"),
    "abandoned_excavation": ("20 calendar days", "§ 144-12 C", "fill it to grade"),
}


@pytest.mark.parametrize("rule", sorted(EXPECTED))
def test_370_10_C_370_11_C_370_14_144_11_144_12_each_rule_has_its_notice_and_period(
    issuer: NoticeIssuer, cases: CaseStore, rule: str
) -> None:
    notice = issuer.inspection_notice(
        f"{rule}-1", "main-101", T0, rule=rule, observed_at=T0, description="seen at 9 AM"
    )
    assert notice.status == "rendered", notice.status
    # The stored text, letter then evidence record (the PDF prints the same words).
    assert notice.body_text is not None
    text = flat(notice.body_text)
    period, section, todo = EXPECTED[rule]
    assert f"within {period} after this notice is delivered to you" in text
    assert section in text
    assert todo in text
    assert "seen at 9 AM" in text
    uses = {r.name for r in notice.rules}
    assert NOTICE_PERIOD[rule] in uses
    assert rule_value(issuer.profile, NOTICE_PERIOD[rule]).unconfirmed == (
        rule in {"snow_on_street", "mailbox", "dumping", "abandoned_excavation"}
    )
    letter = flat(notice.body_text.partition("\f")[0])
    for internal in ("unconfirmed", "inferred", "_", "#"):
        assert internal not in letter, internal
    if rule == "abandoned_excavation":
        assert "next tax roll as a special charge" in text
    elif rule == "snow_on_street":
        assert "§ 370-10 G" in text  # § 370-10 G's bill terms
