"""The dashboard's requests as an outsider would forge them, on a real uvicorn server.

Owner data reached by id (every notice, property, clock and frame of the storm, as the
viewer and the inspector), ids that do not exist or cannot (404, never 500), a
cross-site form and a ``text/plain`` JSON post, path traversal in every download
route, SQL and 100 kB query strings in the search, and no secret in any page, error,
metric, log line or the API document.
"""

from __future__ import annotations

import logging
import socket
import time
from urllib.parse import quote

import httpx
import pytest

from sidewalk.dashboard.auth import COOKIE
from tests.dashboard.conftest import PASSWORD, SECRET_KEY, cheap_password_hash
from tests.dashboard.test_route_security import PROBE, SAFE, endpoints
from tests.security.attack_village import METRICS_TOKEN, OWNERS, Village

ABSURD = ["no-such-thing", "0", "99999999999999999999999", "x" * 300]


@pytest.fixture(scope="module")
def village(hostile_village: Village) -> Village:
    return hostile_village


def owner_data(village: Village) -> list[str]:
    """Owner names and the mailing-address lines that are not a public street address."""
    public = {f.street_address for f in village.storm.cases.registry.list_frontages()}
    out = [name for name, _ in OWNERS.values()]
    out += [line for _, lines in OWNERS.values() for line in lines if line not in public]
    # Also as JSON writes them (quotes escaped) and in pieces a page might split out.
    out += [s.replace('"', '\\"') for s in out] + ["Alice Anders", "Bert Brandt", "Christoph"]
    return out


def test_a_viewer_or_inspector_reaches_no_owner_data_by_any_id(village: Village) -> None:
    cases = village.storm.cases
    frontages = cases.registry.list_frontages()
    paths = [f"/api/notices/{quote(n.number)}" for n in cases.notices.list()]
    paths += [f"/api/properties/{quote(f.id)}" for f in frontages]
    paths += [f"/api/clocks/{c.id}/history" for c in cases.clocks.list()]
    # Lists that name what the ids open (every route without an id: the role matrix).
    paths += [f"/api/frames/{village.frame_sha256}", "/api/notices", "/api/bills"]
    # Owners searched for by name, as a viewer would guess them.
    paths += [f"/api/search?q={quote(q)}" for q in ("Alice", "Brandt", "HYPERLINK", "script")]
    owner_only = [f"/api/notices/{quote(n.number)}/letter.pdf" for n in cases.notices.list()]
    owner_only += ["/api/exports/notices.csv", "/api/exports/tax-roll.csv", "/api/users"]
    owner_only += ["/print/notices?n=" + quote(n.number) for n in cases.notices.list()]
    hidden = owner_data(village)
    for role in ("viewer", "inspector"):
        client = village.login(role)
        for path in paths:
            response = client.get(path)
            assert response.status_code == 200, (role, path, response.text[:200])
            leaked = [s for s in hidden if s in response.text]
            assert not leaked, (role, path, leaked)
        for path in owner_only:
            response = client.get(path)
            assert response.status_code == 403, (role, path, response.status_code)
            assert not [s for s in hidden if s in response.text], (role, path)
        searched = client.get("/api/search", params={"q": "Alice"}).json()
        assert [m for m in searched["matches"] if m["kind"] == "owner"] == []
    # The same search finds the owner for the clerk: the viewer's empty answer is a refusal.
    found = village.login("clerk").get("/api/search", params={"q": "Alice"}).json()
    owners = [m["label"] for m in found["matches"] if m["kind"] == "owner"]
    assert owners == [OWNERS["main-st-101"][0]]


