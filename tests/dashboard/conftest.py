"""A replayed first storm, a real uvicorn server on a loopback port, one account per role;
and one headless Chromium for the package's browser tests.

Setting a storm up costs seconds, so it is shared as far as is safe: ``dashboard``
is a module's own (change what you like); ``shared_dashboard`` is one for the whole
package, for modules that change no records (logging in aside). A module opts in
by overriding ``dashboard`` with it (see test_route_security.py).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import httpx
import pytest
import uvicorn
from argon2 import PasswordHasher
from fastapi import FastAPI

from sidewalk.alerts.inspections import inspect_files
from sidewalk.analytics.inspect import load_intrinsics
from sidewalk.core.contract import SnowMeasurement
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import ROLES, role_of
from sidewalk.edge.camera.synthetic import make_scene
from sidewalk.scenarios import load_scenario
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.system import ActionTicker, ReplayedStorm, replay_storm

PASSWORD = "correct horse battery"
SECRET_KEY = "test-secret-key-0123456789"
CHROMIUM = Path("/usr/bin/chromium")
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
    from playwright.sync_api import Browser, sync_playwright


@dataclass
class Dashboard:
    url: str
    storm: ReplayedStorm
    ticker: ActionTicker
    frame_sha256: str
    inspection_sha256: str
    app: FastAPI

    def login(self, role: str) -> httpx.Client:
        """A client logged in as the ``role`` account, with its CSRF token and Origin."""
        client = httpx.Client(base_url=self.url, timeout=10)
        response = client.post("/api/session", json={"username": role, "password": PASSWORD})
        response.raise_for_status()
        client.headers["X-CSRF-Token"] = response.json()["csrf_token"]
        # What a browser's fetch from our own page sends on every non-GET request.
        client.headers["Origin"] = self.url
        return client


@cache
def cheap_password_hash(password: str = PASSWORD) -> str:
    """An argon2id hash of ``password`` with cheap parameters. argon2 is slow on purpose
    (about 0.3 CPU s to hash, and again at every login); verifying reads the cost from
    the hash itself, so the fixtures' accounts log in quickly by the same logic."""
    return PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1).hash(password)


@cache
def _camera_jpeg() -> bytes:
    scene = make_scene(seed=7, path_width_mm=0.0)
    ok, jpeg = cv2.imencode(".jpg", scene.frame)
    assert ok
    return bytes(jpeg.tobytes())


def add_camera_frame(storm: ReplayedStorm, evidence: EvidenceStore) -> str:
    """A rendered 105 Main St frame in the evidence store, cited by one more measurement."""
    sha = evidence.put(_camera_jpeg())
    device = "pole-main-01"
    measurement = SnowMeasurement(
        device=device, seq=storm.timeseries.stored_up_to(device) + 1,
        ts=int(storm.end.timestamp() * 1000), frontage="main-st-105",
        snow_cover_fraction=1.0, cleared_width_mm=0.0, frame_sha256=sha,
    )  # fmt: skip
    storm.timeseries.write_batch([measurement], sites={device: "clyman"})
    return sha


def add_inspection(storm: ReplayedStorm, evidence: EvidenceStore, files: dict[str, Path]) -> str:
    """A 1-in fault measured on 101 Main St (Alice Anders, 10 blocks on record) in the
    demo scene ``files``, stored without a notice (so the storm's notice list is
    unchanged); returns the evidence image's sha256."""
    report = inspect_files(
        [files["depth"]], frontage="main-st-101", kind="depth", cases=storm.cases,
        evidence=evidence, profile=load_profile(), intrinsics=load_intrinsics(files["intrinsics"]),
        surveyed_at=storm.end, issue_notice=False, frontage_blocks=10,
    )  # fmt: skip
    sha = report.files[0].inspection.evidence_sha256
    assert sha is not None
    return sha


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_storm(
    tmp_path_factory: pytest.TempPathFactory, demo_scene: dict[str, Path]
) -> Iterator[Dashboard]:
    """The first storm replayed into fresh stores, served until the block ends."""
    profile = load_profile()
    storm = replay_storm(load_scenario("first-storm"), tmp_path_factory.mktemp("storm"), profile)
    for role in ROLES:
        storm.cases.dashboard.add_user(role, cheap_password_hash(), role_of(role), who="test")
    evidence = EvidenceStore(tmp_path_factory.mktemp("evidence"))
    frame_sha256 = add_camera_frame(storm, evidence)
    inspection_sha256 = add_inspection(storm, evidence, demo_scene)
    app = create_app(
        storm.cases, storm.timeseries, profile, secret_key=SECRET_KEY,
        now=lambda: storm.end, login_max_failures=3, evidence=evidence,
    )  # fmt: skip
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=2
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    ticker = ActionTicker(storm.runner, interval_s=0.1)
    ticker.start()
    try:
        yield Dashboard(
            f"http://127.0.0.1:{port}", storm, ticker, frame_sha256, inspection_sha256, app
        )
    finally:
        ticker.stop()
        server.should_exit = True
        thread.join(timeout=10)
        storm.close()


@pytest.fixture(scope="module")
def dashboard(
    tmp_path_factory: pytest.TempPathFactory, demo_scene: dict[str, Path]
) -> Iterator[Dashboard]:
    """This module's own storm and server: its tests may change any record."""
    with serve_storm(tmp_path_factory, demo_scene) as served:
        yield served


@pytest.fixture(scope="package")
def shared_dashboard(
    tmp_path_factory: pytest.TempPathFactory, demo_scene: dict[str, Path]
) -> Iterator[Dashboard]:
    """One storm and server for every module that changes no records (logging in,
    out and accounts of its own aside), so no module depends on another's order."""
    with serve_storm(tmp_path_factory, demo_scene) as served:
        yield served


@pytest.fixture(scope="package")
def chromium_browser() -> Iterator[Browser]:
    """One headless Debian Chromium for the package; each module opens its own context
    (cookies and storage of its own), which is cheap where a launch is not."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard"
