"""Sidewalk defect measurement (§ 370-5): pure functions, arrays in,
measurements in millimetres out, each with its uncertainty.

Typical use::

    limits = DefectLimits(...)                      # built from the ordinance profile
    survey = measure_depth_map(depth, intrinsics)   # or measure_photo / measure_laser_profile
    blocks = classify(survey, limits)
    status = owner_replacement_status(all_blocks_of_owner, limits)
    evidence = annotate(depth, survey, limits)

File reading and per-image batch errors live in ``defects.io`` (the only module
here that touches files).
"""

from .annotate import annotate
from .classify import (
    BlockCondition,
    FrontageCondition,
    OwnerReplacement,
    Rule,
    RuleCheck,
    classify,
    classify_block,
    classify_joint,
    classify_laser,
    frontage_block_count,
    frontage_condition,
    joint_stations,
    owner_replacement_status,
)
from .cracks import CrackParams, SegmentationScore, score_segmentation, segment_cracks
from .depth import DepthIntrinsics, LevelReference, measure_depth_map
from .errors import InputProblem, MeasurementError
from .fiducial import (
    CameraCalibration,
    FiducialLimits,
    FiducialSpec,
    GroundFrame,
    calibrate_intrinsics,
    find_ground_frame,
    make_calibration_target,
    make_fiducial_marker,
)
from .laser import LaserParams, LaserRig, measure_laser_profile
from .limits import MM_PER_FOOT, MM_PER_INCH, DefectLimits
from .photo import PhotoParams, measure_photo
from .results import (
    BlockMeasurement,
    CrackTrace,
    EdgeType,
    JointMeasurement,
    LaserProfile,
    PhotoInspection,
    SpallMeasurement,
    SurfaceInspection,
)
from .surface import SurfaceParams
from .width import WalkWidth, WalkWidthParams, measure_walk_width

__all__ = [
    "MM_PER_FOOT",
    "MM_PER_INCH",
    "BlockCondition",
    "BlockMeasurement",
    "CameraCalibration",
    "CrackParams",
    "CrackTrace",
    "DefectLimits",
    "DepthIntrinsics",
    "EdgeType",
    "FiducialLimits",
    "FiducialSpec",
    "FrontageCondition",
    "GroundFrame",
    "InputProblem",
    "JointMeasurement",
    "LaserParams",
    "LaserProfile",
    "LaserRig",
    "LevelReference",
    "MeasurementError",
    "OwnerReplacement",
    "PhotoInspection",
    "PhotoParams",
    "Rule",
    "RuleCheck",
    "SegmentationScore",
    "SpallMeasurement",
    "SurfaceInspection",
    "SurfaceParams",
    "WalkWidth",
    "WalkWidthParams",
    "annotate",
    "calibrate_intrinsics",
    "classify",
    "classify_block",
    "classify_joint",
    "classify_laser",
    "find_ground_frame",
    "frontage_block_count",
    "frontage_condition",
    "joint_stations",
    "make_calibration_target",
    "make_fiducial_marker",
    "measure_depth_map",
    "measure_laser_profile",
    "measure_photo",
    "measure_walk_width",
    "owner_replacement_status",
    "score_segmentation",
    "segment_cracks",
]
