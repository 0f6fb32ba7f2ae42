"""Every notice issuable by a person: an obstruction's (§ 370-8 D/E) and an inspector's
finding's notice issued from the command line, numbered in the register, written under
the Village's letterhead, served with a method, their periods running from the service.
"""

from __future__ import annotations

import csv
from pathlib import Path

from pypdf import PdfReader
from typer.testing import CliRunner

from sidewalk.alerts.letterhead import cited
from sidewalk.cli import app
from sidewalk.cli.notices import notices_app
from sidewalk.cli.street import street_app
from tests.clocks.live import Seeded, seeded

VILLAGE = """
[village]
office = "Village Hall"
address_lines = ["1 Municipal Pl", "Clyman, WI 53016"]
telephone = "(920) 555-0142"
email = "clerk@clyman.example"
office_hours = "Monday to Friday, 8:00 AM to 4:00 PM"
officer_name = "Dana Krüger"
officer_title = "Clerk-Treasurer"
"""
CLERK = ["--who", "Pat Clerk"]


def _village(tmp_path: Path) -> tuple[Seeded, list[str]]:
    system = seeded(tmp_path)
    with system.config.open("a", encoding="utf-8") as f:
        f.write(VILLAGE)
    return system, ["--config", str(system.config)]


def _ok(app: object, args: list[str]) -> str:
    # Ignored: the helper takes the Typer app as ``object``.
    result = CliRunner().invoke(app, args)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    return result.output


def _number(output: str) -> str:
    return next(w for w in output.split() if w.startswith("CLY-")).rstrip(":")


def test_every_notice_issuable_an_obstruction_notice_issued_served_and_its_clock(
    tmp_path: Path,
) -> None:
    system, config = _village(tmp_path)
    cli = CliRunner()
    _ok(street_app, [
        "obstruction", "--id", "OB-1", "--frontage", "main-st-105", "--kind", "other",
        "--description", "a trailer parked across the walk", "--at", "2026-12-02T09:00-06:00",
        *CLERK, *config,
    ])  # fmt: skip
    # The register holds no notice yet: service is refused, in one line, and nothing recorded.
    early = cli.invoke(street_app, ["delivered", "--id", "OB-1", "--at", "2026-12-02T10:00-06:00",
                                    *CLERK, *config])  # fmt: skip
    assert early.exit_code != 0
    assert "holds no notice for obstruction OB-1" in early.output
    assert "sidewalk notices issue obstruction --id OB-1" in early.output
    assert len(early.output.strip().splitlines()) == 1
    assert [a.kind for a in system.cases.actions.list("OB-1")] == ["record_obstruction"]

    runner = system.runner("every-notice-cli")
    runner.tick()
    letter = tmp_path / "notice.pdf"
    issued = _ok(notices_app, [
        "issue", "obstruction", "--id", "OB-1", "--at", "2026-12-02T09:30-06:00",
        "--pdf", str(letter), *CLERK, *config,
    ])  # fmt: skip
    number = _number(issued)
    assert "notice to remove an obstruction, 105 Main St" in issued
    assert "sidewalk street delivered --id OB-1" in issued
    # Numbered in the register, rendered, the person who issued it in the audit log.
    notice = system.cases.notices.get_by_number(number)
    assert (notice.kind, notice.status, notice.frontage_id) == (
        "obstruction_notice", "rendered", "main-st-105",
    )  # fmt: skip
    assert notice.violation_id is not None
    assert [a.actor for a in system.cases.audit.list(f"notice:{number}")
            if a.action == "notice.issued_by"] == ["Pat Clerk"]  # fmt: skip
    register = tmp_path / "register.csv"
    _ok(notices_app, ["register", "--csv", str(register), *config])
    [row] = [r for r in csv.DictReader(register.open(encoding="utf-8")) if r["number"] == number]
    # The register the clerk opens is in her words, not the stored state names.
    assert (row["kind"], row["owner"], row["status"]) == (
        "Notice to remove an obstruction", "Clara Christoph", "Ready to serve: not yet served",
    )  # fmt: skip
    # The letterhead and the officer in the PDF the clerk prints.
    text = "\n".join(page.extract_text() for page in PdfReader(letter).pages)
    for expected in ("VILLAGE OF CLYMAN", "Village Hall", "1 Municipal Pl", "(920) 555-0142",
                     "Dana Krüger", number, "24 hours"):  # fmt: skip
        assert expected in text, expected
    # Issuing again is the same notice, not a second one.
    again = _ok(notices_app, ["issue", "obstruction", "--id", "OB-1", *CLERK, *config])
    assert _number(again) == number
    assert "issued before" in again

    # By the property's address, the same case and notice.
    by_address = _ok(notices_app, ["issue", "obstruction", "--address", "105  main st",
                                   *CLERK, *config])  # fmt: skip
    assert _number(by_address) == number
    elsewhere = cli.invoke(notices_app, ["issue", "obstruction", "--address", "101 Main St",
                                         *CLERK, *config])  # fmt: skip
    assert elsewhere.exit_code != 0
    assert "no obstruction at 101 Main St waits for its notice" in elsewhere.output

    # Served by posting: the delivery carries the method, the clock runs from its time.
    served = _ok(street_app, [
        "delivered", "--id", "OB-1", "--method", "posted", "--at", "2026-12-02T10:15-06:00",
        *CLERK, *config,
    ])  # fmt: skip
    assert f"notice {number} served by posting on the premises" in served
    [delivery] = system.cases.notices.list_deliveries(notice_id=notice.id)
    assert (delivery.channel, delivery.status) == ("posted", "delivered")
    runner.tick()
    status = _ok(street_app, ["status", *config])
    assert (
        "OB-1 (main-st-105): removal_period until Thursday, December 3, 2026 at 10:15 AM CST"
        in status
    )
    twice = cli.invoke(street_app, ["delivered", "--id", "OB-1", "--at", "2026-12-02T11:00-06:00",
                                    *CLERK, *config])  # fmt: skip
    assert twice.exit_code != 0
    assert "served already" in twice.output


