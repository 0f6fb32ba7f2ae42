"""§ 370-10 G through the commands: a bill still payable on day 60 reaches the tax roll.

The first storm leaves a clearing notice for 105 Main St; it is served (``sidewalk
act record_delivery``), the period runs out, the crew clears (``sidewalk act
abatement_done``), the clerk bills it (``sidewalk notices bill``) and records its
receipt only on day 55 (``sidewalk notices bill-received``): payable through day
65. Nothing goes on the roll on day 60; as the payment period ends, unpaid, the
charge is entered (``sidewalk notices tax-roll``) and the clerk is told why late.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.storage.cases import CaseStore
from tests.cli.test_sale_during_open_case import Street, street

__all__ = ["street"]


def test_a_bill_received_on_day_55_is_entered_when_its_ten_days_end(street: Street) -> None:
    cases = street.cases
    [notice] = [
        n for n in cases.notices.list(kind="clearing_violation")
        if cases.registry.get_frontage(n.frontage_id).street_address.casefold() == "105 main st"
    ]  # fmt: skip
    street.sidewalk("act", "record_delivery", notice.number, "--who", "Pat Clerk",
                    "--at", "2026-12-12T09:30")  # fmt: skip
    street.runner.tick()
    street.runner.advance(datetime(2026, 12, 13, 16, 0, tzinfo=UTC))  # the 24 hours ran out
    [order] = cases.bills.list_abatements()
    out = street.sidewalk(
        "act", "abatement_done", notice.number, "--who", "Crew Chief", "--at", "2026-12-14T10:00",
        "--worker", "Crew Chief=1", "--worker", "Lee Kruger=0.5",
    )  # day 0; day 60 is February 12, 2027
    assert "the crew's hours: Crew Chief 1 h, Lee Kruger 0.5 h" in " ".join(out.split())
    street.runner.tick()
    # The bill's receipt before any bill: refused in words, nothing recorded.
    early = CliRunner().invoke(
        app, ["act", "bill_received", notice.number, "--who", "Pat Clerk",
              "--config", str(street.config)], env={"COLUMNS": "200"},
    )  # fmt: skip
    assert early.exit_code != 0, early.output
    assert "no bill has been issued for this case yet" in " ".join(early.output.split())
    assert not [a for a in cases.actions.list() if a.kind == "bill_received"]
    # The bill prices the hours the crew recorded (1.5 person-hours at $45.00).
    street.sidewalk("notices", "bill", str(order.id), "--who", "Pat Clerk",
                    "--at", "2027-02-07T09:00")  # fmt: skip
    [bill] = cases.bills.list()
    assert bill.amount == Decimal("67.50")
    out = street.sidewalk(
        "notices", "bill-received", str(bill.id), "--who", "Pat Clerk", "--at", "2027-02-07T15:00"
    )  # day 55: payable through Feb 17
    assert "due 2027-02-17" in out
    street.runner.tick()

    street.runner.advance(datetime(2027, 2, 17, 23, 0, tzinfo=UTC))  # day 65, still payable
    assert cases.bills.list_tax_roll() == []
    [held] = [a for a in cases.audit.list(f"violation:{order_key(cases)}")
              if a.action == "tax_roll.held"]  # fmt: skip
    assert "payable through Wednesday, February 17, 2027" in held.detail["reason"]

    street.runner.advance(datetime(2027, 2, 20, tzinfo=UTC))
    [entry] = cases.bills.list_tax_roll()
    assert entry.bill_id == bill.id
    assert entry.certified_at == datetime(2027, 2, 18, 6, 0, tzinfo=UTC)  # Feb 18, 00:00 CST
    [late] = [a for a in cases.audit.list(f"violation:{order_key(cases)}")
              if a.action == "tax_roll.late"]  # fmt: skip
    reason = late.detail["reason"]
    assert reason.startswith("Entered on the tax roll on Thursday, February 18, 2027, after day 60")
    assert "(Friday, February 12, 2027): the bill was still payable then" in reason
    assert "received on Sunday, February 7, 2027" in reason
    out = street.sidewalk("notices", "tax-roll", "2027",
                          "--csv", str(street.parcels.with_name("roll.csv")),
                          "--pdf", str(street.parcels.with_name("roll.pdf")))  # fmt: skip
    assert out.startswith("1 charges")
    assert "Thursday, February 18, 2027" in street.parcels.with_name("roll.csv").read_text("utf-8")


def order_key(cases: CaseStore) -> str:
    """105 Main St's case (the audit log's subject is its violation)."""
    [v] = [v for v in cases.clocks.list_violations() if "0105" in v.frontage_id]
    return v.key
