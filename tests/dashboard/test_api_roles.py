"""The JSON API for every role, on a real uvicorn server over the replayed first storm."""

from __future__ import annotations

import hashlib
import io
import re
import time
import uuid
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute, iter_route_contexts

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.auth import ROLES, add_user
from tests.dashboard.conftest import PASSWORD, Dashboard

READ_PATHS = (
    "/api/session",
    "/api/overview",
    "/api/map",
    "/api/clocks",
    "/api/frontages",
    "/api/notices",
    "/api/abatements",
    "/api/bills",
    "/api/devices",
    "/api/dead-letters",
    "/api/sites/pole-main-01/series",
    "/api/cold-weather",
    "/api/defects",
    "/api/audit",
)
OWNER_NAMES = ("Alice Anders", "Bert Brandt", "Clara Christoph")


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_every_page_and_sees_owners_only_if_needed(
    dashboard: Dashboard, role: str
) -> None:
    client = dashboard.login(role)
    seen = ""
    for path in READ_PATHS:
        response = client.get(path)
        assert response.status_code == 200, (path, response.text)
        seen += response.text
    shows_owners = role in {"clerk", "admin"}
    for name in OWNER_NAMES[1:]:  # the two owners with notices
        assert (name in seen) == shows_owners, (role, name)
    assert ("PO Box 12" in seen) == shows_owners


def test_overview_has_the_scenarios_states(dashboard: Dashboard) -> None:
    overview = dashboard.login("viewer").get("/api/overview").json()
    states = {f["id"]: (f["state"], f["category"]) for f in overview["frontages"]}
    assert states["main-st-101"] == ("complied", "clear")
    assert states["main-st-103"][1] == "violation"
    assert states["main-st-105"][1] == "violation"
    features = dashboard.login("viewer").get("/api/map").json()["features"]
    assert {f["id"] for f in features} == set(states)
    assert all(f["geometry"]["type"] == "Polygon" for f in features)


def test_no_session_no_data(dashboard: Dashboard) -> None:
    with httpx.Client(base_url=dashboard.url) as anonymous:
        assert anonymous.get("/api/overview").status_code == 401
        assert anonymous.get("/api/events").status_code == 401
        page = anonymous.get("/", follow_redirects=False)
        assert page.status_code == 303
        assert page.headers["location"] == "/login"
    forged = {"sw_session": "forged.cookie"}
    with httpx.Client(base_url=dashboard.url, cookies=forged) as forger:
        assert forger.get("/api/overview").status_code == 401


def test_state_changes_need_the_csrf_token(dashboard: Dashboard) -> None:
    client = dashboard.login("admin")
    number = client.get("/api/notices").json()[0]["number"]
    before = len(dashboard.storm.cases.actions.list())
    del client.headers["X-CSRF-Token"]
    refused = client.post(f"/api/notices/{number}/actions", json={"kind": "confirm_hazard"})
    assert refused.status_code == 403
    assert "CSRF" in refused.text
    wrong = client.post(
        f"/api/notices/{number}/actions",
        json={"kind": "confirm_hazard"},
        headers={"X-CSRF-Token": "not-the-token"},
    )
    assert wrong.status_code == 403
    assert len(dashboard.storm.cases.actions.list()) == before


def test_login_is_json_only_and_throttled(dashboard: Dashboard) -> None:
    add_user(dashboard.storm.cases, "typo-prone", PASSWORD, "viewer")
    with httpx.Client(base_url=dashboard.url) as client:
        form = client.post("/api/session", data={"username": "viewer", "password": PASSWORD})
        assert form.status_code in (415, 422)
        for _ in range(3):
            bad = client.post(
                "/api/session", json={"username": "typo-prone", "password": "wrong!!"}
            )
            assert bad.status_code == 401
        # The right password now waits too: guessing cannot go on at full speed.
        again = {"username": "typo-prone", "password": PASSWORD}
        throttled = client.post("/api/session", json=again)
        assert throttled.status_code == 429
        assert int(throttled.headers["Retry-After"]) > 0
    failed = [a for a in dashboard.storm.cases.audit.list() if a.action == "session.login_failed"]
    assert len(failed) >= 3


