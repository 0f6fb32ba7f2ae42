"""The Poles page in headless Chromium: register a pole, assign a frontage, click the walk's
four corners on its newest picture, save, and ask to send (screenshots at 1366 and 390 px)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import cv2
import httpx
import numpy as np
import pytest
import uvicorn

from sidewalk.core.contract import FrameRef
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.edge.camera.geometry import project
from sidewalk.edge.camera.synthetic import PoleCamera, make_scene
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from sidewalk.storage.timeseries.records import DeadLetter
from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, PASSWORD, SECRET_KEY, free_port

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")
if CHROMIUM.exists():
    from playwright.sync_api import Browser, Page, expect

FT = 304.8
POLE = "pole-main-02"
NOW = datetime(2026, 12, 1, 15, tzinfo=UTC)


@dataclass
class Served:
    url: str
    cases: CaseStore
    corners: np.ndarray
    truth_image_to_ground: np.ndarray


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A fresh village: one frontage, no pole yet, and the pole's picture already stored."""
    tmp = tmp_path_factory.mktemp("commissioning")
    cases = CaseStore(f"sqlite:///{tmp / 'cases.db'}")
    cases.create_schema()
    add_user(cases, "admin", PASSWORD, "admin", who="test")
    cases.registry.upsert_owner("owner-a", "A. Owner", ["101 Main St", "Clyman, WI 53016"])
    cases.registry.upsert_frontage(
        "main-st-101", site="clyman", parcel_number="026-0101", street_address="101 Main St",
        length_ft=50.0, zone="residential", owner_id="owner-a", walk_width_ft=5.0,
    )  # fmt: skip
    scene = make_scene(
        5, 900.0, length_mm=50 * FT, walk_width_mm=5 * FT,
        camera=PoleCamera(setback_mm=14000.0, width_px=960, height_px=540),
    )  # fmt: skip
    ok, jpeg = cv2.imencode(".jpg", scene.frame)
    assert ok
    evidence = EvidenceStore(tmp / "evidence")
    sha = evidence.admit(jpeg.tobytes(), POLE)
    ts = SqliteTimeSeriesStore(tmp / "ts.db")
    ref = FrameRef(device=POLE, seq=1, ts=int(NOW.timestamp() * 1000) - 60_000, sha256=sha,
                   bytes_len=len(jpeg))  # fmt: skip
    ts.write_batch([ref], sites={POLE: "clyman"})
    # Another pole already sending, under an id nobody has registered.
    knock = DeadLetter(
        int(NOW.timestamp() * 1000) - 120_000, "sidewalk/v1/clyman/pole-oak-07/weather",
        "pole-oak-07", b"{}", "unknown_device", "no pole pole-oak-07 is registered",
    )  # fmt: skip
    ts.write_batch([], dead_letters=[knock, knock])
    app = create_app(
        cases, ts, load_profile(), secret_key=SECRET_KEY, now=lambda: NOW, evidence=evidence
    )
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield Served(
        f"http://127.0.0.1:{port}", cases, np.asarray(scene.walk_corners_px),
        np.asarray(scene.geometry.image_to_ground),
    )  # fmt: skip
    server.should_exit = True
    thread.join(timeout=10)
    ts.close()
    cases.close()


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _register_and_assign(page: Page) -> None:
    page.get_by_label("Pole id (as set up on the pole)").fill(POLE)
    page.get_by_label("Name").fill("Main St at Oak")
    page.get_by_label("Latitude").fill("43.2151")
    page.get_by_label("Longitude").fill("-88.7234")
    page.get_by_role("button", name="Register pole", exact=True).click()
    pole = page.locator(f'[data-pole="{POLE}"]')
    expect(pole.get_by_role("heading", name=f"Main St at Oak ({POLE})")).to_be_visible()
    expect(pole.locator("[data-calibration]")).to_have_text("not calibrated")
    pole.get_by_label("Add a frontage").select_option(label="101 Main St")
    pole.get_by_role("button", name="Assign").click()
    expect(pole.get_by_text("not calibrated", exact=True)).to_have_count(2)


