"""Every billed rule reaches the tax roll the way its own section says.

§ 370-10 G's day-60 entry (``tests/alerts/test_costs_incurred_date.py``) now also runs
for the Village's other abatements, each on its section's terms (``bill_terms``):

* § 370-8 F (obstructions): payable in ``obstructions.bill_payable`` from receipt;
  unpaid ``obstructions.tax_roll_after`` days after the crew's completion → the tax
  roll as a special tax; held while the bill is inside its payment period or its
  receipt is not recorded; never once the bill is paid.
* § 370-10 C (snow put on a public way): on § 370-10 G's own terms.
* § 370-11 C (and § 370-14, § 144-11, § 144-12 B): no section provides a bill; the
  profile's unconfirmed ``billing.other_*`` defaults, cited under the violation's own
  section; nothing is entered while the bill's notice waits for their confirmation.
* § 144-12 C: "charged against the real estate and entered on the next succeeding tax
  roll": no period to pay, entered when the costs are incurred.

Real runner (stream mode) on SQLite case records seeded with the first-storm village.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sidewalk.alerts.accounts import bill_abatement, record_bill_receipt, record_payment
from sidewalk.alerts.billing import AbatementWork
from sidewalk.alerts.documents import tax_roll_lines, tax_roll_pdf
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.analytics.clocks.enforcement import end_of_calendar_day
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.calendar import add_calendar_days, local_date, start_of_day
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import Profile, Rule, load_profile
from sidewalk.storage.cases import AbatementRecord, CaseStore
from sidewalk.system import build_analytics, confirm_for_demo
from tests.alerts.conftest import flat, pdf_text
from tests.clocks.live import seeded

T0 = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)  # Wednesday 9:00 AM CST
WORK = AbatementWork(crew_hours=Decimal(2))


@dataclass
class Village:
    runner: AnalyticsRunner
    cases: CaseStore
    profile: Profile
    issuer: NoticeIssuer

    def act(self, kind: str, target: str, at: datetime, /, **detail: Any) -> None:
        self.cases.actions.record(kind, target, at, "Pat Inspector", detail)
        self.runner.tick()

    def abated(self, key: str, delivered: datetime, until: datetime) -> AbatementRecord:
        """Deliver ``key``'s notice, let its period run out: the Village's abatement."""
        self.act(f"{key.partition(':')[0]}_notice_delivered", key.partition(":")[2], delivered)
        self.runner.advance(until)
        [abatement] = [a for a in self.cases.bills.list_abatements() if a.key.startswith(key)]
        return abatement

    def bill(self, abatement: AbatementRecord, done: datetime, received: datetime | None) -> int:
        billed = bill_abatement(
            self.issuer, abatement.id, WORK, done + timedelta(days=2), who="Clerk Lee",
            completed_at=done,
        )  # fmt: skip
        if received is not None:
            record_bill_receipt(self.issuer, billed.bill.id, received, "Clerk Lee")
        self.runner.tick()
        return billed.bill.id

    def day(self, done: datetime, rule: Rule) -> datetime:
        """Local midnight beginning day ``rule.days`` after the costs (day 0)."""
        zone = self.profile.zone
        return start_of_day(add_calendar_days(local_date(done, zone), rule.days), zone)

    def refused(self) -> list[str]:
        return [f"{a.kind} {a.target}: {a.error}" for a in self.cases.actions.list() if a.error]

    def held(self, key: str) -> list[str]:
        return [
            str(a.detail["reason"])
            for a in self.cases.audit.list(f"violation:{key}")
            if a.action == "tax_roll.held"
        ]


def _village(tmp_path: Path, changed: Profile | None = None) -> Iterator[Village]:
    """The seeded village; ``changed``: a profile the analytics and the clerk run under
    instead (a value changed since the Village confirmed it is unconfirmed again)."""
    system = seeded(tmp_path)
    # In the open, as the demo does: the values the code text leaves open.
    confirm_for_demo(system.cases, system.profile, "tax-roll tests")
    profile = changed or system.profile
    unused_broker = MqttSettings(host="127.0.0.1", port=1, client_id="tax-roll-by-section")
    runner = build_analytics(system.cases, profile, unused_broker, site="clyman",
                             mode="stream", persist_jobs=False)  # fmt: skip
    yield Village(runner, system.cases, profile, NoticeIssuer(system.cases, profile))
    system.cases.close()


@pytest.fixture
def village(tmp_path: Path) -> Iterator[Village]:
    yield from _village(tmp_path)


def _obstructed(village: Village) -> tuple[AbatementRecord, datetime]:
    """OB-1 (a trailer on 101 Main St's walk) not removed after its notice: abated."""
    village.act("record_obstruction", "OB-1", T0, frontage="main-st-101", kind="other",
                area="sidewalk", description="a trailer")  # fmt: skip
    delivered = T0 + timedelta(hours=1)
    due = delivered + village.profile.obstructions.sidewalk_removal_after_notice.duration
    abatement = village.abated("obstruction:OB-1", delivered, due + timedelta(minutes=1))
    return abatement, due + timedelta(hours=5)


def test_370_8_F_an_unpaid_obstruction_bill_goes_on_the_tax_roll_on_day_60(
    village: Village,
) -> None:
    abatement, done = _obstructed(village)
    bill_id = village.bill(abatement, done, received=done + timedelta(days=4))
    rules = village.profile.obstructions
    case = village.runner.engine.enforcement.cases["obstruction:OB-1"]
    day_60 = village.day(done, rules.tax_roll_after)
    assert (case.section, case.state, case.costs_incurred_at, case.tax_roll_at) == (
        "obstruction", "billed", done, day_60,
    )  # fmt: skip
    received, zone = done + timedelta(days=4), village.profile.zone
    assert case.bill_due == end_of_calendar_day(received, rules.bill_payable.days, zone)
    village.runner.advance(day_60 - timedelta(seconds=1))
    assert village.cases.bills.list_tax_roll() == []
    village.runner.advance(day_60)
    [entry] = village.cases.bills.list_tax_roll()
    bill = village.cases.bills.get(bill_id)
    assert (entry.bill_id, entry.certified_at, entry.amount) == (bill_id, day_60, bill.amount)
    assert entry.citation == rules.tax_roll_after.citation == "§ 370-8 F (inferred)"
    assert (entry.tax_year, bill.status) == (2027, "certified")
    assert village.refused() == []
    # The Clerk-Treasurer's certification names the section the entry is under.
    lines = tax_roll_lines(village.cases, village.profile, 2027)
    # The section as the Code has it: the profile's "(inferred)" mark stays in the record.
    assert [x.citation for x in lines] == ["§ 370-8 F"]
    text = flat(pdf_text(tax_roll_pdf(lines, village.profile, 2027, day_60)))
    assert "Also entered under: Village Code § 370-8 F." in text
    # The bill's clock record carries § 370-8 F's values, not § 370-10 G's.
    [clock] = village.cases.clocks.list(frontage_id="main-st-101", kind="enforcement")
    assert clock.state == "tax_roll"
    assert {r.name for r in clock.rules} == {"obstructions.bill_payable",
                                             "obstructions.tax_roll_after"}  # fmt: skip


def test_370_8_F_a_paid_bill_never_reaches_the_tax_roll_and_no_receipt_is_held(
    village: Village, tmp_path: Path
) -> None:
    abatement, done = _obstructed(village)
    bill_id = village.bill(abatement, done, received=done + timedelta(days=4))
    amount = village.cases.bills.get(bill_id).amount
    record_payment(village.cases, "r-1", bill_id, amount, done + timedelta(days=9),
                   who="Clerk Lee", method="check")  # fmt: skip
    village.runner.tick()
    village.runner.advance(done + timedelta(days=90))
    assert village.cases.bills.list_tax_roll() == []
    assert village.runner.engine.enforcement.cases["obstruction:OB-1"].state == "paid"
    assert village.refused() == []

    # Another village's bill whose receipt was never recorded: held for the clerk.
    (tmp_path / "other").mkdir()
    for other in _village(tmp_path / "other"):
        abatement, done = _obstructed(other)
        other.bill(abatement, done, received=None)
        other.runner.advance(done + timedelta(days=90))
        assert other.cases.bills.list_tax_roll() == []
        assert other.held("obstruction:OB-1") == [
            "the bill's receipt is not recorded: its 10 days to pay have not begun"
        ]


@pytest.mark.parametrize(
    ("rule", "finding", "tax_roll", "cited"),
    [
        ("snow_on_street", {"from_own_walk": True}, "billing.tax_roll_after", "§ 370-10 G"),
        ("mailbox", {}, "billing.other_tax_roll_after", "§ 370-11 C"),
    ],
    ids=["370-10 C", "370-11 C"],
)
def test_inspector_entered_rules_reach_the_tax_roll_on_their_sections_terms(
    village: Village, rule: str, finding: dict[str, Any], tax_roll: str, cited: str
) -> None:
    village.act("record_inspection_finding", "IN-1", T0, frontage="main-st-103", rule=rule,
                **finding)  # fmt: skip
    delivered = T0 + timedelta(hours=2)
    abatement = village.abated("inspection:IN-1", delivered, delivered + timedelta(days=10))
    done = delivered + timedelta(days=10, hours=3)
    village.bill(abatement, done, received=done + timedelta(days=3))
    period = dict(village.profile.rules())[tax_roll]
    assert isinstance(period, Rule)
    due = village.day(done, period)
    village.runner.advance(due - timedelta(seconds=1))
    assert village.cases.bills.list_tax_roll() == []
    village.runner.advance(due)
    [entry] = village.cases.bills.list_tax_roll()
    assert entry.certified_at == due
    assert entry.citation is not None
    assert cited in entry.citation
    assert village.refused() == []


def test_370_11_C_no_entry_while_the_bill_waits_for_the_villages_confirmation(
    tmp_path: Path,
) -> None:
    # billing.other_tax_roll_after changed after the Village confirmed it: unconfirmed again.
    profile = load_profile()
    rule = profile.billing.other_tax_roll_after.model_copy(update={"value": Decimal(61)})
    billing = profile.billing.model_copy(update={"other_tax_roll_after": rule})
    for village in _village(tmp_path, profile.model_copy(update={"billing": billing})):
        village.act("record_inspection_finding", "MB-1", T0, frontage="main-st-103",
                    rule="mailbox")  # fmt: skip
        delivered = T0 + timedelta(hours=2)
        abatement = village.abated("inspection:MB-1", delivered, delivered + timedelta(days=10))
        done = delivered + timedelta(days=10, hours=3)
        village.bill(abatement, done, received=done + timedelta(days=3))
        [notice] = village.cases.notices.list(kind="abatement_bill")
        assert notice.status == "held"
        village.runner.advance(done + timedelta(days=90))
        assert village.cases.bills.list_tax_roll() == []
        [reason] = village.held("inspection:MB-1")
        assert reason == (
            f"the bill's notice {notice.number} is held for the Village's confirmation of a"
            " value it relies on"
        )


def test_144_12_C_an_abandoned_excavation_charge_goes_on_the_next_tax_roll_at_once(
    village: Village,
) -> None:
    opened = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
    village.act("record_excavation_opened", "EX-1", opened, frontage="main-st-101",
                at=opened.isoformat(), description="foundation hole")  # fmt: skip
    village.runner.advance(datetime(2027, 3, 1, 6, 5, tzinfo=UTC))  # open "more than 3 months"
    served = datetime(2027, 3, 2, 15, 0, tzinfo=UTC)
    abatement = village.abated("inspection:EX-1", served, datetime(2027, 3, 24, tzinfo=UTC))
    done = datetime(2027, 4, 1, 20, 0, tzinfo=UTC)  # filled to grade; the cost reported
    bill_id = village.bill(abatement, done, received=None)  # no period to pay: no receipt
    case = village.runner.engine.enforcement.cases["inspection:EX-1"]
    assert (case.section, case.tax_roll_at) == ("abandoned_excavation", done)
    village.runner.advance(done + timedelta(minutes=1))
    [entry] = village.cases.bills.list_tax_roll()
    assert (entry.bill_id, entry.certified_at, entry.tax_year) == (bill_id, done, 2027)
    assert entry.citation == "§ 144-12 C (inferred)"
    assert village.held("inspection:EX-1") == []
    assert village.refused() == []
