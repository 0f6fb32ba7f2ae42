"""Correcting or undoing a wrong entry on a § 370-10 case, with the person's reason.

What may be corrected: a notice's service (the wrong time or method, or it was
entered on the wrong notice: undone) and the Village crew's completion (the
wrong time, or entered before the work was done: undone). The entry stays in
the case records and the audit log as it was recorded; the correction is a new
entry (``correct_entry``, naming the entry, the reason and who made it; its
audit row is ``action.correct_entry``) and, for a service, the notice's
``notice.delivery_corrected`` row. The clocks recompute from the corrected
facts when the runner applies it (``Enforcement._correct``): a corrected
service moves the owner's deadline; an undone one stops the period, and an
abatement ordered because that period ran out is withdrawn (ordered again if
the corrected period has run out too).

What rests on an entry must be undone first, latest first, as a later legal
act stands on the facts before it:

* the service ← the crew's completion (the work was done because the period
  ran out) ← the bill (issued with its costs dated from the completion) ←
  its receipt and the payments;
* a hazard confirmed after the service of the written notice replaced that
  notice's period: the service no longer runs anything to correct.

A bill once issued is not withdrawn by this system: the completion it states
(and the costs entered on its work order) stand until the Village withdraws
the bill. Refusals are one sentence in the clerk's words naming what to undo
first; nothing is recorded.

A payment on a bill (the wrong amount or date, or on the wrong bill) is
corrected or undone by ``correct_payment``: see "payments" below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Final
from zoneinfo import ZoneInfo

from sidewalk.alerts.delivery import DELIVERY_METHODS, delivery_counts
from sidewalk.alerts.letterhead import cited
from sidewalk.alerts.wording import STATE_WORDS
from sidewalk.analytics.casework import Entry, case_clock_key, case_copy, entries, refused
from sidewalk.analytics.clocks.actions import (
    CORRECTABLE,
    ActionError,
    CorrectEntry,
    EnforcementAction,
    parse_action,
)
from sidewalk.analytics.clocks.bill_terms import TAX_ROLLED, kind_of
from sidewalk.core.clock import format_local
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records
from sidewalk.storage.cases import BillingError

# An entry, and each later act that may rest on it, in the clerk's words.
ENTRY_WORDS: Final = {
    "record_delivery": "the service of the notice",
    "abatement_done": "the crew's completion of the Village's work",
}
LATER_WORDS: Final = {
    "abatement_done": "the crew's completion of the Village's work",
    "bill_received": "the owner's receipt of the bill",
    "paid_in_full": "the payment in full",
    "confirm_hazard": "the hazard confirmation",
    "owner_unavailable": "that the owner could not be reached",
}
# What rests on each correctable entry, if it was recorded after it.
RESTS_ON: Final = {
    "record_delivery": ("abatement_done", "bill_received", "paid_in_full"),
    "abatement_done": ("bill_received", "paid_in_full"),
}


def _up(text: str) -> str:
    """The sentence's first letter capitalised (``str.capitalize`` would lower "Village")."""
    return text[:1].upper() + text[1:]


class CorrectionRefused(ValueError):
    """The correction is refused; the message is the clerk's sentence (nothing recorded)."""


# The notices of a § 370-10 case; a bill is one when billed under § 370-10 G.
SNOW_NOTICES: Final = frozenset({"clearing_violation", "hazard_notice", "hazard_abatement_notice"})


def other_section(notice: records.NoticeRecord, violation: records.ViolationRecord) -> str | None:
    """Why entries on ``notice`` are not corrected here, in one sentence: a notice under
    another section than § 370-10 (an obstruction's, an inspector's finding's, a street
    or building notice), whose clocks take no correction; None for a § 370-10 notice."""
    terms = notice.detail.get("terms", "snow_and_ice")
    if notice.kind in SNOW_NOTICES or (
        notice.kind == "abatement_bill" and terms in ("snow_and_ice", "snow_deposit")
    ):
        return None
    under = cited(notice.citation) or cited(violation.citation)
    return (
        f"Notice {notice.number}{f' ({under})' if under else ''} is not a § 370-10"
        " snow-and-ice notice: only a snow-and-ice notice's service and the crew's"
        " completion of the Village's work on it are corrected or undone here."
    )