def test_every_notice_issuable_a_finding_notice_served_by_mail_runs_from_its_receipt(
    tmp_path: Path,
) -> None:
    system, config = _village(tmp_path)
    cli = CliRunner()
    _ok(street_app, [
        "finding", "--id", "FE-1", "--frontage", "main-st-105", "--rule", "excavation_fence",
        "--description", "open trench by the walk, no fence", "--at", "2026-12-02T09:00-06:00",
        *CLERK, *config,
    ])  # fmt: skip
    runner = system.runner("every-notice-finding")
    runner.tick()
    issued = _ok(notices_app, ["issue", "finding", "--address", "105 Main St",
                               "--at", "2026-12-02T10:00-06:00", *CLERK, *config])  # fmt: skip
    number = _number(issued)
    assert "sidewalk street noticed --id FE-1" in issued
    # E-mail is not service (the profile's notice_delivery); nothing is recorded.
    email = cli.invoke(street_app, ["noticed", "--id", "FE-1", "--method", "email",
                                    "--at", "2026-12-04T10:00-06:00", *CLERK, *config])  # fmt: skip
    assert email.exit_code != 0
    assert "does not start its period" in email.output
    early = cli.invoke(street_app, ["noticed", "--id", "FE-1", "--method", "mail",
                                    "--at", "2026-12-02T09:59-06:00", *CLERK, *config])  # fmt: skip
    assert early.exit_code != 0
    assert "before it was issued" in early.output
    _ok(street_app, ["noticed", "--id", "FE-1", "--method", "mail",
                     "--at", "2026-12-04T10:00-06:00", *CLERK, *config])  # fmt: skip
    runner.tick()
    status = _ok(street_app, ["status", *config])
    # 30 calendar days after the day the mailed notice was received (not after its issue):
    # to the end of January 3.
    assert (
        "FE-1 (main-st-105): notice_period until Monday, January 4, 2027 at 12:00 AM CST" in status
    ), status
    assert system.cases.notices.get_by_number(number).delivered_at is not None
    # A wrong service on it is not corrected by `sidewalk act`: refused in one line saying
    # what can be corrected, nothing recorded.
    recorded = len(system.cases.actions.list("FE-1"))
    fix = cli.invoke(app, ["act", "record_delivery", number, "--correct", "--at",
                           "2026-12-05T10:00-06:00", "--reason", "received a day later",
                           *CLERK, *config], env={"COLUMNS": "300"})  # fmt: skip
    assert fix.exit_code == 2, fix.output
    assert len(fix.output.strip().splitlines()) == 1, fix.output
    section = cited(system.cases.notices.get_by_number(number).citation)
    assert section is not None
    assert section.startswith("§ 144-")
    assert fix.output.startswith(f"refused: Notice {number} ({section}) is not a § 370-10"), (
        fix.output
    )
    assert "only a snow-and-ice notice's service and the crew's completion" in fix.output
    assert len(system.cases.actions.list("FE-1")) == recorded


def test_every_notice_issuable_refuses_a_case_not_on_record(tmp_path: Path) -> None:
    system, config = _village(tmp_path)
    cli = CliRunner()
    unknown = cli.invoke(street_app, ["delivered", "--id", "OB-404", "--at",
                                      "2026-12-02T10:00-06:00", *CLERK, *config])  # fmt: skip
    assert unknown.exit_code != 0
    assert unknown.output.strip() == (
        "refused: the notice register holds no notice for obstruction OB-404; issue it first:"
        " sidewalk notices issue obstruction --id OB-404"
    )
    nothing = cli.invoke(notices_app, ["issue", "obstruction", "--id", "OB-404", *CLERK, *config])
    assert nothing.exit_code != 0
    assert "no obstruction OB-404 is on record" in nothing.output
    # Recorded but not yet applied by the runner: said so, not "unknown".
    _ok(street_app, ["finding", "--id", "MB-1", "--frontage", "main-st-105", "--rule", "dumping",
                     "--at", "2026-12-02T09:00-06:00", *CLERK, *config])  # fmt: skip
    waiting = cli.invoke(notices_app, ["issue", "finding", "--id", "MB-1", *CLERK, *config])
    assert waiting.exit_code != 0
    assert "has not applied it yet" in waiting.output
    assert system.cases.notices.list(kind="inspection_notice") == []
