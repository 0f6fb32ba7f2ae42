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

TEXTURE_MM_PER_PX = 5.0


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


@dataclass(frozen=True, slots=True)
class _Path:
    top_edge: FloatArray  # first clear texture row per column
    bottom_edge: FloatArray  # one past the last clear row per column


def _path_edges(
    rng: np.random.Generator, cols: int, walk: slice, width_mm: float, res: float
) -> _Path:
    """A centre line that drifts and a width that swells and pinches once to ``width_mm``."""
    walk0, walk_rows = walk.start, walk.stop - walk.start
    x = np.arange(cols)
    extra = np.abs(_smooth_noise(rng, cols, round(1500 / res))) * rng.uniform(50, 300)
    pinch_at = rng.integers(cols // 10, cols - cols // 10)
    pinch = np.exp(-(((x - pinch_at) * res / 600.0) ** 2))
    width_px = (width_mm + extra * (1 - pinch)) / res
    wiggle = _smooth_noise(rng, cols, round(400 / res)) * (30.0 / res)
    slack = np.maximum(walk_rows - width_px, 0)
    centre = walk0 + walk_rows / 2 + _smooth_noise(rng, cols, round(3000 / res)) * slack / 2
    top = np.clip(np.round(centre - width_px / 2 + wiggle), walk0, walk0 + walk_rows)
    bottom = np.clip(np.round(top + width_px), walk0, walk0 + walk_rows)
    return _Path(top, bottom)


def _paint_snow(
    rng: np.random.Generator, shape: tuple[int, int], path: _Path, res: float, level: float
) -> npt.NDArray[np.float32]:
    """Snow: bright, faintly blue, uneven, greyer on the shovelled banks, trodden."""
    rows, cols = shape
    field = cv2.resize(
        rng.uniform(-18, 18, (rows // 40 + 2, cols // 40 + 2)).astype(np.float32),
        (cols, rows),
        interpolation=cv2.INTER_CUBIC,
    )
    snow = np.empty((rows, cols, 3), np.float32)
    snow[...] = (level + 8, level + 3, level - 4)
    snow += (field + rng.normal(0, 6, (rows, cols)).astype(np.float32))[..., None]
    r = np.arange(rows)[:, None]
    bank = np.minimum(np.abs(r - path.top_edge[None, :]), np.abs(r - path.bottom_edge[None, :]))
    snow *= np.where(bank * res < 150, rng.uniform(0.82, 0.95), 1.0)[..., None]
    trodden = np.ones((rows, cols), np.float32)
    for _ in range(40):
        centre = (int(rng.integers(0, cols)), int(rng.integers(0, rows)))
        axes = (int(120 / res), int(50 / res))
        shade = float(rng.uniform(0.75, 0.9))
        cv2.ellipse(trodden, centre, axes, float(rng.uniform(0, 180)), 0, 360, shade, -1)
    snow *= trodden[..., None]
    return snow


def _paint_concrete(
    rng: np.random.Generator, shape: tuple[int, int], walk: slice, res: float, snow_level: float
) -> npt.NDArray[np.float32]:
    """Concrete: grey, joints every 5 ft, wet patches, crumbs of snow smaller than a scrape."""
    rows, cols = shape
    level = rng.uniform(95, 150)
    tex = np.empty((rows, cols, 3), np.float32)
    tex[...] = (level, level + 2, level + 4)
    tex += rng.normal(0, 10, (rows, cols, 1)).astype(np.float32)
    joints = (np.arange(cols) * res) % 1524.0 < 12.0
    tex[:, joints] *= 0.7
    wet = np.ones((rows, cols), np.float32)
    for _ in range(6):
        centre = (int(rng.integers(0, cols)), int(rng.integers(walk.start, walk.stop)))
        cv2.circle(wet, centre, int(rng.integers(20, 60)), 0.75, -1)
    tex *= wet[..., None]
    for _ in range(25):
        centre = (int(rng.integers(0, cols)), int(rng.integers(walk.start, walk.stop)))
        cv2.circle(tex, centre, int(rng.integers(2, 5)), (snow_level,) * 3, -1)
    return tex


def _photograph(
    rng: np.random.Generator, top: Image, top_to_image: FloatArray, cam: PoleCamera, fill: float
) -> Image:
    """View ``top`` through the camera: uneven light, a shadow, blur, noise, JPEG."""
    frame = cv2.warpPerspective(
        top,
        top_to_image,
        (cam.width_px, cam.height_px),
        flags=cv2.INTER_AREA,
        borderValue=(fill, fill, fill),
    )
    img = frame.astype(np.float32)
    gain = np.linspace(rng.uniform(0.75, 1.0), rng.uniform(0.75, 1.0), cam.width_px)
    img *= gain[None, :, None] * rng.uniform(0.7, 1.05)  # bright noon to dim dusk
    xx = np.arange(cam.width_px)[None, :]
    shadow = 1.0 - 0.35 * np.exp(-(((xx - rng.uniform(0.2, 0.8) * cam.width_px) / 60.0) ** 2))
    img *= shadow[..., None]
    img[..., 0] *= np.where(shadow < 0.95, 1.08, 1.0)  # shade is lit by the blue sky
    img = np.asarray(cv2.GaussianBlur(img, (0, 0), 0.8), dtype=np.float32)
    img += rng.normal(0, 3.0, img.shape).astype(np.float32)
    quality = [cv2.IMWRITE_JPEG_QUALITY, 85]
    ok, jpeg = cv2.imencode(".jpg", np.clip(img, 0, 255).astype(np.uint8), quality)
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR), dtype=np.uint8)


def make_scene(
    seed: int,
    path_width_mm: float,
    *,
    length_mm: float = 15240.0,
    walk_width_mm: float = 1524.0,
    camera: PoleCamera | None = None,
) -> SyntheticScene:
    """Render one scene whose cleared path is at its narrowest exactly ``path_width_mm``.

    ``path_width_mm`` may exceed the walk width (then the whole walk is clear)
    or be 0 (no path at all). Truths are exact to the 5 mm texture grid.
    """
    rng = np.random.default_rng(seed)
    cam = camera or PoleCamera()
    res, margin_mm = TEXTURE_MM_PER_PX, 1500.0
    shape = (math.ceil((walk_width_mm + 2 * margin_mm) / res), math.ceil(length_mm / res))
    walk = slice(round(margin_mm / res), round(margin_mm / res) + round(walk_width_mm / res))
    path = _path_edges(rng, shape[1], walk, path_width_mm, res)

    r = np.arange(shape[0])[:, None]
    clear = (r >= path.top_edge[None, :]) & (r < path.bottom_edge[None, :])
    snow_level = float(rng.uniform(200, 240))
    snow = _paint_snow(rng, shape, path, res, snow_level)
    concrete = _paint_concrete(rng, shape, walk, res, snow_level)
    top = np.clip(np.where(clear[..., None], concrete, snow), 0, 255).astype(np.uint8)

    g2i = cam.ground_to_image(length_mm, walk_width_mm)
    tex_to_ground = np.array([[res, 0, 0], [0, res, -margin_mm], [0, 0, 1.0]])
    frame = _photograph(rng, top, g2i @ tex_to_ground, cam, snow_level)

    i2g = np.linalg.inv(g2i)
    corners = np.array(
        [[0, 0], [length_mm, 0], [length_mm, walk_width_mm], [0, walk_width_mm]], np.float64
    )
    return SyntheticScene(
        frame=frame,
        geometry=FrontageGeometry(i2g / i2g[2, 2], length_mm, walk_width_mm),
        walk_corners_px=project(g2i, corners),
        true_cleared_width_mm=float((path.bottom_edge - path.top_edge).min() * res),
        true_snow_cover_fraction=float(1.0 - clear[walk].mean()),
    )
