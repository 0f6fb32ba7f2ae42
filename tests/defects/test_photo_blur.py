"""Gap width in a survey photo against the photo's blur and gamma.

Small images drawn directly (a dark band on grey, Gaussian blur on linear
light, then the 2.2 gamma a camera writes) with a one-millimetre-per-pixel
ground frame, so the truth is exact and each test takes milliseconds.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from sidewalk.analytics.defects.fiducial import CameraCalibration, GroundFrame, _refine_linear
from sidewalk.analytics.defects.photo import (
    _LINEAR,
    PhotoParams,
    _traces,
    _widths,
    edge_blur_sigma_px,
)

SIZE = 320
CALIB = CameraCalibration(
    np.array([[1000.0, 0, SIZE / 2], [0, 1000.0, SIZE / 2], [0, 0, 1]]), np.zeros(5)
)
# Ground millimetres = image pixels (1 mm per pixel, no lens distortion).
GROUND = GroundFrame(np.eye(3), 1.0, 0.0, 0.0, np.zeros((4, 2)))


def _encode(linear: np.ndarray, blur_px: float) -> np.ndarray:
    """Linear light (0-1) blurred, with a little noise, gamma-encoded to 8 bits."""
    img = cv2.GaussianBlur(linear.astype(np.float32), (0, 0), blur_px)
    img = np.asarray(img, np.float32) + np.random.default_rng(0).normal(0, 0.005, linear.shape)
    out: np.ndarray = (np.clip(img, 0, 1) ** (1 / 2.2) * 255).astype(np.uint8)
    return out


def _band(width_px: float, blur_px: float) -> np.ndarray:
    """A dark vertical band ``width_px`` wide centred at x = 160.3 on grey walk,
    area-sampled at 1/8 px."""
    x = (np.arange(SIZE * 8) + 0.5) / 8
    row = np.where(np.abs(x - 160.3) < width_px / 2, 0.10, 0.55).reshape(-1, 8).mean(1)
    return _encode(np.tile(row, (SIZE, 1)), blur_px)


def _profile_widths(gray: np.ndarray, linear: bool) -> np.ndarray:
    g = np.column_stack([np.full(12, 160.0), np.linspace(110, 210, 12)])
    t = np.tile([0.0, 1.0], (12, 1))
    img = _LINEAR[gray] if linear else gray.astype(np.float32)
    w, _ = _widths(img, g, t, CALIB, GROUND)
    return w


@pytest.mark.parametrize("blur", [1.0, 2.0])
def test_the_blur_is_measured_on_a_marker_edge(blur: float) -> None:
    lin = np.full((200, 200), 0.55)
    lin[40:160, 40:160] = 0.03  # a marker's black border
    gray = _encode(lin, blur)
    corners = np.array([[40.0, 40.0], [160.0, 40.0], [160.0, 160.0], [40.0, 160.0]]) - 0.5
    got = edge_blur_sigma_px(_LINEAR[gray], (corners,))
    assert got is not None
    assert abs(got - blur) < 0.2 * blur


def test_a_wide_gap_is_not_read_narrow_through_the_cameras_gamma() -> None:
    gray = _band(30.0, 1.2)
    on_linear = float(np.median(_profile_widths(gray, linear=True)))
    on_encoded = float(np.median(_profile_widths(gray, linear=False)))
    assert abs(on_linear - 30.0) < 0.15
    # The cause of the narrow reading: the encoded half-way level is darker.
    assert on_encoded < 30.0 - 0.3


def _trace(width_px: float, blur_px: float) -> tuple[float, float, bool]:
    gray = _band(width_px, blur_px)
    mask = np.zeros_like(gray)
    mask[20:300, 159:162] = 1
    (tr, _gsd), *_ = _traces(
        _LINEAR[gray], mask, 1.0, CALIB, ground=GROUND, p=PhotoParams(), blur_px=blur_px
    )
    return tr.gap_width_mm, tr.gap_width_uncertainty_mm, tr.gap_resolved


def test_a_hairline_under_the_blur_is_an_upper_bound_that_covers_the_truth() -> None:
    width, sigma, resolved = _trace(1.5, 0.9)
    assert not resolved
    assert width > 1.5  # the blurred dip reads wide...
    assert abs(width - 1.5) <= 2 * sigma  # ...and its stated sigma says so


def test_a_gap_wider_than_the_blur_keeps_its_small_sigma() -> None:
    width, sigma, resolved = _trace(6.0, 0.9)
    assert resolved
    assert abs(width - 6.0) < 0.3
    assert sigma < 0.5


def test_a_blurred_markers_corners_are_where_its_edges_meet() -> None:
    # A black square 80 px across (area-sampled at 1/8 px), blurred by 1.2 px.
    x = (np.arange(200 * 8) + 0.5) / 8
    inside = (x > 60.3) & (x < 140.3)
    lin = np.where(inside[None, :] & inside[:, None], 0.03, 0.55)
    lin = lin.reshape(200, 8, 200, 8).mean((1, 3))
    gray = _encode(lin, 1.2)
    truth = np.array([[60.3, 60.3], [140.3, 60.3], [140.3, 140.3], [60.3, 140.3]]) - 0.5
    start = truth + np.array([[0.4, -0.3], [-0.2, 0.4], [0.3, 0.3], [-0.4, -0.2]])
    got = _refine_linear(gray, start)
    assert np.abs(got - truth).max() < 0.15
    # The scale: gradient-based refinement alone put a blurred corner inside
    # the marker, every side short (and every distance on the ground long).
    sides = np.linalg.norm(got - np.roll(got, -1, 0), axis=1)
    assert np.abs(sides - 80.0).max() < 0.15  # 0.37-0.45 px short before
