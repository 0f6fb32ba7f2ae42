"""Rounds on a phone: findings sent late count once with their own time; a photo
with the survey marker goes to the defect measurement (§ 370-5), never a pass unmeasured.

A small village in a fresh SQLite case store, served in-process (no browser, no storm):
one frontage whose owner's clearing deadline runs. The offline queue itself is driven in
Chromium by ``test_accessibility.py`` (it reuses that module's dashboard).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import cv2
import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sidewalk.analytics.defects import CameraCalibration, make_fiducial_marker
from sidewalk.analytics.survey import failure_words
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import role_of
from sidewalk.dashboard.survey_photos import PhoneCamera
from sidewalk.storage.cases import CaseStore, Cause
from sidewalk.storage.evidence import EvidenceStore
from tests.dashboard.conftest import PASSWORD, SECRET_KEY, cheap_password_hash

NOW = datetime(2026, 12, 12, 18, 0, tzinfo=UTC)
FRONTAGE = "main-st-201"


@dataclass
class Round:
    inspector: TestClient
    cases: CaseStore
    app: FastAPI


@pytest.fixture(scope="module")
def village(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Round]:
    tmp = tmp_path_factory.mktemp("rounds")
    cases = CaseStore(f"sqlite:///{tmp / 'cases.sqlite3'}")
    cases.create_schema()
    cases.registry.upsert_device("pole-1", "clyman")
    cases.registry.upsert_owner("o-1", "Una Owner", ["201 Main St", "Clyman, WI 53016"])
    for fid, address in ((FRONTAGE, "201 Main St"), ("main-st-203", "203 Main St")):
        cases.registry.upsert_frontage(
            fid, site="clyman", parcel_number=f"026-{fid[-3:]}", street_address=address,
            length_ft=66, zone="residential", owner_id="o-1", device_id="pole-1",
        )  # fmt: skip
        # Snow stopped: the owner's clearing deadline runs (Cleared, Not cleared, Icy).
        cause = Cause(kind="reading", ts=int(NOW.timestamp() * 1000), device="pole-1")
        clock = cases.clocks.open(fid, "clearing", "snowing", NOW - timedelta(hours=20), cause)
        cases.clocks.record_transition(
            clock.id, "clearing_period", NOW - timedelta(hours=6), cause,
            deadline=NOW + timedelta(hours=6),
        )  # fmt: skip
    cases.dashboard.add_user("inspector", cheap_password_hash(), role_of("inspector"), who="test")
    app = create_app(
        cases, None, load_profile(), secret_key=SECRET_KEY, now=lambda: NOW,
        evidence=EvidenceStore(tmp / "evidence"),
    )  # fmt: skip
    client = TestClient(app, client=("127.0.0.1", 40001))
    session = client.post("/api/session", json={"username": "inspector", "password": PASSWORD})
    client.headers["X-CSRF-Token"] = session.json()["csrf_token"]
    client.headers["Origin"] = "http://testserver"
    yield Round(client, cases, app)
    cases.close()


def test_a_finding_sent_late_and_again_is_recorded_once_with_the_time_of_the_tap(
    village: Round,
) -> None:
    tapped = NOW - timedelta(minutes=40)  # on the round, with no signal
    body = {"tap": "ice", "at": tapped.isoformat(), "key": "3f2a9c1e-0b7d-4c55-9e61-aa0102030405"}
    first = village.inspector.post(f"/api/rounds/{FRONTAGE}/taps", json=body)
    assert first.status_code == 200, first.text
    assert first.json()["repeated"] is False
    # The answer was lost on the way back: the phone sends the same finding again.
    again = village.inspector.post(f"/api/rounds/{FRONTAGE}/taps", json=body)
    assert again.status_code == 200, again.text
    assert again.json() == {**first.json(), "repeated": True}
    ice = [a for a in village.cases.actions.list(FRONTAGE) if a.kind == "record_ice"]
    assert [a.at for a in ice] == [tapped]
    # Another key is another finding.
    other = village.inspector.post(
        f"/api/rounds/{FRONTAGE}/taps", json={**body, "key": "another-finding-0001"}
    )
    assert other.status_code == 200
    assert len([a for a in village.cases.actions.list(FRONTAGE) if a.kind == "record_ice"]) == 2


def test_a_crash_between_a_finding_and_its_key_loses_nothing_and_records_nothing_twice(
    village: Round, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finding and its repeat key are one transaction: the server stops after the
    finding is written but before its key (here: the key's write fails), so neither is
    kept; the phone sends it again and it is recorded once, then recognised."""
    tapped = NOW - timedelta(minutes=25)
    body = {"tap": "ice", "at": tapped.isoformat(), "key": "crash-between-0001"}

    def ice() -> list[datetime]:
        return [a.at for a in village.cases.actions.list(FRONTAGE)
                if a.kind == "record_ice" and a.at == tapped]  # fmt: skip

    def power_cut(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("power cut")

    with monkeypatch.context() as m:
        m.setattr(village.cases.audit, "append_once", power_cut)
        with pytest.raises(RuntimeError, match="power cut"):
            village.inspector.post(f"/api/rounds/{FRONTAGE}/taps", json=body)
    assert ice() == []  # not half-recorded
    first = village.inspector.post(f"/api/rounds/{FRONTAGE}/taps", json=body)
    assert (first.status_code, first.json()["repeated"]) == (200, False), first.text
    again = village.inspector.post(f"/api/rounds/{FRONTAGE}/taps", json=body)
    assert (again.status_code, again.json()["repeated"]) == (200, True), again.text
    assert ice() == [tapped]


def test_the_rounds_page_and_its_worker_keep_only_the_page_and_its_static_files(
    village: Round,
) -> None:
    """``/rounds/`` is the dashboard's header with links back to it; its service worker
    keeps that page and the static files it loads, never an ``/api`` answer (the offline
    reload itself is driven in Chromium by ``test_accessibility.py``)."""
    page = village.inspector.get("/rounds/")
    assert page.status_code == 200
    assert '<script type="module" src="/static/rounds.js">' in page.text
    assert '<a href="/#today" data-page="today">' in page.text
    assert '<a class="skip" href="#main">' in page.text  # in-page links stay in the page
    worker = village.inspector.get("/rounds/sw.js")
    assert worker.headers["content-type"].startswith("text/javascript")
    files = re.findall(r'^  "(/[^"]*)",?$', worker.text, re.MULTILINE)
    assert {"/static/rounds.js", "/static/inspector.js", "/static/when.js"} <= set(files)
    assert all(f.startswith("/static/") for f in files)
    assert "/api" not in worker.text.split("const FILES")[1]
    with TestClient(village.app) as anonymous:  # no session: log in first, as for "/"
        for path in ("/rounds/", "/rounds/sw.js"):
            refused = anonymous.get(path, follow_redirects=False)
            assert (refused.status_code, refused.headers["location"]) == (303, "/login")


def test_a_finding_timed_in_the_future_is_refused_naming_the_time(village: Round) -> None:
    later = NOW + timedelta(hours=1)  # the phone's clock is wrong
    refused = village.inspector.post(
        f"/api/rounds/{FRONTAGE}/taps", json={"tap": "cleared", "at": later.isoformat()}
    )
    assert refused.status_code == 422
    assert refused.json()["detail"].startswith("Time: it is later than now")


def survey_photo(*, marker: bool, crack: bool) -> bytes:
    """A phone photo looking straight down at the walk: grey concrete, optionally the
    survey's 150 mm ArUco marker (180 px) and a 12 px dark joint across the walk."""
    rng = np.random.default_rng(3)
    noise = np.clip(rng.normal(150, 18, (600, 800)), 0, 255).astype(np.uint8)
    gray = cv2.GaussianBlur(noise, (3, 3), 0)
    if marker:
        gray[40:280, 40:280] = 255  # the printed sheet's white border
        gray[60:240, 60:240] = cv2.resize(
            make_fiducial_marker(0), (180, 180), interpolation=cv2.INTER_NEAREST
        )
    if crack:
        cv2.line(gray, (420, 0), (440, 600), 30, 12)
    ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR))
    assert ok
    return jpeg.tobytes()


