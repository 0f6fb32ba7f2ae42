"""Laser-line triangulation across a joint, against the synthetic truth."""

from __future__ import annotations

import numpy as np
import pytest

from sidewalk.analytics.defects import (
    CameraCalibration,
    InputProblem,
    LaserRig,
    MeasurementError,
    measure_laser_profile,
)
from sidewalk.analytics.defects.synthetic import laser_survey_rig, random_scene, render_laser


def test_profiles_against_truth() -> None:
    d_err, g_err, edge_ok = [], [], 0
    seeds = range(200, 206)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        scene = random_scene(rng)
        ji = int(rng.integers(0, len(scene.joints)))
        cam, n, d = laser_survey_rig(scene, rng, ji)
        img = render_laser(scene, cam, n, d, rng)
        up = cam.rotation @ np.array([0.0, 0.0, 1.0])  # the rig's IMU
        prof = measure_laser_profile(
            img, LaserRig(CameraCalibration(cam.matrix, cam.distortion), n, d, up)
        )
        w = cam.camera_to_world(np.array([prof.gap_center_mm]))[0]
        j = scene.joints[ji]
        d_err.append(abs(prof.vertical_differential_mm - scene.fault_at(j, float(w[1]))))
        g_err.append(abs(prof.gap_width_mm - j.gap_mm))
        edge_ok += prof.edge_type == j.kind
    assert max(d_err) <= 1.5875
    assert float(np.median(g_err)) <= 1.0
    assert edge_ok >= 5


def test_no_stripe_is_a_typed_error() -> None:
    rig = LaserRig(CameraCalibration(np.eye(3), np.zeros(5)), np.array([0.0, 1.0, 0.0]), 100.0)
    with pytest.raises(MeasurementError) as e:
        measure_laser_profile(np.full((720, 1280), 30, np.uint8), rig)
    assert e.value.problem is InputProblem.NO_LASER_LINE