def _four_corners_on_a_phone(page: Page, served: Served) -> None:
    """At 390 px the whole picture fits the screen: each corner is clicked where it is on
    screen, and lands on its image pixel (a screen pixel is ~2.7 of the picture's here)."""
    _shot(page, "22-commission-390")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.get_by_role("button", name="Start over").click()
    board = page.locator(".calib-board")
    expect(board).to_have_attribute("data-clicks", "0")
    box = board.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 390, box
    scale = box["width"] / 960
    for n, (u, v) in enumerate(served.corners, start=1):
        assert box["x"] + u * scale <= 390  # on screen, no sideways scroll needed
        page.mouse.click(box["x"] + u * scale, box["y"] + v * scale)
        expect(board).to_have_attribute("data-clicks", str(n))
    expect(board.locator("polyline")).to_have_count(3 + 11)
    marked = board.locator("circle.corner").evaluate_all(
        "cs => cs.map(c => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))])"
    )
    assert np.asarray(marked) == pytest.approx(served.corners, abs=1.5 / scale)
    _shot(page, "22-commission-corners-390")


def _devices_in_words(page: Page, served: Served) -> None:
    """Devices: the pole by name, what is known of its availability, refused messages with
    the village's time and the reason in words (no code, epoch time, UTC or topic)."""
    for width in (390, 1366):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{served.url}/#devices")
        expect(page.locator("body")).to_have_attribute("data-ready", "devices")
        row = page.get_by_role("row").filter(has_text="Main St at Oak (pole-main-02)")
        expect(row.locator("td.heard")).to_have_text(
            # It sent a picture, never a status: what is known is when it was heard.
            re.compile(r"^Reporting: last heard \S.* \d{1,2}:\d\d [AP]M$")
        )
        letters = page.locator("#dead-letters tbody tr")
        expect(letters).to_have_count(2)
        expect(letters.first).to_contain_text(
            "today 8:58 AMpole-oak-07 (not registered)from a pole not registered under that id"
        )
        text = page.locator("main").inner_text()
        for internal in ("unknown_device", "sidewalk/v1", "Unknown", "Z\t", "T14:58"):
            assert internal not in text, internal
        assert not re.search(r"\b\d{13}\b|Availability: unknown|\bunknown\b", text), text
        # The page never scrolls sideways; a wide table scrolls in its panel.
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        _shot(page, f"23-devices-{width}")


def test_an_admin_calibrates_a_pole_by_clicking_the_walks_corners(
    served: Served, chromium_browser: Browser
) -> None:
    # A page in a context of its own, closed with it (the browser is the package's).
    with chromium_browser.new_page(viewport={"width": 1366, "height": 900}) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{served.url}/login")
        page.get_by_label("User name").fill("admin")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("link", name="Poles").click()
        expect(page.locator("body")).to_have_attribute("data-ready", "poles")
        # A pole knocking unregistered is shown with Register, which fills in its id.
        knocking = page.locator("#knocking")
        expect(knocking).to_contain_text("pole-oak-07 — 2 messages refused")
        knocking.get_by_role("button", name="Register pole-oak-07").click()
        pole_id = page.get_by_label("Pole id (as set up on the pole)")
        expect(pole_id).to_have_value("pole-oak-07")
        # The id's pattern is a working one: a bad id is flagged before it is sent.
        pole_id.fill("Pole_7")
        assert pole_id.evaluate("e => e.validity.patternMismatch") is True
        pole_id.fill("")
        _register_and_assign(page)
        pole = page.locator(f'[data-pole="{POLE}"]')
        pole.get_by_role("button", name="Calibrate 101 Main St").click()

        board = page.locator(".calib-board")
        expect(board).to_have_attribute("viewBox", "0 0 960 540")
        box = board.bounding_box()
        assert box is not None
        scale = box["width"] / 960
        for n, (u, v) in enumerate(served.corners, start=1):
            board.click(position={"x": u * scale, "y": v * scale})
            expect(board).to_have_attribute("data-clicks", str(n))
        # The mapped walk comes back drawn: two edges, the centre line, a line every 5 ft.
        expect(board.locator("polyline")).to_have_count(3 + 11)
        _shot(page, "20-commission-calibrate-1366")
        page.get_by_role("button", name="Save calibration").click()
        expect(pole.locator("[data-calibration]")).to_have_text(
            "pole has not reported its calibration yet — send it"
        )
        expect(pole.get_by_text("calibrated", exact=True)).to_be_visible()

        # No broker in this test: the page says so in words, and nothing was sent.
        pole.get_by_role("button", name="Send to pole").click()
        expect(pole.get_by_role("status")).to_contain_text(
            "This dashboard has no connection to the poles' message broker"
        )
        _shot(page, "21-commission-saved-1366")
        page.set_viewport_size({"width": 390, "height": 844})
        pole.get_by_role("button", name="Calibrate 101 Main St").click()
        expect(board).to_have_attribute("data-clicks", "4")
        _four_corners_on_a_phone(page, served)
        _devices_in_words(page, served)
        assert not errors, errors

    cameras = served.cases.registry.cameras(device_id=POLE)
    assert [c.frontage_id for c in cameras] == ["main-st-101"]
    # The clicks reached the server in image pixels, and the saved mapping is the camera's own:
    # a point in the middle of the walk lands within an inch of where it is.
    assert np.asarray(cameras[0].region) == pytest.approx(served.corners, abs=1.5)
    seen = served.corners.mean(axis=0).reshape(1, 2)
    truth = project(served.truth_image_to_ground, seen)
    saved = project(np.asarray(cameras[0].homography), seen)
    assert np.linalg.norm(saved - truth) < 25.4
    device = served.cases.registry.get_device(POLE)
    assert (device.label, device.latitude, device.longitude) == (
        "Main St at Oak",
        43.2151,
        -88.7234,
    )


