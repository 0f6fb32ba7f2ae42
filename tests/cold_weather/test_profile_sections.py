"""The cold-weather, permit, obstruction, street and condition sections of the profile."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest

from sidewalk.core.profile import ProfileError, load_profile, parse_profile

CLYMAN = Path(str(resources.files("sidewalk.core.profiles").joinpath("clyman.toml")))
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example_village.toml"


def _broken(old: str, new: str) -> str:
    text = CLYMAN.read_text("utf-8")
    assert old in text
    return text.replace(old, new, 1)


def test_clyman_carries_the_cold_weather_and_street_rules() -> None:
    p = load_profile()
    window = p.street_openings.frozen_ground_window
    assert (window.start, window.end) == ("11-15", "04-01")
    assert p.street_openings.emergency_permit_application.days == 1
    assert p.street_openings.street_concrete_protection.duration == timedelta(hours=72)
    assert p.street_openings.repaving_moratorium.months == 60
    assert str(p.street_openings.cold_mix_replacement_by.month_day) == "06-01"
    assert p.permits.opening_permit_validity.days == 30
    assert p.permits.street_privilege_term.months == 3
    assert p.cold_weather.pour_min_temp.deg_f == 35
    assert p.cold_weather.pour_min_temp.deg_c == pytest.approx(5 / 3)
    assert p.cold_weather.pour_forecast_window.duration == timedelta(hours=72)
    assert p.cold_weather.keep_off_normal.duration == timedelta(hours=48)
    assert p.cold_weather.keep_off_cold.duration == timedelta(hours=96)
    assert p.cold_weather.cold_weather_below.deg_f == 50
    assert p.obstructions.fixture_min_clear_width.length_mm == pytest.approx(914.4)
    assert p.obstructions.building_materials_max_sidewalk.fraction == 0.5
    assert p.obstructions.building_materials_max_street.fraction == pytest.approx(1 / 3)
    assert p.streets.sweeping_deadline.duration == timedelta(hours=24)
    assert p.streets.sweeping_costs_payable.days == 30


def test_condition_limits_are_read_from_the_codes_fractions() -> None:
    c = load_profile().sidewalk_condition
    assert c.vertical_differential.value == Decimal("0.75")
    assert c.vertical_differential.length_mm == pytest.approx(19.05)
    assert c.horizontal_gap.length_mm == pytest.approx(31.75)
    assert c.surface_deterioration.length_mm == pytest.approx(12.7)
    assert c.replacement_share.fraction == pytest.approx(0.8)
    assert c.residential_width.length_mm == pytest.approx(1219.2)
    assert c.min_cross_slope.slope == pytest.approx(0.25 / 12)
    assert c.max_joint_spacing.length_mm == pytest.approx(50 * 304.8)
    assert c.commercial_width.unconfirmed


def test_describe_shows_fractions_dates_and_windows_as_the_code_writes_them() -> None:
    p = load_profile()
    assert p.obstructions.building_materials_max_street.describe().startswith("1/3 fraction (")
    assert p.street_openings.cold_mix_replacement_by.describe() == "June 1 (§ 370-7G)"
    window = p.street_openings.frozen_ground_window.describe()
    assert window == "November 15 – April 1 (§ 370-7 A (inferred))"
    assert "[unconfirmed:" in p.cold_weather.frozen_subgrade_at_or_below.describe()


def test_another_village_has_its_own_numbers() -> None:
    clyman, example = load_profile(), load_profile(EXAMPLE)
    pairs = [
        (
            clyman.street_openings.frozen_ground_window.end,
            example.street_openings.frozen_ground_window.end,
        ),
        (clyman.cold_weather.pour_min_temp.deg_f, example.cold_weather.pour_min_temp.deg_f),
        (clyman.permits.opening_permit_validity.days, example.permits.opening_permit_validity.days),
        (clyman.calendar.business_weekdays, example.calendar.business_weekdays),
    ]
    for ours, theirs in pairs:
        assert ours != theirs
    assert example.unconfirmed_rules() == [
        "snow_and_ice.nonhazard_notice_period",
        "snow_and_ice.width_tolerance",  # not in the example file: the default, unconfirmed
        "snow_and_ice.deposit_removal_charge",  # the same: § 370-10 G's reach over C
        "billing.penalty_per_offense",
        "billing.owner_changed_during_case",
        "cold_weather.frozen_subgrade_deadband",
        "cold_weather.frozen_subgrade_min_dwell",
        # Not in the example file: the defaults, unconfirmed until a village says.
        "notice_delivery.starts_period",
        "notice_delivery.hazard_notice",
    ]


def test_a_bad_month_day_is_refused_naming_field_and_line() -> None:
    text = _broken('start = "11-15"\nend = "04-01"', 'start = "11-31"\nend = "04-01"')
    with pytest.raises(ProfileError) as caught:
        parse_profile(text, "bad.toml")
    line = text.splitlines().index('start = "11-31"') + 1
    message = str(caught.value)
    assert f"bad.toml:{line}: street_openings.frozen_ground_window.start" in message
    assert "not a date every year" in message


def test_feb_29_cannot_edge_a_yearly_window() -> None:
    text = _broken('value = "06-01"', 'value = "02-29"')
    with pytest.raises(ProfileError, match="cold_mix_replacement_by"):
        parse_profile(text)


def test_a_temperature_in_feet_is_refused_with_its_line() -> None:
    text = _broken('value = 35\nunit = "degF"', 'value = 35\nunit = "feet"')
    with pytest.raises(ProfileError) as caught:
        parse_profile(text, "bad.toml")
    header = text.splitlines().index("[cold_weather.pour_min_temp]") + 1
    assert f"bad.toml:{header}: cold_weather.pour_min_temp" in str(caught.value)


def test_business_days_and_calendar_days_are_not_interchangeable() -> None:
    text = _broken(
        'value = 1\nunit = "business_days"\ncitation = "§ 370-7 H"',
        'value = 1\nunit = "calendar_days"\ncitation = "§ 370-7 H"',
    )
    with pytest.raises(ProfileError, match="emergency_permit_application"):
        parse_profile(text)


def test_a_cold_keep_off_shorter_than_the_normal_one_is_refused() -> None:
    text = _broken('value = 96\nunit = "hours"', 'value = 24\nunit = "hours"')
    with pytest.raises(ProfileError, match="keep_off_cold must not be shorter"):
        parse_profile(text)


def test_a_malformed_fraction_is_refused() -> None:
    text = _broken('value = "3/4"', 'value = "3/0"')
    with pytest.raises(ProfileError, match="vertical_differential"):
        parse_profile(text)


def test_a_missing_section_is_named() -> None:
    text = CLYMAN.read_text("utf-8")
    cut = text.index("[streets.sweeping_deadline]")
    end = text.index("[sidewalk_condition.vertical_differential]")
    with pytest.raises(ProfileError, match="streets"):
        parse_profile(text[:cut] + text[end:])


def test_an_unlisted_weekday_and_an_unconfirmed_calendar_without_a_note_are_refused() -> None:
    with pytest.raises(ProfileError, match=r"calendar\.business_weekdays"):
        parse_profile(_broken('"mon", "tue"', '"monday", "tue"'))
    text = CLYMAN.read_text("utf-8")
    start = text.index("note = \"the code does not define 'business day'")
    with pytest.raises(ProfileError, match="needs a note"):
        parse_profile(text[:start])


def test_negative_values_are_refused_except_temperatures() -> None:
    with pytest.raises(ProfileError, match="negative"):
        parse_profile(
            _broken('value = 30\nunit = "calendar_days"', 'value = -30\nunit = "calendar_days"')
        )
    cold = parse_profile(_broken('value = 0\nunit = "degC"', 'value = -1\nunit = "degC"'))
    assert cold.cold_weather.frozen_subgrade_at_or_below.deg_c == -1
