"""Cleared path width along a frontage, from the rectified top-down view.

On the rectified grid each column is one cross-section of the walk. The clear
width of a cross-section is its longest unbroken run of snow-free cells; the
ordinance needs the narrowest cross-section along the whole frontage, so the
frontage's cleared width is the minimum over columns. Specks of snow smaller
than a shovel's scrape and single noisy columns are removed first, because a
salt-crusted crumb is not an obstruction and one bad column is not a pinch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt
from scipy.ndimage import median_filter

from sidewalk.edge.camera.geometry import FrontageGeometry
from sidewalk.edge.camera.snow import DEFAULT_PARAMS, SnowParams, snow_score, snow_threshold

BoolMask = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]


def longest_clear_runs(clear: BoolMask) -> npt.NDArray[np.int64]:
    """Per column, the length in cells of the longest run of True cells (rows = across)."""
    rows, cols = clear.shape
    best = np.zeros(cols, dtype=np.int64)
    run = np.zeros(cols, dtype=np.int64)
    for r in range(rows):
        run = np.where(clear[r], run + 1, 0)
        np.maximum(best, run, out=best)
    return best


@dataclass(frozen=True, slots=True)
class WidthParams:
    """Cleaning scales in millimetres."""

    ignore_specks_mm: float = 60.0  # snow crumbs and salt crust smaller than this are not snow
    column_window_mm: float = 100.0  # median over this length along the frontage
    # The walk's ends are where someone clicked them, a few pixels either way; past
    # them lie the neighbour's walk or a bank. Two pixels off on a pole watching
    # three 55 ft frontages put 50 mm of the neighbour's snow in the last columns
    # and measured a cleared walk at 150 mm. A pinch this close to the property
    # line is as likely the neighbour's: it is not held against this owner.
    end_guard_mm: float = 150.0


@dataclass(frozen=True, slots=True)
class FrontageMeasurement:
    """What the device reports for one frontage and frame."""

    snow_cover_fraction: float  # share of the visible walk area under snow, 0..1
    cleared_width_mm: float  # narrowest clear cross-section along the whole visible frontage
    narrowest_at_mm: float  # where along the frontage (x) that cross-section is
    visible_fraction: float  # share of the walk the camera sees (occlusion, framing)
    two_class: bool  # False: one-class scene decided by the fixed threshold (weaker evidence)
    width_profile_mm: FloatArray  # clear width of every column, for evidence
    # One sigma of ``cleared_width_mm`` (``width_uncertainty``): the grid's and the
    # picture's resolution at the narrowest point and the calibration's own error.
    width_uncertainty_mm: float = math.nan


def width_uncertainty(geometry: FrontageGeometry, at_mm: float) -> float:
    """One sigma, in mm, of a cleared width measured at ``at_mm`` along the frontage.

    Root-sum-square of independent terms, for each of the path's two edges: where in
    its grid cell the edge lies (uniform over ``mm_per_px``), where in its image pixel
    (uniform over the ground a pixel spans across the walk there), and where the
    calibration puts the walk's edge (``calibration_error_mm``; a path cleared to the
    walk's edge is bounded by it). Taken for both edges, though a narrow path may touch
    neither: the stated figure is never smaller than the error it can hide, so a
    shortfall within twice it is not held against the owner."""
    per_edge = (
        geometry.mm_per_px**2 / 12
        + geometry.pixel_across_mm(at_mm) ** 2 / 12
        + geometry.calibration_error_mm**2
    )
    return math.sqrt(2 * per_edge)


def measure_frontage(
    frame: Image,
    geometry: FrontageGeometry,
    snow_params: SnowParams = DEFAULT_PARAMS,
    width_params: WidthParams | None = None,
) -> FrontageMeasurement:
    """Snow-cover fraction and cleared width of one frontage in one camera frame."""
    wp = width_params or WidthParams()
    top, seen = geometry.rectify(frame)
    score = snow_score(top, snow_params)
    threshold = snow_threshold(score[seen], snow_params)
    snow = (score > threshold.value) & seen

    k = max(1, round(wp.ignore_specks_mm / geometry.mm_per_px)) | 1
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    snow = cv2.morphologyEx(snow.astype(np.uint8), cv2.MORPH_OPEN, kernel).astype(bool)

    walk = geometry.walk_rows()
    walk_snow, walk_seen = snow[walk], seen[walk]
    visible_cols = walk_seen.all(axis=0)
    runs = longest_clear_runs(~walk_snow & walk_seen).astype(np.float64) * geometry.mm_per_px
    window = max(1, round(wp.column_window_mm / geometry.mm_per_px)) | 1
    profile = np.asarray(median_filter(runs, size=window, mode="nearest"), dtype=np.float64)

    seen_cells = int(walk_seen.sum())
    if not visible_cols.any():
        nan = float("nan")
        return FrontageMeasurement(nan, nan, nan, 0.0, threshold.two_class, profile)
    cols = np.flatnonzero(visible_cols)
    guard = round(wp.end_guard_mm / geometry.mm_per_px)
    inside = cols[(cols >= guard) & (cols < visible_cols.size - guard)]
    if inside.size:
        cols = inside
    narrowest = int(cols[np.argmin(profile[cols])])
    return FrontageMeasurement(
        snow_cover_fraction=float(walk_snow.sum()) / seen_cells,
        cleared_width_mm=float(profile[narrowest]),
        narrowest_at_mm=(narrowest + 0.5) * geometry.mm_per_px,
        visible_fraction=float(visible_cols.mean()),
        two_class=threshold.two_class,
        width_profile_mm=profile,
        width_uncertainty_mm=width_uncertainty(geometry, (narrowest + 0.5) * geometry.mm_per_px),
    )
