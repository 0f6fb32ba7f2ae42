"""Measuring a stored "not measured" file again.

A survey file recorded as not measured (a marker too small, a depth map in
other units, …) is kept in the evidence store under its sha256
(``inspect._inspect_one``). With a new calibration or marker option it can be
measured again: the new result is a row of its own beside the first, which
is never changed, and says which inspection it re-measures, who asked for it,
when, and with what options. The latest row of a block wins the 80 % count as
for any survey (``cases.inspections.owner_block_conditions``); the re-measured
row keeps the file's survey time, so it only replaces the first one.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sidewalk.analytics.defects import (
    CameraCalibration,
    DepthIntrinsics,
    FiducialSpec,
    InputProblem,
    LaserRig,
    LevelReference,
    MeasurementError,
)
from sidewalk.analytics.inspect import (
    Kind,
    _measure,
    defect_limits,
    measured_rows,
)
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore, InspectionRecord
from sidewalk.storage.evidence import EvidenceStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Remeasured:
    """The first (not measured) inspection and the new one beside it."""

    first: InspectionRecord
    again: InspectionRecord

    @property
    def ok(self) -> bool:
        return self.again.status == "ok"


def find_inspection(cases: CaseStore, inspection_id: int) -> InspectionRecord:
    """The stored inspection with this number (ValueError naming it if none)."""
    for rec in cases.inspections.list():
        if rec.id == inspection_id:
            return rec
    raise ValueError(f"inspection {inspection_id}: no such inspection")


def remeasure(
    inspection_id: int,
    *,
    by: str,
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
    options: Mapping[str, Any],
    source: bytes | None = None,
    calibration: CameraCalibration | None = None,
    fiducial: FiducialSpec | None = None,
    intrinsics: DepthIntrinsics | None = None,
    level: LevelReference | None = None,
    rig: LaserRig | None = None,
    now: datetime | None = None,
) -> Remeasured:
    """Measure a stored not-measured file again and store the result beside it.

    ``options`` are the options as the user gave them (recorded with the
    result); ``source`` the file's bytes when the store did not keep them
    (they must hash to the stored sha256). The same options again return the
    row already stored. Raises ValueError, naming what is wrong, for an
    unknown or already measured inspection, a missing or different file, or
    no name in ``by``.
    """
    who = by.strip()
    if not who:
        raise ValueError("--by: name who asks for the new measurement")
    first = find_inspection(cases, inspection_id)
    if first.status == "ok":
        raise ValueError(
            f"inspection {inspection_id} was measured; only a file not measured is measured again"
        )
    raw = source
    if raw is None:
        if first.source_sha256 not in evidence:
            raise ValueError(
                f"inspection {inspection_id}: the file {first.source_name} was not kept;"
                " give it with --file"
            )
        raw = evidence.get(first.source_sha256)
    elif hashlib.sha256(raw).hexdigest() != first.source_sha256:
        raise ValueError(
            f"--file is not the file of inspection {inspection_id} ({first.source_name}):"
            " its sha256 differs"
        )
    kind: Kind = first.kind  # type: ignore[assignment]  # stored by measure_files
    need = {"photo": calibration, "depth": intrinsics, "laser": rig}[kind]
    if need is None:
        what = {"photo": "--calibration", "depth": "--intrinsics", "laser": "--rig"}[kind]
        raise ValueError(f"{what}: inspection {inspection_id} is a {kind} file; give it")
    limits = defect_limits(profile)
    survey = dict(first.result.get("survey") or {})
    offset = int(survey.get("first_block") or 0)
    when = now or datetime.now(UTC)
    opts = {k: v for k, v in sorted(options.items()) if v is not None}
    label = hashlib.sha256(json.dumps(opts, sort_keys=True).encode()).hexdigest()[:16]
    again = {
        "of": first.id,
        "by": who,
        "at": when.isoformat(),
        "options": opts,
        "first_failure": first.failure,
    }
    common: dict[str, Any] = {
        "surveyed_at": first.surveyed_at,
        "kind": kind,
        "source_name": first.source_name,
        "source_sha256": first.source_sha256,
        "again": label,
    }
    try:
        measured, blocks, jpeg = _measure(
            raw, kind, limits, calibration=calibration, fiducial=fiducial,
            intrinsics=intrinsics, level=level, rig=rig,
        )  # fmt: skip
    except MeasurementError as exc:
        rec = cases.inspections.record(
            first.frontage_id, **common, result={"survey": survey, "remeasure": again},
            failure=f"{exc.problem.value}: {exc.detail}",
        )  # fmt: skip
        return Remeasured(first, rec)
    except Exception as exc:
        log.exception("measuring inspection %s again failed", inspection_id)
        rec = cases.inspections.record(
            first.frontage_id, **common, result={"survey": survey, "remeasure": again},
            failure=f"{InputProblem.MEASUREMENT_FAILED.value}: {type(exc).__name__}: {exc}",
        )  # fmt: skip
        return Remeasured(first, rec)
    result, rows = measured_rows(measured, blocks, survey, offset, profile)
    rec = cases.inspections.record(
        first.frontage_id,
        **common,
        result={**result, "remeasure": again},
        blocks=rows,
        evidence_sha256=evidence.put(jpeg),
    )
    return Remeasured(first, rec)
