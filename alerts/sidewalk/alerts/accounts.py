"""Money in the case records: abatement costs, bills, receipts, payments, overdue.

Each step that the clocks must know of becomes a person action the analytics
runner applies: the bill's receipt (``bill_received``: the period to pay runs
from it) and a payment that clears the balance (``paid_in_full``). For an
abatement no § 370-10 clock completes (§ 370-8 F, the inspector-entered rules)
whose unpaid bill goes on the tax roll, the crew's completion entered with the
bill is told to the clock too (``abatement_done``): its section's tax-roll entry
is then scheduled like § 370-10 G's (``enforcement``).

A case is against the owner of record when its notice was issued
(``casework.case_notice``). When the parcel changes hands while the case is
open, the profile's reading of § 370-10 F and G (``billing.owner_changed_during_case``,
for the Village attorney's confirmation) decides the bill: to the owner who was
served the notice ("owner served"), or no bill to the new owner before a notice
is served on them ("new notice"). ``owner_change_words`` tells the clerk. A bill
that rests on that reading while it is unconfirmed is held, not sent
(``OWNER_CHANGE`` among its notice's rules: ``NoticeIssuer.render``), with
``held_words`` saying why wherever the clerk sees bills; confirming the reading
(``sidewalk profile confirm``) releases it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Final

from sidewalk.alerts.billing import (
    AbatementWork,
    BillingInputError,
    bill_due_date,
    is_overdue,
    ledger,
    rates_of,
    total,
)
from sidewalk.alerts.confirm import still_waiting, waiting_for
from sidewalk.alerts.crew import CrewWork, rates_in_force
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import LedgerLine
from sidewalk.alerts.wording import abatement_reason, local_day, words
from sidewalk.analytics.casework import OwnerChange, case_notice, open_cases, owner_changes
from sidewalk.analytics.clocks.bill_terms import TAX_ROLLED, BillTerms, bill_terms, kind_of
from sidewalk.core.calendar import local_date
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records

# The profile's reading of § 370-10 F and G for a sale during an open case.
OWNER_CHANGE: Final = "billing.owner_changed_during_case"


def owner_change_hold_words() -> str:
    """Why a bill to the owner who was served waits, as the clerk reads it."""
    return (
        "this bill goes to the owner who was served the notice, not the new owner; the"
        " Village attorney has not confirmed this reading of § 370-10 F: confirm it with"
        f" `sidewalk profile confirm {OWNER_CHANGE} --by … --reference …`, or bill by hand"
    )


def held_words(cases: records.CaseStore, notice: records.NoticeRecord) -> str | None:
    """Why ``notice`` is held, in the clerk's words (None: it waits for nothing): the
    owner-change reading in full, the other values by name."""
    if notice.status != "held":
        return None
    waiting = waiting_for(cases, notice)
    said = [owner_change_hold_words()] if OWNER_CHANGE in waiting else []
    rest = [words(w.rpartition(".")[2]) for w in waiting if w != OWNER_CHANGE]
    if rest:
        said.append(f"it waits for the Village's confirmation of {', '.join(rest)}")
    return "; ".join(said) or None


@dataclass(frozen=True)
class BilledAbatement:
    expenses: list[records.ExpenseRecord]
    bill: records.BillRecord
    notice: records.NoticeRecord


def bill_abatement(
    issuer: NoticeIssuer,
    abatement_id: int,
    work: AbatementWork,
    at: datetime,
    *,
    who: str,
    completed_at: datetime | None = None,
    billed_to: tuple[str, Sequence[str]] | None = None,
) -> BilledAbatement:
    """Price the work, keep the expense account, create the bill and its notice.

    ``at`` is when the bill is made. The costs are incurred when the crew
    finished (§ 370-10 G): the abatement's recorded completion, which the
    § 370-10 clock records from ``abatement_done``; the expenses, the bill and
    its 60 days to the tax roll all count from it. ``completed_at`` records it
    for an abatement no clock completes (§ 370-8, § 144-17); given for one already
    completed, it must agree. No completion recorded: ``BillingInputError``.

    The bill is under the abatement's own section (``bill_terms``): its words,
    period to pay, consequence and any administrative share are that section's.
    A § 144-17 sweeping bill goes to the primary contractor, not the frontage's
    owner: ``billed_to`` (name, address lines), or the contractor recorded with
    the incident; with neither, ``BillingInputError``.

    Safe to run again after a crash part-way: existing expenses must match the
    ledger (otherwise ``BillingInputError``), the bill and notice are keyed.
    """
    cases, profile = issuer.cases, issuer.profile
    abatement = cases.bills.get_abatement(abatement_id)
    incurred = _costs_incurred_at(cases, abatement, completed_at, who)
    terms = abatement_terms(cases, profile, abatement)
    if not terms.chargeable:  # § 370-10 C's deposit, read as the penalty alone
        raise BillingInputError(
            "no bill: the Village reads § 370-10 as charging no one for removing snow or ice "
            "deposited on a public way (the penalty alone applies)"
        )
    lines = _priced(cases, profile, terms, work)
    existing = cases.bills.list_expenses(abatement_id)
    if existing:
        if [(e.description, e.amount) for e in existing] != [
            (x.description, x.amount) for x in lines
        ]:
            raise BillingInputError(
                f"abatement {abatement_id} already has a different expense account"
            )
        expenses = existing
    else:
        expenses = [
            cases.bills.add_expense(abatement_id, x.amount, incurred, x.description) for x in lines
        ]
        cases.audit.append(
            who, "abatement.costed", f"abatement:{abatement_id}",
            {"total": total(lines), "lines": len(lines), "crew_hours": work.crew_hours,
             "equipment_hours": work.equipment_hours},
            at=at,
        )  # fmt: skip
    addressee, served, reading = _billed_to(
        cases, profile, abatement, terms, billed_to=billed_to, at=at
    )
    bill = cases.bills.create(
        f"bill/{abatement.key}", abatement_id, at, owner_id=None if served is None else served.id
    )
    _tell_the_clock(cases, abatement, incurred, who)
    citation = str(abatement.detail.get("citation") or terms.citation)
    notice = issuer.abatement_bill(
        bill, lines, at, work=abatement_reason(abatement.reason), abatement_citation=citation,
        terms=terms, billed_to=addressee, rests_on=reading,
    )  # fmt: skip
    return BilledAbatement(expenses, bill, notice)


def _priced(
    cases: records.CaseStore, profile: Profile, terms: BillTerms, work: AbatementWork
) -> list[LedgerLine]:
    """The work priced at the profile's rates, each line marked unconfirmed only while
    the Village has not confirmed the rate it used (``crew.rates_in_force``)."""
    share = terms.administration[1] if terms.administration else None
    rates = rates_in_force(rates_of(profile), cases.confirmations.in_force())
    return ledger(work, rates, administration=share)


def crew_work_of(abatement: records.AbatementRecord) -> CrewWork | None:
    """The crew's hours recorded with the work order (``record_crew_work``), if any."""
    data = abatement.detail.get("crew_work")
    return CrewWork.from_json(data) if isinstance(data, Mapping) else None


