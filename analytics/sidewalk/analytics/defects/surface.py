"""Blocks, joints and spalls from a height map on the walk plane.

Shared by the depth-map path (``depth.py``); pure numpy/OpenCV on arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from .results import BlockMeasurement, EdgeType, JointMeasurement, SpallMeasurement

F64 = NDArray[np.float64]
B = NDArray[np.bool_]


# Runs along the joint whose medians give the scatter of its gap.
GAP_CHUNKS = 8


@dataclass(frozen=True, slots=True)
class SurfaceParams:
    """Tuning of the height-map analysis. Defaults suit the documented survey
    geometry (depth camera 0.9-1.3 m above the walk, about 1-1.5 mm cells)."""

    closing_mm: float = 110.0  # wider than any gap (3 in and more), narrower than a block
    low_mm: float = 8.0  # a cell this far below the closed surface is in a gap
    edge_level_cap_mm: float = 14.0  # at least the deepest tooled rounding
    min_block_area_mm2: float = 60_000.0
    max_block_rms_mm: float = 6.0  # rougher than this is turf, not concrete
    # Turf-like when the plane residual is correlated two cells apart (relief
    # several cells across, not sensor noise) and over turf_min_rms_mm: such
    # regions do not set the walk's direction.
    turf_relief_corr: float = 0.2
    turf_min_rms_mm: float = 1.5
    max_gap_mm: float = 100.0
    station_step_mm: float = 10.0
    spall_threshold_mm: float = 3.0  # depth from which a pit counts (area is measured there)
    spall_min_area_mm2: float = 600.0
    spall_edge_margin_mm: float = 25.0
    # RMS about a line of the gap's centre, smoothed over ``straightness_window_mm``
    # along the joint (a meander's wavelength is 250 mm or more; station noise is not).
    crack_straightness_mm: float = 1.7
    straightness_window_mm: float = 70.0
    noise_mm: float = 1.0  # sensor noise, only for uncertainties
    # Every opening a depth map shows is narrower than the gap: a pixel
    # straddling an edge returns the nearer surface (foreground fattening),
    # half a pixel's extent across the joint at each edge (a whole pixel's
    # footprint measured across it: up to sqrt(2) footprints when the joint
    # runs diagonally over the pixel grid), and the far wall's points, thrown
    # along their oblique rays by range noise, land in the gap and read as
    # its top. The gap is widened by gap_fattening_px extents plus
    # gap_fattening_mm: 1.0 and 0.5 mm, fitted on the training seeds 0-59 of
    # bench/depth_scenes.py (a pixel returns the nearest of its 4 x 4 rays;
    # range noise 0.5-2.5 mm). A sensor that spreads the nearer surface
    # differently sets its own (sidewalk.testkit.defect_scenes.RENDER_DEPTH_PARAMS).
    gap_fattening_mm: float = 0.5
    gap_fattening_px: float = 1.0
    # Gap sigma beyond the stations' scatter (what is left of the edge bias
    # from frame to frame): per cell, per pixel footprint across the joint
    # (the pixel and cell grids' phase at the edges) and in millimetres (the
    # far wall's scattered points, which range noise sets, not the pixel);
    # chosen on the training seeds 0-59 and development seeds 1000-1039 of
    # bench/depth_scenes.py (100 % and 95 % within 2 sigma).
    gap_sigma_cells: float = 0.0
    gap_sigma_px: float = 0.35
    gap_sigma_mm: float = 0.4


@dataclass(frozen=True, slots=True, eq=False)
class HeightMap:
    """Heights (mm, NaN = no data) on a square grid over the walk plane.

    Cell (row r, col k) is centred at a = a0 + k * cell, b = b0 + r * cell in
    the plane frame; ``to_sensor`` maps plane (a, b, h) to sensor coordinates.
    """

    height_mm: F64
    cell_mm: float
    a0_mm: float
    b0_mm: float
    origin: F64
    axes: F64  # rows: a axis, b axis, normal (unit vectors in sensor frame)
    viewpoint_mm: tuple[float, float, float] | None = None  # sensor (a, b, h), for occlusion
    focal_px: tuple[float, float] | None = None  # fx, fy: pixel footprints for the gap
    # Survey direction in (a, b); None: +a, or +b when the walk runs along b.
    survey_ab: tuple[float, float] | None = None
    # Each cell's top surface (its points near its highest one; NaN where
    # height_mm is): a gap's edges are measured on it. None: height_mm.
    top_mm: F64 | None = None

    def to_sensor(self, a: float, b: float, h: float) -> tuple[float, float, float]:
        p = self.origin + a * self.axes[0] + b * self.axes[1] + h * self.axes[2]
        return float(p[0]), float(p[1]), float(p[2])

    def pixel_extent_mm(self, a: float, b: float, direction: F64) -> float:
        """Extent along ``direction`` (a, b unit vector) of one whole pixel's
        footprint on the walk at (a, b): a square pixel at an angle to a line
        spans up to sqrt(2) footprints across it. The cell size when the
        intrinsics are not known."""
        if self.focal_px is None:
            return self.cell_mm
        p = np.array(self.to_sensor(a, b, 0.0))
        x, y, z = p
        fx, fy = self.focal_px
        cols = []
        for dd in (direction, np.array([-direction[1], direction[0]])):
            d = dd[0] * self.axes[0] + dd[1] * self.axes[1]
            cols.append(
                [fx * (d[0] * z - x * d[2]) / (z * z), fy * (d[1] * z - y * d[2]) / (z * z)]
            )
        jac = np.array(cols).T  # pixels per mm: columns along direction, across it
        if abs(float(np.linalg.det(jac))) < 1e-12:
            return self.cell_mm
        inv = np.linalg.inv(jac)  # mm per pixel: row 0 is along direction
        return float(abs(inv[0, 0]) + abs(inv[0, 1]))

    def footprint_mm(self, a: float, b: float, direction: F64) -> float:
        """Ground length of one pixel at (a, b) along ``direction`` (a, b unit
        vector); the cell size when the intrinsics are not known."""
        if self.focal_px is None:
            return self.cell_mm
        p = np.array(self.to_sensor(a, b, 0.0))
        d = direction[0] * self.axes[0] + direction[1] * self.axes[1]
        x, y, z = p
        fx, fy = self.focal_px
        du = fx * (d[0] * z - x * d[2]) / (z * z)
        dv = fy * (d[1] * z - y * d[2]) / (z * z)
        px_per_mm = math.hypot(du, dv)
        return 1.0 / px_per_mm if px_per_mm > 0 else self.cell_mm


@dataclass(frozen=True, slots=True, eq=False)
class _Block:
    mask: B
    coef: F64  # h = c0 + c1 * col + c2 * row (cells)
    cov: F64
    sigma: float
    centroid: tuple[float, float]  # col, row
    relief_corr: float = 0.0  # residual correlation two cells apart


def analyse_height_map(
    hm: HeightMap,
    params: SurfaceParams,
) -> tuple[tuple[JointMeasurement, ...], tuple[BlockMeasurement, ...], list[_Block]]:
    """Find blocks, the joints between them and the spalls inside them."""
    h = hm.height_mm
    c = hm.cell_mm
    nan = np.isnan(h)
    valid = ~nan
    coverage = _coverage(valid)
    # Noise-free enough heights first: a closing of raw noisy data rides on the
    # noise peaks and would mark plain concrete as low.
    num = cv2.GaussianBlur(np.where(nan, 0.0, h).astype(np.float32), (0, 0), 1.5)
    den = cv2.GaussianBlur(valid.astype(np.float32), (0, 0), 1.5)
    deep = float(np.nanmin(h)) - 100.0
    with np.errstate(invalid="ignore", divide="ignore"):
        smooth = np.where(den > 0.2, num / den, deep).astype(np.float32)
    k = _odd(params.closing_mm / c)
    closed = cv2.morphologyEx(
        smooth, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
    )
    # Specks without data are sampling holes; only sizeable holes are gaps.
    _, nlab, nstats, _ = cv2.connectedComponentsWithStats(nan.astype(np.uint8), connectivity=8)
    big_nan = (nstats[:, cv2.CC_STAT_AREA] >= 30)[nlab] & nan
    low = coverage & (big_nan | ((closed - smooth) > params.low_mm))
    gx = cv2.Sobel(smooth, cv2.CV_32F, 1, 0, ksize=3) / (8 * c)
    gy = cv2.Sobel(smooth, cv2.CV_32F, 0, 1, ksize=3) / (8 * c)
    steep = np.hypot(gx, gy) > 1.0
    free = (coverage & ~low & ~steep).astype(np.uint8)
    free = cv2.erode(free, np.ones((3, 3), np.uint8))
    n, lab, stats, _ = cv2.connectedComponentsWithStats(free, connectivity=4)
    blocks: list[_Block] = []
    min_cells = params.min_block_area_mm2 / (c * c)
    for i in range(1, n):
        if stats[i, cv2.CC_STAT_AREA] < min_cells:
            continue
        mask = lab == i
        blk = _fit_block(h, mask, params)
        if blk is not None and blk.sigma <= params.max_block_rms_mm:
            blocks.append(blk)
    d = _survey_axis(hm, blocks, params)
    blocks.sort(key=lambda b: b.centroid[0] * d[0] + b.centroid[1] * d[1])
    joints = tuple(
        replace(jm, along_walk_mm=_along_walk_mm(hm, jm.center_mm, d))
        for jm in _joints(hm, blocks, coverage, params)
    )
    block_results = tuple(_block_result(hm, i, b, coverage, params) for i, b in enumerate(blocks))
    return joints, block_results, blocks


def _along_walk_mm(
    hm: HeightMap, center: tuple[float, float, float], d: tuple[float, float]
) -> float:
    """Offset along the survey direction ``d`` (plane a, b) from the walk-plane
    point under the image centre (the optical axis) to ``center`` (sensor frame)."""
    ax = hm.axes
    q = np.asarray(center, float) - hm.origin
    a, b = float(q @ ax[0]), float(q @ ax[1])
    if abs(ax[2][2]) > 1e-9:
        t = float(hm.origin @ ax[2]) / float(ax[2][2])
        c0 = np.array([0.0, 0.0, t]) - hm.origin
        a -= float(c0 @ ax[0])
        b -= float(c0 @ ax[1])
    return a * d[0] + b * d[1]


def _survey_axis(hm: HeightMap, blocks: list[_Block], params: SurfaceParams) -> tuple[float, float]:
    """Survey direction in (col, row): the one given, else along the walk
    (the blocks' centroids line up along it) toward +col, or toward +row
    (image up) when the walk runs more along rows than columns."""
    if hm.survey_ab is not None:
        return hm.survey_ab
    # Concrete only: turf beside the walk (a residual correlated two cells
    # apart: relief, not sensor noise) would tilt the line of centroids.
    tops = [
        b
        for b in blocks
        if b.sigma <= params.turf_min_rms_mm or b.relief_corr <= params.turf_relief_corr
    ]
    if len(tops) >= 2:
        blocks = tops
    if len(blocks) < 2:
        return (1.0, 0.0)
    c = np.array([b.centroid for b in blocks])
    _, vecs = np.linalg.eigh(np.cov((c - c.mean(0)).T))
    w = vecs[:, 1]
    if abs(w[0]) >= abs(w[1]):
        return (1.0, 0.0)
    return (0.0, 1.0)


def _odd(v: float) -> int:
    n = max(3, round(v))
    return n if n % 2 else n + 1


def _coverage(valid: B) -> B:
    pts = cv2.findNonZero(valid.astype(np.uint8))
    out = np.zeros(valid.shape, np.uint8)
    if pts is not None:
        cv2.fillConvexPoly(out, cv2.convexHull(pts), 1)
    eroded = cv2.erode(out, np.ones((5, 5), np.uint8))
    return np.asarray(eroded, bool)


def _fit_block(h: F64, mask: B, params: SurfaceParams) -> _Block | None:
    rows, cols = np.nonzero(mask & np.isfinite(h))
    z = h[rows, cols]
    if len(z) < 100:
        return None
    if len(z) > 200_000:  # a plane needs few points; keep the fit fast
        sel = np.random.default_rng(0).choice(len(z), 200_000, replace=False)
        rows, cols, z = rows[sel], cols[sel], z[sel]
    x = np.stack([np.ones(len(z)), cols.astype(float), rows.astype(float)], 1)
    keep = np.ones(len(z), bool)
    coef = np.zeros(3)
    sigma = 0.0
    for _ in range(4):
        coef, *_ = np.linalg.lstsq(x[keep], z[keep], rcond=None)
        res = z - x @ coef
        sigma = float(1.4826 * np.median(np.abs(res[keep])))
        # Pits (spalls) are excluded from the plane, bumps are kept symmetric.
        keep = np.abs(res) < max(3.0 * sigma, 1.5)
        if keep.sum() < 100:
            return None
    xtx = x[keep].T @ x[keep]
    cov = np.linalg.inv(xtx) * sigma**2
    # A concrete top's residual is sensor noise, uncorrelated two cells
    # apart; turf's is relief several cells across (strongly correlated).
    res_img = np.full(h.shape, np.nan)
    res_img[rows[keep], cols[keep]] = res[keep]
    pairs = np.concatenate(
        [
            np.stack([res_img[:, :-2].ravel(), res_img[:, 2:].ravel()], 1),
            np.stack([res_img[:-2, :].ravel(), res_img[2:, :].ravel()], 1),
        ]
    )
    pairs = pairs[np.isfinite(pairs).all(1)]
    corr = (
        float(np.mean(pairs[:, 0] * pairs[:, 1]) / max(float(np.mean(pairs**2)), 1e-9))
        if len(pairs) > 50
        else 0.0
    )
    return _Block(mask, coef, cov, sigma, (float(cols.mean()), float(rows.mean())), corr)


def _plane_at(b: _Block, col: float, row: float) -> tuple[float, float]:
    v = np.array([1.0, col, row])
    return float(v @ b.coef), math.sqrt(max(float(v @ b.cov @ v), 0.0))


def _joints(
    hm: HeightMap, blocks: list[_Block], coverage: B, params: SurfaceParams
) -> tuple[JointMeasurement, ...]:
    c = hm.cell_mm
    reach = _odd(params.max_gap_mm / c)
    kern = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (reach, reach))
    dil = [cv2.dilate(b.mask.astype(np.uint8), kern).astype(bool) for b in blocks]
    out: list[JointMeasurement] = []
    for i in range(len(blocks)):
        for j in range(i + 1, len(blocks)):
            band = dil[i] & dil[j] & ~blocks[i].mask & ~blocks[j].mask & coverage
            if band.sum() * c < 150.0:  # under about 15 cm of contact (one cell wide)
                continue
            m = _measure_joint(hm, blocks, i, j, band=band, params=params)
            if m is not None:
                out.append(m)
    return tuple(out)


def _measure_joint(  # noqa: PLR0912, PLR0915 - one profile pass; splitting it hides the flow
    hm: HeightMap,
    blocks: list[_Block],
    i: int,
    j: int,
    *,
    band: B,
    params: SurfaceParams,
) -> JointMeasurement | None:
    c = hm.cell_mm
    h = hm.height_mm if hm.top_mm is None else hm.top_mm
    rows, cols = np.nonzero(band)
    pts = np.stack([cols, rows], 1).astype(float)
    p0 = pts.mean(0)
    _, evecs = np.linalg.eigh(np.cov((pts - p0).T))
    t = evecs[:, 1]
    nrm = np.array([-t[1], t[0]])
    ci = np.array(blocks[i].centroid)
    cj = np.array(blocks[j].centroid)
    if (cj - ci) @ nrm < 0:
        nrm = -nrm
    s_all = (pts - p0) @ t
    s_lo, s_hi = float(s_all.min()), float(s_all.max())
    length_cells = s_hi - s_lo
    if length_cells * c < 150.0:
        return None
    bi, bj = blocks[i], blocks[j]
    half = params.max_gap_mm / c / 2 + 6.0
    offs = np.arange(-half, half + 0.25, 0.5)  # half-cell steps
    trim = 8.0 / c
    stations = np.arange(s_lo + trim, s_hi - trim, params.station_step_mm / c)
    if len(stations) < 3:
        return None
    # Sample grid: one profile per station, along the joint normal.
    sc = p0[0] + stations[:, None] * t[0] + offs[None, :] * nrm[0]
    sr = p0[1] + stations[:, None] * t[1] + offs[None, :] * nrm[1]
    plane_i = bi.coef[0] + bi.coef[1] * sc + bi.coef[2] * sr
    plane_j = bj.coef[0] + bj.coef[1] * sc + bj.coef[2] * sr
    nan = np.isnan(h)
    lower = np.minimum(plane_i, plane_j)
    # Bilinear samples with missing cells weighted out: h0 = sum of valid w*h.
    h0 = _sample(np.where(nan, 0.0, h), sc, sr)
    nf = _sample(nan.astype(np.float64), sc, sr)
    deep_sel = (nf < 0.01) & (lower - h0 > params.edge_level_cap_mm)
    floor_drop = float(np.median(lower[deep_sel] - h0[deep_sel])) if deep_sel.any() else 0.0
    level = max(params.edge_level_cap_mm, floor_drop / 2)
    # Missing cells read as twice the edge level below each side's own plane,
    # so the 50 % crossing of a top cell next to a hole is the cell boundary.
    drop_i = plane_i - (h0 + nf * (plane_i - 2 * level))
    drop_j = plane_j - (h0 + nf * (plane_j - 2 * level))
    gaps: list[float] = []
    centers: list[float] = []
    svals: list[float] = []
    # Each station's pixel extent across the joint: a joint seen across the
    # view is seen coarser at its far end than at its middle.
    ext_at = [
        hm.pixel_extent_mm(
            hm.a0_mm + (p0[0] + s * t[0]) * c, hm.b0_mm + (p0[1] + s * t[1]) * c, nrm
        )
        for s in stations
    ]
    ext_st: list[float] = []
    for k in range(len(stations)):
        core = (drop_i[k] > level) & (drop_j[k] > level)
        if not core.any():
            gaps.append(0.0)
            ext_st.append(ext_at[k])
            continue
        idx = np.nonzero(core)[0]
        # The run of deep samples nearest the joint line.
        runs = np.split(idx, np.nonzero(np.diff(idx) > 1)[0] + 1)
        run = min(runs, key=lambda r: float(np.min(np.abs(offs[r]))))
        a, b = int(run[0]), int(run[-1])
        if a == 0 or b == len(offs) - 1:
            continue
        oa = _cross(offs[a - 1], offs[a], drop_i[k, a - 1], drop_i[k, a], level)
        ob = _cross(offs[b], offs[b + 1], drop_j[k, b], drop_j[k, b + 1], level)
        gaps.append((ob - oa) * c + params.gap_fattening_mm)
        ext_st.append(ext_at[k])
        centers.append((ob + oa) / 2 * c)
        svals.append(float(stations[k]) * c)
    g = np.array(gaps)
    # Footprint of one pixel across the joint at its middle: the sensor's
    # nearer-surface return narrows a gap by a share of it.
    pm = p0 + (stations[0] + stations[-1]) / 2 * t
    fp = hm.footprint_mm(hm.a0_mm + pm[0] * c, hm.b0_mm + pm[1] * c, nrm)
    ext = (
        float(np.median(ext_st))
        if ext_st
        else hm.pixel_extent_mm(hm.a0_mm + pm[0] * c, hm.b0_mm + pm[1] * c, nrm)
    )
    # The nearer-surface return and the top-surface cells narrow every
    # opening by a share of the pixel's extent across the joint (Algorithms).
    g = np.where(g > 0, g + params.gap_fattening_px * np.array(ext_st), g)
    gap = float(np.median(g))
    n_eff = max(len(g), 1)
    mad = float(1.4826 * np.median(np.abs(g - gap)))
    # Stations 10 mm apart are not independent (the pixel and cell grids
    # cross the edge in the same phase over several of them): the scatter of
    # the medians of GAP_CHUNKS runs along the joint carries that.
    chunks = [float(np.median(q)) for q in np.array_split(g, GAP_CHUNKS) if len(q)]
    chunk_sd = float(np.std(chunks, ddof=1)) / math.sqrt(len(chunks)) if len(chunks) > 2 else 0.0
    gap_unc = math.hypot(
        max(1.2533 * mad / math.sqrt(n_eff), chunk_sd),
        params.gap_sigma_cells * c,
        params.gap_sigma_px * fp,
        params.gap_sigma_mm,
    )
    if gap == 0.0:
        # No opening at most stations: narrower than the sensor resolves
        # (about a footprint and a cell), not shown to be closed.
        res = fp + params.gap_fattening_px * ext + c
        gap, gap_unc = res / 2, max(gap_unc, res / 2)
    occluded = False
    if hm.viewpoint_mm is not None:
        # The higher block's edge hides a strip of the lower side whose width is
        # the step times the ray's horizontal run over its drop. A gap narrower
        # than that strip cannot be seen; its width is then only bounded.
        pc = p0 + (stations[0] + stations[-1]) / 2 * t
        va, vb, vh = hm.viewpoint_mm
        run = (np.array([va - hm.a0_mm, vb - hm.b0_mm]) / c - pc) @ nrm * c
        zi0 = float(bi.coef @ np.array([1.0, *pc]))
        zj0 = float(bj.coef @ np.array([1.0, *pc]))
        camera_on_higher = (run < 0) == (zi0 > zj0)
        shadow = abs(zj0 - zi0) * abs(run) / max(vh, 1.0)
        occluded = bool(camera_on_higher and shadow > 0.5 * c and gap <= shadow + c)
        if occluded:
            gap_unc = max(gap_unc, gap / 2)
    if len(centers) >= 3:
        sv = np.array(svals)
        cv = np.array(centers)
        fit = np.polyfit(sv, cv, 1)
        resid: F64 = np.asarray(cv - np.polyval(fit, sv), np.float64)
        # Station noise (cells of 1-2.5 mm) averages out over a window; a
        # meander (wavelength 250 mm or more) does not.
        win = max(1, round(params.straightness_window_mm / params.station_step_mm))
        if len(resid) > win:
            resid = np.convolve(resid, np.full(win, 1.0 / win), mode="valid")
        straight = float(np.sqrt(np.mean(resid**2)))
        edge = EdgeType.CRACK if straight > params.crack_straightness_mm else EdgeType.TOOLED_JOINT
    else:
        straight = float("nan")
        edge = EdgeType.UNKNOWN
    s_mid = (stations[0] + stations[-1]) / 2
    diffs = []
    for s in (stations[0], s_mid, stations[-1]):
        pc = p0 + s * t
        zi, ui = _plane_at(bi, float(pc[0]), float(pc[1]))
        zj, uj = _plane_at(bj, float(pc[0]), float(pc[1]))
        diffs.append((zj - zi, math.hypot(ui, uj)))
    pc = p0 + s_mid * t
    a_mm = hm.a0_mm + pc[0] * c
    b_mm = hm.b0_mm + pc[1] * c
    z_mid = (_plane_at(bi, *pc)[0] + _plane_at(bj, *pc)[0]) / 2
    # Walk-plane millimetres here; the caller maps them to its image pixels.
    path = tuple(
        (float(hm.a0_mm + q[0] * c), float(hm.b0_mm + q[1] * c))
        for q in (p0 + stations[0] * t, p0 + stations[-1] * t)
    )
    return JointMeasurement(
        block_before=i,
        block_after=j,
        vertical_differential_mm=diffs[1][0],
        vertical_differential_uncertainty_mm=math.hypot(diffs[1][1], 0.1),
        max_abs_vertical_differential_mm=max(abs(d[0]) for d in diffs),
        gap_width_mm=gap,
        gap_width_uncertainty_mm=gap_unc,
        edge_type=edge,
        straightness_rms_mm=straight,
        observed_length_mm=float((stations[-1] - stations[0]) * c),
        center_mm=hm.to_sensor(a_mm, b_mm, z_mid),
        image_path_px=path,
        gap_occluded=occluded,
        gap_footprint_mm=fp,
    )


def _sample(img: F64, cols: F64, rows: F64) -> F64:
    out = cv2.remap(
        img.astype(np.float32),
        cols.astype(np.float32),
        rows.astype(np.float32),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    res: F64 = out.astype(np.float64)
    return res


def _cross(o0: float, o1: float, d0: float, d1: float, level: float) -> float:
    """Offset where the drop passes ``level`` between two samples."""
    if d1 == d0:
        return (o0 + o1) / 2
    return float(o0 + (level - d0) / (d1 - d0) * (o1 - o0))


def _block_result(
    hm: HeightMap, index: int, b: _Block, coverage: B, params: SurfaceParams
) -> BlockMeasurement:
    c = hm.cell_mm
    h = hm.height_mm
    m8 = b.mask.astype(np.uint8)
    contours, _ = cv2.findContours(m8, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(m8)
    cv2.drawContours(filled, contours, -1, 1, thickness=cv2.FILLED)
    m = _odd(2 * params.spall_edge_margin_mm / c)
    inner = cv2.erode(filled, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (m, m))).astype(bool)
    inner &= coverage
    rows, cols = np.mgrid[0 : h.shape[0], 0 : h.shape[1]]
    plane = b.coef[0] + b.coef[1] * cols + b.coef[2] * rows
    drop = plane - h
    ok = inner & ~np.isnan(h)
    # NaN-aware smoothing (normalised convolution) before taking the deepest point.
    sig = max(2.0 / c, 0.8)
    num = cv2.GaussianBlur(np.where(ok, drop, 0.0).astype(np.float32), (0, 0), sig)
    den = cv2.GaussianBlur(ok.astype(np.float32), (0, 0), sig)
    sm = np.where(den > 0.3, num / np.maximum(den, 1e-6), 0.0)
    pit = (inner & (sm >= params.spall_threshold_mm)).astype(np.uint8)
    # Bridge noise-thin necks so one pit is not counted as several.
    pit = cv2.morphologyEx(pit, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8)) & inner.astype(np.uint8)
    n, lab, stats, cent = cv2.connectedComponentsWithStats(pit, connectivity=8)
    spalls: list[SpallMeasurement] = []
    noise_avg = params.noise_mm / (math.sqrt(4 * math.pi) * sig)
    # A pit reaching the rim of the measured area (the view's edge, or the
    # margin kept from the block's edges) is cut off: only a lower bound.
    inner8 = inner.astype(np.uint8)
    rim = inner & ~cv2.erode(inner8, np.ones((3, 3), np.uint8)).astype(bool)
    for k in range(1, n):
        area = float(stats[k, cv2.CC_STAT_AREA]) * c * c
        if area < params.spall_min_area_mm2:
            continue
        sel = lab == k
        r_, c_ = np.unravel_index(int(np.argmax(np.where(sel, sm, -np.inf))), sm.shape)
        depth = _bottom_depth(drop, ok, int(r_), int(c_), c=c, fallback=float(sm[r_, c_]))
        _, pu = _plane_at(b, float(c_), float(r_))
        perim = float(
            cv2.arcLength(
                cv2.findContours(sel.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0][
                    0
                ],
                True,
            )
        )
        cx, cy = cent[k]
        contour = cv2.findContours(
            sel.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
        )[0][0]
        spalls.append(
            SpallMeasurement(
                block=index,
                depth_mm=depth,
                depth_uncertainty_mm=math.hypot(noise_avg, pu, 0.3),
                area_mm2=area,
                area_uncertainty_mm2=perim * c * c * 0.5,
                center_mm=hm.to_sensor(
                    hm.a0_mm + cx * c, hm.b0_mm + cy * c, float(plane[int(cy), int(cx)])
                ),
                image_contour_px=tuple(
                    (float(hm.a0_mm + p[0][0] * c), float(hm.b0_mm + p[0][1] * c)) for p in contour
                ),
                partial_view=bool(np.any(sel & rim)),
            )
        )
    deepest = max(spalls, key=lambda s: s.depth_mm, default=None)
    bc = b.centroid
    return BlockMeasurement(
        block=index,
        deterioration_depth_mm=deepest.depth_mm if deepest else 0.0,
        deterioration_depth_uncertainty_mm=deepest.depth_uncertainty_mm if deepest else 0.0,
        deterioration_area_mm2=float(sum(s.area_mm2 for s in spalls)),
        plane_rms_mm=b.sigma,
        cross_slope_mm_per_m=None,
        cross_slope_uncertainty_mm_per_m=None,
        spalls=tuple(spalls),
        center_mm=hm.to_sensor(
            hm.a0_mm + bc[0] * c, hm.b0_mm + bc[1] * c, _plane_at(b, bc[0], bc[1])[0]
        ),
    )


def _bottom_depth(drop: F64, ok: B, row: int, col: int, *, c: float, fallback: float) -> float:
    """Depth at a pit's bottom from a quadratic fitted to the raw drops
    within 15 mm: the maximum of smoothed noise alone reads too deep."""
    rad = max(3, round(15.0 / c))
    r0, r1 = max(row - rad, 0), min(row + rad + 1, drop.shape[0])
    c0, c1 = max(col - rad, 0), min(col + rad + 1, drop.shape[1])
    rr, cc = np.mgrid[r0:r1, c0:c1]
    m = ok[r0:r1, c0:c1] & ((rr - row) ** 2 + (cc - col) ** 2 <= rad * rad)
    if m.sum() < 12:
        return fallback
    x = (cc[m] - col).astype(float)
    y = (rr[m] - row).astype(float)
    a = np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], 1)
    coef, *_ = np.linalg.lstsq(a, drop[r0:r1, c0:c1][m], rcond=None)
    # Evaluate at the fitted extremum when it lies in the window, else at the centre.
    hess = np.array([[2 * coef[3], coef[5]], [coef[5], 2 * coef[4]]])
    try:
        vx, vy = np.linalg.solve(hess, -coef[1:3])
    except np.linalg.LinAlgError:
        vx, vy = 0.0, 0.0
    if vx * vx + vy * vy > rad * rad:
        vx, vy = 0.0, 0.0
    v = np.array([1.0, vx, vy, vx * vx, vy * vy, vx * vy])
    return float(v @ coef)
