"""The dashboard in headless Debian Chromium, driven by Playwright (screenshots kept).

Chromium is the Debian package (``/usr/bin/chromium``); Playwright's own
browser downloads are never used. Screenshots go to ``test-artifacts/dashboard``.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import cv2
import numpy as np
import pytest

from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, PASSWORD, Dashboard

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed (apt-get install chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect


@pytest.fixture(scope="module")
def browser_context(chromium_browser: Browser, dashboard: Dashboard) -> Iterator[BrowserContext]:
    # Depends on the server so the context (and its event streams) goes first.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context
    context.close()


def log_in(page: Page, dashboard: Dashboard, role: str) -> None:
    page.goto(f"{dashboard.url}/")
    expect(page).to_have_url(f"{dashboard.url}/login")
    page.get_by_label("User name").fill(role)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    # Today is the first page: what needs a person now.
    expect(page.locator("body")).to_have_attribute("data-ready", "today")


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def overview_in_clerks_words(page: Page, state: str) -> None:
    """The clock's ``state`` in its rows; no stored name in the Overview's clocks, alerts
    and live events; every column of the clock table in sight at a desk."""
    expect(page.locator("#clock-rows")).to_contain_text(state)
    expect(page.locator("#frontage-rows")).to_contain_text(state)
    for stored in ("notice_period", "notice_issued", "violation:", "notice.issued", "main-st-10"):
        for panel in ("#clock-rows", "#alerts", "#live-events"):
            assert stored not in page.locator(panel).inner_text(), (stored, panel)
    expect(page.locator("#alerts")).to_contain_text("Notice ready to serve Notice CLY-2026-0000")
    for width in (1366, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"03-overview-{width}.png"))
        box = page.locator("#clock-rows").locator("xpath=ancestor::div[@class='scroll']")
        fits = "b => [b.scrollWidth <= b.clientWidth, b.scrollWidth, b.clientWidth]"
        assert box.evaluate(fits)[0], (width, box.evaluate(fits))
    page.set_viewport_size({"width": 1400, "height": 1000})


def test_login_map_notice_action_and_live_clock_event(
    browser_context: BrowserContext, dashboard: Dashboard
) -> None:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, dashboard, "clerk")
    page.keyboard.press("Tab")  # keyboard users reach "skip to content" first
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.get_by_role("link", name="Overview").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "overview")

    # The map shows the scenario's states: 101 complied, 103 and 105 in violation.
    shapes = page.locator("[data-frontage-shape]")
    expect(shapes).to_have_count(3)
    expect(page.locator('[data-frontage-shape="main-st-101"]')).to_have_attribute(
        "data-category", "clear"
    )
    for frontage in ("main-st-103", "main-st-105"):
        expect(page.locator(f'[data-frontage-shape="{frontage}"]')).to_have_attribute(
            "data-category", "violation"
        )
    expect(page.locator("#live-status")).to_have_text("live")
    expect(page.get_by_role("cell", name="Bert Brandt")).to_be_visible()  # clerks see owners
    shot(page, "01-overview")

    page.get_by_role("link", name="Notices").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "notices")
    shot(page, "02-notices")

    # Print a batch: the clerk ticks the notice; the batch opens as the letters' PDF, the
    # same renderer as `sidewalk notices print-batch` (sidewalk.alerts.pdf.batch_pdf).
    # Printing is not service: the notice is still waiting to be served afterwards.
    page.get_by_label("Select CLY-2026-000001 for printing").check()
    with page.expect_response("**/api/notices/print-batch") as response:
        page.get_by_role("button", name="Print selected letters").click()
    letters = page.request.get(urljoin(page.url, response.value.json()["url"]))
    assert letters.headers["content-type"] == "application/pdf"
    (ARTIFACTS / "02-print-batch.pdf").write_bytes(letters.body())
    from pypdf import PdfReader

    reader = PdfReader(ARTIFACTS / "02-print-batch.pdf")
    assert "Bert Brandt" in reader.pages[0].extract_text()
    assert dashboard.storm.cases.notices.get_by_number("CLY-2026-000001").delivered_at is None

    # Record the service of 103's notice, with how, by whom and a confirmation step.
    record_service(page, "CLY-2026-000001", "Posted on the premises", "Officer Pat Quinn")
    expect(page.locator("#notice-status")).to_have_text("Served by posting on the premises")
    expect(page.locator("#toast")).to_contain_text("recorded as served by posting")

    # The runner applies it; the clock event arrives live over SSE: 103's case is
    # now in its notice period, with a countdown.
    page.get_by_role("link", name="Overview").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "overview")
    # In the clerk's words: the address, the kind of clock, its states; never stored names.
    served = "Notice served: the owner's time to clear is running"
    expect(page.locator("#live-events")).to_contain_text(
        f"103 Main St Notice and enforcement: Notice issued, not yet delivered → {served}",
        timeout=10_000,
    )
    arrived = page.evaluate("window.__swLive.map(e => [e.frontage, e.from, e.to])")
    assert ["main-st-103", "notice_issued", "notice_period"] in arrived
    overview_in_clerks_words(page, served)
    expect(page.locator("#clock-rows td.countdown").first).to_contain_text("h")
    shot(page, "03-live-clock-event")
    # The notice now shows the owner's own deadline, from the recorded service.
    page.goto(f"{dashboard.url}/#notice/CLY-2026-000001")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    expect(page.locator("#notice-deadline")).to_contain_text("from the recorded service")
    expect(page.locator("#notice-deadline")).to_contain_text("tomorrow 12:00 PM")
    expect(page.locator("main .history")).to_contain_text("Officer Pat Quinn")
    show_the_letter(page, "CLY-2026-000001")
    assert errors == []
    page.close()


def show_the_letter(page: Page, number: str) -> None:
    """The letter on the notice's page: the command line's PDF (``test_api_roles`` compares
    the bytes), shown on request; Chromium's PDF viewer is not started here (seconds)."""
    expect(page.get_by_role("button", name="Show the letter here")).to_be_visible()
    download = page.get_by_role("link", name="Download PDF")
    expect(download).to_have_attribute("href", f"/api/notices/{number}/letter.pdf?download=true")
    shot(page, "04-notice-served-1366")


