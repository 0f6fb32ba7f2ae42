"""Inspecting a frontage (§ 370-5): files in, stored inspections and the owner's count out.

The measurement itself is pure (``sidewalk.analytics.defects``); this module
does the I/O around it: reads each file, classifies against limits built from
the ordinance profile, stores the annotated evidence JPEG and one inspection
row per file, then applies the owner's 80 % rule over all the owner's
frontages. Whether that calls for a repair (or full-replacement) notice is
the alerts' decision (``sidewalk.alerts.inspections.inspect_files``, which
runs ``measure_files`` and then issues it): analytics sends nothing.

Block numbering: block ``first_block + i`` is the i-th block seen in the first
file; each later file's blocks continue after the previous file's highest
(the files are taken as consecutive, non-overlapping stretches).

Stationing: each file may carry its station along the frontage (mm, where
the image centre, or a photo's ground marker, lies); a joint's station is
that plus its along-walk offset in the file. Joint spacing and the
frontage's block count (the 80 % rule's denominator) come from them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
from numpy.typing import NDArray

from sidewalk.analytics.defects import (
    CameraCalibration,
    DefectLimits,
    DepthIntrinsics,
    FiducialSpec,
    FrontageCondition,
    InputProblem,
    LaserProfile,
    LaserRig,
    LevelReference,
    MeasurementError,
    OwnerReplacement,
    PhotoInspection,
    Rule,
    RuleCheck,
    SurfaceInspection,
    annotate,
    classify,
    classify_laser,
    frontage_block_count,
    frontage_condition,
    joint_stations,
    measure_depth_map,
    measure_laser_profile,
    measure_photo,
    owner_replacement_status,
)
from sidewalk.analytics.defects.classify import CONFIDENCE_SIGMAS
from sidewalk.analytics.defects.io import read_depth_png, read_image
from sidewalk.analytics.defects.results import EdgeType
from sidewalk.analytics.survey import BlockSurvey, FrontageCount
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import (
    BlockConditionRecord,
    CaseStore,
    InspectionRecord,
)
from sidewalk.storage.evidence import EvidenceStore

Kind = Literal["photo", "depth", "laser"]
Survey = PhotoInspection | SurfaceInspection | LaserProfile
MM_PER_FT = 304.8
Progress = Callable[[int, int, str], None]
log = logging.getLogger(__name__)

# Rule of the measurement library -> profile rule (for citations and the notice).
_PROFILE_RULE = {
    Rule.VERTICAL_DIFFERENTIAL: "vertical_differential",
    Rule.HORIZONTAL_GAP: "horizontal_gap",
    Rule.DETERIORATION_DEPTH: "surface_deterioration",
}
# Drawing-only fields: pixel paths and masks say nothing a clerk can check.
_DROP = frozenset({"crack_mask", "image_path_px", "image_contour_px", "profile_mm"})


def defect_limits(profile: Profile) -> DefectLimits:
    """§ 370-5 limits from the ordinance profile (never literals)."""
    c = profile.sidewalk_condition
    return DefectLimits(
        vertical_differential_mm=c.vertical_differential.length_mm,
        horizontal_gap_mm=c.horizontal_gap.length_mm,
        deterioration_depth_mm=c.surface_deterioration.length_mm,
        replacement_fraction=c.replacement_share.fraction,
        min_cross_slope_mm_per_m=c.min_cross_slope.slope * 1000,
        max_joint_spacing_mm=c.max_joint_spacing.length_mm,
        min_walk_width_mm=c.residential_width.length_mm,
    )


@dataclass(frozen=True)
class FileOutcome:
    """One file of the batch: its stored inspection (ok, or failed with the reason)."""

    source: str
    inspection: InspectionRecord

    @property
    def ok(self) -> bool:
        return self.inspection.status == "ok"


@dataclass(frozen=True)
class MeasuredBatch:
    """What one ``measure_files`` batch stored, and the owner's count after it."""

    frontage_id: str
    owner_id: str
    files: tuple[FileOutcome, ...]
    owner_status: OwnerReplacement
    # The owner's block conditions and count the notice decision reads.
    conditions: tuple[BlockConditionRecord, ...]
    survey: BlockSurvey
    limits: DefectLimits
    surveyed_at: datetime
    # Stationed joints of this frontage (all its inspections), and the
    # frontage's joint-spacing and walk-width checks.
    joint_stations_mm: tuple[float, ...] = ()
    frontage: FrontageCondition | None = None

    @property
    def failures(self) -> tuple[FileOutcome, ...]:
        return tuple(f for f in self.files if not f.ok)


