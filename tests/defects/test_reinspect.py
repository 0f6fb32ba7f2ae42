"""A survey file stored as not measured is measured again later with new
options: the new result sits beside the first, which is kept,
with who asked and when; a real SQLite store and evidence folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from sidewalk.analytics.defects import CameraCalibration, FiducialSpec
from sidewalk.analytics.inspect import measure_files
from sidewalk.analytics.reinspect import remeasure
from sidewalk.cli.inspect import inspect_app
from sidewalk.core.profile import Profile, load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.testkit.defect_scenes import _project, look_down_camera

from .test_several_markers import _markers, _photo

T0 = datetime(2026, 6, 1, 15, 0, tzinfo=UTC)


@pytest.fixture
def profile() -> Profile:
    return load_profile()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cases.db'}"


@pytest.fixture
def cases(db_url: str, profile: Profile) -> Iterator[CaseStore]:
    store = CaseStore(db_url, zone=profile.village.timezone)
    store.create_schema()
    store.registry.upsert_owner("owner-a", "A. Owner", ["1 Main St", "Clyman, WI 53016"])
    store.registry.upsert_frontage(
        "main-1", site="clyman", parcel_number="026-0915-0001", street_address="1 Main St",
        length_ft=66.0, zone="residential", owner_id="owner-a",
    )  # fmt: skip
    yield store
    store.close()


def _gap_photo(path: Path) -> CameraCalibration:
    """Three 100 mm markers and a 20 mm gap across the walk, seen finer than 1/16 in
    per pixel (a coarser photo is refused as too far to measure the gap)."""
    cam = look_down_camera(
        width=1280, height=720, focal_px=1150.0, center_mm=(0.0, 866.0, 1500.0), tilt_deg=30.0
    )
    img = _photo(cam, _markers())
    band = np.array([[140, -900, 0], [160, -900, 0], [160, 700, 0], [140, 700, 0]], float)
    cv2.fillConvexPoly(img, _project(cam, cam.world_to_camera(band)).astype(np.int32), 30)
    cv2.imwrite(str(path), cv2.GaussianBlur(img, (0, 0), 0.8))
    return CameraCalibration(cam.matrix, cam.distortion)


def test_a_not_measured_photo_is_measured_again_beside_the_first(
    tmp_path: Path, cases: CaseStore, db_url: str, profile: Profile
) -> None:
    photo = tmp_path / "walk.png"
    calib = _gap_photo(photo)
    data = tmp_path / "var"
    evidence = EvidenceStore(data / "evidence")
    batch = measure_files(
        [photo], frontage="main-1", kind="photo", cases=cases, evidence=evidence,
        profile=profile, calibration=calib, fiducial=FiducialSpec(100.0, marker_id=9),
        surveyed_at=T0, first_block=4,
    )  # fmt: skip
    (first,) = (f.inspection for f in batch.files)
    assert first.failure is not None
    assert first.failure.startswith("no_fiducial")  # marker 9 is not in the photo
    assert first.source_sha256 in evidence  # the file is kept for later

    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps({"matrix": calib.matrix.tolist(), "distortion": [0, 0, 0, 0, 0]}))
    cfg = tmp_path / "sidewalk.toml"
    cfg.write_text(f'data_dir = "{data}"\n[cases]\ndatabase_url = "{db_url}"\n')
    args = [
        "again", str(first.id), "--by", "Pat Inspector", "--calibration", str(cal),
        "--marker-mm", "100", "--marker-ids", "0,1,2", "--config", str(cfg),
    ]  # fmt: skip
    result = CliRunner().invoke(inspect_app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "horizontal_gap" in result.output
    rows = cases.inspections.list(frontage_id="main-1")
    kept, new = rows
    assert kept == first  # the first result is never changed
    assert new.status == "ok"
    assert new.source_sha256 == first.source_sha256
    assert new.surveyed_at == first.surveyed_at
    again = new.result["remeasure"]
    assert again["of"] == first.id
    assert again["by"] == "Pat Inspector"
    assert datetime.fromisoformat(again["at"]) > T0
    assert again["options"]["marker_ids"] == "0,1,2"
    assert again["first_failure"] == first.failure
    # Block numbering continues from the first batch's, and the 80 % count reads it.
    assert [b["block"] for b in new.blocks] == [4]
    (cond,) = cases.inspections.owner_block_conditions("owner-a")
    assert cond.inspection_id == new.id
    with pytest.raises(ValueError, match="was measured"):
        remeasure(
            new.id, by="P", options={}, cases=cases, evidence=evidence, profile=profile,
            calibration=calib,
        )  # fmt: skip
    # The same options again store nothing new.
    result = CliRunner().invoke(inspect_app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert len(cases.inspections.list(frontage_id="main-1")) == 2


def test_measuring_again_refuses_what_it_cannot_do(
    tmp_path: Path, cases: CaseStore, profile: Profile
) -> None:
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((64, 64), 128, np.uint8))
    evidence = EvidenceStore(tmp_path / "evidence")
    calib = CameraCalibration(np.array([[90.0, 0, 32], [0, 90, 32], [0, 0, 1]]), np.zeros(5))
    kw: dict[str, Any] = {"cases": cases, "evidence": evidence, "profile": profile}
    batch = measure_files(
        [blank], frontage="main-1", kind="photo", calibration=calib, surveyed_at=T0, **kw
    )
    first = batch.files[0].inspection
    assert first.status == "failed"
    with pytest.raises(ValueError, match="--by"):
        remeasure(first.id, by=" ", options={}, calibration=calib, **kw)
    with pytest.raises(ValueError, match="sha256 differs"):
        remeasure(first.id, by="P", options={}, source=b"other", calibration=calib, **kw)
    with pytest.raises(ValueError, match="--calibration"):
        remeasure(first.id, by="P", options={}, **kw)
    with pytest.raises(ValueError, match="no such inspection"):
        remeasure(first.id + 99, by="P", options={}, calibration=calib, **kw)
    # Measured again and still not measured: a second failed row, the first kept.
    out = remeasure(first.id, by="P", options={"marker_id": 3}, calibration=calib, **kw)
    assert not out.ok
    assert out.again.id != first.id
    assert out.again.failure is not None
    assert out.again.result["remeasure"]["by"] == "P"
    assert cases.inspections.list(frontage_id="main-1")[0] == first


def test_marker_ids_option_fails_in_one_line(tmp_path: Path) -> None:
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps({"matrix": [[900, 0, 5], [0, 900, 5], [0, 0, 1]], "distortion": []}))
    for ids in ("3", "3,x", "3,3"):
        result = CliRunner().invoke(
            inspect_app,
            ["photos", "p.jpg", "--frontage", "f", "--calibration", str(cal), "--marker-ids", ids],
        )
        assert result.exit_code == 2
        assert "--marker-ids" in result.output
        assert len(result.output.strip().splitlines()) == 1
