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
from typing import NamedTuple

import cv2
import numpy as np
import numpy.typing as npt

BoolMask = npt.NDArray[np.bool_]
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class SnowParams:
    """Segmentation constants; scores are on the 0-255 scale of the image."""

    blueness_weight: float = 1.5
    fixed_threshold: float = 115.0
    # Otsu is trusted only when its bright class looks like snow and both classes are real.
    snow_class_min_score: float = 85.0
    min_class_share: float = 0.05
    min_class_separation: float = 50.0


DEFAULT_PARAMS = SnowParams()


def snow_score(bgr: Image, params: SnowParams = DEFAULT_PARAMS) -> Image:
    """Per-pixel snow score: min(B, G, R) + weight x (B - R), clipped to 0..255."""
    # OpenCV's saturating uint8/float kernels keep this a few passes over the frame.
    blue, green, red = cv2.split(cv2.GaussianBlur(bgr, (5, 5), 0))
    darkest = cv2.min(cv2.min(blue, green), red)
    blueness = cv2.subtract(blue, red, dtype=cv2.CV_16S)
    score = cv2.addWeighted(darkest, 1.0, blueness, params.blueness_weight, 0.0, dtype=cv2.CV_32F)
    return np.asarray(cv2.convertScaleAbs(np.maximum(score, 0.0)), dtype=np.uint8)


class Threshold(NamedTuple):
    """The score threshold and whether the scene showed two classes to split.

    A one-class scene (all snow or none) is decided by the fixed threshold alone,
    which a very dim snowfield or very bright bare concrete can fool: such a
    measurement is reported as such and should not be the only evidence.
    """

    value: float
    two_class: bool


def snow_threshold(values: Image, params: SnowParams = DEFAULT_PARAMS) -> Threshold:
    """Threshold for an array of scores: Otsu if it splits snow from ground, else fixed."""
    fixed = Threshold(params.fixed_threshold, two_class=False)
    if values.size == 0:
        return fixed
    hist = np.bincount(values.ravel(), minlength=256).astype(np.float64)
    levels = np.arange(256, dtype=np.float64)
    # Otsu from the histogram: the split maximising the between-class variance.
    weight_low = np.cumsum(hist)
    sum_low = np.cumsum(hist * levels)
    total, total_sum = weight_low[-1], sum_low[-1]
    weight_high = total - weight_low
    valid = (weight_low > 0) & (weight_high > 0)
    if not valid.any():
        return fixed
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_low = sum_low / weight_low
        mean_high = (total_sum - sum_low) / weight_high
        between = np.where(valid, weight_low * weight_high * (mean_low - mean_high) ** 2, -1.0)
    split = int(np.argmax(between))
    share = float(weight_high[split] / total)
    if not params.min_class_share <= share <= 1.0 - params.min_class_share:
        return fixed
    if (
        mean_high[split] >= params.snow_class_min_score
        and mean_high[split] - mean_low[split] >= params.min_class_separation
    ):
        return Threshold(float(split), two_class=True)
    return fixed


def snow_mask(
    bgr: Image, roi: BoolMask | None = None, params: SnowParams = DEFAULT_PARAMS
) -> BoolMask:
    """Boolean snow mask of ``bgr``; the threshold is chosen from the pixels in ``roi`` only."""
    score = snow_score(bgr, params)
    inside = score[roi] if roi is not None else score.ravel()
    mask: BoolMask = score > snow_threshold(inside, params).value
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
