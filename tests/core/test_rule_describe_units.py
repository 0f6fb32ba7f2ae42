"""A profile value described for a reader writes its unit as people write it: a
temperature with its degree sign ("35 °F", "0 °C"), never the profile's "degF"/"degC"."""

from __future__ import annotations

from decimal import Decimal

import pytest

from sidewalk.core.profile import Rule, load_profile


@pytest.mark.parametrize(
    ("value", "unit", "written"),
    [("35", "degF", "35 °F"), ("0", "degC", "0 °C"), ("-2.5", "degC", "-2.5 °C"),
     ("0.25", "in_per_ft", "0.25 inch per foot"), ("24", "hours", "24 hours"),
     ("10", "calendar_days", "10 calendar days")],
)  # fmt: skip
def test_a_rule_describes_its_unit_in_words(value: str, unit: str, written: str) -> None:
    rule = Rule(value=Decimal(value), unit=unit, citation="§ 370-5 (9)")
    assert rule.describe() == f"{written} (§ 370-5 (9))"


def test_every_temperature_of_the_village_profile_reads_in_degrees() -> None:
    cold = load_profile().cold_weather
    described = {
        n: r.describe() for n, r in cold if isinstance(r, Rule) and r.unit in ("degF", "degC")
    }
    assert described, "the profile holds temperatures"
    assert described["pour_min_temp"].startswith("35 °F")
    for name, text in described.items():
        assert "deg" not in text, (name, text)
        assert "°" in text, (name, text)
