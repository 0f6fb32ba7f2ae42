"""Faults, gaps and spalls from a depth map (16-bit millimetres)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from .errors import InputProblem, MeasurementError
from .results import SurfaceInspection
from .surface import HeightMap, SurfaceParams, analyse_height_map

# Pixels on the walk plane below which no plane is accepted (about 3 x 3 cm at 1 mm).
MIN_PLANE_POINTS = 1000

F64 = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class DepthIntrinsics:
    """Pinhole intrinsics of a rectified depth map (pixels), and its depth
    unit (millimetres per count: 1.0 for millimetre maps, 0.25 for a
    RealSense at ``depth_units`` 0.00025)."""

    fx: float
    fy: float
    cx: float
    cy: float
    depth_scale_mm: float = 1.0


@dataclass(frozen=True, slots=True)
class LevelReference:
    """Where "down" and "toward the curb" are, in the depth camera's frame.

    ``gravity`` comes from the camera's IMU; ``toward_curb`` is any vector
    pointing roughly from the walk toward the curb (only its side matters).
    """

    gravity: tuple[float, float, float]
    toward_curb: tuple[float, float, float]
    gravity_uncertainty_deg: float = 0.1


# Median depth along the optical axis of a walk survey (mm; the camera is
# 0.9-1.3 m up, pitched to 30 degrees, so about 0.9-2 m): a map
# whose median falls outside, in the units given, is in other units.
PLAUSIBLE_RANGE_MM = (300.0, 3000.0)


def measure_depth_map(
    depth_mm: NDArray[np.uint16],
    intrinsics: DepthIntrinsics,
    *,
    level: LevelReference | None = None,
    params: SurfaceParams | None = None,
    depth_scale_mm: float | None = None,
    survey_direction: tuple[float, float, float] | None = None,
) -> SurfaceInspection:
    """Measure every joint, crack and block visible in one depth map.

    The walk plane is fitted robustly, the points are resampled to a height
    map on it (cells the size of the ground sample), then blocks, joints and
    spalls are measured there. ``depth_scale_mm`` is the millimetres per
    depth unit (default the intrinsics' ``depth_scale_mm``, 1.0 for
    millimetre maps; a RealSense ``depth_units`` of 0.00025 m is 0.25); a
    map whose median depth is not a plausible survey range in those units is
    "not measured". Blocks are ordered, and the
    differential signed, along the walk in ``survey_direction`` (a vector in
    the camera frame); by default the camera's +x (image left to right), or,
    when the walk runs along the image's y axis, image up (the camera's -y:
    a camera pitched along the walk looks ahead). Cross-slope is measured
    only when ``level`` is given. Raises ``MeasurementError`` for a map that
    cannot be measured.
    """
    p = params or SurfaceParams()
    t0 = time.perf_counter()
    stages: list[tuple[str, float]] = []
    if depth_mm.ndim != 2 or depth_mm.dtype != np.uint16:
        raise MeasurementError(
            InputProblem.WRONG_FORMAT, f"need a 2-D uint16 depth map, got {depth_mm.dtype}"
        )
    if depth_scale_mm is None:
        depth_scale_mm = intrinsics.depth_scale_mm
    if not (math.isfinite(depth_scale_mm) and depth_scale_mm > 0):
        raise MeasurementError(
            InputProblem.WRONG_FORMAT, f"depth scale {depth_scale_mm} mm per unit is not positive"
        )
    valid = depth_mm > 0
    # Checked first: an empty map has no valid fraction, RANSAC cannot sample
    # 3 points from fewer, and the plane fit wants MIN_PLANE_POINTS anyway.
    if depth_mm.size < MIN_PLANE_POINTS:
        h, w = depth_mm.shape
        raise MeasurementError(
            InputProblem.TOO_SMALL,
            f"{w} x {h} depth map; the walk plane needs at least {MIN_PLANE_POINTS} pixels",
        )
    if valid.mean() < 0.3:
        raise MeasurementError(
            InputProblem.NO_GROUND_PLANE, f"only {valid.mean():.0%} of pixels have depth"
        )
    v, u = np.nonzero(valid)
    z = depth_mm[v, u].astype(np.float64) * depth_scale_mm
    med = float(np.median(z))
    lo, hi = PLAUSIBLE_RANGE_MM
    if not lo <= med <= hi:
        raise MeasurementError(
            InputProblem.NOT_MEASURED,
            f"median depth {med:.0f} mm at {depth_scale_mm:g} mm per unit is outside"
            f" {lo:.0f}-{hi:.0f} mm: the map is in other units (give its depth scale)",
        )
    pts = np.stack(
        [(u - intrinsics.cx) * z / intrinsics.fx, (v - intrinsics.cy) * z / intrinsics.fy, z], 1
    )
    normal, offset = _ransac_plane(pts)
    stages.append(("plane", time.perf_counter() - t0))
    # A little over the pixel footprint in its longer direction on the walk
    # plane (a pitched camera stretches it), so few cells stay empty.
    # At the documented geometry that is the median footprint; only a camera
    # pitched further stretches it (the 0.75 keeps tilts to 20 degrees as they were).
    cell = 1.3 * max(med / intrinsics.fx, 0.75 * _footprint_mm(depth_mm, valid, pts, normal))
    hm = _height_map(pts, normal, offset, cell)
    hm = replace(
        hm,
        focal_px=(intrinsics.fx, intrinsics.fy),
        survey_ab=_survey_ab(hm, survey_direction),
    )
    stages.append(("height_map", time.perf_counter() - t0))
    p = replace(
        p,
        noise_mm=max(p.noise_mm, _noise_estimate(hm.height_mm)),
    )
    joints, blocks, fits = analyse_height_map(hm, p)
    stages.append(("blocks_joints_spalls", time.perf_counter() - t0))
    # Paths come out in walk-plane millimetres; evidence images want pixels.
    joints = tuple(
        replace(j, image_path_px=_plane_to_pixels(hm, j.image_path_px, intrinsics)) for j in joints
    )
    blocks = tuple(
        replace(
            b,
            spalls=tuple(
                replace(sp, image_contour_px=_plane_to_pixels(hm, sp.image_contour_px, intrinsics))
                for sp in b.spalls
            ),
        )
        for b in blocks
    )
    if level is not None:
        blocks = tuple(
            replace(
                b,
                cross_slope_mm_per_m=s,
                cross_slope_uncertainty_mm_per_m=su,
            )
            for b, (s, su) in zip(
                blocks, (_cross_slope(hm, f.coef, f.cov, level) for f in fits), strict=True
            )
        )
    return SurfaceInspection(
        joints=joints,
        blocks=blocks,
        ground_sample_mm=cell,
        stage_seconds=tuple((n, round(s, 4)) for n, s in stages),
    )


def _ransac_plane(pts: F64) -> tuple[F64, float]:
    """Dominant plane n . p = d with n pointing toward the camera."""
    rng = np.random.default_rng(12345)
    sub = pts[rng.choice(len(pts), min(len(pts), 4000), replace=False)]
    best_n = np.array([0.0, 0.0, -1.0])
    best_d = 0.0
    best = -1
    for _ in range(150):
        a, b, c = sub[rng.choice(len(sub), 3, replace=False)]
        n = np.cross(b - a, c - a)
        norm = float(np.linalg.norm(n))
        if norm < 1e-9:
            continue
        n /= norm
        d = float(n @ a)
        count = int(np.sum(np.abs(sub @ n - d) < 6.0))
        if count > best:
            best, best_n, best_d = count, n, d
    inl = pts[np.abs(pts @ best_n - best_d) < 6.0]
    if len(inl) < MIN_PLANE_POINTS:
        raise MeasurementError(InputProblem.NO_GROUND_PLANE, "no dominant walk plane")
    centroid = inl.mean(0)
    _, _, vt = np.linalg.svd(inl[:: max(1, len(inl) // 50_000)] - centroid, full_matrices=False)
    n = vt[2]
    if n[2] > 0:  # normal toward the camera (camera looks along +z)
        n = -n
    return n, float(n @ centroid)


# Depth of the band under a cell's highest point that counts as its top
# surface: the plane fit's inlier band (sensor noise is well inside it).
CELL_TOP_BAND_MM = 6.0


def _height_map(pts: F64, normal: F64, offset: float, cell: float) -> HeightMap:
    ax = np.array([1.0, 0.0, 0.0])
    ax = ax - (ax @ normal) * normal
    ax /= np.linalg.norm(ax)
    bx = np.cross(normal, ax)
    a = pts @ ax
    b = pts @ bx
    hh = pts @ normal - offset
    a0, b0 = float(a.min()), float(b.min())
    ia = ((a - a0) / cell).astype(np.int64)
    ib = ((b - b0) / cell).astype(np.int64)
    w, hgt = int(ia.max()) + 1, int(ib.max()) + 1
    flat = ib * w + ia
    s = np.bincount(flat, hh, w * hgt)
    n = np.bincount(flat, None, w * hgt)
    # The top surface of each cell, for measuring a gap's edges: a cell on
    # an edge seen obliquely also holds points of the wall below it (the far
    # face of a gap faces the camera), and their mean pulls the edge down by
    # up to a cell's width of wall. Points more than CELL_TOP_BAND_MM under
    # the cell's highest point are left out (noise stays well inside the
    # band). Blocks and joints are still found on the mean: there the wall's
    # points are what shows a narrow gap seen obliquely at all.
    top = np.full(w * hgt, -np.inf)
    np.maximum.at(top, flat, hh)
    keep = hh >= top[flat] - CELL_TOP_BAND_MM
    st = np.bincount(flat[keep], hh[keep], w * hgt).reshape(hgt, w)
    nt = np.bincount(flat[keep], None, w * hgt).reshape(hgt, w)
    s = s.reshape(hgt, w)
    n = n.reshape(hgt, w)
    # Cells the size of a pixel footprint alias into empty cells; fill an empty
    # cell from its neighbours only when most of them have data (a real hole,
    # such as an occluded gap, stays empty).
    k = np.ones((5, 5), np.float32)
    s5 = cv2.filter2D(s.astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)
    n5 = cv2.filter2D(n.astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)
    c5 = cv2.filter2D((n > 0).astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, s / np.maximum(n, 1), 0.0)
    # Spread of the neighbours' heights: a hole between a block top and a
    # gap floor or a step (a narrow occluded gap broken into pieces) is not
    # a sampling speck, and filling it would close the gap.
    m1 = cv2.filter2D(mean.astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)
    m2 = cv2.filter2D((mean**2).astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.sqrt(np.maximum(m2 / np.maximum(c5, 1) - (m1 / np.maximum(c5, 1)) ** 2, 0))
    empty = (n == 0).astype(np.uint8)
    # Fill only specks: a long empty run is an occluded gap and must stay empty.
    _, lab, stats, _ = cv2.connectedComponentsWithStats(empty, connectivity=8)
    speck = (stats[:, cv2.CC_STAT_AREA] < 30)[lab] & (empty > 0) & (c5 >= 5) & (spread < 8.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        grid = np.where(speck, s5 / n5, s / n)
        top_grid = np.where(nt > 0, st / np.maximum(nt, 1), grid)
    origin = normal * offset
    # Cell centres: a = a0 + (k + 0.5) * cell.
    # The camera sits at the sensor origin: a = b = 0, h = -offset.
    return HeightMap(
        grid,
        cell,
        a0 + cell / 2,
        b0 + cell / 2,
        origin,
        np.stack([ax, bx, normal]),
        viewpoint_mm=(0.0, 0.0, -offset),
        top_mm=top_grid,
    )


def _footprint_mm(depth: NDArray[np.uint16], valid: NDArray[np.bool_], pts: F64, n: F64) -> float:
    """Median length on the walk plane of one pixel step along image x or
    along image y, whichever is longer (a pitched camera stretches one):
    what a cell must span so that (almost) every cell gets a point."""
    h, w = depth.shape
    idx = np.full((h, w), -1, np.int64)
    idx[valid] = np.arange(int(valid.sum()))
    ax = np.array([1.0, 0.0, 0.0]) - n[0] * n
    ax /= np.linalg.norm(ax)
    bx = np.cross(n, ax)
    ext = []
    for a_, b_ in ((idx[:, :-1], idx[:, 1:]), (idx[:-1, :], idx[1:, :])):
        ok = (a_ >= 0) & (b_ >= 0)
        d = pts[b_[ok]] - pts[a_[ok]]
        if len(d) == 0:
            return float(np.median(pts[:, 2])) / 900.0
        ext.append(np.stack([np.abs(d @ ax), np.abs(d @ bx)], 1))
    # Robust against depth steps (joints): medians of each pixel step's
    # length on the plane; the longer of the two lattice steps.
    return max(float(np.median(np.hypot(*e.T))) for e in ext)


def _survey_ab(
    hm: HeightMap, direction: tuple[float, float, float] | None
) -> tuple[float, float] | None:
    """The survey direction in the height map's (a, b) axes, or None for the default."""
    if direction is None:
        return None
    v = np.asarray(direction, float)
    a, b = float(v @ hm.axes[0]), float(v @ hm.axes[1])
    norm = math.hypot(a, b)
    if not norm > 1e-9:
        raise MeasurementError(
            InputProblem.WRONG_FORMAT, f"survey direction {direction} is along the walk's normal"
        )
    return a / norm, b / norm


