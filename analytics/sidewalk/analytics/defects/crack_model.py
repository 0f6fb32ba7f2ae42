"""A small learned crack detector: two pixel classifiers, the second reading
the first's answer around each pixel (auto-context), then hysteresis and
long-thin component filtering as in :func:`segment_cracks`.

Each classifier is a one-hidden-layer perceptron (32 units) on per-pixel
filter responses: Hessian eigenvalues and smoothed level at five scales, the
oriented line response at three segment lengths, black-hat at three sizes.
The weights (about 2,000 numbers) ship in ``crack_model.npz``; they are
trained by :func:`train_crack_model` (``bench/train_crack_model.py``), with
fixed seeds, on the images and masks given to it and nothing else.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from .cracks import SegmentationScore, _line_kernels, score_segmentation

U8 = NDArray[np.uint8]
F32 = NDArray[np.float32]

MODEL_PATH = Path(__file__).with_name("crack_model.npz")

_SCALES = (1.0, 1.5, 2.0, 3.0, 4.0)
_LINE_LENGTHS = (7, 11, 17)
_BLACKHAT = (5, 9, 15)
_CLIP = 8.0


def _robust(x: NDArray[Any]) -> F32:
    med = float(np.median(x))
    mad = float(np.median(np.abs(x - med))) * 1.4826 + 1e-9
    out: F32 = ((x - med) / mad).astype(np.float32)
    return out


def _directional(r: F32, length: int) -> tuple[F32, F32]:
    hi = np.full(r.shape, -np.inf, np.float32)
    lo = np.full(r.shape, np.inf, np.float32)
    for k in _line_kernels(length, 12):
        f = cv2.filter2D(r, -1, k, borderType=cv2.BORDER_REFLECT)
        np.maximum(hi, f, out=hi)
        np.minimum(lo, f, out=lo)
    return hi, lo


def pixel_features(gray: U8) -> F32:
    """Per-pixel filter responses (H x W x 27), each in robust units of its
    own image so exposure and contrast do not matter."""
    g = gray.astype(np.float32)
    small = cv2.resize(gray, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    bg_small = cv2.medianBlur(small, 7)
    bg = cv2.resize(bg_small, (gray.shape[1], gray.shape[0]), interpolation=cv2.INTER_LINEAR)
    flat = g / (bg.astype(np.float32) + 1.0)
    feats: list[NDArray[Any]] = []
    best = np.zeros(g.shape, np.float32)
    for s in _SCALES:
        sm = cv2.GaussianBlur(flat, (0, 0), s)
        dxx = cv2.Sobel(sm, cv2.CV_32F, 2, 0, ksize=3)
        dyy = cv2.Sobel(sm, cv2.CV_32F, 0, 2, ksize=3)
        dxy = cv2.Sobel(sm, cv2.CV_32F, 1, 1, ksize=3)
        tr = dxx + dyy
        disc = np.sqrt((dxx - dyy) ** 2 + 4 * dxy * dxy)
        l1 = (0.5 * (tr + disc) * s * s).astype(np.float32)
        l2 = (0.5 * (tr - disc) * s * s).astype(np.float32)
        feats += [_robust(l1), _robust(l2), _robust(sm)]
        np.maximum(best, l1, out=best)
    r = _robust(best)
    feats.append(r)
    for length in _LINE_LENGTHS:
        hi, lo = _directional(r, length)
        hi_r = _robust(hi)
        feats += [hi_r, hi_r - _robust(lo)]
    for k in _BLACKHAT:
        se = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        feats.append(_robust(cv2.morphologyEx(flat, cv2.MORPH_BLACKHAT, se)))
    feats.append(_robust(flat))
    feats.append(_robust(flat - cv2.GaussianBlur(flat, (0, 0), 8)))
    out: F32 = np.stack(feats, -1).astype(np.float32)
    return out


def context_features(prob: F32) -> F32:
    """The first classifier's answer around each pixel (H x W x 8): blurred,
    along the best direction, and the nearby maximum."""
    feats: list[NDArray[Any]] = [prob]
    for s in (2, 4, 8):
        feats.append(cv2.GaussianBlur(prob, (0, 0), s))
    for length in (11, 21):
        feats.append(_directional(prob, length)[0])
    for k in (7, 15):
        feats.append(cv2.dilate(prob, np.ones((k, k), np.uint8)))
    out: F32 = np.stack(feats, -1).astype(np.float32)
    return out


@dataclass(frozen=True)
class PixelClassifier:
    """Standardisation and a one-hidden-layer perceptron."""

    mean: F32
    std: F32
    w1: F32
    b1: F32
    w2: F32
    b2: F32

    def predict(self, feats: F32) -> F32:
        """Crack probability per pixel of an H x W x D feature stack."""
        x = feats.reshape(-1, feats.shape[-1])
        x = np.clip((x - self.mean) / self.std, -_CLIP, _CLIP)
        h = np.maximum(x @ self.w1 + self.b1, 0.0)
        z = (h @ self.w2 + self.b2)[:, 0]
        p: F32 = (1.0 / (1.0 + np.exp(-z))).astype(np.float32).reshape(feats.shape[:2])
        return p


@dataclass(frozen=True)
class CrackModel:
    """Two classifiers and the post-processing chosen with them."""

    first: PixelClassifier
    second: PixelClassifier
    low: float  # growing threshold on the second classifier's probability
    high: float  # seed threshold
    min_component_px: int
    min_elongation: float  # bounding-box diagonal squared over area

    def probability(self, gray: U8) -> F32:
        f = pixel_features(gray)
        p1 = self.first.predict(f)
        return self.second.predict(np.concatenate([f, context_features(p1)], -1))

    def save(self, path: str | Path) -> None:
        arrays: dict[str, NDArray[Any]] = {}
        for name, c in (("first", self.first), ("second", self.second)):
            for k in ("mean", "std", "w1", "b1", "w2", "b2"):
                arrays[f"{name}_{k}"] = getattr(c, k)
        post = [self.low, self.high, self.min_component_px, self.min_elongation]
        arrays["post"] = np.array(post, np.float64)
        np.savez(path, **arrays)  # type: ignore[arg-type]

    @staticmethod
    def load(path: str | Path = MODEL_PATH) -> CrackModel:
        with np.load(path) as z:

            def clf(name: str) -> PixelClassifier:
                a = {
                    k: np.asarray(z[f"{name}_{k}"], np.float32)
                    for k in ("mean", "std", "w1", "b1", "w2", "b2")
                }
                return PixelClassifier(**a)

            post = [float(v) for v in z["post"]]
            return CrackModel(clf("first"), clf("second"), post[0], post[1], int(post[2]), post[3])


def _components(prob: F32, low: float, high: float, min_px: int, min_elong: float) -> U8:
    grow = (prob > low).astype(np.uint8)
    n, lab, stats, _ = cv2.connectedComponentsWithStats(grow, connectivity=8)
    keep = np.zeros(n, bool)
    keep[np.unique(lab[prob > high])] = True
    keep[0] = False
    area = stats[:, cv2.CC_STAT_AREA].astype(np.float64)
    diag2 = (
        stats[:, cv2.CC_STAT_WIDTH].astype(np.float64) ** 2
        + stats[:, cv2.CC_STAT_HEIGHT].astype(np.float64) ** 2
    )
    keep &= (area >= min_px) & (diag2 / np.maximum(area, 1.0) >= min_elong)
    out: U8 = keep[lab].astype(np.uint8)
    return out


def segment_cracks_learned(gray: U8, model: CrackModel | None = None) -> U8:
    """Binary crack mask (0/1) of a grey image by the learned detector."""
    m = model or _default_model()
    return _components(m.probability(gray), m.low, m.high, m.min_component_px, m.min_elongation)


_DEFAULT: list[CrackModel] = []


def _default_model() -> CrackModel:
    if not _DEFAULT:
        _DEFAULT.append(CrackModel.load(MODEL_PATH))
    return _DEFAULT[0]


# --- training -----------------------------------------------------------------


def _sample(
    feats: Sequence[F32], masks: Sequence[U8], rng: np.random.Generator, neg_ratio: int = 3
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Every crack pixel, and three times as many background pixels drawn from
    farther than 2 px from any crack (the band within the scoring tolerance
    is left out: the human masks' edges are not that exact)."""
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    xs, ys = [], []
    for f, m in zip(feats, masks, strict=True):
        t = m > 0
        near = cv2.dilate(t.astype(np.uint8), k) > 0
        pos = np.argwhere(t)
        neg = np.argwhere(~near)
        n = min(len(neg), neg_ratio * len(pos) + 500)
        neg = neg[rng.choice(len(neg), n, replace=False)]
        for arr, y in ((pos, 1.0), (neg, 0.0)):
            xs.append(f[arr[:, 0], arr[:, 1]])
            ys.append(np.full(len(arr), y, np.float32))
    return np.concatenate(xs), np.concatenate(ys)


