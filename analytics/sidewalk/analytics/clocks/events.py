"""What the clock engine says: transitions and decisions, each with its cause."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast, get_args

from sidewalk.analytics.clocks.states import ClockState

CauseKind = Literal["reading", "frame", "person", "deadline"]


@dataclass(frozen=True)
class Cause:
    """Why a transition happened: a reading (device, seq), a person, or a deadline passing."""

    kind: CauseKind
    at: datetime
    device: str | None = None
    seq: int | None = None
    who: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "at": self.at.isoformat(),
            "device": self.device,
            "seq": self.seq,
            "who": self.who,
        }


@dataclass(frozen=True)
class Transition:
    """A clock moved from one state to another at an event time."""

    frontage: str
    clock: str
    from_state: ClockState
    to_state: ClockState
    at: datetime
    cause: Cause
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClearingViolation:
    """§ 370-10 A not met at the deadline: the basis for a written notice.

    ``key`` identifies the decision: the same storm and frontage always give the
    same key, so a replay or a restart can never make a second notice.
    """

    key: str
    frontage: str
    rule: str
    citation: str
    cessation_at: datetime
    deadline: datetime
    decided_at: datetime
    required_width_mm: float
    measured_width_mm: float | None
    measured_at: datetime | None
    measured_by: str | None
    measured_seq: int | None
    snow_depth_peak_mm: float | None
    unconfirmed: bool
    history: tuple[Transition, ...]
    # § 370-10 A's ice at the deadline and how it was known (sensor or inspector,
    # with the readings): ``IceFinding.as_dict``; None when no ice was seen.
    ice: dict[str, Any] | None = None
    # Decided by a person on review (``review.decide_review``): decision, by, reason, at.
    # The pole's evidence did not come in, so there is no measurement above.
    review: dict[str, Any] | None = None
    # The measured width's stated uncertainty (``snow_and_ice.width_tolerance`` when
    # decided): the path was short by more than it.
    width_uncertainty_mm: float | None = None
    # How the cessation was determined (``cessation.Basis``) and the earliest end the
    # evidence allows: the letter says how the 24 hours' start was found.
    cessation_basis: str | None = None
    cessation_earliest: datetime | None = None


@dataclass(frozen=True)
class ClearingUnverified:
    """The deadline passed with no fresh camera measurement, or with evidence a sensor
    cannot settle (ice the camera suspects on a walk cleared to width, with no
    surface temperature): an inspector must look."""

    key: str
    frontage: str
    deadline: datetime
    last_measured_at: datetime | None
    reason: str = "no fresh camera measurement"


@dataclass(frozen=True)
class ClearingNeedsReview:
    """The deadline passed and the pole's readings up to it were not in after the
    bounded wait (``evidence_wait``, counted only while analytics held everything
    the server had of the pole): a person's review queue, "camera evidence missing".
    Not a decision: readings that come in later still decide the deadline."""

    key: str
    frontage: str
    deadline: datetime
    at: datetime
    device: str
    # How far the pole's readings had come (event time), and when it was last heard.
    evidence_through: datetime | None
    last_heard: datetime | None
    reason: str = "camera evidence missing"


# -- § 370-10 B–G: what follows a violation ------------------------------------

ActionKind = Literal[
    "confirm_hazard",  # an officer finds an immediate danger (B(1))
    "record_delivery",  # a written notice reached the owner: B(1)/(2) periods run from here
    "owner_unavailable",  # no one to receive a hazard notice: the village removes at once (B(1))
    "record_treated",  # ice that cannot be removed was sanded/salted (A)
    "record_ice",  # an inspector saw untreated ice on the walk (A)
    "decide_review",  # a person decides a deadline in review: cleared in time, or not (A)
    "inspected_clear",  # an inspector saw the walk cleared to the width (cure)
    "abatement_done",  # the village's crew finished; the costs are incurred (F, G)
    "bill_received",  # the owner received the bill: 10 calendar days run from here (G)
    "paid_in_full",  # the bill is paid
    # A wrong entry above (a service, the crew's completion) corrected or undone, with the
    # person's reason; ``target`` is the violation, the detail names the entry (its id).
    "correct_entry",
    # Cold weather (§ 370-5 (9), §§ 370-6, 370-7): ``target`` is the pour or permit id.
    "record_pour",  # concrete placed: detail kind, site, at (location, frontage, forecast)
    "record_permit",  # a street-opening permit: detail street, opened_at (approved_at, …)
    # Obstructions (§ 370-8) and street sweeping (§ 144-17): ``target`` is the obstruction's
    # or incident's id.
    "record_obstruction",  # seen by an inspector: detail frontage, kind, clear width, references
    "record_materials_authorization",  # the Building Inspector authorized building materials
    "obstruction_notice_delivered",  # the written notice reached the owner: 24 h run from here
    "obstruction_removed",  # an inspector saw it gone
    "record_sweeping_incident",  # construction debris on the street: detail frontage, location
    "sweeping_done",  # the contractor swept the street
    # § 370-9 street privilege permits: ``target`` is the permit number.
    "record_street_privilege",  # issued: detail issued_on, frontage, holder, location, placed
    "street_privilege_inspected",  # an inspector looked: detail present (+ measurements)
    # Rules no sensor sees (§ 370-10 C, § 370-11 C, § 370-14, §§ 144-11, 144-12 B, C):
    # ``target`` is the finding's, demolition's or excavation's id.
    "record_inspection_finding",  # detail frontage, rule (+ onto, from_own_walk, fence height)
    "record_demolition_completed",  # § 144-11: detail frontage, at (completion)
    "record_excavation_opened",  # § 144-12 C: detail frontage, at (opening)
    "inspection_notice_delivered",  # the written notice reached the owner: the period runs
    "inspection_corrected",  # an inspector saw it corrected
]


def action_kind(name: str) -> ActionKind:
    """Check a stored or typed action name; raises ValueError for anything else.

    The actions themselves, with their details, are the models in ``actions``
    (``actions.parse_action`` checks the kind with this, then the detail).
    """
    if name not in get_args(ActionKind):
        raise ValueError(f"unknown action {name!r}; one of {', '.join(get_args(ActionKind))}")
    return cast(ActionKind, name)


NoticeKind = Literal["clearing_violation", "hazard_notice", "hazard_abatement_notice"]


@dataclass(frozen=True)
class NoticeRequired:
    """A written notice the ordinance requires now (alerts renders and delivers it)."""

    key: str
    violation_key: str
    frontage: str
    kind: NoticeKind
    at: datetime
    citation: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HazardCandidate:
    """Evidence that a violation may be an immediate danger; an officer decides (B(1))."""

    violation_key: str
    frontage: str
    at: datetime
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class AbatementOrdered:
    """The village must remove the snow and ice (B(1) unavailable owner, or F)."""

    key: str
    violation_key: str
    frontage: str
    at: datetime
    reason: str
    citation: str


@dataclass(frozen=True)
class AbatementWithdrawn:
    """An abatement ordered because a notice period ran out is void: the service it ran
    from was undone or corrected to a later time (a new order follows if it runs out)."""

    key: str
    violation_key: str
    frontage: str
    at: datetime
    reason: str


@dataclass(frozen=True)
class OffenseCounted:
    """Another 24-hour period of a continuing violation began: a separate offense (E)."""

    violation_key: str
    frontage: str
    at: datetime
    count: int
    citation: str


@dataclass(frozen=True)
class TaxRollDue:
    """Costs unpaid 60 days after they were incurred go on the tax roll (G).

    ``late`` says, in the clerk's words, why the entry is made after day 60 (the
    bill was still payable then: it is entered as its payment period ends)."""

    violation_key: str
    frontage: str
    at: datetime
    costs_incurred_at: datetime
    citation: str
    late: str | None = None


@dataclass(frozen=True)
class TaxRollHeld:
    """The tax-roll entry came due (G) but may not be made by itself: a person decides.

    ``reason`` says why: the bill's receipt is not recorded, or its 10 days to pay
    (``bill_due``) run past the start of day 60 after the costs were incurred.
    """

    violation_key: str
    frontage: str
    at: datetime
    costs_incurred_at: datetime
    bill_due: datetime | None
    reason: str
    citation: str


@dataclass(frozen=True)
class RuleFinding:
    """A rule checked against a staff-entered record found it wrong or uncertain.

    ``subject`` is ``pour:<id>``, ``permit:<id>``, ``obstruction:<id>``,
    ``sweeping:<id>`` or ``street_privilege:<id>``; ``at`` is the event time the
    finding is about (the pour, the opening, the observation, the missed deadline).
    """

    subject: str
    rule: str
    citation: str | None
    severity: str
    message: str
    at: datetime
    unconfirmed: bool = False
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The finding's stable id: the same record judged again (a replay, a restart)
        gives the same key, so it is stored once and can be linked to."""
        return f"{self.subject}/{self.rule}/{self.at.astimezone(UTC).isoformat()}"


@dataclass(frozen=True)
class StreetCase:
    """A § 370-8 or § 144-17 violation: the case that notices and abatement hang on.

    ``key`` is ``obstruction:<id>`` or ``sweeping:<id>``, so a replay finds the same case.
    """

    key: str
    frontage: str
    rule: str
    citation: str | None
    at: datetime
    evidence: dict[str, Any]


EnforcementEvent = (
    NoticeRequired
    | HazardCandidate
    | AbatementOrdered
    | AbatementWithdrawn
    | OffenseCounted
    | TaxRollDue
    | TaxRollHeld
)


Event = (
    Transition
    | ClearingViolation
    | ClearingUnverified
    | ClearingNeedsReview
    | EnforcementEvent
    | RuleFinding
    | StreetCase
)
