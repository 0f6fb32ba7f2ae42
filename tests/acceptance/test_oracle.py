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
    bill_due_date,
    bill_rule,
    billed_owner,
    citation_problems,
    deposit_rule,
    deposit_violates,
    obstruction_rule,
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
