"""The straight joint of a survey photo, measured between its two edge lines
on the ground plane of the marker.

The photo is first rectified through the marker's frame onto the walk
(millimetres), where a joint is a straight dark band whatever the
perspective: it is found there by the darkness of lines across the whole
view (a Radon sum of the band's darkness against its surroundings; texture,
stains and pores do not line up, shadows wider than a joint are removed
with the background). Its two edges are then found on profiles taken across
it in the photo itself, each edge a line fitted to the half-way crossings of
many profiles on linear intensity, and the gap is the distance between the
two lines in ground millimetres, less the outward shift a shaded, rounded
arris gives each half-way crossing (a bias, not scatter). The width's
uncertainty joins the lines' scatter, the marker's corner noise carried
through the frame to the joint (a small marker's frame tilts, and a joint
far from it sees that), and the ground sample at the joint; a width whose
2 sigma exceeds the tolerance is refused with the reason in words, never
stated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from .errors import InputProblem, MeasurementError
from .fiducial import CameraCalibration

F64 = NDArray[np.float64]
F32 = NDArray[np.float32]

# Corners (distorted image px, 4 x 2) -> image-to-ground homography (undistorted px -> mm).
FrameFromCorners = Callable[[F64], F64]


@dataclass(frozen=True, slots=True)
class JointGaugeParams:
    """Settings of the straight-joint gauge (physics and the survey's use;
    the few fitted ones say where they were chosen)."""

    widest_gap_mm: float = 90.0  # bands narrower than this are looked for (3 1/2 in)
    search_radius_mm: float = 1200.0  # around the marker
    search_raster_mm: float = 2.5  # the rectified search image's pixel (finer: the marker's)
    # Where a ground pixel is seen coarser than this many times the marker's,
    # the view is too far for the search (it still measures the joint there).
    max_search_gsd_ratio: float = 3.0
    # A joint line is at least this dark against the walk beside it on average
    # (log of linear intensity; 0.35 is 30 % darker) and this long in view.
    min_line_darkness: float = 0.35
    min_length_mm: float = 250.0
    profile_step_mm: float = 5.0
    surface_margin_mm: float = 8.0  # the walk beside each edge read for its level
    # ... from this many blur sigmas past the edge (where a blurred step has
    # risen to 99 %; physics).
    settle_blur_sigmas: float = 2.6
    edge_at_steepest: bool = False  # the half-way crossing read 0.2 mm closer on the tuning photos
    min_edge_contrast: float = 0.3  # floor at most 70 % of the surface beside it
    # The marker corners' noise (px) carried through the frame; the larger of
    # this and the edge lines' own scatter. Chosen on the tuning photos
    # (bench/joint_photos.py seeds 0-19): refined corners off the truth by
    # 0.05-0.25 px.
    corner_sigma_px: float = 0.15
    frame_samples: int = 40
    # Each edge's placement beyond its scatter (fraction of the ground pixel at
    # the joint): JPEG, the blur's shape.
    edge_sigma_px: float = 0.12
    # A rounded, shaded arris moves each edge seen outward: its darkening
    # fades over the arris's radius, so the walk's level read past the blur is
    # above the step's top at the edge and the half-way crossing sits outside
    # it. This is a bias, not scatter (the width read wide on every kind of
    # photo: the error's part from the edges alone, through the true frame,
    # went with the arris's darkness times the shaded stretch before the level
    # is read, r = 0.8), so it is taken off each edge. Calibration, fitted on
    # the training photos only (bench/joint_photos.py seeds 0-99: the widths
    # read 0.37 mm wide on average, median 0.33, both halves alike; the
    # held-out seeds 100-139 were not looked at).
    arris_bias_mm: float = 0.185
    # What stays of the arris's effect once its mean is taken off (the
    # training photos' edge errors about it: 0.37 mm rms with the pixel
    # terms; 0.5 mm here keeps them within 2 sigma).
    arris_sigma_mm: float = 0.5
    # Tolerance of the verdict: a resolved width whose 2 sigma is wider is refused.
    max_two_sigma_mm: float = 25.4 / 16
    # A gap is resolved when 3.92 blur sigmas fit in it (its dip then reaches
    # the floor; physics, as for the crack traces).
    resolved_blur_sigmas: float = 3.92


@dataclass(frozen=True, slots=True)
class JointGauge:
    """One joint measured between its edge lines (ground mm, marker frame)."""

    gap_width_mm: float
    gap_width_uncertainty_mm: float
    resolved: bool
    length_mm: float
    centre_mm: tuple[float, float]
    direction: tuple[float, float]
    straightness_rms_mm: float
    ground_sample_mm: float  # mm per image pixel across the joint
    edges_px: tuple[tuple[tuple[float, float], ...], tuple[tuple[float, float], ...]]
    # The uncertainty's parts (mm): edge scatter, marker frame, edge placement.
    sigma_parts_mm: tuple[float, float, float]


NO_JOINT = "no joint found in the photo"


def _distort(und: F64, calib: CameraCalibration) -> F64:
    k = calib.matrix
    if not np.any(calib.distortion):
        return und
    xn = (und[:, 0] - k[0, 2]) / k[0, 0]
    yn = (und[:, 1] - k[1, 2]) / k[1, 1]
    pts = np.stack([xn, yn, np.ones_like(xn)], 1).reshape(-1, 1, 3)
    img, _ = cv2.projectPoints(pts, np.zeros(3), np.zeros(3), k, calib.distortion)
    return np.asarray(img, np.float64).reshape(-1, 2)


def _undistort(px: F64, calib: CameraCalibration) -> F64:
    if not np.any(calib.distortion):
        return px
    und = cv2.undistortPoints(
        px.reshape(-1, 1, 2).astype(np.float64), calib.matrix, calib.distortion, P=calib.matrix
    )
    return np.asarray(und, np.float64).reshape(-1, 2)


def _h(h: F64, pts: F64) -> F64:
    out = cv2.perspectiveTransform(pts.reshape(-1, 1, 2).astype(np.float64), h)
    return np.asarray(out, np.float64).reshape(-1, 2)


def homography_frame(corners_px: F64, calib: CameraCalibration, side_mm: float) -> F64:
    """Undistorted image px -> marker mm from the marker's four corners alone
    (no pose: a small marker's two poses cannot flip it)."""
    und = _undistort(corners_px, calib).astype(np.float32)
    sq = np.array([[0, 0], [side_mm, 0], [side_mm, side_mm], [0, side_mm]], np.float32)
    return np.asarray(cv2.getPerspectiveTransform(und, sq), np.float64)


def pose_frame(corners_px: F64, calib: CameraCalibration, side_mm: float) -> F64:
    """Undistorted image px -> marker mm from the marker's pose with the
    camera's intrinsics (six unknowns from eight coordinates: on the survey
    photos its frame carried the corners' noise to a joint 100-450 mm away
    six times less than the bare homography did). Of the pose's two
    solutions the one the corners fit better."""
    s = side_mm
    obj = np.array([[0, 0, 0], [s, 0, 0], [s, s, 0], [0, s, 0]], np.float64)
    ok, rvec, tvec = cv2.solvePnP(
        obj, corners_px.astype(np.float64), calib.matrix, calib.distortion, flags=cv2.SOLVEPNP_IPPE
    )
    if not ok:
        raise MeasurementError(InputProblem.NO_FIDUCIAL, "marker pose failed")
    rot, _ = cv2.Rodrigues(rvec)
    g2i = calib.matrix @ np.column_stack([rot[:, 0], rot[:, 1], np.ravel(tvec)])
    i2g = np.linalg.inv(g2i)
    return np.asarray(i2g / i2g[2, 2], np.float64)


def _to_image(g: F64, i2g: F64, calib: CameraCalibration) -> F64:
    return _distort(_h(np.asarray(np.linalg.inv(i2g), np.float64), g), calib)


def _rectified(
    lin: F32, i2g: F64, calib: CameraCalibration, corners_px: F64, p: JointGaugeParams
) -> tuple[F32, NDArray[np.bool_], F64, float]:
    """The walk around the marker on a ground raster: log intensity, where it
    is usable, the raster's origin (mm) and its pixel (mm)."""
    cg = _h(i2g, _undistort(corners_px, calib))
    centre = cg.mean(0)
    side_mm = float(np.linalg.norm(cg[1] - cg[0]))
    side_px = float(np.linalg.norm(corners_px - np.roll(corners_px, -1, 0), axis=1).mean())
    gsd0 = side_mm / side_px
    q = max(p.search_raster_mm, gsd0)
    n = int(2 * p.search_radius_mm / q)
    origin = centre - p.search_radius_mm
    xs = origin[0] + q * np.arange(n)
    ys = origin[1] + q * np.arange(n)
    gx, gy = np.meshgrid(xs, ys)
    pts = np.stack([gx.ravel(), gy.ravel()], 1)
    img = _to_image(pts, i2g, calib).reshape(n, n, 2).astype(np.float32)
    h, w = lin.shape
    inside = (
        (img[..., 0] >= 2) & (img[..., 0] <= w - 3) & (img[..., 1] >= 2) & (img[..., 1] <= h - 3)
    )
    # Ground sample: the image distance between neighbouring raster cells.
    dx = np.hypot(np.gradient(img[..., 0], axis=1), np.gradient(img[..., 1], axis=1))
    dy = np.hypot(np.gradient(img[..., 0], axis=0), np.gradient(img[..., 1], axis=0))
    gsd = q / np.maximum(np.minimum(dx, dy), 1e-6)
    # In front of the camera only: beyond the horizon the homography folds back.
    den = np.linalg.inv(i2g)[2] @ np.vstack([pts.T, np.ones(len(pts))])
    front = (den > 0).reshape(n, n)
    usable = inside & front & (gsd <= p.max_search_gsd_ratio * gsd0)
    # The marker and its sheet are not the walk.
    sheet = (cg - centre) * 2.0 + centre
    poly = np.zeros((n, n), np.uint8)
    cv2.fillConvexPoly(poly, np.round((sheet - origin) / q).astype(np.int32), 1)
    usable &= poly == 0
    ras = cv2.remap(
        lin, img[..., 0], img[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    log = np.log(np.asarray(ras, np.float32) + 1.0).astype(np.float32)
    return log, usable, origin, q


def _darkness(log: F32, usable: NDArray[np.bool_], q: float, p: JointGaugeParams) -> F32:
    """How much darker each ground pixel is than the walk around it, for
    bands narrower than the widest gap (a black top-hat of log intensity:
    a shadow's step or a wide shadow stays out, a joint in shade stays in)."""
    fill = float(np.median(log[usable])) if usable.any() else 0.0
    src = np.asarray(cv2.GaussianBlur(np.where(usable, log, fill).astype(np.float32), (0, 0), 1.0))
    k = round(p.widest_gap_mm / q) | 1
    ker = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    closed = cv2.morphologyEx(src, cv2.MORPH_CLOSE, ker)
    dark = np.clip(closed - src, 0.0, 2.0)
    dark[~usable] = 0.0
    return np.asarray(dark, np.float32)


def _find_line(
    dark: F32, usable: NDArray[np.bool_], q: float, p: JointGaugeParams
) -> tuple[float, float, float] | None:
    """(angle of the joint's normal, offset along it in raster px from the
    raster centre, mean darkness) of the darkest long straight band, or None."""
    n = dark.shape[0]
    ctr = (n / 2.0, n / 2.0)
    # Coarse raster for the angle search, the full one to refine.
    best: tuple[float, float, float] | None = None
    valid = usable.astype(np.float32)
    min_len = p.min_length_mm / q
    # The angle on a raster half as fine (a joint's band survives the
    # halving as darkness), then the line on the full one.
    half_d = cv2.resize(dark, (n // 2, n // 2), interpolation=cv2.INTER_AREA)
    half_v = cv2.resize(valid, (n // 2, n // 2), interpolation=cv2.INTER_AREA)
    hc = (n / 4.0, n / 4.0)
    coarse = (0.0, -1.0)
    for deg in np.arange(0.0, 180.0, 1.0):
        m = cv2.getRotationMatrix2D(hc, float(deg), 1.0)
        d = cv2.warpAffine(half_d, m, (n // 2, n // 2), flags=cv2.INTER_LINEAR)
        v = cv2.warpAffine(half_v, m, (n // 2, n // 2), flags=cv2.INTER_LINEAR)
        sd, sv = d.sum(1), v.sum(1)
        mean = np.where(sv >= min_len / 2, sd / np.maximum(sv, 1e-6), 0.0)
        if float(mean.max()) > coarse[1]:
            coarse = (float(deg), float(mean.max()))
    for deg in np.arange(coarse[0] - 1.0, coarse[0] + 1.0001, 0.5):
        m = cv2.getRotationMatrix2D(ctr, float(deg), 1.0)
        d = cv2.warpAffine(dark, m, (n, n), flags=cv2.INTER_LINEAR)
        v = cv2.warpAffine(valid, m, (n, n), flags=cv2.INTER_LINEAR)
        sd, sv = d.sum(1), v.sum(1)
        mean = np.where(sv >= min_len, sd / np.maximum(sv, 1e-6), 0.0)
        i = int(np.argmax(mean))
        if best is None or mean[i] > best[2]:
            best = (float(deg), float(i), float(mean[i]))
    if best is None or best[2] < p.min_line_darkness:
        return None
    return best


def _line_in_ground(
    found: tuple[float, float, float], origin: F64, q: float, n: int
) -> tuple[F64, F64]:
    """A point on the band's centre and its direction, ground mm."""
    deg, row, _ = found
    m = cv2.getRotationMatrix2D((n / 2.0, n / 2.0), deg, 1.0)
    inv = cv2.invertAffineTransform(m)
    # The row in the rotated raster is the line y' = row: two points on it back.
    a = inv @ np.array([0.0, row, 1.0])
    b = inv @ np.array([float(n), row, 1.0])
    pa, pb = origin + a * q, origin + b * q
    t = (pb - pa) / np.linalg.norm(pb - pa)
    return (pa + pb) / 2, t


def _band_width(  # noqa: PLR0917 - the raster and the line
    dark: F32, origin: F64, q: float, c: F64, t: F64, p: JointGaugeParams
) -> float:
    """The band's rough width (mm) across the found line: where its mean
    darkness stays over half the peak."""
    nrm = np.array([-t[1], t[0]])
    along = np.arange(-p.search_radius_mm, p.search_radius_mm, q)
    offs = np.arange(-p.widest_gap_mm, p.widest_gap_mm + q / 2, q / 2)
    g = c[None, None, :] + along[:, None, None] * t + offs[None, :, None] * nrm
    r = ((g - origin) / q).astype(np.float32)
    s = cv2.remap(dark, r[..., 0], r[..., 1], cv2.INTER_LINEAR, borderValue=0.0)
    prof = np.asarray(s, np.float64).mean(0)
    k = int(np.argmax(prof))
    half = prof[k] / 2
    a = k
    while a > 0 and prof[a] >= half:
        a -= 1
    b = k
    while b < len(prof) - 1 and prof[b] >= half:
        b += 1
    return float(offs[b] - offs[a])


def _profiles(  # noqa: PLR0917 - the photo, its frame and the line
    lin: F32, i2g: F64, calib: CameraCalibration, c: F64, t: F64, along: F64, offs: F64
) -> tuple[F64, NDArray[np.bool_], F64]:
    """Linear intensity across the line at each ``along`` (ground mm), at
    ``offs`` mm along the ground normal; which samples fall in the photo;
    the image points (px) of every sample."""
    nrm = np.array([-t[1], t[0]])
    g = c[None, None, :] + along[:, None, None] * t + offs[None, :, None] * nrm
    img = _to_image(g.reshape(-1, 2), i2g, calib).reshape(len(along), len(offs), 2)
    h, w = lin.shape
    inside = (
        (img[..., 0] >= 1) & (img[..., 0] <= w - 2) & (img[..., 1] >= 1) & (img[..., 1] <= h - 2)
    )
    m = img.astype(np.float32)
    prof = cv2.remap(lin, m[..., 0], m[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(prof, np.float64), inside, img


def _crossing(pr: F64, offs: F64, start: int, level: float, step: int) -> float | None:
    """Offset where ``pr`` first rises through ``level`` going from ``start``
    by ``step`` (-1 left, +1 right), interpolated."""
    i = start
    while 0 <= i + step < len(pr) and pr[i] < level:
        i += step
    if not (0 <= i + step < len(pr)) and pr[i] < level:
        return None
    j = i - step
    if pr[i] == pr[j]:
        return float(offs[i])
    return float(offs[j] + (level - pr[j]) / (pr[i] - pr[j]) * (offs[i] - offs[j]))


def _edges(  # noqa: PLR0917 - the profiles and where to look on them
    prof: F64,
    inside: NDArray[np.bool_],
    offs: F64,
    width: float,
    settle_mm: float,
    p: JointGaugeParams,
    steep_mm: float = 2.0,
) -> tuple[F64, F64]:
    """Left and right edge offsets (mm) of the band on each profile (NaN where
    a profile cannot place them): the half-way crossings between the band's
    floor and the walk beside each edge."""
    left = np.full(len(prof), np.nan)
    right = np.full(len(prof), np.nan)
    for i, pr in enumerate(prof):
        if not inside[i].all():
            continue
        lo_e, hi_e = -width / 2, width / 2
        for _ in range(2):
            core = (offs > lo_e + 0.25 * (hi_e - lo_e)) & (offs < hi_e - 0.25 * (hi_e - lo_e))
            if core.sum() < 1:
                core = np.abs(offs - (lo_e + hi_e) / 2) <= 0.5
            k0 = int(np.flatnonzero(core)[np.argmin(pr[core])])
            floor = float(np.percentile(pr[core], 20))
            # The walk's level just past the blur of each edge (a rounded,
            # shaded arris is the level the edge rises to, not the slab beyond).
            sl = (offs < lo_e - settle_mm) & (offs > lo_e - settle_mm - p.surface_margin_mm)
            sr = (offs > hi_e + settle_mm) & (offs < hi_e + settle_mm + p.surface_margin_mm)
            if sl.sum() < 4 or sr.sum() < 4:
                break
            lev_l, lev_r = float(np.median(pr[sl])), float(np.median(pr[sr]))
            if floor > (1 - p.min_edge_contrast) * min(lev_l, lev_r):
                lo_e = hi_e = math.nan
                break
            a = _crossing(pr, offs, k0, (floor + lev_l) / 2, -1)
            b = _crossing(pr, offs, k0, (floor + lev_r) / 2, +1)
            if a is None or b is None:
                lo_e = hi_e = math.nan
                break
            lo_e, hi_e = a, b
        if p.edge_at_steepest and math.isfinite(lo_e):
            # Where the profile is steepest near each crossing: the edge of a
            # blurred step, whatever level its rounded arris rises to.
            lo_e = _steepest(pr, offs, lo_e, -1.0, steep_mm)
            hi_e = _steepest(pr, offs, hi_e, 1.0, steep_mm)
        left[i], right[i] = lo_e, hi_e
    return left, right


def _steepest(pr: F64, offs: F64, at: float, sign: float, reach: float) -> float:
    """Offset of the steepest rise (outward, ``sign``) within ``reach`` mm of
    ``at``, refined by a parabola through the three samples about it."""
    step = float(offs[1] - offs[0])
    g = np.gradient(pr) * sign
    win = np.flatnonzero(np.abs(offs - at) <= reach)
    if len(win) < 3:
        return at
    k = int(win[np.argmax(g[win])])
    if k <= 0 or k >= len(pr) - 1:
        return at
    den = g[k - 1] - 2 * g[k] + g[k + 1]
    d = 0.5 * (g[k - 1] - g[k + 1]) / den if den < 0 else 0.0
    return float(offs[k] + max(-1.0, min(1.0, d)) * step)


def _robust_line(a: F64, o: F64) -> tuple[F64, NDArray[np.bool_]]:
    """Offset = c0 * along + c1, fitted with outliers (3.5 MAD, at least 0.5 mm) dropped."""
    keep = np.isfinite(o)
    fit = np.array([0.0, float(np.nanmedian(o))])
    for _ in range(4):
        if keep.sum() < 4:
            break
        fit = np.polyfit(a[keep], o[keep], 1)
        res = o - np.polyval(fit, a)
        mad = 1.4826 * float(np.median(np.abs(res[keep])))
        new = np.isfinite(o) & (np.abs(res) <= max(3.5 * mad, 0.5))
        if (new == keep).all():
            break
        keep = new
    return np.asarray(fit, np.float64), keep


def _width_from_edges(  # noqa: PLR0917 - the edges and their frame
    pl: F64, pr_: F64, i2g: F64, calib: CameraCalibration, c: F64, t: F64
) -> tuple[float, float, float, int]:
    """Width (mm) between the two edge lines at their common middle, from
    edge points given in image px; the along range's middle (mm), the
    lines' rms scatter (mm) and the number of points kept."""
    nrm = np.array([-t[1], t[0]])
    gl = _h(i2g, _undistort(pl, calib)) - c
    gr = _h(i2g, _undistort(pr_, calib)) - c
    al, ol = gl @ t, gl @ nrm
    ar, or_ = gr @ t, gr @ nrm
    fl, kl = _robust_line(al, ol)
    fr, kr = _robust_line(ar, or_)
    mid = float((np.median(al[kl]) + np.median(ar[kr])) / 2) if kl.any() and kr.any() else 0.0
    slope = (fl[0] + fr[0]) / 2
    w = float((np.polyval(fr, mid) - np.polyval(fl, mid)) / math.sqrt(1 + slope**2))
    res = np.concatenate([(ol - np.polyval(fl, al))[kl], (or_ - np.polyval(fr, ar))[kr]])
    rms = float(np.sqrt(np.mean(res**2))) if len(res) else math.inf
    return w, mid, rms, int(min(kl.sum(), kr.sum()))


def measure_joint(  # noqa: PLR0917, PLR0915 - the photo, its marker and the stages in order
    lin: F32,
    calib: CameraCalibration,
    corners_px: F64,
    frame: FrameFromCorners,
    blur_px: float,
    p: JointGaugeParams | None = None,
) -> JointGauge:
    """The photo's straight joint between its edge lines. ``lin`` is linear
    intensity, ``corners_px`` the marker's refined corners (distorted image)
    and ``frame`` builds the image-to-ground homography from corners (so the
    corners' noise can be carried through it). Raises ``MeasurementError``
    (not measured, with the reason in words) when no joint is found or its
    width cannot be told to the tolerance."""
    p = p or JointGaugeParams()
    i2g = frame(corners_px)
    log, usable, origin, q = _rectified(lin, i2g, calib, corners_px, p)
    if usable.sum() * q * q < (2 * p.min_length_mm) ** 2 / 4:
        raise MeasurementError(
            InputProblem.NOT_MEASURED, "too little of the walk in view near the marker"
        )
    dark = _darkness(log, usable, q, p)
    found = _find_line(dark, usable, q, p)
    if found is None:
        raise MeasurementError(InputProblem.NOT_MEASURED, NO_JOINT)
    c, t = _line_in_ground(found, origin, q, log.shape[0])
    width0 = min(max(_band_width(dark, origin, q, c, t, p), 3.0), p.widest_gap_mm)
    # Profiles across the line wherever the walk is in view along it.
    along = np.arange(-p.search_radius_mm, p.search_radius_mm, p.profile_step_mm)
    for _ in range(2):
        half = width0 / 2 + 3 * p.surface_margin_mm + 10.0
        offs = np.arange(-half, half + 0.125, 0.25)
        ga = c[None, :] + along[:, None] * t
        rr = ((ga - origin) / q).round().astype(int)
        n = usable.shape[0]
        ok = (rr >= 0).all(1) & (rr < n).all(1)
        ok[ok] = usable[rr[ok, 1], rr[ok, 0]]
        prof, inside, img = _profiles(lin, i2g, calib, c, t, along[ok], offs)
        settle = p.settle_blur_sigmas * blur_px * _ground_sample(i2g, calib, c, t)
        left, right = _edges(prof, inside, offs, width0, settle, p, settle / 2)
        good = np.isfinite(left) & np.isfinite(right)
        if good.sum() * p.profile_step_mm < p.min_length_mm:
            raise MeasurementError(
                InputProblem.NOT_MEASURED,
                f"{NO_JOINT}: a dark line, but its two edges are not clear along"
                f" {p.min_length_mm:.0f} mm of it",
            )
        nrm = np.array([-t[1], t[0]])
        a_ok = along[ok][good]
        mid_off = float(np.median((left[good] + right[good]) / 2))
        # Re-centre on the edges found and go again with their width.
        slope = np.polyfit(a_ok, (left[good] + right[good]) / 2, 1)
        c = c + mid_off * nrm
        t_new = t + slope[0] * nrm
        t = t_new / np.linalg.norm(t_new)
        width0 = float(np.median(right[good] - left[good]))
    # The edge points in the photo (px), for the frame's noise.
    idx = np.flatnonzero(good)
    pts_l = _interp_px(img[idx], offs, left[good])
    pts_r = _interp_px(img[idx], offs, right[good])
    w, mid, rms, n_kept = _width_from_edges(pts_l, pts_r, i2g, calib, c, t)
    if n_kept * p.profile_step_mm < p.min_length_mm or not math.isfinite(w) or w <= 0:
        raise MeasurementError(InputProblem.NOT_MEASURED, f"{NO_JOINT}: its edges are not straight")
    # Scatter: the lines' residuals, or the width's spread between stretches
    # (the edges' errors are correlated along the joint), the larger.
    chunks = np.array_split(np.arange(len(pts_l)), 6)
    cw = [
        _width_from_edges(pts_l[ch], pts_r[ch], i2g, calib, c, t)[0]
        for ch in chunks
        if len(ch) >= 4
    ]
    s_fit = max(
        rms * math.sqrt(2.0 / max(n_kept, 1)),
        float(np.std(cw)) / math.sqrt(len(cw)) if len(cw) >= 3 else math.inf,
    )
    # The marker's corner noise through the frame, at the joint.
    rng = np.random.default_rng(0)
    ws = []
    for _ in range(p.frame_samples):
        h2 = frame(corners_px + rng.normal(0.0, p.corner_sigma_px, corners_px.shape))
        ws.append(_width_from_edges(pts_l, pts_r, h2, calib, c, t)[0])
    s_frame = float(np.std(ws))
    cg = c + mid * t
    gsd = _ground_sample(i2g, calib, cg, t)
    s_edge = math.hypot(math.sqrt(2.0) * p.edge_sigma_px * gsd, p.arris_sigma_mm)
    sigma = math.sqrt(s_fit**2 + s_frame**2 + s_edge**2)
    resolved = w / gsd >= p.resolved_blur_sigmas * blur_px
    if resolved:
        w -= 2 * p.arris_bias_mm
    else:
        # Narrower than the blur shows: the truth is anywhere from 0 to the
        # width read (left as read: an upper bound).
        sigma = math.hypot(sigma, w / 2)
    if resolved and 2 * sigma > p.max_two_sigma_mm:
        raise MeasurementError(
            InputProblem.NOT_MEASURED, _too_uncertain(sigma, s_fit, s_frame, s_edge, gsd, p)
        )
    pl_path = tuple((float(x), float(y)) for x, y in pts_l[:: max(1, len(pts_l) // 20)])
    pr_path = tuple((float(x), float(y)) for x, y in pts_r[:: max(1, len(pts_r) // 20)])
    return JointGauge(
        gap_width_mm=w,
        gap_width_uncertainty_mm=sigma,
        resolved=resolved,
        length_mm=float(a_ok.max() - a_ok.min()),
        centre_mm=(float(cg[0]), float(cg[1])),
        direction=(float(t[0]), float(t[1])),
        straightness_rms_mm=rms,
        ground_sample_mm=gsd,
        edges_px=(pl_path, pr_path),
        sigma_parts_mm=(s_fit, s_frame, s_edge),
    )


def _too_uncertain(  # noqa: PLR0917 - the parts of the uncertainty
    sigma: float, s_fit: float, s_frame: float, s_edge: float, gsd: float, p: JointGaugeParams
) -> str:
    """Why a width cannot be stated, in words, with what to do about it."""
    head = (
        f"gap width too uncertain: +/- {2 * sigma:.1f} mm (2 sigma) against the"
        f" {p.max_two_sigma_mm:.2f} mm (1/16 in) the verdict needs"
    )
    worst = max(s_fit, s_frame, s_edge)
    if worst == s_frame:
        return (
            f"{head}; the marker is too small in the photo for the joint's distance"
            " from it (lay it beside the joint, or take the photo closer)"
        )
    if worst == s_edge:
        return (
            f"{head}; the photo is too far from the joint ({gsd:.1f} mm per pixel"
            " there; take it closer)"
        )
    return f"{head}; the joint's edges are ragged or unclear (take the photo closer and square on)"


def _interp_px(img: F64, offs: F64, o: F64) -> F64:
    """Image points (px) at offsets ``o`` on each profile's sample points."""
    j = np.clip(np.searchsorted(offs, o) - 1, 0, len(offs) - 2)
    f = ((o - offs[j]) / (offs[j + 1] - offs[j]))[:, None]
    rows = np.arange(len(o))
    return img[rows, j] * (1 - f) + img[rows, j + 1] * f


def _ground_sample(i2g: F64, calib: CameraCalibration, g: F64, t: F64) -> float:
    """Ground mm per image pixel across the joint at ``g``."""
    nrm = np.array([-t[1], t[0]])
    px = _to_image(np.array([g - 5.0 * nrm, g + 5.0 * nrm]), i2g, calib)
    return 10.0 / max(float(np.linalg.norm(px[1] - px[0])), 1e-9)
