"""A photo from the inspector's round that holds the survey marker is measured (§ 370-5).

The same survey-photo path as ``sidewalk inspect --kind photo`` (docs/defects.md):
``measure_files`` finds the ground marker, measures the gap across each joint or
crack, classifies it against the profile's limits and stores the inspection (keyed
by frontage and the photo's sha256, so a photo sent twice is measured once) with
its annotated evidence. Nothing is issued from here: the clerk reviews it on the
property page. A photo without the marker is evidence only; a photo with it that
cannot be measured (no calibration for the phone's camera, no joint or crack found,
marker too small, blur …) is stored as "not measured" with the reason, never a pass.

Each phone is measured with its own lens: the calibration is chosen by the make and
model the photo's EXIF names, from the Village's registry (``<data_dir>/phone-cameras/``,
one file per model, ``sidewalk inspect phone-camera`` adds one). An unknown phone is
measured with the marker alone and its record says so, or, when its lens is too wide
for the marker alone to hold 1/16 in, "not measured" with why
(``sidewalk.analytics.phone_cameras``).

OpenCV and the measurement load on the first photo with a marker, not at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidewalk.analytics.phone_cameras import MARKER_ONLY_NOTE, choose, read_photo_camera
from sidewalk.analytics.survey import PHONE_NOT_CALIBRATED, failure_words
from sidewalk.core.profile import Profile
from sidewalk.core.units import MM_PER_INCH
from sidewalk.storage.cases import CaseStore, InspectionRecord
from sidewalk.storage.evidence import EvidenceStore

if TYPE_CHECKING:
    from sidewalk.analytics.defects import CameraCalibration, FiducialSpec


def _default_marker() -> FiducialSpec:
    from sidewalk.analytics.defects import FiducialSpec

    return FiducialSpec()  # the survey procedure's 150 mm 4X4_50 marker, as `sidewalk inspect`


@dataclass(frozen=True)
class PhoneCamera:
    """How round photos are measured: by each phone's calibration from ``registry`` (the
    data directory's ``phone-cameras/``), else with the marker alone. ``calibration``
    (tests, one known camera) serves every phone; with neither, nothing is measured."""

    calibration: CameraCalibration | None = None
    marker: FiducialSpec = field(default_factory=_default_marker)
    registry: Path | None = None


@dataclass(frozen=True)
class PhotoSurvey:
    """What became of a round photo with the marker in it, said for the inspector."""

    measured: bool
    words: str


def holds_marker(jpeg: bytes, marker: FiducialSpec) -> bool:
    """True when the photo shows an ArUco marker of the survey's dictionary (and id)."""
    from sidewalk.analytics.defects.fiducial import photo_holds_marker

    return photo_holds_marker(jpeg, marker)


def _inches(mm: float) -> str:
    return f"{mm / MM_PER_INCH:.2f} in"


def describe(record: InspectionRecord) -> PhotoSurvey:
    """The stored inspection in the inspector's words (never "ok" without a measurement)."""
    if record.status != "ok":
        return PhotoSurvey(False, f"Not measured: {failure_words(record.failure or '')}.")
    checks: list[dict[str, Any]] = [c for b in record.blocks for c in b.get("checks", ())]
    if not checks:  # stored as measured but with nothing checked: not a pass
        return PhotoSurvey(False, "Not measured: nothing in the photo could be checked.")
    worst = max(checks, key=lambda c: float(c["measured_mm"]) - float(c["limit_mm"]))
    what = str(worst.get("rule", "")).replace("_", " ")
    size = (
        f"{what} {_inches(float(worst['measured_mm']))}, limit {_inches(float(worst['limit_mm']))}"
    )
    # A phone measured with the marker alone says so wherever the result is read.
    marker_only = (record.result.get("survey") or {}).get("camera") == MARKER_ONLY_NOTE
    tail = f"; {MARKER_ONLY_NOTE}" if marker_only else ""
    if any(c.get("failed") for c in checks):
        return PhotoSurvey(True, f"Measured: defective ({size}{tail}).")
    return PhotoSurvey(True, f"Measured: within the limit ({size}{tail}).")


def survey_photo(
    sha256: str,
    *,
    frontage: str,
    at: datetime,
    camera: PhoneCamera,
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
) -> PhotoSurvey | None:
    """Measure the stored photo if it holds the survey marker; None when it does not."""
    jpeg = evidence.get(sha256)
    if not holds_marker(jpeg, camera.marker):
        return None
    calibration, note, refusal = _camera_for(jpeg, camera, profile)
    if calibration is None:
        record = cases.inspections.record(
            frontage, surveyed_at=at, kind="photo", source_name=f"round photo {sha256[:12]}",
            source_sha256=sha256, result={"survey": {"source": "round"}},
            failure=f"not_measured: {PHONE_NOT_CALIBRATED}" + (f": {refusal}" if refusal else ""),
        )  # fmt: skip
        return describe(record)
    from sidewalk.analytics.inspect import measure_files

    batch = measure_files(
        [evidence.path(sha256)], frontage=frontage, kind="photo", cases=cases,
        evidence=evidence, profile=profile, calibration=calibration,
        fiducial=camera.marker, surveyed_at=at, camera_note=note,
    )  # fmt: skip
    return describe(batch.files[0].inspection)


def _camera_for(
    jpeg: bytes, camera: PhoneCamera, profile: Profile
) -> tuple[CameraCalibration | None, str, str]:
    """(calibration, note for the record, refusal in the inspector's words) for this photo.

    A bad registry file is a refusal naming it, so the photo is kept as not measured."""
    if camera.calibration is not None or camera.registry is None:
        return camera.calibration, "", ""
    from sidewalk.analytics.defects.camera_inputs import DefectInputError
    from sidewalk.analytics.inspect import defect_limits
    from sidewalk.analytics.phone_cameras import nominal_calibration

    photo = read_photo_camera(jpeg)
    limit = defect_limits(profile).horizontal_gap_mm
    try:
        chosen = choose(photo, camera.registry, gap_limit_mm=limit)
    except DefectInputError as exc:
        return None, "", f"this phone's calibration file is damaged ({exc.source}; the village"
        " IT person fixes it)"
    if chosen.refusal or chosen.calibration is not None:
        return (
            chosen.calibration,
            f"calibration {chosen.source}" if chosen.source else "",
            (chosen.refusal),
        )
    if photo.width is None or photo.height is None:
        return None, "", "the photo's size could not be read"
    size = (
        (photo.height, photo.width) if photo.orientation in (6, 8) else (photo.width, photo.height)
    )
    return nominal_calibration(photo, size), chosen.note, ""
