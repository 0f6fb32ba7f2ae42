"""Laser-line triangulation across a joint, against the synthetic truth."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sidewalk.analytics.defects import (
    MM_PER_INCH,
    CameraCalibration,
    InputProblem,
    LaserRig,
    MeasurementError,
    measure_laser_profile,
)
from sidewalk.analytics.defects.laser import LaserParams, _split_halves, _stripe_image
from sidewalk.analytics.inspect import load_laser_rig
from sidewalk.testkit.defect_scenes import (
    Camera,
    SidewalkScene,
    laser_pair_survey_rig,
    laser_survey_rig,
    random_scene,
    render_laser,
)
from sidewalk.testkit.defect_truth import true_gap_at

TARGET = MM_PER_INCH / 16


def _pair_frame(seed: int) -> tuple[SidewalkScene, int, Camera, LaserRig, np.ndarray]:
    """A two-stripe survey frame over a random joint of a random scene."""
    rng = np.random.default_rng(seed)
    scene = random_scene(rng)
    ji = int(rng.integers(0, len(scene.joints)))
    cam, (first, second) = laser_pair_survey_rig(scene, rng, ji)
    img = render_laser(scene, cam, first[0], first[1], rng, more_sheets=(second,))
    up = cam.rotation @ np.array([0.0, 0.0, 1.0])  # the rig's IMU
    rig = LaserRig(CameraCalibration(cam.matrix, cam.distortion), *first, up, second)
    return scene, ji, cam, rig, img


def _errors(
    scene: SidewalkScene, ji: int, cam: Camera, rig: LaserRig, img: np.ndarray
) -> tuple[float, float, float, float, bool]:
    """Gap and differential errors against the truth where the stripes cross,
    their stated uncertainties, and whether the edge type is right."""
    prof = measure_laser_profile(img, rig)
    w = cam.camera_to_world(np.array([prof.gap_center_mm]))[0]
    j = scene.joints[ji]
    return (
        prof.gap_width_mm - true_gap_at(scene, j, float(w[1])),
        prof.gap_width_uncertainty_mm,
        prof.vertical_differential_mm - scene.fault_at(j, float(w[1])),
        prof.vertical_differential_uncertainty_mm,
        prof.edge_type == j.kind,
    )


def test_two_stripes_against_truth() -> None:
    # Seeds 50000-50005 include meandering cracks with 19-30 mm steps, where
    # one stripe read the gap up to 1.5 mm off (the joint's direction unseen).
    res = [_errors(*_pair_frame(seed)) for seed in range(50_000, 50_006)]
    g_err = [abs(r[0]) for r in res]
    d_err = [abs(r[2]) for r in res]
    assert max(g_err) <= TARGET / 2
    assert float(np.median(g_err)) <= 0.3
    assert max(d_err) <= TARGET / 2
    assert sum(r[4] for r in res) >= 5
    assert sum(abs(r[0]) <= 2 * r[1] for r in res) >= 5
    assert sum(abs(r[2]) <= 2 * r[3] for r in res) >= 5
    # The uncertainty is the two stripes' own, not the survey's joint tolerance.
    assert max(r[1] for r in res) <= 1.0


def test_one_stripe_is_the_degraded_mode() -> None:
    d_err, g_err, edge_ok = [], [], 0
    for seed in range(200, 205):
        rng = np.random.default_rng(seed)
        scene = random_scene(rng)
        ji = int(rng.integers(0, len(scene.joints)))
        cam, n, d = laser_survey_rig(scene, rng, ji)
        img = render_laser(scene, cam, n, d, rng)
        up = cam.rotation @ np.array([0.0, 0.0, 1.0])
        prof = measure_laser_profile(
            img, LaserRig(CameraCalibration(cam.matrix, cam.distortion), n, d, up)
        )
        w = cam.camera_to_world(np.array([prof.gap_center_mm]))[0]
        j = scene.joints[ji]
        d_err.append(abs(prof.vertical_differential_mm - scene.fault_at(j, float(w[1]))))
        err = abs(prof.gap_width_mm - true_gap_at(scene, j, float(w[1])))
        g_err.append(err)
        # One line cannot see the joint's direction; the stated uncertainty
        # carries it at the survey's tolerance on the direction.
        assert err <= 2 * prof.gap_width_uncertainty_mm
        edge_ok += prof.edge_type == j.kind
    assert max(d_err) <= TARGET
    assert float(np.median(g_err)) <= 1.0
    assert edge_ok >= 4


def test_unreadable_second_stripe_falls_back_to_one() -> None:
    scene, ji, cam, rig, img = _pair_frame(50_001)
    both = _errors(scene, ji, cam, rig, img)
    # Erase the second stripe beyond the middle of the frame: it no longer
    # crosses a joint, and the first is measured alone.
    g = _stripe_image(img)
    _, second = _split_halves(g, rig, LaserParams())
    cut = img.copy()
    right = np.zeros_like(second)
    right[:, img.shape[1] // 2 :] = True
    cut[second & right] = 30
    one = _errors(scene, ji, cam, rig, cut)
    assert one[1] > both[1]  # wider: the joint's direction is the survey tolerance
    assert abs(one[0]) <= 2 * one[1]
    assert abs(one[2]) <= TARGET


def test_rig_files_with_one_or_two_planes(tmp_path: Path) -> None:
    _, _, cam, rig, _ = _pair_frame(50_002)
    assert rig.second_plane is not None
    data = {
        "matrix": cam.matrix.tolist(),
        "distortion": cam.distortion.tolist(),
        "plane_normal": rig.plane_normal.tolist(),
        "plane_offset_mm": rig.plane_offset_mm,
        "up": rig.up.tolist(),
    }
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    assert load_laser_rig(old).second_plane is None
    data |= {
        "plane2_normal": rig.second_plane[0].tolist(),
        "plane2_offset_mm": rig.second_plane[1],
    }
    two = tmp_path / "two.json"
    two.write_text(json.dumps(data))
    loaded = load_laser_rig(two)
    assert loaded.second_plane is not None
    np.testing.assert_allclose(loaded.second_plane[0], rig.second_plane[0])
    assert loaded.second_plane[1] == pytest.approx(rig.second_plane[1])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data | {"plane2_normal": [0, 0, 0]}))
    with pytest.raises(ValueError, match="plane2_normal"):
        load_laser_rig(bad)


def test_no_stripe_is_a_typed_error() -> None:
    rig = LaserRig(CameraCalibration(np.eye(3), np.zeros(5)), np.array([0.0, 1.0, 0.0]), 100.0)
    with pytest.raises(MeasurementError) as e:
        measure_laser_profile(np.full((720, 1280), 30, np.uint8), rig)
    assert e.value.problem is InputProblem.NO_LASER_LINE
    two = LaserRig(rig.camera, rig.plane_normal, 100.0, rig.up, (np.array([0.0, 0.9, 0.1]), 90.0))
    with pytest.raises(MeasurementError) as e:
        measure_laser_profile(np.full((720, 1280), 30, np.uint8), two)
    assert e.value.problem is InputProblem.NO_LASER_LINE
