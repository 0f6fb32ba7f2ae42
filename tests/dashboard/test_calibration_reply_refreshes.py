"""Poles page, over the real Mosquitto and a real pole: once "Send to pole" has the pole's
answer, the pole's calibration tag says so at once ("calibration matches"), with no reload.

The village is test_commissioning's (one frontage, the pole's picture stored), here with
the walk's corners already saved; the dashboard's line to the poles is the ``PoleLink``
``sidewalk dashboard`` starts, and the pole is the edge ``Device`` on the same broker."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import uvicorn

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.dashboard.poles import PoleLink
from sidewalk.dashboard.routes.registry import fit_corners
from sidewalk.edge.camera.synthetic import PoleCamera, make_scene
from sidewalk.storage.cases import CaseStore
from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, PASSWORD, SECRET_KEY, free_port
from tests.edge_device.poles import fast_dir, pole_settings, running_device
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import settings, slug

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed"),
]
if CHROMIUM.exists():
    from playwright.sync_api import Browser, expect

FT = 304.8
CAMERA = PoleCamera(setback_mm=9000.0, width_px=960, height_px=540)


def _village(tmp: Path, site: str, device: str) -> tuple[CaseStore, np.ndarray]:
    """One frontage, watched by ``device``, its corners saved; the pole's scene."""
    cases = CaseStore(f"sqlite:///{tmp / 'cases.db'}")
    cases.create_schema()
    add_user(cases, "admin", PASSWORD, "admin", who="test")
    r = cases.registry
    r.upsert_owner("owner-a", "A. Owner", ["101 Main St", "Clyman, WI 53016"])
    r.upsert_device(device, site, label="Main St at Oak")
    r.upsert_frontage(
        "main-st-101", site=site, parcel_number="026-0101", street_address="101 Main St",
        length_ft=30.0, zone="residential", owner_id="owner-a", walk_width_ft=5.0,
    )  # fmt: skip
    r.assign_pole(device, ["main-st-101"], who="test")
    scene = make_scene(3, 1200.0, length_mm=30 * FT, walk_width_mm=5 * FT, camera=CAMERA)
    corners = np.asarray(scene.walk_corners_px).tolist()
    h, _ = fit_corners([(u, v) for u, v in corners], 30.0, 5.0)
    r.set_camera(device, "main-st-101", region=corners, homography=h,
                 calibrated_at=datetime(2026, 12, 1, 12, tzinfo=UTC), who="admin")  # fmt: skip
    return cases, scene.frame


@pytest.fixture
def served(broker: MosquittoServer, tmp_path: Path) -> Iterator[tuple[str, CaseStore, PoleLink]]:
    site, device = slug("site"), slug("pole")
    cases, frame = _village(tmp_path, site, device)
    link = PoleLink(settings(broker.host, broker.port, slug("dash")), site, cases, timeout_s=10)
    link.start()
    app = create_app(cases, None, load_profile(), secret_key=SECRET_KEY)
    app.state.poles = link
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        assert link.wait_connected(10)
        with fast_dir() as tmp:
            cfg = pole_settings(
                broker.host, broker.port, tmp / "pole", site=site, device=device, sensors=[],
                camera={"source": "unused", "interval_s": 3600}, health_interval_s=3600,
            )  # fmt: skip
            with running_device(cfg, frames=lambda: frame):
                yield f"http://127.0.0.1:{port}", cases, link
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        link.close()
        cases.close()


def test_the_poles_tag_says_the_calibration_matches_once_the_pole_answers(
    served: tuple[str, CaseStore, PoleLink], chromium_browser: Browser
) -> None:
    url, cases, _ = served
    with chromium_browser.new_page(viewport={"width": 1366, "height": 900}) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{url}/login")
        page.get_by_label("User name").fill("admin")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("link", name="Poles").click()
        expect(page.locator("body")).to_have_attribute("data-ready", "poles")
        pole = page.locator("section.pole")
        tag = pole.locator(".pole-status [data-calibration]")
        expect(tag).to_have_text("pole has not reported its calibration yet — send it")
        loads = page.evaluate("performance.getEntriesByType('navigation').length")
        pole.get_by_role("button", name="Send to pole").click()
        expect(pole.get_by_role("status")).to_contain_text(
            "The pole took the calibration and runs it now."
        )
        # The tag follows the answer on the same page: no reload, no navigation.
        expect(tag).to_have_text("calibration matches")
        expect(tag).to_have_attribute("data-calibration", "matches")
        expect(tag).to_have_class("tag cal-ok")
        expect(pole.locator(".pole-status")).to_contain_text("(the pole said so ")
        assert page.evaluate("performance.getEntriesByType('navigation').length") == loads
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "24-commission-answered-1366.png"), full_page=True)
        assert not errors, errors
    [device] = cases.registry.list_devices()
    assert device.reported_calibration == cases.registry.expected_calibration(device.id)
