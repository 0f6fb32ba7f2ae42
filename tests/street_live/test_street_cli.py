"""``sidewalk street``: inspectors' entries become actions the runner applies; status reads them."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sidewalk.cli.notices import notices_app
from sidewalk.cli.street import street_app
from tests.clocks.live import seeded


def test_an_obstruction_entered_on_the_command_line_runs_its_clock(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    cases, config = system.cases, system.config
    cli = CliRunner()
    common = ["--who", "Pat Inspector", "--config", str(config)]
    runner = system.runner("street-cli-test")
    for args in (
        ["obstruction", "--id", "OB-1", "--frontage", "main-st-105", "--kind", "fixture",
         "--width-ft", "2",
         "--width-in", "6", "--description", "planter", "--at", "2026-12-02T09:00-06:00"],
        ["sweeping", "--id", "SW-1", "--frontage", "main-st-101", "--location", "Main St",
         "--at", "2026-12-02T08:00-06:00"],
        ["swept", "--id", "SW-1", "--at", "2026-12-02T12:00-06:00"],
    ):  # fmt: skip
        result = cli.invoke(street_app, [*args, *common])
        assert result.exit_code == 0, result.output
    recorded = cases.actions.pending()
    assert [a.kind for a in recorded] == [
        "record_obstruction", "record_sweeping_incident", "sweeping_done",
    ]  # fmt: skip
    assert recorded[0].detail["clear_width_ft"] == 2
    runner.tick()
    # The removal clock runs from the service of the notice the register holds.
    issued = cli.invoke(notices_app, ["issue", "obstruction", "--id", "OB-1",
                                      "--at", "2026-12-02T09:30-06:00", *common])  # fmt: skip
    assert issued.exit_code == 0, issued.output
    served = cli.invoke(street_app, ["delivered", "--id", "OB-1", "--method", "hand",
                                     "--at", "2026-12-02T10:00-06:00", *common])  # fmt: skip
    assert served.exit_code == 0, served.output
    runner.tick()
    status = cli.invoke(street_app, ["status", "--config", str(config)])
    assert status.exit_code == 0, status.output
    assert "OB-1 (main-st-105): removal_period" in status.output
    assert "December 3, 2026 at 10:00 AM CST" in status.output  # 24 h after delivery, local
    assert "SW-1 (main-st-101): swept" in status.output

    both = cli.invoke(street_app, ["obstruction", "--id", "OB-2", "--frontage", "main-st-105",
                                   "--at", "2026-12-02T09:00-06:00", *common])  # fmt: skip
    assert both.exit_code == 2


def test_370_8_B2_an_authorization_entered_on_the_command_line_covers_the_materials(
    tmp_path: Path,
) -> None:
    system = seeded(tmp_path)
    cli = CliRunner()
    common = ["--who", "Pat Inspector", "--config", str(system.config)]
    for args in (
        ["authorize", "--id", "BI-7", "--frontage", "main-st-105", "--from", "2026-12-01",
         "--until", "2026-12-04", "--by", "Lee Building-Inspector"],
        ["obstruction", "--id", "OB-1", "--frontage", "main-st-105", "--kind",
         "building_materials", "--authorization", "BI-7", "--sidewalk-width-mm", "1219.2",
         "--width-mm", "700", "--gutters-clear", "--at", "2026-12-02T09:00-06:00"],
        ["obstruction", "--id", "OB-2", "--frontage", "main-st-105", "--kind",
         "building_materials", "--width-mm", "1000", "--at", "2026-12-02T09:00-06:00"],
    ):  # fmt: skip
        result = cli.invoke(street_app, [*args, *common])
        assert result.exit_code == 0, result.output
    system.runner("street-cli-authorize").tick()
    states = {c.key: c.state for c in system.cases.clocks.list(kind="obstruction")}
    assert states == {
        "main-st-105/obstruction/OB-1": "compliant",  # authorized, under half the walk
        "main-st-105/obstruction/OB-2": "obstructed",  # no authorization: § 370-8 A
    }
