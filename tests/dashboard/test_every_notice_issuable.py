"""Every notice issuable by a person, from the dashboard: an inspector issues the § 370-8 D/E
notice for an obstruction recorded on 105 Main St; it is numbered in the register and its
letter carries the Village's letterhead; its service is recorded with a method, and the
owner's 24 hours run from that service. A service for a notice the register does not hold,
and a notice for a case not on record, are refused in words.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

import pytest
from pypdf import PdfReader

from sidewalk.core.config import VillageConfig
from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, Dashboard

if CHROMIUM.exists():
    from playwright.sync_api import Browser, expect

CASE = "obstruction:OB-7"


def settled(check: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """The action ticker applies what was recorded within a tenth of a second or so."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(scope="module")
def obstructed(dashboard: Dashboard) -> Iterator[Dashboard]:
    """An obstruction an inspector recorded an hour before now, applied by the runner, and
    the settings' [village] letterhead the dashboard issues under."""
    cases, end = dashboard.storm.cases, dashboard.storm.end
    dashboard.app.state.village = VillageConfig(
        office="Village Hall", address_lines=["1 Municipal Pl", "Clyman, WI 53016"],
        telephone="(920) 555-0142", email="clerk@clyman.example", office_hours="Mon-Fri 8-4",
        officer_name="Dana Ortiz", officer_title="Clerk-Treasurer",
    )  # fmt: skip
    cases.actions.record(
        "record_obstruction", "OB-7", end - timedelta(hours=1), "Pat Inspector",
        {"frontage": "main-st-105", "kind": "other", "area": "sidewalk",
         "description": "a trailer parked across the walk"},
    )  # fmt: skip
    assert settled(lambda: cases.clocks.violation_by_key(CASE) is not None)
    try:
        yield dashboard
    finally:
        del dashboard.app.state.village


def test_every_notice_issuable_from_the_dashboard_numbered_lettered_served(
    obstructed: Dashboard,
) -> None:
    cases, end = obstructed.storm.cases, obstructed.storm.end
    inspector, clerk = obstructed.login("inspector"), obstructed.login("clerk")
    waiting = inspector.get("/api/notices-to-issue").json()
    assert [(k["case"], k["address"], k["what"]) for k in waiting] == [
        (CASE, "105 Main St", "a trailer parked across the walk")
    ]
    # A viewer may read the list, not issue; the issue carries the CSRF token as every form.
    viewer = obstructed.login("viewer")
    assert viewer.post("/api/notices", json={"case": CASE}).status_code == 403
    no_token = obstructed.login("inspector")
    del no_token.headers["X-CSRF-Token"]
    assert no_token.post("/api/notices", json={"case": CASE}).status_code == 403

    issued = inspector.post("/api/notices", json={"case": CASE})
    assert issued.status_code == 200, issued.text
    number = issued.json()["number"]
    assert number.startswith("CLY-")
    # In the register, with its number, not yet served: no owner's deadline yet.
    register = {n["number"]: n for n in clerk.get("/api/notices").json()}
    view = register[number]
    assert (view["kind_words"], view["address"], view["status"]) == (
        "Notice to remove an obstruction", "105 Main St", "rendered",
    )  # fmt: skip
    assert view["owner_deadline"] is None
    assert view["deadline_note"] == "The owner's deadline starts when the notice is served."
    assert inspector.get("/api/notices-to-issue").json() == []
    assert [a.actor for a in cases.audit.list(f"notice:{number}")
            if a.action == "notice.issued_by"] == ["inspector"]  # fmt: skip
    # The letter the clerk prints carries the Village's letterhead and its officer.
    pdf = clerk.get(f"/api/notices/{number}/letter.pdf")
    assert pdf.status_code == 200
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages)
    for expected in ("VILLAGE OF CLYMAN", "Village Hall", "1 Municipal Pl", "(920) 555-0142",
                     "Dana Ortiz", number):  # fmt: skip
        assert expected in text, expected
    # E-mail is not service; posting is, and the 24 hours run from it.
    email = clerk.post(f"/api/notices/{number}/service",
                       json={"method": "email", "served_by": "Pat Inspector"})  # fmt: skip
    assert email.status_code == 409
    served = clerk.post(f"/api/notices/{number}/service",
                        json={"method": "posted", "served_by": "Pat Inspector"})  # fmt: skip
    assert served.status_code == 200, served.text
    [delivery] = cases.notices.list_deliveries(notice_id=cases.notices.get_by_number(number).id)
    assert delivery.channel == "posted"

    def deadline() -> str | None:
        due: str | None = clerk.get(f"/api/notices/{number}").json()["owner_deadline"]
        return due

    assert settled(lambda: deadline() is not None)
    due = deadline()
    assert due is not None
    assert datetime.fromisoformat(due) == end + timedelta(hours=24)
    after = clerk.get(f"/api/notices/{number}").json()
    assert after["deadline_note"] == "The owner's deadline, from the recorded service"
    assert [(line["text"], line["who"]) for line in after["history"]] == [
        ("Notice issued", None), ("Notice served by posting on the premises", "Pat Inspector"),
    ]  # fmt: skip


