"""The stand-in camera's frame, calibrated on the walk's four corners as commissioning
clicks them, measures as the script's cleared width."""

from __future__ import annotations

import numpy as np

from sidewalk.edge.camera.geometry import FrontageGeometry, homography_from_points
from sidewalk.edge.camera.standin import StandInCamera, Walk
from sidewalk.edge.camera.width import measure_frontage

TOLERANCE_MM = 50.8  # ±2 in, as for a real camera's measurement


def measured(cam: StandInCamera, frame: np.ndarray, walk: Walk) -> tuple[float, float]:
    h = homography_from_points(cam.corners_px(walk.frontage_id), cam.ground_corners_mm(walk))
    m = measure_frontage(frame, FrontageGeometry(h, walk.length_mm, walk.walk_width_mm))
    return m.cleared_width_mm, m.snow_cover_fraction


def test_a_pole_of_three_frontages_measures_the_scripted_widths() -> None:
    walks = [Walk("a", 15240.0, 1524.0), Walk("b", 18288.0, 1524.0), Walk("c", 15240.0, 1524.0)]
    script = {"a": 1219.0, "b": 610.0, "c": 0.0}
    cam = StandInCamera(walks, lambda f: script[f])
    frame = cam()
    assert frame.shape == (1440, 2560, 3)
    for walk in walks:
        width, cover = measured(cam, frame, walk)
        assert abs(width - script[walk.frontage_id]) <= TOLERANCE_MM, walk
    assert measured(cam, frame, walks[2])[1] > measured(cam, frame, walks[0])[1]  # more snow
    script["c"] = 5000.0  # shovelled edge to edge: the whole walk
    width, cover = measured(cam, cam(), walks[2])
    assert abs(width - 1524.0) <= 2 * TOLERANCE_MM
    assert cover < 0.05
    assert cam.renders == 4  # the unchanged tiles were kept
