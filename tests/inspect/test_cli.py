"""``sidewalk inspect …`` through Typer's runner, on a real SQLite store and evidence folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.cli.inspect import inspect_app
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore


def _config(tmp_path: Path, db_url: str) -> Path:
    cfg = tmp_path / "sidewalk.toml"
    cfg.write_text(f'data_dir = "{tmp_path / "var"}"\n[cases]\ndatabase_url = "{db_url}"\n')
    return cfg


def test_depth_prints_the_table_and_issues_the_notice(
    faulted: dict[str, Path], cases: CaseStore, db_url: str, tmp_path: Path
) -> None:
    k = json.loads(faulted["intrinsics"].read_text())
    args = [
        "depth", str(faulted["depth"]), "--frontage", "main-101", "--fx", str(k["fx"]),
        "--fy", str(k["fy"]), "--cx", str(k["cx"]), "--cy", str(k["cy"]),
        "--surveyed-at", "2026-06-01T10:00:00-05:00", "--config", str(_config(tmp_path, db_url)),
    ]  # fmt: skip
    result = CliRunner().invoke(inspect_app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "vertical_differential" in out
    assert "DEFECTIVE" in out
    assert "25.4 ± " in out
    assert "19.05" in out
    # The owner's other three frontages have no block count: 2 of 2 surveyed
    # blocks defective is not the whole walk, so the notice is held.
    assert "incomplete survey: 2 of ? blocks" in out
    assert "replace entire sidewalk: no" in out
    assert "notice held" in out
    assert cases.notices.list() == []
    (rec,) = cases.inspections.list(frontage_id="main-101")
    assert rec.evidence_sha256 in EvidenceStore(tmp_path / "var" / "evidence")
    assert rec.result["survey"]["frontage_blocks"] is None


def test_laser_with_stations_and_block_counts(
    faulted: dict[str, Path], sound: dict[str, Path], cases: CaseStore, db_url: str, tmp_path: Path
) -> None:
    cfg = str(_config(tmp_path, db_url))
    for fid in ("main-103", "main-105", "main-107"):  # record the other frontages' counts
        args = [
            "laser", str(sound["laser"]), "--frontage", fid, "--rig", str(sound["laser_rig"]),
            "--frontage-blocks", "2", "--no-notice", "--config", cfg,
        ]  # fmt: skip
        done = CliRunner().invoke(inspect_app, args, env={"COLUMNS": "200"})
        assert done.exit_code == 0, done.output
    args = [
        "laser", str(faulted["laser"]), str(sound["laser"]), "--frontage", "main-101",
        "--rig", str(faulted["laser_rig"]), "--station", "2.0", "--station", "19.0",
        "--frontage-blocks", "4", "--config", cfg,
    ]  # fmt: skip
    result = CliRunner().invoke(inspect_app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "DEFECTIVE" in out
    assert "joints at stations (m): 2.00, 19.01" in out  # + each frame's joint offset
    assert "joint spacing 17.01 m (limit 15.24 m): OVER LIMIT" in out
    assert "2 of 10 surveyed blocks defective (20% of 10 blocks)" in out
    (notice,) = cases.notices.list()
    assert notice.kind == "repair_notice"
    assert notice.detail["total_blocks"] == 10
    kinds = {r.kind for r in cases.inspections.list(frontage_id="main-101")}
    assert kinds == {"laser"}


def test_station_count_mismatch_is_a_usage_error(
    sound: dict[str, Path], db_url: str, tmp_path: Path
) -> None:
    args = [
        "laser", str(sound["laser"]), "--frontage", "main-101", "--rig", str(sound["laser_rig"]),
        "--station", "1", "--station", "2", "--config", str(_config(tmp_path, db_url)),
    ]  # fmt: skip
    result = CliRunner().invoke(inspect_app, args)
    assert result.exit_code == 2
    assert "2 --station values for 1 files" in result.output


def test_photos_report_each_failure_and_exit_nonzero(
    faulted: dict[str, Path], cases: CaseStore, db_url: str, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8 truncated")
    args = [
        "photos", str(bad), str(faulted["photo"]), "--frontage", "main-101",
        "--calibration", str(faulted["calibration"]), "--config", str(_config(tmp_path, db_url)),
    ]  # fmt: skip
    result = CliRunner().invoke(inspect_app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert "failed: unreadable" in result.output
    assert "horizontal_gap" in result.output
    assert [r.status for r in cases.inspections.list()] == ["failed", "ok"]


def test_depth_needs_intrinsics(tmp_path: Path, db_url: str) -> None:
    args = ["depth", "x.png", "--frontage", "main-101", "--config", str(_config(tmp_path, db_url))]
    result = CliRunner().invoke(inspect_app, args)
    assert result.exit_code == 2
    assert "--intrinsics" in result.output


def test_demo_scene_writes_files_the_commands_read(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        inspect_app, ["demo-scene", str(tmp_path / "demo"), "--fault-in", "0.5"]
    )
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "demo").iterdir())
    assert names == [
        "calibration.json", "depth.png", "intrinsics.json", "laser.png", "laser_rig.json",
        "photo.jpg",
    ]  # fmt: skip
    assert "sidewalk inspect depth" in result.output


def test_demo_scene_without_the_renderer_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server installed without the development tools (no sidewalk-testkit): one line
    saying what is missing and how to install it, exit 1, not a traceback."""
    # None in sys.modules makes the import raise ModuleNotFoundError, as if not installed.
    monkeypatch.setitem(sys.modules, "sidewalk.testkit.defect_scenes", None)
    result = CliRunner().invoke(inspect_app, ["demo-scene", str(tmp_path / "demo")])
    assert result.exit_code == 1
    assert "needs the demo renderer" in result.output
    assert "uv sync" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "demo" / "depth.png").exists()