def record_crew_work(
    cases: records.CaseStore, abatement_id: int, work: CrewWork, at: datetime, who: str
) -> records.AbatementRecord:
    """Keep the crew's hours with the work order, for its bill (refused once billed)."""
    return cases.bills.record_crew_work(abatement_id, work.to_json(), at, who)


@dataclass(frozen=True)
class BillPreview:
    """The bill as the owner will read it, before anything is stored."""

    lines: list[LedgerLine]
    total: Decimal
    text: str
    addressee: tuple[str, tuple[str, ...]]
    waits_for: list[str]  # the profile values the bill waits for (it is held until then)


def preview_bill(
    issuer: NoticeIssuer, abatement_id: int, work: AbatementWork, at: datetime
) -> BillPreview:
    """What ``bill_abatement`` would issue now for ``work``, rendered by the same letter,
    stored nowhere. ``BillingInputError`` (in the clerk's words) where it could not be
    billed: the crew's completion not recorded, no rates, the parcel sold in the case
    under the "new notice" reading, no contractor for a § 144-17 bill."""
    cases, profile = issuer.cases, issuer.profile
    abatement = cases.bills.get_abatement(abatement_id)
    if abatement.completed_at is None:
        raise BillingInputError(
            "The crew's completion is not recorded yet: the costs are incurred when the work"
            " was done, so the bill waits for it."
        )
    if cases.bills.for_abatement(abatement_id) is not None:
        raise BillingInputError("This work order is billed already.")
    terms = abatement_terms(cases, profile, abatement)
    lines = _priced(cases, profile, terms, work)
    addressee, _, reading = _billed_to(cases, profile, abatement, terms, billed_to=None, at=at)
    if addressee is None:
        owner = cases.registry.owner_of_record(abatement.frontage_id, at)
        addressee = (owner.name, tuple(owner.address_lines))
    notice, rendered = issuer.abatement_bill_preview(
        abatement, lines, at, costs_incurred_at=abatement.completed_at, addressee=addressee,
        work=abatement_reason(abatement.reason),
        abatement_citation=str(abatement.detail.get("citation") or terms.citation),
        terms=terms, rests_on=reading,
    )  # fmt: skip
    waiting = still_waiting(notice.rules, cases.confirmations.in_force())
    return BillPreview(lines, total(lines), rendered.text, addressee, waiting)


