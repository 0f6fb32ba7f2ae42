"""Physical limits a measurement is classified against.

The values come from the ordinance profile (another module builds this object);
nothing in this package hard-codes them.
"""

from __future__ import annotations

from dataclasses import dataclass

MM_PER_INCH = 25.4
MM_PER_FOOT = 304.8


@dataclass(frozen=True, slots=True)
class DefectLimits:
    """Limits of § 370-5 style sidewalk condition rules, in millimetres.

    A block is defective when any of the first three limits is reached (a value
    equal to the limit is defective: the ordinance says "or more").
    """

    vertical_differential_mm: float
    horizontal_gap_mm: float
    deterioration_depth_mm: float
    replacement_fraction: float
    min_cross_slope_mm_per_m: float
    max_joint_spacing_mm: float
    min_walk_width_mm: float

    def __post_init__(self) -> None:
        for name in (
            "vertical_differential_mm",
            "horizontal_gap_mm",
            "deterioration_depth_mm",
            "max_joint_spacing_mm",
            "min_walk_width_mm",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        if not 0 < self.replacement_fraction <= 1:
            raise ValueError("replacement_fraction must be in (0, 1]")
        if self.min_cross_slope_mm_per_m < 0:
            raise ValueError("min_cross_slope_mm_per_m must not be negative")