@pytest.mark.parametrize(
    ("role", "kind", "allowed"),
    [
        ("viewer", "confirm_hazard", False),
        ("viewer", "record_delivery", False),
        ("inspector", "record_delivery", True),
        ("inspector", "paid_in_full", False),
        ("clerk", "confirm_hazard", False),
        ("clerk", "bill_received", True),
        ("admin", "inspected_clear", True),
    ],
)
def test_actions_by_role(dashboard: Dashboard, role: str, kind: str, allowed: bool) -> None:
    client = dashboard.login(role)
    notice = client.get("/api/notices").json()[-1]
    response = client.post(f"/api/notices/{notice['number']}/actions", json={"kind": kind})
    if not allowed:
        assert response.status_code == 403, response.text
        return
    # Allowed for the role; the case may still refuse the step in its state, in plain words.
    assert response.status_code in (200, 409), response.text
    if response.status_code == 409:
        assert "cannot be recorded now" in response.json()["detail"]
        assert not re.search(r"\b[a-z]+_[a-z_]+\b", response.json()["detail"])
    else:
        action = next(
            a for a in dashboard.storm.cases.actions.list() if a.id == response.json()["action_id"]
        )
        assert (action.kind, action.who, action.target) == (kind, role, notice["violation_key"])
        audit = dashboard.storm.cases.audit.list(subject=notice["violation_key"])
        assert any(a.actor == role and a.action == f"action.{kind}" for a in audit)


def test_delivery_reaches_the_clock_through_the_runner(dashboard: Dashboard) -> None:
    client = dashboard.login("clerk")
    notice = client.get("/api/notices").json()[0]
    response = client.post(
        f"/api/notices/{notice['number']}/actions", json={"kind": "record_delivery"}
    )
    assert response.status_code == 200
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        clocks = client.get("/api/clocks", params={"active": True}).json()
        periods = [c for c in clocks if c["frontage"] == notice["frontage"]]
        if periods and periods[0]["state"] == "notice_period":
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"no notice_period clock for {notice['frontage']}: {clocks}")
    assert periods[0]["deadline"] is not None
    after = client.get(f"/api/notices/{notice['number']}").json()
    assert after["status"] == "delivered"
    assert after["deliveries"][0]["channel"] == "hand"


def test_money_is_for_the_clerk(dashboard: Dashboard) -> None:
    cases = dashboard.storm.cases
    frontage = "main-st-105"
    violation = next(v for v in cases.clocks.list_violations() if v.frontage_id == frontage)
    abatement = cases.bills.order_abatement(
        f"test/{uuid.uuid4()}", frontage, "notice_period_over", dashboard.storm.end,
        violation_id=violation.id,
    )  # fmt: skip
    cases.bills.complete_abatement(abatement.id, dashboard.storm.end)
    inspector = dashboard.login("inspector")
    # A cost goes on the ledger only through the bill; there is no bare cost line to add.
    gone = inspector.post(
        f"/api/abatements/{abatement.id}/expenses",
        json={"amount": "85.00", "description": "crew, 1 h"},
    )
    assert gone.status_code in (404, 405), gone.text
    assert cases.bills.list_expenses(abatement.id) == []
    # The crew (an inspector's account) records its hours; pricing and billing are the clerk's.
    crew = {"workers": [{"name": "Pat", "hours": "1"}], "equipment": []}
    hours = inspector.post(f"/api/abatements/{abatement.id}/crew-work", json=crew)
    assert hours.status_code == 200, hours.text
    for path in ("bill/preview", "bill"):
        denied = inspector.post(f"/api/abatements/{abatement.id}/{path}", json={"total": "45.00"})
        assert denied.status_code == 403, path
    clerk = dashboard.login("clerk")
    seen = clerk.post(f"/api/abatements/{abatement.id}/bill/preview", json={}).json()
    assert seen["total"] == "45.00"  # 1 h at the demo village's confirmed $45.00
    bill = clerk.post(f"/api/abatements/{abatement.id}/bill", json={"total": "45.00"}).json()
    assert bill["amount"] == "45.00"
    # A payment is the clerk's: refused to the inspector; a sub-cent amount refused too.
    for who, amount, refused in (("inspector", "45.00", 403), ("clerk", "0.001", 409)):
        denied = dashboard.login(who).post(
            f"/api/bills/{bill['id']}/payments",
            json={"key": str(uuid.uuid4()), "amount": amount, "method": "check"},
        )
        assert denied.status_code == refused, (who, denied.text)
    assert cases.bills.balance(bill["id"]) == Decimal("45.00")
    key = str(uuid.uuid4())
    for _ in range(2):  # a double click pays once
        paid = clerk.post(
            f"/api/bills/{bill['id']}/payments",
            json={"key": key, "amount": "45.00", "method": "check"},
        )
        assert paid.status_code == 200, paid.text
    assert cases.bills.balance(bill["id"]) == Decimal("0.00")
    assert any(a.actor == "clerk" and a.action == "payment.received" for a in cases.audit.list())
    # The payment in full is the case's too: its clock hears it once, as from the command line.
    told = [a for a in cases.actions.list(violation.key) if a.kind == "paid_in_full"]
    assert [(a.who, a.detail["bill"]) for a in told] == [("clerk", bill["id"])]