def _tell_the_clock(
    cases: records.CaseStore, abatement: records.AbatementRecord, incurred: datetime, who: str
) -> None:
    """The crew's completion of an abatement the § 370-8 or an inspector-entered rule's
    clock ordered, for the tax-roll clock of its section (once: the bill is keyed)."""
    key = _clocked_violation(cases, abatement)
    if key is None or ":clearing:" in key:
        return  # § 370-10: ``sidewalk act abatement_done`` told the clock already
    if any(a.kind == "abatement_done" for a in cases.actions.list(key)):
        return
    cases.actions.record(
        "abatement_done", key, incurred, who, {"note": f"bill for abatement {abatement.id}"}
    )


def _clocked_violation(cases: records.CaseStore, abatement: records.AbatementRecord) -> str | None:
    """The violation key whose clock follows this abatement's bill: one whose unpaid bill
    goes on the tax roll (§ 144-17's contractor and § 370-6's permittee are not)."""
    if abatement.violation_id is None:
        return None
    violation = cases.clocks.get_violation(abatement.violation_id)
    if kind_of(abatement.key, violation.rule) not in TAX_ROLLED:
        return None
    return violation.key


def abatement_terms(
    cases: records.CaseStore, profile: Profile, abatement: records.AbatementRecord
) -> BillTerms:
    """The section an abatement is billed under and its terms (``bill_terms``)."""
    rule = None
    if abatement.violation_id is not None:
        rule = cases.clocks.get_violation(abatement.violation_id).rule
    return bill_terms(profile, kind_of(abatement.key, rule))


def _billed_to(
    cases: records.CaseStore,
    profile: Profile,
    abatement: records.AbatementRecord,
    terms: BillTerms,
    *,
    billed_to: tuple[str, Sequence[str]] | None,
    at: datetime,
) -> tuple[tuple[str, tuple[str, ...]] | None, records.OwnerRecord | None, list[records.RuleUse]]:
    """Whom the bill goes to (None: the owner of record at ``at``), the owner served
    when the parcel changed hands since the case's notice, and the profile readings
    the bill then rests on: one answer for the bill and its preview."""
    addressee = _addressee(cases, abatement, terms, billed_to)
    served = None if addressee is not None else _owner_served(cases, profile, abatement, at)
    if served is None:
        return addressee, None, []
    # The bill rests on the profile's reading of F and G: held until it is confirmed.
    rule = profile.billing.owner_changed_during_case
    reading = records.RuleUse(
        OWNER_CHANGE, rule.value, records.TEXT_UNIT, rule.citation, rule.unconfirmed, rule.note
    )
    return (served.name, tuple(served.address_lines)), served, [reading]


