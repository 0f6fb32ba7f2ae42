"""A § 370-10 case as it stands with every recorded entry counted, from the engine itself.

The dashboard and ``sidewalk act`` hold no rule: they rebuild a copy of the case
in the state the analytics runner last recorded, play on it the entries people
recorded since (so a service recorded a second ago already counts), and ask the
clock engine's ``Enforcement`` whether a step, or the correction of an entry,
would be accepted, before anything is recorded. The owner's deadline after
service is the engine's too (the copy computes it from the recorded service).

``entries`` folds the corrections people recorded (``correct_entry``) onto the
entries they correct: each entry as it stands now (its corrected time and
method, or undone), the entry itself unchanged as it was recorded.

``open_cases`` counts a place's cases from the case rows themselves (a case
whose notice awaits service has no clock record yet). ``owner_changes`` finds
the cases whose parcel changed hands after their notice was issued: a case is
against the owner of record when its first notice was issued (§ 370-10 F: the
Village's removal follows the failure of the owner "after receiving a written
notice"), and the clerk must see what a sale during it means.

Everything here is pure: it takes the records already read (one query per kind
in the caller) and returns plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

from sidewalk.analytics.clocks.actions import (
    CORRECTABLE,
    ActionError,
    EnforcementAction,
    parse_action,
)
from sidewalk.analytics.clocks.enforcement import (
    ENFORCEMENT,
    PERIOD_STATES,
    Enforcement,
    EnforcementCase,
)
from sidewalk.analytics.clocks.states import CaseState
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import (
    AbatementRecord,
    ActionRecord,
    ClockRecord,
    NoticeRecord,
    ViolationRecord,
)
from sidewalk.storage.cases.records import OwnershipRecord

# The § 370-10 B–G steps a person records on a case, in the order a case meets them.
CASE_STEPS: Final = (
    "record_delivery",
    "confirm_hazard",
    "owner_unavailable",
    "inspected_clear",
    "abatement_done",
    "bill_received",
    "paid_in_full",
)
# The notice whose delivery a case waits for, by the state it waits in (record_delivery
# on any other notice of the case would start the wrong period).
AWAITS_DELIVERY: Final = {
    CaseState.NOTICE_ISSUED: "clearing_violation",
    CaseState.HAZARD_NOTICE_ISSUED: "hazard_notice",
}
# The notice whose period runs, by the period state.
PERIOD_OF: Final = {
    CaseState.NOTICE_PERIOD: "clearing_violation",
    CaseState.HAZARD_PERIOD: "hazard_notice",
}
HAZARD_STATES: Final = frozenset({CaseState.HAZARD_NOTICE_ISSUED, CaseState.HAZARD_PERIOD})
# States whose costs date is the crew's recorded completion.
COSTED_STATES: Final = frozenset({CaseState.ABATED, CaseState.BILLED})


def case_clock_key(violation: ViolationRecord) -> str:
    """The key the recorder gives a case's clock record."""
    return f"{violation.frontage_id}/{ENFORCEMENT}/{violation.key}"


@dataclass(frozen=True)
class CaseNow:
    """A § 370-10 case as it stands with every recorded action counted."""

    violation_key: str
    state: CaseState
    # The owner's deadline while a notice period runs (from the recorded delivery).
    owner_deadline: datetime | None
    # Steps the engine would accept now (before the notice and the role are considered).
    steps: tuple[str, ...]
    # Actions recorded but not yet applied by the runner.
    pending: int


@dataclass(frozen=True)
class Entry:
    """A correctable entry (a service, the crew's completion) as it stands now."""

    recorded: ActionRecord  # as it was recorded: never changed
    at: datetime  # when it happened, as corrected
    method: str | None  # a service's method, as corrected
    undone: bool
    corrections: tuple[ActionRecord, ...]  # the corrections recorded on it, in order

    @property
    def id(self) -> int:
        return self.recorded.id

    @property
    def kind(self) -> str:
        return self.recorded.kind

    @property
    def notice(self) -> str | None:
        number = self.recorded.detail.get("notice")
        return number if isinstance(number, str) else None


def _counts(a: ActionRecord) -> bool:
    """Recorded and not refused by the runner (applied, or waiting to be)."""
    return a.error is None


