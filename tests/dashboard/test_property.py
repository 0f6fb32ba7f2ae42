"""A page per property, the search box and the offline map.

The API tests run on a small village built in a fresh SQLite case store (a
parcel with two frontages, an owner of record who sold, a person in charge,
a violation with its camera frame, a notice, a bill part paid); the browser
tests on the replayed first storm in Debian Chromium at 390, 1366 and 1920 px.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import cv2
import numpy as np
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sidewalk.core.contract import SnowMeasurement
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.dashboard.routes.property import defect_size, feet, measured_width
from sidewalk.storage.cases import CaseStore, Cause
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, PASSWORD, SECRET_KEY, free_port
from tests.dashboard.test_accessibility import axe_source, axe_violations
from tests.dashboard.test_browser import no_sideways_scroll, plain_words, shot

NOW = datetime(2026, 12, 12, 18, 0, tzinfo=UTC)
LINE = {"type": "LineString", "coordinates": [[-88.7240, 43.3125], [-88.7238, 43.3125]]}
LOT = {
    "type": "Polygon",
    "coordinates": [
        [[-88.7241, 43.3126], [-88.7237, 43.3126], [-88.7237, 43.3129], [-88.7241, 43.3129],
         [-88.7241, 43.3126]]
    ],
}  # fmt: skip


Village = tuple[TestClient, TestClient, str, FastAPI]


@pytest.fixture(scope="module")
def village(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Village]:
    """Clients for a clerk and a viewer over one corner property (read only: one village for
    the module); its notice number and frame's sha256; the app (the browser tests serve it)."""
    tmp_path = tmp_path_factory.mktemp("village")
    cases = CaseStore(f"sqlite:///{tmp_path / 'cases.sqlite3'}")
    cases.create_schema()
    timeseries = SqliteTimeSeriesStore(tmp_path / "ts.sqlite3")
    evidence = EvidenceStore(tmp_path / "evidence")
    reg = cases.registry
    reg.upsert_device("pole-1", "clyman")
    reg.upsert_owner("o-old", "Olga Older", ["1 Elm St", "Clyman, WI 53016"])
    reg.upsert_owner("o-new", "Nina Newer", ["PO Box 7", "Clyman, WI 53016"])
    reg.upsert_parcel(
        "026-0915-12-001", tax_parcel_id="T-12-001", site_address="201 Church St",
        place="Clyman", zip_code="53016", geometry=LOT, source="county", who="test",
    )  # fmt: skip
    reg.set_owner_of_record(
        "026-0915-12-001", "o-old", NOW - timedelta(days=900), source="county", who="test"
    )
    reg.set_owner_of_record(
        "026-0915-12-001", "o-new", NOW - timedelta(days=30), source="deed", who="test"
    )
    reg.add_occupant(
        "026-0915-12-001", "Pat Tenant", role="person in charge", phone="920-555-0101",
        effective_from=NOW - timedelta(days=20), who="test",
    )  # fmt: skip
    for fid, address, length in (("church-201", "201 Church St", 66.5), ("elm-2", "2 Elm St", 120)):
        reg.upsert_frontage(
            fid, site="clyman", parcel_number="T-12-001", street_address=address,
            length_ft=length, zone="residential", owner_id="o-new", device_id="pole-1",
            parcel_id="026-0915-12-001", walk_width_ft=5, corner=True,
        )  # fmt: skip
    reg.set_frontage_geometry("church-201", LINE)
    reg.upsert_owner("o-else", "Ed Elsewhere", ["9 Oak St"])
    reg.upsert_frontage(
        "oak-9", site="clyman", parcel_number="T-99-009", street_address="9 Oak St",
        length_ft=50, zone="residential", owner_id="o-else", device_id="pole-1",
    )  # fmt: skip
    # The decision: the deadline passed with 0 ft cleared, measured on a stored frame.
    ok, jpeg = cv2.imencode(".jpg", np.full((120, 160, 3), 235, np.uint8))
    assert ok
    sha = evidence.put(jpeg.tobytes())
    measured = NOW - timedelta(hours=3)
    timeseries.write_batch(
        [SnowMeasurement(device="pole-1", seq=7, ts=int(measured.timestamp() * 1000),
                         frontage="church-201", snow_cover_fraction=1.0, cleared_width_mm=0.0,
                         frame_sha256=sha)],
        sites={"pole-1": "clyman"},
    )  # fmt: skip
    cause = Cause(kind="reading", ts=int(NOW.timestamp() * 1000), device="pole-1")
    clock = cases.clocks.open("church-201", "clearing", "snowing", NOW - timedelta(hours=30), cause)
    cases.clocks.record_transition(clock.id, "violation", NOW - timedelta(hours=2), cause)
    violation = cases.clocks.record_violation(
        "church-201:clearing", "church-201", "snow_and_ice.clearing_deadline",
        NOW - timedelta(hours=2), clock_id=clock.id, citation="§ 370-10 A",
        evidence={"measured_width_mm": 0.0, "required_width_mm": 1219.2,
                  "measured_at": measured.isoformat(), "measured_by": "pole-1",
                  "measured_seq": 7},
    )  # fmt: skip
    notice = cases.notices.create(
        "notice/church-201", "clearing_violation", "church-201", NOW - timedelta(hours=1),
        violation_id=violation.id,
    )  # fmt: skip
    abatement = cases.bills.order_abatement(
        "abate/church-201", "church-201", "notice_expired", NOW - timedelta(hours=1),
        violation_id=violation.id,
    )  # fmt: skip
    cases.bills.add_expense(abatement.id, Decimal("85.00"), NOW, "Crew, 1 h")
    bill = cases.bills.create("bill/church-201", abatement.id, NOW)
    cases.bills.record_payment("pay-1", bill.id, Decimal("25.00"), NOW, method="check")
    for role in ("clerk", "viewer"):
        add_user(cases, role, PASSWORD, role, who="test")
    app = create_app(
        cases, timeseries, load_profile(), secret_key=SECRET_KEY, now=lambda: NOW,
        evidence=evidence,
    )  # fmt: skip
    clients = []
    for role in ("clerk", "viewer"):
        client = TestClient(app, client=("127.0.0.1", 40000))
        assert client.post("/api/session", json={"username": role, "password": PASSWORD}).is_success
        clients.append(client)
    yield clients[0], clients[1], f"{notice.number}|{sha}", app
    cases.close()
    timeseries.close()


