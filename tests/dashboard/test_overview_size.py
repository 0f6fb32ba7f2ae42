"""The Overview of a big village in Chromium: a page of rows at a time, a filter for the rest,
the map on one canvas, and a clock event applied to its row (that row only) and its shape
without reading the village again.

Seeding hundreds of frontages costs minutes, so the page's one read (``/api/overview/page``)
is answered with the shared storm's own answer widened to 130 frontages and 60 running
clocks, and the event stream with one transition; the page's code is what is tested.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, PASSWORD, Dashboard

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed (apt-get install chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import Browser, Page, Route, expect

    from tests.dashboard.test_accessibility import axe_source, axe_violations

FRONTAGES, CLOCKS = 130, 60


@dataclass
class BigPage:
    page: Page
    categories: dict[str, Any]  # the map's colours
    reads: list[str] = field(default_factory=list)  # the page's reads of /api/overview/page
    events: list[str] = field(default_factory=list)  # for the event stream's next connection


@pytest.fixture(scope="module")
def dashboard(shared_dashboard: Dashboard) -> Dashboard:
    """Nothing here changes a record: the package's shared storm."""
    return shared_dashboard


def moved(geometry: dict[str, Any], dx: float, dy: float) -> dict[str, Any]:
    """``geometry`` (GeoJSON) moved by ``dx``, ``dy`` degrees."""

    def move(c: Any) -> Any:
        return [c[0] + dx, c[1] + dy] if isinstance(c[0], float | int) else [move(x) for x in c]

    return {**geometry, "coordinates": move(geometry["coordinates"])}


