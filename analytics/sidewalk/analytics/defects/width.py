"""Walk width (§ 370-5 (7)) from a photo whose ground plane is known.

The photo's saturation (concrete is grey, turf is not) is resampled onto a
top-down grid of the ground plane (the fiducial's, or a fixed camera's stored
frame) through the homography and the lens model. The walk's two edges are
the boundaries between grey and turf cells; the walk direction is the one in
which those boundary cells gather into two narrow bands, and the width is the
distance between the bands across it. Both edges must be in view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from .fiducial import CameraCalibration, GroundFrame

U8 = NDArray[np.uint8]
F64 = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class WalkWidthParams:
    """Grid and classification settings."""

    grid_mm: float = 10.0  # cell of the top-down grid
    reach_mm: float = 2600.0  # the grid spans this far from the marker each way
    max_walk_saturation: int = 30  # of 255, as the crack stage's walk mask
    clean_mm: float = 60.0  # leaves and specks smaller than this are not turf
    band_mm: float = 40.0  # boundary cells within this of an edge line belong to it
    min_edge_cells: int = 40  # per edge
    min_width_mm: float = 300.0  # two edges closer than this are one edge's two sides
    max_cells_per_pixel: float = 4.0
    # Marker corner noise (px, one sigma per coordinate) for the frame's share
    # of the uncertainty; the synthetic photos' corners scatter about 0.5 px.
    corner_sigma_px: float = 0.5
    frame_samples: int = 12
    image_scale: float = 0.5  # the photo is read at this fraction of full size


@dataclass(frozen=True, slots=True)
class WalkWidth:
    """The walk's width between its two turf edges, with a one-sigma uncertainty."""

    width_mm: float
    width_uncertainty_mm: float
    direction_deg: float  # walk direction in the ground frame (x axis = 0)
    edge_cells: tuple[int, int]


def _ground_to_pixels(
    xs: F64, ys: F64, calib: CameraCalibration, ground: GroundFrame
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_]]:
    """Distorted image pixel of every ground grid point, and which are in front."""
    gx, gy = np.meshgrid(xs, ys)
    pts = np.stack([gx.ravel(), gy.ravel(), np.ones(gx.size)], 0)
    und = np.linalg.inv(ground.image_to_ground) @ pts
    front = und[2] > 1e-9
    w = np.where(front, und[2], 1.0)
    k = calib.matrix
    # Undistorted pixels -> normalised rays -> distorted pixels (OpenCV's model,
    # k1 k2 p1 p2 k3; written out: cv2.projectPoints is ten times slower here).
    x = (und[0] / w - k[0, 2]) / k[0, 0]
    y = (und[1] / w - k[1, 2]) / k[1, 1]
    d = np.zeros(5)
    d[: min(5, calib.distortion.size)] = calib.distortion.ravel()[:5]
    r2 = x * x + y * y
    radial = 1 + r2 * (d[0] + r2 * (d[1] + r2 * d[4]))
    xd = x * radial + 2 * d[2] * x * y + d[3] * (r2 + 2 * x * x)
    yd = y * radial + d[2] * (r2 + 2 * y * y) + 2 * d[3] * x * y
    u = (k[0, 0] * xd + k[0, 2]).reshape(gx.shape).astype(np.float32)
    v = (k[1, 1] * yd + k[1, 2]).reshape(gx.shape).astype(np.float32)
    return u, v, front.reshape(gx.shape)


