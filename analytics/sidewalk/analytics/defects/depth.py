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
    """Pinhole intrinsics of a rectified depth map (pixels)."""

    fx: float
    fy: float
    cx: float
    cy: float


@dataclass(frozen=True, slots=True)
class LevelReference:
    """Where "down" and "toward the curb" are, in the depth camera's frame.

    ``gravity`` comes from the camera's IMU; ``toward_curb`` is any vector
    pointing roughly from the walk toward the curb (only its side matters).
    """

    gravity: tuple[float, float, float]
    toward_curb: tuple[float, float, float]
    gravity_uncertainty_deg: float = 0.1


def measure_depth_map(
    depth_mm: NDArray[np.uint16],
    intrinsics: DepthIntrinsics,
    *,
    level: LevelReference | None = None,
    params: SurfaceParams | None = None,
) -> SurfaceInspection:
    """Measure every joint, crack and block visible in one depth map.

    The walk plane is fitted robustly, the points are resampled to a height
    map on it (cells the size of the median ground sample), then blocks,
    joints and spalls are measured there. Survey direction is the depth
    camera's +x. Cross-slope is measured only when ``level`` is given.
    Raises ``MeasurementError`` for a map that cannot be measured.
    """
    p = params or SurfaceParams()
    t0 = time.perf_counter()
    stages: list[tuple[str, float]] = []
    if depth_mm.ndim != 2 or depth_mm.dtype != np.uint16:
        raise MeasurementError(
            InputProblem.WRONG_FORMAT, f"need a 2-D uint16 depth map, got {depth_mm.dtype}"
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
    z = depth_mm[v, u].astype(np.float64)
    pts = np.stack(
        [(u - intrinsics.cx) * z / intrinsics.fx, (v - intrinsics.cy) * z / intrinsics.fy, z], 1
    )
    normal, offset = _ransac_plane(pts)
    stages.append(("plane", time.perf_counter() - t0))
    # A little over the median pixel footprint, so few cells stay empty.
    cell = 1.3 * float(np.median(z)) / intrinsics.fx
    hm = _height_map(pts, normal, offset, cell)
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
    s = s.reshape(hgt, w)
    n = n.reshape(hgt, w)
    # Cells the size of a pixel footprint alias into empty cells; fill an empty
    # cell from its neighbours only when most of them have data (a real hole,
    # such as an occluded gap, stays empty).
    k = np.ones((5, 5), np.float32)
    s5 = cv2.filter2D(s.astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)
    n5 = cv2.filter2D(n.astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)
    c5 = cv2.filter2D((n > 0).astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)
    empty = (n == 0).astype(np.uint8)
    # Fill only specks: a long empty run is an occluded gap and must stay empty.
    _, lab, stats, _ = cv2.connectedComponentsWithStats(empty, connectivity=8)
    speck = (stats[:, cv2.CC_STAT_AREA] < 30)[lab] & (empty > 0) & (c5 >= 5)
    with np.errstate(invalid="ignore", divide="ignore"):
        grid = np.where(speck, s5 / n5, s / n)
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
    )


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
