"""A photo from the inspector's round that holds the survey marker is measured (§ 370-5).

The same survey-photo path as ``sidewalk inspect --kind photo`` (docs/defects.md):
``measure_files`` finds the ground marker, measures the gap across each joint or
crack, classifies it against the profile's limits and stores the inspection (keyed
by frontage and the photo's sha256, so a photo sent twice is measured once) with
its annotated evidence. Nothing is issued from here: the clerk reviews it on the
property page. A photo without the marker is evidence only; a photo with it that
cannot be measured (no calibration for the phone's camera, no joint or crack found,
marker too small, blur …) is stored as "not measured" with the reason, never a pass.

OpenCV and the measurement load on the first photo with a marker, not at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

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
    """The inspectors' phone camera (``None`` calibration: photos are not measured)."""

    calibration: CameraCalibration | None = None
    marker: FiducialSpec = field(default_factory=_default_marker)


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
    if any(c.get("failed") for c in checks):
        return PhotoSurvey(True, f"Measured: defective ({size}).")
    return PhotoSurvey(True, f"Measured: within the limit ({size}).")


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
    if not holds_marker(evidence.get(sha256), camera.marker):
        return None
    if camera.calibration is None:
        record = cases.inspections.record(
            frontage, surveyed_at=at, kind="photo", source_name=f"round photo {sha256[:12]}",
            source_sha256=sha256, result={"survey": {"source": "round"}},
            failure=f"not_measured: {PHONE_NOT_CALIBRATED}",
        )  # fmt: skip
        return describe(record)
    from sidewalk.analytics.inspect import measure_files

    batch = measure_files(
        [evidence.path(sha256)], frontage=frontage, kind="photo", cases=cases,
        evidence=evidence, profile=profile, calibration=camera.calibration,
        fiducial=camera.marker, surveyed_at=at,
    )  # fmt: skip
    return describe(batch.files[0].inspection)
