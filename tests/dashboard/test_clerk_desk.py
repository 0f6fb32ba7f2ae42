"""The clerk's desk in the clerk's words, in headless Chromium on the real app.

The Overview names each frontage by its address (no column of record ids); a clock is
marked "unconfirmed" only while a value it used waits for the Village's confirmation
(the clock's own flag is the profile's mark when it started); the Site page's pole
chooser names the pole as registered; and a slow read for a page the clerk has left
never paints over the page they went to.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta

import pytest

from sidewalk.core.profile import Rule, load_profile
from sidewalk.storage.cases import Cause, RuleUse
from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, Dashboard
from tests.dashboard.test_browser import fresh_page, no_sideways_scroll

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed (apt-get install chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import Browser, BrowserContext, Page, Route, expect

POLE = "pole-main-01"
POLE_NAME = "Main Street north pole"
# § 370-10 C sets no period to remove snow pushed onto the street: the profile's 24 hours
# is unconfirmed until the Board confirms it.
DEPOSIT = "snow_and_ice.deposit_removal_after_notice"


@pytest.fixture(scope="module")
def desk(dashboard: Dashboard) -> Dashboard:
    """The pole named as the Village registered it, and a § 370-10 C finding's clock
    running on 101 Main St with the profile's unconfirmed period, not yet confirmed."""
    cases, end = dashboard.storm.cases, dashboard.storm.end
    pole = cases.registry.get_device(POLE)
    cases.registry.upsert_device(POLE, pole.site, label=POLE_NAME, who="test")
    rule = dict(load_profile().rules())[DEPOSIT]
    assert isinstance(rule, Rule)
    clock = cases.clocks.open(
        "main-st-101", "inspection", "notice_period", end - timedelta(hours=1),
        Cause(kind="person", ts=int(end.timestamp() * 1000) - 3_600_000, who="Officer Quinn"),
        deadline=end + timedelta(hours=23), citation="§ 370-10 C",
        rules=[RuleUse.from_rule(DEPOSIT, rule)], key="test/deposit/101",
    )  # fmt: skip
    assert clock.unconfirmed
    # The demo village confirmed every value; here the Board's confirmation on record is of
    # another period (48 hours), so the clock's 24 hours still waits for one.
    cases.confirmations.confirm(
        DEPOSIT, "48 hours", confirmed_by="Village Board", reference="minutes of 2025",
        confirmed_at=end - timedelta(days=300), who="test",
    )  # fmt: skip
    return dashboard


@pytest.fixture(scope="module")
def browser_context(chromium_browser: Browser, desk: Dashboard) -> Iterator[BrowserContext]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium_browser.new_context(viewport={"width": 1366, "height": 900})
    yield context
    context.close()


def open_page(page: Page, name: str) -> None:
    page.evaluate(f"location.hash = '#{name}'")
    expect(page.locator("body")).to_have_attribute("data-ready", name)


