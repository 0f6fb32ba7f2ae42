"""Inspecting a frontage (§ 370-5): files in, stored inspections and notices out.

The measurement itself is pure (``sidewalk.analytics.defects``); this module
does the I/O around it: reads each file, classifies against limits built from
the ordinance profile, stores the annotated evidence JPEG and one inspection
row per file, then applies the owner's 80 % rule over all the owner's
frontages and issues the repair (or full-replacement) notice record through
``NoticeIssuer``. Nothing is sent from here: delivery is the alerts' job.

Block numbering: block ``first_block + i`` is the i-th block seen in the first
file; each later file's blocks continue after the previous file's highest
(the files are taken as consecutive, non-overlapping stretches).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
from numpy.typing import NDArray

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import BlockDefect, Evidence, Photo
from sidewalk.analytics.defects import (
    CameraCalibration,
    DefectLimits,
    DepthIntrinsics,
    FiducialSpec,
    LevelReference,
    MeasurementError,
    OwnerReplacement,
    PhotoInspection,
    Rule,
    RuleCheck,
    SurfaceInspection,
    annotate,
    classify,
    measure_depth_map,
    measure_photo,
    owner_replacement_status,
)
from sidewalk.analytics.defects.classify import CONFIDENCE_SIGMAS
from sidewalk.analytics.defects.io import read_depth_png, read_image
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import (
    BlockConditionRecord,
    CaseStore,
    InspectionRecord,
    NoticeRecord,
)
from sidewalk.storage.evidence import EvidenceStore

Kind = Literal["photo", "depth"]
Progress = Callable[[int, int, str], None]

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
class InspectionReport:
    """What one ``inspect_files`` batch did."""

    frontage_id: str
    owner_id: str
    files: tuple[FileOutcome, ...]
    owner_status: OwnerReplacement
    notice: NoticeRecord | None

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


def _measure(
    raw: bytes,
    kind: Kind,
    limits: DefectLimits,
    *,
    calibration: CameraCalibration | None,
    fiducial: FiducialSpec | None,
    intrinsics: DepthIntrinsics | None,
    level: LevelReference | None,
) -> tuple[
    PhotoInspection | SurfaceInspection, list[tuple[int, bool, tuple[RuleCheck, ...]]], bytes
]:
    """Measure one file: (survey, [(image block, defective, checks)], evidence JPEG)."""
    image: NDArray[np.uint8] | NDArray[np.uint16]
    survey: PhotoInspection | SurfaceInspection
    if kind == "photo":
        if calibration is None:
            raise ValueError("photos need a camera calibration")
        image = read_image(raw)
        survey = measure_photo(image, calibration, fiducial)
        checks = _photo_checks(survey, limits)
        blocks = [(0, any(c.failed for c in checks), checks)]
    else:
        if intrinsics is None:
            raise ValueError("depth maps need the camera intrinsics")
        image = read_depth_png(raw)
        survey = measure_depth_map(image, intrinsics, level=level)
        blocks = [(b.block, b.defective, b.checks) for b in classify(survey, limits)]
    ok, jpeg = cv2.imencode(".jpg", annotate(image, survey, limits), [cv2.IMWRITE_JPEG_QUALITY, 90])
    if not ok:
        raise RuntimeError("JPEG encoder failed on the evidence image")
    return survey, blocks, jpeg.tobytes()


def inspect_files(
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
    surveyed_at: datetime | None = None,
    at: datetime | None = None,
    first_block: int = 0,
    progress: Progress | None = None,
    template_dir: Path | None = None,
    issue_notice: bool = True,
) -> InspectionReport:
    """Measure, classify and store every file, then issue the § 370-5 notice if due.

    A file that cannot be read or measured is stored as a failed inspection
    with its reason and the batch goes on. Inspections are keyed by frontage
    and file sha256; a repair notice by frontage and the set of files measured,
    a replacement notice by owner and the set of defective blocks; so running
    the same batch again stores and issues nothing new. ``progress``
    is called as (done, total, source name) after each file. With
    ``issue_notice=False`` the batch is only stored, for review before issuing.
    """
    if (kind == "photo" and calibration is None) or (kind == "depth" and intrinsics is None):
        need = "calibration" if kind == "photo" else "intrinsics"
        raise ValueError(f"{kind} inspection needs the camera {need}")
    sources = [Path(p) for p in paths]
    limits = defect_limits(profile)
    when = surveyed_at or datetime.now(UTC)
    front = cases.get_frontage(frontage)  # unknown frontage: fail before measuring anything
    outcomes: list[FileOutcome] = []
    offset = first_block
    for n, path in enumerate(sources, start=1):
        outcomes.append(
            _inspect_one(
                path, kind, frontage=frontage, when=when, offset=offset, limits=limits,
                cases=cases, evidence=evidence, profile=profile, calibration=calibration,
                fiducial=fiducial, intrinsics=intrinsics, level=level,
            )
        )  # fmt: skip
        seen = [int(b["block"]) for b in outcomes[-1].inspection.blocks]
        offset = max(seen, default=offset - 1) + 1
        if progress is not None:
            progress(n, len(sources), str(path))
    conditions = cases.owner_block_conditions(front.owner_id)
    status = owner_replacement_status((c.defective for c in conditions), limits)
    notice = None
    if issue_notice:
        notice = _issue_notice(
            NoticeIssuer(cases, profile, template_dir),
            frontage=frontage,
            owner_id=front.owner_id,
            measured=[o.inspection for o in outcomes if o.ok],
            conditions=conditions,
            status=status,
            surveyed_at=when,
            at=at or datetime.now(UTC),
        )
    return InspectionReport(frontage, front.owner_id, tuple(outcomes), status, notice)


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
    **options: Any,
) -> FileOutcome:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        # No bytes to hash: key the failure by the path so a retry is the same row.
        sha = hashlib.sha256(f"unreadable:{path}".encode()).hexdigest()
        rec = cases.record_inspection(
            frontage, surveyed_at=when, kind=kind, source_name=str(path), source_sha256=sha,
            result={}, failure=f"unreadable: {exc.strerror or exc}",
        )  # fmt: skip
        return FileOutcome(str(path), rec)
    sha = hashlib.sha256(raw).hexdigest()
    try:
        survey, blocks, jpeg = _measure(raw, kind, limits, **options)
    except MeasurementError as exc:
        rec = cases.record_inspection(
            frontage, surveyed_at=when, kind=kind, source_name=str(path), source_sha256=sha,
            result={}, failure=f"{exc.problem.value}: {exc.detail}",
        )  # fmt: skip
        return FileOutcome(str(path), rec)
    rec = cases.record_inspection(
        frontage,
        surveyed_at=when,
        kind=kind,
        source_name=str(path),
        source_sha256=sha,
        result={"units": "mm, mm/m; *_uncertainty_* one sigma", **_json(asdict(survey))},
        blocks=[
            {
                "block": offset + b,
                "image_block": b,
                "defective": bad,
                "checks": [_check_json(c, profile) for c in checks],
            }
            for b, bad, checks in blocks
        ],
        evidence_sha256=evidence.put(jpeg),
    )
    return FileOutcome(str(path), rec)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:32]


def _defects(checks: Iterable[Mapping[str, Any]], block: int) -> list[BlockDefect]:
    return [
        BlockDefect(block, str(c["rule"]), float(c["measured_mm"]), float(c["uncertainty_mm"]))
        for c in checks
        if c["failed"]
    ]


def _issue_notice(
    issuer: NoticeIssuer,
    *,
    frontage: str,
    owner_id: str,
    measured: Sequence[InspectionRecord],
    conditions: Sequence[BlockConditionRecord],
    status: OwnerReplacement,
    surveyed_at: datetime,
    at: datetime,
) -> NoticeRecord | None:
    """The repair notice for this frontage's defective blocks, or the replacement
    notice (every defective block of the owner) when the 80 % rule is met."""
    batch = {r.id for r in measured}
    # Only blocks this batch measured (and still the latest word on) call for a repair notice.
    here = [c for c in conditions if c.defective and c.inspection_id in batch]
    if not here and not status.replace_entire_sidewalk:
        return None
    if status.replace_entire_sidewalk:
        # Blocks of several frontages share numbers; number them owner-wide. One
        # replacement notice per set of defective blocks, whichever batch tipped it.
        bad = [c for c in conditions if c.defective]
        defects = [d for i, c in enumerate(bad) for d in _defects(c.checks, i)]
        ident: list[Any] = sorted([c.frontage_id, c.block] for c in bad)
        key = f"replacement/{owner_id}/{_digest(ident)}"
    else:
        defects = [d for c in here for d in _defects(c.checks, c.block)]
        key = f"{frontage}/{_digest(sorted(r.source_sha256 for r in measured))}"
    photos = tuple(
        Photo(r.evidence_sha256, r.surveyed_at, caption=Path(r.source_name).name)
        for r in measured
        if r.evidence_sha256 is not None
    )
    return issuer.repair_notice(
        key,
        frontage,
        at,
        surveyed_at=surveyed_at,
        total_blocks=status.total_blocks,
        defects=defects,
        evidence=Evidence(photos=photos),
    )


def write_demo_scene(out_dir: Path, *, fault_mm: float = 25.4, seed: int = 11) -> dict[str, Path]:
    """Render a synthetic frontage with known defects for trying the commands.

    Writes ``depth.png`` (16-bit mm) and ``intrinsics.json`` of a depth camera
    over a joint faulted by ``fault_mm`` (default 1 in, over the 3/4 in
    limit), and ``photo.jpg`` with ``calibration.json`` of a survey photo of
    the same walk with a 150 mm ground marker. Returns the paths by name.
    """
    from sidewalk.analytics.defects.synthetic import (
        depth_survey_camera,
        place_marker,
        random_scene,
        render_depth,
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
    return paths


def load_calibration(path: Path) -> CameraCalibration:
    """A camera calibration JSON: ``{"matrix": 3x3, "distortion": [k1, k2, p1, p2, k3]}``."""
    data = json.loads(path.read_text())
    return CameraCalibration(
        np.array(data["matrix"], np.float64), np.array(data["distortion"], np.float64)
    )


def load_intrinsics(path: Path) -> DepthIntrinsics:
    """Depth intrinsics JSON: ``{"fx": …, "fy": …, "cx": …, "cy": …}`` in pixels."""
    data = json.loads(path.read_text())
    return DepthIntrinsics(
        float(data["fx"]), float(data["fy"]), float(data["cx"]), float(data["cy"])
    )