def _json(value: Any) -> Any:
    """A measurement dataclass as JSON, drawing-only fields dropped."""
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items() if k not in _DROP and k != "stage_seconds"}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _check_json(check: RuleCheck, profile: Profile) -> dict[str, Any]:
    rule = getattr(profile.sidewalk_condition, _PROFILE_RULE[check.rule])
    return {
        "rule": _PROFILE_RULE[check.rule],
        "measured_mm": round(check.measured, 2),
        "uncertainty_mm": round(check.uncertainty, 2),
        "limit_mm": round(check.limit, 2),
        "failed": check.failed,
        "confident": check.confident,
        "citation": rule.citation,
    }


def _photo_checks(survey: PhotoInspection, limits: DefectLimits) -> tuple[RuleCheck, ...]:
    # A photo sees gap widths only (no heights): (11)(b) per crack trace.
    lim = limits.horizontal_gap_mm
    return tuple(
        RuleCheck(
            Rule.HORIZONTAL_GAP,
            c.gap_width_mm,
            c.gap_width_uncertainty_mm,
            lim,
            c.gap_width_mm >= lim,
            abs(c.gap_width_mm - lim) >= CONFIDENCE_SIGMAS * c.gap_width_uncertainty_mm,
        )
        for c in survey.cracks
    )