def test_an_id_that_does_not_exist_or_cannot_is_404_never_500(village: Village) -> None:
    """Every route with a path parameter, each absurd value in it, as the administrator
    (who passes every role check): 404 or 422, never a 500 and never a 200."""
    admin = village.login("admin")
    checked = 0
    for endpoint in endpoints(village.app):
        if "{" not in endpoint.path or not endpoint.login:
            continue
        if endpoint.path == "/api/sites/{device}/series":
            continue  # a name, not a record: an empty series for it (test_injection.py)
        for value in ABSURD:
            path = endpoint.path
            for name in ("number", "clock_id", "abatement_id", "bill_id", "entry", "payment",
                         "device", "sha256", "frontage", "username", "key"):  # fmt: skip
                path = path.replace("{" + name + "}", value)
            assert "{" not in path, f"{endpoint}: teach the test its parameter"
            probe = None if endpoint.method in SAFE else PROBE
            response = admin.request(endpoint.method, path, json=probe)
            checked += 1
            assert response.status_code in (404, 422), (str(endpoint), value, response.text[:200])
    assert checked >= 20 * len(ABSURD)
    # Past the body check too: a well-formed request naming a record that is not there
    # (a correction of an entry that is not on the notice is the route's own 409).
    big = "99999999999999999999999"
    number = quote(village.storm.cases.notices.list()[0].number)
    for method, path, body in [
        ("POST", f"/api/abatements/{big}/bill", None),
        ("POST", "/api/abatements/999999/bill", None),
        ("POST", f"/api/abatements/{big}/crew-work", {"workers": [{"name": "x", "hours": "1"}]}),
        ("POST", f"/api/bills/{big}/payments", {"key": "k" * 8, "amount": "1.00", "method": "x"}),
        ("POST", f"/api/notices/{number}/entries/{big}/correction", {"reason": "x"}),
        ("POST", f"/api/notices/{number}/payments/{big}/correction", {"reason": "x"}),
        ("GET", f"/api/clocks/{big}/history", None),
        ("GET", "/api/clocks/999999/history", None),
    ]:
        response = admin.request(method, path, json=body)
        assert response.status_code in (404, 409, 422), (method, path, response.text[:200])


def audit_count(village: Village) -> int:
    return len(village.storm.cases.audit.list())


def test_a_cross_site_form_or_text_plain_json_changes_nothing(village: Village) -> None:
    """What a page on another origin can make the clerk's browser send: the cookie goes
    with it (another port of this host is the same site, so even ``SameSite=Strict``
    sends it), but no ``X-CSRF-Token`` header, and ``Origin`` names that page."""
    clerk = village.login("clerk")
    cookie = clerk.cookies[COOKIE]
    evil = "http://127.0.0.1:1"  # same site (host), another origin (port)
    number = quote(village.storm.cases.notices.list()[0].number)
    before = audit_count(village)
    users = len(village.storm.cases.dashboard.list_users())
    forged = [
        ("/api/users", "application/x-www-form-urlencoded", "username=mallory&role=admin"),
        ("/api/users", "text/plain", '{"username": "mallory", "role": "admin", "password": "x"}'),
        (f"/api/notices/{number}/actions", "application/x-www-form-urlencoded", "kind=served"),
        (f"/api/notices/{number}/actions", "text/plain", '{"kind": "served"}'),
        ("/api/notices/print-batch", "multipart/form-data; boundary=x", "--x--"),
    ]
    with httpx.Client(base_url=village.url, cookies={COOKIE: cookie}) as browser:
        for path, kind, body in forged:
            for origin in ({"Origin": evil}, {"Origin": "null"}, {"Referer": f"{evil}/page"}):
                headers = {"Content-Type": kind} | origin
                response = browser.post(path, content=body, headers=headers)
                assert response.status_code == 403, (path, kind, origin, response.text[:200])
                assert "CSRF" in response.text
        # Even with the token (which another origin cannot read), text/plain is no JSON.
        token = clerk.headers["X-CSRF-Token"]
        for path, kind, body in forged:
            headers = {"Content-Type": kind, "X-CSRF-Token": token, "Origin": village.url}
            response = browser.post(path, content=body, headers=headers)
            assert response.status_code in (403, 422), (path, kind, response.text[:200])
    # Login CSRF (the victim logged into the attacker's account): a form cannot log in.
    for kind, body in [
        ("application/x-www-form-urlencoded", f"username=clerk&password={PASSWORD}"),
        ("text/plain", f'{{"username": "clerk", "password": "{PASSWORD}"}}'),
    ]:
        response = httpx.post(f"{village.url}/api/session", content=body,
                              headers={"Content-Type": kind, "Origin": evil})  # fmt: skip
        assert response.status_code == 422, (kind, response.text[:200])
        assert COOKIE not in response.headers.get("set-cookie", "")
    assert len(village.storm.cases.dashboard.list_users()) == users
    assert audit_count(village) == before


