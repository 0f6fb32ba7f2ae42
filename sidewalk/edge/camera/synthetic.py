"""Synthetic camera views of a snowy sidewalk with an exactly known cleared path.

A top-down texture of the walk (with lawn and terrace beside it) is painted at
``texture_mm_per_px``: snow everywhere except a shovelled path whose two edges
wander and pinch; then it is viewed through a pinhole camera on a pole, with
uneven light, a cast shadow, lens blur, sensor noise and JPEG compression. The
true minimum width is taken from the painted edges, so it is exact to the
texture's resolution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from sidewalk.edge.camera.geometry import FrontageGeometry, project

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class PoleCamera:
    """A pinhole camera on a pole across the street, aimed at the frontage's middle."""

    height_mm: float = 6000.0
    setback_mm: float = 12000.0  # horizontal distance from the walk's street edge
    hfov_deg: float = 60.0
    width_px: int = 1920
    height_px: int = 1080

    def ground_to_image(self, length_mm: float, walk_width_mm: float) -> FloatArray:
        """Homography from the frontage frame (mm, z = 0) to image pixels."""
        eye = np.array([length_mm / 2.0, -self.setback_mm, self.height_mm])
        target = np.array([length_mm / 2.0, walk_width_mm / 2.0, 0.0])
        forward = (target - eye) / np.linalg.norm(target - eye)
        right = np.cross(forward, np.array([0.0, 0.0, 1.0]))
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        rot = np.vstack([right, down, forward])  # world -> camera
        t = -rot @ eye
        f = (self.width_px / 2.0) / math.tan(math.radians(self.hfov_deg) / 2.0)
        k = np.array([[f, 0, self.width_px / 2.0], [0, f, self.height_px / 2.0], [0, 0, 1]])
        h = k @ np.column_stack([rot[:, 0], rot[:, 1], t])
        return np.asarray(h / h[2, 2], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class SyntheticScene:
    """A rendered frame with the geometry and truths it was made from."""

    frame: Image
    geometry: FrontageGeometry  # exact image-to-ground homography
    walk_corners_px: FloatArray  # the walk's four corners in the image (for click calibration)
    true_cleared_width_mm: float
    true_snow_cover_fraction: float


def _smooth_noise(rng: np.random.Generator, n: int, scale_px: int) -> FloatArray:
    """1-D noise in [-1, 1] that varies over ``scale_px`` samples."""
    coarse = rng.uniform(-1.0, 1.0, size=n // max(scale_px, 1) + 3)
    xs = np.linspace(0, len(coarse) - 1, n)
    return np.asarray(np.interp(xs, np.arange(len(coarse)), coarse), dtype=np.float64)


def make_scene(
    seed: int,
    path_width_mm: float,
    length_mm: float = 15240.0,
    walk_width_mm: float = 1524.0,
    camera: PoleCamera | None = None,
    texture_mm_per_px: float = 5.0,
    margin_mm: float = 1500.0,
) -> SyntheticScene:
    """Render one scene whose cleared path is at its narrowest exactly ``path_width_mm``.

    ``path_width_mm`` may exceed the walk width (then the whole walk is clear)
    or be 0 (no path at all).
    """
    rng = np.random.default_rng(seed)
    cam = camera or PoleCamera()
    res = texture_mm_per_px
    cols = math.ceil(length_mm / res)
    rows = math.ceil((walk_width_mm + 2 * margin_mm) / res)
    walk0 = round(margin_mm / res)
    walk_rows = round(walk_width_mm / res)

    # The path: a centre line that drifts, a width that swells and pinches once to the minimum.
    x = np.arange(cols)
    extra = np.abs(_smooth_noise(rng, cols, round(1500 / res))) * rng.uniform(50, 300)
    pinch_at = rng.integers(cols // 10, cols - cols // 10)
    pinch = np.exp(-(((x - pinch_at) * res / 600.0) ** 2))
    width_px = (path_width_mm + extra * (1 - pinch)) / res
    wiggle = _smooth_noise(rng, cols, round(400 / res)) * (30.0 / res)
    slack = np.maximum(walk_rows - width_px, 0)
    centre = walk0 + walk_rows / 2 + _smooth_noise(rng, cols, round(3000 / res)) * slack / 2
    top_edge = np.clip(np.round(centre - width_px / 2 + wiggle), walk0, walk0 + walk_rows)
    bottom_edge = np.clip(np.round(top_edge + width_px), walk0, walk0 + walk_rows)
    true_width = float((bottom_edge - top_edge).min() * res)

    r = np.arange(rows)[:, None]
    clear = (r >= top_edge[None, :]) & (r < bottom_edge[None, :])
    walk_band = (r >= walk0) & (r < walk0 + walk_rows)
    true_fraction = float(1.0 - clear[walk0 : walk0 + walk_rows].mean())

    # Paint: snow is bright and faintly blue; concrete grey with joints every 5 ft.
    snow_level = rng.uniform(205, 240)
    snow = np.empty((rows, cols, 3), np.float32)
    snow[...] = (snow_level + 8, snow_level + 3, snow_level - 4)
    snow += rng.normal(0, 6, (rows, cols, 1))
    concrete_level = rng.uniform(95, 150)
    tex = np.empty_like(snow)
    tex[...] = (concrete_level, concrete_level + 2, concrete_level + 4)
    tex += rng.normal(0, 10, (rows, cols, 1))
    joints = (np.arange(cols) * res) % 1524.0 < 12.0
    tex[:, joints] *= 0.7
    # Wet patches darken the pavement.
    wet = np.ones((rows, cols), np.float32)
    for _ in range(6):
        cy, cx = rng.integers(walk0, walk0 + walk_rows), rng.integers(0, cols)
        cv2.circle(wet, (int(cx), int(cy)), int(rng.integers(20, 60)), 0.75, -1)
    tex *= wet[..., None]
    lawn_or_path = np.where(clear[..., None] & walk_band[..., None], tex, snow)
    top = np.clip(lawn_or_path, 0, 255).astype(np.uint8)

    g2i = cam.ground_to_image(length_mm, walk_width_mm)
    tex_to_ground = np.array([[res, 0, 0], [0, res, -margin_mm], [0, 0, 1.0]])
    frame = cv2.warpPerspective(
        top, g2i @ tex_to_ground, (cam.width_px, cam.height_px), flags=cv2.INTER_AREA,
        borderValue=(snow_level, snow_level, snow_level),
    )  # fmt: skip
    img = frame.astype(np.float32)

    # Light: a gradient across the frame and a soft shadow band (a tree or the pole).
    gain = np.linspace(rng.uniform(0.75, 1.0), rng.uniform(0.75, 1.0), cam.width_px)[None, :, None]
    img *= gain
    band_x = rng.uniform(0.2, 0.8) * cam.width_px
    xx = np.arange(cam.width_px)[None, :, None]
    shadow = 1.0 - 0.35 * np.exp(-(((xx - band_x) / 60.0) ** 2))
    img *= shadow
    img[..., 0] *= np.where(shadow[..., 0] < 0.95, 1.08, 1.0)  # shade is lit by blue sky
    img = cv2.GaussianBlur(img, (0, 0), 0.8)
    img += rng.normal(0, 3.0, img.shape)
    ok, jpeg = cv2.imencode(".jpg", np.clip(img, 0, 255).astype(np.uint8),
                            [cv2.IMWRITE_JPEG_QUALITY, 85])  # fmt: skip
    assert ok
    decoded = np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR), dtype=np.uint8)

    i2g = np.linalg.inv(g2i)
    corners = np.array(
        [[0, 0], [length_mm, 0], [length_mm, walk_width_mm], [0, walk_width_mm]], np.float64
    )
    return SyntheticScene(
        frame=decoded,
        geometry=FrontageGeometry(i2g / i2g[2, 2], length_mm, walk_width_mm),
        walk_corners_px=project(g2i, corners),
        true_cleared_width_mm=true_width,
        true_snow_cover_fraction=true_fraction,
    )