def _noise_estimate(h: F64) -> float:
    """Robust per-cell noise from differences of horizontal neighbours."""
    d = np.diff(h, axis=1)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2))


def _cross_slope(hm: HeightMap, coef: F64, cov: F64, level: LevelReference) -> tuple[float, float]:
    """Fall toward the curb (mm per m of horizontal run) of one block's plane."""
    c = hm.cell_mm
    ga, gb = coef[1] / c, coef[2] / c  # mm of height per mm along a and b
    n_blk = hm.axes[2] - ga * hm.axes[0] - gb * hm.axes[1]
    n_blk /= np.linalg.norm(n_blk)
    g = np.asarray(level.gravity, float)
    g /= np.linalg.norm(g)
    curb = np.asarray(level.toward_curb, float)
    # Horizontal direction toward the curb, then its direction within the block.
    e = curb - (curb @ g) * g
    e /= np.linalg.norm(e)
    along = e - (e @ n_blk) * n_blk
    along /= np.linalg.norm(along)
    down = float(along @ g)
    slope = 1000.0 * down / math.sqrt(max(1.0 - down * down, 1e-12))
    grad_sd = math.sqrt(max(float(cov[1, 1] + cov[2, 2]), 0.0)) / c * 1000.0
    imu_sd = 1000.0 * math.tan(math.radians(level.gravity_uncertainty_deg))
    return slope, math.hypot(grad_sd, imu_sd)


def _plane_to_pixels(
    hm: HeightMap, path: tuple[tuple[float, float], ...], k: DepthIntrinsics
) -> tuple[tuple[float, float], ...]:
    out = []
    for a, b in path:
        x, y, z = hm.to_sensor(a, b, 0.0)
        out.append((k.fx * x / z + k.cx, k.fy * y / z + k.cy))
    return tuple(out)