def measure_walk_width(
    image: U8,
    calibration: CameraCalibration,
    ground: GroundFrame,
    params: WalkWidthParams | None = None,
) -> WalkWidth | None:
    """The walk's width from a BGR photo, or None when both edges are not seen."""
    p = params or WalkWidthParams()
    if image.ndim != 3:
        return None  # turf is told from concrete by colour
    # Half size is fine enough for 8 mm cells, and four times cheaper.
    f = p.image_scale
    small = cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    sat = np.asarray(cv2.cvtColor(small, cv2.COLOR_BGR2HSV)[..., 1], np.uint8)
    centre = ground.to_ground(ground.marker_corners_px, calibration).mean(0)
    n = int(2 * p.reach_mm / p.grid_mm) // 4 * 4
    xs = centre[0] - p.reach_mm + p.grid_mm * np.arange(n)
    ys = centre[1] - p.reach_mm + p.grid_mm * np.arange(n)
    # The map is smooth: computed on every 4th cell and interpolated.
    cx, cy, cf = _ground_to_pixels(xs[::4], ys[::4], calibration, ground)
    # Pixel centres: full-size u maps to (u + 0.5) * f - 0.5 at scale f.
    mx, my = (np.asarray(cv2.resize(m, (n, n)), np.float32) * f + (f - 1) / 2 for m in (cx, cy))
    front = cv2.resize(cf.astype(np.uint8), (n, n), interpolation=cv2.INTER_NEAREST) > 0
    h, w = sat.shape
    # Far cells, where one pixel spans more than max_cells_per_pixel cells, are left out.
    fine = np.zeros_like(front)
    cell_px = np.hypot(mx[1:-1, 2:] - mx[1:-1, :-2], my[1:-1, 2:] - my[1:-1, :-2]) / 2
    fine[1:-1, 1:-1] = cell_px / f * p.max_cells_per_pixel >= 1.0
    seen = front & fine & (mx >= 1) & (mx < w - 2) & (my >= 1) & (my < h - 2)
    top = cv2.remap(sat, mx, my, cv2.INTER_LINEAR, borderValue=0)
    turf = ((top >= p.max_walk_saturation) & seen).astype(np.uint8)
    walk = ((top < p.max_walk_saturation) & seen).astype(np.uint8)
    k = max(3, round(p.clean_mm / p.grid_mm) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    turf = np.asarray(cv2.morphologyEx(turf, cv2.MORPH_OPEN, kernel), np.uint8)
    walk = np.asarray(cv2.morphologyEx(walk, cv2.MORPH_OPEN, kernel), np.uint8)
    # Boundary: turf cells with a walk cell 4-next to them.
    cross = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.uint8)
    near_walk = np.asarray(cv2.dilate(walk, cross), np.uint8)
    r, c = np.nonzero(turf & near_walk)
    if len(r) < 2 * p.min_edge_cells:
        return None
    edges = _two_edges(np.stack([xs[c], ys[r]], 1), p)
    if edges is None:
        return None
    deg, a, b = edges
    width, fit_unc = _width(a, b, deg, p)
    if width < p.min_width_mm:
        return None
    frame_unc = _frame_spread(calibration, ground, a, b, deg=deg, p=p)
    unc = math.sqrt(fit_unc**2 + frame_unc**2 + (ground.scale_uncertainty_fraction * width) ** 2)
    return WalkWidth(width, unc, deg, (len(a), len(b)))


def _frame_spread(
    calibration: CameraCalibration,
    ground: GroundFrame,
    a: F64,
    b: F64,
    *,
    deg: float,
    p: WalkWidthParams,
) -> float:
    """Standard deviation of the width over ground frames refitted to jittered marker corners."""
    # The ground frame comes from four corners of a small marker, extrapolated
    # a metre or two to the edges: corner noise tilts it. Its effect on this
    # width is read by redoing the width through frames refitted to jittered
    # corners (a fixed seed: the same photo always gives the same figure).
    c4 = ground.marker_corners_px.astype(np.float64)
    obj = np.column_stack([ground.to_ground(c4, calibration), np.zeros(4)])
    inv = np.linalg.inv(ground.image_to_ground)
    cam, dist = calibration.matrix, calibration.distortion
    rng = np.random.default_rng(0)
    spread = []
    for _ in range(p.frame_samples):
        jit = c4 + rng.normal(0, p.corner_sigma_px, c4.shape)
        ok, rvec, tvec = cv2.solvePnP(obj, jit, cam, dist, flags=cv2.SOLVEPNP_IPPE)
        if not ok:
            continue
        rot, _ = cv2.Rodrigues(rvec)
        g2i = cam @ np.column_stack([rot[:, 0], rot[:, 1], np.ravel(tvec)])
        move = np.linalg.inv(g2i) @ inv  # ground -> pixel (this frame) -> ground (refit)
        a2, b2 = (_apply(move, e) for e in (a, b))
        spread.append(_width(a2, b2, deg, p)[0])
    return float(np.std(spread)) if spread else 0.0