@dataclass(frozen=True)
class CaseRecords:
    """What a correction is judged on: the notice's case as recorded."""

    notice: records.NoticeRecord
    violation: records.ViolationRecord
    clock: records.ClockRecord | None
    actions: list[records.ActionRecord]
    bill: tuple[str, datetime] | None  # the bill issued for the case's work: number, date

    @classmethod
    def read(cls, cases: records.CaseStore, notice: records.NoticeRecord) -> CaseRecords:
        if notice.violation_id is None:
            raise CorrectionRefused(f"Notice {notice.number} has no case with entries to correct.")
        violation = cases.clocks.get_violation(notice.violation_id)
        key = case_clock_key(violation)
        clocks = cases.clocks.list(frontage_id=violation.frontage_id, kind="enforcement")
        return cls(
            notice,
            violation,
            next((c for c in reversed(clocks) if c.key == key), None),
            cases.actions.list(violation.key),
            _bill(cases, violation.key),
        )

    def entries(self) -> list[Entry]:
        """The notice's correctable entries (its service; the case's crew completion)."""
        return [
            e
            for e in entries(self.actions)
            if e.kind != "record_delivery" or e.notice == self.notice.number
        ]


def _bill(cases: records.CaseStore, violation_key: str) -> tuple[str, datetime] | None:
    abatement = cases.bills.abatement_by_key(f"{violation_key}/abatement")
    bill = None if abatement is None else cases.bills.for_abatement(abatement.id)
    if bill is None:
        return None
    notice = next(
        (
            n
            for n in cases.notices.list(kind="abatement_bill", frontage_id=bill.frontage_id)
            if n.detail.get("bill_id") == bill.id
        ),
        None,
    )
    return (notice.number if notice else f"no. {bill.id}"), bill.issued_at


def blocked(entry: Entry, case: CaseRecords, profile: Profile) -> str | None:
    """Why ``entry`` cannot be corrected or undone now, in the clerk's words: what rests
    on it (to undo first, the latest first), or that it is already undone; None if free."""
    zone = profile.zone
    what = ENTRY_WORDS.get(entry.kind, entry.kind)
    elsewhere = other_section(case.notice, case.violation)
    if elsewhere is not None or entry.kind not in CORRECTABLE:
        return elsewhere or f"{_up(entry.kind.replace('_', ' '))} cannot be corrected here."
    if entry.undone:
        return f"{_up(what)} was already undone."
    bill = None
    if case.bill is not None:
        bill = (
            f"bill {case.bill[0]} was issued on {format_local(case.bill[1], zone)} with its"
            " costs dated from the crew's completion: the bill must be withdrawn first (this"
            " system does not withdraw a bill)"
        )
    rests = RESTS_ON[entry.kind]
    later = [(e.id, e.kind, e.at) for e in entries(case.actions) if not e.undone]
    later += [(a.id, a.kind, a.at) for a in case.actions if a.error is None
              and a.kind not in CORRECTABLE]  # fmt: skip
    later = sorted((i, kind, at) for i, kind, at in later if i > entry.id and kind in rests)
    if entry.kind == "abatement_done" and bill is not None:
        return f"{_up(bill)}."
    if later:
        _, step, when = later[0]  # the act resting on this entry directly
        said = (
            f"{_up(LATER_WORDS[step])} was recorded on {format_local(when, zone)}"
            f" after {what}, and rests on it"
        )
        return f"{said}; {bill}." if bill else f"{said}: undo {LATER_WORDS[step]} first."
    if entry.kind == "record_delivery" and case.notice.kind == "clearing_violation":
        hazard = [a for a in case.actions if a.kind == "confirm_hazard" and a.error is None]
        if hazard and hazard[-1].id > entry.id:
            return (
                f"A hazard was confirmed on {format_local(hazard[-1].at, zone)} and the hazard"
                " notice replaced this notice's period: its service no longer runs a period."
            )
    return None


