"""Calibration target, intrinsic calibration and the ground fiducial.

A ChArUco board (printed from ``make_calibration_target``) calibrates the
camera; a single ArUco marker of known side lying on the walk gives the
image-to-ground homography in millimetres for each survey photo. Where one
marker would be too small in the photo, several loose markers of the same
printed side (``FiducialSpec.marker_ids``) are fitted together: one walk
plane and each marker's place on it, from all their corners at once (their
layout on the walk need not be known).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.optimize import least_squares

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
    # Smallest marker side (px) measured; None: ``FiducialLimits.min_side_px``
    # (``min_side_px_several`` with several markers).
    min_side_px: float | None = None
    # Two or more loose markers (ids, the first one's frame is the ground
    # frame: lay it with its x edge along the walk), all ``side_mm`` across.
    marker_ids: tuple[int, ...] = ()


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
    # Several loose markers fitted together (``FiducialSpec.marker_ids``):
    # the smallest side of each, and the largest RMS distance (px) of one
    # marker's corners from where the common plane puts them (a marker not
    # lying flat on the walk, or raised on something): 1.5 x the largest of
    # the flat markers on the tuning seeds (0.59 px; markers not flat: p5
    # 0.46, p50 2.5 px), ``bench/defects_accuracy.py --tune-several 16``.
    # With the edge-line corners the flat markers' largest is 0.68 px; kept.
    min_side_px_several: float = 30.0
    max_marker_residual_px: float = 0.9


@dataclass(frozen=True, slots=True, eq=False)
class GroundFrame:
    """Maps undistorted image pixels to the ground plane (mm, marker frame)."""

    image_to_ground: F64  # 3x3 homography
    mm_per_pixel: float  # at the marker
    scale_uncertainty_fraction: float
    tilt_deg: float
    marker_corners_px: F64  # 4 x 2, distorted image
    # Every marker's corners (distorted image) when several were fitted.
    markers_px: tuple[F64, ...] = ()
    # Several markers: the plane fit's uncertainty as pairs of image-to-ground
    # homographies one sigma either way along each principal direction of the
    # pose's covariance (+k, -k, ...). A tilt error changes the scale with
    # distance from the markers, so a gap away from them is seen through them.
    sigma_frames: tuple[F64, ...] = ()

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
    # The edge lines again from their own corners: from a detector corner 1-3
    # px off (a blurred, foreshortened small marker) the first fit's profiles
    # sit off the edges, the next ones on them.
    local = refined - np.array([x0, y0])
    edged = None
    for _ in range(3):
        nxt = _edge_corners(lin, local if edged is None else edged)
        if nxt is None:
            break
        edged = nxt
    if edged is not None:
        edged = edged + np.array([x0, y0])
        side = float(np.linalg.norm(corners - np.roll(corners, -1, 0), axis=1).min())
        ok = np.linalg.norm(edged - corners, axis=1) <= max(1.0, min(6.0, side / 8))
        refined[ok] = edged[ok]
    return refined


def edge_profiles(
    lin: NDArray[np.float32], a: F64, b: F64, ctr: F64, *, along: F64, offs: F64
) -> tuple[F64, F64, F64]:
    """Intensity across a marker's side ``a``→``b``: one profile per fraction ``along`` the
    side, sampled ``offs`` pixels along the normal that points away from the marker's
    centre ``ctr`` (inside is negative). Returns the points on the side, the normal and the
    profiles (linear interpolation, edges replicated)."""
    t = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
    nrm = np.array([-t[1], t[0]])
    if float((a + b) / 2 @ nrm - ctr @ nrm) < 0:
        nrm = -nrm
    base = a[None, :] + along[:, None] * (b - a)[None, :]
    pts = base[:, None, :] + offs[None, :, None] * nrm[None, None, :]
    prof = cv2.remap(
        lin,
        pts[..., 0].astype(np.float32),
        pts[..., 1].astype(np.float32),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    ).astype(np.float64)
    return base, nrm, prof


def _edge_corners(lin: NDArray[np.float32], corners: F64) -> F64 | None:
    """Corners where the marker's four outer edges meet, each edge a line
    through its half-way crossings on linear intensity. A blurred corner is
    rounded, and the gradient-based corner sits inside it (about 0.15 px on
    the survey photos: the marker read small, every distance 0.3-0.8 %
    long); a straight edge's half-way crossing is not moved by a symmetric
    blur. None when an edge has too little contrast to place."""
    side = float(np.linalg.norm(corners - np.roll(corners, -1, 0), axis=1).min())
    if side < 12.0:
        return None
    inner = min(side / 9, 6.0)  # inside the black border (1/6 to 1/8 of the side)
    offs = np.arange(-inner, 4.0 + 1e-9, 0.05)
    along = np.linspace(0.2, 0.8, 13)
    ctr = corners.mean(0)
    lines = []
    for k in range(4):
        base, nrm, prof = edge_profiles(
            lin, corners[k], corners[(k + 1) % 4], ctr, along=along, offs=offs
        )
        cross = []
        for i, pr in enumerate(prof):
            lo = float(pr[offs <= -inner + 1.0].mean())
            hi = float(pr[offs >= 3.0].mean())
            if hi - lo < 10.0:
                continue
            half = (lo + hi) / 2
            above = np.nonzero(pr >= half)[0]
            if not len(above) or above[0] == 0:
                continue
            j = int(above[0])
            o = offs[j - 1] + (half - pr[j - 1]) / (pr[j] - pr[j - 1]) * (offs[j] - offs[j - 1])
            cross.append(base[i] + o * nrm)
        if len(cross) < 5:
            return None
        c = np.array(cross)
        m = c.mean(0)
        _, vecs = np.linalg.eigh(np.cov((c - m).T))
        lines.append((m, vecs[:, 1]))
    out = np.zeros((4, 2))
    for k in range(4):
        (p1, d1), (p0, d0) = lines[k], lines[k - 1]
        # Corner k is where edge k-1 (into it) meets edge k (out of it).
        a_mat = np.column_stack([d1, -d0])
        if abs(float(np.linalg.det(a_mat))) < 1e-6:
            return None
        u = np.linalg.solve(a_mat, p0 - p1)
        out[k] = p1 + u[0] * d1
    return out


def find_ground_frame(
    gray: U8, calib: CameraCalibration, spec: FiducialSpec, limits: FiducialLimits
) -> GroundFrame:
    """Locate the ground marker and build the image-to-ground homography.

    Raises ``MeasurementError`` when no marker is found, or it is too small or
    too oblique for the claimed accuracy.
    """
    if spec.board is not None:
        return _board_frame(gray, calib, spec, limits)
    corners, ids = _detect(gray, spec)
    if ids is None or len(ids) == 0:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, "no ArUco marker found")
    if len(spec.marker_ids) >= 2:
        return _several_frame(gray, calib, spec, limits, corners, ids)
    cands = [
        (c.reshape(4, 2).astype(np.float64), int(i))
        for c, i in zip(corners, ids.ravel(), strict=True)
        if spec.marker_id is None or int(i) == spec.marker_id
    ]
    if not cands:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, f"marker {spec.marker_id} not found")
    c4, _ = max(cands, key=lambda ci: cv2.contourArea(ci[0].astype(np.float32)))
    c4 = _refine_linear(gray, c4)
    return _single_frame(c4, calib, spec, limits)


def locate_marker(gray: U8, spec: FiducialSpec) -> F64:
    """The ground marker's four refined corners (distorted image px): the one
    of ``spec.marker_id``, or the largest found. ``MeasurementError`` (no
    fiducial) when there is none."""
    corners, ids = _detect(gray, spec)
    if ids is None or len(ids) == 0:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, "no ArUco marker found")
    cands = [
        c.reshape(4, 2).astype(np.float64)
        for c, i in zip(corners, ids.ravel(), strict=True)
        if spec.marker_id is None or int(i) == spec.marker_id
    ]
    if not cands:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, f"marker {spec.marker_id} not found")
    c4 = max(cands, key=lambda c: cv2.contourArea(c.astype(np.float32)))
    return _refine_linear(gray, c4)


def _detect(gray: U8, spec: FiducialSpec) -> tuple[Sequence[NDArray[np.float32]], Any]:
    d = cv2.aruco.getPredefinedDictionary(spec.dictionary)
    prm = cv2.aruco.DetectorParameters()
    prm.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    corners, ids, _ = cv2.aruco.ArucoDetector(d, prm).detectMarkers(gray)
    if ids is None or len(ids) == 0:
        # A small marker seen obliquely and a little blurred: its cells are
        # read from the middle of each (a margin ignored) on a finer grid.
        prm.perspectiveRemovePixelPerCell = 10
        prm.perspectiveRemoveIgnoredMarginPerCell = 0.25
        prm.adaptiveThreshWinSizeMax = 53
        corners, ids, _ = cv2.aruco.ArucoDetector(d, prm).detectMarkers(gray)
    return [np.asarray(c, np.float32) for c in corners], ids


def _single_frame(
    c4: F64, calib: CameraCalibration, spec: FiducialSpec, limits: FiducialLimits, note: str = ""
) -> GroundFrame:
    """The ground frame from one marker's four (refined) corners."""
    sides = np.linalg.norm(c4 - np.roll(c4, -1, 0), axis=1)
    floor = limits.min_side_px if spec.min_side_px is None else spec.min_side_px
    if sides.min() < floor:
        raise MeasurementError(
            InputProblem.FIDUCIAL_TOO_SMALL,
            f"marker side {sides.min():.0f} px < {floor:.0f} px (the size that keeps 1/16 in;"
            f" a larger marker, several markers or a ChArUco board){note}",
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


def _square(side: float) -> F64:
    return np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float64)