def raw_get(village: Village, target: str, cookie: str) -> tuple[int, bytes]:
    """GET ``target`` byte for byte (no client normalises its dots or slashes)."""
    port = int(village.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Cookie: {COOKIE}={cookie}\r\nConnection: close\r\n\r\n".encode("latin-1")
        )
        reply = b""
        while data := sock.recv(65536):
            reply += data
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


TRAVERSALS = [
    "../../../../etc/passwd", "..%2f..%2f..%2f..%2fetc%2fpasswd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "..%252f..%252fetc%252fpasswd", "%2fetc%2fpasswd", "/etc/passwd", "..%5c..%5capp.py",
    "..%2fapp.py", "x%00.jpg", "..%c0%af..%c0%afetc%c0%afpasswd",
]  # fmt: skip
PREFIXES = [
    "/api/frames/", "/static/", "/rounds/", "/api/notices/", "/api/properties/",
    "/api/exports/", "/print/notices?n=", "/api/notices/CLY-2026-000001/",
]  # fmt: skip


def test_no_download_route_reaches_a_file_by_traversal(village: Village) -> None:
    cookie = village.login("admin").cookies[COOKIE]
    passwd = open("/etc/passwd", "rb").read()[:20]  # noqa: SIM115 - one read
    app_py = b"def create_app("
    for prefix in PREFIXES:
        for attack in TRAVERSALS:
            suffix = "/letter.pdf" if prefix == "/api/notices/" else ""
            status, body = raw_get(village, prefix + attack + suffix, cookie)
            assert status in (400, 404, 422), (prefix, attack, status, body[:200])
            for leaked in (passwd, app_py, b"root:"):
                assert leaked not in body, (prefix, attack)
    # The real file by its own name still comes: the refusals were for the paths.
    status, body = raw_get(village, f"/api/frames/{village.frame_sha256}", cookie)
    assert (status, body[:2]) == (200, b"\xff\xd8")


HOSTILE_QUERIES = [
    "' OR '1'='1", "%' OR 1=1 --", "'; DROP TABLE owners; --", "%", "_", "\\", "%%", "_%_",
    "\" OR \"\"=\"", "1 UNION SELECT name, address_lines FROM owners --", "*", "^$", "'%",
]  # fmt: skip


def test_search_takes_sql_and_huge_queries_as_text_and_stays_fast(village: Village) -> None:
    viewer = village.login("viewer")
    owners = len(village.storm.cases.registry.list_owners())
    for q in HOSTILE_QUERIES:
        started = time.monotonic()
        response = viewer.get("/api/search", params={"q": q})
        assert response.status_code == 200, (q, response.text[:200])
        # Wildcards and quotes are literal: a match holds the query itself.
        for m in response.json()["matches"]:
            assert q.lower() in (m["label"] + m["detail"]).lower(), (q, m)
        assert time.monotonic() - started < 1, q
    assert len(village.storm.cases.registry.list_owners()) == owners
    # 100 kB (raw: the client itself refuses such a URL): refused before any route reads
    # it (414 past 8 KB, as nginx's default), never echoed, at once.
    cookie = viewer.cookies[COOKIE]
    for query in ("q=" + "a" * 100_000, "q=" + "%27" * 33_000, "&".join(["q=a"] * 25_000)):
        started = time.monotonic()
        status, body = raw_get(village, "/api/search?" + query, cookie)
        elapsed = time.monotonic() - started
        print(f"search, {len(query)} bytes of query: {status} in {elapsed:.3f} s")
        assert status == 414, (status, body[:200])
        assert b"longer than the dashboard accepts" in body
        assert b"a" * 200 not in body
        assert b"'" * 200 not in body
        assert elapsed < 1, elapsed
    within = viewer.get("/api/search", params={"q": "a" * 101})
    assert within.status_code == 422
    assert "at most 100 characters" in within.text
    assert viewer.get("/api/search", params={"q": "Main"}).status_code == 200