def correct_entry(
    cases: records.CaseStore,
    profile: Profile,
    notice: records.NoticeRecord,
    entry_id: int,
    *,
    who: str,
    reason: str,
    at: datetime | None = None,
    method: str | None = None,
    undo: bool = False,
) -> records.ActionRecord:
    """Correct the entry ``entry_id`` on ``notice``'s case to ``at`` (and ``method``, a
    service's), or ``undo`` it, for ``reason``; ``CorrectionRefused`` in the clerk's words.

    Tried on a copy of the case with the engine's own rules before anything is recorded.
    """
    if not reason.strip():
        raise CorrectionRefused("Reason: say why the entry is corrected (it is kept on record).")
    if not who.strip():
        raise CorrectionRefused("Who: name the person making the correction.")
    case = CaseRecords.read(cases, notice)
    if (elsewhere := other_section(notice, case.violation)) is not None:
        raise CorrectionRefused(elsewhere)
    entry = next((e for e in case.entries() if e.id == entry_id), None)
    if entry is None:
        raise CorrectionRefused(f"Notice {notice.number} has no such entry to correct.")
    why = blocked(entry, case, profile)
    if why is not None:
        raise CorrectionRefused(why)
    if method is not None and entry.kind != "record_delivery":
        raise CorrectionRefused("How: only a service has a method to correct.")
    if not undo:
        at = entry.at if at is None else at
        method = method or entry.method
        if (at, method) == (entry.at, entry.method):
            raise CorrectionRefused("Nothing to correct: give the right time or method.")
        _check_method(profile, notice, entry, method)
    detail: dict[str, object] = {
        "entry": entry.id, "step": entry.kind, "reason": reason.strip(), "undo": undo,
        "notice": notice.number,
    }  # fmt: skip
    if not undo and entry.kind == "record_delivery" and method is not None:
        detail["method"] = method
    # An undone entry is void from its own time: the case is as if it had not been made.
    when = entry.at if undo or at is None else at
    try:
        action = parse_action("correct_entry", case.violation.key, detail, at=when, who=who)
    except ActionError as exc:
        raise CorrectionRefused(f"Not recorded: {exc}") from None
    assert isinstance(action, CorrectEntry)
    engine = case_copy(profile, case.violation, case.clock, case.actions)
    if refused(engine, action) is not None:
        state = engine.cases[case.violation.key].state
        raise CorrectionRefused(
            f"{_up(ENTRY_WORDS[entry.kind])} cannot be corrected now: the case is at"
            f" “{STATE_WORDS.get(state, state)}”."
        )
    if entry.kind == "record_delivery":
        cases.notices.correct_delivered(notice.id, None if undo else when, who, reason.strip())
    return cases.actions.record("correct_entry", case.violation.key, when, who, detail)


def _check_method(
    profile: Profile, notice: records.NoticeRecord, entry: Entry, method: str | None
) -> None:
    if entry.kind != "record_delivery" or method is None:
        return
    if method not in DELIVERY_METHODS or not delivery_counts(profile, notice.kind, method):
        counted = [m for m in DELIVERY_METHODS if delivery_counts(profile, notice.kind, m)]
        raise CorrectionRefused(
            f"How it was served: {method} does not count as serving this notice;"
            f" the Village counts {' or '.join(counted)}."
        )


def entries_of(cases: records.CaseStore, notice: records.NoticeRecord) -> Sequence[Entry]:
    """The notice's correctable entries as they stand (none for a notice with no case)."""
    if notice.violation_id is None:
        return []
    return CaseRecords.read(cases, notice).entries()