def test_print_batch_for_clerk_only(dashboard: Dashboard) -> None:
    numbers = [n["number"] for n in dashboard.login("viewer").get("/api/notices").json()]
    assert (
        dashboard.login("inspector")
        .post("/api/notices/print-batch", json={"numbers": numbers})
        .status_code
        == 403
    )
    clerk = dashboard.login("clerk")
    batch = clerk.post("/api/notices/print-batch", json={"numbers": numbers}).json()
    page = clerk.get(batch["url"])
    assert page.status_code == 200
    # The same letters as `sidewalk notices print-batch`: one renderer (alerts.pdf.batch_pdf).
    assert page.headers["content-type"] == "application/pdf"
    from pypdf import PdfReader

    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(page.content)).pages)
    assert all(number in text for number in numbers)
    assert "Bert Brandt" in text
    assert dashboard.login("viewer").get(batch["url"]).status_code == 403


def test_users_are_for_the_admin(dashboard: Dashboard) -> None:
    body = {"username": "new-inspector", "password": "long enough pw", "role": "inspector"}
    assert dashboard.login("clerk").post("/api/users", json=body).status_code == 403
    admin = dashboard.login("admin")
    assert admin.post("/api/users", json=body).status_code == 201
    assert admin.post("/api/users", json=body).status_code == 409
    names = [u["username"] for u in admin.get("/api/users").json()]
    assert "new-inspector" in names
    stored = dashboard.storm.cases
    row = next(a for a in stored.audit.list() if a.action == "user.created" and a.actor == "admin")
    assert row.subject == "user:new-inspector"


def test_logout_ends_the_session(dashboard: Dashboard) -> None:
    client = dashboard.login("viewer")
    cookie = client.cookies["sw_session"]
    assert client.get("/api/overview").status_code == 200
    assert client.delete("/api/session").status_code == 200
    # The same cookie again: revoked in the database, not just cleared in the browser.
    with httpx.Client(base_url=dashboard.url, cookies={"sw_session": cookie}) as replay:
        assert replay.get("/api/overview").status_code == 401


def test_openapi_document_lists_the_api(dashboard: Dashboard) -> None:
    document = httpx.get(f"{dashboard.url}/openapi.json").json()
    assert {"/api/overview", "/api/notices/{number}/actions", "/api/events"} <= set(
        document["paths"]
    )


# The routes that answer with something other than JSON, and what they send.
NOT_JSON = {
    "/api/events": "text/event-stream",
    "/api/frames/{sha256}": "image/jpeg",
    "/api/notices/{number}/letter.pdf": "application/pdf",
    # The exports: CSV and spreadsheet downloads (routes/exports.py).
    **{
        f"/api/exports/{name}.{fmt}": media
        for name in ("notices", "bills", "payments", "tax-roll")
        for fmt, media in (
            ("csv", "text/csv"),
            ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        )
    },
}