def entries(actions: Iterable[ActionRecord]) -> list[Entry]:
    """The case's correctable entries, each with the corrections recorded on it folded in
    (a correction the runner refused changes nothing)."""
    mine = [a for a in actions if _counts(a)]
    out: dict[int, Entry] = {}
    for a in mine:
        if a.kind in CORRECTABLE:
            method = a.detail.get("method") or a.detail.get("channel")
            out[a.id] = Entry(a, a.at, method if isinstance(method, str) else None, False, ())
        elif a.kind == "correct_entry":
            entry = out.get(int(a.detail.get("entry", 0)))
            if entry is None:
                continue
            fixed = replace(entry, corrections=(*entry.corrections, a))
            if a.detail.get("undo"):
                fixed = replace(fixed, undone=True)
            else:
                method = a.detail.get("method")
                fixed = replace(fixed, at=a.at, method=method or entry.method)
            out[entry.id] = fixed
    return list(out.values())


def standing(actions: Iterable[ActionRecord], kind: str) -> Entry | None:
    """The latest entry of ``kind`` on the case that is not undone."""
    found = [e for e in entries(actions) if e.kind == kind and not e.undone]
    return found[-1] if found else None


def enforcement_clocks(clocks: Iterable[ClockRecord]) -> dict[str, ClockRecord]:
    """The enforcement clock records by key (the latest wins)."""
    return {c.key: c for c in clocks if c.kind == ENFORCEMENT}


def pending_by_target(actions: Iterable[ActionRecord]) -> dict[str, list[ActionRecord]]:
    """Actions the runner has not applied yet, by target, in recorded order."""
    out: dict[str, list[ActionRecord]] = {}
    for a in actions:
        if a.applied_at is None:
            out.setdefault(a.target, []).append(a)
    return out


def case_copy(
    profile: Profile,
    violation: ViolationRecord,
    clock: ClockRecord | None,
    actions: Sequence[ActionRecord],
) -> Enforcement:
    """An engine holding a copy of the case: the state the runner last recorded, the facts
    a correction needs (the hazard path, the period's end, the costs' date) from the
    entries applied, and the entries not yet applied played on it in order."""
    applied = [a for a in actions if a.applied_at is not None and a.error is None]
    state = CaseState(clock.state) if clock is not None else CaseState.NOTICE_ISSUED
    unavailable = any(a.kind == "owner_unavailable" for a in applied)
    deadline = clock.deadline if clock is not None else None
    # The period's end stays on the record after it runs out (the order rests on it);
    # an owner unavailable to receive the hazard notice orders the work with none.
    ran_out = state == CaseState.ABATEMENT_ORDERED and not unavailable
    completion = standing(applied, "abatement_done")
    missed = violation.evidence.get("deadline")
    case = EnforcementCase(
        violation.key,
        violation.frontage_id,
        datetime.fromisoformat(missed) if isinstance(missed, str) else violation.detected_at,
        float(violation.evidence.get("required_width_mm") or 0.0),
        state=state,
        hazard=state in HAZARD_STATES or any(a.kind == "confirm_hazard" for a in applied),
        notice_deadline=deadline if state in PERIOD_STATES or ran_out else None,
        costs_incurred_at=completion.at if completion and state in COSTED_STATES else None,
    )
    engine = Enforcement(profile)
    engine.load({case.key: case})
    for a in actions:  # what people recorded since the runner last ran, in order
        if a.applied_at is not None:
            continue
        try:
            action = parse_action(a.kind, a.target, a.detail, at=a.at, who=a.who)
            if isinstance(action, EnforcementAction):
                engine.act(action)
        except (ActionError, KeyError, ValueError):
            continue  # the runner will refuse it too, and say why on the notice
    return engine


def refused(engine: Enforcement, action: EnforcementAction) -> str | None:
    """None if the engine accepts ``action`` on a copy of its case, else why not (the
    engine's words); the engine given is left as it was."""
    case = engine.cases[action.target]
    trial = Enforcement(engine.profile)
    trial.load({case.key: replace(case, history=[])})
    try:
        trial.act(action)
    except (KeyError, ValueError) as exc:
        return str(exc)
    return None


def try_step(engine: Enforcement, kind: str, target: str, at: datetime, who: str) -> str | None:
    """None if the engine would accept the step ``kind`` on its copy, else why not."""
    try:
        action = parse_action(kind, target, None, at=at, who=who)
    except ActionError as exc:
        return str(exc)
    assert isinstance(action, EnforcementAction)
    return refused(engine, action)


