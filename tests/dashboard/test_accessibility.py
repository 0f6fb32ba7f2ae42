"""WCAG 2.1 AA in the browser: axe-core on every page at 1366 px, no serious or critical
violation; the Admin and Exports pages at 390 and 1366 px; the header at 390, 1366 and
1920 px; Rounds with no signal on a phone (screenshots kept).

axe-core comes from the npm registry, pinned (``AXE_VERSION``), installed once into
``.venv-tools/axe`` (``scripts/services`` does it too); nothing is vendored. It is
evaluated into the page through the DevTools protocol, so the dashboard's
Content-Security-Policy stays as it is served.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sidewalk.dashboard.auth import add_user, role_of
from tests.dashboard.conftest import (
    ARTIFACTS,
    CHROMIUM,
    PASSWORD,
    Dashboard,
    cheap_password_hash,
)
from tests.dashboard.test_browser import browser_context, log_in

__all__ = ["browser_context"]  # a context of its own per module (test_browser.py)

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed (apt-get install chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import BrowserContext, Page, expect

AXE_VERSION = "4.10.3"
ROOT = Path(__file__).resolve().parents[2]
AXE_DIR = ROOT / ".venv-tools" / "axe"
AXE_JS = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
# WCAG 2.0 and 2.1, levels A and AA.
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
SERIOUS = {"serious", "critical"}


def axe_source() -> str:
    """axe-core's script, installed from the npm registry at the pinned version if missing."""
    installed = AXE_DIR / "node_modules" / "axe-core" / "package.json"
    if not AXE_JS.exists() or f'"version": "{AXE_VERSION}"' not in installed.read_text():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm installs axe-core for this test: apt-get install npm")
        subprocess.run(
            [npm, "install", "--prefix", str(AXE_DIR), "--no-save", "--no-audit", "--no-fund",
             f"axe-core@{AXE_VERSION}"],
            check=True, capture_output=True, timeout=180,
        )  # fmt: skip
    return AXE_JS.read_text(encoding="utf-8")


def axe_violations(page: Page, source: str) -> list[dict[str, Any]]:
    """Serious and critical WCAG 2.1 AA violations on the page as it stands."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(f"() => {{ {source}\n }}")
    results: list[dict[str, Any]] = page.evaluate(
        "(tags) => axe.run(document, { runOnly: { type: 'tag', values: tags } })"
        ".then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ')) })))",
        WCAG_AA,
    )
    return [v for v in results if v["impact"] in SERIOUS]


def visit(page: Page, dashboard: Dashboard, route: str, ready: str) -> None:
    page.goto(f"{dashboard.url}/#{route}")
    expect(page.locator("body")).to_have_attribute("data-ready", ready)


def as_admin(page: Page, dashboard: Dashboard, route: str, ready: str) -> None:
    """Open ``route`` as the admin, logging in first if the session is gone. Straight to the
    route: opening "/" first and then the route races the first page's drawing."""
    page.goto(f"{dashboard.url}/#{route}")
    if page.url.endswith("/login"):
        log_in(page, dashboard, "admin")
    visit(page, dashboard, route, ready)


@pytest.fixture(scope="module")
def dashboard(shared_dashboard: Dashboard) -> Dashboard:
    """Nothing here changes a record but an account of its own: the package's shared storm."""
    return shared_dashboard


@pytest.fixture(scope="module")
def admin_page(browser_context: BrowserContext, dashboard: Dashboard) -> Iterator[Page]:
    page = browser_context.new_page()
    page.set_viewport_size({"width": 1366, "height": 900})
    yield page
    page.close()


def test_axe_finds_no_serious_or_critical_violation_on_any_page(
    admin_page: Page, dashboard: Dashboard
) -> None:
    source = axe_source()
    page = admin_page
    page.goto(f"{dashboard.url}/login")
    found: dict[str, list[dict[str, Any]]] = {"login": axe_violations(page, source)}
    # axe is really looking: a button without a name is a critical violation.
    page.evaluate("document.body.append(document.createElement('button'))")
    assert "button-name" in {v["id"] for v in axe_violations(page, source)}
    log_in(page, dashboard, "admin")
    notice = dashboard.storm.cases.notices.list()[0].number
    pages = [
        ("today", "today"), ("notices", "notices"), (f"notice/{notice}", "notice"),
        ("property/main-st-105", "property"), ("poles", "poles"), ("admin", "admin"),
        ("exports", "exports"), ("overview", "overview"), ("map", "map"), ("rounds", "rounds"),
    ]  # fmt: skip
    for route, ready in pages:
        visit(page, dashboard, route, ready)
        found[route] = axe_violations(page, source)
    report = "\n".join(
        f"{route}: {v['id']} ({v['impact']}): {v['help']}: {', '.join(v['nodes'][:5])}"
        for route, violations in found.items()
        for v in violations
    )
    (ARTIFACTS / "axe-report.txt").write_text(report or "no serious or critical violation\n")
    assert not report, report


