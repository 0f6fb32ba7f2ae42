"""Every route of the dashboard, found by walking ``app.routes``: login, roles, CSRF, sessions.

Nothing here lists the routes by hand: a route added later is walked too, and
a path or query parameter the walk cannot fill fails the test until it is
taught one. Only the few deliberately public routes are named.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from itsdangerous import URLSafeSerializer
from starlette.routing import Mount, Route

from sidewalk.dashboard.app import STATIC
from sidewalk.dashboard.auth import (
    PERMISSIONS,
    ROLES,
    Permission,
    Require,
    Sessions,
    add_user,
    current_user,
)
from tests.dashboard.conftest import PASSWORD, SECRET_KEY, Dashboard

# Reachable without a session on purpose; they still must not show owner data.
PUBLIC = {
    ("POST", "/api/session"),  # the login itself
    ("GET", "/login"),
    ("GET", "/openapi.json"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
}
SAFE = {"GET", "HEAD", "OPTIONS"}
# A body no route accepts (every body model forbids extra keys): an allowed
# request is refused 422 after the auth checks, so the walk changes nothing.
PROBE = {"__probe__": True}


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    dependant: Dependant | None
    login: bool  # depends on current_user
    permission: Permission | None  # from Require, if any

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


def _guards(dependant: Dependant) -> Iterator[object]:
    for sub in dependant.dependencies:
        yield sub.call
        yield from _guards(sub)


def endpoints(app: FastAPI) -> list[Endpoint]:
    """Every (method, path) the app serves, with what its dependencies demand."""
    out = []
    # iter_route_contexts flattens included routers (their paths with the prefix).
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, Mount):
            continue  # static files: walked by test_static_files_hold_no_data
        assert isinstance(route, APIRoute | Route), f"unknown route type {route!r}"
        assert context.path is not None
        dependant = context.dependant if isinstance(route, APIRoute) else None
        calls = list(_guards(dependant)) if dependant is not None else []
        permissions = [c.permission for c in calls if isinstance(c, Require)]
        assert len(permissions) <= 1, context.path
        login = bool(permissions) or current_user in calls
        for method in sorted((context.methods or set()) - {"HEAD"}):
            out.append(
                Endpoint(
                    method, context.path, dependant, login, permissions[0] if permissions else None
                )
            )
    return out


def fill(endpoint: Endpoint, d: Dashboard, *, real: bool) -> tuple[str, dict[str, str]]:
    """The path with its parameters filled and the required query parameters.

    ``real``: ids that exist (for reads); otherwise ids that do not, so a
    state-changing request that gets past the guards still changes nothing.
    """
    cases = d.storm.cases
    number = cases.notices.list()[0].number
    values = {
        "number": number if real else "1999-9999",
        "clock_id": str(cases.clocks.list()[0].id) if real else "999999",
        "abatement_id": "999999",
        "bill_id": "999999",
        "entry": "999999",  # a correction of an entry that does not exist
        "payment": "999999",  # a correction of a payment that does not exist
        "device": "pole-main-01",
        "sha256": d.frame_sha256,
        "frontage": "main-st-105" if real else "no-such-frontage",
        "username": "no-such-user",  # an admin's account changes: never a real account here
        "key": "main-st-105" if real else "no-such-property",
    }
    names = re.findall(r"{(\w+)(?::\w+)?}", endpoint.path)
    missing = [n for n in names if n not in values]
    assert not missing, f"{endpoint}: teach the walk a value for {missing}"
    path = endpoint.path
    for name in names:
        path = re.sub(r"{" + name + r"(?::\w+)?}", values[name], path)
    query: dict[str, str] = {}
    if endpoint.dependant is not None:
        for param in endpoint.dependant.query_params:
            if param.field_info.is_required():
                assert param.name in {"n", "q"}, f"{endpoint}: teach the walk query {param.name}"
                query[param.name] = number
    return path, query


def owner_secrets(d: Dashboard) -> list[str]:
    """Owner names and mailing-address lines that are not a public street address."""
    public = {f.street_address for f in d.storm.cases.registry.list_frontages()}
    out = []
    for owner in d.storm.cases.registry.list_owners():
        out.append(owner.name)
        out += [line for line in owner.address_lines if line not in public]
    assert len(out) >= 6
    return out


def send(
    client: httpx.Client,
    method: str,
    path: str,
    query: dict[str, str],
    headers: dict[str, str] | None = None,
) -> tuple[int, str, httpx.Headers]:
    """One request; an event stream is closed after its headers (it never ends)."""
    body = None if method in SAFE else PROBE
    with client.stream(method, path, params=query, json=body, headers=headers) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response.status_code, "", response.headers
        response.read()
        return response.status_code, response.text, response.headers


@pytest.fixture(scope="module")
def dashboard(shared_dashboard: Dashboard) -> Dashboard:
    """The walk changes no records (sessions and accounts of its own aside): the shared storm."""
    return shared_dashboard


def test_the_walk_finds_the_api(dashboard: Dashboard) -> None:
    found = {str(e) for e in endpoints(dashboard.app)}
    assert {"GET /api/overview", "POST /api/notices/{number}/actions", "GET /"} <= found
    assert len(found) >= 25


def test_no_session_no_data_on_any_route(dashboard: Dashboard) -> None:
    hidden = owner_secrets(dashboard)
    with httpx.Client(base_url=dashboard.url, timeout=10) as anonymous:
        for endpoint in endpoints(dashboard.app):
            path, query = fill(endpoint, dashboard, real=True)
            status, text, headers = send(anonymous, endpoint.method, path, query)
            assert not [s for s in hidden if s in text], (str(endpoint), text[:300])
            if (endpoint.method, endpoint.path) in PUBLIC:
                continue
            redirected = status in (302, 303, 307) and headers["location"] == "/login"
            assert status == 401 or redirected, (str(endpoint), status, text[:200])


def test_static_files_hold_no_data(dashboard: Dashboard) -> None:
    hidden = owner_secrets(dashboard)
    files = [p for p in STATIC.rglob("*") if p.is_file()]
    assert files
    with httpx.Client(base_url=dashboard.url, timeout=10) as anonymous:
        for file in files:
            response = anonymous.get(f"/static/{file.relative_to(STATIC).as_posix()}")
            assert response.status_code == 200, file
            assert not [s for s in hidden if s in response.text], file


@pytest.mark.parametrize("role", ROLES)
def test_role_matrix_on_every_route(dashboard: Dashboard, role: str) -> None:
    hidden = owner_secrets(dashboard)
    sees_owners = role in PERMISSIONS["owner_details"]
    reader = dashboard.login(role)
    checked = 0
    for endpoint in endpoints(dashboard.app):
        if not endpoint.login:
            continue
        allowed = endpoint.permission is None or role in PERMISSIONS[endpoint.permission]
        safe = endpoint.method in SAFE
        path, query = fill(endpoint, dashboard, real=safe)
        status, text, _ = send(reader, endpoint.method, path, query)
        if reader.get("/api/session").status_code != 200:  # that was DELETE /api/session
            reader = dashboard.login(role)
        checked += 1
        if not allowed:
            assert status == 403, (role, str(endpoint), status, text[:200])
            continue
        if safe:
            assert status == 200, (role, str(endpoint), status, text[:200])
        else:  # past the guards, stopped by the probe body or the missing record
            assert status in (200, 404, 422), (role, str(endpoint), status, text[:200])
        if not sees_owners:
            assert not [s for s in hidden if s in text], (role, str(endpoint))
    assert checked >= 25


def _admin(dashboard: Dashboard) -> tuple[httpx.Client, str]:
    client = dashboard.login("admin")
    token = client.headers.pop("X-CSRF-Token")
    del client.headers["Origin"]
    return client, token


def test_every_write_needs_the_csrf_token_and_our_origin(dashboard: Dashboard) -> None:
    writes = [e for e in endpoints(dashboard.app) if e.login and e.method not in SAFE]
    assert {"POST /api/users", "DELETE /api/session"} <= {str(e) for e in writes}
    url = dashboard.url
    refused: dict[str, Callable[[str], dict[str, str]]] = {
        "no token": lambda t: {"Origin": url},
        "wrong token": lambda t: {"X-CSRF-Token": t[::-1], "Origin": url},
        "no origin or referer": lambda t: {"X-CSRF-Token": t},
        "foreign origin": lambda t: {"X-CSRF-Token": t, "Origin": "https://evil.example"},
        "opaque origin": lambda t: {"X-CSRF-Token": t, "Origin": "null"},
        "foreign referer": lambda t: {"X-CSRF-Token": t, "Referer": "https://evil.example/x"},
        "other port": lambda t: {"X-CSRF-Token": t, "Origin": "http://127.0.0.1:1"},
    }
    audit_before = len(dashboard.storm.cases.audit.list())
    client, token = _admin(dashboard)
    for endpoint in writes:
        path, query = fill(endpoint, dashboard, real=False)
        for why, make in refused.items():
            status, text, _ = send(client, endpoint.method, path, query, make(token))
            assert status == 403, (str(endpoint), why, status, text[:200])
            assert "CSRF" in text, (str(endpoint), why)
        # The session still works: the refusals were for the requests, not the login.
        assert client.get("/api/session").status_code == 200
        # What a browser sends when it omits Origin: the page as Referer. Accepted.
        headers = {"X-CSRF-Token": token, "Referer": f"{url}/"}
        status, text, _ = send(client, endpoint.method, path, query, headers)
        assert status in (200, 404, 422), (str(endpoint), status, text[:200])
        if client.get("/api/session").status_code != 200:  # that was DELETE /api/session
            client, token = _admin(dashboard)
    # Refused requests wrote nothing but the logins' own audit rows.
    after = dashboard.storm.cases.audit.list()[audit_before:]
    assert {a.action for a in after} <= {"session.login", "session.logout"}


def test_a_session_cookie_is_httponly_strict_and_new_at_every_login(dashboard: Dashboard) -> None:
    with httpx.Client(base_url=dashboard.url) as client:
        first = client.post("/api/session", json={"username": "viewer", "password": PASSWORD})
        cookie = first.headers["set-cookie"].lower()
        for attribute in ("httponly", "samesite=strict", "path=/"):
            assert attribute in cookie
        planted = client.cookies["sw_session"]
        # Session fixation: the victim logs in on a browser carrying someone's cookie.
        second = client.post("/api/session", json={"username": "admin", "password": PASSWORD})
        assert second.status_code == 200
        assert client.cookies["sw_session"] != planted
    with httpx.Client(base_url=dashboard.url, cookies={"sw_session": planted}) as attacker:
        assert attacker.get("/api/session").json()["role"] == "viewer"
        assert attacker.get("/api/users").status_code == 403


def _flip(text: str, index: int) -> str:
    return text[:index] + ("A" if text[index] != "A" else "B") + text[index + 1 :]


def test_tampered_and_foreign_cookies_are_refused(dashboard: Dashboard) -> None:
    cookie = dashboard.login("admin").cookies["sw_session"]
    ours = URLSafeSerializer(SECRET_KEY, salt="sidewalk-dashboard-session")
    foreign = URLSafeSerializer("another-secret-key-0123456789", salt="sidewalk-dashboard-session")
    token = ours.loads(cookie)
    forged = {
        "payload changed": _flip(cookie, 2),
        "signature changed": _flip(cookie, len(cookie) - 2),
        "signed with another key": foreign.dumps(token),
        "unknown token, our key": ours.dumps("x" * 43),
        "not a string": ours.dumps({"username": "admin"}),
        "empty": "",
    }
    for why, value in forged.items():
        with httpx.Client(base_url=dashboard.url, cookies={"sw_session": value}) as client:
            assert client.get("/api/overview").status_code == 401, why
    # The genuine one still works (the forgeries were refused for what they are).
    with httpx.Client(base_url=dashboard.url, cookies={"sw_session": cookie}) as client:
        assert client.get("/api/overview").status_code == 200


def test_expired_revoked_and_disabled_sessions_are_refused(dashboard: Dashboard) -> None:
    cases = dashboard.storm.cases
    expired = Sessions(cases, SECRET_KEY, lifetime=timedelta(seconds=-1)).login("viewer", PASSWORD)
    assert expired is not None
    with httpx.Client(base_url=dashboard.url, cookies={"sw_session": expired[0]}) as client:
        assert client.get("/api/overview").status_code == 401

    records = cases.dashboard
    for change in ("role", "disabled"):
        name = f"temp-{change}"
        add_user(cases, name, PASSWORD, "clerk", who="test")
        with httpx.Client(base_url=dashboard.url) as client:
            login = client.post("/api/session", json={"username": name, "password": PASSWORD})
            assert login.status_code == 200
            assert client.get("/api/overview").status_code == 200
            if change == "role":
                records.update_user(name, "test", role="viewer")
            else:
                records.update_user(name, "test", disabled=True)
            assert client.get("/api/overview").status_code == 401, change
            again = client.post("/api/session", json={"username": name, "password": PASSWORD})
            assert again.status_code == (200 if change == "role" else 401), change
