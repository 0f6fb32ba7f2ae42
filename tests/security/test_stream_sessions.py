"""An open live event stream ends with its session: logout, the account disabled, its
password reset. Through a real uvicorn server: the ended session's stream says
``ended`` and closes within seconds, and is sent no audit row after the session ended,
while an admin's stream, still live, is sent them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.storage.cases import CaseStore
from tests.dashboard.conftest import PASSWORD, SECRET_KEY, cheap_password_hash, free_port

ACCOUNTS = {"admin": "admin", "watcher": "viewer", "other": "viewer"}


@dataclass
class Stream:
    """One client's open ``/api/events``, read on a thread into ``events``."""

    client: httpx.Client
    events: list[str] = field(default_factory=list)
    closed: threading.Event = field(default_factory=threading.Event)
    hello: threading.Event = field(default_factory=threading.Event)

    def read(self) -> None:
        try:
            with self.client.stream("GET", "/api/events", timeout=30) as response:
                assert response.status_code == 200
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        self.events.append(line.removeprefix("event: "))
                        if line == "event: hello":
                            self.hello.set()
        except httpx.HTTPError:
            pass
        finally:
            self.closed.set()


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db: Path = tmp_path_factory.mktemp("streams") / "cases.sqlite3"
    cases = CaseStore(f"sqlite:///{db}")
    cases.create_schema()
    for name, role in ACCOUNTS.items():
        # Ignored: the roles are plain strs in the table; the store takes ``DashboardRole``.
        cases.dashboard.add_user(name, cheap_password_hash(), role, who="test")  # type: ignore[arg-type]
    app = create_app(cases, None, load_profile(), secret_key=SECRET_KEY, poll_s=0.1)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                       timeout_graceful_shutdown=1)
    )  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        cases.close()


def login(url: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=10)
    response = client.post("/api/session", json={"username": name, "password": PASSWORD})
    response.raise_for_status()
    client.headers["X-CSRF-Token"] = response.json()["csrf_token"]
    client.headers["Origin"] = url
    return client


def open_stream(client: httpx.Client) -> Stream:
    stream = Stream(client)
    threading.Thread(target=stream.read, daemon=True).start()
    assert stream.hello.wait(5), "no hello on the stream"
    return stream


def restore(admin: httpx.Client) -> None:
    """The watcher enabled again with the fixtures' password, for the next case."""
    admin.patch("/api/users/watcher", json={"disabled": False}).raise_for_status()


def _disable(admin: httpx.Client, _: httpx.Client) -> None:
    admin.patch("/api/users/watcher", json={"disabled": True}).raise_for_status()


def _logout(_: httpx.Client, watcher: httpx.Client) -> None:
    watcher.delete("/api/session").raise_for_status()


def _reset(admin: httpx.Client, _: httpx.Client) -> None:
    admin.post("/api/users/watcher/password", json={"password": PASSWORD}).raise_for_status()


@pytest.mark.parametrize("end", [_disable, _logout, _reset], ids=["disabled", "logout", "reset"])
def test_the_stream_closes_when_its_session_ends(
    url: str, end: Callable[[httpx.Client, httpx.Client], None]
) -> None:
    admin = login(url, "admin")
    watcher = login(url, "watcher")
    try:
        mine, admins = open_stream(watcher), open_stream(admin)
        time.sleep(0.3)  # the logins' own audit rows, found by the feed's next poll
        settled, seen = len(mine.events), admins.events.count("audit")
        ended_at = time.monotonic()
        end(admin, watcher)
        # Audit rows after the session ended: the admin's stream is sent them, not the watcher's.
        admin.patch("/api/users/other", json={"role": "inspector"}).raise_for_status()
        admin.patch("/api/users/other", json={"role": "viewer"}).raise_for_status()
        assert mine.closed.wait(5), "the stream outlived its session"
        took = time.monotonic() - ended_at
        print(f"{end.__name__}: stream closed {took:.2f} s after the session ended")
        deadline = time.monotonic() + 5
        while admins.events.count("audit") < seen + 2:
            assert time.monotonic() < deadline, f"the admin's stream got no rows: {admins.events}"
            time.sleep(0.05)
        assert mine.events[settled:] == ["ended"]
        assert took < 4
    finally:
        restore(admin)
        admin.delete("/api/session")  # its stream ends too, before the server stops
        admin.close()
        watcher.close()
