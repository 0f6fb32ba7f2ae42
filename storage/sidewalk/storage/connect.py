"""Opening the configured case records: the one place that joins the URL and its password.

Here rather than in the wiring so that every command (the dashboard's, the
notices', the inspections') opens the database the same way without
importing ``sidewalk.system``, which no component may import.
"""

from __future__ import annotations

from sidewalk.core.config import Secrets
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore


def open_cases(database_url: str, profile: Profile) -> CaseStore:
    """The case records, migrated to the current schema."""
    secret = Secrets.from_env().db_password  # never in the URL or the config file
    cases = CaseStore(
        database_url,
        password=secret.get_secret_value() if secret else None,
        zone=profile.village.timezone,
    )
    cases.create_schema()
    return cases