def test_every_notice_issuable_refuses_what_the_register_does_not_hold(
    obstructed: Dashboard,
) -> None:
    clerk = obstructed.login("clerk")
    unknown = clerk.post("/api/notices/CLY-2026-999999/service",
                         json={"method": "hand", "served_by": "Pat Inspector"})  # fmt: skip
    assert unknown.status_code == 404
    assert unknown.json()["detail"] == "There is no notice CLY-2026-999999."
    nothing = clerk.post("/api/notices", json={"case": "obstruction:OB-404"})
    assert nothing.status_code == 409
    assert nothing.json()["detail"] == "Not issued: No obstruction OB-404 is on record."


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")
def test_every_notice_issuable_on_the_notices_page_in_a_browser(
    obstructed: Dashboard, chromium_browser: Browser
) -> None:
    """The inspector's way through the page: Notices to issue, a confirmation, the notice's
    page, its service by posting; the owner's deadline shows, in words, with no stored names."""
    from tests.dashboard.test_browser import log_in, plain_words

    cases, end = obstructed.storm.cases, obstructed.storm.end
    cases.actions.record(
        "record_obstruction", "OB-8", end - timedelta(hours=2), "Pat Inspector",
        {"frontage": "main-st-103", "kind": "other", "area": "sidewalk",
         "description": "a skid of pavers on the walk"},
    )  # fmt: skip
    assert settled(lambda: cases.clocks.violation_by_key("obstruction:OB-8") is not None)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium_browser.new_context(viewport={"width": 1366, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        log_in(page, obstructed, "inspector")
        page.goto(f"{obstructed.url}/#notices")
        row = page.locator('tr[data-case="obstruction:OB-8"]')
        expect(row).to_contain_text("103 Main St")
        expect(row).to_contain_text("a skid of pavers on the walk")
        plain_words(page)
        row.get_by_role("button", name="Issue the notice…").click()
        page.locator("#confirm-issue").click()
        expect(page).to_have_url(re.compile(r"#notice/CLY-\d{4}-\d{6}$"))
        expect(page.locator("#notice-deadline")).to_contain_text("starts when the notice is served")
        page.locator('[data-step="record_delivery"]').click()
        page.get_by_label("Posted on the premises").check()
        page.get_by_role("button", name="Continue").click()
        page.locator("#confirm-yes").click()
        expect(page.locator("#notice-status")).to_contain_text("Served")
        # Once the runner has applied the service, the page shows the owner's deadline.
        assert settled(lambda: all(a.applied_at for a in cases.actions.list("OB-8")))
        page.reload()
        expect(page.locator("#notice-deadline")).to_contain_text("from the recorded service")
        page.screenshot(path=str(ARTIFACTS / "every-notice-issued.png"), full_page=True)
        plain_words(page)
        assert errors == []
    finally:
        context.close()
