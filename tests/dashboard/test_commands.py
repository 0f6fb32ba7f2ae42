"""What the CLI mounts: creating accounts, and refusing to serve without a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidewalk.core.config import CasesConfig, Settings
from sidewalk.dashboard.auth import verify_password
from sidewalk.dashboard.commands import SECRET_ENV, add_user_command, secret_from_env
from sidewalk.storage.cases import CaseStore, CaseStoreError, DashboardRecords


def test_add_user_stores_a_hash_and_refuses_a_second(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    settings = Settings(cases=CasesConfig(database_url=url))
    add_user_command(settings, "clerk1", "a long password", "clerk")
    cases = CaseStore(url)
    try:
        user = DashboardRecords(cases).get_user("clerk1")
        assert user is not None
        assert user.role == "clerk"
        assert "a long password" not in user.password_hash
        assert verify_password(user.password_hash, "a long password")
        assert not verify_password(user.password_hash, "a wrong password")
        assert cases.list_audit()[-1].action == "user.created"
    finally:
        cases.close()
    with pytest.raises(CaseStoreError, match="exists"):
        add_user_command(settings, "clerk1", "another password", "viewer")
    with pytest.raises(ValueError, match="unknown role"):
        add_user_command(settings, "boss", "a long password", "mayor")
    with pytest.raises(ValueError, match="8 characters"):
        add_user_command(settings, "shorty", "short", "viewer")


def test_no_secret_no_dashboard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "too short")
    with pytest.raises(SystemExit, match=SECRET_ENV):
        secret_from_env()
    monkeypatch.setenv(SECRET_ENV, "x" * 32)
    assert secret_from_env() == "x" * 32
