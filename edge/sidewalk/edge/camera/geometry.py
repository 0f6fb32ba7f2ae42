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


# An installer clicks each of the walk's four corners in the pole's picture to within
# about this many pixels (one sigma per coordinate; the clicked-calibration tests
# allow 1.5 px either way).
CLICK_SIGMA_PX = 1.0


def edge_error_mm(
    image_to_ground: FloatArray,
    length_mm: float,
    walk_width_mm: float,
    *,
    sigma_px: float = CLICK_SIGMA_PX,
    samples: int = 32,
) -> float:
    """One sigma, in mm across the walk, of where a calibration from the walk's four
    clicked corners puts the walk's two long edges, for clicks ``sigma_px`` off.

    The calibration's own error, read from the calibration itself: its corners are
    moved by the click error (a fixed seed: the same calibration always gives the same
    figure), the homography refitted, and the true edges' across-walk position read
    through each refit, at nine points along each edge. Far from the pole a pixel spans
    more ground, so a far walk's edges are less certain."""
    h = np.asarray(image_to_ground, np.float64)
    length, width = float(length_mm), float(walk_width_mm)
    ground = np.array([[0.0, 0.0], [length, 0.0], [length, width], [0.0, width]])
    back = np.asarray(np.linalg.inv(h), np.float64)
    corners_px = project(back, ground)
    xs = np.linspace(0.0, length, 9)
    edges = np.concatenate(
        [np.column_stack([xs, np.zeros(9)]), np.column_stack([xs, np.full(9, width)])]
    )
    edges_px = project(back, edges)
    rng = np.random.default_rng(0)
    moved = []
    for _ in range(samples):
        refit = homography_from_points(corners_px + rng.normal(0.0, sigma_px, (4, 2)), ground)
        moved.append(project(refit, edges_px)[:, 1] - edges[:, 1])
    return float(np.sqrt(np.mean(np.square(moved))))


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
    # The calibration's own error: one sigma, in mm across the walk, of where it puts
    # each of the walk's long edges (``edge_error_mm`` for clicked corners; a fit's
    # residual at its reference points for a taped calibration). A walk edge off by
    # this much puts a sliver of the bank inside the walk, or of the walk outside it.
    calibration_error_mm: float = 0.0

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

    def pixel_across_mm(self, x_mm: float) -> float:
        """Ground millimetres across the walk that one image pixel spans at ``x_mm`` along
        it, mid-walk (the image's own resolution there)."""
        back = np.asarray(np.linalg.inv(self.image_to_ground), np.float64)
        mid = np.array([[x_mm, self.walk_width_mm / 2]])
        u, v = project(back, mid)[0]
        step = project(self.image_to_ground, np.array([[u + 1, v], [u, v + 1], [u, v]]))
        return float(max(abs(step[0, 1] - step[2, 1]), abs(step[1, 1] - step[2, 1])))

    def rectify(self, frame: Image) -> tuple[Image, BoolMask]:
        """Top-down view of the strip and the mask of grid cells the camera actually sees."""
        rows, cols = self.grid_shape
        m = self._image_to_grid()
        top = cv2.warpPerspective(frame, m, (cols, rows), flags=cv2.INTER_LINEAR)
        seen = cv2.warpPerspective(
            np.full(frame.shape[:2], 255, np.uint8), m, (cols, rows), flags=cv2.INTER_NEAREST
        )
        return np.asarray(top, dtype=np.uint8), np.asarray(seen > 0)
