"""Ground homography of one frontage: image pixels to millimetres on the sidewalk.

The frontage frame: x runs along the frontage from its first property corner
(0 .. length_mm), y runs across the walk from the street-side edge
(0 .. walk_width_mm), on the walk's surface. The homography is calibrated once,
either from four clicked image points whose ground positions were taped, or
from printed ArUco sheets laid at taped positions (see hardware/calibration.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
BoolMask = npt.NDArray[np.bool_]

ARUCO_DICTIONARY = cv2.aruco.DICT_4X4_50


def homography_from_points(image_points: FloatArray, ground_points_mm: FloatArray) -> FloatArray:
    """Image-to-ground homography from four or more point pairs (least squares if more)."""
    src = np.asarray(image_points, dtype=np.float64).reshape(-1, 2)
    dst = np.asarray(ground_points_mm, dtype=np.float64).reshape(-1, 2)
    if len(src) != len(dst) or len(src) < 4:
        raise ValueError("need at least four matching image and ground points")
    h, _ = cv2.findHomography(src, dst, method=0)
    if h is None:
        raise ValueError("points are degenerate (three or more on one line?)")
    return np.asarray(h, dtype=np.float64)


def project(h: FloatArray, points: FloatArray) -> FloatArray:
    """Apply homography ``h`` to an (N, 2) array of points."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
    return np.asarray(cv2.perspectiveTransform(pts, h), dtype=np.float64).reshape(-1, 2)


@dataclass(frozen=True, slots=True)
class MarkerPlacement:
    """Where the centre of one printed ArUco sheet was taped, in the frontage frame.

    The sheet lies flat with its printed "+x" arrow pointing along the frontage.
    """

    marker_id: int
    x_mm: float
    y_mm: float


def marker_ground_corners(placement: MarkerPlacement, marker_mm: float) -> FloatArray:
    """Ground positions of a marker's corners in ArUco order (TL, TR, BR, BL).

    The sheet lies face up with its arrow along +x, so its printed top edge faces
    +y (away from the street): the printed top-left corner is at (-half, +half).
    """
    half = marker_mm / 2.0
    offsets = np.array([[-half, half], [half, half], [half, -half], [-half, -half]], np.float64)
    return np.asarray(offsets + np.array([placement.x_mm, placement.y_mm]), dtype=np.float64)


def aruco_correspondences(
    frame: Image, placements: list[MarkerPlacement], marker_mm: float
) -> tuple[FloatArray, FloatArray]:
    """Detected image corners of the placed markers and their taped ground positions."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY), cv2.aruco.DetectorParameters()
    )
    corners, ids, _ = detector.detectMarkers(gray)
    by_id = {p.marker_id: p for p in placements}
    image_pts: list[FloatArray] = [np.empty((0, 2))]
    ground_pts: list[FloatArray] = [np.empty((0, 2))]
    for marker_corners, marker_id in zip(corners, [] if ids is None else ids.ravel(), strict=True):
        placement = by_id.get(int(marker_id))
        if placement is not None:
            image_pts.append(np.asarray(marker_corners, dtype=np.float64).reshape(4, 2))
            ground_pts.append(marker_ground_corners(placement, marker_mm))
    return np.vstack(image_pts), np.vstack(ground_pts)


def homography_from_aruco(
    frame: Image, placements: list[MarkerPlacement], marker_mm: float
) -> FloatArray:
    """Detect the placed markers in ``frame`` and fit the image-to-ground homography.

    Raises ValueError if fewer than two placed markers are found (eight corners
    is the least that still over-determines the fit).
    """
    image_pts, ground_pts = aruco_correspondences(frame, placements, marker_mm)
    if len(image_pts) < 8:
        raise ValueError(f"found {len(image_pts) // 4} of the placed markers; need at least 2")
    return homography_from_points(image_pts, ground_pts)


@dataclass(frozen=True, slots=True)
class FrontageGeometry:
    """One frontage as the camera sees it, and the top-down grid it is measured on.

    ``margin_mm`` of lawn and terrace on each side of the walk is rectified too:
    the snow threshold is chosen over the wider strip, so that a fully cleared
    walk still has snow beside it to compare with.
    """

    image_to_ground: FloatArray
    length_mm: float
    walk_width_mm: float
    mm_per_px: float = 10.0
    margin_mm: float = 500.0

    @property
    def grid_shape(self) -> tuple[int, int]:
        """(rows across the strip, columns along the frontage) of the rectified grid."""
        rows = math.ceil((self.walk_width_mm + 2 * self.margin_mm) / self.mm_per_px)
        return rows, math.ceil(self.length_mm / self.mm_per_px)

    def walk_rows(self) -> slice:
        """Rows of the rectified grid that lie on the walk itself."""
        first = round(self.margin_mm / self.mm_per_px)
        return slice(first, first + round(self.walk_width_mm / self.mm_per_px))

    def _image_to_grid(self) -> FloatArray:
        s = 1.0 / self.mm_per_px
        to_grid = np.array([[s, 0.0, 0.0], [0.0, s, self.margin_mm * s], [0.0, 0.0, 1.0]])
        return to_grid @ self.image_to_ground

    def rectify(self, frame: Image) -> tuple[Image, BoolMask]:
        """Top-down view of the strip and the mask of grid cells the camera actually sees."""
        rows, cols = self.grid_shape
        m = self._image_to_grid()
        top = cv2.warpPerspective(frame, m, (cols, rows), flags=cv2.INTER_LINEAR)
        seen = cv2.warpPerspective(
            np.full(frame.shape[:2], 255, np.uint8), m, (cols, rows), flags=cv2.INTER_NEAREST
        )
        return np.asarray(top, dtype=np.uint8), np.asarray(seen > 0)
