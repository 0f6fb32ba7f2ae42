"""The § 370-5 (11) notices take repair vs replacement from the survey aggregation and
say on paper how many blocks were measured, the owner's total and how it was known."""

from __future__ import annotations

import pytest

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.letterhead import plain_citation
from sidewalk.alerts.notices import BlockDefect
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.analytics.survey import BlockSurvey, FrontageCount
from tests.alerts.conftest import T0, flat, pdf_text

EIGHT = [BlockDefect(b, "surface_deterioration", 15.0, 1.0) for b in range(1, 9)]


def _text(issuer: NoticeIssuer, key: str, survey: BlockSurvey) -> tuple[str, str]:
    notice = issuer.repair_notice(key, "main-101", T0, surveyed_at=T0, defects=EIGHT, survey=survey)
    assert notice.status == "rendered", notice
    return notice.kind, flat(pdf_text(notice_pdf(notice, issuer.profile)))


def test_a_high_share_of_an_incomplete_survey_is_not_a_replacement(
    issuer: NoticeIssuer,
) -> None:
    # 8 of 8 measured blocks defective, but another frontage's count is unknown.
    survey = BlockSurvey(
        8, 8, None, False, False,
        (FrontageCount("main-101", 10, "recorded"), FrontageCount("main-103", None, "unknown")),
    )  # fmt: skip
    kind, text = _text(issuer, "s-unknown", survey)
    assert kind == "repair_notice"
    assert "NOTICE TO REPAIR DEFECTIVE SIDEWALK" in text
    assert "8 of 8 measured sidewalk blocks" in text
    assert "Blocks measured: 8 of an unknown number of blocks" in text
    assert "(survey incomplete)" in text
    # Each frontage named by its address (main-103 is not in the issuer's registry).
    assert "101 Main St: 10 blocks (recorded block count)" in text
    assert "another frontage of the owner's: not known" in text
    assert "main-10" not in text
    assert "The number of blocks along all of your sidewalk is not yet known" in text
    assert "defective blocks reach 80% of them" in text
    assert "entire sidewalk is not required" not in text


def test_replacement_on_a_known_total_says_how_it_was_counted(issuer: NoticeIssuer) -> None:
    # 8 defective of 10 known blocks (9 measured): unmeasured counted sound, still 80 %.
    survey = BlockSurvey(
        9, 8, 10, False, True,
        (FrontageCount("main-101", 10, "length_spacing", 66.0, 6.6, 4),),
    )  # fmt: skip
    kind, text = _text(issuer, "s-spacing", survey)
    assert kind == "replacement_notice"
    assert "8 of 10 sidewalk blocks (80.0%)" in text
    assert "Blocks measured: 9 of 10 blocks along the owner's frontages" in text
    assert "8 of them defective (survey incomplete)" in text
    assert "66.0 ft / measured joint spacing 6.6 ft, 4 joints" in text
    assert "Blocks not yet measured are counted as sound." in text
    # The ordinance's words come from the profile, quoted with the citation.
    rule = issuer.profile.sidewalk_condition.replacement_share
    assert flat(f'{plain_citation(rule.citation)}: "{rule.words}"') in text


def test_the_aggregation_decides_not_the_share(issuer: NoticeIssuer) -> None:
    # A complete survey below 80 % stays a repair notice even if the caller's
    # defects alone would make 80 % of the total: the aggregation counts the owner.
    survey = BlockSurvey(10, 7, 10, True, False, (FrontageCount("main-101", 10, "recorded"),))
    kind, text = _text(issuer, "s-complete", survey)
    assert kind == "repair_notice"
    assert "(survey complete)" in text
    assert "so the entire sidewalk is not required to be replaced" in text


def test_full_replacement_without_a_total_is_refused() -> None:
    with pytest.raises(ValueError, match="block total"):
        BlockSurvey(8, 8, None, False, True)
    with pytest.raises(ValueError, match="not complete"):
        BlockSurvey(8, 8, None, True, False)


def test_the_stored_record_renders_the_same_words(issuer: NoticeIssuer) -> None:
    survey = BlockSurvey(9, 8, 10, False, True, (FrontageCount("main-101", 10, "recorded"),))
    notice = issuer.repair_notice(
        "s-again", "main-101", T0, surveyed_at=T0, defects=EIGHT, survey=survey
    )
    assert notice.detail["survey"]["owner_blocks"] == 10
    assert issuer.rendered(notice).text == notice.body_text
