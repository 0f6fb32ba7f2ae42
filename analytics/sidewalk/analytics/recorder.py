"""Writes the clock engine's events into the case records.

Every write is idempotent (clocks, transitions, violations, abatements and
notices have natural keys), so replaying the same stream after a restart
re-derives the same events and stores nothing twice. Decisions that need a
written notice go to ``on_violation``/``on_notice`` (the notice issuer in
``alerts/``): analytics decides, alerts writes to people.

Cold-weather, obstruction, sweeping and street-privilege transitions carry the
frontages they concern (``detail["frontages"]``): each gets a clock record keyed
``<frontage>/<clock>/<site, pour, permit, obstruction or incident id>`` (plus
``/<record>`` for an opening permit renewed after it expired, whose first record
closed); one that concerns no frontage (a permit entered without one) goes to the
audit log instead. Findings on pours, permits, obstructions and sweeping go to the
audit log once each, under their stable key (``RuleFinding.key``, in the row's
``detail["key"]``): judged again after a replay or a restart, a finding is not
stored twice. An obstruction or missed sweeping is a violation record (keyed
``obstruction:<id>``/``sweeping:<id>``) that its abatement order hangs on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast, get_args

from sidewalk.analytics.clocks.bill_terms import BillKind, bill_terms
from sidewalk.analytics.clocks.cold_weather import FROZEN_SUBGRADE, KEEP_OFF, OPENING_PERMIT
from sidewalk.analytics.clocks.enforcement import ENFORCEMENT
from sidewalk.analytics.clocks.engine import CLEARING
from sidewalk.analytics.clocks.events import (
    AbatementOrdered,
    AbatementWithdrawn,
    Cause,
    ClearingNeedsReview,
    ClearingUnverified,
    ClearingViolation,
    Event,
    HazardCandidate,
    NoticeRequired,
    OffenseCounted,
    RuleFinding,
    StreetCase,
    TaxRollDue,
    TaxRollHeld,
    Transition,
)
from sidewalk.analytics.clocks.inspections import INSPECTION, NOTICE_PERIOD, rule_value
from sidewalk.analytics.clocks.obstructions import OBSTRUCTION, PRIVILEGE, SWEEPING
from sidewalk.analytics.clocks.states import (
    CaseState,
    ClearingState,
    ClockState,
    InspectionState,
    KeepOffState,
    ObstructionState,
    PermitState,
    SweepingState,
)
from sidewalk.core.clock import to_ms
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records

# A clock record closes when its cycle is over; a later cycle opens a new one.
CLOSING: dict[str, frozenset[ClockState]] = {
    CLEARING: frozenset(
        {ClearingState.COMPLIED, ClearingState.VIOLATION, ClearingState.UNVERIFIED}
    ),
    ENFORCEMENT: frozenset({CaseState.CURED, CaseState.PAID, CaseState.TAX_ROLL}),
    # A frozen-subgrade record follows its site for good. A permit's record closes on
    # expiry (the state says why); a renewal after it opens a record of its own.
    KEEP_OFF: frozenset({KeepOffState.ENDED}),
    OPENING_PERMIT: frozenset({PermitState.EXPIRED}),
    PRIVILEGE: frozenset({PermitState.EXPIRED}),
    # An overdue obstruction or sweeping incident goes on as the village's abatement.
    OBSTRUCTION: frozenset(
        {ObstructionState.COMPLIANT, ObstructionState.REMOVED, ObstructionState.OVERDUE}
    ),
    SWEEPING: frozenset({SweepingState.SWEPT, SweepingState.OVERDUE}),
    INSPECTION: frozenset(
        {InspectionState.COMPLIANT, InspectionState.CORRECTED, InspectionState.OVERDUE}
    ),
}
# Clocks about a site, pour, permit, obstruction or incident, carried by the frontages named.
COLD = {FROZEN_SUBGRADE, KEEP_OFF, OPENING_PERMIT, OBSTRUCTION, SWEEPING, PRIVILEGE, INSPECTION}


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def record_cause(cause: Cause) -> records.Cause:
    """The engine's cause in the case records' form (event time in ms)."""
    return records.Cause(
        kind=cause.kind, ts=to_ms(cause.at), device=cause.device, seq=cause.seq, who=cause.who
    )


@dataclass
class CaseRecorder:
    """Persists the engine's events; remembers each open clock record."""

    cases: records.CaseStore
    profile: Profile
    on_violation: Callable[[ClearingViolation, records.ViolationRecord], Any] | None = None
    on_notice: Callable[[NoticeRequired, records.ViolationRecord], Any] | None = None
    _ids: dict[str, int] = field(default_factory=dict)

    def record(self, events: Sequence[Event]) -> list[records.ViolationRecord]:
        """Store each event in order; returns the violations recorded."""
        found: list[records.ViolationRecord] = []
        for event in events:
            if isinstance(event, Transition) and event.clock in COLD:
                self._cold_transition(event)
            elif isinstance(event, Transition):
                self._transition(event)
            elif isinstance(event, ClearingViolation):
                found.append(self._violation(event))
            elif isinstance(event, NoticeRequired):
                self._notice(event)
            elif isinstance(event, StreetCase):
                self.cases.clocks.record_violation(
                    event.key, event.frontage, event.rule, event.at,
                    citation=event.citation, evidence=event.evidence,
                )  # fmt: skip
            elif isinstance(event, AbatementOrdered | AbatementWithdrawn):
                self._abatement(event)
            elif isinstance(event, OffenseCounted):
                violation = self._known_violation(event.violation_key)
                self.cases.clocks.set_violation_offenses(violation.id, event.count)
            elif isinstance(event, TaxRollDue | TaxRollHeld):
                self._tax_roll(event)
            elif isinstance(event, HazardCandidate):
                # Keyed like every write here: a replay (a restart, ``--rebuild``) adds none.
                self.cases.audit.append_once(
                    "analytics", "hazard.candidate", f"violation:{event.violation_key}",
                    {"frontage": event.frontage, "reasons": list(event.reasons)},
                    key=event.at.isoformat(), at=event.at,
                )  # fmt: skip
            elif isinstance(event, RuleFinding):
                self.cases.audit.append_once(
                    "analytics", f"finding.{event.severity}", event.subject,
                    {"rule": event.rule, "citation": event.citation, "message": event.message,
                     "unconfirmed": event.unconfirmed, "notes": list(event.notes)},
                    key=event.key, at=event.at,
                )  # fmt: skip
            elif isinstance(event, ClearingUnverified | ClearingNeedsReview):
                self._for_review(event)
        return found

    def _for_review(self, event: ClearingUnverified | ClearingNeedsReview) -> None:
        """A deadline a person must look at: the review queue (dashboard alerts,
        ``sidewalk review``). "Unverified" is never a silent final state."""
        if isinstance(event, ClearingUnverified):
            self.cases.audit.append_once(
                "analytics", "clearing.unverified", f"frontage:{event.frontage}",
                {"deadline": event.deadline.isoformat(), "reason": event.reason},
                key=event.key, at=event.deadline,
            )  # fmt: skip
            return
        # Once per cycle, however often a replay or a restart re-derives it.
        self.cases.audit.append_once(
            "analytics", "clearing.needs_review", f"frontage:{event.frontage}",
            {"deadline": event.deadline.isoformat(), "reason": event.reason,
             "device": event.device, "evidence_through": _iso(event.evidence_through),
             "last_heard": _iso(event.last_heard)},
            key=event.key, at=event.at,
        )  # fmt: skip

    def _review_resolved(self, t: Transition) -> None:
        """The review closes: the evidence came in after all and decided the deadline,
        or a person decided it (``decide_review``: who, and their reason)."""
        said: dict[str, Any] = {"decided": str(t.to_state), "cycle": t.detail.get("cycle")}
        if t.cause.kind == "person":
            said |= {"by": t.cause.who, "review": t.detail.get("review"),
                     "reason": t.detail.get("reason")}  # fmt: skip
        else:
            said["by"] = "the pole's readings up to the deadline came in"
        self.cases.audit.append_once(
            "analytics" if t.cause.who is None else t.cause.who, "clearing.review_resolved",
            f"frontage:{t.frontage}", said,
            key=f"{t.frontage}:{CLEARING}:{t.detail.get('cycle')}", at=t.at,
        )  # fmt: skip

    # -- clocks --------------------------------------------------------------------

    def _rules(self, kind: str, section: object = None) -> list[records.RuleUse]:
        if kind == ENFORCEMENT and isinstance(section, str) and section in get_args(BillKind):
            # A bill's case for an abatement another clock ordered: its section's terms.
            terms = bill_terms(self.profile, cast(BillKind, section))
            return [records.RuleUse.from_rule(name, rule) for name, rule in terms.rules]
        rules = self.profile.snow_and_ice
        if kind == CLEARING:
            return [
                records.RuleUse.from_rule(
                    "snow_and_ice.clearing_deadline", rules.clearing_deadline
                ),
                records.RuleUse.from_rule(
                    "snow_and_ice.clearing_min_width", rules.clearing_min_width
                ),
            ]
        return [
            records.RuleUse.from_rule(
                "snow_and_ice.nonhazard_notice_period", rules.nonhazard_notice_period
            ),
            records.RuleUse.from_rule(
                "snow_and_ice.hazard_notice_period", rules.hazard_notice_period
            ),
            records.RuleUse.from_rule("snow_and_ice.offense_period", rules.offense_period),
            records.RuleUse.from_rule("billing.bill_payable", self.profile.billing.bill_payable),
            records.RuleUse.from_rule(
                "billing.tax_roll_after", self.profile.billing.tax_roll_after
            ),
        ]

    def _cold_rules(self, kind: str) -> list[records.RuleUse]:  # noqa: PLR0911 (one per clock)
        cold = self.profile.cold_weather
        if kind == INSPECTION:
            # Every period an inspector-entered rule may run on (its record names which).
            names = sorted(set(NOTICE_PERIOD.values()))
            names += ["construction.demolition_fill_within"]
            names += ["construction.abandoned_excavation_after"]
            return [records.RuleUse.from_rule(n, rule_value(self.profile, n)) for n in names]
        if kind == OBSTRUCTION:
            rules = self.profile.obstructions
            return [
                records.RuleUse.from_rule(
                    "obstructions.fixture_min_clear_width", rules.fixture_min_clear_width
                ),
                records.RuleUse.from_rule(
                    "obstructions.sidewalk_removal_after_notice",
                    rules.sidewalk_removal_after_notice,
                ),
                records.RuleUse.from_rule(
                    "obstructions.street_removal_after_notice", rules.street_removal_after_notice
                ),
            ]
        if kind == PRIVILEGE:
            rules = self.profile.obstructions
            return [
                records.RuleUse.from_rule(
                    "permits.street_privilege_term", self.profile.permits.street_privilege_term
                ),
                records.RuleUse.from_rule(
                    "obstructions.temporary_walk_min_width", rules.temporary_walk_min_width
                ),
                records.RuleUse.from_rule(
                    "obstructions.privilege_max_street", rules.privilege_max_street
                ),
            ]
        if kind == SWEEPING:
            return [
                records.RuleUse.from_rule(
                    "streets.sweeping_deadline", self.profile.streets.sweeping_deadline
                )
            ]
        if kind == FROZEN_SUBGRADE:
            return [
                records.RuleUse.from_rule(
                    "cold_weather.frozen_subgrade_at_or_below", cold.frozen_subgrade_at_or_below
                )
            ]
        if kind == KEEP_OFF:
            return [
                records.RuleUse.from_rule(
                    "cold_weather.cold_weather_below", cold.cold_weather_below
                ),
                records.RuleUse.from_rule("cold_weather.keep_off_normal", cold.keep_off_normal),
                records.RuleUse.from_rule("cold_weather.keep_off_cold", cold.keep_off_cold),
                records.RuleUse.from_rule(
                    "street_openings.street_concrete_protection",
                    self.profile.street_openings.street_concrete_protection,
                ),
            ]
        permits = self.profile.permits
        return [
            records.RuleUse.from_rule(
                "permits.opening_permit_validity", permits.opening_permit_validity
            ),
            records.RuleUse.from_rule(
                "permits.opening_permit_renewal", permits.opening_permit_renewal
            ),
        ]

    def _cold_transition(self, t: Transition) -> None:
        cause = record_cause(t.cause)
        frontages = [str(f) for f in t.detail.get("frontages", [])]
        if not frontages:
            self.cases.audit.append_once(
                "analytics", f"{t.clock}.{t.to_state}", f"{t.clock}:{t.frontage}",
                {"from": t.from_state, "cause": t.cause.as_dict(), **t.detail},
                key=f"{t.at.isoformat()}/{t.to_state}", at=t.at,
            )  # fmt: skip
            return
        raw = t.detail.get("until", t.detail.get("expires"))
        deadline: Any = datetime.fromisoformat(raw) if isinstance(raw, str) else records.KEEP
        citation = t.detail.get("citation")
        record = t.detail.get("record")
        for frontage in frontages:
            key = f"{frontage}/{t.clock}/{t.frontage}" + (f"/{record}" if record else "")
            clock_id = self._ids.get(key)
            if clock_id is None:
                clock = self.cases.clocks.open(
                    frontage, t.clock, t.from_state, t.at, cause,
                    citation=citation if isinstance(citation, str) else None,
                    rules=self._cold_rules(t.clock), key=key,
                )  # fmt: skip
                clock_id = self._ids[key] = clock.id
            closes = t.to_state in CLOSING.get(t.clock, frozenset())
            self.cases.clocks.record_transition(
                clock_id, t.to_state, t.at, cause, detail=t.detail, deadline=deadline, closes=closes
            )

    def _clock_key(self, t: Transition) -> str:
        if t.clock == CLEARING:
            return f"{t.frontage}/{CLEARING}/{t.detail['cycle']}"
        return f"{t.frontage}/{t.clock}/{t.detail['violation']}"

    def _transition(self, t: Transition) -> None:
        if t.clock == CLEARING and t.from_state == ClearingState.NEEDS_REVIEW:
            self._review_resolved(t)
        cause = record_cause(t.cause)
        key = self._clock_key(t)
        clock_id = self._ids.get(key)
        if clock_id is None:
            # Idempotent by key: after a restart the same cycle finds its record again.
            rules = self.profile.snow_and_ice
            citation = rules.clearing_deadline.citation if t.clock == CLEARING else None
            clock = self.cases.clocks.open(
                t.frontage, t.clock, t.from_state, t.at, cause,
                citation=citation, rules=self._rules(t.clock, t.detail.get("section")), key=key,
            )  # fmt: skip
            clock_id = self._ids[key] = clock.id
        deadline: Any = records.KEEP
        raw = t.detail.get("deadline")
        if isinstance(raw, str):
            deadline = datetime.fromisoformat(raw)
        elif t.to_state == ClearingState.SNOWING or ("deadline" in t.detail and raw is None):
            deadline = None  # a new snowfall; a service undone (no period runs)
        closes = t.to_state in CLOSING.get(t.clock, frozenset())
        # A § 370-10 case's corrections so far (``EnforcementCase.revision``): the case
        # corrected back to a state at a time it stood at before moves its clock again.
        revision = t.detail.get("revision")
        self.cases.clocks.record_transition(
            clock_id, t.to_state, t.at, cause, detail=t.detail, deadline=deadline, closes=closes,
            revision=revision if isinstance(revision, int) else 0,
        )  # fmt: skip
        if t.clock == ENFORCEMENT and t.to_state in {CaseState.CURED, CaseState.ABATED}:
            violation = self._known_violation(str(t.detail["violation"]))
            self.cases.clocks.set_violation_status(
                violation.id, "cured" if t.to_state == CaseState.CURED else "abated"
            )
            if t.to_state == CaseState.ABATED:
                # G: the crew's recorded completion is the date the costs were incurred,
                # the one the bill prints and the tax-roll clock counts from.
                abatement = self.cases.bills.abatement_by_key(f"{violation.key}/abatement")
                if abatement is not None and "corrects" in t.detail:
                    self.cases.bills.correct_completion(abatement.id, t.at, str(t.detail["reason"]))
                elif abatement is not None:
                    self.cases.bills.complete_abatement(abatement.id, t.at)
        if t.clock == ENFORCEMENT and t.detail.get("undone") == "abatement_done":
            # The crew's completion undone: the work is ordered again, the violation open.
            violation = self._known_violation(str(t.detail["violation"]))
            self.cases.clocks.set_violation_status(violation.id, "open")
            abatement = self.cases.bills.abatement_by_key(f"{violation.key}/abatement")
            if abatement is not None:
                self.cases.bills.correct_completion(abatement.id, None, str(t.detail["reason"]))

    # -- decisions -------------------------------------------------------------------

    def _violation(self, v: ClearingViolation) -> records.ViolationRecord:
        clock_id = None
        for clock in self.cases.clocks.list(frontage_id=v.frontage, kind=CLEARING):
            if clock.state == ClearingState.VIOLATION and clock.deadline == v.deadline:
                clock_id = clock.id
        evidence = {
            "cessation_at": v.cessation_at.isoformat(),
            "deadline": v.deadline.isoformat(),
            "required_width_mm": v.required_width_mm,
            "measured_width_mm": v.measured_width_mm,
            "width_uncertainty_mm": v.width_uncertainty_mm,
            "measured_at": v.measured_at.isoformat() if v.measured_at else None,
            "measured_by": v.measured_by,
            "measured_seq": v.measured_seq,
            "snow_depth_peak_mm": v.snow_depth_peak_mm,
            "cessation_basis": v.cessation_basis,
            "cessation_earliest": v.cessation_earliest.isoformat()
            if v.cessation_earliest
            else None,
        }
        if v.ice is not None:
            # § 370-10 A: the ice at the deadline, and how it was known (sensor or inspector).
            evidence["ice"] = v.ice
        if v.review is not None:
            # Decided by a person on review: the pole's evidence never came in.
            evidence["review"] = v.review
        violation = self.cases.clocks.record_violation(
            v.key, v.frontage, v.rule, v.decided_at,
            clock_id=clock_id, citation=v.citation, evidence=evidence,
        )  # fmt: skip
        if self.on_violation is not None:
            self.on_violation(v, violation)
        return violation

    def _notice(self, n: NoticeRequired) -> None:
        if n.kind == "clearing_violation":
            return  # issued with the violation's evidence by on_violation
        if self.on_notice is not None:
            self.on_notice(n, self._known_violation(n.violation_key))

    def _abatement(self, a: AbatementOrdered | AbatementWithdrawn) -> None:
        if isinstance(a, AbatementWithdrawn):
            return self._withdrawn(a)
        violation = self._known_violation(a.violation_key)
        order = self.cases.bills.order_abatement(
            a.key, a.frontage, a.reason, a.at,
            violation_id=violation.id, detail={"citation": a.citation},
        )  # fmt: skip
        if order.status == "withdrawn":  # withdrawn on a corrected service, due again now
            self.cases.bills.reorder_abatement(order.id, a.at)

    def _withdrawn(self, w: AbatementWithdrawn) -> None:
        abatement = self.cases.bills.abatement_by_key(w.key)
        if abatement is not None:
            self.cases.bills.withdraw_abatement(abatement.id, w.at, w.reason)

    def _tax_roll(self, due: TaxRollDue | TaxRollHeld) -> None:
        if isinstance(due, TaxRollHeld):
            # G: not entered by itself; the Clerk-Treasurer decides (told once per case).
            self.cases.audit.append_once(
                "analytics", "tax_roll.held", f"violation:{due.violation_key}",
                {"reason": due.reason, "citation": due.citation,
                 "costs_incurred_at": due.costs_incurred_at.isoformat(),
                 "bill_due": due.bill_due.isoformat() if due.bill_due else None},
                key=f"tax_roll.held/{due.violation_key}", at=due.at,
            )  # fmt: skip
            return
        abatement = self.cases.bills.abatement_by_key(f"{due.violation_key}/abatement")
        bill = None if abatement is None else self.cases.bills.for_abatement(abatement.id)
        if bill is None or bill.balance <= 0:
            # Nothing billed (or all paid): the Clerk-Treasurer must see it, not a silent skip.
            self.cases.audit.append_once(
                "analytics", "tax_roll.due_without_unpaid_bill", f"violation:{due.violation_key}",
                {"costs_incurred_at": due.costs_incurred_at.isoformat()},
                key=due.at.isoformat(), at=due.at,
            )  # fmt: skip
            return
        held = [
            n.number
            for n in self.cases.notices.list(kind="abatement_bill", frontage_id=bill.frontage_id)
            if n.detail.get("bill_id") == bill.id and n.status == "held"
        ]
        if held:
            # The bill itself waits for the Village to confirm a value it relies on (an
            # unconfirmed period): its charge is not entered on its own either.
            self.cases.audit.append_once(
                "analytics", "tax_roll.held", f"violation:{due.violation_key}",
                {"reason": f"the bill's notice {held[0]} is held for the Village's"
                 " confirmation of a value it relies on", "citation": due.citation,
                 "costs_incurred_at": due.costs_incurred_at.isoformat(), "bill_due": None},
                key=f"tax_roll.held/{due.violation_key}", at=due.at,
            )  # fmt: skip
            return
        # The section the entry is made under; a default the profile cites no section for
        # (§ 370-11 C, § 370-14, § 144-11, § 144-12 B) is under the violation's own.
        citation = due.citation or self._known_violation(due.violation_key).citation
        tax_year = due.at.astimezone(self.profile.zone).year
        self.cases.bills.certify_tax_roll(bill.id, due.at, tax_year, citation=citation)
        if due.late:
            # After day 60 (the bill was still payable then): the clerk is told why.
            self.cases.audit.append_once(
                "analytics", "tax_roll.late", f"violation:{due.violation_key}",
                {"reason": due.late, "citation": citation, "bill": bill.id},
                key=f"tax_roll.late/{due.violation_key}", at=due.at,
            )  # fmt: skip

    def _known_violation(self, key: str) -> records.ViolationRecord:
        violation = self.cases.clocks.violation_by_key(key)
        if violation is None:
            raise records.NotFoundError(f"no violation recorded under {key!r}")
        return violation