def shots(page: Page, name: str) -> None:
    """The page at a desk (1366 px) and on a phone (390 px), without sideways scrolling."""
    for width, height in ((1366, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(100)
        assert no_sideways_scroll(page), (name, width)
        page.screenshot(path=str(ARTIFACTS / f"27-{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1366, "height": 900})


def clock_row(page: Page) -> str:
    return page.locator("#clock-rows tr").filter(has_text="101 Main St").inner_text()


def test_the_overview_names_frontages_by_address_and_unmarks_a_confirmed_clock(
    browser_context: BrowserContext, desk: Dashboard
) -> None:
    cases = desk.storm.cases
    page, errors = fresh_page(browser_context, desk, "clerk", 1366, 900)
    open_page(page, "overview")
    table = page.locator("#frontage-table").inner_text()
    for f in cases.registry.list_frontages():
        assert f.street_address in table
        assert f.id not in table, f.id  # its address names it; the record id is ours
    headers = page.locator("#frontage-table thead th").all_inner_texts()
    assert headers == ["Address", "State", "Deadline", "Owner"], headers
    # On a phone the table scrolls in its own box: the Owner column is not cut off.
    box = page.locator("#frontage-table").locator("xpath=ancestor::div[@class='scroll']")
    expect(box).to_have_count(1)
    assert "unconfirmed" in clock_row(page)
    assert [c["unconfirmed"] for c in desk.login("clerk").get("/api/overview").json()["clocks"]]
    shots(page, "overview")
    admin = desk.login("admin")
    confirmed = admin.post(
        "/api/admin/confirmations",
        json={"name": DEPOSIT, "confirmed_by": "Village Board", "confirmed_on": "2026-12-01",
              "reference": "minutes of Dec 1, 2026, item 4"},
    )  # fmt: skip
    assert confirmed.status_code == 200, confirmed.text
    open_page(page, "today")
    open_page(page, "overview")
    assert "unconfirmed" not in clock_row(page)
    assert "unconfirmed" not in page.locator("main").inner_text()
    clerk = desk.login("clerk")
    for path in ("/api/overview/page", "/api/overview", "/api/clocks?active=true"):
        clocks = clerk.get(path).json()
        clocks = clocks["clocks"] if isinstance(clocks, dict) else clocks
        assert [c["unconfirmed"] for c in clocks if c["frontage"] == "main-st-101"] == [False], path
    assert errors == []


def test_the_site_page_names_the_pole(browser_context: BrowserContext, desk: Dashboard) -> None:
    page, errors = fresh_page(browser_context, desk, "clerk", 1366, 900)
    open_page(page, "site")
    chooser = page.get_by_label("Pole")
    expect(chooser.locator("option")).to_have_text([POLE_NAME])
    assert chooser.input_value() == POLE  # the id is what the page asks the API for
    assert POLE not in page.locator("main").inner_text()
    shots(page, "site")
    assert errors == []


def test_a_slow_read_for_a_page_left_never_paints_over_the_next(
    browser_context: BrowserContext, desk: Dashboard
) -> None:
    page, errors = fresh_page(browser_context, desk, "clerk", 1366, 900)
    held: list[Route] = []
    # The Site page's read, answered later.
    page.route("**/api/devices", lambda route: held.append(route))  # noqa: PLW0108
    page.evaluate("location.hash = '#site'")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the Site page did not ask for the poles"
    open_page(page, "overview")  # the clerk went on before the answer came
    expect(page.locator("h1")).to_contain_text("overview")
    with contextlib.suppress(Exception):  # its request was cancelled: refused, or ignored
        held[0].continue_()  # the late answer
    page.unroute("**/api/devices")
    page.wait_for_timeout(1000)
    expect(page.locator("h1")).to_contain_text("overview")
    expect(page.locator("#site-device")).to_have_count(0)
    assert page.evaluate("document.body.dataset.ready") == "overview"
    # Back to the Site page: it reads and draws as ever.
    open_page(page, "site")
    expect(page.get_by_label("Pole").locator("option")).to_have_text([POLE_NAME])
    assert errors == []


def test_a_clock_that_comes_live_is_drawn_as_a_reload_draws_it(
    browser_context: BrowserContext, desk: Dashboard
) -> None:
    """A clock started while the Overview is open reaches it over the live event stream:
    its row carries the "unconfirmed" mark a reload shows (it came unmarked until then)."""
    cases, end = desk.storm.cases, desk.storm.end
    # The Board's confirmation in force is again of another period: 24 hours waits for one.
    cases.confirmations.confirm(
        DEPOSIT, "48 hours", confirmed_by="Village Board", reference="minutes of 2025",
        confirmed_at=end - timedelta(days=299), who="test",
    )  # fmt: skip
    page, errors = fresh_page(browser_context, desk, "clerk", 1366, 900)
    open_page(page, "overview")
    expect(page.locator("#live-status")).to_have_text("live")
    rule = dict(load_profile().rules())[DEPOSIT]
    assert isinstance(rule, Rule)
    cause = Cause(kind="person", ts=int(end.timestamp() * 1000), who="Officer Quinn")
    clock = cases.clocks.open(
        "main-st-103", "inspection", "notice_issued", end, cause, citation="§ 370-10 C",
        rules=[RuleUse.from_rule(DEPOSIT, rule)], key="test/deposit/103-live",
    )  # fmt: skip
    assert clock.unconfirmed
    cases.clocks.record_transition(
        clock.id, "notice_period", end + timedelta(minutes=1), cause,
        deadline=end + timedelta(hours=24),
    )  # fmt: skip
    row = page.locator(f'#clock-rows tr[data-clock="{clock.id}"]')
    expect(row).to_have_count(1)
    expect(row.locator("td").nth(1)).to_contain_text("unconfirmed")
    live = row.locator("td").all_inner_texts()[:3]
    open_page(page, "today")
    open_page(page, "overview")
    expect(row).to_have_count(1)
    assert row.locator("td").all_inner_texts()[:3] == live
    assert "unconfirmed" in live[1]
    assert errors == []
