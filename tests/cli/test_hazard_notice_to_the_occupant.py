"""§ 370-10 B(1), end to end: the 2-hour hazard notice is handed over or posted at the
property, so it is addressed to the occupant there, at the premises' full address; the
owner of record is named on it as the owner, with the owner's full mailing address.

The street comes in as a village's does (``sidewalk registry import`` of the county's
parcel file), the occupant is recorded with ``sidewalk registry occupant add``, the
clearing notice's service and the hazard's confirmation with ``sidewalk act``; the
analytics runner issues the notice and the clerk prints it from the dashboard."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import role_of
from sidewalk.scenarios import bundled_parcels, expand, load_scenario, to_readings
from sidewalk.storage.cases import CaseStore
from sidewalk.system import build_analytics, commission_scenario, open_cases, seed_scenario
from tests.alerts.conftest import flat, pdf_text
from tests.dashboard.conftest import PASSWORD, SECRET_KEY, cheap_password_hash

ZIP_LINE = re.compile(r"\b[A-Z][A-Za-z]+,? WI \d{5}(-\d{4})?$")


def clerks_letter(cases: CaseStore, profile: Profile, number: str) -> str:
    """The notice's letter as the clerk prints it from the dashboard, its text flattened."""
    cases.dashboard.add_user("clerk", cheap_password_hash(), role_of("clerk"), who="test")
    dashboard = TestClient(create_app(cases, None, profile, secret_key=SECRET_KEY))
    dashboard.headers["Origin"] = "http://testserver"
    login = dashboard.post("/api/session", json={"username": "clerk", "password": PASSWORD})
    assert login.status_code == 200, login.text
    letter = dashboard.get(f"/api/notices/{number}/letter.pdf")
    assert letter.status_code == 200, letter.text
    return flat(pdf_text(letter.content))


@pytest.mark.parametrize("street", ["county import", "entered by hand"])
def test_the_hazard_notice_goes_to_the_occupant_at_the_premises_naming_the_owner(
    tmp_path: Path, street: str
) -> None:
    """The street from the county's file, or the scenario's street entered by hand (no
    parcel until the occupant is recorded: its ZIP from the owner's mailing address there)."""
    profile = load_profile()
    url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    cases = open_cases(url, profile)
    config = tmp_path / "sidewalk.toml"
    config.write_text(f'[cases]\ndatabase_url = "{url}"\n', encoding="utf-8")

    def sidewalk(*args: str) -> str:
        result = CliRunner().invoke(app, [*args, "--config", str(config)], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        return result.output

    story = load_scenario("first-storm")
    if street == "county import":
        parcels = bundled_parcels("first-storm")
        assert parcels is not None
        sidewalk("registry", "import", str(parcels), "--site", "clyman", "--effective",
                 "2025-11-01", "--who", "Pat Clerk")  # fmt: skip
        story = commission_scenario(cases, story, parcels, profile=profile)
    else:
        seed_scenario(cases, story, profile=profile)
    [premises] = [
        f for f in cases.registry.list_frontages() if f.street_address.upper() == "105 MAIN ST"
    ]
    sidewalk("registry", "occupant", "add", "105 Main St", "Dale Tenant", "--by", "Pat Clerk",
             "--since", "2026-10-01")  # fmt: skip
    premises = cases.registry.get_frontage(premises.id)
    assert premises.parcel_id is not None
    [person] = cases.registry.occupants(premises.parcel_id)
    assert person.effective_from.astimezone(profile.zone).isoformat() == "2026-10-01T00:00:00-05:00"
    offline = MqttSettings(host="127.0.0.1", port=1, client_id="hazard-occupant-test")
    runner = build_analytics(
        cases, profile, offline, site="clyman", mode="stream", persist_jobs=False
    )
    for reading in to_readings(story, expand(story)):
        runner.handle(reading)
    [clearing] = cases.notices.list(kind="clearing_violation", frontage_id=premises.id)
    sidewalk("act", "record_delivery", clearing.number, "--who", "Pat Clerk",
             "--at", "2026-12-11T09:30")  # fmt: skip
    runner.tick()
    sidewalk("act", "confirm_hazard", clearing.number, "--who", "Officer Lee",
             "--at", "2026-12-11T10:00")  # fmt: skip
    runner.tick()
    [hazard] = cases.notices.list(kind="hazard_notice", frontage_id=premises.id)
    owner = cases.registry.owner_of_record(premises.id, hazard.issued_at)

    text = clerks_letter(cases, profile, hazard.number)
    cases.close()
    # The window address: the occupant by name, at the premises, town, state and ZIP.
    assert hazard.owner_address_lines[0] == premises.street_address
    assert ZIP_LINE.search(hazard.owner_address_lines[-1]), hazard.owner_address_lines
    window = text.split("Dear", 1)[0]
    assert f"Dale Tenant {' '.join(hazard.owner_address_lines)}" in window
    assert "Dear Dale Tenant:" in text
    # The owner of record is named as the owner, at the county's mailing address, ZIP too.
    assert owner.name.upper() == "CLARA CHRISTOPH"
    assert ZIP_LINE.search(owner.address_lines[-1]), owner.address_lines
    mailing = ", ".join(owner.address_lines)
    assert f"Owner of record: {owner.name}; mailing address: {mailing}." in text
    assert owner.name not in window  # the window is the occupant's alone
