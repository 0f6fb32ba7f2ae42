"""Login throttling kept in the case database: shared by workers, kept over restarts.

Each "worker" is its own ``CaseStore`` (own engine and connections) and its
own app over the same database, as two uvicorn processes would be; a
"restart" closes everything and opens it again. SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import LoginThrottle, hash_password
from sidewalk.storage.cases import CaseStore
from tests.dashboard.conftest import PASSWORD, SECRET_KEY

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.services),
]


def _prepared(url: str) -> str:
    store = CaseStore(url)
    store.create_schema()
    for name in ("alice", "bob"):
        store.dashboard.add_user(name, password_hash(), "viewer", who="test")
    store.close()
    return url


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return _prepared(f"sqlite:///{tmp_path / 'cases.db'}")
    return _prepared(request.getfixturevalue("postgres_fresh_url"))


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """For the throttle's arithmetic, which the backend does not change."""
    return _prepared(f"sqlite:///{tmp_path / 'cases.db'}")


@cache
def password_hash() -> str:
    return hash_password(PASSWORD)  # argon2 is slow on purpose: hash once


class Worker:
    """One dashboard worker: its own store and app over the shared database."""

    def __init__(self, url: str, address: str = "10.0.0.1", max_failures: int = 3) -> None:
        self.cases = CaseStore(url)
        app = create_app(
            self.cases, None, load_profile(), secret_key=SECRET_KEY, login_max_failures=max_failures
        )
        # No `with`: the live feed (lifespan) is not needed for logins.
        self.client = TestClient(app, client=(address, 40000))

    def login(self, user: str, password: str) -> tuple[int, str | None]:
        response = self.client.post("/api/session", json={"username": user, "password": password})
        return response.status_code, response.headers.get("retry-after")

    def close(self) -> None:
        self.client.close()
        self.cases.close()


def test_two_workers_share_the_count_and_a_restart_keeps_it(database_url: str) -> None:
    one, two = Worker(database_url), Worker(database_url)
    try:
        assert one.login("alice", "wrong-1")[0] == 401
        assert two.login("alice", "wrong-2")[0] == 401
        assert one.login("alice", "wrong-3")[0] == 401
        # Third failure was spread over two workers: both now refuse, right password too.
        for worker in (one, two):
            status, retry_after = worker.login("alice", PASSWORD)
            assert status == 429
            assert retry_after is not None
            assert 0 < int(retry_after) <= 300
        # The user name is throttled, not the address: bob on the same address logs in.
        assert two.login("bob", PASSWORD)[0] == 200
    finally:
        one.close()
        two.close()
    restarted = Worker(database_url)
    elsewhere = Worker(database_url, address="10.9.9.9")
    try:
        assert restarted.login("alice", PASSWORD)[0] == 429
        assert elsewhere.login("alice", PASSWORD)[0] == 429  # another address does not help
    finally:
        restarted.close()
        elsewhere.close()


def test_an_address_gets_a_larger_allowance_across_user_names(sqlite_url: str) -> None:
    office = Worker(sqlite_url, max_failures=1)
    home = Worker(sqlite_url, address="10.0.0.2", max_failures=1)
    try:
        # 1 per user name, 4 x 1 = 4 per address: four names, one failure each.
        for i in range(4):
            assert office.login(f"guess-{i}", "wrong")[0] == 401
        assert office.login("bob", PASSWORD)[0] == 429
        assert home.login("bob", PASSWORD)[0] == 200
    finally:
        office.close()
        home.close()


def test_the_window_passes_and_success_clears_the_user_count(sqlite_url: str) -> None:
    store = CaseStore(sqlite_url)
    now = [datetime(2026, 12, 10, 18, 0, tzinfo=UTC)]
    throttle = LoginThrottle(store, max_failures=2, window=timedelta(minutes=5), now=lambda: now[0])
    try:
        throttle.failed("alice", "10.0.0.1")
        now[0] += timedelta(minutes=1)
        throttle.failed("alice", "10.0.0.1")
        # Free again when the first failure is five minutes old: four minutes from now.
        assert throttle.retry_after("alice", "10.0.0.1") == 240
        now[0] += timedelta(minutes=4, seconds=1)
        assert throttle.retry_after("alice", "10.0.0.1") == 0
        throttle.failed("alice", "10.0.0.1")
        assert throttle.retry_after("alice", "10.0.0.1") > 0
        throttle.succeeded("alice")
        assert throttle.retry_after("alice", "10.0.0.1") == 0
    finally:
        store.close()
