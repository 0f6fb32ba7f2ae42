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


def test_gap_width_p95_and_uncertainty() -> None:
    # The first frames of the accuracy bench's laser set (seeds 20000...).
    g_err, covered = [], 0
    for seed in range(20_000, 20_016):
        rng = np.random.default_rng(seed)
        scene = random_scene(rng)
        ji = int(rng.integers(0, len(scene.joints)))
        cam, n, d = laser_survey_rig(scene, rng, ji)
        img = render_laser(scene, cam, n, d, rng)
        up = cam.rotation @ np.array([0.0, 0.0, 1.0])
        prof = measure_laser_profile(
            img, LaserRig(CameraCalibration(cam.matrix, cam.distortion), n, d, up)
        )
        err = abs(prof.gap_width_mm - scene.joints[ji].gap_mm)
        g_err.append(err)
        covered += err <= 2 * prof.gap_width_uncertainty_mm
    # Before the second stripe peak per column (edges lost where the gap floor
    # and a rounded edge share image columns) this set read median 0.50 mm,
    # five errors over 1 mm. Now: median 0.3, two over 1 mm (one a meandering
    # crack with a 30 mm step, direction-limited, inside its 2 sigma).
    assert float(np.median(g_err)) <= 0.4
    assert sum(e > 1.0 for e in g_err) <= 3
    assert sum(e > 1.5875 for e in g_err) <= 1
    assert covered >= 14


def test_no_stripe_is_a_typed_error() -> None:
    rig = LaserRig(CameraCalibration(np.eye(3), np.zeros(5)), np.array([0.0, 1.0, 0.0]), 100.0)
    with pytest.raises(MeasurementError) as e:
        measure_laser_profile(np.full((720, 1280), 30, np.uint8), rig)
    assert e.value.problem is InputProblem.NO_LASER_LINE