def test_admin_and_exports_pages_at_390_and_1366_px(admin_page: Page, dashboard: Dashboard) -> None:
    # The account whose password the keyboard resets below (the shared storm's stay as they are).
    add_user(dashboard.storm.cases, "keyboard-reset", PASSWORD, "inspector", who="test")
    page = admin_page
    as_admin(page, dashboard, "admin", "admin")
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        visit(page, dashboard, "admin", "admin")
        expect(page.get_by_role("heading", name="Accounts")).to_be_visible()
        expect(page.get_by_role("heading", name="Letterhead and issuing officer")).to_be_visible()
        # A profile value's unit as people write it (the profile's text says "degC").
        subgrade = page.get_by_role("row").filter(
            has=page.get_by_role("rowheader", name=re.compile("frozen subgrade", re.IGNORECASE))
        )
        expect(subgrade.first.locator('td[data-label="As set"]')).to_have_text(re.compile("°C$"))
        expect(page.locator("main")).not_to_contain_text("degC")
        # The page itself never scrolls sideways; a wide table scrolls in its panel.
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(ARTIFACTS / f"admin-{width}.png"), full_page=True)
        visit(page, dashboard, "exports", "exports")
        link = page.get_by_role("link", name="Notices as CSV")
        expect(link).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(ARTIFACTS / f"exports-{width}.png"), full_page=True)
    # A download link gives the file the clerk expects.
    with page.expect_download() as download:
        page.get_by_role("link", name="Bills as Spreadsheet (.xlsx)").click()
    assert download.value.suggested_filename.startswith("bills-")
    assert download.value.suggested_filename.endswith(".xlsx")
    # Keyboard: the Admin page's account controls are reachable and labelled.
    page.set_viewport_size({"width": 1366, "height": 900})
    visit(page, dashboard, "admin", "admin")
    inspector = page.get_by_role("row").filter(
        has=page.get_by_role("rowheader", name="keyboard-reset", exact=True)
    )
    inspector.get_by_role("button", name="Reset password").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_label("New password")).to_be_focused()
    page.keyboard.press("Enter")  # blank: a one-time password, after a confirmation
    yes = page.locator("#account-work .confirm-yes")
    expect(yes).to_be_focused()
    page.keyboard.press("Enter")
    otp = page.locator("#account-work .otp")
    expect(otp).to_be_visible()
    assert len(otp.inner_text()) >= 12


def test_the_header_is_one_line_at_a_desk_and_a_scrolling_row_on_a_phone(
    admin_page: Page, dashboard: Dashboard
) -> None:
    """The admin's header (every link) at 1366 and 1920 px: brand, links, search, name and
    "Log out" on one line; at 390 px the links scroll in their row, the page never sideways."""
    page = admin_page
    as_admin(page, dashboard, "rounds", "rounds")
    for width in (1366, 1920, 390):
        page.set_viewport_size({"width": width, "height": 900})
        visit(page, dashboard, "rounds", "rounds")
        centres = page.evaluate(
            "() => [...document.querySelectorAll('header.top .brand,"
            " header.top nav a:not([hidden]), #search-q, #logout')].map(e => {"
            " const r = e.getBoundingClientRect();"
            " return Math.round(r.top + r.height / 2); })"
        )
        assert len(centres) == 12 + 3  # every page's link, the brand, the search, Log out
        if width >= 1366:
            assert max(centres) - min(centres) <= 4, (width, centres)
            # Nothing under anything: the last link ends before the search box begins.
            last_link, search = page.evaluate(
                "() => [Math.max(...[...document.querySelectorAll("
                "'header.top nav a:not([hidden])')].map(a => a.getBoundingClientRect().right)),"
                " document.querySelector('#search-q').getBoundingClientRect().left]"
            )
            assert last_link <= search, (width, last_link, search)
        else:
            nav = page.locator("header.top nav")
            assert nav.evaluate("n => n.scrollWidth > n.clientWidth")  # one row that scrolls
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            # The page being shown has its link in view.
            current = page.locator("header.top nav a[aria-current]").bounding_box()
            assert current is not None
            assert current["x"] >= 0
            assert current["x"] + current["width"] <= width
        page.screenshot(path=str(ARTIFACTS / f"header-rounds-{width}.png"))


def test_site_charts_in_inches_feet_and_fahrenheit_with_si_on_hover(
    admin_page: Page, dashboard: Dashboard
) -> None:
    """The ordinance's units on the Site page; the SI value when the pointer rests on one."""
    page = admin_page
    page.set_viewport_size({"width": 1366, "height": 900})
    as_admin(page, dashboard, "site", "site")
    headings = page.locator("main .chart h2")
    expect(headings.nth(0)).to_contain_text("Snow depth (in)")
    expect(headings.nth(1)).to_contain_text("Temperature (°F)")
    expect(headings.nth(2)).to_contain_text("Cleared width (ft); dashed = required 4 ft")
    text = page.locator("main").inner_text()
    assert " mm" not in text
    assert "°C" not in text
    assert page.locator("main .chart h2 .si").get_attribute("title") == "1219 mm"
    chart = page.locator("main .chart svg").nth(1)
    box = chart.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    expect(chart.locator(".readout")).to_contain_text(re.compile(r"air -?\d+ °F \(-?\d+\.\d °C\)"))