def record_service(page: Page, number: str, method: str, who: str) -> None:
    """Open the notice, choose how it was served and by whom, then confirm."""
    page.goto(f"{page.url.split('#')[0]}#notice/{number}")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    page.get_by_role("button", name="Record service").click()
    page.get_by_label(method).check()
    page.get_by_label("Served by").fill(who)
    page.get_by_role("button", name="Continue").click()
    # Nothing is recorded until the confirmation.
    expect(page.locator("#confirm-text")).to_contain_text(f"by {who}, now")
    assert page.evaluate("document.querySelector('#notice-status').textContent") != "Served"
    page.get_by_role("button", name="Yes, record the service").click()


@pytest.mark.parametrize("page_name", ["site", "cold", "devices", "defects"])
def test_other_pages_render_for_a_viewer_without_owner_names(
    browser_context: BrowserContext, dashboard: Dashboard, page_name: str
) -> None:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    browser_context.clear_cookies()
    log_in(page, dashboard, "viewer")
    expect(page.locator("body")).not_to_contain_text("Bert Brandt")
    page.goto(f"{dashboard.url}/#{page_name}")
    expect(page.locator("body")).to_have_attribute("data-ready", page_name)
    expect(page.locator("main .error")).to_have_count(0)
    if page_name == "site":
        expect(page.locator("main svg")).to_have_count(2 + 1 + 3)  # 2 weather, width, 3 paths
        frame = page.locator("main img.frame")
        expect(frame).to_have_count(1)
        expect(frame).to_have_js_property("complete", True)
        assert frame.evaluate("img => img.naturalWidth") > 0
    if page_name == "devices":
        expect(page.locator("main")).to_contain_text("pole-main-01")
    if page_name == "defects":  # the 1-in fault stored on 101 Main St, drawn red
        evidence = page.locator("main img.evidence")
        expect(evidence).to_have_count(1)
        expect(evidence).to_have_js_property("complete", True)
        assert evidence.evaluate("img => img.naturalWidth") > 0
        expect(page.locator("main tr.bad")).to_have_count(2)  # both blocks, vertical
        expect(page.locator("main")).to_contain_text("vertical differential")
        expect(page.locator("main td.owner-status")).to_have_text(
            "2 of 10 blocks defective (incomplete: 2 of 10 surveyed)"
        )
        expect(page.locator("main")).to_contain_text("main-st-101: 10 (recorded)")
        expect(page.locator("main section.inspection h2")).to_contain_text(" survey, ")
        expect(page.locator("main")).not_to_contain_text("Alice Anders")
    shot(page, f"10-{page_name}")
    assert errors == []
    page.close()


