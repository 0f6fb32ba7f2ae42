"""§ 370-5 (9) through the running system: the pole read 41 °F before the clerk's
``sidewalk cold pour``; the keep-off clock runs 96 hours from the pour at once."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from typer.testing import CliRunner

from sidewalk.cli.cold import cold_app
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import WeatherReading
from sidewalk.core.units import f_to_c
from tests.clocks.live import seeded

CHICAGO = ZoneInfo("America/Chicago")
POUR = datetime(2026, 12, 2, 9, tzinfo=CHICAGO)


def test_a_pour_after_cold_readings_is_kept_off_96_hours_from_the_start(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    runner = system.runner("keep-off-cli-test")
    for seq, (hours, temp_f) in enumerate(((-3, 39.0), (-1, 41.0)), start=1):
        at = POUR + timedelta(hours=hours)
        runner.handle(WeatherReading(device="pole-main-01", seq=seq, ts=to_ms(at),
                                     air_temp_c=f_to_c(temp_f)))  # fmt: skip
    cli = CliRunner()
    entered = cli.invoke(
        cold_app,
        ["pour", "--id", "WO-7", "--site", "pole-main-01", "--at", POUR.isoformat(),
         "--frontage", "main-st-105", "--who", "Dana Reyes", "--config", str(system.config)],
    )  # fmt: skip
    assert entered.exit_code == 0, entered.output
    runner.tick()
    [clock] = system.cases.clocks.list(kind="keep_off")
    assert clock.state == "keep_off_cold"
    assert clock.deadline == POUR + timedelta(hours=96)
    status = cli.invoke(cold_app, ["status", "--config", str(system.config)])
    assert (
        "pour WO-7 at 105 Main St: keep traffic off until Sunday, December 6, 2026 at 9:00 AM "
        "CST, cold weather (below 50 °F): 96 hours"
    ) in status.output