def _described(document: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Whether a response schema names its fields: a model, or a list of models.

    A bare object (``{}``, or ``type: object`` with no properties, as a
    handler returning ``dict[str, Any]`` gets) is not a description.
    """
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    if schema.get("type") == "array":
        return _described(document, schema.get("items", {}))
    return schema.get("type") == "object" and bool(schema.get("properties"))


def test_every_json_route_has_a_response_model_in_openapi(dashboard: Dashboard) -> None:
    """Every /api route is in the OpenAPI document, each JSON answer with its model."""
    document = dashboard.login("viewer").get("/openapi.json").json()
    operations = {
        (method.upper(), path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }
    routes = {
        (method, context.path)
        for context in iter_route_contexts(dashboard.app.routes)
        if isinstance(context.original_route, APIRoute) and (context.path or "").startswith("/api/")
        for method in (context.methods or set()) - {"HEAD"}
    }
    assert len(routes) >= 25
    assert routes <= set(operations), routes - set(operations)
    for (method, path), operation in operations.items():
        ok = [c for c, r in operation["responses"].items() if c.startswith("2")]
        assert ok, (method, path)
        content = operation["responses"][ok[0]].get("content", {})
        if path in NOT_JSON:
            assert list(content) == [NOT_JSON[path]], (method, path, content)
            continue
        assert list(content) == ["application/json"], (method, path, content)
        schema = content["application/json"]["schema"]
        assert _described(document, schema), (method, path, schema)
    # Owner details are optional in the models: absent for roles without them.
    frontage = document["components"]["schemas"]["FrontageView"]
    assert "owner" in frontage["properties"]
    assert "owner" not in frontage["required"]


def test_latest_frame_is_served_to_every_role(dashboard: Dashboard) -> None:
    series = dashboard.login("viewer").get("/api/sites/pole-main-01/series").json()
    latest = series["latest"]["main-st-105"]
    assert latest["frame_sha256"] == dashboard.frame_sha256
    # The width as the letters state it: to the quarter inch, with the camera's uncertainty.
    assert re.fullmatch(
        r"(\d+ ft )?\d+( [13]/4| 1/2)? in \(± 2 in\)|(\d+ ft )?[13]/4 in \(± 2 in\)",
        latest["cleared_width_text"],
    ), latest
    frame = dashboard.login("viewer").get(latest["frame_url"])
    assert frame.status_code == 200
    assert frame.headers["content-type"] == "image/jpeg"
    assert hashlib.sha256(frame.content).hexdigest() == dashboard.frame_sha256
    assert dashboard.login("viewer").get(f"/api/frames/{'0' * 64}").status_code == 404
    assert httpx.get(f"{dashboard.url}{latest['frame_url']}").status_code == 401


@pytest.mark.parametrize("role", ROLES)
def test_defects_show_the_inspection_and_owner_status(dashboard: Dashboard, role: str) -> None:
    client = dashboard.login(role)
    d = client.get("/api/defects").json()
    (insp,) = d["inspections"]
    assert (insp["frontage"], insp["address"], insp["status"]) == (
        "main-st-101",
        "101 Main St",
        "ok",
    )
    assert [b["defective"] for b in insp["blocks"]] == [True, True]
    vertical = [c for c in insp["blocks"][0]["checks"] if c["rule"] == "vertical_differential"]
    assert vertical[0]["measured_mm"] == pytest.approx(25.4, abs=1.6)
    assert vertical[0]["limit_mm"] == pytest.approx(19.05)
    assert vertical[0]["citation"].startswith("§ 370-5")
    assert {lim["rule"] for lim in d["limits"]} == {
        "vertical_differential",
        "horizontal_gap",
        "surface_deterioration",
    }
    (owner,) = d["owners"]
    # 2 of the 2 surveyed blocks are defective, but the share is of the 10 on record.
    assert (owner["defective_blocks"], owner["surveyed_blocks"], owner["owner_blocks"]) == (
        2,
        2,
        10,
    )
    assert owner["defective_fraction"] == pytest.approx(0.2)
    assert owner["survey_complete"] is False
    assert owner["replace_entire_sidewalk"] is False
    assert owner["status"] == "2 of 10 blocks defective (incomplete: 2 of 10 surveyed)"
    assert owner["counts"] == [
        {"frontage": "main-st-101", "blocks": 10, "basis": "recorded", "spacing_ft": None}
    ]
    assert owner["frontages"] == ["main-st-101"]
    shows_owners = role in {"clerk", "admin"}
    assert ("owner" in owner) == shows_owners
    assert ("Alice Anders" in client.get("/api/defects").text) == shows_owners

    image = client.get(insp["evidence_url"])
    assert image.status_code == 200
    assert image.headers["content-type"] == "image/jpeg"
    assert hashlib.sha256(image.content).hexdigest() == dashboard.inspection_sha256
    assert httpx.get(f"{dashboard.url}{insp['evidence_url']}").status_code == 401


def test_a_notices_letter_is_the_command_lines_pdf(dashboard: Dashboard) -> None:
    from sidewalk.alerts.pdf import notice_pdf

    notice = dashboard.storm.cases.notices.list()[0]
    letter = dashboard.login("clerk").get(f"/api/notices/{notice.number}/letter.pdf")
    assert letter.status_code == 200
    assert letter.headers["content-type"] == "application/pdf"
    # Byte for byte what `sidewalk notices` renders (alerts.pdf.notice_pdf, one renderer).
    assert letter.content == notice_pdf(notice, load_profile())
    download = dashboard.login("admin").get(
        f"/api/notices/{notice.number}/letter.pdf", params={"download": True}
    )
    assert download.headers["content-disposition"].startswith("attachment;")
    for role in ("viewer", "inspector"):  # the letter carries the owner's name and address
        refused = dashboard.login(role).get(f"/api/notices/{notice.number}/letter.pdf")
        assert refused.status_code == 403