def send_photo(village: Round, jpeg: bytes, frontage: str = FRONTAGE) -> dict[str, object]:
    taken = (NOW - timedelta(minutes=5)).isoformat()
    response = village.inspector.post(
        f"/api/rounds/{frontage}/photos", params={"at": taken}, content=jpeg,
        headers={"Content-Type": "image/jpeg"},
    )  # fmt: skip
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result


def surveys(village: Round, frontage: str) -> list[dict[str, object]]:
    page = village.inspector.get(f"/api/properties/{frontage}")
    assert page.status_code == 200, page.text
    found: list[dict[str, object]] = page.json()["surveys"]
    return found


def test_370_5_a_round_photo_with_the_survey_marker_is_measured_never_passed_unmeasured(
    village: Round,
) -> None:
    # No marker: evidence only, nothing measured.
    plain = send_photo(village, survey_photo(marker=False, crack=True))
    assert plain["survey"] is None
    assert village.cases.inspections.list(frontage_id=FRONTAGE) == []
    # The marker, but no calibration for the phones' camera: not measured, said why.
    uncalibrated = send_photo(village, survey_photo(marker=True, crack=True))
    assert uncalibrated["measured"] is False
    assert uncalibrated["survey"] == (
        "Not measured: the phone's camera has no calibration on file"
        " (the village IT person adds one)."
    )
    [shown] = surveys(village, FRONTAGE)
    assert shown["measured"] is False
    assert shown["failure"] == (
        "the phone's camera has no calibration on file (the village IT person adds one)"
    )
    # Calibrated (straight down, 800 px focal length): the joint is measured, under the
    # 1 1/4 in gap limit of § 370-5 (a 12 px line at about 0.83 mm a pixel).
    village.app.state.phone_camera = PhoneCamera(
        CameraCalibration(np.array([[800.0, 0, 400], [0, 800.0, 300], [0, 0, 1]]), np.zeros(5))
    )
    measured = send_photo(village, survey_photo(marker=True, crack=True), "main-st-203")
    assert measured["measured"] is True
    assert str(measured["survey"]).startswith("Measured: within the limit (horizontal gap 0.")
    assert str(measured["survey"]).endswith("in, limit 1.25 in).")
    [ok] = surveys(village, "main-st-203")
    assert (ok["measured"], ok["blocks"], ok["defective_blocks"]) == (True, 1, 0)
    # The marker and no joint or crack: absence of evidence, "not measured", never a pass.
    bare = send_photo(village, survey_photo(marker=True, crack=False), "main-st-203")
    assert bare["measured"] is False
    assert bare["survey"] == (
        "Not measured: no joint or crack was found in the photo; take it over one."
    )
    assert [s["measured"] for s in surveys(village, "main-st-203")] == [False, True]


def test_370_5_why_a_survey_was_not_measured_in_the_inspectors_words() -> None:
    assert failure_words("fiducial_too_small: marker side 41 px < 60 px") == (
        "the survey marker is too small in the photo; take it closer"
    )
    assert failure_words("not_measured: a depth map whose median depth is 7 m") == (
        "what the check needs was not seen (no joint or crack where one should be)"
    )
    # An unknown reason is never shown raw (nor read as a pass).
    assert failure_words("something_new: detail") == (
        "the measurement failed; the village IT person has the details"
    )
