"""``sidewalk cold``: staff entries become actions the runner applies; status reads the records."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sidewalk.cli.cold import cold_app
from tests.clocks.live import seeded


def test_pour_and_permit_entered_on_the_command_line_run_their_clocks(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    cases, config = system.cases, system.config
    cli = CliRunner()
    common = ["--who", "Dana Reyes", "--config", str(config)]
    pour = cli.invoke(
        cold_app,
        ["pour", "--id", "WO-9", "--site", "pole-main-01", "--at", "2026-12-02T09:00-06:00",
         "--frontage", "main-st-105", *common],
    )  # fmt: skip
    assert pour.exit_code == 0, pour.output
    permit = cli.invoke(
        cold_app,
        ["permit", "--id", "SO-9", "--street", "Main St", "--opened-at",
         "2026-12-02T08:00-06:00", "--frontage", "main-st-101", *common],
    )  # fmt: skip
    assert permit.exit_code == 0, permit.output
    [recorded_pour, recorded_permit] = cases.actions.pending()
    assert (recorded_pour.kind, recorded_pour.who) == ("record_pour", "Dana Reyes")
    assert recorded_permit.detail["emergency"] is False
    runner = system.runner("cold-cli-test")
    runner.tick()
    status = cli.invoke(cold_app, ["status", "--config", str(config)])
    assert status.exit_code == 0, status.output
    assert (
        "pour WO-9 at 105 Main St: keep traffic off until Friday, December 4, 2026 at 9:00 AM "
        "CST, normal temperatures: 48 hours"  # 48 h after the pour, local
    ) in status.output
    assert "permit SO-9, Main St: opened Wednesday, December 2, 2026 at 8:00 AM CST" in (
        status.output
    )

    bad = cli.invoke(cold_app, ["pour", "--id", "WO-10", "--site", "x", "--at", "tomorrow",
                                *common])  # fmt: skip
    assert bad.exit_code == 2
