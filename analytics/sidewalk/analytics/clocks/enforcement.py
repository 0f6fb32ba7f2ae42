"""§ 370-10 B–G: what follows a clearing violation, one case per violation.

```
notice_issued ─delivery─▶ notice_period ─B(2) period over, not clear─▶ abatement_ordered
  │  (compliant measurement or inspected clear, any open state ─▶ cured)      │
  │ officer confirms hazard                                                  │ crew done (F)
  ▼                                                                          ▼
hazard_notice_issued ─delivery─▶ hazard_period ─2 h, not clear─▶ abatement_ordered ─▶ abated
  │                                                                          │ bill received
  └─ owner unavailable ─▶ abatement_ordered at once + after-the-fact notice  ▼
                                     paid ◀─ paid in full ─ billed ─ 60 days unpaid ─▶ tax_roll
```

* The notice periods run from the recorded *delivery*, never from issue
  (B(1): "within two hours from the delivery of the notice").
* A case is independent of later snowfalls: "subsequent additional
  accumulations of snow and/or ice shall not nullify any pending notice" (E).
* Each started 24-hour period of a continuing violation, from the missed
  clearing deadline until it is cured or abated, is a separate offense (E).
* The bill is payable within 10 calendar days from receipt (a bill received
  Mar 1 is payable through Mar 11); costs still unpaid go on the tax roll
  "within 60 days after such costs … are incurred" (G). The costs' date is
  the crew's recorded completion (``abatement_done``), day 0; the entry is due
  at the start of day 60 (local midnight), so it is made on or before day 60.
  Calendar days end at midnight, village time.
* No entry while a bill is inside its payment period. A bill whose 10 days run
  past the start of day 60 is held (``TaxRollHeld``, the clerk told once) and
  entered at the first lawful moment: as its payment period ends, if still
  unpaid, with the reason it is late (``TaxRollDue.late``). A bill whose receipt
  is not recorded is held until it is: then the same.

The Village's other abatements reach the tax roll the same way, each on its own
section's terms (``bill_terms``): when the crew's completion
of an abatement ordered by the § 370-8 obstruction clock or an inspector-entered
rule is recorded (``abatement_done`` on ``obstruction:<id>`` or ``inspection:<id>``),
a billing case opens ``abated`` for it (``open_billing``) and runs
``abated ─bill received─▶ billed ─▶ paid | tax_roll``:

* § 370-8 F: payable ``obstructions.bill_payable`` from receipt; unpaid
  ``obstructions.tax_roll_after`` after the costs → the tax roll (as G: day 60, held
  while a bill is inside its payment period).
* § 370-10 C (snow put on a public way): on § 370-10 G's terms.
* § 370-11 C, § 370-14, § 144-11, § 144-12 B: the sections provide no bill; the
  profile's ``billing.other_bill_payable`` and ``billing.other_tax_roll_after``
  (unconfirmed: the Village confirms them before a notice relies on them).
* § 144-12 C: "charged against the real estate and entered on the next succeeding
  tax roll as a special charge": no period to pay, so the entry is due when the
  costs are incurred, never held for a receipt.
* § 144-17 (the contractor: unpaid is a violation) and § 370-6 (silent on
  non-payment) never reach the tax roll: no billing case opens for them.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import cached_property
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.actions import CaseStep, CorrectEntry, EnforcementAction
from sidewalk.analytics.clocks.bill_terms import TAX_ROLLED, BillKind, BillTerms, bill_terms
from sidewalk.analytics.clocks.events import (
    AbatementOrdered,
    AbatementWithdrawn,
    Cause,
    Event,
    NoticeRequired,
    OffenseCounted,
    TaxRollDue,
    TaxRollHeld,
    Transition,
)
from sidewalk.analytics.clocks.inspections import INSPECTION, InspectionClocks
from sidewalk.analytics.clocks.obstructions import OBSTRUCTION, StreetClocks
from sidewalk.analytics.clocks.states import CaseState, InspectionState, ObstructionState
from sidewalk.core.calendar import (
    add_calendar_days,
    end_of_day,
    local_date,
    plus_elapsed,
    start_of_day,
)
from sidewalk.core.profile import Profile

ENFORCEMENT = "enforcement"
OPEN_STATES = frozenset(
    {
        CaseState.NOTICE_ISSUED,
        CaseState.NOTICE_PERIOD,
        CaseState.HAZARD_NOTICE_ISSUED,
        CaseState.HAZARD_PERIOD,
    }
)
DONE_STATES = frozenset({CaseState.CURED, CaseState.PAID, CaseState.TAX_ROLL})
# Notice periods running from a delivery; and the billing states the tax roll follows.
PERIOD_STATES = frozenset({CaseState.NOTICE_PERIOD, CaseState.HAZARD_PERIOD})
BILLING_STATES = frozenset({CaseState.ABATED, CaseState.BILLED})
# Widths come from float arithmetic (6 ft = 1828.8000000000002 mm): a walk
# measured at exactly the rule must comply.
WIDTH_TOLERANCE_MM = 1e-6


def stated_uncertainty(tolerance_mm: float, sigma_mm: float | None) -> float:
    """A measured width's stated uncertainty (mm): the profile's tolerance
    (``snow_and_ice.width_tolerance``) and twice the camera's one sigma of that
    measurement (``SnowMeasurement.width_uncertainty_mm``), root-sum-square. A
    measurement stating no sigma: the tolerance alone, exactly as before. A walk is
    short only by more than it (the owner's favour), when deciding and when curing."""
    if sigma_mm is None:
        return tolerance_mm
    return math.hypot(tolerance_mm, 2.0 * sigma_mm)


def _tax_roll_citation(terms: BillTerms) -> str:
    """The section a tax-roll entry is made under: its tax-roll value's citation (G,
    § 370-8 F), else the bill's (§ 144-12 C); "" when the profile cites none (an
    unconfirmed default: the recorder then cites the violation's own section)."""
    if terms.tax_roll is not None and terms.tax_roll[1].citation:
        return terms.tax_roll[1].citation
    return terms.citation


def ordered_abatement(
    key: str, street: StreetClocks, inspections: InspectionClocks
) -> tuple[str, str | None, datetime] | None:
    """The abatement the § 370-8 obstruction clock or an inspector-entered rule ordered
    for violation ``key`` (``obstruction:<id>``, ``inspection:<id>``): its frontage, the
    rule found (which picks the bill's section) and when it was ordered; None if none."""
    head, _, subject = key.partition(":")
    if head == OBSTRUCTION:
        seen = street.obstructions.get(subject)
        if seen is None or seen.state != ObstructionState.OVERDUE or seen.deadline is None:
            return None
        return seen.frontage, None, seen.deadline.due
    if head == INSPECTION:
        found = inspections.clocks.get(subject)
        if found is None or found.state != InspectionState.OVERDUE or found.deadline is None:
            return None
        rule = None if found.finding is None else found.finding.rule
        return found.frontage, rule, found.deadline.due
    return None


def _day(day: date) -> str:
    """``Friday, March 12, 2027``: a date as the clerk reads it."""
    return f"{day:%A, %B} {day.day}, {day.year}"


def end_of_calendar_day(at: datetime, days: int, zone: ZoneInfo) -> datetime:
    """Midnight ending the ``days``-th calendar day after ``at``'s local date."""
    return end_of_day(add_calendar_days(local_date(at, zone), days), zone)


def start_of_calendar_day(at: datetime, days: int, zone: ZoneInfo) -> datetime:
    """Local midnight beginning the ``days``-th calendar day after ``at``'s local date.

    § 370-10 G's tax-roll entry is due "within 60 days after such costs … are
    incurred": costs incurred Jan 10 (day 0) make Mar 11 day 60, and the entry
    falls due as day 60 begins, so it is made on or before day 60.
    """
    return start_of_day(add_calendar_days(local_date(at, zone), days), zone)


@dataclass
class EnforcementCase:
    """One violation's path through notice, abatement, bill and tax roll."""

    key: str
    frontage: str
    missed_deadline: datetime
    required_width_mm: float
    state: CaseState = CaseState.NOTICE_ISSUED
    hazard: bool = False
    notice_deadline: datetime | None = None
    offenses: int = 1
    costs_incurred_at: datetime | None = None
    bill_due: datetime | None = None
    tax_roll_at: datetime | None = None
    history: list[Transition] = field(default_factory=list)
    # The tax-roll entry came due while the bill was not yet past its payment period
    # (or its receipt was not recorded): held for a person, told once.
    tax_roll_held: bool = False
    # The violation was untreated ice (§ 370-10 A): only a walk seen free of ice cures it.
    ice: bool = False
    # The section the abatement is billed under (``bill_terms``), and whether the case is
    # only the bill's (an abatement another clock ordered: § 370-8, inspector-entered
    # rules): no notice, no offenses, only the bill and the tax roll.
    section: BillKind = "snow_and_ice"
    billing_only: bool = False
    # Corrections applied to the case so far. A correction can bring the case back to a
    # state at a time it stood at before (a service corrected back to its first time,
    # undone then entered again): the transitions after it carry the count, so the
    # records tell them from the first ones (``record_transition`` stores each once).
    revision: int = 0

    def move(self, to_state: CaseState, at: datetime, cause: Cause, **detail: object) -> Transition:
        said = {"violation": self.key, **detail}
        if self.revision:
            said["revision"] = self.revision
        t = Transition(self.frontage, ENFORCEMENT, self.state, to_state, at, cause, said)
        self.state = to_state
        self.history.append(t)
        return t

    @property
    def continuing(self) -> bool:
        """Still a violation for offense counting: not yet cured or abated."""
        if self.billing_only:
            return False
        return self.state in OPEN_STATES or self.state == CaseState.ABATEMENT_ORDERED

    def next_offense_at(self, period: timedelta) -> datetime:
        return plus_elapsed(self.missed_deadline, period * self.offenses)


class Enforcement:
    """Runs every open case; the engine calls it with readings, actions and time."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.cases: dict[str, EnforcementCase] = {}
        # Cases not yet finished, by frontage: measurements and time only touch these.
        self._live: dict[str, set[str]] = {}
        # The narrowest width that could cure any of a frontage's live cases, kept until
        # its live cases change: the owner who never clears has a case per storm, and
        # each of the walk's frames would otherwise be tested against every one of them.
        self._cure_floor: dict[str, float] = {}
        # ``next_due()`` as of the last change to any case (``_due_known``): before it
        # ``advance`` has nothing to do, which is what it finds on almost every call.
        # Every case changes only through the methods here, and each one that can
        # change a case forgets it (``_changed``).
        self._due: datetime | None = None
        self._due_known = False
        # Each live case's own next due instant (None: nothing due), kept until that case
        # changes, and a heap of them (an entry whose case has changed since is passed
        # over): with hundreds of cases counting offenses all winter, ``advance`` and
        # ``next_due`` would otherwise look at every case at every instant one is due.
        self._case_due: dict[str, datetime | None] = {}
        self._heap: list[tuple[datetime, str]] = []
        # Cases changed since their due instant was last worked out (None: every case),
        # and since ``_drop_done`` last looked (None: every case).
        self._stale: set[str] | None = None
        self._touched: set[str] | None = None

    @cached_property
    def _offense_every(self) -> timedelta:
        """The offense period (§ 370-10 A's "each day"), read from the profile once."""
        return self.profile.snow_and_ice.offense_period.duration

    def _changed(self, keys: Iterable[str] | None = None) -> None:
        """Forget ``next_due``, and the due instants of ``keys`` (None: of every case)."""
        self._due_known = False
        if keys is None:
            self._case_due.clear()
            self._heap = []
            self._stale = self._touched = None
            return
        keys = list(keys)
        for key in keys:
            self._case_due.pop(key, None)
        if self._stale is not None:
            self._stale.update(keys)
        if self._touched is not None:
            self._touched.update(keys)

    def load(self, cases: dict[str, EnforcementCase]) -> None:
        """Take over restored cases (a snapshot) and rebuild the index."""
        self._changed()
        self.cases = cases
        self._live, self._cure_floor = {}, {}
        for case in cases.values():
            if case.state not in DONE_STATES:
                self._go_live(case.frontage, case.key)

    def _go_live(self, frontage: str, key: str) -> None:
        self._live.setdefault(frontage, set()).add(key)
        self._cure_floor.pop(frontage, None)

    # -- starting a case -------------------------------------------------------

    def open(
        self,
        key: str,
        frontage: str,
        missed_deadline: datetime,
        required_width_mm: float,
        at: datetime,
        *,
        ice: bool = False,
    ) -> list[Event]:
        """A clearing violation was found: the B(2) written notice is due.

        ``ice``: the violation is untreated ice (A), which a width alone does not cure.
        """
        if key in self.cases:
            return []
        case = EnforcementCase(key, frontage, missed_deadline, required_width_mm, ice=ice)
        self._changed([key])
        self.cases[key] = case
        self._go_live(frontage, key)
        rules = self.profile.snow_and_ice
        return [
            NoticeRequired(
                key=f"{key}/clearing_violation",
                violation_key=key,
                frontage=frontage,
                kind="clearing_violation",
                at=at,
                citation=f"{rules.clearing_deadline.citation}; {rules.clearing_min_width.citation}",
                detail={"period": rules.nonhazard_notice_period.describe()},
            )
        ]

    def open_billing(
        self, key: str, frontage: str, section: BillKind, ordered_at: datetime
    ) -> EnforcementCase:
        """The bill's case for an abatement another clock ordered (``key`` is its violation:
        ``obstruction:<id>``, ``inspection:<id>``), opened ``abatement_ordered`` so that
        ``abatement_done`` records the costs; ``ValueError`` for a section whose unpaid
        bill never goes on the tax roll (§ 144-17, § 370-6)."""
        if section not in TAX_ROLLED:
            raise ValueError(f"{key}: a {section} bill never goes on the tax roll")
        case = EnforcementCase(
            key, frontage, ordered_at, 0.0, state=CaseState.ABATEMENT_ORDERED,
            section=section, billing_only=True,
        )  # fmt: skip
        self._changed()
        self.cases[key] = case
        self._go_live(frontage, key)
        return case

    def terms(self, case: EnforcementCase) -> BillTerms:
        """The terms of the case's bill, by its section (``bill_terms``)."""
        return bill_terms(self.profile, case.section)

    # -- evidence ----------------------------------------------------------------

    def measured(
        self,
        frontage: str,
        at: datetime,
        width_mm: float,
        cause: Cause,
        *,
        icy: bool = False,
        ice_free: bool = False,
        sigma_mm: float | None = None,
    ) -> list[Event]:
        """A camera measurement: a walk cleared to the width, with no ice seen on it,
        cures every open case; an ice case (A) only when the surface is seen free of
        untreated ice (``ice_free``: dry, wet above freezing, or sanded/salted).
        ``sigma_mm``: the measurement's stated one sigma (``stated_uncertainty``)."""
        keys = self._live.get(frontage)
        if icy or not keys:
            return []
        cases = self.cases
        # The camera's stated uncertainty cures as it decides: a walk no more than the
        # tolerance short of the width would not have been a violation, so it is not
        # one any longer (the owner's favour, the same test both ways).
        tolerance = self.profile.snow_and_ice.width_tolerance.length_mm
        slack = stated_uncertainty(tolerance, sigma_mm) + WIDTH_TOLERANCE_MM
        floor = self._cure_floor.get(frontage)
        if floor is None:
            floor = self._cure_floor[frontage] = min(cases[k].required_width_mm for k in keys)
        if width_mm < floor - slack:
            return []  # narrower than every case's width: none is cured
        # Called for every measurement of a walk with a case: most cure nothing (the
        # owner who never clears has a case per storm), so the cases are sorted only
        # when some are cured; each case's test reads only that case.
        cured: list[str] = []
        for key in keys:
            case = cases[key]
            if (
                width_mm >= case.required_width_mm - slack
                and case.state in OPEN_STATES
                and at >= case.missed_deadline
                and (ice_free or not case.ice)
            ):
                cured.append(key)
        if not cured:
            return []
        cured.sort()
        events: list[Event] = [
            cases[key].move(CaseState.CURED, at, cause, measured_width_mm=width_mm) for key in cured
        ]
        self._changed(cured)
        return events

    def watching(self, frontage: str) -> bool:
        """Whether ``frontage`` has a case not yet finished (``measured`` can change one)."""
        return frontage in self._live

    def treated(self, frontage: str, at: datetime, cause: Cause) -> list[Event]:
        """Ice sanded or salted after the missed deadline cures an open ice case (A)."""
        self._changed()
        return [
            case.move(CaseState.CURED, at, cause, treated=True)
            for case in self._open_for(frontage)
            if case.ice and at >= case.missed_deadline
        ]

    # -- people ------------------------------------------------------------------

    def act(self, action: EnforcementAction) -> list[Event]:
        """Apply what a person recorded; unknown targets and impossible steps are refused."""
        case = self.cases.get(action.target)
        if case is None:
            raise KeyError(f"no enforcement case {action.target!r}")
        self._changed()
        cause = action.cause
        if isinstance(action, CorrectEntry):
            case.revision += 1
            try:
                events = self._correct(case, action, cause)
            except ValueError:
                case.revision -= 1  # refused: the case is as it was
                raise
            if case.state not in DONE_STATES:  # back in the running (its clocks recompute)
                self._go_live(case.frontage, case.key)
            return events
        handler = {
            "confirm_hazard": self._confirm_hazard,
            "record_delivery": self._delivered,
            "owner_unavailable": self._unavailable,
            "inspected_clear": self._inspected_clear,
            "abatement_done": self._abated,
            "bill_received": self._bill_received,
            "paid_in_full": self._paid,
        }.get(action.kind)
        if handler is None:
            raise ValueError(f"{action.kind} is not an enforcement action")
        return handler(case, action, cause)

    def _confirm_hazard(self, case: EnforcementCase, action: CaseStep, cause: Cause) -> list[Event]:
        if case.state not in {CaseState.NOTICE_ISSUED, CaseState.NOTICE_PERIOD}:
            raise ValueError(f"{case.key}: cannot confirm a hazard in state {case.state}")
        case.hazard = True
        case.notice_deadline = None
        rule = self.profile.snow_and_ice.hazard_notice_period
        return [
            case.move(CaseState.HAZARD_NOTICE_ISSUED, action.at, cause, **action.detail.carried()),
            NoticeRequired(
                key=f"{case.key}/hazard_notice",
                violation_key=case.key,
                frontage=case.frontage,
                kind="hazard_notice",
                at=action.at,
                citation=rule.citation or "",
                detail={"period": rule.describe(), "confirmed_by": action.who},
            ),
        ]

    def _delivered(self, case: EnforcementCase, action: CaseStep, cause: Cause) -> list[Event]:
        rules = self.profile.snow_and_ice
        if case.state == CaseState.NOTICE_ISSUED:
            rule, to_state = rules.nonhazard_notice_period, CaseState.NOTICE_PERIOD
        elif case.state == CaseState.HAZARD_NOTICE_ISSUED:
            rule, to_state = rules.hazard_notice_period, CaseState.HAZARD_PERIOD
        else:
            raise ValueError(f"{case.key}: no notice awaits delivery in state {case.state}")
        how = self._delivery_how(case, to_state, action.detail.method or action.detail.channel)
        case.notice_deadline = plus_elapsed(action.at, rule.duration)
        return [
            case.move(
                to_state,
                action.at,
                cause,
                deadline=case.notice_deadline.isoformat(),
                citation=rule.citation,
                unconfirmed=rule.unconfirmed,
                **how,
            )
        ]

    def _delivery_how(
        self, case: EnforcementCase, to_state: CaseState, method: str | None
    ) -> dict[str, object]:
        """What counts as delivery is the profile's (the Village confirms it): by default
        personal service, posting or mail by its receipt; the hazard notice hand or posted."""
        if method is None:
            return {}
        kind = "hazard_notice" if to_state == CaseState.HAZARD_PERIOD else "clearing_violation"
        name, methods = self.profile.notice_delivery.rule_for(kind)
        if not methods.value or method not in methods.value:
            raise ValueError(
                f"{case.key}: delivery by {method} does not start the period"
                f" ({name}: {', '.join(methods.value)})"
            )
        return {"method": method, "delivery_rule_unconfirmed": methods.unconfirmed}

    # -- corrections -----------------------------------------------------------------

    def _correct(self, case: EnforcementCase, action: CorrectEntry, cause: Cause) -> list[Event]:
        """A wrong entry corrected (``action.at`` is the right time) or undone: the case is
        put where the corrected facts leave it. Only an entry no later act rests on: a
        service before the crew's completion, a completion before the bill's receipt."""
        if action.detail.step == "record_delivery":
            return self._correct_service(case, action, cause)
        return self._correct_completion(case, action, cause)

    def _correct_service(
        self, case: EnforcementCase, action: CorrectEntry, cause: Cause
    ) -> list[Event]:
        rules = self.profile.snow_and_ice
        if case.hazard:
            rule = rules.hazard_notice_period
            issued, period = CaseState.HAZARD_NOTICE_ISSUED, CaseState.HAZARD_PERIOD
        else:
            rule = rules.nonhazard_notice_period
            issued, period = CaseState.NOTICE_ISSUED, CaseState.NOTICE_PERIOD
        # The period ran out on this service and the Village's work is ordered, not done.
        ran_out = case.state == CaseState.ABATEMENT_ORDERED and case.notice_deadline is not None
        if case.state == CaseState.CURED:
            return []  # cured: nothing runs from the service any more (the record is corrected)
        if case.state != period and not ran_out:
            raise ValueError(f"{case.key}: no service to correct in state {case.state}")
        detail = action.detail
        said = {"corrects": detail.entry, "reason": detail.reason}
        events: list[Event] = []
        if detail.undo:
            # Void: no period runs, and an order resting on it falls with it (F).
            old = case.notice_deadline
            case.notice_deadline = None
            events.append(case.move(issued, action.at, cause, deadline=None, undone=detail.step,
                                    **said))  # fmt: skip
            if ran_out and old is not None:
                events.append(self._withdrawn(case, action))
            return events
        how = self._delivery_how(case, period, detail.method)
        deadline = plus_elapsed(action.at, rule.duration)
        if ran_out and deadline == case.notice_deadline:
            # The same end of the period (another method that counts): the order stands as
            # it was; the correction itself is on record (its action and audit rows).
            return []
        case.notice_deadline = deadline
        events.append(
            case.move(period, action.at, cause, deadline=deadline.isoformat(),
                      citation=rule.citation, unconfirmed=rule.unconfirmed, **how, **said)
        )  # fmt: skip
        if ran_out:  # ordered on the old deadline; if the new one has passed, ``advance``
            events.append(self._withdrawn(case, action))  # orders it again at that time
        return events

    def _withdrawn(self, case: EnforcementCase, action: CorrectEntry) -> AbatementWithdrawn:
        reason = f"the service it ran from was {'undone' if action.detail.undo else 'corrected'}"
        return AbatementWithdrawn(
            f"{case.key}/abatement", case.key, case.frontage, action.at, reason
        )

    def _correct_completion(
        self, case: EnforcementCase, action: CorrectEntry, cause: Cause
    ) -> list[Event]:
        if case.state != CaseState.ABATED:
            raise ValueError(
                f"{case.key}: the crew's completion can be corrected only before the bill's"
                f" receipt (state {case.state})"
            )
        detail = action.detail
        said = {"corrects": detail.entry, "reason": detail.reason}
        case.tax_roll_held = False  # told again, if it comes to that, from the right dates
        if detail.undo:
            case.costs_incurred_at = case.tax_roll_at = None
            return [case.move(CaseState.ABATEMENT_ORDERED, action.at, cause,
                              undone=detail.step, **said)]  # fmt: skip
        self._incurred(case, action.at)
        assert case.tax_roll_at is not None
        return [case.move(CaseState.ABATED, action.at, cause,
                          tax_roll_at=case.tax_roll_at.isoformat(), **said)]  # fmt: skip

    def _incurred(self, case: EnforcementCase, at: datetime) -> None:
        """G (and § 370-8 F): the costs are incurred when the crew finished; day 0 of the 60."""
        terms = self.terms(case)
        case.costs_incurred_at = at
        if terms.tax_roll is not None:
            case.tax_roll_at = start_of_calendar_day(at, terms.tax_roll[1].days, self.profile.zone)
        else:  # § 144-12 C: the next succeeding tax roll, with no period to pay first
            case.tax_roll_at = at

    def _unavailable(self, case: EnforcementCase, action: CaseStep, cause: Cause) -> list[Event]:
        if case.state != CaseState.HAZARD_NOTICE_ISSUED:
            raise ValueError(
                f"{case.key}: owner unavailability applies to an undelivered hazard notice"
            )
        citation = self.profile.snow_and_ice.hazard_notice_period.citation or ""
        return [
            case.move(CaseState.ABATEMENT_ORDERED, action.at, cause, reason="owner unavailable"),
            AbatementOrdered(
                f"{case.key}/abatement",
                case.key,
                case.frontage,
                action.at,
                "owner_unavailable",
                citation,
            ),
            NoticeRequired(
                key=f"{case.key}/hazard_abatement_notice",
                violation_key=case.key,
                frontage=case.frontage,
                kind="hazard_abatement_notice",
                at=action.at,
                citation=citation,
            ),
        ]

    def _inspected_clear(
        self, case: EnforcementCase, action: CaseStep, cause: Cause
    ) -> list[Event]:
        if case.state not in OPEN_STATES:
            raise ValueError(f"{case.key}: nothing to cure in state {case.state}")
        return [case.move(CaseState.CURED, action.at, cause, **action.detail.carried())]

    def _abated(self, case: EnforcementCase, action: CaseStep, cause: Cause) -> list[Event]:
        if case.state != CaseState.ABATEMENT_ORDERED:
            raise ValueError(f"{case.key}: no abatement was ordered (state {case.state})")
        self._incurred(case, action.at)
        assert case.tax_roll_at is not None
        section = {"section": case.section} if case.billing_only else {}
        return [
            case.move(
                CaseState.ABATED,
                action.at,
                cause,
                tax_roll_at=case.tax_roll_at.isoformat(),
                **section,
                **action.detail.carried(),
            )
        ]

    def _bill_received(self, case: EnforcementCase, action: CaseStep, cause: Cause) -> list[Event]:
        if case.state != CaseState.ABATED:
            raise ValueError(f"{case.key}: no bill outstanding in state {case.state}")
        payable = self.terms(case).payable
        if payable is None:  # § 144-12 C: nothing to pay by a date; it goes on the tax roll
            return [case.move(CaseState.BILLED, action.at, cause, due=None)]
        rule = payable[1]
        case.bill_due = end_of_calendar_day(action.at, rule.days, self.profile.zone)
        return [
            case.move(
                CaseState.BILLED,
                action.at,
                cause,
                due=case.bill_due.isoformat(),
                citation=rule.citation,
            )
        ]

    def _paid(self, case: EnforcementCase, action: CaseStep, cause: Cause) -> list[Event]:
        if case.state not in BILLING_STATES:
            raise ValueError(f"{case.key}: nothing to pay in state {case.state}")
        return [case.move(CaseState.PAID, action.at, cause, **action.detail.carried())]

    # -- time ----------------------------------------------------------------------

    def advance(self, to: datetime) -> list[Event]:
        """Offenses, notice deadlines and the tax roll, in event-time order per case."""
        if self._due_known and (self._due is None or to < self._due):
            return []  # nothing is due before ``next_due`` (no case changed since)
        self._due_known = False
        events: list[Event] = []
        period = self.profile.snow_and_ice.offense_period
        every = self._offense_every
        # Only a case with something due by ``to`` can change below (its due instant is
        # the earliest of the three checks' own): the rest are passed by, in key order.
        self._refresh()
        heap, known = self._heap, self._case_due
        found: set[str] = set()
        while heap and heap[0][0] <= to:
            at, key = heapq.heappop(heap)
            if known.get(key) == at and self._is_live(key):
                found.add(key)
        due = sorted(found)
        self._changed(due)  # each may change below: its due instant is found again
        for case in [self.cases[k] for k in due]:
            while case.continuing and to >= case.next_offense_at(every):
                at = case.next_offense_at(every)
                case.offenses += 1
                events.append(
                    OffenseCounted(
                        case.key, case.frontage, at, case.offenses, period.citation or ""
                    )
                )
            if (
                case.state in PERIOD_STATES and case.notice_deadline is not None
            ) and to >= case.notice_deadline:
                events += self._notice_expired(case)
            if (
                case.state in BILLING_STATES
                and case.tax_roll_at is not None
                and to >= case.tax_roll_at
            ):
                events += self._tax_roll(case, to)
        self._drop_done()
        self._due, self._due_known = self._next_due(), True
        return events

    def _tax_roll(self, case: EnforcementCase, to: datetime) -> list[Event]:
        """Day 60 has come for a bill not paid: the entry, at its first lawful moment.

        A bill still payable on day 60 (its receipt recorded late, or received in the
        last days) is not entered while the owner may still pay; the clerk is told so
        once (``TaxRollHeld``), and the entry is made as its payment period ends, with
        the reason it is late (``TaxRollDue.late``). A bill whose receipt is not on
        record waits for it: its period to pay has not begun."""
        assert case.tax_roll_at is not None
        assert case.costs_incurred_at is not None
        citation = _tax_roll_citation(self.terms(case))
        entry_at = self._tax_roll_entry_at(case)
        if entry_at is None or to < entry_at:
            if case.tax_roll_held:
                return []
            case.tax_roll_held = True
            held = self._tax_roll_hold(case)
            assert held is not None
            return [
                TaxRollHeld(
                    case.key, case.frontage, case.tax_roll_at,
                    case.costs_incurred_at, case.bill_due, held, citation,
                )
            ]  # fmt: skip
        late = self._late_words(case, entry_at) if entry_at > case.tax_roll_at else None
        return [
            case.move(
                CaseState.TAX_ROLL, entry_at, Cause(kind="deadline", at=entry_at),
                **({"late": late} if late else {}),
            ),
            TaxRollDue(
                case.key, case.frontage, entry_at, case.costs_incurred_at, citation, late=late
            ),
        ]  # fmt: skip

    def _tax_roll_entry_at(self, case: EnforcementCase) -> datetime | None:
        """The first lawful moment for the entry: day 60, or the end of the bill's payment
        period when that is later; None while the bill's receipt is not on record."""
        assert case.tax_roll_at is not None
        if self.terms(case).payable is None:
            return case.tax_roll_at  # § 144-12 C: nothing to pay by a date first
        if case.state == CaseState.ABATED:
            return None
        if case.bill_due is None or case.bill_due <= case.tax_roll_at:
            return case.tax_roll_at
        return case.bill_due

    def _late_words(self, case: EnforcementCase, entry_at: datetime) -> str:
        """Why an entry is made after day 60, as the clerk reads it."""
        assert case.tax_roll_at is not None
        assert case.bill_due is not None
        terms, zone = self.terms(case), self.profile.zone
        assert terms.payable is not None
        days = terms.payable[1].days
        last = local_date(case.bill_due, zone) - timedelta(days=1)
        received = last - timedelta(days=days)
        after = 60 if terms.tax_roll is None else terms.tax_roll[1].days
        return (
            f"Entered on the tax roll on {_day(local_date(entry_at, zone))}, after day {after}"
            f" ({_day(local_date(case.tax_roll_at, zone))}): the bill was still payable then."
            f" It was received on {_day(received)} and could be paid within {days} calendar"
            f" days, through {_day(last)}; it is entered the day after, still unpaid."
        )

    def _tax_roll_hold(self, case: EnforcementCase) -> str | None:
        """Why the entry due now must wait for a person, or None to enter it (G, § 370-8 F;
        a § 144-12 C charge has no period to pay and is never held for one)."""
        assert case.tax_roll_at is not None
        terms = self.terms(case)
        if terms.payable is None:
            return None
        days = terms.payable[1].days
        if case.state == CaseState.ABATED:
            return f"the bill's receipt is not recorded: its {days} days to pay have not begun"
        if case.bill_due is not None and case.bill_due > case.tax_roll_at:
            zone = self.profile.zone
            after = "" if terms.tax_roll is None else f" the {terms.tax_roll[1].days} days"
            last = local_date(case.bill_due, zone) - timedelta(days=1)
            return (
                f"the bill is still inside its payment period (payable through {_day(last)})"
                f" when{after} after the costs end; if still unpaid it is entered on"
                f" {_day(local_date(case.bill_due, zone))}"
            )
        return None

    def _drop_done(self) -> None:
        # Only a case changed since the last look can have finished (``_changed``).
        touched, self._touched = self._touched, set()
        if touched is None:
            self._cure_floor = {}
            for frontage in list(self._live):
                keys = self._live[frontage]
                keys -= {k for k in keys if self.cases[k].state in DONE_STATES}
                if not keys:
                    del self._live[frontage]
            return
        # Only the changed cases themselves (a frontage's other cases did not move).
        for key in touched:
            case = self.cases.get(key)
            if case is None or case.state not in DONE_STATES:
                continue
            live = self._live.get(case.frontage)
            if live is not None:
                live.discard(key)
                self._cure_floor.pop(case.frontage, None)
                if not live:
                    del self._live[case.frontage]

    def next_due(self) -> datetime | None:
        """The next instant at which ``advance`` would change a case."""
        if not self._due_known:
            self._due, self._due_known = self._next_due(), True
        return self._due

    def _next_due(self) -> datetime | None:
        self._refresh()
        heap, known = self._heap, self._case_due
        while heap:
            at, key = heap[0]
            if known.get(key) == at and self._is_live(key):
                return at
            heapq.heappop(heap)  # its case changed (or finished) since
        return None

    def _is_live(self, key: str) -> bool:
        case = self.cases.get(key)
        return case is not None and key in self._live.get(case.frontage, ())

    def _refresh(self) -> None:
        """Work out the due instant of every live case changed since (``_case_due``)."""
        stale, self._stale = self._stale, set()
        if stale is None:
            keys: Iterable[str] = [k for keys in self._live.values() for k in keys]
        else:
            keys = [k for k in stale if self._is_live(k)]
        for key in keys:
            if key in self._case_due:
                continue
            due = self._case_due[key] = self._case_next_due(self.cases[key])
            if due is not None:
                heapq.heappush(self._heap, (due, key))

    def _case_next_due(self, case: EnforcementCase) -> datetime | None:
        """When ``advance`` next has something to do for ``case``: its next offense, its
        notice period's end, its tax roll entry (whichever comes first), or None."""
        due: list[datetime] = []
        if case.continuing:
            due.append(case.next_offense_at(self._offense_every))
        if case.state in PERIOD_STATES and case.notice_deadline is not None:
            due.append(case.notice_deadline)
        if case.state in BILLING_STATES and case.tax_roll_at is not None:
            if not case.tax_roll_held:
                due.append(case.tax_roll_at)
            elif (entry := self._tax_roll_entry_at(case)) is not None:
                due.append(entry)  # held on day 60: entered as the payment period ends
        return min(due, default=None)

    def _notice_expired(self, case: EnforcementCase) -> list[Event]:
        assert case.notice_deadline is not None
        at = case.notice_deadline
        rules = self.profile.snow_and_ice
        # F: removal by the village after "the time established under Subsection B(1) and (2)";
        # the section cited is F's (never an unconfirmed period's note).
        period = rules.hazard_notice_period if case.hazard else rules.nonhazard_notice_period
        after = rules.abatement_after_notice
        citation = (after.citation if after is not None else None) or period.citation or ""
        reason = "hazard notice period ended" if case.hazard else "notice period ended"
        return [
            case.move(
                CaseState.ABATEMENT_ORDERED, at, Cause(kind="deadline", at=at), reason=reason
            ),
            AbatementOrdered(
                f"{case.key}/abatement", case.key, case.frontage, at, "notice_expired", citation
            ),
        ]

    def _open_for(self, frontage: str) -> list[EnforcementCase]:
        keys = sorted(self._live.get(frontage, ()))
        return [self.cases[k] for k in keys if self.cases[k].state in OPEN_STATES]
