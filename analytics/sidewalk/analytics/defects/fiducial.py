"""Calibration target, intrinsic calibration and the ground fiducial.

A ChArUco board (printed from ``make_calibration_target``) calibrates the
camera; a single ArUco marker of known side lying on the walk gives the
image-to-ground homography in millimetres for each survey photo.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from .errors import InputProblem, MeasurementError

F64 = NDArray[np.float64]
U8 = NDArray[np.uint8]


@dataclass(frozen=True, slots=True, eq=False)
class CameraCalibration:
    """Intrinsics (pixels) and OpenCV distortion (k1, k2, p1, p2, k3)."""

    matrix: F64
    distortion: F64
    rms_px: float = 0.0


@dataclass(frozen=True, slots=True)
class CharucoBoardSpec:
    """A printed ChArUco board lying flat on the walk (``make_calibration_target``'s
    layout): many corners where one marker would be too small in the photo."""

    squares_x: int = 7
    squares_y: int = 5
    square_mm: float = 30.0
    marker_mm: float = 22.0
    min_corners: int = 6


@dataclass(frozen=True, slots=True)
class FiducialSpec:
    """The ground marker: an ArUco marker of known printed side (or a ChArUco board)."""

    side_mm: float = 150.0
    dictionary: int = cv2.aruco.DICT_4X4_50
    marker_id: int | None = None  # None: the largest marker found
    board: CharucoBoardSpec | None = None
    # Smallest marker side (px) measured; None: ``FiducialLimits.min_side_px``.
    min_side_px: float | None = None


@dataclass(frozen=True, slots=True)
class FiducialLimits:
    """When a fiducial is too small or oblique for the accuracy claimed.

    ``min_side_px`` is set from the accuracy a marker of that size gives,
    measured on synthetic survey photos (``bench/defects_accuracy.py
    --marker-sweep``, docs/defects.md): the error of a 1 1/4 in span mapped
    through the marker's ground frame was p95 0.19 mm at 60 px but 3.6 mm at
    40 px and 6.7 mm at 24 px (the pose from four close corners flips or
    tilts), against the 1/16 in budget. Below it a photo is "not measured";
    a ChArUco board (``FiducialSpec.board``) gives many corners instead.
    """

    min_side_px: float = 60.0
    max_tilt_deg: float = 50.0
    corner_sigma_px: float = 0.15  # sub-pixel corner noise, for uncertainties


@dataclass(frozen=True, slots=True, eq=False)
class GroundFrame:
    """Maps undistorted image pixels to the ground plane (mm, marker frame)."""

    image_to_ground: F64  # 3x3 homography
    mm_per_pixel: float  # at the marker
    scale_uncertainty_fraction: float
    tilt_deg: float
    marker_corners_px: F64  # 4 x 2, distorted image

    def to_ground(self, pts_px: F64, calib: CameraCalibration) -> F64:
        """Distorted image points (N x 2) to ground millimetres (N x 2)."""
        und = cv2.undistortPoints(
            pts_px.reshape(-1, 1, 2).astype(np.float64),
            calib.matrix,
            calib.distortion,
            P=calib.matrix,
        )
        out = np.asarray(cv2.perspectiveTransform(und, self.image_to_ground), np.float64)
        return out.reshape(-1, 2)


def make_calibration_target(
    *,
    squares_x: int = 7,
    squares_y: int = 5,
    square_mm: float = 30.0,
    marker_mm: float = 22.0,
    dpi: int = 300,
    dictionary: int = cv2.aruco.DICT_4X4_50,
) -> U8:
    """A printable ChArUco board image at ``dpi`` (print at 100 %, no scaling)."""
    d = cv2.aruco.getPredefinedDictionary(dictionary)
    board = cv2.aruco.CharucoBoard((squares_x, squares_y), square_mm, marker_mm, d)
    px_per_mm = dpi / 25.4
    size = (round(squares_x * square_mm * px_per_mm), round(squares_y * square_mm * px_per_mm))
    img = np.asarray(board.generateImage(size, marginSize=0, borderBits=1), np.uint8)
    return img


def make_fiducial_marker(
    marker_id: int = 0, *, side_px: int = 600, dictionary: int = cv2.aruco.DICT_4X4_50
) -> U8:
    """A printable ground marker (print it at the side given in ``FiducialSpec``)."""
    d = cv2.aruco.getPredefinedDictionary(dictionary)
    img = np.asarray(cv2.aruco.generateImageMarker(d, marker_id, side_px), np.uint8)
    return img


def calibrate_intrinsics(
    images: Sequence[U8],
    *,
    squares_x: int = 7,
    squares_y: int = 5,
    square_mm: float = 30.0,
    marker_mm: float = 22.0,
    dictionary: int = cv2.aruco.DICT_4X4_50,
) -> CameraCalibration:
    """Intrinsics and distortion from grey photos of the ChArUco target."""
    d = cv2.aruco.getPredefinedDictionary(dictionary)
    board = cv2.aruco.CharucoBoard((squares_x, squares_y), square_mm, marker_mm, d)
    det = cv2.aruco.CharucoDetector(board)
    obj_pts: list[NDArray[np.float32]] = []
    img_pts: list[NDArray[np.float32]] = []
    size = (0, 0)
    for im in images:
        size = (im.shape[1], im.shape[0])
        corners, ids, _, _ = det.detectBoard(im)
        if ids is None or len(ids) < 6:
            continue
        o, i = board.matchImagePoints(list(corners), np.asarray(ids))
        obj_pts.append(np.asarray(o, np.float32))
        img_pts.append(np.asarray(i, np.float32))
    if len(obj_pts) < 3:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, "fewer than 3 usable target views")
    rms, k, dist, _, _ = cv2.calibrateCamera(obj_pts, img_pts, size, None, None)
    return CameraCalibration(np.asarray(k, float), np.asarray(dist, float).ravel()[:5], float(rms))


def _refine_linear(gray: U8, corners: F64) -> F64:
    """Corners refined again on linear intensity. Photos are gamma-encoded
    (about 2.2), which steepens the dark side of an edge: refined on the
    encoded image a black marker's corners sit about 0.3 px inside it on the
    survey photos, a 0.6 % scale error that grows with distance (a walk's
    width read 10 mm wide at 1.6 m)."""
    x0, y0 = np.floor(corners.min(0)).astype(int) - 8
    x1, y1 = np.ceil(corners.max(0)).astype(int) + 8
    x0, y0 = max(x0, 0), max(y0, 0)
    roi = gray[y0:y1, x0:x1].astype(np.float32) / 255.0
    lin = np.asarray(roi**2.2 * 255.0, np.float32)
    pts = (corners - np.array([x0, y0])).astype(np.float32).reshape(-1, 1, 2)
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 40, 0.001)
    out = cv2.cornerSubPix(lin, pts, (5, 5), (-1, -1), crit).reshape(-1, 2)
    refined: F64 = out.astype(np.float64) + np.array([x0, y0])
    # A corner that wandered more than a pixel found something else: keep the first.
    moved = np.linalg.norm(refined - corners, axis=1) > 1.0
    refined[moved] = corners[moved]
    return refined


def find_ground_frame(
    gray: U8, calib: CameraCalibration, spec: FiducialSpec, limits: FiducialLimits
) -> GroundFrame:
    """Locate the ground marker and build the image-to-ground homography.

    Raises ``MeasurementError`` when no marker is found, or it is too small or
    too oblique for the claimed accuracy.
    """
    if spec.board is not None:
        return _board_frame(gray, calib, spec, limits)
    d = cv2.aruco.getPredefinedDictionary(spec.dictionary)
    prm = cv2.aruco.DetectorParameters()
    prm.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    corners, ids, _ = cv2.aruco.ArucoDetector(d, prm).detectMarkers(gray)
    if ids is None or len(ids) == 0:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, "no ArUco marker found")
    cands = [
        (c.reshape(4, 2).astype(np.float64), int(i))
        for c, i in zip(corners, ids.ravel(), strict=True)
        if spec.marker_id is None or int(i) == spec.marker_id
    ]
    if not cands:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, f"marker {spec.marker_id} not found")
    c4, _ = max(cands, key=lambda ci: cv2.contourArea(ci[0].astype(np.float32)))
    c4 = _refine_linear(gray, c4)
    sides = np.linalg.norm(c4 - np.roll(c4, -1, 0), axis=1)
    floor = limits.min_side_px if spec.min_side_px is None else spec.min_side_px
    if sides.min() < floor:
        raise MeasurementError(
            InputProblem.FIDUCIAL_TOO_SMALL,
            f"marker side {sides.min():.0f} px < {floor:.0f} px (the size that keeps 1/16 in;"
            " a larger marker, or a ChArUco board)",
        )
    s = spec.side_mm
    obj = np.array([[0, 0, 0], [s, 0, 0], [s, s, 0], [0, s, 0]], np.float64)
    ok, rvec, tvec = cv2.solvePnP(obj, c4, calib.matrix, calib.distortion, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, "marker pose failed")
    rot, _ = cv2.Rodrigues(rvec)
    tilt = math.degrees(math.acos(min(1.0, abs(float(rot[2, 2])))))
    if tilt > limits.max_tilt_deg:
        raise MeasurementError(
            InputProblem.FIDUCIAL_TOO_OBLIQUE,
            f"marker tilted {tilt:.0f} deg from the optical axis > {limits.max_tilt_deg:.0f}",
        )
    # Ground (x, y, 0) -> undistorted pixel is K [r1 r2 t].
    g2i = calib.matrix @ np.column_stack([rot[:, 0], rot[:, 1], tvec.ravel()])
    i2g = np.linalg.inv(g2i)
    i2g /= i2g[2, 2]
    mm_px = s / float(sides.mean())
    # Corner noise moves the scale by about sigma * sqrt(2) / side.
    frac = limits.corner_sigma_px * math.sqrt(2) / float(sides.mean())
    return GroundFrame(np.asarray(i2g, np.float64), mm_px, frac, tilt, c4)


def _board_frame(
    gray: U8, calib: CameraCalibration, spec: FiducialSpec, limits: FiducialLimits
) -> GroundFrame:
    """The ground frame from a ChArUco board's interpolated chessboard corners."""
    b = spec.board
    assert b is not None
    d = cv2.aruco.getPredefinedDictionary(spec.dictionary)
    board = cv2.aruco.CharucoBoard((b.squares_x, b.squares_y), b.square_mm, b.marker_mm, d)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(gray)
    n = 0 if ids is None else len(ids)
    if n < b.min_corners:
        raise MeasurementError(
            InputProblem.NO_FIDUCIAL, f"{n} ChArUco corners found, need {b.min_corners}"
        )
    obj, img = board.matchImagePoints(list(corners), np.asarray(ids))
    obj = np.asarray(obj, np.float64).reshape(-1, 3)
    img = np.asarray(img, np.float64).reshape(-1, 2)
    # The square's side in pixels: the gate is the same as a marker's, per square.
    k = calib.matrix
    ok, rvec, tvec = cv2.solvePnP(obj, img, k, calib.distortion, flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, "board pose failed")
    rot, _ = cv2.Rodrigues(rvec)
    tilt = math.degrees(math.acos(min(1.0, abs(float(rot[2, 2])))))
    if tilt > limits.max_tilt_deg:
        raise MeasurementError(
            InputProblem.FIDUCIAL_TOO_OBLIQUE,
            f"board tilted {tilt:.0f} deg from the optical axis > {limits.max_tilt_deg:.0f}",
        )
    g2i = k @ np.column_stack([rot[:, 0], rot[:, 1], tvec.ravel()])
    i2g = np.linalg.inv(g2i)
    i2g /= i2g[2, 2]
    ext_mm = float(np.ptp(obj[:, 0]) + np.ptp(obj[:, 1])) / 2
    ext_px = float(np.ptp(img[:, 0]) + np.ptp(img[:, 1])) / 2
    mm_px = ext_mm / max(ext_px, 1e-6)
    # Many corners: the scale's noise falls with their number.
    frac = limits.corner_sigma_px * math.sqrt(2) / max(ext_px, 1e-6) / math.sqrt(n / 4)
    hull = cv2.convexHull(img.astype(np.float32)).reshape(-1, 2).astype(np.float64)
    return GroundFrame(np.asarray(i2g, np.float64), mm_px, frac, tilt, hull)
