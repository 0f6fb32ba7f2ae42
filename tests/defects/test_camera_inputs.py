"""Intrinsics, depth units, gravity and marker options in the formats users have;
each wrong input is one line naming it (``DefectInputError``), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from sidewalk.analytics.defects import DepthIntrinsics, InputProblem, MeasurementError
from sidewalk.analytics.defects.camera_inputs import (
    DefectInputError,
    aruco_dictionary,
    depth_scale_mm,
    level_reference,
    load_camera_calibration,
    load_depth_intrinsics,
)
from sidewalk.analytics.defects.depth import measure_depth_map
from sidewalk.analytics.inspect import load_intrinsics

K = {"fx": 900.5, "fy": 901.0, "cx": 639.5, "cy": 359.5}


def _expect(intr: DepthIntrinsics, scale: float = 1.0) -> None:
    assert (intr.fx, intr.fy, intr.cx, intr.cy) == pytest.approx(
        (K["fx"], K["fy"], K["cx"], K["cy"])
    )
    assert intr.depth_scale_mm == pytest.approx(scale)


def test_plain_json_flat_and_nested(tmp_path: Path) -> None:
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(K))
    _expect(load_depth_intrinsics(flat))
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"camera": {"depth": {"intrinsics": K}}, "serial": "x"}))
    _expect(load_depth_intrinsics(nested))
    # The command line's loader takes the nested file too (it raised KeyError: 'fx').
    _expect(load_intrinsics(nested))


def test_realsense_json_with_depth_units(tmp_path: Path) -> None:
    rs = {
        "depth_units": 0.00025,
        "intrinsics": {
            "width": 1280, "height": 720, "ppx": K["cx"], "ppy": K["cy"],
            "fx": K["fx"], "fy": K["fy"], "model": "Brown Conrady", "coeffs": [0, 0, 0, 0, 0],
        },
    }  # fmt: skip
    f = tmp_path / "rs.json"
    f.write_text(json.dumps(rs))
    _expect(load_depth_intrinsics(f), scale=0.25)
    # An explicit scale wins over the file's.
    _expect(load_depth_intrinsics(f, depth_scale_mm=1.0), scale=1.0)


def test_ros_camera_info_yaml(tmp_path: Path) -> None:
    f = tmp_path / "camera_info.yaml"
    f.write_text(
        "image_width: 1280\nimage_height: 720\ncamera_name: depth\n"
        "camera_matrix:\n  rows: 3\n  cols: 3\n"
        f"  data: [{K['fx']}, 0, {K['cx']}, 0, {K['fy']}, {K['cy']}, 0, 0, 1]\n"
        "distortion_model: plumb_bob\n"
        "distortion_coefficients:\n  rows: 1\n  cols: 5\n  data: [-0.1, 0.01, 0, 0, 0]\n"
    )
    _expect(load_depth_intrinsics(f))
    cal = load_camera_calibration(f)
    assert cal.distortion[0] == pytest.approx(-0.1)
    # The ROS 2 message itself: lower-case k and d.
    msg = tmp_path / "msg.yaml"
    msg.write_text(f"k: [{K['fx']}, 0, {K['cx']}, 0, {K['fy']}, {K['cy']}, 0, 0, 1]\nd: []\n")
    _expect(load_depth_intrinsics(msg))


@pytest.mark.parametrize("ext", ["yml", "xml"])
def test_opencv_filestorage(tmp_path: Path, ext: str) -> None:
    f = tmp_path / f"calib.{ext}"
    fs = cv2.FileStorage(str(f), cv2.FILE_STORAGE_WRITE)
    m = np.array([[K["fx"], 0, K["cx"]], [0, K["fy"], K["cy"]], [0, 0, 1]])
    fs.write("camera_matrix", m)
    fs.write("distortion_coefficients", np.array([[0.02, -0.01, 0, 0, 0]]))
    fs.release()
    _expect(load_depth_intrinsics(f))
    assert load_camera_calibration(f).distortion[0] == pytest.approx(0.02)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty file"),
        ("{not json", "not valid JSON"),
        ('{"fx": 900, "fy": 900}', "without cx, cy"),
        ('{"fx": "wide", "fy": 900, "cx": 1, "cy": 1}', "fx is not a number"),
        ('{"fx": -900, "fy": 900, "cx": 1, "cy": 1}', "focal lengths must be positive"),
        ('{"camera_matrix": [1, 2, 3]}', "has 3 numbers"),
        ('{"serial": "123"}', "no intrinsics found"),
        ("- just\n- a list\n", "not a JSON/YAML mapping"),
    ],
)
def test_each_wrong_input_is_one_line_naming_it(tmp_path: Path, text: str, needle: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(text)
    with pytest.raises(DefectInputError) as err:
        load_depth_intrinsics(f)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(str(f))
    assert needle in msg


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DefectInputError, match="cannot read"):
        load_depth_intrinsics(tmp_path / "nope.json")


def test_depth_scale_and_unit() -> None:
    assert depth_scale_mm() == 1.0
    assert depth_scale_mm(0.25, "mm") == 0.25
    assert depth_scale_mm(0.001, "m") == pytest.approx(1.0)
    assert depth_scale_mm(100, "um") == pytest.approx(0.1)
    with pytest.raises(DefectInputError, match="--depth-unit"):
        depth_scale_mm(1.0, "furlong")
    with pytest.raises(DefectInputError, match="--depth-scale"):
        depth_scale_mm(0.0, "mm")


def test_a_map_in_other_units_is_not_measured() -> None:
    # A flat floor 1.2 m away written in 0.25 mm units (4800 counts).
    depth = np.full((120, 160), 4800, np.uint16)
    k = DepthIntrinsics(150.0, 150.0, 80.0, 60.0)
    with pytest.raises(MeasurementError) as err:
        measure_depth_map(depth, k, depth_scale_mm=0.01)
    assert err.value.problem is InputProblem.NOT_MEASURED
    assert "other units" in err.value.detail
    # Read with its scale it is a plane at 1.2 m, no error.
    out = measure_depth_map(depth, DepthIntrinsics(150.0, 150.0, 80.0, 60.0, depth_scale_mm=0.25))
    assert out.joints == ()


def test_gravity_from_imu_or_level() -> None:
    # Accelerometer at rest reads "up" (specific force): gravity is its opposite.
    ref = level_reference(accel="0, -9.79, 0.4", toward_curb="left")
    assert ref is not None
    assert ref.gravity[1] > 0.99
    assert ref.toward_curb == (-1.0, 0.0, 0.0)
    g = level_reference(gravity=[0, 0, 2])
    assert g is not None
    assert g.gravity == (0.0, 0.0, 1.0)
    lv = level_reference(level="nadir")
    assert lv is not None
    assert lv.gravity == (0.0, 0.0, 1.0)
    assert level_reference() is None
    with pytest.raises(DefectInputError, match="--accel"):
        level_reference(accel="0 0 0.1")
    with pytest.raises(DefectInputError, match="one of"):
        level_reference(gravity="0 0 1", level="nadir")
    with pytest.raises(DefectInputError, match="--gravity"):
        level_reference(gravity="0 1")
    with pytest.raises(DefectInputError, match="--toward-curb"):
        level_reference(gravity="0 1 0", toward_curb="down")


def test_marker_dictionary_by_name() -> None:
    assert aruco_dictionary("4X4_50") == cv2.aruco.DICT_4X4_50
    assert aruco_dictionary("DICT_6X6_250") == cv2.aruco.DICT_6X6_250
    assert aruco_dictionary("aruco_original") == cv2.aruco.DICT_ARUCO_ORIGINAL
    with pytest.raises(DefectInputError, match="--marker-dictionary"):
        aruco_dictionary("7X7_9")