def _apply(h: F64, pts: F64) -> F64:
    q = np.concatenate([pts, np.ones((len(pts), 1))], 1) @ h.T
    out: F64 = q[:, :2] / q[:, 2:3]
    return out


def _two_edges(pts: F64, p: WalkWidthParams) -> tuple[float, F64, F64] | None:
    """Direction (degrees) in which the boundary cells form two narrow
    parallel bands, and the cells of each band."""
    best: tuple[float, float, F64, F64] | None = None
    bins = p.band_mm / 2
    for deg in np.arange(0.0, 180.0, 2.0):
        best = _better(best, pts, float(deg), bins, p)
    if best is None:
        return None
    # Refine the direction in 0.2 degree steps around the coarse best.
    coarse = best
    for deg in np.arange(coarse[1] - 2.0, coarse[1] + 2.0, 0.2):
        coarse = _better(coarse, pts, float(deg), bins, p) or coarse
    _, deg, a, b = coarse
    if min(len(a), len(b)) < p.min_edge_cells:
        return None
    return deg, a, b


def _width(a: F64, b: F64, deg: float, p: WalkWidthParams) -> tuple[float, float]:
    """Distance between the two edges' fitted lines across the walk, at the
    middle of the stretch both show, and its one-sigma from the fits and cells."""
    th = math.radians(deg)
    normal = np.array([-math.sin(th), math.cos(th)])
    along = np.array([math.cos(th), math.sin(th)])
    lines = []
    for e in (a, b):
        t, d = e @ along, e @ normal
        lines.append((np.polyfit(t, d, 1), t, d))
    lo = max(float(lines[0][1].min()), float(lines[1][1].min()))
    hi = min(float(lines[0][1].max()), float(lines[1][1].max()))
    t0 = (lo + hi) / 2 if hi > lo else float(np.mean(np.concatenate([a, b]) @ along))
    d0, d1 = (float(np.polyval(ln[0], t0)) for ln in lines)
    # Each edge is read on the turf cells beside the walk: half a cell outside it.
    width = abs(d1 - d0) - p.grid_mm
    fit = [float(np.std(ln[2] - np.polyval(ln[0], ln[1]))) / math.sqrt(len(ln[1])) for ln in lines]
    cells = p.grid_mm / math.sqrt(12) / 2  # half-cell offset on each side, averaged
    return width, math.sqrt(fit[0] ** 2 + fit[1] ** 2 + 2 * cells**2)


def _better(
    best: tuple[float, float, F64, F64] | None,
    pts: F64,
    deg: float,
    bin_mm: float,
    p: WalkWidthParams,
) -> tuple[float, float, F64, F64] | None:
    """Score one direction: boundary cells in the two fullest bands (at least
    ``min_width_mm`` apart) across it; keep the better of this and ``best``."""
    th = math.radians(deg)
    d = pts @ np.array([-math.sin(th), math.cos(th)])
    lo = float(d.min())
    idx = ((d - lo) / bin_mm).astype(int)
    counts = np.bincount(idx)
    # A band is two adjacent bins (an edge can straddle a bin boundary).
    pair = counts[:-1] + counts[1:] if len(counts) > 1 else counts
    i = int(np.argmax(pair))
    far = np.abs(np.arange(len(pair)) - i) * bin_mm >= p.min_width_mm
    if not far.any():
        return best
    j = int(np.argmax(np.where(far, pair, -1)))
    score = float(pair[i] + pair[j])
    if best is not None and score <= best[0]:
        return best
    ca = (d - lo) / bin_mm
    a = pts[(ca >= i - 0.5) & (ca < i + 2.5)]
    b = pts[(ca >= j - 0.5) & (ca < j + 2.5)]
    return (score, deg, a, b)