def _addressee(
    cases: records.CaseStore,
    abatement: records.AbatementRecord,
    terms: BillTerms,
    billed_to: tuple[str, Sequence[str]] | None,
) -> tuple[str, tuple[str, ...]] | None:
    """Whom a bill is mailed to when it is not the frontage's owner (§ 144-17's contractor)."""
    if billed_to is not None:
        return billed_to[0], tuple(billed_to[1])
    if terms.billed != "contractor":
        return None
    evidence = (
        {}
        if abatement.violation_id is None
        else cases.clocks.get_violation(abatement.violation_id).evidence
    )
    name, address = evidence.get("contractor"), evidence.get("contractor_address")
    if not name or not address:
        raise BillingInputError(
            f"abatement {abatement.id}: the bill goes to the primary contractor "
            f"({terms.citation}); record the contractor's name and address with the "
            "incident, or give them with the bill"
        )
    return str(name), tuple(str(line) for line in address)


def _owner_served(
    cases: records.CaseStore, profile: Profile, abatement: records.AbatementRecord, at: datetime
) -> records.OwnerRecord | None:
    """The owner the case's notice went to, when the owner of record at ``at`` is another
    (a sale during the case): the bill goes to them, at their last-known address (G).
    None when the owner has not changed. Under the "new notice" reading no bill goes to
    a new owner who was served no notice: ``BillingInputError``."""
    if abatement.violation_id is None:
        return None
    violation = cases.clocks.get_violation(abatement.violation_id)
    notice = case_notice(violation, cases.notices.list(frontage_id=abatement.frontage_id))
    if notice is None:
        return None
    now = cases.registry.owner_of_record(abatement.frontage_id, at)
    if now.id == notice.owner_id:
        return None
    served = cases.registry.get_owner(notice.owner_id)
    if profile.billing.owner_changed_during_case.value == "new notice":
        raise BillingInputError(
            f"abatement {abatement.id}: {now.name} became the owner of record after notice"
            f" {notice.number} was issued to {served.name}; under the Village's reading of"
            " § 370-10 F and G no bill goes to a new owner before a written notice is served"
            " on them"
        )
    return served


def owner_change_words(
    change: OwnerChange,
    owners: dict[str, records.OwnerRecord],
    profile: Profile,
    confirmed: records.ConfirmationRecord | None = None,
) -> str:
    """What a change of owner during an open case means, as the clerk reads it."""
    zone = profile.zone
    notice, was, now = change.notice, owners[change.bound_owner], owners[change.new_owner]
    issued = local_day(notice.issued_at.astimezone(zone).date())
    since = local_day(change.changed_at.astimezone(zone).date())
    said = (
        f"Owner of record changed while a case was open: notice {notice.number} was issued"
        f" on {issued} to {was.name}; {now.name} is the owner of record from {since}."
    )
    reading = profile.billing.owner_changed_during_case
    if reading.value == "new notice":
        said += (
            f" Under the Village's reading of § 370-10 F and G, no bill goes to {now.name}"
            " before a written notice is served on them."
        )
    elif notice.delivered_at is None:
        said += (
            f" The notice has not been served: under the Village's reading of § 370-10 F and"
            f" G it is to be served on {was.name}, to whom it was issued, and the bill for this"
            f" case goes to {was.name}, not to {now.name}, who received no notice."
        )
    else:
        served = local_day(notice.delivered_at.astimezone(zone).date())
        said += (
            f" Under the Village's reading of § 370-10 F and G, the bill for this case goes to"
            f" {was.name}, who was served the notice on {served}, not to {now.name}, who"
            " received no notice."
        )
    said += " An unpaid bill still goes on the tax roll against the property."
    if confirmed is not None and confirmed.value == reading.value:
        on = local_day(confirmed.confirmed_at.astimezone(zone).date())
        return f"{said} (Confirmed by {confirmed.confirmed_by} on {on}: {confirmed.reference}.)"
    return f"{said} (This reading is for the Village attorney's confirmation.)"


