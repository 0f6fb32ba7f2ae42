"""``sidewalk review``: the deadlines waiting for a person.

The first storm through a stream-mode runner, its pole falling silent three
hours before the deadline: after the wait every clearing clock is "needs
review: camera evidence missing", in the audit log and in the command's list.
When the pole's readings come after all, they decide the deadlines, the
reviews close, and the same two notices as an undisturbed run are issued.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.scenarios import expand, load_scenario, to_readings
from tests.clocks.live import seeded

DEADLINE = datetime(2026, 12, 11, 23, 0, tzinfo=UTC)


def review(config: Path) -> str:
    result = CliRunner().invoke(app, ["review", "--config", str(config)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_a_silent_pole_is_listed_for_review_until_its_readings_decide(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    runner = system.runner("review-cli-test")
    story = load_scenario("first-storm")
    readings = to_readings(story, expand(story))
    cut = DEADLINE - timedelta(hours=3)
    for reading in readings:
        if reading.event_time <= cut:
            runner.handle(reading)
    assert "needs review, camera evidence missing: none" in review(system.config)
    runner.advance(DEADLINE + timedelta(hours=2))  # the wait ends: a person looks
    listed = review(system.config)
    for frontage in ("main-st-101", "main-st-103", "main-st-105"):
        assert f"  {frontage}: deadline Friday, December 11, 2026 at 5:00 PM CST" in listed
    assert "needs review, camera evidence missing: 3" in listed
    rows = [a for a in system.cases.audit.list() if a.action == "clearing.needs_review"]
    assert [r.detail["reason"] for r in rows] == ["camera evidence missing"] * 3
    assert system.cases.notices.list() == []
    for reading in readings:  # the pole's buffer drains
        if reading.event_time > cut:
            runner.handle(reading)
    assert "needs review, camera evidence missing: none" in review(system.config)
    resolved = [a for a in system.cases.audit.list() if a.action == "clearing.review_resolved"]
    assert sorted(r.detail["decided"] for r in resolved) == ["complied", "violation", "violation"]
    assert sorted(n.frontage_id for n in system.cases.notices.list()) == [
        "main-st-103",
        "main-st-105",
    ]
    system.cases.close()
