"""The camera calibration a pole runs: from its TOML, or sent by the dashboard.

Commissioning sends each frontage's walk region (image pixels) and its
image-to-ground homography (millimetres in the frontage frame, see
``geometry``) as one JSON string in the ``set_calibration`` command (command
arguments are flat scalars)::

    {"frontages": {"main-st-101": {"region": [[x, y], ...],
                                   "homography": [[...], [...], [...]]}}}

The pole checks it, keeps it in ``<state_dir>/camera_calibration.json``
(written atomically: a power cut leaves the old file or the new, never half)
and measures with it from then on, across restarts. The frontage's length and
walk width are where the region's corners land on the ground, so the hash of
region and homography (``sidewalk.core.calibration``) names everything the
pole measures with.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidewalk.core.calibration import calibration_hash, pole_calibration_hash
from sidewalk.core.contract import SLUG

FILE_NAME = "camera_calibration.json"
MAX_FRONTAGES = 16
MAX_CORNERS = 64
MAX_LENGTH_MM = 200_000.0
MAX_WIDTH_MM = 10_000.0
_SLUG_RE = re.compile(SLUG)


class CalibrationRejected(ValueError):
    """A calibration the pole will not run; the message says which frontage and why."""


@dataclass(frozen=True, slots=True)
class FrontageView:
    """One frontage as the camera sees it: region, homography and the walk's size."""

    frontage_id: str
    region: tuple[tuple[float, float], ...]
    homography: tuple[tuple[float, float, float], ...]
    length_mm: float
    walk_width_mm: float

    @property
    def digest(self) -> str:
        """``calibration_hash`` of this view (what the registry stores for the camera)."""
        return calibration_hash(self.region, self.homography)


def pole_hash(views: Mapping[str, FrontageView]) -> str | None:
    """The hash the pole reports in its health for the views it runs."""
    return pole_calibration_hash({fid: v.digest for fid, v in views.items()})


def ground_of(homography: Sequence[Sequence[float]], x: float, y: float) -> tuple[float, float]:
    """Where image point (x, y) lands on the ground; raises on the horizon line."""
    h = homography
    w = h[2][0] * x + h[2][1] * y + h[2][2]
    if abs(w) < 1e-12:
        raise CalibrationRejected("a corner of the region maps to infinity")
    return (
        (h[0][0] * x + h[0][1] * y + h[0][2]) / w,
        (h[1][0] * x + h[1][1] * y + h[1][2]) / w,
    )


def _numbers(value: Any, n: int, what: str) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != n:
        raise CalibrationRejected(f"{what} must be a list of {n} numbers")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise CalibrationRejected(f"{what} must hold finite numbers")
        out.append(float(v))
    return tuple(out)


def _det3(h: Sequence[Sequence[float]]) -> float:
    return (
        h[0][0] * (h[1][1] * h[2][2] - h[1][2] * h[2][1])
        - h[0][1] * (h[1][0] * h[2][2] - h[1][2] * h[2][0])
        + h[0][2] * (h[1][0] * h[2][1] - h[1][1] * h[2][0])
    )


def view_from(frontage_id: str, raw: Any) -> FrontageView:
    """Check one frontage's region and homography; size the walk from them."""
    where = f"frontage {frontage_id!r}"
    if not isinstance(frontage_id, str) or not _SLUG_RE.fullmatch(frontage_id):
        raise CalibrationRejected(f"{where}: the id is not a slug ({SLUG})")
    if not isinstance(raw, dict) or set(raw) != {"region", "homography"}:
        raise CalibrationRejected(f"{where}: needs exactly region and homography")
    corners = raw["region"]
    if not isinstance(corners, list) or not 3 <= len(corners) <= MAX_CORNERS:
        raise CalibrationRejected(f"{where}: region needs 3 to {MAX_CORNERS} corners")
    region = tuple(_numbers(p, 2, f"{where}: a region corner") for p in corners)
    rows = raw["homography"]
    if not isinstance(rows, list) or len(rows) != 3:
        raise CalibrationRejected(f"{where}: homography must be 3 × 3")
    homography = tuple(_numbers(r, 3, f"{where}: a homography row") for r in rows)
    scale = max(abs(v) for r in homography for v in r)
    if scale == 0 or abs(_det3(homography)) <= 1e-15 * scale**3:
        raise CalibrationRejected(f"{where}: the homography is singular")
    ground = [ground_of(homography, x, y) for x, y in region]
    length = max(g[0] for g in ground)
    width = max(g[1] for g in ground)
    if not 0 < length <= MAX_LENGTH_MM or not 0 < width <= MAX_WIDTH_MM:
        raise CalibrationRejected(
            f"{where}: the region maps to a walk {length:.0f} mm long and {width:.0f} mm wide;"
            f" expected up to {MAX_LENGTH_MM:.0f} by {MAX_WIDTH_MM:.0f} mm"
        )
    return FrontageView(
        frontage_id,
        tuple((p[0], p[1]) for p in region),
        tuple((r[0], r[1], r[2]) for r in homography),
        length,
        width,
    )


def parse_views(text: str) -> dict[str, FrontageView]:
    """The ``set_calibration`` argument (or the saved file) as checked views."""
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CalibrationRejected(f"the calibration is not JSON ({exc})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("frontages"), dict):
        raise CalibrationRejected('the calibration needs a "frontages" object')
    frontages: dict[str, Any] = raw["frontages"]
    if not 1 <= len(frontages) <= MAX_FRONTAGES:
        raise CalibrationRejected(f"the calibration needs 1 to {MAX_FRONTAGES} frontages")
    return {fid: view_from(fid, body) for fid, body in frontages.items()}


def views_json(views: Mapping[str, FrontageView]) -> str:
    """The views as the command's JSON (what the dashboard sends, what the pole saves)."""
    return json.dumps(
        {
            "frontages": {
                fid: {
                    "region": [list(p) for p in v.region],
                    "homography": [list(r) for r in v.homography],
                }
                for fid, v in sorted(views.items())
            }
        },
        separators=(",", ":"),
    )


def save_views(state_dir: Path, views: Mapping[str, FrontageView]) -> Path:
    """Write the views atomically (temp file, fsync, rename, fsync the directory)."""
    path = state_dir / FILE_NAME
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(views_json(views))
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)
    fd = os.open(state_dir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def load_views(state_dir: Path) -> dict[str, FrontageView] | None:
    """The saved views, or None when none were ever sent; raises ``CalibrationRejected``."""
    try:
        text = (state_dir / FILE_NAME).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return parse_views(text)