def train_classifier(
    x: NDArray[np.float32], y: NDArray[np.float32], seed: int, iters: int = 1500, hidden: int = 32
) -> PixelClassifier:
    """Class-balanced logistic loss, Adam, mini-batches of 8192; deterministic
    for a seed."""
    rng = np.random.default_rng(seed)
    d = x.shape[1]
    mean = x.mean(0).astype(np.float32)
    std = (x.std(0) + 1e-6).astype(np.float32)
    xs = np.clip((x - mean) / std, -_CLIP, _CLIP).astype(np.float32)
    params = [
        rng.normal(0, 1 / np.sqrt(d), (d, hidden)).astype(np.float32),
        np.zeros(hidden, np.float32),
        rng.normal(0, 1 / np.sqrt(hidden), (hidden, 1)).astype(np.float32),
        np.zeros(1, np.float32),
    ]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    w = np.where(y == 1, (y == 0).sum() / max(1, (y == 1).sum()), 1.0).astype(np.float32)
    w /= w.mean()
    n, bs, lr = len(xs), min(8192, len(xs)), 0.01
    for it in range(iters):
        b = rng.choice(n, bs, replace=False)
        xb, yb, wb = xs[b], y[b], w[b]
        w1, b1, w2, b2 = params
        h = np.maximum(xb @ w1 + b1, 0.0)
        p = 1.0 / (1.0 + np.exp(-(h @ w2 + b2)[:, 0]))
        g = ((p - yb) * wb / bs).astype(np.float32)
        gh = (g[:, None] @ w2.T) * (h > 0)
        grads = [xb.T @ gh, gh.sum(0), h.T @ g[:, None], g.sum(keepdims=True)]
        for j, gr in enumerate(grads):
            m1[j] = 0.9 * m1[j] + 0.1 * gr
            m2[j] = 0.999 * m2[j] + 0.001 * gr * gr
            step = (
                lr
                * (m1[j] / (1 - 0.9 ** (it + 1)))
                / (np.sqrt(m2[j] / (1 - 0.999 ** (it + 1))) + 1e-8)
            )
            params[j] = (params[j] - step).astype(np.float32)
    return PixelClassifier(mean, std, *params)


