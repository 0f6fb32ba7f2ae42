"""Login throttling: slows an attacker, never locks the Village out.

Growing delays per (account, client address), per address and per account
(bounded); the right password from an address with no failures always gets
in. The failures live in the case database: each "worker" is its own
``CaseStore`` and app over the same database, as two uvicorn processes would
be; a "restart" closes everything and opens it again. SQLite and PostgreSQL.
Behind a reverse proxy the real client address counts only when the proxy is
trusted. Cookie flags and HSTS over real TLS (uvicorn with a throwaway CA).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import httpx
import pytest
import uvicorn
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import LoginThrottle
from sidewalk.storage.cases import CaseStore
from tests.dashboard.conftest import PASSWORD, SECRET_KEY
from tests.harness.mosquitto import free_port
from tests.security.certs import TestCA

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.services),
]


def _prepared(url: str) -> str:
    store = CaseStore(url)
    store.create_schema()
    for name in ("alice", "bob", "admin"):
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
    # argon2 is slow on purpose; verifying reads the cost from the hash itself,
    # so cheap parameters here keep a 50-guess attack quick (the logic is the same).
    cheap = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    return cheap.hash(PASSWORD)


class Clock:
    """The throttle's clock, moved by the test instead of waited for."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 10, 18, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class Worker:
    """One dashboard worker: its own store and app over the shared database."""

    def __init__(
        self,
        url: str,
        address: str = "10.0.0.1",
        max_failures: int = 3,
        *,
        clock: Clock | None = None,
        trusted_proxies: tuple[str, ...] = (),
    ) -> None:
        self.cases = CaseStore(url)
        self.app = create_app(
            self.cases, None, load_profile(), secret_key=SECRET_KEY,
            login_max_failures=max_failures, trusted_proxies=trusted_proxies,
        )  # fmt: skip
        if clock is not None:
            self.app.state.throttle = LoginThrottle(self.cases, max_failures, now=clock)
        self.throttle: LoginThrottle = self.app.state.throttle
        # No `with`: the live feed (lifespan) is not needed for logins.
        self.client = TestClient(self.app, client=(address, 40000))

    def login(
        self, user: str, password: str, headers: dict[str, str] | None = None
    ) -> tuple[int, str | None]:
        response = self.client.post(
            "/api/session", json={"username": user, "password": password}, headers=headers
        )
        return response.status_code, response.headers.get("retry-after")

    def close(self) -> None:
        self.client.close()
        self.cases.close()


def test_two_workers_share_the_count_and_a_restart_keeps_it(database_url: str) -> None:
    clock = Clock()  # stands still: the short first delay must not pass while argon2 works
    one, two = Worker(database_url, clock=clock), Worker(database_url, clock=clock)
    try:
        assert one.login("alice", "wrong-1")[0] == 401
        assert two.login("alice", "wrong-2")[0] == 401
        assert one.login("alice", "wrong-3")[0] == 401
        # Third failure was spread over two workers: both now make this address wait.
        for worker in (one, two):
            status, retry_after = worker.login("alice", PASSWORD)
            assert status == 429
            assert retry_after is not None
            assert 0 < int(retry_after) <= 2  # the first delay is short; it grows
        # Only alice from this address waits: bob on the same address logs in.
        assert two.login("bob", PASSWORD)[0] == 200
    finally:
        one.close()
        two.close()
    restarted = Worker(database_url, clock=clock)
    elsewhere = Worker(database_url, address="10.9.9.9", clock=clock)
    try:
        assert restarted.login("alice", PASSWORD)[0] == 429  # the count survived
        # alice herself, from an address with no failures: never locked out.
        assert elsewhere.login("alice", PASSWORD)[0] == 200
    finally:
        restarted.close()
        elsewhere.close()