# -- payments ---------------------------------------------------------------------------
#
# A payment entered with the wrong amount or date is corrected, one entered on the wrong
# bill is undone (then recorded on the right one); the wrong row stays, voided, and the
# right one is a new row (``cases.bills.correct_payment``, audit ``payment.corrected``
# naming who and why). Balances, the bill's status and the overdue list follow the
# payments left. What rests on a payment is refused, naming it:
#
# * the tax-roll entry that counted the bill's unpaid balance (G: "entered on the tax
#   roll"): the entry must be withdrawn first, which this system does not do;
# * the payment in full that closed a § 370-10 / § 370-8 case (``paid_in_full``): a
#   correction that leaves the bill unpaid, or moves the day it was paid in full, would
#   reopen a closed case, which this system does not do.
#
# A correction that pays the bill in full tells the clock, as a payment does.


@dataclass(frozen=True)
class PaymentFacts:
    """A bill and its standing payments, as the rules below judge them (pure values)."""

    amount: Decimal  # the bill's total
    payments: tuple[tuple[int, Decimal, datetime], ...]  # id, amount, paid at
    on_tax_roll: datetime | None  # when the bill was entered on the tax roll
    closed_at: datetime | None  # the case's payment in full, if a clock recorded it


def paid_in_full_at(
    amount: Decimal, payments: Sequence[tuple[Decimal, datetime]]
) -> datetime | None:
    """When the payments, in the order made, first cover ``amount`` (None: not yet)."""
    paid = Decimal("0.00")
    for value, at in sorted(payments, key=lambda p: p[1]):
        paid += value
        if paid >= amount:
            return at
    return None


def corrected_payments(
    facts: PaymentFacts, payment_id: int, amount: Decimal | None, paid_at: datetime | None,
    *, undo: bool,
) -> list[tuple[Decimal, datetime]]:  # fmt: skip
    """The bill's payments as they stand once ``payment_id`` is corrected or undone."""
    out: list[tuple[Decimal, datetime]] = []
    for i, value, at in facts.payments:
        if i != payment_id:
            out.append((value, at))
        elif not undo:
            out.append((value if amount is None else amount, at if paid_at is None else paid_at))
    return out


def payment_blocked(
    facts: PaymentFacts, payment_id: int, amount: Decimal | None, paid_at: datetime | None,
    *, undo: bool, bill: str, zone: ZoneInfo,
) -> str | None:  # fmt: skip
    """Why the payment cannot be corrected or undone as asked, in the clerk's words (what
    rests on it); None if it may be."""
    if facts.on_tax_roll is not None:
        return (
            f"Bill {bill} was entered on the tax roll on {format_local(facts.on_tax_roll, zone)}"
            " with its payments counted: the tax-roll entry must be withdrawn first (this"
            " system does not withdraw a tax-roll entry)."
        )
    if facts.closed_at is not None:
        after = paid_in_full_at(
            facts.amount, corrected_payments(facts, payment_id, amount, paid_at, undo=undo)
        )
        if after != facts.closed_at:
            return (
                f"Bill {bill} was paid in full on {format_local(facts.closed_at, zone)} and the"
                " case was closed on that payment: the payment in full must be undone first"
                " (this system does not reopen a closed case)."
            )
    return None


def _bill_of(cases: records.CaseStore, notice: records.NoticeRecord) -> records.BillRecord:
    bill_id = notice.detail.get("bill_id")
    if notice.kind != "abatement_bill" or not isinstance(bill_id, int):
        raise CorrectionRefused(f"Notice {notice.number} is not a bill: it has no payments.")
    return cases.bills.get(bill_id)


def payment_facts(
    cases: records.CaseStore, bill: records.BillRecord
) -> tuple[PaymentFacts, str | None]:
    """The bill's facts and the case whose clock hears of its payment (if one does)."""
    entry = next((t for t in cases.bills.list_tax_roll() if t.bill_id == bill.id), None)
    abatement = cases.bills.get_abatement(bill.abatement_id)
    key = None
    if abatement.violation_id is not None:  # a bill whose unpaid balance goes on the roll
        violation = cases.clocks.get_violation(abatement.violation_id)
        key = violation.key if kind_of(abatement.key, violation.rule) in TAX_ROLLED else None
    closed = None
    if key is not None:
        done = [a for a in cases.actions.list(key) if a.kind == "paid_in_full" and a.error is None]
        closed = done[-1].at if done else None
    pays = tuple((p.id, p.amount, p.paid_at) for p in cases.bills.list_payments(bill.id))
    return PaymentFacts(bill.amount, pays, entry.certified_at if entry else None, closed), key


