"""Commissioning's calibration, without services: clicks → homography, the command's
JSON on the pole, its atomic file, and one hash recipe on both sides."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from sidewalk.core.calibration import calibration_hash, pole_calibration_hash
from sidewalk.core.contract import DeviceHealth
from sidewalk.dashboard.poles import calibration_command
from sidewalk.dashboard.routes.registry import calibration_state, fit_corners
from sidewalk.edge.camera.geometry import project
from sidewalk.edge.camera.installed import (
    FILE_NAME,
    CalibrationRejected,
    load_views,
    parse_views,
    pole_hash,
    save_views,
)
from sidewalk.edge.camera.synthetic import PoleCamera
from sidewalk.storage.cases.records import CameraRecord

FT = 304.8
LENGTH_FT, WIDTH_FT = 50.0, 5.0


def _clicked_corners() -> list[tuple[float, float]]:
    """Where a pole camera across the street sees the walk's corners (street start first)."""
    g2i = PoleCamera().ground_to_image(LENGTH_FT * FT, WIDTH_FT * FT)
    ground = np.array(
        [[0, 0], [LENGTH_FT * FT, 0], [LENGTH_FT * FT, WIDTH_FT * FT], [0, WIDTH_FT * FT]],
        np.float64,
    )
    return [(float(u), float(v)) for u, v in project(g2i, ground)]


def test_four_clicked_corners_give_the_cameras_true_ground_mapping() -> None:
    corners = _clicked_corners()
    h, outline = fit_corners(corners, LENGTH_FT, WIDTH_FT)
    g2i = PoleCamera().ground_to_image(LENGTH_FT * FT, WIDTH_FT * FT)
    # Points inside the walk, not only the clicked ones, land where the true camera puts them.
    truth = np.array([[1000.0, 300.0], [7620.0, 762.0], [14000.0, 1400.0]])
    seen = project(g2i, truth)
    assert project(np.array(h), seen) == pytest.approx(truth, abs=1.0)
    # The outline starts with the walk's street edge: from the first click to the second.
    assert outline[0][0] == pytest.approx(corners[0], abs=0.2)
    assert outline[0][1] == pytest.approx(corners[1], abs=0.2)
    assert len(outline) == 3 + 11  # two edges, the centre line, a cross line every 5 ft


def test_corners_clicked_out_of_order_are_refused_in_words() -> None:
    c = _clicked_corners()
    with pytest.raises(ValueError, match="cross over"):
        fit_corners([c[0], c[2], c[1], c[3]], LENGTH_FT, WIDTH_FT)
    with pytest.raises(ValueError, match="cross over"):
        fit_corners([(0, 0), (10, 10), (20, 20), (30, 30)], LENGTH_FT, WIDTH_FT)


def _camera(frontage: str, corners: list[tuple[float, float]]) -> CameraRecord:
    h, _ = fit_corners(corners, LENGTH_FT, WIDTH_FT)
    region = tuple(corners)
    homography = tuple((r[0], r[1], r[2]) for r in h)
    return CameraRecord(
        id=1, device_id="pole-1", frontage_id=frontage, region=region, homography=homography,
        calibrated_at=datetime(2026, 12, 1, tzinfo=UTC), calibrated_by="admin",
        calibration_hash=calibration_hash(region, homography),
    )  # fmt: skip


def test_the_pole_hashes_what_it_runs_exactly_as_the_registry_expects(tmp_path: Path) -> None:
    cameras = [
        _camera("main-st-103", _clicked_corners()),
        _camera("main-st-101", _clicked_corners()),
    ]
    expected = pole_calibration_hash({c.frontage_id: c.calibration_hash for c in cameras})
    views = parse_views(calibration_command(cameras))
    assert pole_hash(views) == expected
    assert views["main-st-101"].length_mm == pytest.approx(LENGTH_FT * FT, rel=1e-6)
    assert views["main-st-101"].walk_width_mm == pytest.approx(WIDTH_FT * FT, rel=1e-6)
    # Kept on disk whole, and read back to the same hash after a restart.
    save_views(tmp_path, views)
    assert not list(tmp_path.glob("*.tmp"))
    loaded = load_views(tmp_path)
    assert loaded is not None
    assert pole_hash(loaded) == expected
    (tmp_path / "new-pole").mkdir()
    assert load_views(tmp_path / "new-pole") is None  # nothing sent yet: the TOML's views
    # The health message carries it; an old pole's message without it still parses.
    health = DeviceHealth(
        device="pole-1", ts=1_800_000_000_000, buffered=0, dropped=0, calibration=expected
    )
    assert json.loads(health.to_json())["calibration"] == expected
    assert (
        DeviceHealth.model_validate_json(
            b'{"device":"p","ts":1800000000000,"buffered":0,"dropped":0}'
        ).calibration
        is None
    )


I3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
SQUARE = [[0, 0], [9, 0], [9, 9]]


def _one(region: object, homography: object, **extra: object) -> str:
    return json.dumps({"frontages": {"a": {"region": region, "homography": homography} | extra}})


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("not json", "not JSON"),
        ('{"frontages": {}}', "1 to 16 frontages"),
        ('{"frontages": {"Main St": {"region": [], "homography": []}}}', "not a slug"),
        (_one([[0, 0], [1, 0]], I3), "3 to 64"),
        (_one(SQUARE, I3[:2]), "3 × 3"),
        (_one(SQUARE, [[1, 0, 0], [2, 0, 0], [0, 0, 1]]), "singular"),
        (_one(SQUARE, [[1e6, 0, 0], [0, 1, 0], [0, 0, 1]]), "long"),
        (_one([[0, 0], [9, 0], [True, 9]], I3), "finite numbers"),
        (_one(SQUARE, I3, x=1), "exactly region"),
    ],
)
def test_the_pole_refuses_a_calibration_it_cannot_run(body: str, words: str) -> None:
    with pytest.raises(CalibrationRejected, match=words):
        parse_views(body)


def test_a_half_written_file_is_never_read(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text('{"frontages": {"a": {"region": [[0,0],')
    with pytest.raises(CalibrationRejected):
        load_views(tmp_path)


def test_calibration_states_in_words() -> None:
    assert calibration_state(None, None) == "not_calibrated"
    assert calibration_state(None, "a" * 64) == "not_calibrated"
    assert calibration_state("a" * 64, None) == "not_reported"
    assert calibration_state("a" * 64, "b" * 64) == "differs"
    assert calibration_state("a" * 64, "a" * 64) == "matches"
