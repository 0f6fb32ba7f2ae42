"""Smaller holes, each through the real process: 422s that never echo the input, a Host
check against DNS rebinding (the dashboard and the processes' /metrics), and the plain
words for a database password set for SQLite."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from prometheus_client import CollectorRegistry
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.core.observability import ObservabilityServer
from tests.security.test_request_limits import Server, server

__all__ = ["server"]

SECRET = "hunter2-the-real-password"


def test_a_422_names_the_fields_and_never_echoes_the_input(server: Server) -> None:
    url = f"http://127.0.0.1:{server.port}/api/session"
    login = f'{{"username": "admin", "password": "{SECRET}"}}'
    # The password sent as text/plain, as a number, and under a misspelt key.
    for content, kind in [
        (login, "text/plain"),
        (f'{{"username": "admin", "password": ["{SECRET}"]}}', "application/json"),
        (f'{{"username": "admin", "passwd": "{SECRET}", "password": "x"}}', "application/json"),
    ]:
        response = httpx.post(url, content=content, headers={"Content-Type": kind})
        assert response.status_code == 422, response.text
        assert SECRET not in response.text
        detail = response.json()["detail"]
        assert detail
        assert all(set(d) == {"loc", "msg"} for d in detail), detail
    named = httpx.post(url, json={"username": "admin", "passwd": SECRET, "password": "x"})
    assert ["body", "passwd"] in [d["loc"] for d in named.json()["detail"]]


def test_a_host_not_ours_is_refused_by_the_dashboard(server: Server) -> None:
    base = f"http://127.0.0.1:{server.port}"

    def status(path: str, host: str) -> int:
        return httpx.get(f"{base}{path}", headers={"Host": host}).status_code

    # A DNS-rebinding page: loopback connection, the attacker's name in Host.
    assert status("/metrics", "rebind.attacker.example") == 400
    assert status("/login", "rebind.attacker.example:8080") == 400
    assert status("/metrics", f"127.0.0.1:{server.port}") == 200
    assert status("/metrics", "localhost") == 200
    assert status("/login", "sidewalk.example.org") == 200  # the configured name


def test_a_host_not_ours_gets_no_process_metrics_without_the_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SIDEWALK_METRICS_TOKEN", raising=False)
    metrics = ObservabilityServer(
        CollectorRegistry(), live={}, ready={}, host="127.0.0.1", port=0, metrics_token="t" * 20
    )
    metrics.start()
    try:

        def status(host: str, token: str | None = None) -> int:
            headers = {"Host": host} | ({"Authorization": f"Bearer {token}"} if token else {})
            return httpx.get(f"{metrics.url}/metrics", headers=headers).status_code

        assert status("rebind.attacker.example:9464") == 403
        assert status(f"127.0.0.1:{metrics.port}") == 200
        assert status("localhost:9464") == 200
        assert status("[::1]:9464") == 200
        assert status("rebind.attacker.example", "t" * 20) == 200  # a scraper with the token
    finally:
        metrics.stop()


def test_a_database_password_for_sqlite_is_refused_in_plain_words(tmp_path: Path) -> None:
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        f'[cases]\ndatabase_url = "sqlite:///{tmp_path / "cases.sqlite3"}"\n', encoding="utf-8"
    )
    result = CliRunner().invoke(
        app, ["notices", "register", "--config", str(config)],
        env={"SIDEWALK_DB_PASSWORD": SECRET, "COLUMNS": "300"},
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert "the password applies only to PostgreSQL" in line
    assert "not a database URL" not in result.output
    assert SECRET not in result.output
