"""Calibrate one frontage from a still frame: ArUco sheets or four clicked points.

    uv run python -m sidewalk.edge.camera.calibrate frame.jpg placements.json out.json

``placements.json`` describes the frontage and either the sheets or the clicks::

    {"length_mm": 15240, "walk_width_mm": 1524, "marker_mm": 180,
     "markers": [{"id": 0, "x_mm": 300, "y_mm": 300}, ...]}
    {"length_mm": 15240, "walk_width_mm": 1524,
     "points": [{"u": 812.5, "v": 640.0, "x_mm": 0, "y_mm": 0}, ...]}

The output holds the image-to-ground homography and the frontage size, and
the fit's largest residual at the reference points (marker corners, or the
clicked points: click five or six, since four fit exactly and prove nothing);
the calibration procedure rejects a fit above 10 mm.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from sidewalk.edge.camera.geometry import (
    FloatArray,
    Image,
    MarkerPlacement,
    aruco_correspondences,
    homography_from_aruco,
    homography_from_points,
    project,
)

MAX_RESIDUAL_MM = 10.0


def calibrate(frame: Image, spec: dict[str, Any]) -> dict[str, Any]:
    """Fit the homography described by ``spec`` (see module doc) and report its residual."""
    if "markers" in spec:
        placements = [
            MarkerPlacement(int(m["id"]), float(m["x_mm"]), float(m["y_mm"]))
            for m in spec["markers"]
        ]
        marker_mm = float(spec["marker_mm"])
        h = homography_from_aruco(frame, placements, marker_mm)
        image, ground = aruco_correspondences(frame, placements, marker_mm)
    else:
        image = np.array([[p["u"], p["v"]] for p in spec["points"]], np.float64)
        ground = np.array([[p["x_mm"], p["y_mm"]] for p in spec["points"]], np.float64)
        h = homography_from_points(image, ground)
    residual: FloatArray = np.linalg.norm(project(h, image) - ground, axis=1)
    return {
        "image_to_ground": h.tolist(),
        "length_mm": float(spec["length_mm"]),
        "walk_width_mm": float(spec["walk_width_mm"]),
        "residual_mm": float(residual.max()),
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: write the calibration, exit 1 if the residual is too large."""
    parser = argparse.ArgumentParser(description="calibrate a frontage's ground homography")
    parser.add_argument("frame", type=Path)
    parser.add_argument("placements", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    frame = cv2.imread(str(args.frame))
    if frame is None:
        parser.error(f"cannot read {args.frame}")
    result = calibrate(np.asarray(frame, np.uint8), json.loads(args.placements.read_text()))
    args.out.write_text(json.dumps(result, indent=2))
    print(f"residual {result['residual_mm']:.1f} mm -> {args.out}")
    return 0 if result["residual_mm"] <= MAX_RESIDUAL_MM else 1


if __name__ == "__main__":
    raise SystemExit(main())