POST_GRID = {
    "low": (0.97, 0.98, 0.99),
    "high": (0.99, 0.995),
    "min_component_px": (20, 40, 80),
    "min_elongation": (0.0, 5.0, 10.0),
}


def train_crack_model(
    grays: Sequence[U8], masks: Sequence[U8], seed: int = 0, iters: int = 1500
) -> CrackModel:
    """Train on these images only. The second classifier learns from
    first-classifier answers on images the first did not see (two folds), as
    it will meet them; the post-processing is the grid point with the best
    pooled F1 (2-px tolerance) on these same images."""
    feats = [pixel_features(g) for g in grays]
    idx = list(range(len(grays)))
    folds = (idx[0::2], idx[1::2])
    p1: dict[int, F32] = {}
    for k, (train_i, test_i) in enumerate((folds, folds[::-1])):
        x, y = _sample(
            [feats[i] for i in train_i],
            [masks[i] for i in train_i],
            np.random.default_rng(seed + k),
        )
        c = train_classifier(x, y, seed + k, iters)
        for i in test_i:
            p1[i] = c.predict(feats[i])
    x, y = _sample(feats, masks, np.random.default_rng(seed + 2))
    first = train_classifier(x, y, seed + 2, iters)
    feats2 = [np.concatenate([feats[i], context_features(p1[i])], -1) for i in idx]
    x, y = _sample(feats2, masks, np.random.default_rng(seed + 3))
    second = train_classifier(x, y, seed + 3, iters)
    probs = [second.predict(f) for f in feats2]
    best: tuple[float, tuple[float, float, int, float]] | None = None
    for low, high, px, el in itertools.product(*POST_GRID.values()):
        if high < low:
            continue
        s = SegmentationScore.pooled(
            [
                score_segmentation(_components(p, low, high, int(px), el), m)
                for p, m in zip(probs, masks, strict=True)
            ]
        )
        if best is None or s.f1 > best[0]:
            best = (s.f1, (low, high, int(px), el))
    assert best is not None
    low, high, px, el = best[1]
    return CrackModel(first, second, low, high, px, el)