def test_no_secret_in_any_page_error_metric_log_or_the_api_document(
    village: Village, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLAlchemy's statements stay at its own WARNING level here (their parameters at
    DEBUG are checked by test_secrets.py; logging them all would take seconds)."""
    caplog.set_level(logging.DEBUG)
    # uvicorn's loggers do not propagate: a traceback it logs would be missed.
    monkeypatch.setattr(logging.getLogger("uvicorn"), "propagate", True)
    caplog.set_level(logging.DEBUG, logger="uvicorn.error")
    admin = village.login("admin")
    hashes = [u.password_hash for u in village.storm.cases.dashboard.list_users()]
    assert hashes
    assert all(h.startswith("$argon2") for h in hashes)
    secrets = [SECRET_KEY, PASSWORD, METRICS_TOKEN, *hashes]
    seen = []
    for endpoint in endpoints(village.app):
        # Compressed answers (PDF, spreadsheet, JPEG) would hide a secret from a text
        # search; they are built from the records the JSON routes show.
        if (
            endpoint.method != "GET"
            or endpoint.path == "/api/events"
            or endpoint.path.endswith((".pdf", ".xlsx", "/print/notices", "/frames/{sha256}"))
        ):
            continue
        path = endpoint.path
        for name, value in {"number": village.storm.cases.notices.list()[0].number,
                            "clock_id": "1", "device": "pole-main-01", "key": "main-st-105",
                            "sha256": village.frame_sha256}.items():  # fmt: skip
            path = path.replace("{" + name + "}", quote(value))
        response = admin.get(path, params={"q": "Main", "n": "CLY-2026-000001"})
        seen.append((str(endpoint), response.status_code, response.text, str(response.headers)))
    # Errors: a wrong password, a stale cookie, a missing record, a bad body, a wrong method.
    anonymous = httpx.Client(base_url=village.url)
    for response in [
        anonymous.post("/api/session", json={"username": "admin", "password": "x" + PASSWORD}),
        anonymous.post(
            "/api/session", content=f"password={PASSWORD}", headers={"Content-Type": "text/plain"}
        ),
        httpx.get(f"{village.url}/api/overview", cookies={COOKIE: "forged"}),
        admin.get("/api/notices/no-such-notice"),
        admin.post("/api/users", json={"username": "x", "password": PASSWORD, "role": "god"}),
        admin.put("/api/session"),
        admin.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}),
        admin.get("/openapi.json"),
    ]:
        seen.append((str(response.request.url), response.status_code, response.text,
                     str(response.headers)))  # fmt: skip
    assert any(s[0] == "GET /api/users" and s[1] == 200 for s in seen)
    assert any("/metrics" in s[0] and "# HELP" in s[2] for s in seen)
    for where, status, text, headers in seen:
        assert status != 500, where
        for secret in secrets:
            assert secret not in text, (where, secret[:8])
            assert secret not in headers, (where, secret[:8])
    logged = caplog.text
    assert "HTTP Request: GET" in logged, "the log was not captured"
    for secret in secrets:
        assert secret not in logged, secret[:8]


def test_a_session_ends_with_a_password_change_the_account_disabled_or_logout(
    village: Village,
) -> None:
    """An account of this test's own. The password and the disabled flag are changed as
    the administrator's routes change them (``update_user``; the routes themselves are
    test_admin.py's, with argon2 at full cost): the old cookie is refused at once."""
    records = village.storm.cases.dashboard
    name, first, second = "attack-pat", PASSWORD, "another correct horse"
    records.add_user(name, cheap_password_hash(first), "clerk", who="test")

    def session(password: str) -> httpx.Client:
        client = httpx.Client(base_url=village.url)
        login = client.post("/api/session", json={"username": name, "password": password})
        assert login.status_code == 200, login.text
        client.headers.update({"X-CSRF-Token": login.json()["csrf_token"], "Origin": village.url})
        assert client.get("/api/bills").status_code == 200
        return client

    stolen = session(first)
    records.update_user(name, "admin", password_hash=cheap_password_hash(second))
    assert stolen.get("/api/bills").status_code == 401  # the password changed
    old = stolen.post("/api/session", json={"username": name, "password": first})
    assert old.status_code == 401
    out = session(second)
    cookie = out.cookies[COOKIE]
    assert out.delete("/api/session").status_code == 200
    with httpx.Client(base_url=village.url, cookies={COOKIE: cookie}) as replay:
        assert replay.get("/api/bills").status_code == 401  # logged out: revoked, not forgotten
    last = session(second)
    records.update_user(name, "admin", disabled=True)
    assert last.get("/api/bills").status_code == 401  # the account was disabled
    relogin = last.post("/api/session", json={"username": name, "password": second})
    assert relogin.status_code == 401
