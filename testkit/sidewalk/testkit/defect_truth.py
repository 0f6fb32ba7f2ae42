"""Pairing measurements with the synthetic ground truth (for tests and benchmarks)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sidewalk.analytics.defects.results import EdgeType, JointMeasurement, SpallMeasurement

from .defect_scenes import Camera, JointTruth, SidewalkScene, SpallTruth


@dataclass(frozen=True, slots=True)
class JointPair:
    """A measured joint and the true joint it lies on."""

    measured: JointMeasurement
    truth: JointTruth
    true_differential_mm: float  # at the measured joint's mid-point
    true_max_abs_differential_mm: float  # over the measured extent
    true_gap_mm: float
    true_edge: EdgeType


@dataclass(frozen=True, slots=True)
class SpallPair:
    """A measured spall and the true one it lies in."""

    measured: SpallMeasurement
    truth: SpallTruth


def world_point(camera: Camera, sensor_point: tuple[float, float, float]) -> np.ndarray:
    """A sensor-frame point (camera coordinates, mm) in the world frame."""
    out: np.ndarray = camera.camera_to_world(np.array([sensor_point], float))[0]
    return out


def pair_joints(
    scene: SidewalkScene, camera: Camera, joints: tuple[JointMeasurement, ...], tol_mm: float = 60.0
) -> list[JointPair]:
    """Pair each measured joint with the true joint within ``tol_mm`` of it."""
    out: list[JointPair] = []
    for m in joints:
        w = world_point(camera, m.center_mm)
        y = np.array([w[1]])
        best = min(scene.joints, key=lambda j: abs(float(scene.joint_center_x(j, y)[0]) - w[0]))
        if abs(float(scene.joint_center_x(best, y)[0]) - w[0]) > tol_mm:
            continue
        half = m.observed_length_mm / 2
        out.append(
            JointPair(
                measured=m,
                truth=best,
                true_differential_mm=scene.fault_at(best, float(w[1])),
                true_max_abs_differential_mm=scene.max_abs_fault(
                    best, float(w[1]) - half, float(w[1]) + half
                ),
                true_gap_mm=best.gap_mm,
                true_edge=best.kind,
            )
        )
    return out


def pair_spalls(
    scene: SidewalkScene, camera: Camera, spalls: list[SpallMeasurement]
) -> list[SpallPair]:
    """Pair each measured spall with the true spall whose ellipse contains its centre."""
    out: list[SpallPair] = []
    for m in spalls:
        w = world_point(camera, m.center_mm)
        for s in scene.spalls:
            d = np.hypot(w[0] - s.center_x_mm, w[1] - s.center_y_mm)
            if d < s.semi_a_mm:
                out.append(SpallPair(m, s))
                break
    return out


def joint_slope(scene: SidewalkScene, joint: JointTruth, y: float) -> float:
    """dx/dy of the joint's centre line at across-walk position y (skew and meander)."""
    yc = y - scene.walk_width_mm / 2
    k = 2 * math.pi / joint.meander_wavelength_mm
    return math.tan(joint.skew_rad) + joint.meander_amplitude_mm * k * math.cos(
        k * yc + joint.meander_phase_rad
    )


def true_gap_at(scene: SidewalkScene, joint: JointTruth, y: float) -> float:
    """Perpendicular opening between the faces at across-walk position y.

    The faces are the centre line shifted by gap / (2 cos skew) along the
    walk, so where a crack meanders off its mean direction the perpendicular
    opening is that shift times the cosine of the local direction: up to
    about 4 % below ``gap_mm`` (1.9 mm at a 45 mm gap). For a straight joint
    it is ``gap_mm``.
    """
    shift = joint.gap_mm / math.cos(joint.skew_rad)
    return shift * math.cos(math.atan(joint_slope(scene, joint, y)))
