"""Survey photos: ground scale from the fiducial, gap widths, and bad-photo reasons."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from sidewalk.analytics.defects import (
    CameraCalibration,
    DefectLimits,
    FiducialLimits,
    FiducialSpec,
    InputProblem,
    MeasurementError,
    PhotoParams,
    annotate,
    measure_photo,
)
from sidewalk.analytics.defects.results import EdgeType
from sidewalk.testkit.defect_scenes import (
    Camera,
    MarkerPlacement,
    SidewalkScene,
    place_marker,
    random_scene,
    render_photo,
    survey_photo_camera,
)

Shot = tuple[SidewalkScene, Camera, MarkerPlacement, np.ndarray]


@pytest.fixture(scope="module")
def shot() -> Shot:
    rng = np.random.default_rng(2)
    scene = random_scene(rng)
    cam = survey_photo_camera(scene, rng, 0)
    marker = place_marker(scene, cam, rng)
    return scene, cam, marker, render_photo(scene, cam, marker, rng)


def _calib(cam: Camera) -> CameraCalibration:
    return CameraCalibration(cam.matrix, cam.distortion)


def test_gap_widths_against_truth(shot: Shot) -> None:
    scene, cam, marker, img = shot
    insp = measure_photo(img, _calib(cam), FiducialSpec(side_mm=marker.side_mm))
    assert insp.mm_per_pixel > 0
    matched = 0
    for c in insp.cracks:
        w = marker.marker_to_world(np.array([c.center_mm[:2]]))[0]
        y = np.array([w[1]])
        j = min(scene.joints, key=lambda jt: abs(float(scene.joint_center_x(jt, y)[0]) - w[0]))
        if abs(float(scene.joint_center_x(j, y)[0]) - w[0]) > 30:
            continue
        matched += 1
        assert c.gap_width_mm == pytest.approx(j.gap_mm, abs=1.0)
        assert c.edge_type == j.kind
    assert matched >= 1


def test_evidence_image(shot: Shot, clyman: DefectLimits) -> None:
    _, cam, marker, img = shot
    insp = measure_photo(img, _calib(cam), FiducialSpec(side_mm=marker.side_mm))
    out = annotate(img, insp, clyman)
    assert out.shape == img.shape
    assert int(np.abs(out.astype(int) - img.astype(int)).sum()) > 0


def _problem(img: np.ndarray, cam: Camera, **kw: object) -> InputProblem:
    with pytest.raises(MeasurementError) as e:
        # Ignored: the test passes bad keyword values on purpose.
        measure_photo(img, _calib(cam), FiducialSpec(side_mm=150.0), **kw)  # type: ignore[arg-type]
    return e.value.problem


def test_overexposed(shot: Shot) -> None:
    _, cam, _, img = shot
    bright = np.clip(img.astype(np.int32) * 4, 0, 255).astype(np.uint8)
    assert _problem(bright, cam) is InputProblem.OVEREXPOSED


def test_underexposed(shot: Shot) -> None:
    _, cam, _, img = shot
    assert _problem((img // 10).astype(np.uint8), cam) is InputProblem.UNDEREXPOSED


def test_motion_blur(shot: Shot) -> None:
    _, cam, _, img = shot
    k = np.zeros((1, 25), np.float32)
    k[0, :] = 1 / 25
    smeared = cv2.filter2D(img, -1, k)
    assert _problem(smeared, cam) in {InputProblem.MOTION_BLUR}


def test_no_fiducial(shot: Shot) -> None:
    _, cam, _, img = shot
    covered = img.copy()
    d = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    corners, _, _ = d.detectMarkers(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
    c = corners[0].reshape(4, 2)
    cv2.fillConvexPoly(
        covered, np.round((c - c.mean(0)) * 1.5 + c.mean(0)).astype(np.int32), (150, 150, 150)
    )
    assert _problem(covered, cam) is InputProblem.NO_FIDUCIAL


def test_fiducial_too_small_or_oblique(shot: Shot) -> None:
    _, cam, _, img = shot
    # The cracks' floor and tilt (FiducialLimits) and the joint gauge's own.
    small = PhotoParams(
        fiducial_limits=FiducialLimits(min_side_px=1000.0), min_joint_marker_px=1000.0
    )
    assert _problem(img, cam, params=small) is InputProblem.FIDUCIAL_TOO_SMALL
    steep = PhotoParams(fiducial_limits=FiducialLimits(max_tilt_deg=5.0), max_joint_tilt_deg=5.0)
    assert _problem(img, cam, params=steep) is InputProblem.FIDUCIAL_TOO_OBLIQUE
    # The joint gauge alone (no joint here that it can place): not measured, not a pass.
    cracks_off = PhotoParams(fiducial_limits=FiducialLimits(min_side_px=1000.0))
    insp = measure_photo(img, _calib(cam), FiducialSpec(side_mm=150.0), params=cracks_off)
    assert insp.cracks
    assert all(c.edge_type is EdgeType.TOOLED_JOINT for c in insp.cracks)


def test_wrong_format(shot: Shot) -> None:
    _, cam, _, img = shot
    assert _problem(img.astype(np.float32), cam) is InputProblem.WRONG_FORMAT
