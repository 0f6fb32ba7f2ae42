"""Commissioning over the real Mosquitto: the registry's calibration goes to the pole as a
command with a transaction id, the pole runs and keeps it, and its next health report
carries the hash the server records and compares."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from sidewalk.core.contract import DeviceHealth
from sidewalk.dashboard.poles import CALIBRATION_COMMAND, PoleLink, calibration_command
from sidewalk.dashboard.routes.registry import fit_corners
from sidewalk.edge.camera.installed import FILE_NAME
from sidewalk.edge.camera.synthetic import PoleCamera, make_scene
from sidewalk.edge.device import Device
from sidewalk.ingest.health import record_health
from sidewalk.storage.cases import CaseStore
from tests.edge_device.poles import NO_SECRETS, fast_dir, pole_settings, running_device
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import settings, slug

pytestmark = pytest.mark.services

FT = 304.8
LENGTH_FT, WIDTH_FT = 30.0, 5.0
# A smaller picture than a pole's: rendering it is most of this test's time.
CAMERA = PoleCamera(setback_mm=9000.0, width_px=960, height_px=540)


@pytest.fixture
def cases(tmp_path: Path) -> Iterator[CaseStore]:
    store = CaseStore(f"sqlite:///{tmp_path / 'cases.db'}")
    store.create_schema()
    yield store
    store.close()


def _registered(cases: CaseStore, site: str, device: str, corners: list[list[float]]) -> str:
    """A pole watching two frontages, both calibrated in the registry; the expected hash."""
    r = cases.registry
    r.upsert_owner("owner-a", "A. Owner", ["101 Main St", "Clyman, WI 53016"])
    r.upsert_device(device, site, label="Main St pole")
    for fid, number in (("main-st-101", "101"), ("main-st-103", "103")):
        r.upsert_frontage(
            fid, site=site, parcel_number=f"026-{number}", street_address=f"{number} Main St",
            length_ft=LENGTH_FT, zone="residential", owner_id="owner-a", walk_width_ft=WIDTH_FT,
        )  # fmt: skip
    r.assign_pole(device, ["main-st-101", "main-st-103"], who="test")
    at = datetime(2026, 12, 1, 12, tzinfo=UTC)
    for fid in ("main-st-101", "main-st-103"):
        h, _ = fit_corners([(u, v) for u, v in corners], LENGTH_FT, WIDTH_FT)
        r.set_camera(device, fid, region=corners, homography=h, calibrated_at=at, who="admin")
    expected = r.expected_calibration(device)
    assert expected is not None
    return expected


def test_the_calibration_round_trips_and_the_poles_health_reports_it(
    broker: MosquittoServer, cases: CaseStore
) -> None:
    site, device = slug("site"), slug("pole")
    scene = make_scene(
        3, 1200.0, length_mm=LENGTH_FT * FT, walk_width_mm=WIDTH_FT * FT, camera=CAMERA
    )
    corners = np.asarray(scene.walk_corners_px).tolist()
    expected = _registered(cases, site, device, corners)
    camera = {"source": "unused", "interval_s": 3600}  # no frontage yet: a new pole
    link = PoleLink(settings(broker.host, broker.port, slug("dash")), site, cases, timeout_s=10)
    link.start()
    with fast_dir() as tmp:
        cfg = pole_settings(
            broker.host, broker.port, tmp / "pole", site=site, device=device, sensors=[],
            camera=camera, health_interval_s=3600,
        )  # fmt: skip
        try:
            assert link.wait_connected(10)
            with running_device(cfg, frames=lambda: scene.frame) as pole:
                assert pole.camera is not None
                assert pole.camera.calibration is None
                refused = link.send(device, CALIBRATION_COMMAND, {"cameras": '{"frontages": 3}'})
                assert refused.outcome == "error"
                assert refused.message == (
                    'The pole refused it: the calibration needs a "frontages" object.'
                )
                cameras = cases.registry.cameras(device_id=device)
                sent = link.send(
                    device, CALIBRATION_COMMAND, {"cameras": calibration_command(cameras)}
                )
                assert sent.outcome == "ok", sent.message
                assert sent.transaction is not None
                assert len(sent.transaction) == 32
                assert sent.data == {
                    "calibration": expected,
                    "frontages": ["main-st-101", "main-st-103"],
                }
                # The health report it published at once lands in the registry.
                deadline = time.monotonic() + 10
                while cases.registry.get_device(device).reported_calibration != expected:
                    assert time.monotonic() < deadline, "health not recorded"
                    time.sleep(0.05)
                assert cases.registry.get_device(device).last_seen is not None
                # The pole measures with it: the clear path of the scene, within the method's bound.
                cycle = pole.camera_cycle(force_evidence=False)
                width = cycle.measured["main-st-101"]["cleared_width_mm"]
                assert width == pytest.approx(1200.0, abs=100)
            assert (tmp / "pole" / FILE_NAME).exists()
            # After a restart the pole runs the same calibration from its disk.
            again = Device(cfg, secrets=NO_SECRETS, frames=lambda: scene.frame)
            assert again.camera is not None
            assert again.camera.calibration == expected
        finally:
            link.close()


def test_no_answer_from_a_pole_that_is_off_is_said_in_words(
    broker: MosquittoServer, cases: CaseStore
) -> None:
    site = slug("site")
    link = PoleLink(settings(broker.host, broker.port, slug("dash")), site, cases, timeout_s=0.5)
    link.start()
    try:
        assert link.wait_connected(10)
        sent = link.send(slug("pole"), CALIBRATION_COMMAND, {"cameras": "{}"})
        assert sent.outcome == "no_answer"
        assert sent.transaction is not None
        assert sent.message.startswith("No answer from the pole within 0.5 seconds.")
    finally:
        link.close()


def test_health_is_recorded_for_registered_poles_only_and_never_ahead_of_us(
    cases: CaseStore,
) -> None:
    cases.registry.upsert_device("pole-1", "clyman")
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    ahead = int(now.timestamp() * 1000) + 3_600_000  # the pole's clock runs an hour fast
    report = DeviceHealth(device="pole-1", ts=ahead, buffered=0, dropped=0, calibration="c" * 64)
    assert record_health(cases.registry, report, now)
    pole = cases.registry.get_device("pole-1")
    assert (pole.last_seen, pole.reported_calibration) == (now, "c" * 64)
    stranger = report.model_copy(update={"device": "pole-unknown"})
    assert not record_health(cases.registry, stranger, now)
