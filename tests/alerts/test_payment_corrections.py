"""Correcting or undoing a payment entered wrongly on a bill (``alerts.corrections``).

A payment with the wrong amount or date is corrected, one on the wrong bill undone;
the wrong row stays, voided. The balance, the bill's status, the § 370-10 G payment in
full and the tax-roll entry follow the corrected payments; what rests on a payment
(the tax-roll entry that counted it, the payment in full that closed the case) is
refused, naming it. The rules are pure; one case goes end to end through
``sidewalk act payment`` on one SQLite database for the module, with the clock engine
and the recorder applying what was recorded, as the runner does.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from sidewalk.alerts.accounts import record_payment
from sidewalk.alerts.corrections import (
    CorrectionRefused,
    PaymentFacts,
    correct_payment,
    paid_in_full_at,
    payment_blocked,
)
from sidewalk.alerts.delivery import record_notice_delivery
from sidewalk.analytics.clocks.actions import EnforcementAction, parse_action
from sidewalk.analytics.clocks.enforcement import Enforcement
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.cli import app
from sidewalk.core.profile import Profile, load_profile
from sidewalk.storage.cases import CaseStore, NoticeRecord

CHICAGO = ZoneInfo("America/Chicago")
MISSED = datetime(2026, 12, 10, 17, 0, tzinfo=CHICAGO)
SERVED = datetime(2026, 12, 11, 9, 0, tzinfo=CHICAGO)
DONE = datetime(2026, 12, 13, 15, 0, tzinfo=CHICAGO)  # the crew finished: the costs' date
DAY = timedelta(days=1)
FRONTAGE = "main-201"
_keys = itertools.count(1)


def d(day: int) -> datetime:
    return datetime(2026, 12, day, 12, 0, tzinfo=CHICAGO)


# -- the rules (pure) -----------------------------------------------------------------


def test_370_10_g_paid_in_full_when_the_payments_in_date_order_cover_the_bill() -> None:
    pays = [(Decimal("70.00"), d(20)), (Decimal("30.00"), d(18))]
    assert paid_in_full_at(Decimal("100.00"), pays) == d(20)
    assert paid_in_full_at(Decimal("100.01"), pays) is None
    assert paid_in_full_at(Decimal("30.00"), pays) == d(18)


def test_370_10_g_a_payment_the_tax_roll_entry_counted_is_refused() -> None:
    facts = PaymentFacts(Decimal("100.00"), ((1, Decimal("20.00"), d(18)),), d(30), None)
    why = payment_blocked(facts, 1, Decimal("30.00"), None, undo=False, bill="CLY-1",
                          zone=CHICAGO)  # fmt: skip
    assert why is not None
    assert "entered on the tax roll on" in why
    assert "withdrawn first" in why


def test_370_10_g_a_correction_that_would_reopen_a_case_closed_by_payment_is_refused() -> None:
    """Paid in full on the 20th (30 + 70): undoing either payment, or moving the last to
    later, changes when (or whether) it was paid in full; an overpayment corrected down
    to the bill, or an earlier payment moved within the same day order, does not."""
    pays = ((1, Decimal("30.00"), d(18)), (2, Decimal("80.00"), d(20)))
    facts = PaymentFacts(Decimal("100.00"), pays, None, d(20))

    def why(pid: int, amount: str | None, at: datetime | None, undo: bool = False) -> str | None:
        value = None if amount is None else Decimal(amount)
        return payment_blocked(facts, pid, value, at, undo=undo, bill="CLY-1", zone=CHICAGO)

    refused = why(1, None, None, undo=True)
    assert refused is not None
    assert "paid in full on" in refused
    assert "undone first" in refused
    assert why(2, "60.00", None) is not None  # 30 + 60 leaves 10 unpaid
    assert why(2, None, d(22)) is not None  # paid in full on the 22nd, not the 20th
    assert why(2, "70.00", None) is None  # still paid in full on the 20th
    assert why(1, None, d(19)) is None
    open_bill = PaymentFacts(Decimal("100.00"), pays[:1], None, None)
    assert payment_blocked(open_bill, 1, None, None, undo=True, bill="CLY-1",
                           zone=CHICAGO) is None  # fmt: skip


# -- end to end: sidewalk act payment ---------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[CaseStore, Profile, Path]]:
    path = tmp_path_factory.mktemp("payment-corrections") / "cases.db"
    cases = CaseStore(f"sqlite:///{path}")
    cases.create_schema()
    cases.registry.upsert_owner("owner-jones", "Sam Jones", ["201 Main St", "Clyman, WI"])
    cases.registry.upsert_device("pole-2", "clyman")
    cases.registry.upsert_frontage(
        FRONTAGE, site="clyman", parcel_number="026-0915-0201", street_address="201 Main St",
        length_ft=66.0, zone="residential", owner_id="owner-jones", device_id="pole-2",
    )  # fmt: skip
    config = path.parent / "sidewalk.toml"
    config.write_text(f'[cases]\ndatabase_url = "sqlite:///{path}"\n', encoding="utf-8")
    yield cases, load_profile(), config
    cases.close()


class Billed:
    """A § 370-10 case served, run out, abated by the crew and billed $100.00; the engine
    and the recorder apply what the clerk records, as the runner does."""

    def __init__(self, cases: CaseStore, profile: Profile) -> None:
        self.cases, self.profile = cases, profile
        self.key = f"violation-{next(_keys)}"
        violation = cases.clocks.record_violation(
            self.key, FRONTAGE, "clearing_deadline", MISSED,
            evidence={"deadline": MISSED.isoformat(), "required_width_mm": 1219.2},
        )  # fmt: skip
        notice = cases.notices.create(f"{self.key}/clearing_violation", "clearing_violation",
                                      FRONTAGE, MISSED, violation_id=violation.id)  # fmt: skip
        cases.notices.set_rendered(notice.id, "Notice of violation")
        self.engine = Enforcement(profile)
        self.engine.open(self.key, FRONTAGE, MISSED, 1219.2, MISSED)
        self.recorder = CaseRecorder(cases, profile)
        record_notice_delivery(cases, notice.id, SERVED, "Pat Clerk", "hand", profile=profile)
        self.tick(DONE - DAY)  # the period ran out: the Village's removal ordered
        cases.actions.record("abatement_done", self.key, DONE, "Crew Chief", {})
        self.tick(DONE + DAY)
        abatement = cases.bills.abatement_by_key(f"{self.key}/abatement")
        assert abatement is not None
        assert abatement.status == "completed"
        cases.bills.add_expense(abatement.id, Decimal("100.00"), DONE, "crew 2 h")
        self.bill = cases.bills.create(f"bill/{self.key}", abatement.id, DONE + DAY)
        self.notice = cases.notices.create(
            f"{self.key}/bill", "abatement_bill", FRONTAGE, DONE + DAY,
            violation_id=violation.id, detail={"bill_id": self.bill.id},
        )  # fmt: skip
        received = DONE + 2 * DAY
        cases.bills.set_received(self.bill.id, received, (received + 10 * DAY).date())
        cases.actions.record("bill_received", self.key, received, "Pat Clerk", {})
        self.tick(received)

    def tick(self, now: datetime) -> None:
        for a in self.cases.actions.pending():
            if a.target == self.key:
                action = parse_action(a.kind, a.target, a.detail, at=a.at, who=a.who)
                assert isinstance(action, EnforcementAction)
                self.recorder.record(self.engine.act(action))
                self.cases.actions.mark_applied(a.id)
        self.recorder.record(self.engine.advance(now))

    def pay(self, amount: str, at: datetime) -> int:
        key = f"{self.key}/pay/{amount}/{at.isoformat()}"
        record_payment(self.cases, key, self.bill.id, Decimal(amount), at, who="Pat Clerk",
                       method="check")  # fmt: skip
        return next(p.id for p in self.cases.bills.list_payments(self.bill.id) if p.key == key)

    def standing(self) -> list[tuple[Decimal, datetime]]:
        return [(p.amount, p.paid_at) for p in self.cases.bills.list_payments(self.bill.id)]

    @property
    def state(self) -> str:
        return self.engine.cases[self.key].state


def act(config: Path, notice: NoticeRecord, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, ["act", "payment", notice.number, *args, "--who", "Pat Clerk", "--config",
              str(config)], env={"COLUMNS": "300"},
    )  # fmt: skip
    return result.exit_code, " ".join(result.output.split())


def test_370_10_g_wrong_payments_corrected_then_paid_in_full_closes_and_stands(
    store: tuple[CaseStore, Profile, Path],
) -> None:
    cases, profile, config = store
    case = Billed(cases, profile)
    assert case.state == "billed"
    first = case.pay("20.00", d(18))  # the check was for $30.00
    status, out = act(config, case.notice, "--correct", "--amount", "30.00",
                      "--reason", "the check was for $30.00")  # fmt: skip
    assert status == 0, out
    assert "balance is now $70.00" in out
    bill = cases.bills.get(case.bill.id)
    assert (bill.balance, bill.status) == (Decimal("70.00"), "open")
    assert case.standing() == [(Decimal("30.00"), d(18))]
    # The wrong entry stays on record, voided, and the audit names who and why.
    everything = cases.bills.list_payments(case.bill.id, voided=True)
    assert [(p.amount, p.voided_at is not None) for p in everything] == [
        (Decimal("20.00"), True), (Decimal("30.00"), False)]  # fmt: skip
    assert everything[0].id == first
    [audit] = [r for r in cases.audit.list() if r.action == "payment.corrected"
               and r.detail.get("payment") == first]  # fmt: skip
    assert (audit.actor, audit.detail["reason"]) == ("Pat Clerk", "the check was for $30.00")

    thirty = cases.bills.list_payments(case.bill.id)[0].id
    seven = case.pay("7.00", d(20))  # the check was for $70.00: corrected, it pays in full
    paid_bill = correct_payment(cases, profile, case.notice, seven, who="Pat Clerk", now=d(21),
                                reason="typed 7 for 70", amount=Decimal("70.00"))  # fmt: skip
    assert (paid_bill.balance, paid_bill.status) == (Decimal("0.00"), "paid")
    [paid] = [a for a in cases.actions.list(case.key) if a.kind == "paid_in_full"]
    assert paid.at == d(20)
    case.tick(d(21))
    assert case.state == "paid"

    # The first payment is part of the payment in full that closed the case: refused.
    before = case.standing()
    status, out = act(config, case.notice, "--undo", "--payment", str(thirty),
                      "--reason", "wrong bill")  # fmt: skip
    assert status == 2
    assert "refused:" in out
    assert "paid in full on" in out
    assert "undone first" in out
    assert case.standing() == before  # nothing recorded


def test_370_10_g_the_tax_roll_enters_the_corrected_balance_and_then_it_stands(
    store: tuple[CaseStore, Profile, Path],
) -> None:
    cases, profile, _ = store
    case = Billed(cases, profile)
    wrong = case.pay("25.00", d(18))
    with pytest.raises(CorrectionRefused, match="Reason"):
        correct_payment(cases, profile, case.notice, wrong, who="Pat Clerk", reason=" ",
                        now=d(19), undo=True)  # fmt: skip
    correct_payment(cases, profile, case.notice, wrong, who="Pat Clerk", now=d(19),
                    reason="entered on the wrong bill", undo=True)  # fmt: skip
    assert cases.bills.balance(case.bill.id) == Decimal("100.00")
    right = case.pay("40.00", d(19))
    correct_payment(cases, profile, case.notice, right, who="Pat Clerk", now=d(20),
                    reason="paid on the 18th", paid_at=d(18))  # fmt: skip
    assert case.standing() == [(Decimal("40.00"), d(18))]
    case.tick(DONE + 61 * DAY)  # day 60 after the costs: the unpaid balance is entered
    assert case.state == "tax_roll"
    [entry] = [t for t in cases.bills.list_tax_roll() if t.bill_id == case.bill.id]
    assert entry.amount == Decimal("60.00")
    assert cases.bills.get(case.bill.id).status == "certified"
    [standing] = cases.bills.list_payments(case.bill.id)
    with pytest.raises(CorrectionRefused, match="entered on the tax roll"):
        correct_payment(cases, profile, case.notice, standing.id, who="Pat Clerk", now=d(30),
                        reason="typed wrong", amount=Decimal("45.00"))  # fmt: skip
    assert cases.bills.balance(case.bill.id) == Decimal("60.00")
