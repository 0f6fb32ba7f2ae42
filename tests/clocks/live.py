"""Shared by the live clock tests (tests/cold_live, tests/street_live).

Case records seeded with the first-storm village, a stream-mode runner on them
(its broker is never contacted: actions come from the records, readings through
``handle``), the configuration file that points the CLI at the same records,
and the findings the recorder stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.scenarios import load_scenario
from sidewalk.storage.cases import CaseStore
from sidewalk.system import build_analytics, open_cases, seed_scenario

EXAMPLE_PROFILE = Path(__file__).resolve().parents[1] / "data" / "example_village.toml"


@dataclass
class Seeded:
    cases: CaseStore
    profile: Profile
    config: Path  # a TOML configuration naming these records (and the profile, if not Clyman)

    def runner(self, client_id: str) -> AnalyticsRunner:
        """A stream-mode runner on these records, as ``sidewalk analytics`` builds it."""
        unused_broker = MqttSettings(host="127.0.0.1", port=1, client_id=client_id)
        return build_analytics(
            self.cases, self.profile, unused_broker, site="clyman", mode="stream",
            persist_jobs=False,
        )  # fmt: skip


def seeded(tmp_path: Path, profile_file: Path | None = None) -> Seeded:
    """Fresh case records for the first-storm village under Clyman's (or another) profile."""
    profile = load_profile(profile_file)
    url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    cases = open_cases(url, profile)
    seed_scenario(cases, load_scenario("first-storm"))
    config = tmp_path / "sidewalk.toml"
    named = "" if profile_file is None else f'profile = "{profile_file}"\n'
    config.write_text(f'{named}[cases]\ndatabase_url = "{url}"\n', encoding="utf-8")
    return Seeded(cases, profile, config)


def findings(cases: CaseStore, subject: str) -> list[dict[str, Any]]:
    """The findings stored about ``subject`` (``pour:<id>``, …), each with its audit action."""
    return [
        {"action": a.action, **a.detail}
        for a in cases.audit.list(subject)
        if a.action.startswith("finding.")
    ]


def set_frontage(cases: CaseStore, frontage_id: str, **changes: Any) -> None:
    """Change a seeded frontage's registry record (``zone``, ``may_deposit_on_street``, …)."""
    f = cases.registry.get_frontage(frontage_id)
    fields: dict[str, Any] = {
        "site": f.site, "parcel_number": f.parcel_number, "street_address": f.street_address,
        "length_ft": f.length_ft, "zone": f.zone, "owner_id": f.owner_id,
        "device_id": f.device_id, "may_deposit_on_street": f.may_deposit_on_street,
    }  # fmt: skip
    fields.update(changes)
    cases.registry.upsert_frontage(frontage_id, **fields)
