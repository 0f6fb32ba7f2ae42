"""The pole camera's width states its uncertainty, the calibration's own error included.

Known geometry: a walk shovelled edge to edge, measured through a calibration whose walk
lies 70 mm across from the true one, so a 70 mm sliver of the bank is read as the walk's
(or 70 mm of the walk is left out): the path reads some 70 mm narrow, against the owner,
more than the 2 inches a letter would allow. A calibration stating its error (35 mm, one
sigma per edge) states a width whose 2 sigma covers it; stated without it, it would not."""

from __future__ import annotations

import numpy as np
import pytest

from sidewalk.edge.camera.geometry import (
    FrontageGeometry,
    edge_error_mm,
    homography_from_points,
    project,
)
from sidewalk.edge.camera.synthetic import PoleCamera, make_scene
from sidewalk.edge.camera.width import measure_frontage

LENGTH, WIDTH = 15240.0, 1524.0
GROUND = np.array([[0, 0], [LENGTH, 0], [LENGTH, WIDTH], [0, WIDTH]], np.float64)
TWO_INCHES = 50.8


@pytest.mark.parametrize("shift_mm", [70.0, -70.0])
def test_two_sigma_covers_a_70_mm_miscalibration_it_states(shift_mm: float) -> None:
    scene = make_scene(501, WIDTH + 200.0)  # the whole walk clear, snow beside it
    # The walk's corners where the calibration puts them: 70 mm across from the truth.
    shifted = GROUND + np.array([0.0, shift_mm])
    h = homography_from_points(
        project(PoleCamera().ground_to_image(LENGTH, WIDTH), shifted), GROUND
    )
    stated = measure_frontage(
        scene.frame, FrontageGeometry(h, LENGTH, WIDTH, calibration_error_mm=35.0)
    )
    unstated = measure_frontage(scene.frame, FrontageGeometry(h, LENGTH, WIDTH))
    short = scene.true_cleared_width_mm - stated.cleared_width_mm
    assert short > TWO_INCHES  # the sliver is held against the owner, beyond 2 inches
    assert short <= 2 * stated.width_uncertainty_mm
    # The same width stated without the calibration's error would not cover it.
    assert unstated.cleared_width_mm == stated.cleared_width_mm
    assert 2 * unstated.width_uncertainty_mm < short
    # Root-sum-square: 35 mm on each edge, with the grid's and the picture's terms.
    assert stated.width_uncertainty_mm == pytest.approx(
        np.hypot(unstated.width_uncertainty_mm, np.sqrt(2) * 35.0)
    )


def test_clicked_corners_state_their_own_error_and_two_sigma_covers_it() -> None:
    """Corners clicked up to 1.5 px off, as an installer would: the error read from the
    calibration itself (``edge_error_mm``) keeps every width within its 2 sigma."""
    rng = np.random.default_rng(11)
    camera = PoleCamera()
    for seed, width_mm in [(601, WIDTH + 200.0), (602, 1300.0), (603, 1000.0), (604, 700.0)]:
        scene = make_scene(seed, width_mm)
        for _ in range(3):
            clicked = project(camera.ground_to_image(LENGTH, WIDTH), GROUND)
            clicked += rng.uniform(-1.5, 1.5, (4, 2))
            h = homography_from_points(clicked, GROUND)
            error = edge_error_mm(h, LENGTH, WIDTH)
            assert 5.0 < error < 40.0, error
            geometry = FrontageGeometry(h, LENGTH, WIDTH, calibration_error_mm=error)
            m = measure_frontage(scene.frame, geometry)
            miss = abs(m.cleared_width_mm - scene.true_cleared_width_mm)
            assert miss <= 2 * m.width_uncertainty_mm, (seed, miss, m.width_uncertainty_mm)


def test_a_farther_walk_is_less_certain() -> None:
    """The same click error spans more ground on a walk farther from the pole."""
    near = PoleCamera(setback_mm=9000.0).ground_to_image(LENGTH, WIDTH)
    far = PoleCamera(setback_mm=20000.0).ground_to_image(LENGTH, WIDTH)
    errors = [
        edge_error_mm(homography_from_points(project(g2i, GROUND), GROUND), LENGTH, WIDTH)
        for g2i in (near, far)
    ]
    assert errors[0] < errors[1]
    # The same calibration always states the same figure.
    h = homography_from_points(project(near, GROUND), GROUND)
    assert edge_error_mm(h, LENGTH, WIDTH) == edge_error_mm(h, LENGTH, WIDTH)
