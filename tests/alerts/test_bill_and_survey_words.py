"""The bill's and the survey letter's words: the owner's frontages by address (never the
record id), one blank line after the salutation, and a served notice's status."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

from sidewalk.alerts.accounts import bill_abatement
from sidewalk.alerts.billing import AbatementWork, Material
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import BlockDefect
from sidewalk.analytics.survey import BlockSurvey, FrontageCount
from tests.alerts.conftest import T0


def test_the_survey_count_names_each_frontage_by_its_address(issuer: NoticeIssuer) -> None:
    frontage = issuer.cases.registry.get_frontage("main-101")
    survey = BlockSurvey(
        10, 9, 10, True, True,
        (FrontageCount("main-101", 6, "recorded"),
         FrontageCount("main-101", 4, "length_spacing", 20.0, 5.0, 4)),
    )  # fmt: skip
    notice = issuer.repair_notice(
        "s-addr", "main-101", T0, surveyed_at=T0, survey=survey,
        defects=[BlockDefect(b, "surface_deterioration", 15.0, 1.0) for b in range(1, 10)],
    )  # fmt: skip
    assert notice.kind == "replacement_notice"
    text = issuer.rendered(notice).text
    assert "main-101" not in text
    assert "property record" not in text
    assert f"  {frontage.street_address}: 6 blocks (recorded block count)" in text
    assert f"  {frontage.street_address}: 4 blocks (frontage length 20.0 ft" in text
    dear = text.index("Dear ")
    assert ":\n\nThe " in text[dear : dear + 80], repr(text[dear : dear + 80])


def test_the_bill_has_one_blank_line_after_the_salutation(issuer: NoticeIssuer) -> None:
    abatement = issuer.cases.bills.order_abatement("v1/abatement", "main-101", "notice_expired", T0)
    work = AbatementWork(Decimal("2.5"), Decimal("0.75"), (Material("salt", Decimal("21.90")),))
    billed = bill_abatement(
        issuer, abatement.id, work, T0 + timedelta(hours=3), who="Clerk Lee",
        completed_at=T0 + timedelta(hours=2),
    )  # fmt: skip
    text = issuer.rendered(billed.notice).text
    dear = re.search(r"Dear [^\n]*:\n", text)
    assert dear, text[:400]
    after = text[dear.end() :]
    assert after.startswith("\n"), repr(text[: dear.end() + 60])
    assert not after.startswith("\n\n"), repr(text[: dear.end() + 60])
