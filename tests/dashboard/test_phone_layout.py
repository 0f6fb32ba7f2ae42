"""On a phone (390 px) and at a desk (1366 px), in headless Chromium on the real app: a
message (the toast) never lies over a button, and a state's badge stays on one line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, Dashboard
from tests.dashboard.test_browser import fresh_page, no_sideways_scroll

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed (apt-get install chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import Browser, BrowserContext, Page, expect

# The boxes of the toast and of every button or button-like link on the screen that
# it overlaps.
COVERED = """() => {
  const t = document.getElementById("toast").getBoundingClientRect();
  const out = [];
  for (const b of document.querySelectorAll("main button, main a.button-link")) {
    const r = b.getBoundingClientRect();
    if (!r.width || !r.height || r.bottom <= 0 || r.top >= innerHeight) continue;
    if (r.left < t.right && t.left < r.right && r.top < t.bottom && t.top < r.bottom) {
      out.push(b.textContent.trim());
    }
  }
  return out;
}"""

# Badges taller than one line of their own text.
WRAPPED = """() => [...document.querySelectorAll(".badge")]
  .filter((b) => b.getBoundingClientRect().height > parseFloat(getComputedStyle(b).fontSize) * 2)
  .map((b) => b.textContent)"""


@pytest.fixture(scope="module")
def dashboard(shared_dashboard: Dashboard) -> Dashboard:
    """Nothing here changes a record: the package's shared storm."""
    return shared_dashboard


@pytest.fixture(scope="module")
def browser_context(chromium_browser: Browser, dashboard: Dashboard) -> Iterator[BrowserContext]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium_browser.new_context(viewport={"width": 390, "height": 844})
    yield context
    context.close()


def open_page(page: Page, name: str) -> None:
    page.evaluate(f"location.hash = '#{name}'")
    expect(page.locator("body")).to_have_attribute("data-ready", name)


@pytest.mark.parametrize("width", [390, 1366])
def test_the_toast_leaves_the_buttons_clear_and_badges_stay_on_one_line(
    browser_context: BrowserContext, dashboard: Dashboard, width: int
) -> None:
    page, errors = fresh_page(browser_context, dashboard, "clerk", width, 844)
    open_page(page, "notices")
    page.get_by_role("button", name="Print selected letters").click()
    toast = page.locator("#toast")
    expect(toast).to_have_class("toast show")
    expect(toast).to_have_text("Select the letters to print first.")
    page.wait_for_timeout(300)  # faded in
    assert page.evaluate(COVERED) == [], width
    assert page.evaluate(WRAPPED) == [], width
    assert no_sideways_scroll(page), width
    page.screenshot(path=str(ARTIFACTS / f"toast-notices-{width}.png"))
    # The bottom of the page: its last buttons on the screen under where a toast shows.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.get_by_role("button", name="Print selected letters").evaluate("b => b.click()")
    page.wait_for_timeout(300)
    assert page.evaluate(COVERED) == [], width
    page.screenshot(path=str(ARTIFACTS / f"toast-notices-bottom-{width}.png"))
    for name in ("overview", "today"):
        open_page(page, name)
        assert page.evaluate(WRAPPED) == [], (name, width)
        assert no_sideways_scroll(page), (name, width)
        page.screenshot(path=str(ARTIFACTS / f"badges-{name}-{width}.png"), full_page=True)
    assert errors == []