def measured_rows(
    measured: Survey,
    blocks: list[tuple[int, bool, tuple[RuleCheck, ...]]],
    survey: dict[str, Any],
    offset: int,
    profile: Profile,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A measured file's stored result and block rows (a survey and a re-measure alike)."""
    stationing = {**survey, "joint_offsets_mm": [round(x, 1) for x in joint_offsets_mm(measured)]}
    result = {
        "units": "mm, mm/m; *_uncertainty_* one sigma",
        **_json(asdict(measured)),
        "survey": stationing,
    }
    rows = [
        {
            "block": offset + b,
            "image_block": b,
            "defective": bad,
            "checks": [_check_json(c, profile) for c in checks],
        }
        for b, bad, checks in blocks
    ]
    return result, rows


def _measure(
    raw: bytes,
    kind: Kind,
    limits: DefectLimits,
    *,
    calibration: CameraCalibration | None,
    fiducial: FiducialSpec | None,
    intrinsics: DepthIntrinsics | None,
    level: LevelReference | None,
    rig: LaserRig | None,
) -> tuple[Survey, list[tuple[int, bool, tuple[RuleCheck, ...]]], bytes]:
    """Measure one file: (survey, [(image block, defective, checks)], evidence JPEG)."""
    image: NDArray[np.uint8] | NDArray[np.uint16]
    survey: Survey
    matrix = None
    if kind == "photo":
        if calibration is None:
            raise ValueError("photos need a camera calibration")
        image = read_image(raw)
        survey = measure_photo(image, calibration, fiducial)
        if not survey.cracks:
            # A survey photo is taken of a joint or crack: none found is
            # absence of evidence, not a gap under the limit (measure_photo
            # itself refuses so).
            raise MeasurementError(
                InputProblem.NOT_MEASURED, "no joint or crack found where one is expected"
            )
        checks = _photo_checks(survey, limits)
        blocks = [(0, any(c.failed for c in checks), checks)]
    elif kind == "laser":
        if rig is None:
            raise ValueError("laser images need the rig calibration")
        image = np.asarray(cv2.cvtColor(read_image(raw), cv2.COLOR_BGR2GRAY), np.uint8)
        survey = measure_laser_profile(image, rig)
        checks = classify_laser(survey, limits)
        bad = any(c.failed for c in checks)
        # The stripe crosses one joint: the blocks before and after it.
        blocks = [(0, bad, checks), (1, bad, checks)]
        matrix = rig.camera.matrix
    else:
        if intrinsics is None:
            raise ValueError("depth maps need the camera intrinsics")
        image = read_depth_png(raw)
        survey = measure_depth_map(
            image, intrinsics, level=level, depth_scale_mm=intrinsics.depth_scale_mm
        )
        if not survey.joints:
            # The depth camera is centred over a joint: finding none (or no
            # two blocks) measures no fault or gap, and is never "ok".
            raise MeasurementError(
                InputProblem.NOT_MEASURED,
                f"no joint found where one is expected ({len(survey.blocks)} block(s) seen)",
            )
        blocks = [(b.block, b.defective, b.checks) for b in classify(survey, limits)]
    evidence = annotate(image, survey, limits, camera_matrix=matrix)
    ok, jpeg = cv2.imencode(".jpg", evidence, [cv2.IMWRITE_JPEG_QUALITY, 90])
    if not ok:
        raise RuntimeError("JPEG encoder failed on the evidence image")
    return survey, blocks, jpeg.tobytes()


def joint_offsets_mm(survey: Survey) -> tuple[float, ...]:
    """Along-walk offsets (mm, survey direction) of the tooled joints a file
    saw, from its station point: for a depth map, along the walk's survey
    direction on the walk plane from the point under the image centre (so a
    camera turned on the walk stations the same); otherwise the sensor's x
    (laser camera frame, or the ground marker laid with its x along the walk).
    Cracks are not joints and do not count toward joint spacing."""
    if isinstance(survey, LaserProfile):
        tooled = survey.edge_type == EdgeType.TOOLED_JOINT
        return (survey.gap_center_mm[0],) if tooled else ()
    if isinstance(survey, PhotoInspection):
        return tuple(c.center_mm[0] for c in survey.cracks if c.edge_type == EdgeType.TOOLED_JOINT)
    return tuple(
        j.center_mm[0] if j.along_walk_mm is None else j.along_walk_mm
        for j in survey.joints
        if j.edge_type == EdgeType.TOOLED_JOINT
    )


def measure_files(
    paths: Iterable[str | Path],
    *,
    frontage: str,
    kind: Kind,
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
    calibration: CameraCalibration | None = None,
    fiducial: FiducialSpec | None = None,
    intrinsics: DepthIntrinsics | None = None,
    level: LevelReference | None = None,
    rig: LaserRig | None = None,
    stations_mm: Sequence[float] | None = None,
    frontage_blocks: int | None = None,
    surveyed_at: datetime | None = None,
    first_block: int = 0,
    progress: Progress | None = None,
    camera_note: str = "",
) -> MeasuredBatch:
    """Measure, classify and store every file, then count the owner's blocks (80 % rule).

    A file that cannot be read or measured is stored as a failed inspection
    with its reason and the batch goes on. Inspections are keyed by frontage
    and file sha256, so running the same batch again stores nothing new.
    ``progress`` is called as (done, total, source name) after each file.
    ``camera_note`` is kept in each record's survey (how the camera was known, e.g.
    a phone measured with the marker only) so a hearing can read it.

    ``stations_mm`` gives each file's station along the frontage (one per
    file); ``frontage_blocks`` the frontage's block count when recorded. The
    80 % rule's denominator is the owner's block count over all frontages
    (recorded, or frontage length / measured joint spacing); while it is not
    known for every frontage the survey is incomplete and the full
    replacement is not proposed.
    """
    need = {"photo": calibration, "depth": intrinsics, "laser": rig}[kind]
    if need is None:
        what = {"photo": "camera calibration", "depth": "camera intrinsics", "laser": "rig"}
        raise ValueError(f"{kind} inspection needs the {what[kind]}")
    sources = [Path(p) for p in paths]
    if stations_mm is not None and len(stations_mm) != len(sources):
        raise ValueError(f"{len(stations_mm)} stations for {len(sources)} files: give one each")
    if frontage_blocks is not None and frontage_blocks < 1:
        raise ValueError("a frontage has at least one block")
    limits = defect_limits(profile)
    when = surveyed_at or datetime.now(UTC)
    # An unknown frontage fails before anything is measured.
    front = cases.registry.get_frontage(frontage)
    outcomes: list[FileOutcome] = []
    offset = first_block
    for n, path in enumerate(sources, start=1):
        station = None if stations_mm is None else float(stations_mm[n - 1])
        outcomes.append(
            _inspect_one(
                path, kind, frontage=frontage, when=when, offset=offset, limits=limits,
                cases=cases, evidence=evidence, profile=profile, calibration=calibration,
                fiducial=fiducial, intrinsics=intrinsics, level=level, rig=rig,
                survey={"station_mm": station, "frontage_blocks": frontage_blocks}
                | ({"camera": camera_note} if camera_note else {}),
            )
        )  # fmt: skip
        seen = [int(b["block"]) for b in outcomes[-1].inspection.blocks]
        offset = max(seen, default=offset - 1) + 1
        if progress is not None:
            progress(n, len(sources), str(path))
    conditions = cases.inspections.owner_block_conditions(front.owner_id)
    status, counted = owner_survey(cases, front.owner_id, limits, conditions)
    records = cases.inspections.list(frontage_id=frontage)
    stations = _frontage_joint_stations(records)
    widths = [
        (float(r.result["walk_width_mm"]), float(r.result["walk_width_uncertainty_mm"]))
        for r in records
        if r.status == "ok" and r.result.get("walk_width_mm") is not None
    ]
    # Spacing needs two joints on this frontage; width, one photo showing both edges.
    spacing = (
        frontage_condition(
            limits,
            joint_stations_mm=stations if len(stations) > 1 else (),
            walk_widths_mm=widths,
        )
        if len(stations) > 1 or widths
        else None
    )
    return MeasuredBatch(
        frontage, front.owner_id, tuple(outcomes), status, tuple(conditions), counted, limits,
        when, stations, spacing,
    )  # fmt: skip


def _frontage_joint_stations(records: Iterable[InspectionRecord]) -> tuple[float, ...]:
    """Every stationed joint the frontage's measured files saw, one per joint."""
    found: list[float] = []
    for r in records:
        survey = r.result.get("survey") or {}
        if r.status != "ok" or survey.get("station_mm") is None:
            continue
        found.extend(survey["station_mm"] + x for x in survey.get("joint_offsets_mm", ()))
    return joint_stations(found)


def frontage_count(
    frontage_id: str, length_ft: float, records: Sequence[InspectionRecord]
) -> FrontageCount:
    """The frontage's block count and how it is known: the latest recorded one,
    else its length over the measured joint spacing, else unknown."""
    for r in reversed(records):
        n = (r.result.get("survey") or {}).get("frontage_blocks")
        if n is not None:
            return FrontageCount(frontage_id, int(n), "recorded")
    stations = _frontage_joint_stations(records)
    blocks = frontage_block_count(length_ft * MM_PER_FT, stations)
    if blocks is None:
        return FrontageCount(frontage_id, None, "unknown", joints=len(stations))
    # The spacing frontage_block_count divided by (median), in the notice's units.
    spacing_mm = statistics.median(b - a for a, b in itertools.pairwise(sorted(stations)))
    return FrontageCount(
        frontage_id,
        blocks,
        "length_spacing",
        length_ft=round(length_ft, 1),
        spacing_ft=round(spacing_mm / MM_PER_FT, 2),
        joints=len(stations),
    )


def owner_survey(
    cases: CaseStore,
    owner_id: str,
    limits: DefectLimits,
    conditions: Sequence[BlockConditionRecord] | None = None,
) -> tuple[OwnerReplacement, BlockSurvey]:
    """The owner's 80 % status over all their frontages, with the denominator
    (every frontage's count, or unknown) and how each count was known; the one
    aggregation the notice and the dashboard both use."""
    if conditions is None:
        conditions = cases.inspections.owner_block_conditions(owner_id)
    counts = tuple(
        frontage_count(f.id, f.length_ft, cases.inspections.list(frontage_id=f.id))
        for f in sorted(cases.registry.list_frontages(), key=lambda f: f.id)
        if f.owner_id == owner_id
    )
    known = all(c.blocks is not None for c in counts)
    owner_blocks = sum(c.blocks or 0 for c in counts) if known else None
    status = owner_replacement_status(
        (c.defective for c in conditions), limits, owner_blocks=owner_blocks
    )
    if owner_blocks is None:
        # No denominator: only the surveyed blocks are known, never the whole walk.
        status = replace(
            status, owner_blocks=None, survey_complete=False, replace_entire_sidewalk=False
        )
    survey = BlockSurvey(
        status.total_blocks,
        status.defective_blocks,
        status.owner_blocks,
        status.survey_complete,
        status.replace_entire_sidewalk,
        counts,
    )
    return status, survey


def _inspect_one(
    path: Path,
    kind: Kind,
    *,
    frontage: str,
    when: datetime,
    offset: int,
    limits: DefectLimits,
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
    survey: dict[str, Any],
    **options: Any,
) -> FileOutcome:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        # No bytes to hash: key the failure by the path so a retry is the same row.
        sha = hashlib.sha256(f"unreadable:{path}".encode()).hexdigest()
        rec = cases.inspections.record(
            frontage, surveyed_at=when, kind=kind, source_name=str(path), source_sha256=sha,
            result={"survey": survey}, failure=f"unreadable: {exc.strerror or exc}",
        )  # fmt: skip
        return FileOutcome(str(path), rec)
    sha = hashlib.sha256(raw).hexdigest()
    try:
        measured, blocks, jpeg = _measure(raw, kind, limits, **options)
    except MeasurementError as exc:
        # The file is kept (the store names it by its sha256) with its first
        # block, so it can be measured again with other options later
        # (``sidewalk.analytics.reinspect``).
        evidence.put(raw)
        rec = cases.inspections.record(
            frontage, surveyed_at=when, kind=kind, source_name=str(path), source_sha256=sha,
            result={"survey": {**survey, "first_block": offset}},
            failure=f"{exc.problem.value}: {exc.detail}",
        )  # fmt: skip
        return FileOutcome(str(path), rec)
    except Exception as exc:
        # A bug in one image's measurement must not cost the rest of the survey:
        # record it against the image, keep the traceback in the log.
        log.exception("measuring %s failed", path)
        detail = f"{type(exc).__name__}: {exc}"
        rec = cases.inspections.record(
            frontage, surveyed_at=when, kind=kind, source_name=str(path), source_sha256=sha,
            result={"survey": survey},
            failure=f"{InputProblem.MEASUREMENT_FAILED.value}: {detail}",
        )  # fmt: skip
        return FileOutcome(str(path), rec)
    result, rows = measured_rows(measured, blocks, survey, offset, profile)
    rec = cases.inspections.record(
        frontage,
        surveyed_at=when,
        kind=kind,
        source_name=str(path),
        source_sha256=sha,
        result=result,
        blocks=rows,
        evidence_sha256=evidence.put(jpeg),
    )
    return FileOutcome(str(path), rec)


def write_demo_scene(out_dir: Path, *, fault_mm: float = 25.4, seed: int = 11) -> dict[str, Path]:
    """Render a synthetic frontage with known defects for trying the commands.

    Writes ``depth.png`` (16-bit mm) and ``intrinsics.json`` of a depth camera
    over a joint faulted by ``fault_mm`` (default 1 in, over the 3/4 in
    limit), ``photo.jpg`` with ``calibration.json`` of a survey photo of
    the same walk with a 150 mm ground marker, and ``laser.png`` with
    ``laser_rig.json`` of a laser-line frame over the same joint. Returns the
    paths by name.
    """
    # Deferred: the synthetic renderer is for demo scenes only, never a real survey.
    from sidewalk.testkit.defect_scenes import (
        depth_survey_camera,
        laser_pair_survey_rig,
        place_marker,
        random_scene,
        render_depth,
        render_laser,
        render_photo,
        survey_photo_camera,
    )

    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    base = random_scene(rng, spalls_per_block=(0, 0))
    # Flat blocks and tight joints everywhere, so the only defect is the one asked for.
    faults = [fault_mm] + [0.0] * (len(base.joints) - 1)
    joints = tuple(
        replace(j, fault_mm=f, gap_mm=6.0) for j, f in zip(base.joints, faults, strict=True)
    )
    z0 = base.blocks[0].z0_mm
    tops = [z0, *(z0 + sum(faults[: i + 1]) for i in range(len(faults)))]
    blocks = tuple(replace(b, z0_mm=z, slope_x=0.0) for b, z in zip(base.blocks, tops, strict=True))
    scene = replace(base, joints=joints, blocks=blocks)
    cam = depth_survey_camera(scene, rng, 0)
    paths = {
        "depth": out_dir / "depth.png",
        "intrinsics": out_dir / "intrinsics.json",
        "photo": out_dir / "photo.jpg",
        "calibration": out_dir / "calibration.json",
        "laser": out_dir / "laser.png",
        "laser_rig": out_dir / "laser_rig.json",
    }
    cv2.imwrite(str(paths["depth"]), render_depth(scene, cam, rng))
    k = cam.matrix
    intr = {"fx": k[0, 0], "fy": k[1, 1], "cx": k[0, 2], "cy": k[1, 2]}
    paths["intrinsics"].write_text(json.dumps({n: float(v) for n, v in intr.items()}))
    pcam = survey_photo_camera(scene, rng, 0)
    photo = render_photo(scene, pcam, place_marker(scene, pcam, rng), rng)
    cv2.imwrite(str(paths["photo"]), photo, [cv2.IMWRITE_JPEG_QUALITY, 95])
    paths["calibration"].write_text(
        json.dumps({"matrix": pcam.matrix.tolist(), "distortion": pcam.distortion.tolist()})
    )
    # The two-stripe survey rig (docs/defects.md).
    lcam, ((normal, offset), (normal2, offset2)) = laser_pair_survey_rig(scene, rng, 0)
    laser_img = render_laser(scene, lcam, normal, offset, rng, more_sheets=((normal2, offset2),))
    cv2.imwrite(str(paths["laser"]), laser_img)
    rig = {
        "matrix": lcam.matrix.tolist(),
        "distortion": lcam.distortion.tolist(),
        "plane_normal": normal.tolist(),
        "plane_offset_mm": offset,
        "plane2_normal": normal2.tolist(),
        "plane2_offset_mm": offset2,
        "up": (lcam.rotation @ np.array([0.0, 0.0, 1.0])).tolist(),
    }
    paths["laser_rig"].write_text(json.dumps(rig))
    return paths


def load_calibration(path: Path) -> CameraCalibration:
    """A camera calibration: ``{"matrix": 3x3, "distortion": [k1, k2, p1, p2, k3]}``,
    or any format ``defects.camera_inputs`` reads (ROS camera_info YAML,
    OpenCV FileStorage, RealSense JSON). Raises ``DefectInputError`` (one line)."""
    from sidewalk.analytics.defects.camera_inputs import load_camera_calibration

    return load_camera_calibration(path)


def load_intrinsics(path: Path, *, depth_scale_mm: float | None = None) -> DepthIntrinsics:
    """Depth intrinsics: ``{"fx": …, "fy": …, "cx": …, "cy": …}`` in pixels, flat
    or nested, or RealSense JSON, ROS camera_info YAML, OpenCV FileStorage.
    Raises ``DefectInputError`` (one line naming the file and the problem)."""
    from sidewalk.analytics.defects.camera_inputs import load_depth_intrinsics

    return load_depth_intrinsics(path, depth_scale_mm=depth_scale_mm)


def load_laser_rig(path: Path) -> LaserRig:
    """A laser rig calibration JSON: the camera (``matrix``, ``distortion``),
    the laser plane in the camera frame (``plane_normal`` [3], ``plane_offset_mm``:
    n . p = d), the survey rig's second plane (``plane2_normal`` [3],
    ``plane2_offset_mm``; without it the rig is one stripe) and optionally
    ``up`` [3], the vertical in the camera frame (from the IMU; default: the
    optical axis reversed, the camera square to the walk)."""
    data = json.loads(path.read_text())
    camera = CameraCalibration(
        np.array(data["matrix"], np.float64), np.array(data["distortion"], np.float64)
    )

    def plane(key: str) -> np.ndarray:
        normal = np.array(data[key], np.float64)
        if normal.shape != (3,) or not np.linalg.norm(normal) > 0:
            raise ValueError(f"{path}: {key} must be a non-zero 3-vector")
        return normal

    normal = plane("plane_normal")
    second = None
    if "plane2_normal" in data:
        second = (plane("plane2_normal"), float(data["plane2_offset_mm"]))
    up = np.array(data["up"], float) if "up" in data else np.array([0.0, 0.0, -1.0])
    return LaserRig(camera, normal, float(data["plane_offset_mm"]), up, second)