def _rigid(theta: float, x: float, y: float, pts: F64) -> F64:
    """Plane points rotated by ``theta`` then moved by (x, y)."""
    c, s = math.cos(theta), math.sin(theta)
    out: F64 = pts @ np.array([[c, s], [-s, c]]) + np.array([x, y])
    return out


def _procrustes(local: F64, ground: F64) -> tuple[float, float, float]:
    """The rotation and shift (no scale) taking ``local`` onto ``ground``."""
    cl, cg = local.mean(0), ground.mean(0)
    h = (local - cl).T @ (ground - cg)
    theta = math.atan2(h[0, 1] - h[1, 0], h[0, 0] + h[1, 1])
    x, y = cg - _rigid(theta, 0.0, 0.0, cl[None, :])[0]
    return theta, float(x), float(y)


def _several_frame(  # noqa: PLR0917 - the detection and the options
    gray: U8,
    calib: CameraCalibration,
    spec: FiducialSpec,
    limits: FiducialLimits,
    corners: Sequence[NDArray[np.float32]],
    ids: Any,
) -> GroundFrame:
    """One walk plane from several loose markers' corners together.

    Unknowns: the plane's pose (that of the first listed marker found) and
    every other marker's place and turn on it; each marker gives eight
    coordinates, so two markers already over-determine the plane. Where one
    small marker's four close corners leave the plane's tilt loose (its pose
    flips or tilts), the markers' sizes and shapes across the view fix it.
    A marker whose corners the common plane cannot place is not lying flat
    on the walk: the photo is not measured rather than measured off it.
    """
    want = spec.marker_ids
    found = [
        (_refine_linear(gray, c.reshape(4, 2).astype(np.float64)), int(i))
        for c, i in zip(corners, np.asarray(ids).ravel(), strict=True)
        if int(i) in want
    ]
    missing = [i for i in want if i not in {m for _, m in found}]
    note = f" (marker {', '.join(map(str, missing))} not found)" if missing else ""
    if not found:
        raise MeasurementError(
            InputProblem.NO_FIDUCIAL, f"none of markers {', '.join(map(str, want))} found"
        )
    floor = limits.min_side_px_several if spec.min_side_px is None else spec.min_side_px
    sides = [float(np.linalg.norm(c - np.roll(c, -1, 0), axis=1).min()) for c, _ in found]
    usable = [f for f, sd in zip(found, sides, strict=True) if sd >= floor]
    if len(usable) < 2:
        # One marker (or none big enough): it must do alone, at the one-marker floor.
        c4, _ = max(found, key=lambda ci: cv2.contourArea(ci[0].astype(np.float32)))
        small = min(sides)
        if small < floor:
            note += f" (a marker of {small:.0f} px is under the {floor:.0f} px of several)"
        return _single_frame(c4, calib, replace(spec, min_side_px=None), limits, note)
    # The ground frame is the first listed marker's (its x edge along the walk).
    ref_id = next(i for i in want if i in {m for _, m in usable})
    usable.sort(key=lambda ci: (ci[1] != ref_id, -cv2.contourArea(ci[0].astype(np.float32))))
    p, per, cov = _fit_markers([c for c, _ in usable], spec.side_mm, calib)
    worst = int(np.argmax(per))
    if per[worst] > limits.max_marker_residual_px:
        who = (
            f"marker {usable[worst][1]}"
            if len(usable) > 2
            else f"markers {usable[0][1]} and {usable[1][1]}"
        )
        raise MeasurementError(
            InputProblem.NOT_MEASURED,
            f"the ground markers disagree: {who} {per[worst]:.1f} px off the walk plane of the"
            f" others (> {limits.max_marker_residual_px} px; one is not lying flat on the walk)",
        )
    rot, _ = cv2.Rodrigues(p[:3])
    tilt = math.degrees(math.acos(min(1.0, abs(float(rot[2, 2])))))
    if tilt > limits.max_tilt_deg:
        raise MeasurementError(
            InputProblem.FIDUCIAL_TOO_OBLIQUE,
            f"markers tilted {tilt:.0f} deg from the optical axis > {limits.max_tilt_deg:.0f}",
        )
    g2i = calib.matrix @ np.column_stack([rot[:, 0], rot[:, 1], p[3:6]])
    i2g = np.linalg.inv(g2i)
    i2g /= i2g[2, 2]
    ref = usable[0][0]
    side_px = [float(np.linalg.norm(c - np.roll(c, -1, 0), axis=1).mean()) for c, _ in usable]
    # Corner noise (or the fit's own scatter, if larger) over every corner.
    sigma = max(limits.corner_sigma_px, float(np.sqrt(np.mean(per**2))))
    frac = sigma * math.sqrt(2) / float(np.mean(side_px)) / math.sqrt(len(usable))
    return GroundFrame(
        np.asarray(i2g, np.float64),
        spec.side_mm / side_px[0],
        frac,
        tilt,
        ref,
        tuple(c for c, _ in usable),
        _sigma_frames(p[:6], cov * sigma**2, calib),
    )