def payments_of(
    cases: records.CaseStore, notice: records.NoticeRecord
) -> list[records.PaymentRecord]:
    """The standing payments on the bill ``notice`` sent, in the order made."""
    return cases.bills.list_payments(_bill_of(cases, notice).id)


def correct_payment(
    cases: records.CaseStore,
    profile: Profile,
    notice: records.NoticeRecord,
    payment_id: int,
    *,
    who: str,
    reason: str,
    now: datetime,
    amount: Decimal | None = None,
    paid_at: datetime | None = None,
    undo: bool = False,
) -> records.BillRecord:
    """Correct the payment ``payment_id`` on the bill ``notice`` sent to ``amount`` and/or
    ``paid_at``, or ``undo`` it, for ``reason``; the bill as it then stands.
    ``CorrectionRefused`` in the clerk's words, nothing recorded."""
    if not reason.strip():
        raise CorrectionRefused("Reason: say why the payment is corrected (it is kept on record).")
    if not who.strip():
        raise CorrectionRefused("Who: name the person making the correction.")
    if undo and (amount is not None or paid_at is not None):
        raise CorrectionRefused("Undo: a payment undone takes no amount or date.")
    bill = _bill_of(cases, notice)
    facts, key = payment_facts(cases, bill)
    old = next((p for p in facts.payments if p[0] == payment_id), None)
    if old is None:
        raise CorrectionRefused(f"Bill {notice.number} has no such payment standing to correct.")
    if amount is not None and (
        not amount.is_finite() or amount <= 0 or amount != amount.quantize(Decimal("0.01"))
    ):
        raise CorrectionRefused("Amount: give dollars and cents above zero, e.g. 15.00.")
    if not undo and (amount in (None, old[1]) and paid_at in (None, old[2])):
        raise CorrectionRefused("Nothing to correct: give the right amount or date.")
    why = payment_blocked(facts, payment_id, amount, paid_at, undo=undo, bill=notice.number,
                          zone=profile.zone)  # fmt: skip
    if why is not None:
        raise CorrectionRefused(why)
    cleared = paid_in_full_at(
        facts.amount, corrected_payments(facts, payment_id, amount, paid_at, undo=undo)
    )
    if key is not None and facts.closed_at is None and cleared is not None:
        _check_paid(cases, profile, key, cleared, who=who, number=notice.number)
    try:
        _, fixed = cases.bills.correct_payment(
            payment_id, now, who, reason.strip(), amount=amount, paid_at=paid_at
        )
    except BillingError as exc:
        raise CorrectionRefused(f"Not recorded: {exc}") from None
    if key is not None and facts.closed_at is None and cleared is not None:
        # Paid in full once corrected: the clock hears it as it hears a payment.
        cases.actions.record("paid_in_full", key, cleared, who, {"bill": bill.id})
    return fixed


def _check_paid(
    cases: records.CaseStore, profile: Profile, key: str, at: datetime, *, who: str, number: str
) -> None:
    """The payment in full the correction makes, tried on a copy of the case first."""
    violation = cases.clocks.violation_by_key(key)
    if violation is None:
        return  # no case recorded: the runner refuses the step, and says so on the bill
    clocks = cases.clocks.list(frontage_id=violation.frontage_id, kind="enforcement")
    clock = next((c for c in reversed(clocks) if c.key == case_clock_key(violation)), None)
    engine = case_copy(profile, violation, clock, cases.actions.list(key))
    action = parse_action("paid_in_full", key, {"bill": 0}, at=at, who=who)
    assert isinstance(action, EnforcementAction)
    if refused(engine, action) is not None:
        state = engine.cases[key].state
        raise CorrectionRefused(
            f"Bill {number} would be paid in full by this correction, but the case is at"
            f" “{STATE_WORDS.get(state, state)}”: it cannot be closed on it now."
        )
