"""Snow segmentation and snow-cover fraction: numpy arrays in, masks and numbers out.

Snow reflects all visible light and, in shade, the blue sky: it is bright in
its darkest channel and not yellower than neutral. Dry grass, soil and wet
pavement are darker in blue than in red. The per-pixel score is therefore the
darkest channel plus a weight times (blue - red). A scene that holds both snow
and ground splits into two clear classes of that score, so Otsu's threshold
separates them whatever the light; a scene that is all one class (all snow or
none) is decided by a fixed threshold.

Fitted on the NEON field-camera masks (15 images; see docs/edge-devices.md for
the figures and their leave-one-out check).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

BoolMask = npt.NDArray[np.bool_]
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class SnowParams:
    """Segmentation constants; scores are on the 0-255 scale of the image."""

    blueness_weight: float = 1.5
    fixed_threshold: float = 130.0
    # Otsu is trusted only when its bright class looks like snow and both classes are real.
    snow_class_min_score: float = 110.0
    min_class_share: float = 0.05
    min_class_separation: float = 50.0


DEFAULT_PARAMS = SnowParams()


def snow_score(bgr: Image, params: SnowParams = DEFAULT_PARAMS) -> Image:
    """Per-pixel snow score: min(B, G, R) + weight x (B - R), clipped to 0..255."""
    smooth = cv2.GaussianBlur(bgr, (5, 5), 0).astype(np.float32)
    darkest = smooth.min(axis=2)
    blueness = smooth[..., 0] - smooth[..., 2]
    score: Image = np.clip(darkest + params.blueness_weight * blueness, 0, 255).astype(np.uint8)
    return score


def snow_threshold(values: Image, params: SnowParams = DEFAULT_PARAMS) -> float:
    """Threshold for a 1-D array of scores: Otsu if it splits snow from ground, else fixed."""
    if values.size == 0:
        return params.fixed_threshold
    otsu, _ = cv2.threshold(values.reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    upper = values > otsu
    share = float(upper.mean())
    if not params.min_class_share <= share <= 1.0 - params.min_class_share:
        return params.fixed_threshold
    bright_mean = float(values[upper].mean())
    dark_mean = float(values[~upper].mean())
    if (
        bright_mean >= params.snow_class_min_score
        and bright_mean - dark_mean >= params.min_class_separation
    ):
        return float(otsu)
    return params.fixed_threshold


def snow_mask(
    bgr: Image, roi: BoolMask | None = None, params: SnowParams = DEFAULT_PARAMS
) -> BoolMask:
    """Boolean snow mask of ``bgr``; the threshold is chosen from the pixels in ``roi`` only."""
    score = snow_score(bgr, params)
    inside = score[roi] if roi is not None else score.ravel()
    mask: BoolMask = score > snow_threshold(inside, params)
    if roi is not None:
        mask &= roi
    return mask


def snow_cover_fraction(
    bgr: Image, roi: BoolMask | None = None, params: SnowParams = DEFAULT_PARAMS
) -> float:
    """Share of the ``roi`` pixels (all pixels if None) that are snow, 0..1."""
    mask = snow_mask(bgr, roi, params)
    total = int(roi.sum()) if roi is not None else mask.size
    return float(mask.sum()) / total if total else 0.0
