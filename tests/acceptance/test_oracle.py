"""The acceptance oracle itself, on letters and dates worked out by hand from the Code.

The winter's run can only show the oracle agreeing with the engine; these show it
refusing what a reader of the Code would refuse (a letter that contradicts
itself, a tax-roll entry made while the bill is payable), in milliseconds.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.acceptance.oracle import (
    ClearingRule,
    Opening,
    bill_due_date,
    bill_rule,
    billed_owner,
    citation_problems,
    cites_subsection,
    deposit_rule,
    deposit_violates,
    obstruction_rule,
    opening_rule,
    opening_violations,
    tax_roll_window,
    width_contradictions,
)

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
ZONE = ZoneInfo("America/Chicago")
RULE = ClearingRule(hours_to_clear=24, min_width_ft=4)


def _letter(words: str, mm: float) -> str:
    return (
        f"At that time the Village's sidewalk camera measured the narrowest cleared path along"
        f" your sidewalk at {words} (± 2 in). The Code requires at least 4 feet. … Measurement"
        f" at the deadline: narrowest cleared width {words} ± 2 in ({mm:.1f} mm ± 50.8 mm)"
    )


@pytest.fixture
def seeds() -> Path:
    if not any(SEEDS.glob("*.txt")):
        pytest.skip(f"the ordinance text (the oracle's source) is not at {SEEDS}")
    return SEEDS


def test_the_code_text_gives_the_bill_and_obstruction_terms(seeds: Path) -> None:
    law = bill_rule(seeds)
    assert (law.payable_days, law.tax_roll_days) == (10, 60)
    assert law.statute == "§ 66.0907(5), Wis. Stats."
    assert obstruction_rule(seeds).hours_to_remove == 24


def test_a_letter_that_contradicts_itself_is_refused() -> None:
    # 1212.8 mm is within 2 in of 4 ft, and "4 ft 0 in" is not short of it at all.
    assert width_contradictions(_letter("4 ft 0 in", 1212.8), RULE, true_ft=3.98)
    # 2 ft 0 in (609.6 mm) of a 2-ft path: honest.
    assert width_contradictions(_letter("2 ft 0 in", 609.6), RULE, true_ft=2.0) == []
    # The words must say what the millimetres say, to the quarter inch.
    wrong = width_contradictions(_letter("3 ft 6 in", 1143.0), RULE, true_ft=3.75)
    assert any("disagree" in w for w in wrong), wrong
    # A measurement farther from the path the owner left than its own uncertainty.
    wrong = width_contradictions(_letter("3 ft 0 in", 914.4), RULE, true_ft=3.75)
    assert any("not within its uncertainty" in w for w in wrong), wrong


def test_the_tax_roll_waits_for_the_days_to_pay(seeds: Path) -> None:
    law = bill_rule(seeds)
    incurred = datetime(2026, 3, 1, 18, 0, tzinfo=UTC)  # noon, March 1, in Clyman
    # Received March 3: payable through March 13; on the roll by the end of April 30.
    received = datetime(2026, 3, 3, 16, 0, tzinfo=UTC)
    assert bill_due_date(law, received, ZONE) == date(2026, 3, 13)
    start, end = tax_roll_window(law, incurred, received, ZONE)
    assert start == datetime(2026, 3, 14, tzinfo=ZONE)
    assert end == datetime(2026, 5, 1, tzinfo=ZONE)
    # Received April 25 (day 55): payable through May 5, past day 60: entered as May 6
    # begins, the first lawful moment, and not before.
    late = datetime(2026, 4, 25, 16, 0, tzinfo=UTC)
    assert tax_roll_window(law, incurred, late, ZONE) == (
        datetime(2026, 5, 6, tzinfo=ZONE),
        datetime(2026, 5, 6, tzinfo=ZONE),
    )


def test_the_bill_after_a_sale_and_its_citations() -> None:
    assert billed_owner("WERNER SUSAN", "BUYER SAM", "owner served") == "WERNER SUSAN"
    assert billed_owner("WERNER SUSAN", "BUYER SAM", "new notice") is None
    assert billed_owner("WERNER SUSAN", "werner susan", "new notice") == "WERNER SUSAN"
    assert citation_problems("(§ 370-10 F) … (§ 370-10 G)", ("§ 370-10 F", "§ 370-10 G")) == []
    assert citation_problems("§ 370-10 G (inferred)", ("§ 370-10 G",)) == ["carries '(inferred)'"]
    assert citation_problems("§ 370-10 G", ("§ 370-10 F",)) == ["does not cite § 370-10 F"]


def test_the_code_text_gives_c_and_no_period_to_remove_a_deposit(seeds: Path) -> None:
    law = deposit_rule(seeds)
    assert (law.section, law.setback_ft, law.removal_hours) == ("§ 370-10 C", 5, None)
    # The exception: the walk's own snow, onto the street, beside a building within 5 ft.
    assert not deposit_violates(law, "street", from_own_walk=True, building_within_ft=4)
    assert deposit_violates(law, "street", from_own_walk=True, building_within_ft=6)
    assert deposit_violates(law, "street", from_own_walk=False, building_within_ft=4)
    assert deposit_violates(law, "sidewalk", from_own_walk=True, building_within_ft=4)
    assert deposit_violates(law, "street", from_own_walk=True, building_within_ft=None)


def test_the_word_test_refuses_our_words_and_keeps_theirs() -> None:
    from tests.acceptance.test_production_winter import ours_in

    ids = {"206-1015-0050-000-elm-ave", "pole-acceptance-01"}
    for ours in ("Deadline: None", "clearing_period", "§ 370-10 A (inferred)",
                 "at 1765432100000", "value not confirmed", "record 206-1015-0050-000-elm-ave",
                 "pole-main-01, reading no. 53", "undefined"):  # fmt: skip
        assert ours_in(ours, ids=ids), ours
    for theirs in ("None recorded.", "Messages refused\nNone.\n", "$1,765.00",
                   "letter: /tmp/x_y/obstruction.pdf", "(setting [village] officer_name)",
                   "101 ELM AVE, parcel 20610150050000", "CLY-2026-000001"):  # fmt: skip
        assert not ours_in(theirs, ids=ids), theirs
    # A command may echo the ids it was given; the Poles page names a pole by its id too.
    assert ours_in("pole pole-acceptance-01 watches 101 ELM AVE", ids=ids)
    assert not ours_in("Main St east (pole-acceptance-01)", "dashboard page #poles at 1366 px",
                       ids=ids)  # fmt: skip


def _opening(**given: object) -> Opening:
    base: dict[str, object] = {
        "permit": "SO-1", "street": "Main St", "opened": datetime(2026, 5, 11, 8, tzinfo=ZONE),
        "approved": date(2026, 5, 4),
    }  # fmt: skip
    return Opening(**{**base, **given})  # type: ignore[arg-type]


def test_370_7_days_and_dates_from_the_code() -> None:
    if not SEEDS.exists():
        pytest.skip("the ordinance text is not beside the clone")
    rule = opening_rule(SEEDS)
    assert (rule.frozen_from, rule.frozen_until, rule.cold_mix_by) == ((11, 15), (4, 1), (6, 1))
    assert (rule.permanent_days, rule.completion_days, rule.moratorium_years) == (60, 30, 5)
    # G: 60 days from the permit's date of May 4 is July 3; the 3rd is in time, the 4th late.
    assert opening_violations(rule, _opening(permanent_on=date(2026, 7, 3)), date(2026, 8, 1)) == []
    [late] = opening_violations(rule, _opening(permanent_on=date(2026, 7, 4)), date(2026, 8, 1))
    assert (late.letter, late.last_day) == ("G", date(2026, 7, 3))
    assert opening_violations(rule, _opening(), date(2026, 7, 3)) == []  # not yet due
    # A Friday-night emergency: applied on Monday is in time, on Tuesday late (H).
    friday = {"opened": datetime(2025, 12, 5, 22, tzinfo=ZONE), "approved": date(2025, 12, 9),
              "emergency": True, "cold_mix_on": date(2025, 12, 6),
              "permanent_on": date(2026, 6, 1)}  # fmt: skip
    ok = _opening(**friday, applied=datetime(2025, 12, 8, 16, tzinfo=ZONE))
    assert opening_violations(rule, ok, date(2026, 8, 1)) == []
    tuesday = datetime(2025, 12, 9, 9, tzinfo=ZONE)
    [h] = opening_violations(rule, _opening(**friday, applied=tuesday), date(2026, 8, 1))
    assert (h.letter, h.last_day) == ("H", date(2025, 12, 8))
    holiday = frozenset({date(2025, 12, 8)})
    assert opening_violations(rule, _opening(**friday, applied=tuesday), date(2026, 8, 1),
                              holiday) == []  # fmt: skip
    # G: cold mix replaced by the following June 1, not the 60 days.
    monday = datetime(2025, 12, 8, 9, tzinfo=ZONE)
    [g] = opening_violations(rule, _opening(**{**friday, "permanent_on": date(2026, 6, 2)},
                                            applied=monday), date(2026, 8, 1))  # fmt: skip
    assert (g.letter, g.last_day) == ("G", date(2026, 6, 1))
    # A: not an emergency, opened in the frozen-ground period.
    [a] = opening_violations(rule, _opening(opened=datetime(2026, 3, 2, 8, tzinfo=ZONE),
                                            approved=date(2026, 3, 1), pavement=False),
                             date(2026, 3, 3))  # fmt: skip
    assert a.letter == "A"
    # I: the work done 31 days after the repaving notice; an opening within five years.
    [i] = opening_violations(rule, _opening(pavement=False, repaving_notice_on=date(2026, 5, 1),
                                            completed_on=date(2026, 6, 1)), date(2026, 8, 1))
    assert (i.letter, i.last_day) == ("I", date(2026, 5, 31))
    [m] = opening_violations(rule, _opening(pavement=False, street_repaved_on=date(2021, 5, 12)),
                             date(2026, 8, 1))  # fmt: skip
    assert (m.letter, m.last_day) == ("I", date(2026, 5, 12))
    assert opening_violations(rule, _opening(pavement=False, street_repaved_on=date(2021, 5, 10)),
                              date(2026, 8, 1)) == []  # fmt: skip


def test_a_370_7_citation_names_its_subsection() -> None:
    assert cites_subsection("by Tuesday, June 1, 2027 (§ 370-7G); it was", "G")
    assert cites_subsection("(§ 370-7 H)", "H")
    assert not cites_subsection("(§ 370-7 H)", "G")
    assert not cites_subsection("(§ 370-7 Ha)", "H")
