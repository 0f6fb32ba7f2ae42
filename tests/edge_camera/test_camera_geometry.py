"""Homography calibration from clicked points and from the printed ArUco sheets."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from sidewalk.edge.camera.calibrate import main as calibrate_main
from sidewalk.edge.camera.geometry import (
    ARUCO_DICTIONARY,
    FrontageGeometry,
    MarkerPlacement,
    homography_from_aruco,
    homography_from_points,
    project,
)
from sidewalk.edge.camera.synthetic import PoleCamera
from sidewalk.edge.camera.target import marker_sheet, write_sheets

GROUND_RES_MM = 2.0


def test_four_points_give_an_exact_homography() -> None:
    image = np.array([[100, 400], [900, 380], [1000, 600], [50, 640]], np.float64)
    ground = np.array([[0, 0], [15240, 0], [15240, 1524], [0, 1524]], np.float64)
    h = homography_from_points(image, ground)
    assert np.allclose(project(h, image), ground, atol=1e-6)
    with pytest.raises(ValueError, match="four"):
        homography_from_points(image[:3], ground[:3])


def _ground_with_markers(
    placements: list[MarkerPlacement], marker_mm: float, size_mm: tuple[float, float]
) -> npt.NDArray[np.uint8]:
    """Grey concrete with white sheets and their markers, 2 mm per pixel, row index = +y.

    Rows growing with +y is the ground seen from below, so each face-up marker is
    painted upside down (flipped vertically) to appear the right way round from above.
    """
    rows, cols = round(size_mm[1] / GROUND_RES_MM), round(size_mm[0] / GROUND_RES_MM)
    top = np.full((rows, cols), 120, np.uint8)
    side = round(marker_mm / GROUND_RES_MM)
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY)
    for p in placements:
        cx, cy = round(p.x_mm / GROUND_RES_MM), round(p.y_mm / GROUND_RES_MM)
        sheet = round(215 / GROUND_RES_MM) // 2
        top[cy - sheet : cy + sheet, cx - sheet : cx + sheet] = 255
        marker = cv2.aruco.generateImageMarker(dictionary, p.marker_id, side)
        top[cy - side // 2 : cy - side // 2 + side, cx - side // 2 : cx - side // 2 + side] = (
            marker[::-1]
        )
    return np.asarray(cv2.cvtColor(top, cv2.COLOR_GRAY2BGR), dtype=np.uint8)


def test_aruco_calibration_recovers_the_ground_within_millimetres() -> None:
    length, walk = 6000.0, 1524.0
    placements = [
        MarkerPlacement(0, 300, 300),
        MarkerPlacement(1, 5700, 300),
        MarkerPlacement(2, 5700, 1224),
        MarkerPlacement(3, 300, 1224),
    ]
    top = _ground_with_markers(placements, 180.0, (length, walk))
    cam = PoleCamera(height_mm=4000, setback_mm=3000, hfov_deg=70)
    g2i = cam.ground_to_image(length, walk)
    scale = np.diag([GROUND_RES_MM, GROUND_RES_MM, 1.0])
    size = (cam.width_px, cam.height_px)
    frame = np.asarray(cv2.warpPerspective(top, g2i @ scale, size, flags=cv2.INTER_AREA), np.uint8)
    h = homography_from_aruco(frame, placements, 180.0)
    corners = np.array([[0, 0], [length, 0], [length, walk], [0, walk]], np.float64)
    corners_px = project(g2i, corners)
    error_mm = np.linalg.norm(project(h, corners_px) - corners, axis=1)
    assert error_mm.max() < 15.0, error_mm
    # Too few markers found is an error, not a silent bad calibration.
    with pytest.raises(ValueError, match="need at least 2"):
        homography_from_aruco(frame, [MarkerPlacement(9, 0, 0)], 180.0)


def test_rectified_grid_covers_walk_and_margins() -> None:
    g = FrontageGeometry(np.eye(3), length_mm=3000, walk_width_mm=1500, mm_per_px=10)
    assert g.grid_shape == (250, 300)
    assert g.walk_rows() == slice(50, 200)


def test_printed_sheet_holds_a_detectable_marker_at_true_size() -> None:
    page = marker_sheet(3, marker_mm=180.0, dpi=150)
    assert page.shape == (1650, 1275)  # Letter at 150 dpi
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY), cv2.aruco.DetectorParameters()
    )
    corners, ids, _ = detector.detectMarkers(page)
    assert ids is not None
    assert ids.ravel().tolist() == [3]
    side_px = np.linalg.norm(corners[0][0][0] - corners[0][0][1])
    assert side_px == pytest.approx(180.0 / 25.4 * 150, abs=2.0)


def test_sheets_are_written(tmp_path: Path) -> None:
    paths = write_sheets(tmp_path, [0, 1], 180.0, 100)
    assert [p.name for p in paths] == [
        "aruco_4x4_50_id0_180mm_letter.png",
        "aruco_4x4_50_id1_180mm_letter.png",
    ]
    assert all(cv2.imread(str(p)) is not None for p in paths)


def test_calibrate_command_from_clicked_points(tmp_path: Path) -> None:
    # Six clicks on a known homography, one of them 4 px off: the residual exposes it.
    h_true = np.array([[12.0, 0.5, -300.0], [0.2, 30.0, -9000.0], [0.0, 0.0008, 1.0]])
    ground = np.array(
        [[0, 0], [15240, 0], [15240, 1524], [0, 1524], [7620, 0], [7620, 1524]], np.float64
    )
    image = project(np.linalg.inv(h_true), ground)
    frame_path = tmp_path / "frame.png"
    cv2.imwrite(str(frame_path), np.zeros((1080, 1920, 3), np.uint8))
    points = [
        {"u": u, "v": v, "x_mm": x, "y_mm": y}
        for (u, v), (x, y) in zip(image.tolist(), ground.tolist(), strict=True)
    ]
    spec = {"length_mm": 15240, "walk_width_mm": 1524, "points": points}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "cal.json"
    assert calibrate_main([str(frame_path), str(tmp_path / "spec.json"), str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["residual_mm"] < 1.0
    assert np.allclose(project(np.array(result["image_to_ground"]), image), ground, atol=1.0)
    points[4]["u"] += 4.0
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    assert calibrate_main([str(frame_path), str(tmp_path / "spec.json"), str(out)]) == 1
