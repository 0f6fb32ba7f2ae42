"""``sidewalk cold status`` shows what the clerk entered, in words: every street-opening
permit (five recorded, none naming a frontage, were "opening_permit: none"), and the
entries the runner has not applied yet or refused, with the reason."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from sidewalk.cli.cold import cold_app
from tests.clocks.live import seeded


def test_five_permits_entered_are_five_permits_shown(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    cli = CliRunner()
    config = ["--config", str(system.config)]
    for n in range(1, 6):
        entered = cli.invoke(cold_app, [
            "permit", "--id", f"SO-{n}", "--street", f"{n}00 block Main St",
            "--opened-at", "2027-05-10T08:00", "--who", "Dana Reyes", *config,
        ])  # fmt: skip
        assert entered.exit_code == 0, entered.output
    pour = cli.invoke(cold_app, ["pour", "--id", "WO-1", "--site", "pole-nowhere", "--at",
                                 "2027-05-10T09:00", "--who", "Dana Reyes", *config])  # fmt: skip
    assert pour.exit_code == 0, pour.output
    before = cli.invoke(cold_app, ["status", *config]).output
    assert "Street-opening permits: none" in before
    assert "waiting for the analytics runner: permit SO-5 entered by Dana Reyes" in before
    assert "waiting for the analytics runner: pour WO-1 entered by Dana Reyes" in before
    system.runner("cold-status-test").tick()
    status = cli.invoke(cold_app, ["status", *config]).output
    assert "Street-opening permits: 5" in status
    for n in range(1, 6):
        assert (
            f"permit SO-{n}, {n}00 block Main St: opened Monday, May 10, 2027 at 8:00 AM CDT; "
            "valid through Wednesday, June 9, 2027 (§ 370-6 D)"
        ) in status
    assert "refused: pour WO-1: a pour needs a known site" in status
    assert "waiting" not in status
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", status.replace("pole-nowhere", ""))
