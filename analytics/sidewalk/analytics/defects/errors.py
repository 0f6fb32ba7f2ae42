"""Typed per-image failures: a batch records them and goes on."""

from __future__ import annotations

from enum import StrEnum


class InputProblem(StrEnum):
    """Why an image cannot be measured to the accuracy claimed."""

    UNREADABLE = "unreadable"
    WRONG_FORMAT = "wrong_format"
    TOO_SMALL = "too_small"
    TOO_LARGE = "too_large"
    NO_FIDUCIAL = "no_fiducial"
    FIDUCIAL_TOO_SMALL = "fiducial_too_small"
    FIDUCIAL_TOO_OBLIQUE = "fiducial_too_oblique"
    OVEREXPOSED = "overexposed"
    UNDEREXPOSED = "underexposed"
    MOTION_BLUR = "motion_blur"
    NO_GROUND_PLANE = "no_ground_plane"
    NO_LASER_LINE = "no_laser_line"
    # Readable, but what the verdict needs was not seen (no joint where one is
    # expected, no gap, a depth map in unexpected units): never a pass.
    NOT_MEASURED = "not_measured"
    # A measurement that failed in a way it should have reported (a bug): the
    # batch records it against the image and goes on.
    MEASUREMENT_FAILED = "measurement_failed"


class MeasurementError(Exception):
    """An image that cannot be measured, with a machine-readable reason."""

    def __init__(self, problem: InputProblem, detail: str) -> None:
        super().__init__(f"{problem.value}: {detail}")
        self.problem = problem
        self.detail = detail
