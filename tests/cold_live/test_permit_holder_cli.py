"""A street-opening permit records its holder (§ 370-6: the permittee), with the
holder's mailing address; ``sidewalk cold status`` names them. The § 370-7 G, H and I
findings are the clerk's: the Code prescribes no written notice to the holder for them,
the status says so, and none reaches the notice register."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sidewalk.cli.cold import cold_app
from tests.clocks.live import findings, seeded


def test_the_permit_holder_is_recorded_and_shown_and_no_notice_is_issued(
    tmp_path: Path,
) -> None:
    system = seeded(tmp_path)
    cli = CliRunner()
    common = ["--config", str(system.config)]

    def cold(*args: str, code: int = 0) -> str:
        who = [] if args[0] == "status" else ["--who", "Dana Reyes"]
        result = cli.invoke(cold_app, [*args, *who, *common])
        assert result.exit_code == code, result.output
        return result.output

    # An emergency opening applied for late (§ 370-7 H), with its holder.
    cold("permit", "--id", "SO-7", "--street", "Main St", "--opened-at", "2026-12-04T22:00",
         "--emergency", "--applied-at", "2026-12-09T10:00",
         "--holder", "Clyman Gas Utility",
         "--holder-address", "200 Gas Way", "--holder-address", "Watertown, WI 53094")  # fmt: skip
    cold("permit", "--id", "SO-8", "--street", "Oak St", "--opened-at", "2027-04-20T08:00",
         "--dpw-notified-at", "2027-04-10T08:00",
         "--parties-notified-at", "2027-04-10T08:00")  # fmt: skip
    # A holder with no address, or an address with no holder, is refused in words.
    assert "mailing address" in cold("permit", "--id", "SO-9", "--street", "Elm St",
                                     "--opened-at", "2027-05-10T08:00", "--holder", "Acme",
                                     code=2)  # fmt: skip
    assert "needs --holder" in cold("permit", "--id", "SO-9", "--street", "Elm St",
                                    "--opened-at", "2027-05-10T08:00",
                                    "--holder-address", "1 Main St", code=2)  # fmt: skip
    system.runner("permit-holder-test").tick()
    assert [f for f in findings(system.cases, "permit:SO-7")
            if f["citation"] == "§ 370-7 H"], findings(system.cases, "permit:SO-7")  # fmt: skip

    status = cold("status")
    sections = status.split("  permit ")
    [so7] = [s for s in sections if s.startswith("SO-7,")]
    assert "Permit holder: Clyman Gas Utility, 200 Gas Way, Watertown, WI 53094" in so7, so7
    assert "Violation:" in so7
    assert "prescribes no written notice to the permit holder" in so7, so7
    [so8] = [s for s in sections if s.startswith("SO-8,")]
    assert "Permit holder: not recorded" in so8, so8
    assert "None" not in status
    # The findings are the clerk's: nothing about a permit is in the notice register.
    assert system.cases.notices.list() == []
