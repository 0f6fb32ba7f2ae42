"""§ 370-7 G, H, I through the command line: the clerk enters a permit and its work's
dates with ``sidewalk cold permit`` / ``permit-work``, the runner applies them, and
``sidewalk cold status`` shows every permit with what the engine found, in words."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from typer.testing import CliRunner

from sidewalk.cli.cold import cold_app
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import WeatherReading
from tests.clocks.live import findings, seeded

CHICAGO = ZoneInfo("America/Chicago")
POLE = "pole-main-01"
SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")


def test_the_clerk_enters_permits_and_their_dates_and_sees_the_findings(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    cli = CliRunner()
    common = ["--who", "Dana Reyes", "--config", str(system.config)]

    def cold(*args: str) -> str:
        who = [] if args[0] == "status" else common[:2]
        result = cli.invoke(cold_app, [*args, *who, *common[2:]])
        assert result.exit_code == 0, result.output
        return result.output

    # A Friday-night emergency, applied for the next Wednesday (due by the end of Monday).
    cold("permit", "--id", "SO-1", "--street", "Main St", "--opened-at", "2026-12-04T22:00",
         "--emergency", "--applied-at", "2026-12-09T10:00", "--approved-at", "2026-12-09T11:00",
         "--cold-mix-on", "2026-12-05")  # fmt: skip
    # An ordinary permit, its notices given, on a street repaved in 2024 (five years).
    cold("permit", "--id", "SO-2", "--street", "Elm St", "--opened-at", "2027-05-10T08:00",
         "--approved-at", "2027-05-03T09:00", "--street-repaved-on", "2024-07-15",
         "--dpw-notified-at", "2027-05-06T08:00",
         "--parties-notified-at", "2027-05-06T08:00")  # fmt: skip
    for n in (3, 4, 5):  # three more, none naming a frontage
        cold("permit", "--id", f"SO-{n}", "--street", "Oak St", "--opened-at",
             "2027-04-20T08:00", "--dpw-notified-at", "2027-04-10T08:00",
             "--parties-notified-at", "2027-04-10T08:00")  # fmt: skip
    runner = system.runner("permits-cli-test")
    runner.tick()
    [late] = [f for f in findings(system.cases, "permit:SO-1")
              if f["rule"] == "street_openings.emergency_permit_application"]  # fmt: skip
    assert late["action"] == "finding.violation"
    assert late["citation"] == "§ 370-7 H"

    # The pavement over the cold mix replaced two days after June 1, entered later.
    cold("permit-work", "--id", "SO-1", "--permanent-pavement-on", "2027-06-03",
         "--at", "2027-06-04T09:00")  # fmt: skip
    runner.tick()
    # A reading after SO-3's 60 days moves event time past its pavement deadline.
    after = datetime(2027, 6, 20, 12, tzinfo=CHICAGO)
    runner.handle(WeatherReading(device=POLE, seq=1, ts=to_ms(after), air_temp_c=20.0))
    runner.tick()

    status = cold("status")
    assert "Street-opening permits: 5" in status
    assert "permit SO-1, Main St, an emergency opening: opened Friday, December 4, 2026 at " \
           "10:00 PM CST" in status  # fmt: skip
    assert (
        "Violation: The emergency opening of Main St on Friday, December 4, 2026 needed its "
        "excavation permit applied for by the end of the next business day, Monday, December 7, "
        "2026 (§ 370-7 H); it was applied for on Wednesday, December 9, 2026 at 10:00 AM CST."
    ) in status
    assert (
        "Violation: The temporary cold-mix surface placed on Saturday, December 5, 2026 in Main "
        "St had to be replaced with permanent pavement by Tuesday, June 1, 2027 (§ 370-7G); it "
        "was replaced on Thursday, June 3, 2027."
    ) in status
    assert "Violation: Elm St was repaved on Monday, July 15, 2024" in status
    sections = status.split("  permit ")
    [so3] = [s for s in sections if s.startswith("SO-3,")]
    assert "no permanent pavement is on record" in so3
    assert "Saturday, June 19, 2027" in so3
    [so4] = [s for s in sections if s.startswith("SO-4,")]
    assert "Saturday, June 19, 2027" in so4  # every permit judged, not only the first
    assert "Advisory" not in sections[2]  # SO-2's notices were given in time
    assert not SNAKE.search(status), SNAKE.search(status)
    assert "opening_permit" not in status
    assert "None" not in status


def test_permit_work_for_a_permit_never_entered_is_refused(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    result = CliRunner().invoke(
        cold_app,
        ["permit-work", "--id", "SO-404", "--permanent-pavement-on", "2027-06-03",
         "--who", "Dana Reyes", "--config", str(system.config)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "no street-opening permit 'SO-404' is on record" in result.output
    nothing = CliRunner().invoke(
        cold_app, ["permit-work", "--id", "SO-404", "--who", "D", "--config", str(system.config)]
    )
    assert nothing.exit_code == 2
    assert "at least one date" in nothing.output
    assert system.cases.actions.pending() == []
