"""Citations from the ordinance, never from notes.

A bill after a § 370-10 B(2) notice cites the section the Village removed the snow
under (§ 370-10 F, "after receiving a written notice") and the one that charges and
bills it (§ 370-10 G, with § 66.0907(5), Wis. Stats., where the tax roll is named),
each quoted from the Code's text; never the profile's note on the missing B(2). A
value the Code's text does not state is said so in words, not cited. The decision's
citation is stored once, and the profile's "(inferred)" marks never reach paper.
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.alerts.accounts import bill_abatement
from sidewalk.alerts.billing import AbatementWork
from sidewalk.alerts.delivery import record_notice_delivery
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import Addressee, FrontageInfo, LedgerLine, render_abatement_bill
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.cli.notices import notices_app
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0, flat, pdf_text

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT.parent / "shared" / "seeds"
# What must never be on paper where a section belongs.
NOT_A_CITATION = ("unconfirmed:", "missing from the code text", "(inferred)", "Village Code 24")


def code_text() -> str:
    """The ordinance as the Village's code text has it, whitespace flattened."""
    seeds = sorted(SEEDS.glob("*.txt"))
    if not seeds:
        pytest.skip(f"the ordinance text is not at {SEEDS}")
    return flat("\n".join(p.read_text(encoding="utf-8") for p in seeds))


def _abated_after_b2_notice(
    runner: AnalyticsRunner, cases: CaseStore, profile: Profile
) -> tuple[str, int]:
    """main-st-103's clearing notice handed over; its B(2) period runs out; the crew clears."""
    [notice] = cases.notices.list(kind="clearing_violation", frontage_id="main-st-103")
    key = cases.clocks.get_violation(notice.violation_id or 0).key
    assert runner.engine.now is not None
    served = runner.engine.now
    record_notice_delivery(cases, notice.id, served, "Officer Quinn", "hand", profile=profile)
    runner.tick()
    period = profile.snow_and_ice.nonhazard_notice_period.duration
    runner.advance(served + period + timedelta(minutes=1))
    abatement = cases.bills.abatement_by_key(f"{key}/abatement")
    assert abatement is not None
    cases.actions.record("abatement_done", key, served + period + timedelta(hours=3), "Ortiz")
    runner.tick()
    return key, abatement.id


