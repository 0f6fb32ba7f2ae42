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
stands until the Village withdraws the bill. Refusals are one sentence in the
clerk's words naming what to undo first; nothing is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from sidewalk.alerts.delivery import DELIVERY_METHODS, delivery_counts
from sidewalk.alerts.wording import STATE_WORDS
from sidewalk.analytics.casework import Entry, case_clock_key, case_copy, entries, refused
from sidewalk.analytics.clocks.actions import CORRECTABLE, ActionError, CorrectEntry, parse_action
from sidewalk.core.clock import format_local
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records

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
    if entry.kind not in CORRECTABLE:
        return f"{_up(entry.kind.replace('_', ' '))} cannot be corrected here."
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
