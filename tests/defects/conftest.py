"""Shared fixtures: Clyman limits, and where the real CrackForest data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidewalk.analytics.defects import MM_PER_FOOT, MM_PER_INCH, DefectLimits

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture
def clyman() -> DefectLimits:
    """§ 370-5 values of the Village of Clyman."""
    return DefectLimits(
        vertical_differential_mm=0.75 * MM_PER_INCH,
        horizontal_gap_mm=1.25 * MM_PER_INCH,
        deterioration_depth_mm=0.5 * MM_PER_INCH,
        replacement_fraction=0.8,
        min_cross_slope_mm_per_m=0.25 * MM_PER_INCH / MM_PER_FOOT * 1000,
        max_joint_spacing_mm=50 * MM_PER_FOOT,
        min_walk_width_mm=4 * MM_PER_FOOT,
    )
