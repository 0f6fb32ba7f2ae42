"""Ordinance profile and configuration: strict, and the error names the field."""

from __future__ import annotations

from datetime import timedelta
from importlib import resources
from pathlib import Path

import pytest

from sidewalk.core.config import ConfigError, Secrets, load_settings
from sidewalk.core.profile import ProfileError, load_profile, parse_profile

CLYMAN = Path(str(resources.files("sidewalk.core.profiles").joinpath("clyman.toml")))


def test_clyman_profile_carries_section_370_10() -> None:
    profile = load_profile()
    rules = profile.snow_and_ice
    assert rules.clearing_deadline.duration == timedelta(hours=24)
    assert rules.clearing_min_width.length_mm == pytest.approx(4 * 304.8)
    assert rules.hazard_notice_period.duration == timedelta(hours=2)
    assert profile.billing.bill_payable.days == 10
    assert profile.billing.tax_roll_after.days == 60
    assert "370-10 A" in (rules.clearing_deadline.citation or "")
    assert profile.village.timezone == "America/Chicago"


def test_gaps_in_the_text_are_unconfirmed_and_uncited() -> None:
    profile = load_profile()
    assert set(profile.unconfirmed_rules()) == {
        "snow_and_ice.nonhazard_notice_period",
        "billing.penalty_per_offense",
        # Periods and bill terms the code does not set.
        "snow_and_ice.deposit_removal_after_notice",
        # How closely the camera's width is judged against A's four feet: the code sets none.
        "snow_and_ice.width_tolerance",
        "billing.other_bill_payable",
        "billing.other_tax_roll_after",
        # Whom the bill goes to after a sale during an open case (§ 370-10 F, G).
        "billing.owner_changed_during_case",
        # Whether G charges the removal of a deposit C forbids (§ 370-10 C, F, G).
        "snow_and_ice.deposit_removal_charge",
        "permits.repair_bill_payable",
        "streets.dumping_removal_after_notice",
        "terraces.mailbox_clearing_after_notice",
        "construction.abandoned_order_compliance",
        "cold_weather.frozen_subgrade_at_or_below",
        "cold_weather.frozen_subgrade_deadband",
        "cold_weather.frozen_subgrade_min_dwell",
        "sidewalk_condition.commercial_width",
        "abatement_rates.crew_hourly_rate",
        "abatement_rates.equipment_hourly_rate",
        "abatement_rates.administration_share",
        # What delivery starts a § 370-10 B period: the code does not say.
        "notice_delivery.starts_period",
        "notice_delivery.hazard_notice",
        "calendar",
    }
    gap = profile.snow_and_ice.nonhazard_notice_period
    assert gap.citation is None
    assert "[unconfirmed" in gap.describe()


def test_every_confirmed_rule_quotes_words_found_in_the_code_text() -> None:
    seeds = Path(__file__).resolve().parents[3] / "shared" / "seeds"
    chapters = [seeds / "000_1fe062a9be7eef16.txt", seeds / "001_e460a866f9f3bce4.txt"]
    if not all(seed.exists() for seed in chapters):
        pytest.skip(f"ordinance seed text not found in {seeds}")
    code = " ".join(" ".join(seed.read_text("utf-8").split()) for seed in chapters)
    quoted = 0
    for name, rule in load_profile().rules():
        if rule.words:
            quoted += 1
            assert " ".join(rule.words.split()) in code, f"{name}: words not in the code text"
    assert quoted >= 45


def _broken(old: str, new: str) -> str:
    text = CLYMAN.read_text("utf-8")
    assert old in text
    return text.replace(old, new, 1)


def test_a_missing_citation_is_refused_naming_the_field_and_line() -> None:
    text = _broken('citation = "§ 370-10 B(1) (inferred)"\n', "")
    with pytest.raises(ProfileError) as caught:
        parse_profile(text, "bad.toml")
    message = str(caught.value)
    assert "snow_and_ice.hazard_notice_period" in message
    assert "citation is required" in message
    header_line = text.splitlines().index("[snow_and_ice.hazard_notice_period]") + 1
    assert f"bad.toml:{header_line}" in message


def test_a_negative_duration_is_refused() -> None:
    header = "[snow_and_ice.clearing_deadline]\n"
    text = _broken(header + "value = 24", header + "value = -24")
    with pytest.raises(ProfileError, match=r"clearing_deadline.*negative"):
        parse_profile(text)


def test_an_unknown_unit_is_refused_with_its_line() -> None:
    text = _broken('value = 4\nunit = "feet"', 'value = 4\nunit = "furlongs"')
    with pytest.raises(ProfileError) as caught:
        parse_profile(text, "bad.toml")
    line = text.splitlines().index('unit = "furlongs"') + 1
    assert f"bad.toml:{line}: snow_and_ice.clearing_min_width.unit" in str(caught.value)


def test_a_width_rule_in_hours_is_refused() -> None:
    text = _broken('value = 4\nunit = "feet"', 'value = 4\nunit = "hours"')
    with pytest.raises(ProfileError, match="clearing_min_width"):
        parse_profile(text)


def test_config_refuses_unknown_keys_naming_them(tmp_path: Path) -> None:
    path = tmp_path / "sidewalk.toml"
    path.write_text('[mqtt]\nurl = "mqtt://127.0.0.1:1883"\nqos = 2\n')
    with pytest.raises(ConfigError, match=r"mqtt\.qos"):
        load_settings(path)


def test_secrets_only_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "sidewalk.toml"
    path.write_text('[mqtt]\nurl = "mqtt://127.0.0.1:1883"\npassword = "hunter2"\n')
    with pytest.raises(ConfigError, match="SIDEWALK_MQTT_PASSWORD"):
        load_settings(path)
    path.write_text('[cases]\ndatabase_url = "postgresql+psycopg://u:hunter2@db/cases"\n')
    with pytest.raises(ConfigError, match="SIDEWALK_DB_PASSWORD"):
        load_settings(path)
    secrets = Secrets.from_env({"SIDEWALK_MQTT_PASSWORD": "s3cret"})
    assert secrets.mqtt_password is not None
    assert "s3cret" not in repr(secrets)


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sidewalk.toml"
    path.write_text('site = "clyman"\n[mqtt]\nurl = "mqtt://10.0.0.5:1883"\n')
    monkeypatch.setenv("SIDEWALK_MQTT__URL", "mqtt://127.0.0.1:2883")
    settings = load_settings(path)
    assert (settings.mqtt.host, settings.mqtt.port) == ("127.0.0.1", 2883)


def test_defaults_are_the_embedded_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SIDEWALK_MQTT__URL",):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert settings.mqtt.url is None
    assert settings.cases.database_url.startswith("sqlite:///")