INTERNAL = re.compile(r"\b[a-z]+_[a-z_]+\b|violation:|action #|Stored up to")
"""What must never show on the clerk's and inspector's pages: state and field names, keys."""


def fresh_page(
    browser_context: BrowserContext, dashboard: Dashboard, role: str, width: int, height: int
) -> tuple[Page, list[str]]:
    browser_context.clear_cookies()
    page = browser_context.new_page()
    page.set_viewport_size({"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, dashboard, role)
    return page, errors


def no_sideways_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def plain_words(page: Page) -> None:
    text = page.locator("main").inner_text()
    assert not INTERNAL.findall(text), INTERNAL.findall(text)


def test_today_at_the_desk_and_on_a_phone(
    browser_context: BrowserContext, dashboard: Dashboard
) -> None:
    page, errors = fresh_page(browser_context, dashboard, "clerk", 1366, 900)
    # 105's notice waits to be served; 103's (served in the first test) has the owner's
    # deadline tomorrow; 105 is a possible hazard for an officer to decide.
    serve = page.locator("#today-serve")
    expect(serve).to_contain_text("105 Main St")
    expect(serve).to_contain_text("Notice to clear snow and ice, not yet served")
    expect(serve).not_to_contain_text("103 Main St")
    expect(page.locator("#today-deadlines")).to_contain_text("103 Main St")
    expect(page.locator("#today-deadlines")).to_contain_text("Deadline: tomorrow 12:00 PM")
    expect(page.locator("#today-review")).to_contain_text("Possible hazard: no path cleared")
    expect(page.get_by_role("button", name="Print today's list")).to_be_visible()
    plain_words(page)
    assert no_sideways_scroll(page)
    shot(page, "20-today-1366")
    page.emulate_media(media="print")  # the printed daily list: no buttons, boxes to tick
    expect(page.get_by_role("button", name="Print today's list")).to_be_hidden()
    expect(page.locator(".tick").first).to_be_visible()
    shot(page, "20-today-print")
    page.emulate_media(media="screen")
    for width, height in ((390, 844), (1920, 1080)):
        page.set_viewport_size({"width": width, "height": height})
        assert no_sideways_scroll(page), width
        shot(page, f"20-today-{width}")
    # Open the notice from Today; the notices list at 1366 has no sideways scroll either.
    page.set_viewport_size({"width": 1366, "height": 900})
    serve.get_by_role("link", name="Open notice CLY-2026-000002").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    expect(page.locator("#notice-deadline")).to_have_text(
        "The owner's deadline starts when the notice is served."
    )
    assert no_sideways_scroll(page)
    page.goto(f"{dashboard.url}/#notices")
    expect(page.locator("body")).to_have_attribute("data-ready", "notices")
    plain_words(page)
    assert no_sideways_scroll(page)
    # On a phone the list is cards: the deadline and status stay in view.
    page.set_viewport_size({"width": 390, "height": 844})
    expect(page.locator('tr[data-notice="CLY-2026-000001"]')).to_contain_text("tomorrow 12:00 PM")
    assert no_sideways_scroll(page)
    shot(page, "23-notices-390")
    page.goto(f"{dashboard.url}/#notice/CLY-2026-000002")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    assert no_sideways_scroll(page)
    shot(page, "23-notice-390")
    assert errors == []
    page.close()


def test_a_notice_shows_only_the_steps_valid_now_and_refusals_in_plain_words(
    browser_context: BrowserContext, dashboard: Dashboard
) -> None:
    page, errors = fresh_page(browser_context, dashboard, "clerk", 1366, 900)
    page.goto(f"{dashboard.url}/#notice/CLY-2026-000002")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    # Not yet served: the clerk may only record the service (no payment, no abatement).
    expect(page.locator("[data-step]")).to_have_count(1)
    expect(page.get_by_role("button", name="Record service")).to_be_visible()
    # E-mail does not count as service under the profile's default: it is not offered.
    page.get_by_role("button", name="Record service").click()
    expect(page.get_by_label("E-mail")).to_have_count(0)
    page.get_by_label("Mail (the time is when it was received)").check()
    page.get_by_label("Served by").fill("Dana Krüger")
    page.get_by_role("button", name="Continue").click()
    plain_words(page)
    shot(page, "21-notice-confirm-1366")
    # Meanwhile someone else records it: the confirmation is refused, in plain words.
    other = dashboard.login("clerk")
    served = other.post(
        "/api/notices/CLY-2026-000002/service", json={"method": "hand", "served_by": "Pat"}
    )
    assert served.status_code == 200, served.text
    page.get_by_role("button", name="Yes, record the service").click()
    expect(page.locator("#notice-problem")).to_have_text(
        "Notice CLY-2026-000002 was already served."
    )
    shot(page, "21-notice-refused-1366")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    expect(page.locator("#no-steps")).to_have_text("Nothing can be recorded on this notice now.")
    shot(page, "21-notice-served-1920")
    assert errors == []
    page.close()


def inspector_sees_only_the_field_steps(page: Page, dashboard: Dashboard) -> None:
    """A served notice: the inspector sees the steps its notice period accepts, only those."""
    page.goto(f"{dashboard.url}/#notice/CLY-2026-000002")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    steps = page.locator("[data-step]")
    expect(steps).to_have_count(2)
    assert sorted(steps.evaluate_all("els => els.map(e => e.textContent)")) == [
        "Confirm hazard (immediate danger)",
        "Inspected: sidewalk cleared",
    ]
    plain_words(page)
    shot(page, "22-notice-inspector-390")


def icy_where_no_clearing_period_is_pending(page: Page, dashboard: Dashboard) -> None:
    """103's notice (served by the first test, unless it ran alone): its clearing period
    is decided, so "Icy" is the inspector's finding under § 370-10 A, kept for the clerk."""
    issued = page.locator('li.stop[data-frontage="main-st-103"]')
    served = dashboard.storm.cases.notices.get_by_number("CLY-2026-000001").delivered_at
    expect(issued.locator(".why")).to_have_text(
        "Notice served: the owner must clear the sidewalk by tomorrow 12:00 PM."
        if served else "Notice issued, not yet served on the owner."
    )  # fmt: skip
    issued.get_by_role("button", name="Icy", exact=True).click()
    expect(page.locator("#rounds-note")).to_have_text(
        "Seen icy at 103 Main St (§ 370-10 A): kept for the clerk's review."
    )
    seen = dashboard.storm.cases.audit.list(subject="frontage:main-st-103")
    assert [a.detail["seen"] for a in seen if a.action == "inspection.observed"] == ["icy"]


def take_photo_with_the_big_button(page: Page, stop: Locator, tmp_path: Path) -> bytes:
    """"Take photo" is one big button opening the phone's camera (the native picker
    hidden); a JPEG chosen through it. Returns the JPEG's bytes."""
    photo = stop.get_by_label("Take photo")
    expect(photo).to_have_attribute("capture", "environment")
    expect(photo).to_have_attribute("accept", "image/*")
    button = stop.locator("label.photo-button")
    box = button.bounding_box()
    assert box is not None
    assert box["height"] >= 48, box
    assert box["width"] >= 300, box
    assert (photo.bounding_box() or {"width": 0})["width"] <= 1
    ok, jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), 200, np.uint8))
    assert ok
    (tmp_path / "walk.jpg").write_bytes(jpeg.tobytes())
    with page.expect_file_chooser() as chooser:
        button.click()
    chooser.value.set_files(str(tmp_path / "walk.jpg"))
    return bytes(jpeg.tobytes())


