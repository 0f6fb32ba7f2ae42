"""A temperature on paper is written as people write it: "0 °C", "35 °F", never the
profile's unit names ("degC", "degF")."""

from __future__ import annotations

from decimal import Decimal

import pytest

from sidewalk.alerts.wording import amount
from sidewalk.core.profile import Rule, load_profile


@pytest.mark.parametrize(
    ("value", "unit", "written"),
    [("0", "degC", "0 °C"), ("0.5", "degC", "0.5 °C"), ("-2", "degC", "-2 °C"),
     ("35", "degF", "35 °F"), ("50", "degF", "50 °F")],
)  # fmt: skip
def test_a_temperature_is_written_with_its_degree_sign(value: str, unit: str, written: str) -> None:
    assert amount(Rule(value=Decimal(value), unit=unit, citation="§ 370-5 (9)")) == written


def test_every_temperature_the_profile_holds_reads_in_degrees() -> None:
    """The village's own cold-weather values: Celsius and Fahrenheit both, as the profile
    sets them (the pour minimum in °F as § 370-5 (9) writes it)."""
    cold = load_profile().cold_weather
    rules = {name: rule for name, rule in cold if isinstance(rule, Rule)}
    temperatures = {n: amount(r) for n, r in rules.items() if r.unit in ("degC", "degF")}
    assert temperatures["pour_min_temp"] == "35 °F"
    assert temperatures["frozen_subgrade_at_or_below"] == "0 °C"
    assert {r.unit for n, r in rules.items() if n in temperatures} == {"degC", "degF"}
    for name, written in temperatures.items():
        assert "deg" not in written, (name, written)
