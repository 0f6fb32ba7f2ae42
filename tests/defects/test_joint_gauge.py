"""The straight-joint gauge on phone photos from the independent renderer
(bench/joint_photos.py: its own slabs, shadows, marker and camera; exact truth)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from bench.joint_photos import MARKER_MM, JointPhoto, render
from sidewalk.analytics.defects import (
    CameraCalibration,
    FiducialSpec,
    InputProblem,
    MeasurementError,
    PhotoParams,
    measure_photo,
)
from sidewalk.analytics.defects.fiducial import photo_holds_marker
from sidewalk.analytics.defects.io import ImageFailure, inspect_photos
from sidewalk.analytics.defects.joint_gauge import JointGaugeParams
from sidewalk.analytics.defects.results import CrackTrace, EdgeType

TOLERANCE = 25.4 / 16
SPEC = FiducialSpec(side_mm=MARKER_MM)


@pytest.fixture(scope="module")
def photo() -> JointPhoto:
    # A 41.5 mm joint (over the 1 1/4 in limit) 82 px marker, 55 degrees oblique.
    return render(7, supersample=1)


@pytest.fixture(scope="module")
def far_photo() -> JointPhoto:
    # A 36.6 mm joint, the marker 58 px across (under the cracks' 60 px floor).
    return render(19, supersample=1)


def _calib(ph: JointPhoto) -> CameraCalibration:
    return CameraCalibration(ph.matrix, np.zeros(5))


def _joint(ph: JointPhoto, insp_cracks: tuple[CrackTrace, ...]) -> CrackTrace:
    p0, d0 = ph.joint_in_marker_frame()
    on = [
        c
        for c in insp_cracks
        if abs(float(d0[0] * (c.center_mm[1] - p0[1]) - d0[1] * (c.center_mm[0] - p0[0])))
        <= ph.gap_mm / 2 + 5
    ]
    assert len(on) == 1, "the joint is traced once, on its centre line"
    return on[0]


@pytest.mark.parametrize("which", ["photo", "far_photo"])
def test_the_joint_is_measured_between_its_edge_lines_in_the_marker_frame(
    which: str, request: pytest.FixtureRequest
) -> None:
    ph: JointPhoto = request.getfixturevalue(which)
    insp = measure_photo(ph.image, _calib(ph), SPEC)
    c = _joint(ph, insp.cracks)
    assert c.edge_type is EdgeType.TOOLED_JOINT
    assert c.gap_resolved
    err = c.gap_width_mm - ph.gap_mm
    assert abs(err) <= TOLERANCE
    assert abs(err) <= 2 * c.gap_width_uncertainty_mm
    assert 2 * c.gap_width_uncertainty_mm <= TOLERANCE
    assert c.length_mm > 300


def test_a_photo_without_a_joint_is_not_measured_by_the_api_as_by_the_command_line() -> None:
    ph = render(19, supersample=1, joint=False)
    with pytest.raises(MeasurementError) as err:
        measure_photo(ph.image, _calib(ph), SPEC)
    assert err.value.problem is InputProblem.NOT_MEASURED
    assert "no joint or crack found" in err.value.detail
    ok, jpg = cv2.imencode(".jpg", ph.image)
    assert ok
    (out,) = inspect_photos([jpg.tobytes()], _calib(ph), SPEC)
    assert isinstance(out, ImageFailure)
    assert out.problem is InputProblem.NOT_MEASURED


def test_a_marker_too_small_to_read_is_refused_in_words(far_photo: JointPhoto) -> None:
    small = np.asarray(
        cv2.resize(far_photo.image, None, fx=0.35, fy=0.35, interpolation=cv2.INTER_AREA), np.uint8
    )
    k = far_photo.matrix.copy()
    k[:2] *= 0.35
    with pytest.raises(MeasurementError) as err:
        measure_photo(small, CameraCalibration(k, np.zeros(5)), SPEC)
    assert err.value.problem in {InputProblem.FIDUCIAL_TOO_SMALL, InputProblem.NO_FIDUCIAL}
    assert "px" in err.value.detail or "no ArUco marker" in err.value.detail


def test_a_width_the_uncertainty_cannot_decide_is_refused_not_stated(photo: JointPhoto) -> None:
    strict = PhotoParams(joint=JointGaugeParams(max_two_sigma_mm=0.3))
    with pytest.raises(MeasurementError) as err:
        measure_photo(photo.image, _calib(photo), SPEC, params=strict)
    assert err.value.problem is InputProblem.NOT_MEASURED
    assert "gap width too uncertain" in err.value.detail
    assert "take" in err.value.detail  # what to do about it


@pytest.mark.parametrize("raw", [b"", b"not a jpeg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00truncated"])
def test_a_corrupt_upload_holds_no_marker_and_does_not_crash(raw: bytes) -> None:
    assert photo_holds_marker(raw, SPEC) is False


def test_a_photo_of_the_marker_holds_it(photo: JointPhoto) -> None:
    ok, jpg = cv2.imencode(".jpg", photo.image)
    assert ok
    assert photo_holds_marker(jpg.tobytes(), SPEC) is True