def place_owner_changes(
    cases: records.CaseStore, profile: Profile, frontage_ids: Sequence[str]
) -> list[str]:
    """The clerk's words for every open case on ``frontage_ids`` whose parcel changed
    hands after the case's notice was issued (registry show, the property page, Today)."""
    violations = [v for v in cases.clocks.list_violations() if v.frontage_id in frontage_ids]
    if not violations:
        return []
    abatements = cases.bills.list_abatements()
    owners: dict[str, records.OwnerRecord] | None = None
    done = cases.confirmations.in_force().get("billing.owner_changed_during_case")
    out: list[str] = []
    for frontage_id in dict.fromkeys(frontage_ids):
        mine = [v for v in violations if v.frontage_id == frontage_id]
        if not mine:
            continue
        running = open_cases(mine, cases.clocks.list(frontage_id=frontage_id), abatements)
        parcel = cases.registry.get_frontage(frontage_id).parcel_id
        if not running or parcel is None:
            continue
        changes = owner_changes(
            running, cases.notices.list(frontage_id=frontage_id),
            cases.registry.ownerships(parcel),
        )  # fmt: skip
        if changes and owners is None:
            owners = {o.id: o for o in cases.registry.list_owners()}
        out += [owner_change_words(c, owners or {}, profile, done) for c in changes]
    return out


def owner_changes_since(
    cases: records.CaseStore, profile: Profile, issued: Mapping[str, datetime]
) -> list[tuple[str, str]]:
    """(frontage, the clerk's words) for each frontage of ``issued`` (frontage: when its
    case's notice was issued) whose parcel's owner of record changed since: two reads
    for the whole village, then ``place_owner_changes`` only where a sale came after a
    notice (Today)."""
    if not issued:
        return []
    current = cases.registry.current_ownerships()
    changed = [
        f.id
        for f in cases.registry.list_frontages(include_retired=True)
        if f.id in issued
        and f.parcel_id in current
        and current[f.parcel_id].effective_from > issued[f.id]
    ]
    return [(fid, said) for fid in changed for said in place_owner_changes(cases, profile, [fid])]


def _costs_incurred_at(
    cases: records.CaseStore,
    abatement: records.AbatementRecord,
    completed_at: datetime | None,
    who: str,
) -> datetime:
    """The crew's recorded completion of ``abatement``: the date its costs were incurred."""
    if abatement.completed_at is not None:
        if completed_at is not None and completed_at != abatement.completed_at:
            raise BillingInputError(
                f"abatement {abatement.id} was completed {abatement.completed_at.isoformat()}"
                f" as recorded, not {completed_at.isoformat()}"
            )
        return abatement.completed_at
    clocked = abatement.violation_id is not None and ":clearing:" in (
        cases.clocks.get_violation(abatement.violation_id).key
    )
    if completed_at is None or clocked:
        step = "sidewalk act abatement_done" if clocked else "its completion time"
        raise BillingInputError(
            f"abatement {abatement.id}: the crew's completion is not recorded ({step});"
            " the costs are incurred when the work was done, so the bill waits for it"
        )
    done = cases.bills.complete_abatement(abatement.id, completed_at)
    assert done.completed_at is not None
    cases.audit.append(
        who, "abatement.completion_entered", f"abatement:{abatement.id}",
        {"completed_at": completed_at.isoformat()}, at=completed_at,
    )  # fmt: skip
    return done.completed_at


def _due_date(
    cases: records.CaseStore, bill_id: int, received_at: datetime, profile: Profile
) -> date:
    """The last day to pay under the bill's section; a section with no period to pay
    (§ 144-12 C: the cost goes on the next tax roll) gives the day of receipt."""
    abatement = cases.bills.get_abatement(cases.bills.get(bill_id).abatement_id)
    terms = abatement_terms(cases, profile, abatement)
    if terms.payable is None:
        return local_date(received_at, profile.zone)
    return bill_due_date(received_at, profile, terms.payable[1])