def test_the_calibrators_walk_size_goes_to_the_registry_and_devices_say_the_calibration(
    served: Served,
) -> None:
    """The length and width typed beside the clicks are the frontage's from then on; the
    Devices list says when the camera was calibrated and whether the pole runs it."""
    client = httpx.Client(base_url=served.url, timeout=10)
    login = client.post("/api/session", json={"username": "admin", "password": PASSWORD})
    client.headers.update({"X-CSRF-Token": login.json()["csrf_token"], "Origin": served.url})
    pole = {
        "device_id": POLE,
        "label": "Main St at Oak",
        "latitude": 43.2151,
        "longitude": -88.7234,
    }
    assert client.post("/api/registry/poles", json=pole).status_code == 200
    assigned = client.put(
        f"/api/registry/poles/{POLE}/frontages", json={"frontages": ["main-st-101"]}
    )
    assert assigned.status_code == 200, assigned.text
    corners = [[float(u), float(v)] for u, v in served.corners]
    saved = client.put(
        f"/api/registry/poles/{POLE}/cameras",
        json={
            "frontage": "main-st-101",
            "corners": corners,
            "length_ft": 50.5,
            "walk_width_ft": 5.5,
        },
    )
    assert saved.status_code == 200, saved.text
    frontage = served.cases.registry.get_frontage("main-st-101")
    assert (frontage.length_ft, frontage.walk_width_ft) == (50.5, 5.5)
    [measured] = [
        a for a in served.cases.audit.list(subject="frontage:main-st-101")
        if a.action == "frontage.measured"
    ]  # fmt: skip
    assert measured.detail["walk_width_ft"] == [5.0, 5.5]
    [device] = client.get("/api/devices").json()
    assert device["calibration"] == "pole has not reported its calibration yet — send it"
    assert (device["calibrated_at"], device["calibrated_by"]) == (NOW.isoformat(), "admin")
    assert device["calibration_reported_at"] is None
    # The pole's health report names the calibration it runs: the registry's.
    expected = served.cases.registry.expected_calibration(POLE)
    assert expected is not None
    served.cases.registry.record_reported_calibration(POLE, expected, NOW)
    [device] = client.get("/api/devices").json()
    assert device["calibration"] == "calibration matches"
    assert device["calibration_reported_at"] == NOW.isoformat()
    [view] = client.get("/api/registry/poles").json()
    assert view["calibration_reported_at"] == NOW.isoformat()
    # A different one: the words say to send it again.
    served.cases.registry.record_reported_calibration(POLE, "0" * 64, NOW)
    [device] = client.get("/api/devices").json()
    assert device["calibration"] == "pole runs a different calibration — send again"


def test_frontages_to_assign_are_in_street_then_house_number_order() -> None:
    from sidewalk.dashboard.routes.registry import address_order

    typed = ["101 Main St", "9 Main St", "10 Church Ave", "9B Main St", "2 Oak Rd", "9 MAIN ST"]
    assert sorted(typed, key=address_order) == [
        "10 Church Ave", "9 Main St", "9 MAIN ST", "9B Main St", "101 Main St", "2 Oak Rd",
    ]  # fmt: skip
