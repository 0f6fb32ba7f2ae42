"""Depth maps and photos beyond the documented survey geometry:
the joint along the image's x axis, a pitched camera, a 3 in gap, a sawn
joint, a small marker. Each case failed before the fix."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sidewalk.analytics.defects import (
    MM_PER_INCH,
    CameraCalibration,
    DepthIntrinsics,
    EdgeType,
    FiducialSpec,
    InputProblem,
    MeasurementError,
    measure_depth_map,
    measure_photo,
)
from sidewalk.testkit.defect_scenes import (
    RENDER_DEPTH_PARAMS,
    Camera,
    SidewalkScene,
    look_down_camera,
    optical_axis_ground_point,
    place_marker,
    random_scene,
    render_depth,
    render_photo,
    survey_photo_camera,
)
from sidewalk.testkit.defect_truth import pair_joints


def _intrinsics(cam: Camera) -> DepthIntrinsics:
    k = cam.matrix
    return DepthIntrinsics(k[0, 0], k[1, 1], k[0, 2], k[1, 2])


def _one_joint(seed: int, **joint: float | EdgeType) -> SidewalkScene:
    """A scene whose first joint has the given truth, flat blocks, no spalls."""
    rng = np.random.default_rng(seed)
    base = random_scene(rng, spalls_per_block=(0, 0))
    # Ignored: a dict of mixed values cannot be typed per field for ``replace``.
    j0 = replace(base.joints[0], **joint)  # type: ignore[arg-type]
    fault = j0.fault_mm
    b0 = replace(base.blocks[0], slope_x=0.0)
    b1 = replace(base.blocks[1], z0_mm=b0.z0_mm + fault, slope_x=0.0)
    rest = tuple(replace(b, z0_mm=b1.z0_mm, slope_x=0.0) for b in base.blocks[2:])
    flat = tuple(replace(j, fault_mm=0.0) for j in base.joints[1:])
    return replace(base, joints=(j0, *flat), blocks=(b0, b1, *rest))


def _camera(scene: SidewalkScene, *, yaw: float, pitch: float, height: float = 1000.0) -> Camera:
    """A small (640 x 360, 450 px: the survey camera's ground sample, faster)
    depth camera whose optical axis meets the walk at the first joint."""
    j = scene.joints[0]
    y = scene.walk_width_mm / 2
    x = float(scene.joint_center_x(j, np.array([y]))[0])
    along_x = abs(yaw) > 45
    tilt, pan = (pitch, 0.0) if along_x else (0.0, pitch)
    cam = look_down_camera(
        width=640, height=360, focal_px=450.0, center_mm=(x, y, height),
        tilt_deg=tilt, pan_deg=pan, yaw_deg=yaw,
    )  # fmt: skip
    gx, gy = optical_axis_ground_point(cam, scene.blocks[0].z0_mm)
    centre = np.array([2 * x - gx, 2 * y - gy, height])
    return Camera(cam.width, cam.height, cam.matrix, cam.distortion, cam.rotation, centre)


# Ignored: the return type is left to inference.
def _measured(scene: SidewalkScene, cam: Camera, seed: int = 5):  # type: ignore[no-untyped-def]
    depth = render_depth(scene, cam, np.random.default_rng(seed), noise_mm=0.5)
    insp = measure_depth_map(depth, _intrinsics(cam), params=RENDER_DEPTH_PARAMS)
    pairs = [p for p in pair_joints(scene, cam, insp.joints) if p.truth.index == 0]
    assert pairs, f"joint not found; joints: {insp.joints}"
    return pairs[0]


@pytest.mark.parametrize("yaw", [80.0, 100.0])
def test_fault_sign_with_the_joint_along_image_x(yaw: float) -> None:
    # The walk runs up the image (survey direction, world +x, is image up):
    # blocks used to be ordered by image x, which flipped the sign one way.
    scene = _one_joint(41, fault_mm=-22.0, gap_mm=12.0, skew_rad=0.02)
    cam = _camera(scene, yaw=yaw, pitch=8.0)
    p = _measured(scene, cam)
    assert p.measured.vertical_differential_mm == pytest.approx(-22.0, abs=1.0)
    # Given explicitly (world +x in the camera frame), the same.
    depth = render_depth(scene, cam, np.random.default_rng(5), noise_mm=0.5)
    ahead = cam.rotation @ np.array([1.0, 0.0, 0.0])
    insp = measure_depth_map(depth, _intrinsics(cam), survey_direction=tuple(ahead))
    assert insp.joints
    assert insp.joints[0].vertical_differential_mm == pytest.approx(-22.0, abs=1.0)


def test_a_three_inch_gap_pitched_camera() -> None:
    # 3 in is wider than the old 70 mm closing: the joint was not found at all.
    scene = _one_joint(42, gap_mm=3 * MM_PER_INCH, fault_mm=10.0, skew_rad=0.0)
    p = _measured(scene, _camera(scene, yaw=0.0, pitch=20.0))
    m = p.measured
    assert abs(m.gap_width_mm - p.true_gap_mm) <= 2 * m.gap_width_uncertainty_mm + 0.5
    assert m.gap_width_mm >= 1.25 * MM_PER_INCH  # over the (11)(b) limit


def test_a_hairline_gap_beside_a_step_is_not_read_closed() -> None:
    # 4 mm beside a 30 mm step read 0.0 mm: now the gap or, narrower than the
    # sensor resolves, a value whose uncertainty covers the truth.
    scene = _one_joint(43, gap_mm=4.0, fault_mm=30.0, skew_rad=0.0, edge_radius_mm=0.0)
    p = _measured(scene, _camera(scene, yaw=0.0, pitch=15.0))
    m = p.measured
    assert m.gap_width_mm > 0.0
    assert abs(m.gap_width_mm - 4.0) <= 2 * m.gap_width_uncertainty_mm + 0.5


def test_a_map_without_depth_units_of_millimetres_is_refused() -> None:
    # 0.25 mm units read as millimetres went through with 159 mm "faults".
    depth = np.full((200, 300), 4400, np.uint16)
    with pytest.raises(MeasurementError) as err:
        measure_depth_map(depth, DepthIntrinsics(300.0, 300.0, 150.0, 100.0))
    assert err.value.problem is InputProblem.NOT_MEASURED


def _small_marker_photo(focal_px: float) -> tuple[np.ndarray, CameraCalibration]:
    rng = np.random.default_rng(77)
    scene = random_scene(rng, spalls_per_block=(0, 0))
    cam = survey_photo_camera(scene, rng, 0, focal_px=focal_px)
    marker = place_marker(scene, cam, rng, side_mm=100.0)
    return render_photo(scene, cam, marker, rng), CameraCalibration(cam.matrix, cam.distortion)


def test_a_100_mm_marker_at_61_to_69_px_is_measured() -> None:
    # The fixed 80 px floor refused every such photo (fiducial_too_small);
    # the floor is now the size whose ground frame keeps 1/16 in (60 px).
    img, calib = _small_marker_photo(1400.0)
    insp = measure_photo(img, calib, FiducialSpec(side_mm=100.0))
    assert 0.5 < insp.mm_per_pixel < 4.0


def test_a_100_mm_marker_at_46_px_is_not_measured_for_cracks() -> None:
    # Under the 60 px floor the crack traces are not looked for (their frame
    # does not keep 1/16 in); only the straight-joint gauge runs, to its own
    # 2 sigma. On this photo it cannot place the joint's two edges: not
    # measured, with the reasons, never measured into a pass.
    img, calib = _small_marker_photo(1000.0)
    with pytest.raises(MeasurementError) as err:
        measure_photo(img, calib, FiducialSpec(side_mm=100.0))
    assert err.value.problem is InputProblem.NOT_MEASURED
    assert "no joint or crack found" in err.value.detail
    assert "cracks are looked for with the marker 60 px across or more" in err.value.detail


@pytest.mark.parametrize(("yaw", "pitch"), [(0.0, 15.0), (90.0, -15.0)])
def test_a_joint_is_stationed_along_the_walk_whichever_way_the_camera_is_turned(
    yaw: float, pitch: float
) -> None:
    # The joint's offset from the file's station (the walk-plane point under
    # the image centre) was the sensor's x: with the walk up the image it was
    # the offset across the walk. Now it is along the survey direction.
    scene = _one_joint(44, fault_mm=6.0, gap_mm=10.0, skew_rad=0.0)
    aimed = _camera(scene, yaw=yaw, pitch=pitch)
    shift = np.array([150.0, 40.0, 0.0])  # the image centre 150 mm past the joint
    cam = Camera(
        aimed.width, aimed.height, aimed.matrix, aimed.distortion, aimed.rotation,
        aimed.center_mm + shift,
    )  # fmt: skip
    p = _measured(scene, cam)
    assert p.measured.along_walk_mm == pytest.approx(-150.0, abs=10.0)