def big_village(page: dict[str, Any]) -> dict[str, Any]:
    """The storm's Overview widened: frontage i at "{101 + 2i} Elm St", owned by "Owner i",
    its walk the storm's first one moved to its own place on a grid of 13 a row; the first
    ``CLOCKS`` have a running clearing clock, soonest deadline first."""
    big = copy.deepcopy(page)
    shape = page["shapes"][0]
    big["frontages"], big["clocks"], big["shapes"] = [], [], []
    for i in range(FRONTAGES):
        fid, address = f"big-{i:03d}", f"{101 + 2 * i} Elm St"
        deadline = f"2026-12-13T{i // 10:02d}:{i % 10:02d}:00+00:00" if i < CLOCKS else None
        state = "clearing_period" if deadline else "complied"
        category = "clearing" if deadline else "clear"
        big["frontages"].append({"id": fid, "address": address, "kind": "clearing", "state": state,
                                 "category": category, "deadline": deadline,
                                 "owner": f"Owner {i}"})  # fmt: skip
        geometry = moved(shape["geometry"], 0.001 * (i % 13), 0.0004 * (i // 13))
        big["shapes"].append({"id": fid, "category": category, "geometry": geometry})
        if deadline:
            big["clocks"].append({"id": 9000 + i, "frontage": fid, "address": address,
                                  "kind": "clearing", "state": state, "category": category,
                                  "deadline": deadline, "unconfirmed": False})  # fmt: skip
    big["counts"] = {"clearing": CLOCKS, "clear": FRONTAGES - CLOCKS}
    return big


def big_map(big: dict[str, Any]) -> dict[str, Any]:
    """``/api/map`` for the widened village (``big_village``'s frontages and walks)."""
    where = {f["id"]: f for f in big["frontages"]}
    features = [
        {"type": "Feature", "id": s["id"], "geometry": s["geometry"],
         "properties": {"frontage": s["id"], "address": where[s["id"]]["address"],
                        "geometry_source": "records", "state": where[s["id"]]["state"],
                        "category": s["category"]}}
        for s in big["shapes"]
    ]  # fmt: skip
    return {"type": "FeatureCollection", "features": features, "streets": []}


def transition(clock: int, frontage: str, to: str, category: str, active: bool) -> str:
    event = {"type": "transition", "id": clock, "clock_id": clock, "clock_kind": "clearing",
             "frontage": frontage, "from": "clearing_period", "to": to, "category": category,
             "at": "2026-12-12T18:00:00+00:00", "deadline": None, "active": active,
             "cause": "deadline", "detected_ms": 0}  # fmt: skip
    return f"event: transition\ndata: {json.dumps(event)}\n\n"


# A frontage's shape on the canvas map: the colour painted at its middle and where that
# middle is on the screen.
SHAPE_AT = """(id) => {
  const canvas = document.querySelector("canvas.geo-canvas");
  const [x, y, w, h] = canvas.shapes.find((s) => s.id === id).box;
  const k = canvas.width / 1000, box = canvas.getBoundingClientRect(), on = box.width / 1000;
  const [mx, my] = [Math.round((x + w / 2) * k), Math.round((y + h / 2) * k)];
  const px = canvas.getContext("2d").getImageData(mx, my, 1, 1).data;
  const hex = "#" + [px[0], px[1], px[2]].map((v) => v.toString(16).padStart(2, "0")).join("");
  return { hex, x: box.left + (x + w / 2) * on, y: box.top + (y + h / 2) * on };
}"""


def painted(page: Page, frontage: str, color: str) -> dict[str, Any]:
    """Waits until ``frontage``'s shape is painted ``color`` (a flash may come first); where
    its middle is on the screen. (The page's CSP refuses ``wait_for_function``'s eval.)"""
    deadline = time.monotonic() + 5
    while True:
        at: dict[str, Any] = page.evaluate(SHAPE_AT, frontage)
        if at["hex"] == color:
            return at
        assert time.monotonic() < deadline, (frontage, at["hex"], color)
        page.wait_for_timeout(50)


@pytest.fixture(scope="module")
def big_page(chromium_browser: Browser, dashboard: Dashboard) -> Iterator[BigPage]:
    """The Overview over the widened village, logged in as the clerk. The event stream
    sends what the test puts in ``events``, on its next connection."""
    real = dashboard.login("clerk").get("/api/overview/page").json()
    village = big_village(real)
    body, map_body = json.dumps(village), json.dumps(big_map(village))
    context = chromium_browser.new_context(
        viewport={"width": 1366, "height": 900}, service_workers="block"
    )
    big = BigPage(context.new_page(), real["categories"])

    def overview(route: Route) -> None:
        big.reads.append(route.request.url)
        route.fulfill(status=200, content_type="application/json", body=body)

    def map_read(route: Route) -> None:
        route.fulfill(status=200, content_type="application/json", body=map_body)

    def stream(route: Route) -> None:
        # Each connection gets what is waiting, then ends; the page reconnects in 100 ms.
        waiting = "".join(big.events)
        big.events.clear()
        route.fulfill(status=200, content_type="text/event-stream",
                      body=f"retry: 100\nevent: hello\ndata: {{}}\n\n{waiting}")  # fmt: skip

    page = big.page
    page.route("**/api/overview/page", overview)
    page.route("**/api/events", stream)
    page.route("**/api/map", map_read)
    page.goto(f"{dashboard.url}/login")
    page.get_by_label("User name").fill("clerk")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "today")
    page.goto(f"{dashboard.url}/#overview")
    expect(page.locator("body")).to_have_attribute("data-ready", "overview")
    yield big
    context.close()


def test_a_big_village_overview_draws_a_page_of_rows_and_finds_the_rest(
    big_page: BigPage,
) -> None:
    page = big_page.page
    # The whole map on one canvas (no shape of its own per frontage), each in its colour;
    # the pointer names the frontage under it.
    expect(page.locator(f'canvas[data-shapes-drawn="{FRONTAGES}"]')).to_have_count(1)
    expect(page.locator("[data-frontage-shape]")).to_have_count(0)
    colors = {k: c["color"] for k, c in big_page.categories.items()}
    painted(page, "big-000", colors["clearing"])
    at = painted(page, "big-129", colors["clear"])
    page.mouse.move(at["x"], at["y"])
    expect(page.locator("canvas.geo-canvas")).to_have_attribute(
        "title", "359 Elm St: Cleared in time"
    )
    clocks, frontages = page.locator("#clock-rows tr"), page.locator("#frontage-rows tr")
    expect(clocks).to_have_count(50)
    expect(frontages).to_have_count(100)
    expect(clocks.first).to_contain_text("101 Elm St")  # soonest deadline first
    expect(page.get_by_text("Showing 100 of 130 frontages.")).to_be_visible()
    page.get_by_role("button", name="Show 100 more").click()
    expect(frontages).to_have_count(FRONTAGES)
    expect(page.get_by_role("button", name="Show 100 more")).to_be_hidden()
    # Any row by what the clerk knows: an owner's name, an address.
    page.get_by_label("Find an address, state or owner").fill("owner 129")
    expect(frontages).to_have_count(1)
    expect(frontages.first).to_contain_text("359 Elm St")
    expect(
        page.get_by_text("Showing 1 of the 1 frontages that match (130 in all).")
    ).to_be_visible()
    page.get_by_label("Find a frontage or state").fill("219 Elm St")
    expect(clocks).to_have_count(1)
    page.get_by_label("Find a frontage or state").fill("")
    expect(clocks).to_have_count(50)
    # The page never scrolls sideways (a wide table scrolls in its own box); axe finds nothing.
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        # Nor does the clock table: its time left is in sight on a phone too.
        box = page.locator("#clock-rows").locator("xpath=ancestor::div[@class='scroll']")
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth"), width
        page.screenshot(path=str(ARTIFACTS / f"overview-big-{width}.png"))
    page.set_viewport_size({"width": 1366, "height": 900})
    assert axe_violations(page, axe_source()) == []


def test_a_clock_event_changes_its_row_without_reading_the_village_again(
    big_page: BigPage,
) -> None:
    page, reads = big_page.page, big_page.reads
    read_before = len(reads)
    page.get_by_label("Find a frontage or state").fill("")
    # The rows drawn now, marked: an event redraws its own row and moves no other.
    page.evaluate("document.querySelectorAll('#clock-rows tr').forEach((r) => { r.kept = true; })")
    # The first clock is snowing again (no deadline: it goes to the end); the second ended.
    big_page.events += [
        transition(9000, "big-000", "snowing", "snowing", active=True),
        transition(9001, "big-001", "complied", "clear", active=False),
    ]
    clocks = page.locator("#clock-rows tr")
    expect(page.locator('#clock-rows tr[data-clock="9001"]')).to_have_count(0)
    expect(page.get_by_text("Showing 50 of 59 running clocks", exact=False)).to_be_visible()
    expect(clocks.first).to_contain_text("105 Elm St")
    expect(page.locator('#clock-rows tr[data-clock="9000"]')).to_have_count(0)  # now last
    kept = "[...document.querySelectorAll('#clock-rows tr')].map((r) => r.kept === true)"
    # 9002–9049 kept; 9051 drawn as it came onto the page (and 9050, if the two events
    # came in two frames).
    marks = page.evaluate(kept)
    assert marks[:48] == [True] * 48, marks
    assert marks[49:] == [False], marks
    page.get_by_label("Find a frontage or state").fill("101 Elm St")
    expect(page.locator('#clock-rows tr[data-clock="9000"]')).to_contain_text("Snowing")
    # Its frontage's row and its shape on the map follow the event too.
    page.get_by_label("Find an address, state or owner").fill("big-001")
    row = page.locator('#frontage-rows tr[data-frontage="big-001"]')
    expect(row).to_contain_text("Cleared in time")
    at = painted(page, "big-000", big_page.categories["snowing"]["color"])
    assert len(reads) == read_before  # no re-read of the whole village
    # A click on a frontage on the map opens its property page.
    page.mouse.click(at["x"], at["y"])
    expect(page).to_have_url(re.compile(r"/#property/big-000$"))
    # Its page drawn before the next test moves on (a route still reading would draw over it).
    expect(page.locator("body")).to_have_attribute("data-ready", "property")


def test_a_big_village_map_page_is_one_canvas_and_a_narrowed_one_has_its_shapes(
    big_page: BigPage,
) -> None:
    page = big_page.page
    page.evaluate("location.hash = '#map'")
    expect(page.locator("body")).to_have_attribute("data-ready", "map")
    expect(page.locator(f'canvas[data-shapes-drawn="{FRONTAGES}"]')).to_have_count(1)
    expect(page.locator("[data-frontage-shape]")).to_have_count(0)
    at = painted(page, "big-129", big_page.categories["clear"]["color"])
    page.mouse.move(at["x"], at["y"])
    expect(page.locator("canvas.geo-canvas")).to_have_attribute(
        "title", "359 Elm St: Clear / complied"
    )
    page.mouse.move(0, 0)  # off the map: the shape under the pointer is outlined
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        painted(page, "big-129", big_page.categories["clear"]["color"])  # drawn at that width
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(ARTIFACTS / f"map-big-{width}.png"))
    page.set_viewport_size({"width": 1366, "height": 900})
    # Narrowed to a state: few enough for a shape of their own each, reached by Tab.
    page.locator("#map-state").select_option(label="Clear / complied")
    expect(page.locator("#map-count")).to_have_text("70 of 130 frontages shown.")
    expect(page.locator("[data-frontage-shape]")).to_have_count(70)
    page.locator("#map-state").select_option(label="Every state")
    at = painted(page, "big-000", big_page.categories["clearing"]["color"])
    page.mouse.click(at["x"], at["y"])
    expect(page).to_have_url(re.compile(r"/#property/big-000$"))
    # Its page drawn before the next test moves on (a route still reading would draw over it).
    expect(page.locator("body")).to_have_attribute("data-ready", "property")