def test_the_bill_after_a_b2_notice_cites_F_and_G_from_the_code(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    _key, abatement_id = _abated_after_b2_notice(runner, cases, profile)
    f = profile.snow_and_ice.abatement_after_notice
    assert f is not None
    assert f.citation == "§ 370-10 F (inferred)"
    # The removal is ordered under F, not under the unconfirmed period's note.
    assert cases.bills.get_abatement(abatement_id).detail["citation"] == f.citation
    done = cases.bills.get_abatement(abatement_id).completed_at
    assert done is not None
    billed = bill_abatement(
        NoticeIssuer(cases, profile), abatement_id, AbatementWork(Decimal(2)), done, who="Lee"
    )
    assert billed.notice.status == "rendered"
    letter, record = (
        flat(p) for p in pdf_text(notice_pdf(billed.notice, profile)).split("EVIDENCE RECORD")
    )
    assert "so the Village had the work done (Village Code § 370-10 F)" in letter
    assert "Village Code § 370-10 G requires the Village to keep an account" in letter
    assert "after you receive this bill (Village Code § 370-10 G)" in letter
    assert (
        "special tax against parcel 026-0815-0103 (Village Code § 370-10 G; § 66.0907(5), "
        "Wis. Stats.)" in letter
    )
    for bad in NOT_A_CITATION:
        assert bad not in letter + record, bad
    # Each section it rests on, quoted as the Code's text has it.
    quoted = dict(re.findall(r"[-•] (Village Code § 370-10 [FG][^:]*): \"([^\"]+)\"", record))
    assert set(quoted) == {
        "Village Code § 370-10 F",
        "Village Code § 370-10 G",
        "Village Code § 370-10 G; § 66.0907(5), Wis. Stats.",
    }
    text = code_text()
    assert all(words in text for words in quoted.values())
    assert (
        "after receiving a written notice shall result in the Village causing the removal"
        in (quoted["Village Code § 370-10 F"])
    )


def test_a_bill_recorded_with_the_note_as_its_citation_still_cites_F(profile: Profile) -> None:
    note = profile.snow_and_ice.nonhazard_notice_period.note
    assert note
    rendered = render_abatement_bill(
        number="CLY-2026-000009", issued_at=T0,
        owner=Addressee("Jane Smith", ("101 Main St", "Clyman, WI 53016")),
        frontage=FrontageInfo("main-101", "101 Main St", "026-0915-0001"), profile=profile,
        bill_id=3, lines=[LedgerLine("Crew labor", Decimal(2), "h", Decimal(45), Decimal(90))],
        total=Decimal(90), costs_incurred_at=T0, work="notice expired",
        abatement_citation=f"unconfirmed: {note}",  # as bills were recorded before
    )  # fmt: skip
    text = flat(rendered.text)
    assert "had the work done (Village Code § 370-10 F)" in text
    for bad in NOT_A_CITATION:
        assert bad not in text, bad


def test_the_clearing_notice_cites_each_section_once_and_names_the_gap_in_words(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    _runner, cases = stormed
    [notice] = cases.notices.list(kind="clearing_violation", frontage_id="main-st-103")
    violation = cases.clocks.get_violation(notice.violation_id or 0)
    assert violation.citation == "§ 370-10 A (inferred)"  # A's 24 hours and four feet: once
    assert notice.citation == "§ 370-10 A (inferred)"
    text = flat(pdf_text(notice_pdf(notice, profile)))
    for bad in NOT_A_CITATION:
        assert bad not in text, bad
    assert "§ 370-10 A; Village Code § 370-10 A" not in text
    # B(2)'s period is not in the code text: said in words where the owner is told it.
    assert (
        "within 24 hours after this notice is delivered to you (a period set by the Village: "
        "the text of the Village Code does not state one)" in text
    )
    assert (
        "the Village will have it done (Village Code § 370-10 F) and charge the cost to the "
        "owner (Village Code § 370-10 G)" in text
    )


def test_the_bill_printed_from_the_command_line_cites_F_and_G(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile, tmp_path: Path
) -> None:
    runner, cases = stormed
    _key, abatement_id = _abated_after_b2_notice(runner, cases, profile)
    config = tmp_path / "sidewalk.toml"
    config.write_text(f'[cases]\ndatabase_url = "{cases.url}"\n', encoding="utf-8")
    c = ["--config", str(config)]
    cli = CliRunner()
    result = cli.invoke(
        notices_app, ["bill", str(abatement_id), "--who", "Clerk Lee", "--crew-hours", "2", *c]
    )
    assert result.exit_code == 0, result.output
    number = re.search(r"notice (\S+)\)", result.output)
    assert number is not None, result.output
    result = cli.invoke(notices_app, ["queue", number.group(1), "--channel", "print", *c])
    assert result.exit_code == 0, result.output
    result = cli.invoke(notices_app, ["print-batch", "--out", str(tmp_path / "p"), *c])
    assert result.exit_code == 0, result.output
    [batch] = (tmp_path / "p").glob("print-batch-*.pdf")
    text = flat(pdf_text(batch.read_bytes()))
    assert "BILL FOR WORK DONE BY THE VILLAGE" in text
    assert "had the work done (Village Code § 370-10 F)" in text
    assert "(Village Code § 370-10 G; § 66.0907(5), Wis. Stats.)" in text
    for bad in NOT_A_CITATION:
        assert bad not in text, bad


def test_a_period_the_section_does_not_set_is_not_cited_as_if_it_did(
    issuer: NoticeIssuer,
) -> None:
    # § 370-14 forbids dumping on the streets; the 24 hours to remove it are the Village's.
    rule = issuer.profile.streets.dumping_removal_after_notice
    assert rule.unconfirmed
    assert rule.citation == "§ 370-14"
    notice = issuer.inspection_notice(
        "dump-1", "main-101", T0, rule="dumping", observed_at=T0, description="a sofa"
    )
    text = flat(pdf_text(notice_pdf(notice, issuer.profile)))
    assert (
        "within 24 hours after this notice is delivered to you (a period set by the Village: "
        "Village Code § 370-14 does not state one)" in text
    )
    for bad in NOT_A_CITATION:
        assert bad not in text, bad


@pytest.mark.parametrize(
    ("stored", "shown", "on_paper"),
    [
        (
            "§ 370-10 G (inferred); § 66.0907(5), Wis. Stats.",
            "§ 370-10 G; § 66.0907(5), Wis. Stats.",
            "Village Code § 370-10 G; § 66.0907(5), Wis. Stats.",
        ),
        ("§ 370-10 A (inferred); § 370-10 A (inferred)", "§ 370-10 A", "Village Code § 370-10 A"),
        (
            "unconfirmed: § 370-10 B(2) is missing from the code text; § 370-10 F",
            "§ 370-10 F",
            "Village Code § 370-10 F",
        ),
        ("unconfirmed: § 370-10 B(2) is missing from the code text", None, ""),
        (None, None, ""),
    ],
)
def test_citations_from_the_code_one_rule_for_every_document(
    stored: str | None, shown: str | None, on_paper: str
) -> None:
    """The letters, the tax roll, the exports and the dashboard cite through one rule."""
    from sidewalk.alerts.letterhead import cited, plain_citation

    assert cited(stored) == shown
    assert plain_citation(stored) == on_paper
