"""``sidewalk dashboard add-user`` and the dashboard's secret, through the root application."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.cli.dashboard import SECRET_ENV, secret_from_env
from sidewalk.dashboard.auth import verify_password
from sidewalk.storage.cases import CaseStore


def test_add_user_stores_a_hash_and_refuses_a_second(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    config = tmp_path / "sidewalk.toml"
    config.write_text(f'[cases]\ndatabase_url = "{url}"\n', encoding="utf-8")

    def add(name: str, role: str, password: str) -> tuple[int, str]:
        result = CliRunner().invoke(
            app,
            ["dashboard", "add-user", name, "--role", role, "--config", str(config)],
            input=f"{password}\n{password}\n",
        )
        return result.exit_code, result.output

    assert add("clerk1", "clerk", "a long password") == (
        0,
        "password: \nRepeat for confirmation: \naccount clerk1 (clerk) created\n",
    )
    cases = CaseStore(url)
    try:
        user = cases.dashboard.get_user("clerk1")
        assert user is not None
        assert user.role == "clerk"
        assert "a long password" not in user.password_hash
        assert verify_password(user.password_hash, "a long password")
        assert not verify_password(user.password_hash, "a wrong password")
        assert cases.audit.list()[-1].action == "user.created"
    finally:
        cases.close()
    status, out = add("clerk1", "viewer", "another password")
    # Refused before the password is asked for (nothing typed is thrown away).
    assert (status, out) == (
        2, "there is already an account called 'clerk1': choose another login name\n"
    )
    status, out = add("shorty", "viewer", "short")
    assert status == 1
    assert "8 characters" in out.splitlines()[-1]


def test_no_secret_no_dashboard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "too short")
    with pytest.raises(typer.Exit) as refused:
        secret_from_env()
    assert refused.value.exit_code == 2
    monkeypatch.setenv(SECRET_ENV, "x" * 32)
    assert secret_from_env() == "x" * 32