def _violation_key(cases: records.CaseStore, bill: records.BillRecord) -> str | None:
    """The violation whose clock hears of the bill's receipt and payment, if one does."""
    return _clocked_violation(cases, cases.bills.get_abatement(bill.abatement_id))


def held_bill_words(cases: records.CaseStore, bill: records.BillRecord) -> str | None:
    """Why ``bill``'s notice is held, not sent (``held_words``); None when it is not."""
    notice = _bill_notice(cases, bill)
    return None if notice is None else held_words(cases, notice)


def sold_during_case(
    cases: records.CaseStore, profile: Profile, abatement_id: int, at: datetime
) -> str | None:
    """Why a bill made by hand for ``abatement_id`` (the dashboard's, which sends no
    notice) would go to the wrong person: the parcel changed hands since the case's
    notice, so the bill is for ``sidewalk notices bill``, which applies the Village's
    reading of § 370-10 F and G and holds it while unconfirmed; None when it did not."""
    abatement = cases.bills.get_abatement(abatement_id)
    try:
        served = _owner_served(cases, profile, abatement, at)
    except BillingInputError as exc:
        return str(exc)
    if served is None:
        return None
    return (
        f"the owner of record changed while the case was open, and the notice was issued to"
        f" {served.name}: bill it with `sidewalk notices bill {abatement_id}`, which bills the"
        " owner who was served under the Village's reading of § 370-10 F and G and holds the"
        " bill while that reading is not confirmed"
    )


def _bill_notice(cases: records.CaseStore, bill: records.BillRecord) -> records.NoticeRecord | None:
    for notice in cases.notices.list(kind="abatement_bill", frontage_id=bill.frontage_id):
        if notice.detail.get("bill_id") == bill.id:
            return notice
    return None


def record_bill_receipt(
    issuer: NoticeIssuer, bill_id: int, received_at: datetime, who: str
) -> records.BillRecord:
    """The owner received the bill: due date = receipt + 10 calendar days; the clock hears it."""
    cases = issuer.cases
    before = cases.bills.get(bill_id)
    bill = cases.bills.set_received(
        bill_id,
        received_at,
        _due_date(cases, bill_id, received_at, issuer.profile),
    )
    if before.received_at is not None:
        return bill
    notice = _bill_notice(cases, bill)
    if notice is not None:
        cases.notices.set_received(notice.id, received_at)
    key = _violation_key(cases, bill)
    if key is not None:
        cases.actions.record("bill_received", key, received_at, who, {"bill": bill_id})
    return bill


def record_payment(
    cases: records.CaseStore,
    key: str,
    bill_id: int,
    amount: Decimal,
    paid_at: datetime,
    *,
    who: str,
    method: str,
    reference: str | None = None,
) -> records.BillRecord:
    """Record a payment (once per ``key``); the payment that clears the bill tells the clock."""
    before = cases.bills.get(bill_id)
    known = {p.key for p in cases.bills.list_payments(bill_id, voided=True)}
    cases.bills.record_payment(key, bill_id, amount, paid_at, method=method, reference=reference)
    bill = cases.bills.get(bill_id)
    if key in known:
        return bill
    cases.audit.append(
        who, "payment.received", f"bill:{bill_id}",
        {"key": key, "amount": amount, "balance": bill.balance}, at=paid_at,
    )  # fmt: skip
    violation = _violation_key(cases, bill)
    if before.balance > 0 >= bill.balance and violation is not None:
        cases.actions.record("paid_in_full", violation, paid_at, who, {"bill": bill_id})
    return bill


def overdue_bills(issuer: NoticeIssuer, at: datetime) -> list[records.BillRecord]:
    """Open bills with a balance past their last day to pay, in issue order."""
    return [
        b
        for b in issuer.cases.bills.list(status="open")
        if is_overdue(b.status, b.due_date, b.balance, at, issuer.profile)
    ]