def test_units_as_the_ordinance_writes_them_with_si_on_hover() -> None:
    assert feet(66.5).model_dump() == {"text": "66 ft 6 in", "si": "20.27 m"}
    assert feet(5).text == "5 ft"
    # A measured width as the letter states it: to the quarter inch with its uncertainty,
    # never reading as the 4 ft it falls short of.
    assert measured_width(1206.5, 50.8, 1219.2).model_dump() == {
        "text": "3 ft 11 1/2 in (± 2 in)", "si": "1206.5 mm ± 50.8 mm",
    }  # fmt: skip
    assert measured_width(1219.1, 50.8, 1219.2).text == "3 ft 11 3/4 in (± 2 in)"
    assert defect_size(19.05, 1.2, 19.05).model_dump() == {
        "text": "3/4 in (± 1/16 in)", "si": "19.1 mm ± 1.2 mm",
    }  # fmt: skip


def test_a_property_page_has_the_parcel_owners_clocks_notices_frames_and_bills(
    village: Village,
) -> None:
    clerk, _viewer, refs, _app = village
    number, sha = refs.split("|")
    page = clerk.get("/api/properties/church-201").json()
    # Asked by its parcel number, the same property.
    assert clerk.get("/api/properties/026-0915-12-001").json()["frontages"] == page["frontages"]
    assert page["address"] == "201 Church St"
    assert page["parcel"] == {
        "parcel": "026-0915-12-001", "tax_parcel": "T-12-001", "place": "Clyman",
        "zip_code": "53016",
    }  # fmt: skip
    assert page["owner"]["name"] == "Nina Newer"
    assert [(o["name"], o["until"] is None) for o in page["ownerships"]] == [
        ("Nina Newer", True), ("Olga Older", False),
    ]  # fmt: skip
    assert page["occupants"][0]["role"] == "Person in charge"
    assert [f["address"] for f in page["frontages"]] == ["201 Church St", "2 Elm St"]
    assert page["frontages"][0]["length"]["text"] == "66 ft 6 in"
    assert page["frontages"][0]["state"] == "Not cleared by the deadline"
    kinds = {f["properties"]["kind"] for f in page["map"]["features"]}
    assert kinds == {"parcel", "frontage"}
    assert page["clocks"][0]["kind"] == "Snow and ice clearing"
    assert page["notices"][0]["number"] == number
    assert page["notices"][0]["href"] == f"#notice/{number}"
    decision = page["decisions"][0]
    assert decision["what"] == "Snow and ice not cleared by the deadline"
    assert decision["required"] == {"text": "4 feet", "si": "1219.2 mm"}
    assert decision["frames"][0]["url"] == f"/api/frames/{sha}"
    assert decision["frames"][0]["caption"] == "Camera frame the decision measured"
    bill = page["bills"][0]
    assert (bill["amount"], bill["paid"], bill["balance"]) == ("85.00", "25.00", "60.00")
    assert bill["payments"][0]["method"] == "check"
    assert clerk.get("/api/properties/nowhere").status_code == 404


