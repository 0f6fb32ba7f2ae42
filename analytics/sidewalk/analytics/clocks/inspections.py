"""Rules no sensor sees, entered by inspectors. Pure, event-time.

* § 370-10 C: no snow or ice pushed onto a public street, alley, sidewalk or
  public land, except snow from the walk of a parcel whose building stands
  within 5 ft of the right-of-way with the walk running to the curb (the
  registry's ``may_deposit_on_street``), and then only onto the street.
* § 370-11 C: mailboxes on a terrace kept free and clear of snow.
* § 370-14: nothing (snow, ice, earth, debris, …) dumped or left in a public
  street, sidewalk or alley.
* § 144-12 B: an excavation near a walk or street fenced at least 4 ft high.
* § 144-11: an excavation left by a demolition filled, graded and leveled not
  later than 30 consecutive days after the demolition is completed.
* § 144-12 C: an excavation or uncovered foundation open more than 3 months is
  abandoned, a nuisance; the Building Inspector's order gives 14 to 20 days.

Each runs the obstruction clock's path: a finding (at once, or when the
§ 144-11 / § 144-12 C period ends with nothing corrected) is a violation
record ``inspection:<id>``; the written notice's recorded delivery starts the
period to correct (a profile value with its citation, or ``unconfirmed``); a
period that ends uncorrected orders the Village's abatement
``inspection:<id>/abatement``, billed under ``bill_terms`` (its tax-roll entry:
``enforcement``)::

    record ─▶ found ─notice delivered─▶ notice_period ─corrected─▶ corrected
      │  (an exception, a fence tall enough)         └─ deadline ─▶ overdue + abatement
      ├──▶ compliant
      └──▶ period_running (§ 144-11, § 144-12 C) ─deadline─▶ found
                  └─ corrected (filled, building resumed) ─▶ corrected
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Final, Literal

from sidewalk.analytics.clocks.events import (
    AbatementOrdered,
    Cause,
    RuleFinding,
    StreetCase,
    Transition,
)
from sidewalk.analytics.clocks.permits import Finding
from sidewalk.analytics.clocks.states import InspectionState
from sidewalk.core.calendar import (
    Deadline,
    add_calendar_days,
    add_months,
    end_of_day,
    local_date,
    plus_elapsed,
)
from sidewalk.core.clock import require_aware
from sidewalk.core.profile import Profile, Rule

INSPECTION = "inspection"

InspectionRule = Literal[
    "snow_on_street",  # § 370-10 C
    "mailbox",  # § 370-11 C
    "dumping",  # § 370-14
    "excavation_fence",  # § 144-12 B
    "demolition_fill",  # § 144-11 (timed: from the demolition's completion)
    "abandoned_excavation",  # § 144-12 C (timed: from the excavation's opening)
]
FindingRule = Literal["snow_on_street", "mailbox", "dumping", "excavation_fence"]
TimedRule = Literal["demolition_fill", "abandoned_excavation"]
DepositOnto = Literal["street", "alley", "sidewalk", "public_land"]

# What the notice's period is (name of the profile value) per rule.
NOTICE_PERIOD: Final[dict[str, str]] = {
    "snow_on_street": "snow_and_ice.deposit_removal_after_notice",
    "mailbox": "terraces.mailbox_clearing_after_notice",
    "dumping": "streets.dumping_removal_after_notice",
    "excavation_fence": "construction.violation_correction_after_notice",
    "demolition_fill": "construction.violation_correction_after_notice",
    "abandoned_excavation": "construction.abandoned_order_compliance",
}
# What the finding is about (the profile value the decision used), per rule.
FINDING_RULE: Final[dict[str, str]] = {
    "snow_on_street": "snow_and_ice.deposit_removal_after_notice",
    "mailbox": "terraces.mailbox_clearing_after_notice",
    "dumping": "streets.dumping_removal_after_notice",
    "excavation_fence": "construction.excavation_fence_min_height",
    "demolition_fill": "construction.demolition_fill_within",
    "abandoned_excavation": "construction.abandoned_excavation_after",
}
WORDS: Final[dict[str, str]] = {
    "snow_on_street": "snow or ice deposited on a public way",
    "mailbox": "a mailbox on the terrace not kept clear of snow",
    "dumping": "material dumped or left on a public way",
    "excavation_fence": "an excavation near the right-of-way without a fence 4 ft high",
    "demolition_fill": "an excavation left after demolition not filled, graded and leveled",
    "abandoned_excavation": "an excavation or uncovered foundation open too long (abandoned)",
}


def rule_value(profile: Profile, name: str) -> Rule:
    """A profile value by its dotted name (``terraces.mailbox_clearing_after_notice``)."""
    section, _, field_name = name.partition(".")
    rule = getattr(getattr(profile, section), field_name)
    assert isinstance(rule, Rule)
    return rule


@dataclass(frozen=True)
class Inspection:
    """What an inspector recorded under one of these rules.

    For § 370-10 C: ``onto`` (where the snow went) and ``from_own_walk`` (it came
    from this parcel's own sidewalk); ``may_deposit`` is the frontage's registry
    flag. For § 144-12 B: ``fence_height_mm`` (None: no fence at all). For the
    timed rules ``started_at`` is the demolition's completion or the opening.
    """

    id: str
    rule: InspectionRule
    location: str
    observed_at: datetime
    description: str = ""
    onto: DepositOnto = "street"
    from_own_walk: bool = False
    may_deposit: bool = False
    fence_height_mm: float | None = None
    started_at: datetime | None = None


def inspection_finding(inspection: Inspection, profile: Profile) -> Finding | None:
    """The violation an inspector's record shows (None: within the Code). Timed rules are
    judged at their deadline (``period_deadline``), not here."""
    rule = inspection.rule
    at = inspection.observed_at
    period = rule_value(profile, NOTICE_PERIOD[rule])
    if rule == "snow_on_street":
        setback = profile.snow_and_ice.deposit_building_setback
        if inspection.may_deposit and inspection.from_own_walk and inspection.onto == "street":
            return None  # C's exception: buildings within 5 ft, walks to the curb
        why = (
            f"snow or ice deposited onto the {inspection.onto.replace('_', ' ')}"
            if inspection.may_deposit
            # In words: the letter cites C itself (a profile mark is no citation).
            else "snow or ice deposited onto a public way from a parcel not recorded as one"
            f" whose building stands within {setback.value.normalize():f} {setback.unit} of"
            " the street right-of-way (the exception)"
        )
        return Finding.of(FINDING_RULE[rule], "violation", why, at, setback, period)
    if rule == "excavation_fence":
        height = profile.construction.excavation_fence_min_height
        fence = inspection.fence_height_mm
        if fence is not None and fence >= height.length_mm:
            return None  # "at least four feet high"
        shown = "no fence" if fence is None else f"a fence {fence:.0f} mm high"
        return Finding.of(
            FINDING_RULE[rule], "violation",
            f"{shown} between the excavation and the right-of-way; {height.describe()} required",
            at, height, period,
        )  # fmt: skip
    if rule in ("mailbox", "dumping"):
        return Finding.of(FINDING_RULE[rule], "violation", WORDS[rule], at, period)
    return None


def period_deadline(inspection: Inspection, profile: Profile) -> Deadline | None:
    """§ 144-11: the end of the 30th consecutive day after the demolition's completion.
    § 144-12 C: open "more than three months": after the end of the same date three
    months on. None for a rule with no such period."""
    start = inspection.started_at
    if start is None or inspection.rule not in ("demolition_fill", "abandoned_excavation"):
        return None
    zone = profile.zone
    if inspection.rule == "demolition_fill":
        rule = profile.construction.demolition_fill_within
        last = add_calendar_days(local_date(start, zone), rule.days)
    else:
        rule = profile.construction.abandoned_excavation_after
        last = add_months(local_date(start, zone), rule.months)
    return Deadline.of(FINDING_RULE[inspection.rule], start, end_of_day(last, zone), rule)


def correction_deadline(inspection: Inspection, delivered: datetime, profile: Profile) -> Deadline:
    """The period to correct after the written notice's delivery: hours run in elapsed
    time; calendar days to the end of the last day (village time)."""
    name = NOTICE_PERIOD[inspection.rule]
    rule = rule_value(profile, name)
    if rule.unit in ("minutes", "hours", "days"):
        due = plus_elapsed(delivered, rule.duration)
    else:
        due = end_of_day(
            add_calendar_days(local_date(delivered, profile.zone), rule.days), profile.zone
        )
    return Deadline.of(name, delivered, due, rule)


@dataclass
class _Clock:
    inspection: Inspection
    frontage: str
    state: InspectionState = InspectionState.NONE
    deadline: Deadline | None = None  # the period running, or the period to correct
    finding: Finding | None = None


@dataclass
class InspectionStateSnapshot:
    """What ``InspectionClocks`` must remember across a restart."""

    now: datetime | None = None
    clocks: dict[str, _Clock] = field(default_factory=dict)


InspectionEvent = Transition | RuleFinding | StreetCase | AbatementOrdered
PERIOD_STATES: Final = frozenset({InspectionState.PERIOD_RUNNING, InspectionState.NOTICE_PERIOD})


@dataclass
class InspectionClocks:
    """The inspector-entered rules' clocks, one per record (``inspection:<id>``)."""

    profile: Profile
    now: datetime | None = None
    clocks: dict[str, _Clock] = field(default_factory=dict)

    def record(self, inspection: Inspection, frontage: str, cause: Cause) -> list[InspectionEvent]:
        """A finding, a demolition completed or an excavation opened, as recorded."""
        if inspection.id in self.clocks:
            raise ValueError(f"inspection {inspection.id!r} is already recorded")
        clock = _Clock(inspection, frontage)
        self.clocks[inspection.id] = clock
        detail: dict[str, object] = {
            "rule": inspection.rule,
            "location": inspection.location,
            "description": inspection.description,
        }
        timed = period_deadline(inspection, self.profile)
        if timed is not None:
            clock.deadline = timed
            detail |= {"until": timed.due.isoformat(), "citation": timed.citation,
                       "unconfirmed": timed.unconfirmed}  # fmt: skip
            start = inspection.started_at or inspection.observed_at
            return [self._move(clock, InspectionState.PERIOD_RUNNING, start, cause, detail)]
        finding = inspection_finding(inspection, self.profile)
        if finding is None:
            return [
                self._move(clock, InspectionState.COMPLIANT, inspection.observed_at, cause, detail)
            ]
        return self._found(clock, finding, cause, detail)

    def notice_delivered(
        self, inspection_id: str, at: datetime, cause: Cause
    ) -> list[InspectionEvent]:
        """The written notice (or the § 144-12 C order) reached the owner: the period runs."""
        clock = self._clock(inspection_id)
        if clock.state != InspectionState.FOUND:
            raise ValueError(f"inspection {inspection_id!r} is {clock.state}, not awaiting notice")
        clock.deadline = correction_deadline(clock.inspection, at, self.profile)
        detail: dict[str, object] = {
            "until": clock.deadline.due.isoformat(),
            "rule": clock.deadline.rule,
            "citation": clock.deadline.citation,
            "unconfirmed": clock.deadline.unconfirmed,
        }
        return [self._move(clock, InspectionState.NOTICE_PERIOD, at, cause, detail)]

    def corrected(self, inspection_id: str, at: datetime, cause: Cause) -> list[InspectionEvent]:
        """An inspector saw it corrected (cleared, removed, fenced, filled, building resumed)."""
        clock = self._clock(inspection_id)
        if clock.state not in {InspectionState.FOUND, *PERIOD_STATES}:
            raise ValueError(f"inspection {inspection_id!r} is {clock.state}; nothing to correct")
        if clock.deadline is not None and clock.deadline.passed(at):
            return self.advance(clock.deadline.due)  # too late: decided at the deadline
        return [self._move(clock, InspectionState.CORRECTED, at, cause, {})]

    def advance(self, to: datetime) -> list[InspectionEvent]:
        """Move event time to ``to``; returns what came due (never moves back)."""
        require_aware(to)
        if self.now is not None and to <= self.now:
            return []
        self.now = to
        out: list[InspectionEvent] = []
        for clock in self.clocks.values():
            if clock.state not in PERIOD_STATES or clock.deadline is None:
                continue
            if not clock.deadline.passed(to):
                continue
            due = clock.deadline.due
            cause = Cause(kind="deadline", at=due)
            if clock.state == InspectionState.PERIOD_RUNNING:
                finding = Finding.missed(
                    clock.deadline, "violation", WORDS[clock.inspection.rule], due
                )
                out += self._found(clock, finding, cause, {"rule": clock.inspection.rule})
            else:
                key = f"{INSPECTION}:{clock.inspection.id}"
                out.append(self._move(clock, InspectionState.OVERDUE, due, cause, {}))
                out.append(
                    AbatementOrdered(
                        f"{key}/abatement", key, clock.frontage, due,
                        "finding_not_corrected",
                        clock.deadline.citation or "",
                    )
                )  # fmt: skip
        return out

    def next_due(self) -> datetime | None:
        due = [
            c.deadline.due
            for c in self.clocks.values()
            if c.state in PERIOD_STATES and c.deadline is not None
        ]
        return min(due, default=None)

    def state(self) -> InspectionStateSnapshot:
        return InspectionStateSnapshot(self.now, self.clocks)

    def load(self, state: InspectionStateSnapshot) -> None:
        self.now = state.now
        self.clocks = dict(state.clocks)

    # -- internals -------------------------------------------------------------

    def _clock(self, inspection_id: str) -> _Clock:
        clock = self.clocks.get(inspection_id)
        if clock is None:
            raise KeyError(f"no inspection {inspection_id!r}")
        return clock

    def _found(
        self, clock: _Clock, finding: Finding, cause: Cause, detail: dict[str, object]
    ) -> list[InspectionEvent]:
        clock.finding = finding
        clock.deadline = None
        key = f"{INSPECTION}:{clock.inspection.id}"
        said = {**detail, "citation": finding.citation, "finding": finding.message,
                "unconfirmed": finding.unconfirmed}  # fmt: skip
        evidence: dict[str, object] = {
            "rule": clock.inspection.rule,
            "location": clock.inspection.location,
            "description": clock.inspection.description,
            "observed_at": clock.inspection.observed_at.isoformat(),
            "finding": finding.message,
        }
        if clock.inspection.fence_height_mm is not None:
            evidence["fence_height_mm"] = clock.inspection.fence_height_mm
        if clock.inspection.started_at is not None:
            evidence["started_at"] = clock.inspection.started_at.isoformat()
        return [
            self._move(clock, InspectionState.FOUND, finding.at, cause, said),
            RuleFinding(
                key, finding.rule, finding.citation, finding.severity, finding.message,
                finding.at, finding.unconfirmed, finding.notes,
            ),
            StreetCase(key, clock.frontage, finding.rule, finding.citation, finding.at, evidence),
        ]  # fmt: skip

    @staticmethod
    def _move(
        clock: _Clock, to_state: InspectionState, at: datetime, cause: Cause,
        detail: dict[str, object],
    ) -> Transition:  # fmt: skip
        from_state = clock.state
        clock.state = to_state
        return Transition(
            clock.inspection.id, INSPECTION, from_state, to_state, at, cause,
            {**detail, "frontages": [clock.frontage]},
        )  # fmt: skip


def with_frontage_flag(inspection: Inspection, may_deposit: bool) -> Inspection:
    """The inspection with the frontage's § 370-10 C registry flag."""
    return replace(inspection, may_deposit=may_deposit)
