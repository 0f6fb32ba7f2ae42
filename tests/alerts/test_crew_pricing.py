"""The crew's hours priced at the profile's rates (§ 370-10 G: "an account of the expenses"),
pure: hours per worker and per machine summed, each rate marked unconfirmed until the
Village confirms the value it has now, and hours a clerk must write again refused in words."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest

from sidewalk.alerts.billing import Material, ledger, total
from sidewalk.alerts.confirm import value_text
from sidewalk.alerts.crew import (
    CrewInputError,
    CrewWork,
    crew_work,
    parse_pairs,
    rates_in_force,
    rates_shown,
)
from sidewalk.core.profile import AbatementRates, Rule


def rule(value: str, unit: str, *, unconfirmed: bool = True) -> Rule:
    return Rule(
        value=Decimal(value), unit=unit, citation=None, unconfirmed=unconfirmed,
        note="the fee schedule" if unconfirmed else None,
    )  # fmt: skip


RATES = AbatementRates(
    crew_hourly_rate=rule("45.00", "usd"),
    equipment_hourly_rate=rule("85.00", "usd"),
    administration_share=rule("0", "percent"),
)


@dataclass(frozen=True)
class Confirmed:
    value: str


def test_hours_per_worker_and_machine_are_summed_and_priced_at_the_rates() -> None:
    crew = crew_work(
        [{"name": "Pat Olson", "hours": "2.5"}, {"name": "Lee Kruger", "hours": "1.25"}],
        [("plow truck", "1"), ("skid steer", "0.5")],
    )
    assert crew.crew_hours == Decimal("3.75")
    assert crew.equipment_hours == Decimal("1.5")
    lines = ledger(crew.work([Material("salt", Decimal("12.50"))]), RATES)
    # 3.75 h x $45 = $168.75; 1.5 h x $85 = $127.50; salt at cost.
    assert [(x.description, x.amount) for x in lines] == [
        ("Crew labor", Decimal("168.75")),
        ("Equipment", Decimal("127.50")),
        ("Materials: salt", Decimal("12.50")),
    ]
    assert total(lines) == Decimal("308.75")
    assert crew.words() == "Pat Olson 2.5 h, Lee Kruger 1.25 h; plow truck 1 h, skid steer 0.5 h"
    # Kept with the work order and read back the same.
    assert CrewWork.from_json(crew.to_json()) == crew


def test_a_rate_is_not_confirmed_until_the_village_confirms_the_value_it_has_now() -> None:
    assert [r.text for r in rates_shown(RATES, {})] == [
        "Crew labor, per worker: $45.00 an hour (not confirmed)",
        "Equipment: $85.00 an hour (not confirmed)",
    ]
    crew = crew_work([("Pat", "2")], [("truck", "1")])
    unmarked = ledger(crew.work(), rates_in_force(RATES, {}))
    assert [x.unconfirmed for x in unmarked] == [True, True]
    # The crew rate confirmed at $45.00; the equipment rate confirmed at another value
    # (the profile changed since): only the crew's line loses its mark.
    in_force = {
        "abatement_rates.crew_hourly_rate": Confirmed(value_text(Decimal("45.00"), "usd")),
        "abatement_rates.equipment_hourly_rate": Confirmed(value_text(Decimal("80.00"), "usd")),
    }
    marked = ledger(crew.work(), rates_in_force(RATES, in_force))
    assert [x.unconfirmed for x in marked] == [False, True]
    assert [r.confirmed for r in rates_shown(RATES, in_force)] == [True, False]


@pytest.mark.parametrize(
    ("workers", "equipment", "said"),
    [
        ([], [], "at least one worker"),
        ([("Pat", "0")], [], "Worker 1 (Pat): the hours must be more than 0"),
        ([("Pat", "-1")], [], "more than 0"),
        ([("Pat", "25")], [], "at most 24 hours"),
        ([("Pat", "two")], [], "Worker 1 (Pat): write the hours as a number"),
        ([("Pat", "1.333")], [], "to the hundredth"),
        ([("", "1")], [], "Worker 1: write who"),
        ([("Pat", "1")], [("truck", "NaN")], "Equipment 1 (truck)"),
    ],
)
def test_hours_a_clerk_must_write_again_are_refused_in_words(
    workers: list[tuple[str, str]], equipment: list[tuple[str, str]], said: str
) -> None:
    with pytest.raises(CrewInputError, match=said.replace("(", r"\(").replace(")", r"\)")):
        crew_work(workers, equipment)


def test_the_command_line_pairs() -> None:
    assert parse_pairs(["Pat Olson=2.5", "plow truck = 1"], "--worker") == [
        ("Pat Olson", "2.5"),
        ("plow truck", " 1"),
    ]
    assert crew_work(parse_pairs(["plow truck = 1"], "x")).crew_hours == Decimal(1)
    with pytest.raises(CrewInputError, match="'name=hours'"):
        parse_pairs(["Pat"], "--worker")
