"""Stored XSS from the county's owner names and addresses, as an outsider would try it.

Every page of the dashboard is opened in headless Chromium as the administrator (who
sees every page and every owner) on a storm whose owners are markup, event handlers,
``javascript:`` links, a formula, a text-direction override and a 100-character word.
The judge is the DOM, not whether a script ran (the page's CSP would stop an inline
script even if one were injected): no element or attribute came from the data, the
hostile text is on the page as text, no CSP violation was reported. The letters, the
print batch and the exports are read as the clerk gets them.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from urllib.parse import quote

import pytest

# Ignored: openpyxl ships no type hints.
from openpyxl import load_workbook  # type: ignore[import-untyped]
from pypdf import PdfReader

from tests.dashboard.conftest import CHROMIUM, PASSWORD
from tests.security.attack_village import (
    ADDRESS,
    FORMULA,
    LONG,
    OWNERS,
    RTL,
    Village,
)

if CHROMIUM.exists():
    from playwright.sync_api import Browser, Page, sync_playwright

# Recorded before any page script runs: CSP violations and whether a payload ran.
WATCH = """
window.__xss = 0;
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
"""
# Whatever markup the data could have made: inline scripts, handler attributes,
# javascript: URLs, srcdoc frames, the payloads' own tags.
INJECTED = """() => {
  const found = [];
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.startsWith("on") || a.name === "srcdoc"
          || (["href", "src", "action", "formaction", "xlink:href"].includes(a.name)
              && v.startsWith("javascript:")))
        found.push(`${el.tagName} ${a.name}=${a.value}`);
    }
    if (el.tagName === "SCRIPT" && !el.src.includes("/static/")) found.push("inline script");
  }
  for (const sel of ["img[src='x']", "svg svg", "main iframe[srcdoc]", "a[href^='javascript']"])
    for (const el of document.querySelectorAll(sel)) found.push(`${sel}`);
  return {found, xss: window.__xss, csp: window.__csp, text: document.body.innerText,
          wide: document.documentElement.scrollWidth};
}"""


@pytest.fixture(scope="module")
def village(hostile_village: Village) -> Village:
    return hostile_village


@pytest.fixture(scope="module")
def admin_page(village: Village) -> Iterator[Page]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    from tests.dashboard.conftest import CHROMIUM_ARGS

    with sync_playwright() as playwright:
        browser: Browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        context.add_init_script(WATCH)
        page = context.new_page()
        page.goto(f"{village.url}/login")
        page.get_by_label("User name").fill("admin")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_selector("body[data-ready='today']")
        try:
            yield page
        finally:
            context.close()
            browser.close()


def every_page(village: Village) -> list[str]:
    """Each page of the single-page dashboard (its hash routes, app.js ``PAGES``), with
    every notice and property of the storm and a search for a hostile name."""
    # Today last: the login lands there, and a hash route must change to be drawn again.
    pages = "overview notices rounds defects cold devices poles admin exports map today"
    cases = village.storm.cases
    return [
        "site/pole-main-01",
        "poles/pole-main-01",
        *(f"notice/{n.number}" for n in cases.notices.list()),
        *(f"property/{quote(f.id)}" for f in cases.registry.list_frontages()),
        "search/i",  # owners (Alice, Christoph) and addresses (Main St) alike
        *pages.split(),
    ]


def test_no_page_turns_an_owner_name_or_address_into_markup(
    village: Village, admin_page: Page
) -> None:
    page = admin_page
    shown = ""
    for route in every_page(village):
        page.evaluate("document.body.dataset.ready = ''")
        page.goto(f"{village.url}/#{route}")
        # Set once the page's own reads are drawn (app.js ``route``).
        page.wait_for_selector(f"body[data-ready='{route.split('/')[0]}']", timeout=10_000)
        seen = page.evaluate(INJECTED)
        assert seen["found"] == [], (route, seen["found"])
        assert seen["xss"] == 0, route
        assert seen["csp"] == [], (route, seen["csp"])
        # A 100-character word in a name does not push the page off the screen.
        assert seen["wide"] <= 1366, (route, seen["wide"])
        shown += seen["text"]
    for name, ready in (("/rounds/", "body[data-ready='rounds']"), ("/login", "form")):
        page.goto(f"{village.url}{name}")
        page.wait_for_selector(ready, state="attached")
        seen = page.evaluate(INJECTED)
        assert (seen["found"], seen["xss"], seen["csp"]) == ([], 0, []), name
    # The pages did show the hostile values: as text, exactly as stored.
    for owner, lines in OWNERS.values():
        assert owner in shown, owner
        assert lines[0] in shown, lines[0]
    assert ADDRESS in shown


def pdf_text(body: bytes) -> tuple[str, bytes]:
    reader = PdfReader(io.BytesIO(body))
    return "\n".join(p.extract_text() for p in reader.pages), body


def test_letters_and_the_print_batch_print_the_names_as_text(village: Village) -> None:
    clerk = village.login("clerk")
    notices = village.storm.cases.notices.list()
    owners = {n.owner_name for n in notices}
    assert owners & {o for o, _ in OWNERS.values()}, "the notices carry no hostile owner"
    # The first letter by its own route, the others as a print batch: each letter is
    # drawn once (about half a second of CPU each).
    letter = clerk.get(f"/api/notices/{quote(notices[0].number)}/letter.pdf")
    batch = clerk.get("/print/notices", params={"n": [n.number for n in notices[1:]]})
    assert notices[1:], "a batch needs a second notice"
    drawn = ((letter, {notices[0].owner_name}), (batch, {n.owner_name for n in notices[1:]}))
    for response, names in drawn:
        assert response.status_code == 200, response.text[:200]
        assert response.headers["content-type"] == "application/pdf"
        text, raw = pdf_text(response.content)
        # No active content: scripts, actions, launched files, links, form posts.
        for key in (b"/JavaScript", b"/JS", b"/Launch", b"/URI", b"/AA", b"/SubmitForm"):
            assert key not in raw, key
        # Opening the file may go to a page (a destination array), never run an action.
        assert not re.search(rb"/OpenAction\s*<<", raw)
        flat = " ".join(text.split())
        for owner in names:
            assert " ".join(owner.split()) in flat, owner


def test_exports_keep_hostile_owners_as_text_cells(village: Village) -> None:
    clerk = village.login("clerk")
    notices = clerk.get("/api/exports/notices.csv")
    assert notices.status_code == 200
    rows = list(csv.reader(io.StringIO(notices.text.lstrip("\ufeff"))))
    column = rows[0].index("Owner of record")
    cells = [r[column] for r in rows[1:]]
    assert "'" + FORMULA in cells  # the formula stays text (OWASP's leading quote)
    assert not [c for c in cells if re.match(r"[=+\-@\t\r]", c)]
    book = load_workbook(io.BytesIO(clerk.get("/api/exports/notices.xlsx").content)).active
    owners = [c for c in book.iter_rows(min_row=2) if c[column].value == FORMULA]
    assert owners, "the formula owner is missing from the spreadsheet"
    assert all(c[column].data_type == "s" for c in owners)
    # Each notice's owner and mailing address as stored, after the guard quote if any.
    text = "\n".join(cell for row in rows for cell in row)
    for n in village.storm.cases.notices.list():
        for value in (n.owner_name, *n.owner_address_lines):
            assert value in text, value
    assert RTL in text
    assert LONG in text
