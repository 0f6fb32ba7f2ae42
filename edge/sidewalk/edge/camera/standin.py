"""A stand-in camera: the frontages a pole watches, rendered with the snow a script says.

Each frontage is drawn by the synthetic scene renderer (``synthetic.make_scene``)
in a tile of one frame, as a pole across the street would see it: snow on the
walk, the lawn and the terrace, and a shovelled path whose narrowest point is
the scripted cleared width. The frame goes through the pole's own camera loop
like a real camera's, so commissioning (four clicked corners per frontage),
the measurement and the evidence photos work on it unchanged; calibrated on the
walk's corners, the frame measures as the script's width.

Rendering a tile takes about half a second, so a tile is kept while its width
stays the same (to the nearest centimetre).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sidewalk.edge.camera.synthetic import PoleCamera, SyntheticScene, make_scene

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]

# One frontage fills a 1080p frame; up to four get a 720p tile each (the width
# measures within 2 in on a frontage up to about 66 ft); more share a 4K frame.
TILE_PX = {1: (1920, 1080), 4: (1280, 720)}
MAX_FRAME_PX = (3840, 2160)


def tile_size(count: int) -> tuple[int, int]:
    """Each tile's size (px) for ``count`` frontages."""
    for most, size in sorted(TILE_PX.items()):
        if count <= most:
            return size
    cols = math.ceil(math.sqrt(count))
    rows = math.ceil(count / cols)
    return MAX_FRAME_PX[0] // cols, MAX_FRAME_PX[1] // rows


@dataclass(frozen=True, slots=True)
class Walk:
    """One frontage the stand-in camera shows: its id and the walk's size."""

    frontage_id: str
    length_mm: float
    walk_width_mm: float


def camera_for(walk: Walk, width_px: int, height_px: int) -> PoleCamera:
    """A pole far enough across the street to see the whole frontage (60° lens),
    and high enough that the walk is not a sliver."""
    setback = max(12_000.0, 0.95 * walk.length_mm)
    return PoleCamera(
        height_mm=max(6000.0, 0.6 * setback),
        setback_mm=setback,
        width_px=width_px,
        height_px=height_px,
    )


class StandInCamera:
    """A frame source (``Device(frames=…)``) for the walks, widths from ``cleared_mm``.

    ``cleared_mm(frontage_id)`` is the scripted cleared width at this moment;
    at or beyond the walk's width the whole walk is clear, 0 is untouched snow.
    """

    def __init__(
        self,
        walks: Sequence[Walk],
        cleared_mm: Callable[[str], float],
        *,
        seed: int = 0,
    ) -> None:
        if not walks:
            raise ValueError("the stand-in camera needs at least one frontage to show")
        self.walks = list(walks)
        self.cleared_mm = cleared_mm
        self.cols = math.ceil(math.sqrt(len(walks)))
        self.rows = math.ceil(len(walks) / self.cols)
        self.tile_w, self.tile_h = tile_size(len(walks))
        self.width_px, self.height_px = self.cols * self.tile_w, self.rows * self.tile_h
        self.seed = seed
        self._tiles: dict[str, tuple[int, SyntheticScene]] = {}
        self.renders = 0

    def _offset(self, index: int) -> tuple[int, int]:
        return (index % self.cols) * self.tile_w, (index // self.cols) * self.tile_h

    def _scene(self, index: int, walk: Walk) -> SyntheticScene:
        wanted = max(0.0, float(self.cleared_mm(walk.frontage_id)))
        if wanted >= walk.walk_width_mm:
            wanted = walk.walk_width_mm + 200.0  # the whole walk, edge to edge
        key = round(wanted / 10.0)
        cached = self._tiles.get(walk.frontage_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        scene = make_scene(
            self.seed * 1000 + index,
            key * 10.0,
            length_mm=walk.length_mm,
            walk_width_mm=walk.walk_width_mm,
            camera=camera_for(walk, self.tile_w, self.tile_h),
        )
        self.renders += 1
        self._tiles[walk.frontage_id] = (key, scene)
        return scene

    def frame(self) -> Image:
        """The current frame: every walk in its tile, with the scripted snow."""
        canvas = np.full((self.height_px, self.width_px, 3), 40, np.uint8)
        for i, walk in enumerate(self.walks):
            x, y = self._offset(i)
            canvas[y : y + self.tile_h, x : x + self.tile_w] = self._scene(i, walk).frame
        return canvas

    def __call__(self) -> Image:
        """``Device``'s frame source: a frame every time (the stand-in is never down)."""
        return self.frame()

    def corners_px(self, frontage_id: str) -> FloatArray:
        """The walk's four corners in the frame, in the order commissioning clicks them:
        street edge at the start, street edge at the end, then the far edge back."""
        for i, walk in enumerate(self.walks):
            if walk.frontage_id == frontage_id:
                x, y = self._offset(i)
                corners = self._scene(i, walk).walk_corners_px
                return np.asarray(corners + np.array([x, y], np.float64), np.float64)
        raise KeyError(frontage_id)

    @staticmethod
    def ground_corners_mm(walk: Walk) -> FloatArray:
        """The same corners on the ground (mm along, mm across the walk)."""
        length, width = walk.length_mm, walk.walk_width_mm
        return np.array([[0, 0], [length, 0], [length, width], [0, width]], np.float64)
