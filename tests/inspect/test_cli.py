"""``sidewalk inspect …`` through Typer's runner, on a real SQLite store and evidence folder."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sidewalk.analytics.inspect_cli import inspect_app
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
    assert "replace entire sidewalk: yes" in out  # the two surveyed blocks are all there is
    (notice,) = cases.list_notices()
    assert f"notice {notice.number} (replacement_notice) issued" in out
    (rec,) = cases.list_inspections(frontage_id="main-101")
    assert rec.evidence_sha256 in EvidenceStore(tmp_path / "var" / "evidence")


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
    assert [r.status for r in cases.list_inspections()] == ["failed", "ok"]


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
    assert names == ["calibration.json", "depth.png", "intrinsics.json", "photo.jpg"]
    assert "sidewalk inspect depth" in result.output