def test_fifty_failures_from_one_address_are_slowed_and_the_admin_still_logs_in(
    sqlite_url: str,
) -> None:
    clock = Clock()
    attacker = Worker(sqlite_url, "198.51.100.7", max_failures=5, clock=clock)
    office = Worker(sqlite_url, "10.0.0.20", max_failures=5, clock=clock)
    try:
        waits: list[int] = []
        failures = 0
        started = clock.now
        while failures < 50:
            status, retry_after = attacker.login("admin", f"guess-{failures}")
            if status == 429:
                assert retry_after is not None
                waits.append(int(retry_after))
                clock.advance(int(retry_after))
                continue
            assert status == 401
            failures += 1
        spent = clock.now - started
        # Doubling from 1 s after 5 free guesses, held at 15 minutes a guess.
        assert waits[:4] == [1, 2, 4, 8]
        assert waits == sorted(waits)
        assert max(waits) == 900
        assert spent > timedelta(hours=8), spent
        # Meanwhile the real admin, from the office, gets in at once.
        assert office.login("admin", PASSWORD)[0] == 200
        # The attacker's address waits even with the right password.
        assert attacker.login("admin", PASSWORD)[0] == 429
    finally:
        attacker.close()
        office.close()


def test_an_account_attacked_from_many_addresses_is_slowed_within_a_bound(
    sqlite_url: str,
) -> None:
    clock = Clock()
    admin = Worker(sqlite_url, "10.0.0.30", max_failures=5, clock=clock)
    addresses = [f"203.0.113.{i}" for i in range(1, 26)]
    # One app, a client per attacking address (what many uvicorn connections are).
    clients = {a: TestClient(admin.app, client=(a, 40000)) for a in addresses}

    def guess(address: str, password: str) -> tuple[int, str | None]:
        r = clients[address].post("/api/session", json={"username": "admin", "password": password})
        return r.status_code, r.headers.get("retry-after")

    try:
        held = []
        for address in addresses:  # two guesses each: 50 failures, under each pair's allowance
            for n in range(2):
                status, retry_after = guess(address, f"guess-{n}")
                while status == 429:  # the account's own delay, once past its allowance
                    assert retry_after is not None
                    held.append(int(retry_after))
                    clock.advance(int(retry_after))
                    status, retry_after = guess(address, f"guess-{n}")
                assert status == 401
        assert held
        assert max(held) <= 30  # bounded
        # The account's own count is over its allowance: an attacking address waits,
        # but never longer than the account delay's bound (30 s).
        waits = [admin.throttle.retry_after("admin", a) for a in addresses]
        assert all(0 < wait <= 30 for wait in waits), waits
        # The real admin from an address without failures: in at once.
        assert admin.login("admin", PASSWORD)[0] == 200
        # Nor is anyone else from a clean address held by the attack.
        assert admin.login("bob", PASSWORD)[0] == 200
    finally:
        for client in clients.values():
            client.close()
        admin.close()


def test_a_trusted_proxys_forwarded_address_counts_and_an_untrusted_one_is_ignored(
    sqlite_url: str,
) -> None:
    proxy = "10.0.0.100"
    behind = Worker(sqlite_url, proxy, max_failures=3, trusted_proxies=(proxy,))
    stranger = Worker(sqlite_url, "10.0.0.7", max_failures=3, trusted_proxies=(proxy,))
    try:
        attacker = {"X-Forwarded-For": "198.51.100.66"}
        for i in range(10):
            assert behind.login("alice", f"wrong-{i}", attacker)[0] in {401, 429}
        assert behind.login("alice", PASSWORD, attacker)[0] == 429
        # Another user behind the same proxy: their own address, not the proxy's.
        colleague = {"X-Forwarded-For": "192.0.2.10"}
        assert behind.login("alice", PASSWORD, colleague)[0] == 200
        since = datetime.now(UTC) - timedelta(hours=1)
        records = behind.throttle.records
        assert records.login_failures_since("ip", "198.51.100.66", since)
        assert not records.login_failures_since("ip", proxy, since)
        # An untrusted client's X-Forwarded-For is ignored: its own address counts.
        for i in range(3):
            forged = {"X-Forwarded-For": f"192.0.2.{100 + i}"}
            assert stranger.login("bob", f"wrong-{i}", forged)[0] == 401
        assert len(records.login_failures_since("ip", "10.0.0.7", since)) == 3
        assert not records.login_failures_since("ip", "192.0.2.100", since)
        assert stranger.login("bob", PASSWORD, {"X-Forwarded-For": "192.0.2.200"})[0] == 429
        # The trusted proxy says the browser speaks HTTPS: Secure cookie and HSTS.
        response = behind.client.post(
            "/api/session",
            json={"username": "bob", "password": PASSWORD},
            headers={"X-Forwarded-For": "192.0.2.11", "X-Forwarded-Proto": "https"},
        )
        assert response.status_code == 200
        assert "secure" in response.headers["set-cookie"].lower()
        assert response.headers["strict-transport-security"] == "max-age=31536000"
        # The stranger cannot claim HTTPS.
        plain = stranger.client.get("/login", headers={"X-Forwarded-Proto": "https"})
        assert "strict-transport-security" not in plain.headers
    finally:
        behind.close()
        stranger.close()