def case_now(
    profile: Profile,
    violation: ViolationRecord,
    clock: ClockRecord | None,
    actions: Sequence[ActionRecord],
    at: datetime,
) -> CaseNow:
    """The case with its pending actions played on a copy, and the steps it accepts at
    ``at``; ``actions`` are the case's (applied ones give facts, pending ones are played)."""
    engine = case_copy(profile, violation, clock, actions)
    played = engine.cases[violation.key]
    deadline = played.notice_deadline if played.state in PERIOD_STATES else None
    if deadline is None and played.state in PERIOD_STATES and clock is not None:
        deadline = clock.deadline
    steps = tuple(
        kind for kind in CASE_STEPS if try_step(engine, kind, violation.key, at, "casework") is None
    )
    pending = sum(1 for a in actions if a.applied_at is None)
    return CaseNow(violation.key, played.state, deadline, steps, pending)


# Notices that are not a case's own order to the owner: the bill follows the case, the
# advisories are to permittees.
NOT_CASE_NOTICES: Final = frozenset({"abatement_bill", "frozen_ground_advisory", "permit_advisory"})
# A case row the recorder has finished with (cured; closed by a person).
FINISHED: Final = frozenset({"cured", "closed"})


def _own_clock_key(violation: ViolationRecord) -> str | None:
    """The key of the clock a street or inspector case runs on (``obstruction:OB-1`` runs
    on ``<frontage>/obstruction/OB-1``); None for a § 370-10 clearing case."""
    head, sep, subject = violation.key.partition(":")
    if not sep or subject.startswith("clearing:") or head == violation.frontage_id:
        return None
    return f"{violation.frontage_id}/{head}/{subject}"


def open_cases(
    violations: Iterable[ViolationRecord],
    clocks: Iterable[ClockRecord],
    abatements: Iterable[AbatementRecord] = (),
) -> list[ViolationRecord]:
    """The cases not yet finished, from the case rows: a case runs until it is cured, or
    its bill is paid or entered on the tax roll. Its § 370-10 clock record, once it has
    one, says whether it closed; before it has one (a notice not yet served) the case is
    open. A street or inspector case runs while its own clock does, then while the
    Village's work for it is ordered."""
    by_key = {c.key: c for c in clocks}
    ordered = {a.violation_id for a in abatements if a.status == "ordered"}
    out = []
    for v in violations:
        if v.status in FINISHED:
            continue
        case = by_key.get(case_clock_key(v))
        if case is not None:
            if case.active:
                out.append(v)
            continue
        own_key = _own_clock_key(v)
        if own_key is None:
            out.append(v)  # § 370-10: open from its notice, before any service
            continue
        own = by_key.get(own_key)
        if (own is not None and own.active) or v.id in ordered:
            out.append(v)
    return out


def case_notice(violation: ViolationRecord, notices: Iterable[NoticeRecord]) -> NoticeRecord | None:
    """The case's first notice to the owner (its order: clear, remove, repair): the one
    that binds the case to the owner of record when it was issued."""
    mine = [n for n in notices if n.violation_id == violation.id and n.kind not in NOT_CASE_NOTICES]
    return min(mine, key=lambda n: (n.issued_at, n.id), default=None)


@dataclass(frozen=True)
class OwnerChange:
    """The parcel of an open case changed hands after the case's notice was issued."""

    violation: ViolationRecord
    notice: NoticeRecord
    bound_owner: str  # the owner of record when the notice was issued (owner id)
    new_owner: str  # the owner of record now (owner id)
    changed_at: datetime  # when the new owner's ownership took effect


def owner_changes(
    cases: Iterable[ViolationRecord],
    notices: Iterable[NoticeRecord],
    ownerships: Iterable[OwnershipRecord],
) -> list[OwnerChange]:
    """For ``cases`` (open, of one parcel), each whose latest owner of record (a sale
    recorded to take effect later counts: the clerk sees it coming) is not the owner its
    notice was issued to; ``ownerships`` are the parcel's."""
    notices = list(notices)
    recorded = list(ownerships)
    if not recorded:
        return []
    now = max(recorded, key=lambda o: (o.effective_from, o.id))
    out = []
    for v in cases:
        notice = case_notice(v, notices)
        if notice is None or notice.owner_id == now.owner_id:
            continue
        out.append(OwnerChange(v, notice, notice.owner_id, now.owner_id, now.effective_from))
    return out