def test_owner_names_and_occupants_only_for_roles_that_may_see_them(
    village: Village,
) -> None:
    _clerk, viewer, _refs, _app = village
    page = viewer.get("/api/properties/church-201")
    assert page.status_code == 200
    assert "Nina" not in page.text
    assert "Pat Tenant" not in page.text
    assert viewer.get("/api/search", params={"q": "nina"}).json()["matches"] == []


def test_search_by_address_owner_parcel_and_notice_number(
    village: Village,
) -> None:
    clerk, _viewer, refs, _app = village
    number = refs.split("|")[0]

    def found(q: str) -> list[tuple[str, str, str]]:
        r = clerk.get("/api/search", params={"q": q}).json()
        return [(m["what"], m["label"], m["href"]) for m in r["matches"]]

    assert found("church") == [("Address", "201 Church St", "#property/church-201")]
    assert ("Owner", "Nina Newer", "#property/church-201") in found("NEWER")
    assert found("t-99")[0] == ("Tax parcel", "T-99-009", "#property/oak-9")
    assert ("Parcel", "026-0915-12-001", "#property/026-0915-12-001") in found("0915")
    assert found(number[-4:])[0] == ("Notice", number, f"#notice/{number}")
    assert clerk.get("/api/search", params={"q": ""}).status_code == 422


def test_the_map_has_the_registrys_parcels(village: Village) -> None:
    clerk, _viewer, _refs, _app = village
    parcels = clerk.get("/api/parcels").json()
    assert parcels["type"] == "FeatureCollection"
    assert [f["properties"]["parcel"] for f in parcels["features"]] == ["026-0915-12-001"]
    assert parcels["features"][0]["geometry"] == LOT


# ---------------------------------------------------------------- in Chromium
# The same small village, served by uvicorn (a replayed storm would add about 20 s).

if CHROMIUM.exists():
    from playwright.sync_api import Browser, BrowserContext, Page, expect

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed"
)


@pytest.fixture(scope="module")
def served(village: Village) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(village[3], host="127.0.0.1", port=port, log_level="warning",
                       timeout_graceful_shutdown=1)
    )  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def chromium(chromium_browser: Browser, served: str) -> Iterator[BrowserContext]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium_browser.new_context()
    yield context
    context.close()


def open_as(
    chromium: BrowserContext, url: str, role: str, width: int, height: int
) -> tuple[Page, list[str]]:
    chromium.clear_cookies()
    page = chromium.new_page()
    page.set_viewport_size({"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{url}/login")
    page.get_by_label("User name").fill(role)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "today")
    return page, errors


