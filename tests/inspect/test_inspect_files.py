"""End to end on synthetic scenes of known geometry: files -> stored inspections,
evidence images, and the § 370-5 repair / replacement notices."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from sidewalk.alerts.inspections import InspectionReport, inspect_files
from sidewalk.analytics.inspect import (
    load_calibration,
    load_intrinsics,
    load_laser_rig,
)
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore

from .conftest import FRONTAGES, T0


def _depth(
    files: list[Path], frontage: str, cases: CaseStore, evidence: EvidenceStore, profile: Profile,
    *, first_block: int = 0, stations_mm: list[float] | None = None,
    frontage_blocks: int | None = None,
) -> InspectionReport:  # fmt: skip
    return inspect_files(
        files, frontage=frontage, kind="depth", cases=cases, evidence=evidence, profile=profile,
        intrinsics=load_intrinsics(files[0].parent / "intrinsics.json"), surveyed_at=T0, at=T0,
        first_block=first_block, stations_mm=stations_mm, frontage_blocks=frontage_blocks,
    )  # fmt: skip


def test_one_inch_fault_is_stored_and_noticed_once(
    faulted: dict[str, Path],
    sound: dict[str, Path],
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
) -> None:
    files = [sound["depth"], faulted["depth"]]
    report = _depth(files, "main-101", cases, evidence, profile)

    sound_rec, fault_rec = (f.inspection for f in report.files)
    assert [b["defective"] for b in sound_rec.blocks] == [False, False]
    assert [(b["block"], b["defective"]) for b in fault_rec.blocks] == [(2, True), (3, True)]
    vertical = [c for c in fault_rec.blocks[0]["checks"] if c["rule"] == "vertical_differential"]
    assert vertical[0]["measured_mm"] == pytest.approx(25.4, abs=1.6)
    assert vertical[0]["limit_mm"] == pytest.approx(19.05)
    assert "370-5" in vertical[0]["citation"]
    assert fault_rec.result["joints"][0]["vertical_differential_uncertainty_mm"] > 0
    # The annotated evidence is a real JPEG in the content-addressed store, with red marks.
    assert fault_rec.evidence_sha256 in evidence
    img = np.asarray(
        cv2.imdecode(np.frombuffer(evidence.get(str(fault_rec.evidence_sha256)), np.uint8), 1)
    )
    assert ((img[..., 2] > 200) & (img[..., 1] < 60) & (img[..., 0] < 60)).sum() > 100

    assert (report.owner_status.total_blocks, report.owner_status.defective_blocks) == (4, 2)
    assert report.notice is not None
    assert report.notice.kind == "repair_notice"
    assert report.notice.citation == profile.sidewalk_condition.vertical_differential.citation
    assert {d["block"] for d in report.notice.detail["defects"]} == {2, 3}
    assert [p["sha256"] for p in report.notice.detail["photos"]] == [
        sound_rec.evidence_sha256,
        fault_rec.evidence_sha256,
    ]

    again = _depth(files, "main-101", cases, evidence, profile)
    assert again.notice is not None
    assert again.notice.id == report.notice.id
    assert len(cases.notices.list()) == 1
    assert len(cases.inspections.list(frontage_id="main-101")) == 2


def test_sound_walk_issues_nothing(
    sound: dict[str, Path], cases: CaseStore, evidence: EvidenceStore, profile: Profile
) -> None:
    report = _depth([sound["depth"]], "main-101", cases, evidence, profile)
    assert report.notice is None
    assert report.owner_status.defective_blocks == 0
    assert cases.notices.list() == []


def test_eighty_percent_of_the_owners_blocks_calls_for_replacement(
    faulted: dict[str, Path],
    sound: dict[str, Path],
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
) -> None:
    # Each frontage's block count is recorded with its survey; the owner's total
    # is known once every frontage has one (the last batch).
    first = _depth(
        [sound["depth"], faulted["depth"]], FRONTAGES[0], cases, evidence, profile,
        frontage_blocks=4,
    )  # fmt: skip
    assert first.notice is not None
    assert first.notice.kind == "repair_notice"  # 2 of 4
    shares = []
    for fid in FRONTAGES[1:]:
        report = _depth([faulted["depth"]], fid, cases, evidence, profile, frontage_blocks=2)
        shares.append(round(report.owner_status.defective_fraction, 3))
        assert report.notice is not None
    assert shares == [0.667, 0.75, 0.8]
    assert report.owner_status.survey_complete
    assert report.owner_status.owner_blocks == 10
    last = report.notice
    assert last is not None
    assert last.kind == "replacement_notice"
    assert last.frontage_id == FRONTAGES[-1]
    assert last.citation == profile.sidewalk_condition.replacement_share.citation
    assert last.detail["total_blocks"] == 10
    assert len({d["block"] for d in last.detail["defects"]}) == 8

    again = _depth([faulted["depth"]], FRONTAGES[-1], cases, evidence, profile, frontage_blocks=2)
    assert again.notice is not None
    assert again.notice.id == last.id
    kinds = sorted(n.kind for n in cases.notices.list())
    assert kinds == ["repair_notice"] * 3 + ["replacement_notice"]


def test_bad_files_are_recorded_and_the_batch_goes_on(
    faulted: dict[str, Path],
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
    tmp_path: Path,
) -> None:
    garbage = tmp_path / "garbage.jpg"
    garbage.write_bytes(b"not an image at all")
    photo = np.asarray(cv2.imread(str(faulted["photo"])))
    bright = tmp_path / "bright.jpg"
    cv2.imwrite(str(bright), np.clip(photo.astype(np.int32) * 4, 0, 255).astype(np.uint8))
    files = [tmp_path / "missing.jpg", garbage, bright, faulted["photo"]]
    seen: list[tuple[int, int]] = []
    report = inspect_files(
        files, frontage="main-101", kind="photo", cases=cases, evidence=evidence,
        profile=profile, calibration=load_calibration(faulted["calibration"]), surveyed_at=T0,
        at=T0, progress=lambda done, total, _name: seen.append((done, total)),
    )  # fmt: skip

    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    reasons = [f.inspection.failure for f in report.files]
    assert reasons[0] is not None
    assert reasons[0].startswith("unreadable")
    assert reasons[1] is not None
    assert reasons[1].startswith("unreadable")
    assert reasons[2] is not None
    assert reasons[2].startswith("overexposed")
    assert reasons[3] is None
    stored = cases.inspections.list(frontage_id="main-101")
    assert [r.status for r in stored] == ["failed", "failed", "failed", "ok"]
    gap = report.files[3].inspection.blocks[0]["checks"]
    assert gap
    assert all(c["rule"] == "horizontal_gap" for c in gap)
    assert report.files[3].inspection.evidence_sha256 in evidence


def test_incomplete_survey_does_not_call_for_replacement(
    faulted: dict[str, Path],
    sound: dict[str, Path],
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
) -> None:
    # Both surveyed blocks defective, but the owner's other frontages have no count.
    first = _depth([faulted["depth"]], FRONTAGES[0], cases, evidence, profile, frontage_blocks=6)
    s = first.owner_status
    assert (s.defective_blocks, s.total_blocks, s.owner_blocks) == (2, 2, None)
    assert not s.survey_complete
    assert not s.replace_entire_sidewalk
    assert first.notice is None
    assert first.notice_held is not None
    assert "incomplete survey: 2 of ? blocks" in first.notice_held
    assert cases.notices.list() == []
    # Counts recorded for the other frontages (surveyed sound): 2 of 6 + 3 x 2 blocks.
    for fid in FRONTAGES[1:]:
        last = _depth([sound["depth"]], fid, cases, evidence, profile, frontage_blocks=2)
    s = last.owner_status
    assert (s.defective_blocks, s.total_blocks, s.owner_blocks) == (2, 8, 12)
    assert not s.survey_complete
    assert "incomplete survey: 8 of 12 blocks" in s.describe()
    assert s.defective_fraction == pytest.approx(2 / 12)
    assert not s.replace_entire_sidewalk


def test_stations_place_joints_and_check_their_spacing(
    faulted: dict[str, Path],
    sound: dict[str, Path],
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
) -> None:
    files = [sound["depth"], faulted["depth"]]
    report = _depth(files, FRONTAGES[0], cases, evidence, profile, stations_mm=[1000.0, 17500.0])
    offsets = [f.inspection.result["survey"]["joint_offsets_mm"] for f in report.files]
    assert all(len(o) == 1 for o in offsets)
    # The joint's along-walk offset is the measured joint centre in the camera frame.
    for f, (o,) in zip(report.files, offsets, strict=True):
        assert o == pytest.approx(f.inspection.result["joints"][0]["center_mm"][0], abs=0.1)
    expected = (1000.0 + offsets[0][0], 17500.0 + offsets[1][0])
    assert report.joint_stations_mm == pytest.approx(expected)
    assert report.frontage is not None
    (spacing,) = report.frontage.checks
    assert spacing.measured == pytest.approx(expected[1] - expected[0])
    assert spacing.limit == pytest.approx(15240.0)  # 50 ft from the profile
    assert spacing.failed
    # A joint surveyed in between: two spacings under 50 ft.
    mid = _depth([sound["depth"]], FRONTAGES[1], cases, evidence, profile, stations_mm=[0.0])
    assert mid.frontage is None  # one joint on that frontage: no spacing yet
    other = sound["depth"].parent / "again.png"
    other.write_bytes(sound["depth"].read_bytes() + b"\0")  # another file, same image
    between = _depth([other], FRONTAGES[0], cases, evidence, profile, stations_mm=[9000.0])
    assert len(between.joint_stations_mm) == 3
    assert between.frontage is not None
    assert [c.failed for c in between.frontage.checks] == [False, False]


def test_laser_frames_are_measured_stored_and_noticed(
    faulted: dict[str, Path], cases: CaseStore, evidence: EvidenceStore, profile: Profile
) -> None:
    report = inspect_files(
        [faulted["laser"]], frontage="main-101", kind="laser", cases=cases, evidence=evidence,
        profile=profile, rig=load_laser_rig(faulted["laser_rig"]), surveyed_at=T0, at=T0,
        first_block=4, frontage_blocks=2,
    )  # fmt: skip
    (f,) = report.files
    assert f.ok, f.inspection.failure
    rec = f.inspection
    assert rec.kind == "laser"
    assert rec.result["vertical_differential_mm"] == pytest.approx(25.4, abs=1.6)
    assert rec.result["edge_type"] == "tooled_joint"
    assert "profile_mm" not in rec.result  # drawing-only
    assert [(b["block"], b["defective"]) for b in rec.blocks] == [(4, True), (5, True)]
    rules = {c["rule"]: c for c in rec.blocks[0]["checks"]}
    assert rules["vertical_differential"]["failed"]
    assert not rules["horizontal_gap"]["failed"]
    assert rec.evidence_sha256 in evidence
    img = np.asarray(
        cv2.imdecode(np.frombuffer(evidence.get(str(rec.evidence_sha256)), np.uint8), 1)
    )
    assert ((img[..., 2] > 200) & (img[..., 1] < 60) & (img[..., 0] < 60)).sum() > 100
    assert report.notice is None  # the owner's other frontages have no block count
    assert report.notice_held is not None


def test_station_count_must_match_the_files(
    sound: dict[str, Path], cases: CaseStore, evidence: EvidenceStore, profile: Profile
) -> None:
    with pytest.raises(ValueError, match="stations"):
        _depth([sound["depth"]], "main-101", cases, evidence, profile, stations_mm=[0.0, 1.0])
    with pytest.raises(ValueError, match="rig"):
        inspect_files(
            [sound["laser"]], frontage="main-101", kind="laser", cases=cases,
            evidence=evidence, profile=profile,
        )  # fmt: skip