def test_the_inspector_taps_a_hazard_with_a_photo_and_posts_the_notice_on_a_phone(
    browser_context: BrowserContext, dashboard: Dashboard, tmp_path: Path
) -> None:
    if dashboard.storm.cases.notices.get_by_number("CLY-2026-000002").delivered_at is None:
        # Served (as the test before this one leaves it), so its notice period runs.
        dashboard.login("clerk").post(
            "/api/notices/CLY-2026-000002/service", json={"method": "hand", "served_by": "Pat"}
        ).raise_for_status()
    page, errors = fresh_page(browser_context, dashboard, "inspector", 390, 844)
    assert no_sideways_scroll(page)
    inspector_sees_only_the_field_steps(page, dashboard)
    page.get_by_role("link", name="Rounds").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "rounds")
    stop = page.locator('li.stop[data-frontage="main-st-105"]')
    expect(stop).to_contain_text("105 Main St")
    # Why it is on the round, in words; Icy beside the other findings.
    expect(stop.locator(".why")).to_have_text(
        "Possible hazard: no path cleared at all. Decide whether it is an immediate danger."
    )
    expect(stop.get_by_role("button", name="Icy", exact=True)).to_be_visible()
    icy_where_no_clearing_period_is_pending(page, dashboard)
    jpeg = take_photo_with_the_big_button(page, stop, tmp_path)
    expect(stop.locator(".stop-status")).to_have_text("Photo ready: it goes with your next tap.")
    shot(page, "22-rounds-390")
    assert no_sideways_scroll(page)
    hazards = len(dashboard.storm.cases.notices.list(kind="hazard_notice"))
    stop.get_by_role("button", name="Hazard", exact=True).click()
    note = page.locator("#rounds-note")
    expect(note).to_contain_text("Hazard confirmed: the 2-hour notice is being prepared at 105")
    expect(note).to_contain_text("The photo is kept with it.")
    kept = dashboard.storm.cases.audit.list(subject="frontage:main-st-105")
    sha = hashlib.sha256(jpeg).hexdigest()
    assert [a.detail["sha256"] for a in kept if a.action == "inspection.photo"] == [sha]
    # The runner issues the 2-hour notice; the inspector posts it and records the time.
    # Wait for the notice in the records, not by reloading the page (each reload costs).
    deadline = time.monotonic() + 30
    while len(dashboard.storm.cases.notices.list(kind="hazard_notice")) == hazards:
        assert time.monotonic() < deadline, "the runner issued no hazard notice"
        time.sleep(0.05)
    posted = stop.get_by_role("button", name="Hazard notice posted now")
    for _ in range(50):
        page.reload()
        expect(page.locator("body")).to_have_attribute("data-ready", "rounds")
        if posted.count():
            break
        page.wait_for_timeout(200)
    posted.click()
    expect(note).to_contain_text("the 2 hours run from now")
    # The stop now counts down the owner's 2 hours, from the posting.
    expect(stop.locator(".why")).to_have_text(
        "Hazard notice posted: the owner must remove the hazard by today 2:00 PM."
    )
    expect(stop.locator(".stop-deadline")).to_contain_text("today 2:00 PM (in 2 h)")
    hazard = dashboard.storm.cases.notices.list(kind="hazard_notice")[-1]
    assert hazard.delivered_at == dashboard.storm.end
    deliveries = dashboard.storm.cases.notices.list_deliveries(notice_id=hazard.id)
    assert [d.channel for d in deliveries] == ["posted"]
    plain_words(page)
    assert no_sideways_scroll(page)
    shot(page, "22-rounds-posted-390")
    page.set_viewport_size({"width": 1366, "height": 900})
    expect(stop.locator("label.photo-button")).to_be_visible()
    shot(page, "22-rounds-posted-1366")
    assert errors == []
    page.close()
