"""File reading, per-image batch errors, and the printable calibration target."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from sidewalk.analytics.defects import (
    DepthIntrinsics,
    InputProblem,
    MeasurementError,
    SurfaceInspection,
    calibrate_intrinsics,
    make_calibration_target,
    make_fiducial_marker,
)
from sidewalk.analytics.defects.io import (
    ImageFailure,
    inspect_depth_maps,
    read_depth_png,
    read_image,
)
from sidewalk.testkit.defect_scenes import depth_survey_camera, random_scene, render_depth


def test_batch_reports_each_bad_file_and_goes_on() -> None:
    rng = np.random.default_rng(5)
    scene = random_scene(rng)
    cam = depth_survey_camera(scene, rng, 0)
    good = cv2.imencode(".png", render_depth(scene, cam, rng))[1].tobytes()
    eight_bit = cv2.imencode(".png", np.zeros((10, 10), np.uint8))[1].tobytes()
    k = cam.matrix
    out = inspect_depth_maps(
        [good, b"not a png", eight_bit, "/nonexistent/x.png"],
        DepthIntrinsics(k[0, 0], k[1, 1], k[0, 2], k[1, 2]),
    )
    assert isinstance(out[0], SurfaceInspection)
    assert out[0].joints
    assert [o.problem for o in out[1:] if isinstance(o, ImageFailure)] == [
        InputProblem.UNREADABLE,
        InputProblem.WRONG_FORMAT,
        InputProblem.UNREADABLE,
    ]


def test_readers_raise_typed_errors() -> None:
    with pytest.raises(MeasurementError) as e:
        read_image(b"\x00\x01")
    assert e.value.problem is InputProblem.UNREADABLE
    with pytest.raises(MeasurementError) as e:
        read_depth_png(cv2.imencode(".png", np.zeros((4, 4, 3), np.uint8))[1].tobytes())
    assert e.value.problem is InputProblem.WRONG_FORMAT


def test_target_prints_to_scale_and_calibrates_a_camera() -> None:
    target = make_calibration_target(squares_x=7, squares_y=5, square_mm=30.0, dpi=200)
    px_per_mm = 200 / 25.4
    assert target.shape == (round(150 * px_per_mm), round(210 * px_per_mm))
    assert make_fiducial_marker(3).shape == (600, 600)
    k = np.array([[1200.0, 0, 640], [0, 1200.0, 360], [0, 0, 1]])
    s_inv = np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0])
    views = []
    for rx, ry, dist in (
        (0.2, -0.1, 500),
        (-0.3, 0.2, 550),
        (0.1, 0.35, 600),
        (-0.25, -0.3, 520),
        (0.0, 0.0, 480),
    ):
        r, _ = cv2.Rodrigues(np.array([rx, ry, 0.05]))
        t = np.array([-105.0, -75.0, dist])
        # Board millimetres -> image pixels is K [r1 r2 t]; the board image is in print pixels.
        h = k @ np.column_stack([r[:, 0], r[:, 1], r @ np.zeros(3) + t]) @ s_inv
        views.append(
            np.asarray(cv2.warpPerspective(target, h, (1280, 720), borderValue=255), np.uint8)
        )
    calib = calibrate_intrinsics(views, squares_x=7, squares_y=5, square_mm=30.0)
    assert calib.matrix[0, 0] == pytest.approx(1200.0, rel=0.02)
    assert calib.matrix[0, 2] == pytest.approx(640.0, abs=15.0)
