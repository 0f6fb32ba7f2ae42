"""Absence of evidence is never compliance: a depth map with no joint where one
is expected, or in other depth units, is stored as not measured, its blocks
are not counted as surveyed, and no notice or pass follows from it."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from sidewalk.alerts.inspections import InspectionReport, inspect_files
from sidewalk.analytics.defects import DepthIntrinsics
from sidewalk.analytics.inspect import load_intrinsics
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore

from .conftest import T0


def _run(  # noqa: PLR0917 - the fixtures, in order
    files: list[Path],
    intr: DepthIntrinsics,
    cases: CaseStore,
    ev: EvidenceStore,
    profile: Profile,
    frontage: str = "main-101",
) -> InspectionReport:
    return inspect_files(
        files, frontage=frontage, kind="depth", cases=cases, evidence=ev, profile=profile,
        intrinsics=intr, surveyed_at=T0, at=T0, frontage_blocks=2,
    )  # fmt: skip


def test_a_depth_map_without_a_joint_is_not_measured(
    tmp_path: Path, cases: CaseStore, evidence: EvidenceStore, profile: Profile
) -> None:
    # One flat slab filling the view, 1.1 m below the camera: no joint to measure.
    h, w = 360, 640
    rng = np.random.default_rng(3)
    depth = (1100 + rng.normal(0, 0.7, (h, w))).astype(np.uint16)
    path = tmp_path / "slab.png"
    cv2.imwrite(str(path), depth)
    report = _run([path], DepthIntrinsics(450.0, 450.0, w / 2, h / 2), cases, evidence, profile)
    (rec,) = (f.inspection for f in report.files)
    assert rec.status != "ok"
    assert rec.failure is not None
    assert rec.failure.startswith("not_measured: no joint found")
    assert not rec.blocks
    # Nothing surveyed: the frontage's survey is incomplete, no notice.
    assert report.owner_status.total_blocks == 0
    assert not report.owner_status.survey_complete
    assert report.notice is None


def test_a_map_in_quarter_millimetres_read_as_millimetres_is_not_measured(
    faulted: dict[str, Path], tmp_path: Path, cases: CaseStore, evidence: EvidenceStore,
    profile: Profile,
) -> None:  # fmt: skip
    depth = np.asarray(cv2.imread(str(faulted["depth"]), cv2.IMREAD_UNCHANGED))
    quarter = tmp_path / "quarter.png"
    cv2.imwrite(str(quarter), np.clip(depth.astype(np.int64) * 4, 0, 65535).astype(np.uint16))
    intr = load_intrinsics(faulted["intrinsics"])
    report = _run([quarter], intr, cases, evidence, profile)
    (rec,) = (f.inspection for f in report.files)
    assert rec.failure is not None
    assert rec.failure.startswith("not_measured:")
    assert "other units" in rec.failure
    # With its scale it is measured: the 1 in fault, both blocks defective
    # (another frontage: a file is stored once per frontage and sha256).
    scaled = DepthIntrinsics(intr.fx, intr.fy, intr.cx, intr.cy, depth_scale_mm=0.25)
    again = _run([quarter], scaled, cases, evidence, profile, frontage="main-103")
    assert again.files[-1].inspection.status == "ok"
    assert [b["defective"] for b in again.files[-1].inspection.blocks] == [True, True]