def _sigma_frames(pose: F64, cov: F64, calib: CameraCalibration) -> tuple[F64, ...]:
    """Image-to-ground homographies of the pose moved one sigma either way
    along each principal direction of its covariance."""
    lam, vec = np.linalg.eigh(cov)
    out: list[F64] = []
    for k in range(6):
        for sign in (1.0, -1.0):
            q = pose + sign * math.sqrt(max(float(lam[k]), 0.0)) * vec[:, k]
            rot, _ = cv2.Rodrigues(q[:3])
            g2i = calib.matrix @ np.column_stack([rot[:, 0], rot[:, 1], q[3:6]])
            i2g = np.linalg.inv(g2i)
            out.append(np.asarray(i2g / i2g[2, 2], np.float64))
    return tuple(out)


def _fit_markers(
    markers: list[F64], side_mm: float, calib: CameraCalibration
) -> tuple[F64, F64, F64]:
    """The plane's pose (Rodrigues, translation) then (x, y, turn) of every
    marker after the first on it, each marker's RMS corner residual (px), and
    the plane pose's 6 x 6 covariance per unit corner variance (px^2)."""
    obs = np.concatenate(markers)
    sq = _square(side_mm)
    k, dist = calib.matrix, calib.distortion

    def objects(p: F64) -> F64:
        pts = [sq] + [
            _rigid(p[6 + 3 * i + 2], p[6 + 3 * i], p[7 + 3 * i], sq)
            for i in range(len(markers) - 1)
        ]
        flat = np.concatenate(pts)
        out: F64 = np.column_stack([flat, np.zeros(len(flat))])
        return out

    def residual(p: F64) -> F64:
        img, _ = cv2.projectPoints(objects(p), p[:3], p[3:6], k, dist)
        out: F64 = (np.asarray(img, np.float64).reshape(-1, 2) - obs).ravel()
        return out

    und = [
        np.asarray(cv2.undistortPoints(c.reshape(-1, 1, 2), k, dist, P=k), np.float64).reshape(
            -1, 2
        )
        for c in markers
    ]
    best: Any = None
    # Start from each marker's two IPPE poses: a small marker's right pose may be its second.
    for c in markers:
        ok, rvecs, tvecs, _err = cv2.solvePnPGeneric(
            np.column_stack([sq, np.zeros(4)]), c, k, dist, flags=cv2.SOLVEPNP_IPPE
        )
        for rv, tv in zip(rvecs, tvecs, strict=True) if ok else ():
            rot, _ = cv2.Rodrigues(rv)
            h = np.linalg.inv(k @ np.column_stack([rot[:, 0], rot[:, 1], np.ravel(tv)]))
            places = []
            for u in und:
                g = np.asarray(cv2.perspectiveTransform(u.reshape(-1, 1, 2), h), np.float64)
                places.append(_procrustes(sq, g.reshape(-1, 2)))
            th0, x0, y0 = places[0]
            ca, sa = math.cos(th0), math.sin(th0)
            rz = np.array([[ca, -sa, 0.0], [sa, ca, 0.0], [0.0, 0.0, 1.0]])
            r_ref = rot @ rz
            t_ref = rot @ np.array([x0, y0, 0.0]) + np.ravel(tv)
            p0 = [*np.ravel(cv2.Rodrigues(r_ref)[0]), *t_ref]
            for th, x, y in places[1:]:
                rel = _rigid(-th0, 0.0, 0.0, np.array([[x - x0, y - y0]]))[0]
                p0 += [float(rel[0]), float(rel[1]), th - th0]
            fit = least_squares(residual, np.asarray(p0, np.float64), method="lm")
            if best is None or fit.cost < best.cost:
                best = fit
    if best is None:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, "marker pose failed")
    p = np.asarray(best.x, np.float64)
    per = np.sqrt(np.mean(residual(p).reshape(len(markers), 8) ** 2, axis=1) * 2)
    jac = np.asarray(best.jac, np.float64)
    cov = np.asarray(np.linalg.pinv(jac.T @ jac)[:6, :6], np.float64)
    return p, per, cov


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


def photo_holds_marker(jpeg: bytes, marker: FiducialSpec) -> bool:
    """True when the JPEG shows an ArUco marker of the survey's dictionary (and id).

    A quick look before the measurement: a round photo without the marker is
    evidence only. A ChArUco board counts as present (the measurement itself
    looks for its corners).
    """
    # A corrupt, truncated or empty upload is not a photo of the marker: False,
    # never an exception (OpenCV raises on an empty buffer and returns None on
    # bytes it cannot decode).
    if not jpeg:
        return False
    try:
        gray = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_GRAYSCALE)
    except cv2.error:
        return False
    if gray is None or gray.size == 0:
        return False
    if marker.board is not None:
        return True
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(marker.dictionary), cv2.aruco.DetectorParameters()
    )
    _, ids, _ = detector.detectMarkers(gray)
    if ids is None:
        return False
    return marker.marker_id is None or marker.marker_id in {int(i) for i in ids.ravel()}
