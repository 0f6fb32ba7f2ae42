"""Evidence images: what was measured, drawn where it was measured."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from .classify import classify_block, classify_joint, classify_laser
from .limits import DefectLimits
from .results import LaserProfile, PhotoInspection, SurfaceInspection

RED = (0, 0, 255)
GREEN = (0, 170, 0)


def annotate(
    image: NDArray[np.uint8] | NDArray[np.uint16],
    inspection: PhotoInspection | SurfaceInspection | LaserProfile,
    limits: DefectLimits,
    *,
    camera_matrix: NDArray[np.float64] | None = None,
) -> NDArray[np.uint8]:
    """A BGR copy of ``image`` (a photo, or a depth map shown in grey) with
    every joint, crack and spall drawn red if it fails a limit, else green,
    and its measured values written beside it. A laser frame gets its joint's
    values, and a cross at the gap centre when ``camera_matrix`` is given."""
    if image.dtype == np.uint16:
        valid = image > 0
        lo, hi = np.percentile(image[valid], [1, 99]) if valid.any() else (0, 1)
        g = np.clip((image.astype(np.float32) - lo) / max(hi - lo, 1) * 255, 0, 255)
        out = np.asarray(cv2.cvtColor(g.astype(np.uint8), cv2.COLOR_GRAY2BGR), np.uint8)
    elif image.ndim == 2:
        out = np.asarray(cv2.cvtColor(image.astype(np.uint8), cv2.COLOR_GRAY2BGR), np.uint8)
    else:
        out = image.astype(np.uint8).copy()
    font = cv2.FONT_HERSHEY_SIMPLEX
    if isinstance(inspection, LaserProfile):
        _laser(out, inspection, limits, camera_matrix)
        return out
    if isinstance(inspection, PhotoInspection):
        for c in inspection.cracks:
            bad = c.gap_width_mm >= limits.horizontal_gap_mm
            _path(out, c.image_path_px, RED if bad else GREEN)
            if c.image_path_px:
                x, y = c.image_path_px[len(c.image_path_px) // 2]
                txt = (
                    f"gap {c.gap_width_mm:.1f}+-{c.gap_width_uncertainty_mm:.1f} mm {c.edge_type}"
                    if c.gap_resolved
                    else f"gap under {c.gap_width_mm:.1f} mm (finer than the photo shows)"
                )
                cv2.putText(out, txt, (int(x) + 8, int(y)), font, 0.6, RED if bad else GREEN, 2)
        return out
    for j in inspection.joints:
        bad = any(c.failed for c in classify_joint(j, limits))
        _path(out, j.image_path_px, RED if bad else GREEN)
        if j.image_path_px:
            x, y = j.image_path_px[0]
            txt = f"dV {j.vertical_differential_mm:+.1f} gap {j.gap_width_mm:.1f} mm {j.edge_type}"
            cv2.putText(out, txt, (int(x) + 8, int(y) + 20), font, 0.6, RED if bad else GREEN, 2)
    for b in inspection.blocks:
        bad = classify_block(b, limits).failed
        for sp in b.spalls:
            _path(
                out,
                sp.image_contour_px,
                RED if bad and sp.depth_mm >= limits.deterioration_depth_mm else GREEN,
                closed=True,
            )
            if sp.image_contour_px:
                x, y = sp.image_contour_px[0]
                cv2.putText(
                    out,
                    f"{sp.depth_mm:.1f} mm",
                    (int(x), int(y) - 6),
                    font,
                    0.5,
                    RED if bad else GREEN,
                    1,
                )
    return out


def _path(
    img: NDArray[np.uint8],
    pts: tuple[tuple[float, float], ...],
    colour: tuple[int, int, int],
    closed: bool = False,
) -> None:
    if len(pts) < 2:
        return
    arr = np.round(np.array(pts)).astype(np.int32).reshape(-1, 1, 2)
    cv2.polylines(img, [arr], closed, colour, 2, cv2.LINE_AA)


def _laser(
    out: NDArray[np.uint8],
    p: LaserProfile,
    limits: DefectLimits,
    matrix: NDArray[np.float64] | None,
) -> None:
    bad = any(c.failed for c in classify_laser(p, limits))
    colour = RED if bad else GREEN
    dv, dv_u = p.vertical_differential_mm, p.vertical_differential_uncertainty_mm
    lines = (
        f"dV {dv:+.1f}+-{dv_u:.1f} mm",
        f"gap {p.gap_width_mm:.1f}+-{p.gap_width_uncertainty_mm:.1f} mm {p.edge_type}",
    )
    for i, txt in enumerate(lines):
        cv2.putText(out, txt, (20, 40 + 32 * i), cv2.FONT_HERSHEY_SIMPLEX, 0.9, colour, 2)
    if matrix is not None and p.gap_center_mm[2] > 0:
        x, y, z = p.gap_center_mm
        u = matrix[0, 0] * x / z + matrix[0, 2]
        v = matrix[1, 1] * y / z + matrix[1, 2]
        cv2.drawMarker(out, (round(u), round(v)), colour, cv2.MARKER_CROSS, 40, 2)
