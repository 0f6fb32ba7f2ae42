"""The smaller points of a legal document, through the commands a clerk runs: a notice
to a parcel with two owners of record greets both (the county's second owner comes
into the window above the mailing address); a status line cites each section once,
without the profile's "(inferred)" mark."""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfReader
from typer.testing import CliRunner

from sidewalk.cli.notices import notices_app
from sidewalk.cli.street import street_app
from tests.clocks.live import seeded

CLERK = ["--who", "Pat Clerk"]


def _ok(app: object, args: list[str]) -> str:
    # Ignored: the helper takes the Typer app as ``object``.
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    return result.output


def test_smaller_points_the_printed_notice_greets_both_owners(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    config = ["--config", str(system.config)]
    frontage = system.cases.registry.get_frontage("main-st-103")
    owner = system.cases.registry.get_owner(frontage.owner_id)
    # As the county import records a second owner: first in the window, then the address.
    system.cases.registry.upsert_owner(owner.id, "BRANDT BERT", ["BRANDT MARIA", "PO BOX 9",
                                                                 "CLYMAN WI 53016"])  # fmt: skip
    _ok(street_app, ["obstruction", "--id", "OB-7", "--frontage", "main-st-103", "--kind",
                     "other", "--description", "a trailer across the walk", "--at",
                     "2026-12-02T09:00-06:00", *CLERK, *config])  # fmt: skip
    system.runner("smaller-points").tick()
    letter = tmp_path / "notice.pdf"
    _ok(notices_app, ["issue", "obstruction", "--id", "OB-7", "--at", "2026-12-02T09:30-06:00",
                      "--pdf", str(letter), *CLERK, *config])  # fmt: skip
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(letter).pages).split())
    assert "Dear BRANDT BERT and BRANDT MARIA:" in text, text
    window = text.split("Dear", 1)[0]
    assert "BRANDT MARIA PO BOX 9 CLYMAN WI 53016" in window
    # The obstruction's clock line cites its section once, as the letter does.
    status = _ok(street_app, ["status", *config])
    [line] = [x for x in status.splitlines() if "OB-7" in x]
    assert line.rstrip().endswith("— § 370-8 D"), line
    assert "(inferred)" not in status