def test_the_throttles_arithmetic(sqlite_url: str) -> None:
    store = CaseStore(sqlite_url)
    clock = Clock()
    throttle = LoginThrottle(store, max_failures=2, now=clock)
    try:
        throttle.failed("alice", "10.0.0.1")
        assert throttle.retry_after("alice", "10.0.0.1") == 0
        throttle.failed("alice", "10.0.0.1")
        assert throttle.retry_after("alice", "10.0.0.1") == 1
        clock.advance(1)
        assert throttle.retry_after("alice", "10.0.0.1") == 0
        throttle.failed("alice", "10.0.0.1")
        assert throttle.retry_after("alice", "10.0.0.1") == 2
        assert throttle.retry_after("alice", "10.0.0.2") == 0  # a clean address
        throttle.succeeded("alice", "10.0.0.1")
        assert throttle.retry_after("alice", "10.0.0.1") == 0
        # Failures older than the window (24 h) no longer count.
        for _ in range(6):
            throttle.failed("bob", "10.0.0.3")
        assert throttle.retry_after("bob", "10.0.0.3") > 0
        clock.advance(24 * 3600 + 1)
        assert throttle.retry_after("bob", "10.0.0.3") == 0
        assert throttle.delay_after("pair", 50) == timedelta(minutes=15)
        assert throttle.delay_after("user", 500) == timedelta(seconds=30)
    finally:
        store.close()


@pytest.fixture
def tls_dashboard(sqlite_url: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The dashboard on real uvicorn over TLS (a throwaway CA's certificate for 127.0.0.1)."""
    ca = TestCA(tmp_path)
    server_cert = ca.issue("dashboard", server=True)
    cases = CaseStore(sqlite_url)
    app: FastAPI = create_app(cases, None, load_profile(), secret_key=SECRET_KEY)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", proxy_headers=False,
            ssl_certfile=str(server_cert.cert), ssl_keyfile=str(server_cert.key),
        )
    )  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"https://127.0.0.1:{port}", ca.files.cert
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        cases.close()


def test_over_tls_the_cookie_is_secure_httponly_samesite_and_hsts_is_sent(
    tls_dashboard: tuple[str, Path], sqlite_url: str
) -> None:
    url, ca = tls_dashboard
    with httpx.Client(base_url=url, verify=str(ca), timeout=10) as client:
        response = client.post("/api/session", json={"username": "alice", "password": PASSWORD})
        assert response.status_code == 200
        cookie = response.headers["set-cookie"].lower()
        assert "; secure" in cookie
        assert "; httponly" in cookie
        assert "samesite=strict" in cookie
        assert response.headers["strict-transport-security"] == "max-age=31536000"
        assert client.get("/api/session").status_code == 200  # the cookie works over TLS
    # Plain HTTP (the tests' own client): no Secure flag (the browser would drop
    # the cookie), and no HSTS, which browsers ignore over HTTP anyway.
    worker = Worker(sqlite_url, "10.0.0.5")
    try:
        plain = worker.client.post("/api/session", json={"username": "bob", "password": PASSWORD})
        assert plain.status_code == 200
        assert "secure" not in plain.headers["set-cookie"].lower()
        assert "httponly" in plain.headers["set-cookie"].lower()
        assert "strict-transport-security" not in plain.headers
    finally:
        worker.close()
