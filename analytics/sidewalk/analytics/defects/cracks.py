"""Crack segmentation in a photo, and its scoring against human masks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

U8 = NDArray[np.uint8]
F32 = NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class CrackParams:
    """Crack detector tuning, in pixels of the image it runs on."""

    scales_px: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0)
    background_px: int = 31  # illumination is flattened over this window
    high_sigmas: float = 4.5  # seed threshold, in robust std of the response
    low_sigmas: float = 1.25  # growing threshold
    # Oriented line filter: the response averaged along straight segments of
    # this length in this many directions (best direction kept). A crack is
    # continuous along its course, concrete texture is not, so the low
    # threshold can go lower where the oriented response agrees.
    line_length_px: int = 11  # 0 turns the oriented gate off
    line_directions: int = 12
    line_low_sigmas: float = 2.5  # a grown pixel needs this oriented response
    line_high_sigmas: float = 4.0  # and a seed this much
    min_component_px: int = 100
    min_elongation: float = 10.0  # bounding-box diagonal squared over area


@dataclass(frozen=True, slots=True)
class SegmentationScore:
    """Precision, recall and F1 with a pixel tolerance, as the crack literature scores."""

    precision: float
    recall: float
    f1: float
    true_positive_pred: int
    predicted: int
    true_positive_truth: int
    truth: int

    @staticmethod
    def pooled(scores: list[SegmentationScore]) -> SegmentationScore:
        """Dataset score: counts summed over images, then the ratios."""
        tpp = sum(s.true_positive_pred for s in scores)
        pr = sum(s.predicted for s in scores)
        tpt = sum(s.true_positive_truth for s in scores)
        tr = sum(s.truth for s in scores)
        return _score(tpp, pr, tpt, tr)


def _score(tpp: int, pr: int, tpt: int, tr: int) -> SegmentationScore:
    p = tpp / pr if pr else 1.0
    r = tpt / tr if tr else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return SegmentationScore(p, r, f, tpp, pr, tpt, tr)


def crack_response(gray: U8, params: CrackParams) -> F32:
    """Dark-line strength: largest Hessian eigenvalue over scales, on an
    illumination-flattened image, in units of its robust noise."""
    g = gray.astype(np.float32)
    # A median of a quarter-size image is the illumination at a sixteenth of
    # the cost of a full-size median of the same reach.
    small = cv2.resize(gray, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    bg_small = cv2.medianBlur(small, max(3, (params.background_px // 4) | 1))
    bg = cv2.resize(bg_small, (gray.shape[1], gray.shape[0]), interpolation=cv2.INTER_LINEAR)
    bg = bg.astype(np.float32) + 1.0
    flat = g / bg
    best = np.zeros(g.shape, np.float32)
    for s in params.scales_px:
        sm = cv2.GaussianBlur(flat, (0, 0), s)
        dxx = cv2.Sobel(sm, cv2.CV_32F, 2, 0, ksize=3)
        dyy = cv2.Sobel(sm, cv2.CV_32F, 0, 2, ksize=3)
        dxy = cv2.Sobel(sm, cv2.CV_32F, 1, 1, ksize=3)
        tr = dxx + dyy
        disc = np.sqrt((dxx - dyy) ** 2 + 4 * dxy * dxy)
        lam = 0.5 * (tr + disc)  # positive across a dark valley
        np.maximum(best, lam * (s * s), out=best)
    med = float(np.median(best))
    mad = float(np.median(np.abs(best - med))) * 1.4826 + 1e-9
    out: F32 = ((best - med) / mad).astype(np.float32)
    return out


@lru_cache(maxsize=8)
def _line_kernels(length: int, directions: int) -> tuple[F32, ...]:
    """Normalised anti-aliased straight segments through the kernel centre."""
    c = length // 2
    out = []
    for a in range(directions):
        th = math.pi * a / directions
        k = np.zeros((length, length), np.float32)
        dx, dy = c * math.cos(th), c * math.sin(th)
        p0 = (round(c - dx), round(c - dy))
        p1 = (round(c + dx), round(c + dy))
        cv2.line(k, p0, p1, 1.0, 1, cv2.LINE_AA)
        out.append((k / k.sum()).astype(np.float32))
    return tuple(out)


def oriented_response(resp: F32, params: CrackParams) -> F32:
    """Line response averaged along the best of several directions, in units
    of its own robust noise."""
    best = np.full(resp.shape, -np.inf, np.float32)
    for k in _line_kernels(params.line_length_px, params.line_directions):
        np.maximum(best, cv2.filter2D(resp, -1, k, borderType=cv2.BORDER_REFLECT), out=best)
    med = float(np.median(best))
    mad = float(np.median(np.abs(best - med))) * 1.4826 + 1e-9
    out: F32 = ((best - med) / mad).astype(np.float32)
    return out


def segment_cracks(gray: U8, params: CrackParams | None = None) -> U8:
    """Binary crack mask (0/1) of a grey image: hysteresis on the line
    response gated by the oriented line response, then only long thin
    components are kept."""
    p = params or CrackParams()
    resp = crack_response(gray, p)
    grow = resp > p.low_sigmas
    seed = resp > p.high_sigmas
    if p.line_length_px > 0:
        orient = oriented_response(resp, p)
        grow &= orient > p.line_low_sigmas
        seed &= orient > p.line_high_sigmas
    low = grow.astype(np.uint8)
    n, lab, stats, _ = cv2.connectedComponentsWithStats(low, connectivity=8)
    seeded = np.zeros(n, bool)
    seeded[np.unique(lab[seed])] = True
    seeded[0] = False
    keep = np.zeros(n, bool)
    for i in np.nonzero(seeded)[0]:
        area = stats[i, cv2.CC_STAT_AREA]
        if area < p.min_component_px:
            continue
        w, h = stats[i, cv2.CC_STAT_WIDTH], stats[i, cv2.CC_STAT_HEIGHT]
        length = float(np.hypot(w, h))
        if length * length / area >= p.min_elongation:
            keep[i] = True
    out: U8 = keep[lab].astype(np.uint8)
    return out


def score_segmentation(predicted: U8, truth: U8, tolerance_px: int = 2) -> SegmentationScore:
    """A predicted pixel is right if a truth pixel lies within ``tolerance_px``
    (and the other way round for recall)."""
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * tolerance_px + 1, 2 * tolerance_px + 1))
    p = predicted > 0
    t = truth > 0
    t_d = cv2.dilate(t.astype(np.uint8), k) > 0
    p_d = cv2.dilate(p.astype(np.uint8), k) > 0
    return _score(int((p & t_d).sum()), int(p.sum()), int((t & p_d).sum()), int(t.sum()))