def views(page: Page, name: str) -> None:
    """No sideways scroll at 1366 px; screenshots at 1366, 1920 and 390 px."""
    for width, height in ((1366, 900), (1920, 1080), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        if width == 1366:
            assert no_sideways_scroll(page), width
        shot(page, f"{name}-{width}")


@needs_chromium
def test_map_click_opens_the_property_page_in_plain_words(
    chromium: BrowserContext, served: str, village: Village
) -> None:
    number = village[2].split("|")[0]
    page, errors = open_as(chromium, served, "clerk", 1366, 900)
    page.get_by_role("link", name="Map", exact=True).click()
    expect(page.locator("body")).to_have_attribute("data-ready", "map")
    expect(page.locator(".geo-map .parcel")).to_have_count(1)
    expect(page.locator("#map-count")).to_have_text("3 of 3 frontages shown.")
    # Filter by state (the legend and the filter say it in words) and by street.
    page.get_by_label("State", exact=True).select_option(label="Violation / notice")
    expect(page.locator("#map-count")).to_have_text("1 of 3 frontages shown.")
    expect(page.locator(".legend")).to_contain_text("Violation / notice (1)")
    page.get_by_label("State", exact=True).select_option(label="Every state")
    page.get_by_label("Street", exact=True).select_option(label="Church St")
    expect(page.locator("#map-count")).to_have_text("1 of 3 frontages shown.")
    views(page, "30-map")
    page.set_viewport_size({"width": 1366, "height": 900})
    assert axe_violations(page, axe_source()) == []  # WCAG 2.1 AA: no serious or critical
    # A walk drawn as a line has a zero-height box, which Playwright calls invisible: click
    # its middle (on the stroke) anyway, as a person does.
    page.locator('[data-frontage-shape="church-201"]').click(force=True)
    expect(page.locator("body")).to_have_attribute("data-ready", "property")
    expect(page.locator("#property-title")).to_have_text("201 Church St")
    expect(page.locator("#property-parcel")).to_contain_text("026-0915-12-001")
    expect(page.locator("#property-owner")).to_contain_text("Olga Older")
    expect(page.locator("#property-owner")).to_contain_text("Pat Tenant")
    expect(page.locator("#property-frontages .qty").first).to_have_attribute("title", "20.27 m")
    expect(page.locator("#property-map .frontage")).to_have_count(2)
    expect(page.locator("#property-decisions")).to_contain_text("Cleared 0 in (± 2 in) of 4 feet")
    expect(page.locator("#property-decisions img")).to_have_count(1)
    expect(page.locator("#property-bills")).to_contain_text("$25.00 by check")
    plain_words(page)
    views(page, "31-property")
    # The notice list links to the notice's own page.
    page.set_viewport_size({"width": 1366, "height": 900})
    page.locator("#property-notices").get_by_role("link", name=f"Open notice {number}").click()
    expect(page).to_have_url(re.compile(f"#notice/{number}$"))
    assert errors == []
    page.close()


@needs_chromium
def test_search_from_any_page_by_keyboard(
    chromium: BrowserContext, served: str, village: Village
) -> None:
    number = village[2].split("|")[0]
    page, errors = open_as(chromium, served, "clerk", 390, 844)
    box = page.get_by_role("combobox", name="Search by address, owner, parcel or notice number")
    page.keyboard.press("/")
    expect(box).to_be_focused()
    box.fill("201 church")
    expect(page.locator("#search-list")).to_contain_text("201 Church St")
    assert no_sideways_scroll(page)
    shot(page, "32-search-390")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#search-list a").first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("body")).to_have_attribute("data-ready", "property")
    expect(page.locator("#property-title")).to_have_text("201 Church St")
    # By owner (clerks see owners) and by notice number, at a desk.
    page.set_viewport_size({"width": 1366, "height": 900})
    box.fill("newer")
    expect(page.locator("#search-list")).to_contain_text("Nina Newer")
    assert no_sideways_scroll(page)
    shot(page, "32-search-1366")
    assert axe_violations(page, axe_source()) == []  # the open list of matches too
    box.fill(number[-6:])
    box.press("Enter")
    expect(page).to_have_url(re.compile(f"#notice/{number}$"))
    assert errors == []
    page.close()
