"""Opening the configured case records: the one place that joins the URL and its password.

Here rather than in the wiring so that every command (the dashboard's, the
notices', the inspections') opens the database the same way without
importing ``sidewalk.system``, which no component may import.
"""

from __future__ import annotations

from sidewalk.core.config import Secrets
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore


class PasswordNotApplicable(ValueError):
    """``SIDEWALK_DB_PASSWORD`` set for a database that takes no password (SQLite)."""


def open_cases(database_url: str, profile: Profile) -> CaseStore:
    """The case records, migrated to the current schema."""
    secret = Secrets.from_env().db_password  # never in the URL or the config file
    backend = database_url.partition(":")[0].partition("+")[0].lower()
    if secret and backend != "postgresql":
        # SQLAlchemy would call the URL with a password in it "invalid": say what is wrong.
        raise PasswordNotApplicable(
            f"SIDEWALK_DB_PASSWORD is set, but the case database is {backend or 'not named'}"
            f" ({database_url}): the password applies only to PostgreSQL; unset"
            " SIDEWALK_DB_PASSWORD, or point cases.database_url at the PostgreSQL server"
        )
    cases = CaseStore(
        database_url,
        password=secret.get_secret_value() if secret else None,
        zone=profile.village.timezone,
    )
    cases.create_schema()
    return cases
