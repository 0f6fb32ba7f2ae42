"""The dashboard in headless Debian Chromium, driven by Playwright (screenshots kept).

Chromium is the Debian package (``/usr/bin/chromium``); Playwright's own
browser downloads are never used. Screenshots go to ``test-artifacts/dashboard``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import pytest

from tests.dashboard.conftest import ARTIFACTS, PASSWORD, Dashboard

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed (apt-get install chromium)"
)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if CHROMIUM.exists():
    from playwright.sync_api import BrowserContext, Page, expect, sync_playwright


@pytest.fixture(scope="module")
def browser_context(dashboard: Dashboard) -> Iterator[BrowserContext]:
    # Depends on the server so the browser (and its event streams) goes first.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="sidewalk-chromium-") as profile_dir,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile_dir,
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1400, "height": 1000},
        )
        yield context
        context.close()


def log_in(page: Page, dashboard: Dashboard, role: str) -> None:
    page.goto(f"{dashboard.url}/")
    expect(page).to_have_url(f"{dashboard.url}/login")
    page.get_by_label("User name").fill(role)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "overview")


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_login_map_notice_action_and_live_clock_event(
    browser_context: BrowserContext, dashboard: Dashboard
) -> None:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, dashboard, "clerk")

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
    page.keyboard.press("Tab")  # keyboard users reach "skip to content" first
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    expect(page.get_by_role("cell", name="Bert Brandt")).to_be_visible()  # clerks see owners
    shot(page, "01-overview")

    # Act on a notice: the clerk records hand delivery of 103's notice.
    page.get_by_role("link", name="Notices").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "notices")
    row = page.locator("tr", has=page.get_by_text("103 Main St"))
    expect(row.get_by_role("button", name="Confirm hazard")).to_have_count(0)  # not a clerk's
    shot(page, "02-notices")

    # Print a batch: the clerk ticks the notice; the batch opens as the letters' PDF, the
    # same renderer as `sidewalk notices print-batch` (sidewalk.alerts.pdf.batch_pdf).
    page.get_by_label("Select CLY-2026-000001 for printing").check()
    with page.expect_response("**/api/notices/print-batch") as response:
        page.get_by_role("button", name="Print selected").click()
    letters = page.request.get(urljoin(page.url, response.value.json()["url"]))
    assert letters.headers["content-type"] == "application/pdf"
    (ARTIFACTS / "02-print-batch.pdf").write_bytes(letters.body())
    from pypdf import PdfReader

    reader = PdfReader(ARTIFACTS / "02-print-batch.pdf")
    assert "Bert Brandt" in reader.pages[0].extract_text()
    row.get_by_role("button", name="Record delivery").click()
    expect(page.locator("#toast")).to_contain_text("Recorded record_delivery")
    expect(row).to_contain_text("record_delivery by clerk")

    # The runner applies it; the clock event arrives live over SSE: 103's case is
    # now in its notice period, with a countdown.
    page.get_by_role("link", name="Overview").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "overview")
    expect(page.locator("#live-events")).to_contain_text("notice_period", timeout=10_000)
    arrived = page.evaluate("window.__swLive.map(e => [e.frontage, e.from, e.to])")
    assert ["main-st-103", "notice_issued", "notice_period"] in arrived
    expect(page.locator("#clock-rows")).to_contain_text("notice_period")
    expect(page.locator("#clock-rows td.countdown").first).to_contain_text("h")
    shot(page, "03-live-clock-event")
    assert errors == []


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
        expect(page.locator("main")).not_to_contain_text("Alice Anders")
    shot(page, f"10-{page_name}")
    assert errors == []
    page.close()
