"""Crack segmentation: the tolerance score itself, and real CrackForest masks."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from sidewalk.analytics.defects import SegmentationScore, score_segmentation, segment_cracks
from sidewalk.analytics.defects.io import read_crackforest_mask, read_image

from .conftest import DATA

CFD = DATA / "cracks" / "crackforest"


def _line(shift: int = 0) -> np.ndarray:
    m = np.zeros((100, 100), np.uint8)
    m[50 + shift, 10:90] = 1
    return m


def test_score_tolerance() -> None:
    assert score_segmentation(_line(), _line()).f1 == 1.0
    assert score_segmentation(_line(2), _line()).f1 == 1.0  # within 2 px
    assert score_segmentation(_line(3), _line()).f1 == 0.0
    half = _line()
    half[:, 50:] = 0
    s = score_segmentation(half, _line())
    assert s.precision == 1.0
    assert s.recall == pytest.approx(0.5, abs=0.05)


def test_synthetic_crack_is_found() -> None:
    rng = np.random.default_rng(0)
    img = rng.normal(140, 6, (240, 320)).astype(np.float32)
    truth = np.zeros((240, 320), np.uint8)
    pts = np.array([[20, 40], [120, 90], [200, 100], [300, 200]], np.int32)
    cv2.polylines(truth, [pts], False, 1, 2)
    img[truth > 0] -= 45
    gray = np.clip(cv2.GaussianBlur(img, (0, 0), 0.8), 0, 255).astype(np.uint8)
    s = score_segmentation(segment_cracks(gray), truth)
    assert s.f1 > 0.85


def _cfd_pairs() -> list[tuple[Path, Path]]:
    if not CFD.is_dir():
        pytest.skip(f"CrackForest data not present at {CFD}")
    out = []
    for mat in sorted((CFD / "groundTruth").glob("*.mat")):
        img = CFD / "image" / f"{mat.stem}.jpg"
        if img.exists():
            out.append((img, mat))
    return out


def test_crackforest_f1_with_two_pixel_tolerance() -> None:
    pairs = _cfd_pairs()
    assert len(pairs) == 80
    scores = []
    for img_path, mat in pairs:
        gray = np.asarray(cv2.cvtColor(read_image(img_path), cv2.COLOR_BGR2GRAY), np.uint8)
        scores.append(score_segmentation(segment_cracks(gray), read_crackforest_mask(mat)))
    pooled = SegmentationScore.pooled(scores)
    # Published: ~0.7 for classical filters, ~0.85 for structured forests.
    # Measured: all 0.815 (P 0.826, R 0.803); held-out half 0.813.
    assert pooled.f1 >= 0.80
    assert pooled.precision >= 0.78
    assert pooled.recall >= 0.77
    # Constants were chosen on list positions 0, 2, ...; the others are held out.
    held = SegmentationScore.pooled(scores[1::2])
    assert 0.80 <= held.f1 <= 0.83


def test_oriented_gate_rejects_speckle() -> None:
    # Dark specks as strong as a crack, but no line: nothing is kept.
    rng = np.random.default_rng(1)
    img = rng.normal(140, 6, (240, 320)).astype(np.float32)
    for y, x in rng.integers(10, 230, (60, 2)):
        cv2.circle(img, (int(x) + 40, int(y)), 2, 95.0, -1)
    gray = np.clip(cv2.GaussianBlur(img, (0, 0), 0.8), 0, 255).astype(np.uint8)
    assert int(segment_cracks(gray).sum()) < 50


def test_learned_detector_retrained_on_tuning_half_scores_held_out_half() -> None:
    # Retrained from scratch on list positions 0, 2, ... only; scored on the
    # other 40 images, which training never reads. Measured: 0.855 held out
    # (classical detector above: 0.813), and the retrained weights are the
    # shipped ones.
    from sidewalk.analytics.defects.crack_model import (
        CrackModel,
        segment_cracks_learned,
        train_crack_model,
    )

    pairs = _cfd_pairs()
    grays = [
        np.asarray(cv2.cvtColor(read_image(i), cv2.COLOR_BGR2GRAY), np.uint8) for i, _ in pairs
    ]
    masks = [read_crackforest_mask(m) for _, m in pairs]
    model = train_crack_model(grays[0::2], masks[0::2], seed=0)
    held_out = zip(grays[1::2], masks[1::2], strict=True)
    held = SegmentationScore.pooled(
        [score_segmentation(segment_cracks_learned(g, model), m) for g, m in held_out]
    )
    assert held.f1 >= 0.84
    assert held.precision >= 0.82
    assert held.recall >= 0.82
    shipped = CrackModel.load()
    for a, b in ((model.first, shipped.first), (model.second, shipped.second)):
        assert np.array_equal(a.w1, b.w1)
        assert np.array_equal(a.w2, b.w2)
    assert model.low == shipped.low
    assert model.high == shipped.high
    assert model.min_component_px == shipped.min_component_px
