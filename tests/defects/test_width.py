"""Walk width from a photo, against synthetic scenes of known width."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from sidewalk.analytics.defects import (
    CameraCalibration,
    DefectLimits,
    FiducialSpec,
    Rule,
    frontage_condition,
    measure_photo,
    measure_walk_width,
)
from sidewalk.analytics.defects.fiducial import FiducialLimits, find_ground_frame
from sidewalk.testkit.defect_scenes import (
    ground_footprint,
    place_marker,
    random_scene,
    render_photo,
    survey_photo_camera,
    walk_width_photo_camera,
)


@pytest.mark.parametrize("seed", [101, 104, 111])
def test_width_photo_against_truth(seed: int, clyman: DefectLimits) -> None:
    rng = np.random.default_rng(seed)
    scene = random_scene(rng)
    cam = walk_width_photo_camera(scene, rng)
    img = render_photo(scene, cam, place_marker(scene, cam, rng, along=(0.0, 0.3)), rng)
    res = measure_photo(img, CameraCalibration(cam.matrix, cam.distortion), FiducialSpec())
    assert res.walk_width_mm is not None
    assert res.walk_width_uncertainty_mm is not None
    err = res.walk_width_mm - scene.walk_width_mm
    # Walks are 1-2 m wide; the ground frame from a 150 mm marker is the main error.
    assert abs(err) <= 15.0
    assert abs(err) <= 3 * res.walk_width_uncertainty_mm
    assert 2.0 < res.walk_width_uncertainty_mm < 20.0
    check = frontage_condition(
        clyman, walk_widths_mm=[(res.walk_width_mm, res.walk_width_uncertainty_mm)]
    ).checks[0]
    assert check.rule is Rule.WALK_WIDTH
    assert check.failed is (scene.walk_width_mm < clyman.min_walk_width_mm)


def test_one_edge_in_view_gives_no_width() -> None:
    # A survey photo looks across the walk from one side: the far edge is out of view.
    rng = np.random.default_rng(30000)
    scene = random_scene(rng)
    cam = survey_photo_camera(scene, rng, 0)
    _, _, y0, y1 = ground_footprint(cam, 0.0)
    assert not (y0 < 0 and y1 > scene.walk_width_mm)
    img = render_photo(scene, cam, place_marker(scene, cam, rng), rng)
    calib = CameraCalibration(cam.matrix, cam.distortion)
    gray = np.asarray(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), np.uint8)
    ground = find_ground_frame(gray, calib, FiducialSpec(), FiducialLimits())
    assert measure_walk_width(img, calib, ground) is None
    # Grey images carry no turf colour: no width either.
    assert measure_walk_width(gray, calib, ground) is None
