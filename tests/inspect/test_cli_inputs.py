"""`sidewalk inspect` input options: each wrong input is one line naming it, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.cli.inspect import inspect_app


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--intrinsics", "{bad}"], "intrinsics without fy, cx, cy"),
        (
            ["--fx", "9", "--fy", "9", "--cx", "1", "--cy", "1", "--depth-unit", "ft"],
            "--depth-unit",
        ),
        (["--fx", "9", "--fy", "9", "--cx", "1", "--cy", "1", "--accel", "0 0"], "--accel"),
        (["--intrinsics", "{nested}", "--depth-scale", "-1"], "--depth-scale"),
    ],
)
def test_depth_inputs_fail_in_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    (tmp_path / "bad.json").write_text(json.dumps({"fx": 900}))
    nested = {"depth": {"intrinsics": {"fx": 9, "fy": 9, "ppx": 1, "ppy": 1}}}
    (tmp_path / "nested.json").write_text(json.dumps(nested))
    args = [
        a.replace("{bad}", str(tmp_path / "bad.json")).replace(
            "{nested}", str(tmp_path / "nested.json")
        )
        for a in args
    ]
    result = CliRunner().invoke(
        inspect_app, ["depth", str(tmp_path / "d.png"), "--frontage", "f", *args]
    )
    assert result.exit_code == 2
    assert needle in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_photo_marker_options_fail_in_one_line(tmp_path: Path) -> None:
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps({"matrix": [[900, 0, 5], [0, 900, 5], [0, 0, 1]], "distortion": []}))
    for extra, needle in (
        (["--marker-dictionary", "9X9_1"], "--marker-dictionary"),
        (["--board", "7x5"], "--board"),
    ):
        result = CliRunner().invoke(
            inspect_app,
            [
                "photos",
                str(tmp_path / "p.jpg"),
                "--frontage",
                "f",
                "--calibration",
                str(cal),
                *extra,
            ],
        )
        assert result.exit_code == 2, result.output
        assert needle in result.output
        assert len(result.output.strip().splitlines()) == 1
