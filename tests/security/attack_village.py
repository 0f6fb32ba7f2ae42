"""The first storm replayed with hostile owner names and addresses, for the attack tests.

The names are what a tampered county file could carry past the import's own checks
(markup, event handlers, ``javascript:`` links, a formula, a name at the import's
100-character limit) and, stored by any other path, what it refuses (a text-direction
override). They are in the scenario before the replay, so the notices issued during
it carry them too, as the letters and the print batch do.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import cv2
import httpx
import numpy as np
import pytest
import uvicorn
from fastapi import FastAPI

from sidewalk.core.contract import SnowMeasurement
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import ROLES, role_of
from sidewalk.scenarios import load_scenario
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.system import ReplayedStorm, replay_storm
from tests.dashboard.conftest import PASSWORD, SECRET_KEY, cheap_password_hash, free_port

METRICS_TOKEN = "metrics-token-attack-0123456789"
SCRIPT = "<script>window.__xss=1</script>Alice Anders"
ONERROR = '<img src=x onerror="window.__xss=2">101 Main St'
FORMULA = '=HYPERLINK("http://evil.example","Bert Brandt")'
JS_LINK = "javascript:window.__xss=3"
ANCHOR = '<a href="javascript:window.__xss=4">PO Box 12</a>'
QUOTED = 'Clara "><svg onload=window.__xss=5> Christoph'
RTL = "105 Main St \u202e61035 IW ,namylC\u202c"
LONG = "W" * 100  # the longest name the county import lets through, in one word
ADDRESS = "105 Main St <iframe srcdoc='<script>parent.__xss=6</script>'>"

OWNERS: dict[str, tuple[str, list[str]]] = {
    "main-st-101": (SCRIPT, [ONERROR, "Clyman, WI 53016"]),
    "main-st-103": (FORMULA, [JS_LINK, ANCHOR, "Juneau, WI 53039"]),
    "main-st-105": (QUOTED, [RTL, LONG]),
}
HOSTILE = [SCRIPT, ONERROR, FORMULA, JS_LINK, ANCHOR, QUOTED, RTL, LONG, ADDRESS]


@dataclass
class Village:
    url: str
    storm: ReplayedStorm
    app: FastAPI
    frame_sha256: str

    def login(self, role: str) -> httpx.Client:
        """A client logged in as ``role``, with its CSRF token and our Origin."""
        client = httpx.Client(base_url=self.url, timeout=10)
        response = client.post("/api/session", json={"username": role, "password": PASSWORD})
        response.raise_for_status()
        client.headers["X-CSRF-Token"] = response.json()["csrf_token"]
        client.headers["Origin"] = self.url
        return client


def hostile_storm(workdir: Path) -> ReplayedStorm:
    scenario = load_scenario("first-storm")
    frontages = [
        f.model_copy(
            update={
                "owner": OWNERS[f.id][0],
                "mailing_address": OWNERS[f.id][1],
                "address": ADDRESS if f.id == "main-st-105" else f.address,
            }
        )
        for f in scenario.frontage
    ]
    storm = replay_storm(
        scenario.model_copy(update={"frontage": frontages}), workdir, load_profile()
    )
    assert storm.cases.notices.list(), "the hostile storm issued no notice"
    for role in ROLES:
        storm.cases.dashboard.add_user(role, cheap_password_hash(), role_of(role), who="test")
    return storm


def add_frame(storm: ReplayedStorm, evidence: EvidenceStore) -> str:
    """A small camera frame in the evidence store, cited by one more measurement."""
    ok, jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), 200, np.uint8))
    assert ok
    sha = evidence.put(jpeg.tobytes())
    device = "pole-main-01"
    measurement = SnowMeasurement(
        device=device, seq=storm.timeseries.stored_up_to(device) + 1,
        ts=int(storm.end.timestamp() * 1000), frontage="main-st-105",
        snow_cover_fraction=1.0, cleared_width_mm=0.0, frame_sha256=sha,
    )  # fmt: skip
    storm.timeseries.write_batch([measurement], sites={device: "clyman"})
    return sha


@contextmanager
def serve_hostile_village(workdir: Path) -> Iterator[Village]:
    """The hostile storm's dashboard on a real uvicorn server (loopback) until the block ends."""
    storm = hostile_storm(workdir / "storm")
    evidence = EvidenceStore(workdir / "evidence")
    frame = add_frame(storm, evidence)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SIDEWALK_METRICS_TOKEN", METRICS_TOKEN)
        app = create_app(
            storm.cases, storm.timeseries, load_profile(), secret_key=SECRET_KEY,
            now=lambda: storm.end, evidence=evidence,
        )  # fmt: skip
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield Village(f"http://127.0.0.1:{port}", storm, app, frame)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        storm.close()
