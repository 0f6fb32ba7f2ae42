"""A depth map too small for a walk plane is the library's typed error, not a crash."""

from __future__ import annotations

import numpy as np
import pytest

from sidewalk.analytics.defects import (
    DepthIntrinsics,
    InputProblem,
    MeasurementError,
    measure_depth_map,
)
from sidewalk.analytics.defects.depth import MIN_PLANE_POINTS


@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (2, 1), (20, 20)])
def test_a_tiny_depth_map_is_too_small(shape: tuple[int, int]) -> None:
    depth = np.full(shape, 1000, np.uint16)  # every pixel has depth: only the size is wrong
    with pytest.raises(MeasurementError) as err:
        measure_depth_map(depth, DepthIntrinsics(900.0, 900.0, 0.0, 0.0))
    assert err.value.problem is InputProblem.TOO_SMALL
    assert f"{shape[1]} x {shape[0]} depth map" in err.value.detail
    assert str(MIN_PLANE_POINTS) in err.value.detail


def test_a_map_just_large_enough_is_measured() -> None:
    # 40 x 40 flat floor 1 m away: a plane, no blocks or joints, and no error.
    side = 40
    assert side * side >= MIN_PLANE_POINTS
    depth = np.full((side, side), 1000, np.uint16)
    result = measure_depth_map(depth, DepthIntrinsics(900.0, 900.0, side / 2, side / 2))
    assert result.joints == ()