def test_rounds_with_no_signal_findings_wait_on_the_phone_and_go_once(
    browser_context: BrowserContext, dashboard: Dashboard
) -> None:
    """An inspector on the Rounds page (``/rounds/``) taps "Not cleared" with no signal: the
    page says one finding waits. Reloaded with still no signal, the page opens from what its
    service worker kept: the round as last read and the finding waiting. When the connection
    returns it is sent by itself, recorded once, with the time of the tap. Logging out
    leaves nothing of the round on the phone. The finding ("not cleared" on an open notice)
    is kept for the clerk as an audit row and changes no clock or notice: the shared storm
    stays as the other modules read it."""
    cases = dashboard.storm.cases
    page, errors = walker_on_rounds(browser_context, dashboard)
    stop = page.locator('li.stop[data-frontage="main-st-103"]')
    link = page.locator('nav a[data-page="rounds"]')
    waiting = (
        "1 finding is waiting to send. They are kept on this phone and go by themselves"
        " when the connection returns, each with the time you tapped."
    )
    seen = "inspection.observed"
    before = [a for a in cases.audit.list(subject="frontage:main-st-103") if a.action == seen]
    browser_context.set_offline(True)
    try:
        stop.get_by_role("button", name="Not cleared").click()
        expect(stop.locator(".stop-status")).to_contain_text("Not cleared: saved on this phone")
        expect(page.locator("#outbox-count")).to_have_text(waiting)
        page.reload()
        expect(page.locator("body")).to_have_attribute("data-ready", "rounds")
        expect(page.locator(".offline-note")).to_contain_text("No connection: the list as it was")
        expect(stop.get_by_role("button", name="Not cleared")).to_be_visible()
        expect(page.locator("#outbox-count")).to_have_text(waiting)
        expect(link).to_have_text("Rounds (1 to send)")
        expect(page.locator("#who")).to_contain_text("walker")
        expect(page.locator("#live-status")).to_have_text("no connection")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(ARTIFACTS / "rounds-offline-390.png"), full_page=True)
        assert [
            a for a in cases.audit.list(subject="frontage:main-st-103") if a.action == seen
        ] == before
    finally:
        browser_context.set_offline(False)
    expect(page.locator("#rounds-note")).to_have_text(
        "Connection back: 1 finding kept on this phone was sent and recorded.", timeout=10_000
    )
    expect(link).to_have_text("Rounds")
    expect(page.locator("#outbox")).to_be_hidden()
    page.screenshot(path=str(ARTIFACTS / "rounds-sent-390.png"), full_page=True)
    rows = cases.audit.list(subject="frontage:main-st-103")
    [found] = [a for a in rows if a.action == seen][len(before) :]
    assert found.detail["seen"] == "not cleared"
    # The time of the tap (the dashboard's clock stands still at the storm's end; the phone's
    # moved on a little), not the time it arrived.
    at = datetime.fromisoformat(found.detail["at"])
    assert dashboard.storm.end < at < dashboard.storm.end + timedelta(minutes=1)
    # Its answer lost, the phone sends it again under the same key: nothing more is recorded.
    [kept] = [
        a for a in rows if a.action == "inspection.tap" and a.detail["at"] == found.detail["at"]
    ]
    again = dashboard.login("walker").post(
        "/api/rounds/main-st-103/taps",
        json={"tap": "not_cleared", "at": found.detail["at"], "key": kept.detail["key"]},
    )
    assert again.json()["repeated"] is True
    rows = cases.audit.list(subject="frontage:main-st-103")
    assert len([a for a in rows if a.action == seen]) == len(before) + 1
    logging_out_leaves_nothing_of_the_round(page, dashboard)
    assert errors == []
    page.close()


def walker_on_rounds(
    browser_context: BrowserContext, dashboard: Dashboard
) -> tuple[Page, list[str]]:
    """The inspector "walker" on a phone, from the log-in to the Rounds page (its worker
    running it, so the page and its files are kept); with the page's uncaught errors."""
    cases = dashboard.storm.cases
    if "walker" not in {u.username for u in cases.dashboard.list_users()}:
        cases.dashboard.add_user("walker", cheap_password_hash(), role_of("inspector"), who="test")
    browser_context.clear_cookies()
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{dashboard.url}/login")
    page.get_by_label("User name").fill("walker")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "today")
    page.get_by_role("link", name="Rounds").click()
    expect(page).to_have_url(f"{dashboard.url}/rounds/")
    expect(page.locator("body")).to_have_attribute("data-ready", "rounds")
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    return page, errors


def logging_out_leaves_nothing_of_the_round(page: Page, dashboard: Dashboard) -> None:
    """No kept page, round, session or worker after "Log out" (the outbox, empty here,
    would stay: its findings wait for their inspector)."""
    kept = (
        "async () => [(await caches.keys()).length,"
        " (await navigator.serviceWorker.getRegistrations()).length,"
        " Object.keys(localStorage).filter(k => k.startsWith('sidewalk-rounds')).length]"
    )
    assert page.evaluate(kept) == [1, 1, 2]  # the worker's cache; the round and who, kept
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{dashboard.url}/login")
    assert page.evaluate(kept) == [0, 0, 0]
