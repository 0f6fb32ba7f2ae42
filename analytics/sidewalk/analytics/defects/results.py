"""Typed measurement results. Units are in the field names; every measured
value carries a one-sigma uncertainty beside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

Point3 = tuple[float, float, float]
PixelPath = tuple[tuple[float, float], ...]


class EdgeType(StrEnum):
    """Edge of the two blocks at a joint, as § 370-5 (11)(a) distinguishes them."""

    TOOLED_JOINT = "tooled_joint"  # round-edged, straight
    CRACK = "crack"  # sharp-edged, meandering
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class JointMeasurement:
    """One joint or crack between two blocks.

    ``vertical_differential_mm`` is signed as faulting is measured: the height of
    the block after the joint minus the block before it, in survey direction
    (image left to right), at the middle of the observed joint.
    """

    block_before: int
    block_after: int
    vertical_differential_mm: float
    vertical_differential_uncertainty_mm: float
    max_abs_vertical_differential_mm: float
    gap_width_mm: float
    gap_width_uncertainty_mm: float
    edge_type: EdgeType
    straightness_rms_mm: float
    observed_length_mm: float
    center_mm: Point3  # in the sensor frame (camera, or fiducial ground frame)
    image_path_px: PixelPath = field(default=(), compare=False)
    # True when the higher block hides the lower edge: the gap is then an
    # upper bound (it is no wider than gap_width_mm).
    gap_occluded: bool = False
    # Ground length of one depth pixel across the joint at its middle (the
    # sensor's resolution there; 0 when not known).
    gap_footprint_mm: float = 0.0
    # Where the joint crosses the walk, along the survey direction, from the
    # point under the image centre (mm on the walk plane): the joint's offset
    # from the file's station. None where the path does not measure it (the
    # sensor's x is then the offset).
    along_walk_mm: float | None = None


@dataclass(frozen=True, slots=True)
class SpallMeasurement:
    """Surface deterioration (spall, scaling, pop-out) within one block."""

    block: int
    depth_mm: float
    depth_uncertainty_mm: float
    area_mm2: float
    area_uncertainty_mm2: float
    center_mm: Point3
    image_contour_px: PixelPath = field(default=(), compare=False)
    # Cut by the view's edge or the block-edge margin: depth and area are lower bounds.
    partial_view: bool = False


@dataclass(frozen=True, slots=True)
class BlockMeasurement:
    """One block (slab) seen in a frame."""

    block: int
    deterioration_depth_mm: float
    deterioration_depth_uncertainty_mm: float
    deterioration_area_mm2: float
    plane_rms_mm: float
    cross_slope_mm_per_m: float | None
    cross_slope_uncertainty_mm_per_m: float | None
    spalls: tuple[SpallMeasurement, ...]
    center_mm: Point3


@dataclass(frozen=True, slots=True)
class SurfaceInspection:
    """Everything measured from one depth map or laser frame."""

    joints: tuple[JointMeasurement, ...]
    blocks: tuple[BlockMeasurement, ...]
    ground_sample_mm: float
    stage_seconds: tuple[tuple[str, float], ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class CrackTrace:
    """A crack or open joint found in a photo, measured on the ground plane."""

    gap_width_mm: float
    gap_width_uncertainty_mm: float
    length_mm: float
    edge_type: EdgeType
    straightness_rms_mm: float
    center_mm: Point3  # ground frame of the fiducial, z = 0
    image_path_px: PixelPath = field(default=(), compare=False)
    # False when the gap is too narrow for the photo's blur to show its
    # edges: ``gap_width_mm`` is then an upper bound ("under X mm"; a blurred
    # dip reads at least as wide as the gap) and the uncertainty is half of it.
    gap_resolved: bool = True


@dataclass(frozen=True, slots=True)
class PhotoInspection:
    """Everything measured from one survey photo."""

    mm_per_pixel: float
    scale_uncertainty_fraction: float
    fiducial_tilt_deg: float
    cracks: tuple[CrackTrace, ...]
    crack_mask: object = field(repr=False, compare=False)  # uint8 mask, image size
    walk_width_mm: float | None
    walk_width_uncertainty_mm: float | None
    stage_seconds: tuple[tuple[str, float], ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class LaserProfile:
    """Height profile across a joint from one laser-line image."""

    vertical_differential_mm: float
    vertical_differential_uncertainty_mm: float
    gap_width_mm: float
    gap_width_uncertainty_mm: float
    edge_type: EdgeType
    edge_radius_mm: float  # larger of the two edges' rounding radii
    gap_center_mm: Point3  # camera frame
    # Across-walk distance between the points where the tilted laser sheet
    # meets the two edges (grows with the step). The opening along the stripe
    # differs from the perpendicular gap by this times the joint's slope to
    # the stripe's normal, which one line cannot see: it is in the gap's
    # uncertainty at the survey's joint-direction tolerance.
    gap_sheet_offset_mm: float
    profile_mm: tuple[tuple[float, float], ...] = field(repr=False, compare=False)
