"""The notice states the owner's count as the aggregation knew it, and one image's
unexpected measurement error is recorded against it while the batch goes on."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from sidewalk.alerts.inspections import inspect_files
from sidewalk.analytics import inspect as inspect_module
from sidewalk.analytics.defects import MM_PER_INCH, measure_depth_map
from sidewalk.analytics.inspect import load_intrinsics, owner_survey
from sidewalk.core.profile import Profile, load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore

from .conftest import FRONTAGES, T0
from .test_inspect_files import _depth


def test_an_unexpected_error_in_one_image_is_recorded_and_the_batch_goes_on(
    faulted: dict[str, Path],
    cases: CaseStore,
    evidence: EvidenceStore,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The same image under another name (another sha256): the first file breaks.
    other = faulted["depth"].parent / "breaks.png"
    other.write_bytes(faulted["depth"].read_bytes() + b"\0")
    calls: list[int] = []

    def first_one_breaks(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise ZeroDivisionError("float division by zero")
        return measure_depth_map(*args, **kwargs)

    monkeypatch.setattr(inspect_module, "measure_depth_map", first_one_breaks)
    with caplog.at_level(logging.ERROR, logger="sidewalk.analytics.inspect"):
        report = inspect_files(
            [other, faulted["depth"]], frontage="main-101", kind="depth", cases=cases,
            evidence=evidence, profile=load_profile(), surveyed_at=T0, at=T0, frontage_blocks=4,
            intrinsics=load_intrinsics(faulted["intrinsics"]),
        )  # fmt: skip
    broken, measured = report.files
    assert broken.inspection.status == "failed"
    assert (
        broken.inspection.failure == "measurement_failed: ZeroDivisionError: float division by zero"
    )
    assert measured.ok
    assert [b["defective"] for b in measured.inspection.blocks] == [True, True]
    # Only the measured file's blocks count: 2 surveyed, both defective.
    assert (report.owner_status.total_blocks, report.owner_status.defective_blocks) == (2, 2)
    # The traceback is in the log, against the file.
    (rec,) = [r for r in caplog.records if str(other) in r.getMessage()]
    assert rec.exc_info is not None
    assert rec.exc_info[0] is ZeroDivisionError


def test_the_notice_says_how_the_owners_total_was_counted(
    faulted: dict[str, Path],
    sound: dict[str, Path],
    cases: CaseStore,
    evidence: EvidenceStore,
    profile: Profile,
) -> None:
    # main-103: count on record; main-101: two stationed joints 6 m apart on a
    # 66 ft frontage; the other two frontages: unknown, so no total.
    _depth([sound["depth"]], FRONTAGES[1], cases, evidence, profile, frontage_blocks=3)
    report = _depth(
        [sound["depth"], faulted["depth"]], FRONTAGES[0], cases, evidence, profile,
        stations_mm=[1000.0, 7000.0],
    )  # fmt: skip
    _status, survey = owner_survey(cases, "owner-smith", _limits(profile))
    by_id = {f.frontage: f for f in survey.frontages}
    spaced = by_id[FRONTAGES[0]]
    assert spaced.basis == "length_spacing"
    assert spaced.joints == 2
    assert spaced.spacing_ft is not None
    assert spaced.spacing_ft * 304.8 == pytest.approx(
        report.joint_stations_mm[1] - report.joint_stations_mm[0], abs=2.0
    )
    assert spaced.blocks == round(66.0 / spaced.spacing_ft)
    assert by_id[FRONTAGES[1]].basis == "recorded"
    assert by_id[FRONTAGES[1]].blocks == 3
    assert by_id[FRONTAGES[2]].basis == "unknown"
    assert survey.owner_blocks is None
    assert (survey.surveyed_blocks, survey.defective_blocks) == (6, 2)

    notice = report.notice
    assert notice is not None
    assert notice.kind == "repair_notice"
    assert notice.detail["survey"]["owner_blocks"] is None
    text = " ".join(str(notice.body_text).split())
    assert "Blocks measured: 6 of an unknown number of blocks" in text
    assert "(survey incomplete)" in text
    assert "103 Main St: 3 blocks (recorded block count)" in text
    assert (
        f"101 Main St: {spaced.blocks} blocks"
        " (frontage length 66.0 ft / measured"
        f" joint spacing {spaced.spacing_ft:.1f} ft, 2 joints)"
    ) in text
    assert "107 Main St: not known" in text
    assert not any(f in text for f in FRONTAGES)  # addresses, never record ids
    assert "The number of blocks along all of your sidewalk is not yet known" in text
    # The fault is still 1 in: the notice's measured value agrees with the file.
    assert any(abs(d["measured_mm"] - MM_PER_INCH) < 1.6 for d in notice.detail["defects"])


def _limits(profile: Profile) -> Any:
    return inspect_module.defect_limits(profile)
