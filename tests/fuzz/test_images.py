"""Image inputs under bad files: a typed per-image ``MeasurementError`` (never a
raw cv2.error or numpy error), and batches that record the bad one and go on."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sidewalk.alerts.inspections import inspect_files
from sidewalk.analytics.defects import (
    CameraCalibration,
    DepthIntrinsics,
    InputProblem,
    MeasurementError,
    PhotoInspection,
    SurfaceInspection,
)
from sidewalk.analytics.defects.io import (
    MIN_SIDE_PX,
    ImageFailure,
    inspect_depth_maps,
    inspect_photos,
    read_depth_png,
    read_image,
)
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.testkit.defect_scenes import (
    depth_survey_camera,
    random_scene,
    render_depth,
    survey_photo_camera,
)
from tests.fuzz.images import image_inputs, jpeg_header, png_header
from tests.inspect.conftest import seed_owner

FAST = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TINY_DEPTH = cv2.imencode(".png", np.full((1, 1), 1000, np.uint16))[1].tobytes()
REGRESSIONS = [
    b"",  # cv2.error: !buf.empty()
    TINY_DEPTH,  # ValueError from the plane fit's sample (1 x 1 depth map)
    png_header(30_000, 30_000),  # would allocate 2.7 GB before failing
    jpeg_header(65_535, 65_535),
]


@pytest.fixture(scope="module")
def good_depth() -> tuple[bytes, DepthIntrinsics, CameraCalibration]:
    """One rendered depth map of a real-looking walk (the slow part: ~2 s), its
    camera's intrinsics, and a photo calibration (no photo is rendered)."""
    rng = np.random.default_rng(5)
    scene = random_scene(rng)
    cam = depth_survey_camera(scene, rng, 0)
    depth = cv2.imencode(".png", render_depth(scene, cam, rng))[1].tobytes()
    k = cam.matrix
    photo_cam = survey_photo_camera(scene, rng, 0)
    calibration = CameraCalibration(photo_cam.matrix, photo_cam.distortion)
    return depth, DepthIntrinsics(k[0, 0], k[1, 1], k[0, 2], k[1, 2]), calibration


@pytest.fixture(scope="module")
def calibration(good_depth: tuple[bytes, DepthIntrinsics, CameraCalibration]) -> CameraCalibration:
    return good_depth[2]


@pytest.fixture(scope="module")
def intrinsics(good_depth: tuple[bytes, DepthIntrinsics, CameraCalibration]) -> DepthIntrinsics:
    return good_depth[1]


def _typed(exc: MeasurementError) -> None:
    assert isinstance(exc.problem, InputProblem)
    assert exc.problem is not InputProblem.MEASUREMENT_FAILED
    assert exc.detail.strip()


@FAST
@given(raw=image_inputs)
@example(raw=REGRESSIONS[0])
@example(raw=REGRESSIONS[2])
@example(raw=REGRESSIONS[3])
def test_read_image_returns_bgr_or_a_typed_error(raw: bytes) -> None:
    try:
        img = read_image(raw)
    except MeasurementError as exc:
        _typed(exc)
        return
    assert img.dtype == np.uint8
    assert img.ndim == 3
    assert img.shape[2] == 3
    assert min(img.shape[:2]) >= MIN_SIDE_PX


@FAST
@given(raw=image_inputs)
@example(raw=REGRESSIONS[0])
@example(raw=REGRESSIONS[1])
def test_read_depth_returns_uint16_or_a_typed_error(raw: bytes) -> None:
    try:
        depth = read_depth_png(raw)
    except MeasurementError as exc:
        _typed(exc)
        return
    assert depth.dtype == np.uint16
    assert depth.ndim == 2
    assert min(depth.shape) >= MIN_SIDE_PX


@settings(FAST, max_examples=100)
@given(batch=st.lists(image_inputs, min_size=1, max_size=3))
@example(batch=REGRESSIONS)
def test_batches_record_each_bad_image_and_go_on(
    batch: list[bytes], calibration: CameraCalibration, intrinsics: DepthIntrinsics
) -> None:
    for results in (inspect_photos(batch, calibration), inspect_depth_maps(batch, intrinsics)):
        assert len(results) == len(batch)
        for r in results:
            if isinstance(r, ImageFailure):
                # measurement_failed would be a measurement bug caught by the batch.
                assert r.problem is not InputProblem.MEASUREMENT_FAILED, r
                assert r.detail.strip()
            else:
                assert isinstance(r, PhotoInspection | SurfaceInspection)


def test_a_good_depth_map_still_measures_between_bad_ones(
    good_depth: tuple[bytes, DepthIntrinsics, CameraCalibration],
) -> None:
    depth, intrinsics, _ = good_depth
    results = inspect_depth_maps([*REGRESSIONS, depth, b"junk"], intrinsics)
    assert isinstance(results[len(REGRESSIONS)], SurfaceInspection)
    assert [r.problem for r in results if isinstance(r, ImageFailure)] == [
        InputProblem.UNREADABLE,
        InputProblem.TOO_SMALL,
        InputProblem.TOO_LARGE,
        InputProblem.TOO_LARGE,
        InputProblem.UNREADABLE,
    ]


@pytest.fixture
def cases(tmp_path: Path) -> Iterator[CaseStore]:
    store = CaseStore(f"sqlite:///{tmp_path / 'cases.db'}", zone="America/Chicago")
    store.create_schema()
    seed_owner(store)
    yield store
    store.close()


@pytest.mark.parametrize("kind", ["photo", "depth"])
def test_inspect_files_stores_a_failed_inspection_per_bad_file(
    tmp_path: Path,
    good_depth: tuple[bytes, DepthIntrinsics, CameraCalibration],
    cases: CaseStore,
    kind: Literal["photo", "depth"],
) -> None:
    depth, intrinsics, calibration = good_depth
    bad = [
        *REGRESSIONS,
        cv2.imencode(".png", np.zeros((40, 40, 4), np.uint8))[1].tobytes(),
        cv2.imencode(".tiff", np.ones((40, 40), np.float32))[1].tobytes(),
        cv2.imencode(".png", np.full((40, 40, 3), 900, np.uint16))[1].tobytes(),
    ]
    paths = [tmp_path / "missing.png"]
    for i, body in enumerate(bad):
        paths.append(tmp_path / f"bad-{i}.img")
        paths[-1].write_bytes(body)
    if kind == "depth":  # a good one last: the batch went on past every bad one
        paths.append(tmp_path / "good.png")
        paths[-1].write_bytes(depth)
    report = inspect_files(
        paths,
        frontage="main-101",
        kind=kind,
        cases=cases,
        evidence=EvidenceStore(tmp_path / "evidence"),
        profile=load_profile(),
        calibration=calibration,
        intrinsics=intrinsics,
        surveyed_at=datetime(2026, 6, 1, tzinfo=UTC),
        issue_notice=False,
    )
    assert [f.source for f in report.files] == [str(p) for p in paths]
    assert len(report.failures) == len(bad) + 1
    if kind == "depth":
        assert report.files[-1].ok, report.files[-1].inspection.failure
    for outcome in report.failures:
        failure = outcome.inspection.failure
        assert failure is not None
        reason = failure.split(":")[0]
        assert reason in {p.value for p in InputProblem}, failure
        assert reason != InputProblem.MEASUREMENT_FAILED
