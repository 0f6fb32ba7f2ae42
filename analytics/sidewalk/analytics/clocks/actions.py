"""People's actions for the clocks, validated once, where they enter.

A person's step (a hazard confirmed, a notice delivered, a pour or an obstruction
recorded, …) reaches the engine as one of the models below, a union told apart by
``kind``. ``parse_action`` builds one from what the case records store (kind,
target, event time, who, and a JSON detail) or from what the command line and the
dashboard are given; it raises ``ActionError`` naming every field that is wrong.
The engine then only checks what needs its state (a known frontage, a recorded
case, a step in order).

Whatever records an action (the command line, the dashboard) calls
``parse_action`` first, so a bad entry is refused at once; the runner parses each
stored action again before applying it, so an action stored by an older version is
judged the same way (and one it cannot parse is kept with its error, never lost).
``action_detail`` gives a parsed action's detail back in its stored (JSON) form.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from functools import cache
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from sidewalk.analytics.clocks.cold_weather import PourKind
from sidewalk.analytics.clocks.events import Cause, action_kind
from sidewalk.analytics.clocks.inspections import DepositOnto, FindingRule
from sidewalk.analytics.clocks.obstructions import ObstructionKind, PublicArea
from sidewalk.core.units import length_to_mm

# -- field types -------------------------------------------------------------------


def _instant(value: object) -> datetime:
    """ISO 8601 text with a UTC offset (as stored in JSON), or an aware datetime; in UTC."""
    if isinstance(value, datetime):
        at = value
    elif isinstance(value, str):
        try:
            at = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not ISO 8601 (e.g. 2026-11-20T09:30-06:00)") from None
    else:
        raise ValueError(f"must be ISO 8601 with a UTC offset, not {value!r}")
    if at.tzinfo is None:
        raise ValueError(f"{value!r} needs a UTC offset")
    return at.astimezone(UTC)


def _day(value: object) -> date:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError(f"must be an ISO date (YYYY-MM-DD), not {value!r}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO date (YYYY-MM-DD)") from None


def _length(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"must be a number ≥ 0, not {value!r}")
    return float(value)


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, not {value!r}")
    return value


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"must be a whole number ≥ 0, not {value!r}")
    return value


def _choice(what: str, options: tuple[str, ...]) -> BeforeValidator:
    def check(value: object) -> object:
        if not isinstance(value, str) or value not in options:
            raise ValueError(f"{what} must be {' or '.join(options)}, not {value!r}")
        return value

    return BeforeValidator(check)


def _aware(at: datetime) -> datetime:
    # Durations are added to this instant: keep it in UTC so a wall-clock
    # zone never turns "2 hours" into 1 or 3 across a DST change.
    if at.tzinfo is None:
        raise ValueError("an action's time must carry a zone")
    return at.astimezone(UTC)


def _named(who: str) -> str:
    if not who.strip():
        raise ValueError("an action must name who recorded it")
    return who


def _street(street: str) -> str:
    if not street.strip():
        raise ValueError("a permit needs the street (segment) it opens")
    return street


Instant = Annotated[datetime, BeforeValidator(_instant)]
"""An instant in a detail: ISO 8601 with a UTC offset; held in UTC."""
Day = Annotated[date, BeforeValidator(_day)]
"""A calendar date in a detail: ISO 8601 (YYYY-MM-DD)."""
Length = Annotated[float, BeforeValidator(_length)]
"""A length or width in a detail: a number ≥ 0 (its unit is in the field's name)."""
Flag = Annotated[bool, BeforeValidator(_flag)]
Count = Annotated[int, BeforeValidator(_count)]
Area = Annotated[PublicArea, _choice("area", get_args(PublicArea))]
Kind = Annotated[ObstructionKind, _choice("kind", get_args(ObstructionKind))]


# -- details -------------------------------------------------------------------------


class _Detail(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NoDetail(_Detail):
    """An action that needs nothing beyond its target, time and author."""


class CaseDetail(_Detail):
    """What staff and the paperwork attach to a step on a violation's case (§ 370-10 B–G).

    Informative only: the steps that change a case's state (hazard confirmed,
    inspected clear, abatement done, paid in full) carry the fields given into the
    case's clock history, as entered.
    """

    notice: str | None = None  # the notice's number
    note: str | None = None  # words from the person recording it
    channel: str | None = None  # how the notice was delivered (the dashboard: hand, mail, posted)
    method: str | None = None  # how the notice was delivered (the delivery worker's channel)
    bill: int | None = None  # the bill received or paid

    def carried(self) -> dict[str, Any]:
        """The fields given, as given: what the transition's detail carries."""
        return self.model_dump(exclude_unset=True)


class Forecast(_Detail):
    """One forecast air temperature (°F, as forecasts for the village are published)."""

    at: Instant
    temp_f: float


class PourDetail(_Detail):
    """Concrete placed (§ 370-5 (9) for a walk, § 370-7 G for a street)."""

    kind: Annotated[PourKind, _choice("pour kind", get_args(PourKind))]
    at: Instant  # when the concrete was placed
    site: str | None = None  # the site (pole) whose sensors cover it; else the frontage's
    frontage: str | None = None  # the frontage whose records carry the clock
    location: str | None = None  # where, in words (default: the site)
    forecast: Annotated[tuple[Forecast, ...], BeforeValidator(lambda v: v or ())] = ()


class PermitDetail(_Detail):
    """A § 370-6 street-opening permit, or its renewal (a higher ``renewals``)."""

    street: Annotated[str, AfterValidator(_street)]  # the street segment opened
    opened_at: Instant
    approved_at: Instant | None = None  # its date of approval (default: opened_at)
    emergency: Flag = False  # the Board found it an emergency (§ 370-7 A, H)
    renewals: Count = 0  # 30-day renewals granted so far
    frontage: str | None = None
    # The permittee (§ 370-6): the person, firm or utility the permit is issued to, and
    # where its mail goes (address lines), as the application gives them.
    holder: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)] | None = None
    holder_address: tuple[
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)], ...
    ] = ()
    # The work's dates (§ 370-7 G, H, I); an entry with the same renewals adds them later.
    applied_at: Instant | None = None  # when the permit was applied for (H)
    pavement_removed: Flag = True  # false: no pavement taken up (G does not apply)
    cold_mix_on: Day | None = None  # temporary cold mix placed (G)
    permanent_pavement_on: Day | None = None  # permanent pavement replaced (G)
    street_repaved_on: Day | None = None  # the street's last repaving, from the records (I)
    essential: Flag = False  # the Board found the opening absolutely essential (I)
    repaving_notice_on: Day | None = None  # the Clerk-Treasurer's repaving notice (I)
    work_completed_on: Day | None = None  # the excavation work in the street completed (I)
    # The notices § 370-7 B and F ask for, when each was given (and the events they precede).
    dpw_notified_at: Instant | None = None  # the Director of Public Works, before excavating
    parties_notified_at: Instant | None = None  # everyone affected, a business day ahead
    backfill_at: Instant | None = None  # backfilling or restoring the surface
    backfill_notified_at: Instant | None = None  # the Village, four hours before it
    utility_loss_at: Instant | None = None  # private properties lose a utility service
    utility_loss_notified_at: Instant | None = None  # they were told, 12 hours before


class ObstructionDetail(_Detail):
    """An obstruction an inspector saw (§ 370-8): what it is, where, and what it leaves.

    ``kind`` is required: a temporary, unattached ``fixture`` (§ 370-8 C: a
    commercial property's, leaving at least 3 ft, so its clear width is required
    on a sidewalk), ``building_materials`` (§ 370-8 B(2)), an ``excavation``
    (§ 370-8 B(3)) or ``other``. The references the inspector wrote down
    (``privilege_permit``, ``opening_permit``, ``materials_authorization``) are
    checked by the engine against its records; building materials under an
    authorization need what the limits are checked on (the walk's width and
    clear width, or the street's width and what they occupy; the gutters).
    """

    frontage: str  # the frontage whose records carry the case
    kind: Kind
    observed_at: Instant | None = None  # default: the action's time
    area: Area = "sidewalk"
    location: str | None = None  # default: the frontage
    description: str | None = None
    clear_width_mm: Length | None = None
    clear_width_ft: Length | None = None
    clear_width_in: Length = 0.0  # with clear_width_ft
    sidewalk_width_mm: Length | None = None  # the walk's whole width (building materials)
    street_width_mm: Length | None = None
    street_occupied_mm: Length | None = None
    gutters_clear: Flag | None = None
    privilege_permit: str | None = None  # a § 370-9 street privilege permit's number
    opening_permit: str | None = None  # a §§ 370-6/370-7 street-opening permit's id
    materials_authorization: str | None = None  # the Building Inspector's authorization

    @model_validator(mode="after")
    def _width_given(self) -> ObstructionDetail:
        width = self.clear_width_mm is not None or self.clear_width_ft is not None
        if self.kind == "fixture" and self.area == "sidewalk" and not width:
            raise ValueError(
                "a fixture's clear width is required: clear_width_mm, or clear_width_ft (+ _in)"
            )
        if self.kind == "building_materials" and self.materials_authorization is not None:
            if self.gutters_clear is None:
                raise ValueError("authorized building materials: say whether gutters_clear")
            if self.area == "sidewalk" and (self.sidewalk_width_mm is None or not width):
                raise ValueError(
                    "authorized building materials on a sidewalk: sidewalk_width_mm and the "
                    "clear width are required (at most half the walk)"
                )
            if self.area == "street" and (
                self.street_width_mm is None or self.street_occupied_mm is None
            ):
                raise ValueError(
                    "authorized building materials on a street: street_width_mm and "
                    "street_occupied_mm are required"
                )
        return self

    @property
    def clear_width(self) -> float | None:
        """The observed clear width in mm, if one was given."""
        if self.clear_width_mm is not None:
            return 0.0 + length_to_mm(self.clear_width_mm, "mm")
        if self.clear_width_ft is not None:
            feet = 0.0 + length_to_mm(self.clear_width_ft, "feet")
            return feet + length_to_mm(self.clear_width_in, "inches")
        return None


class AuthorizationDetail(_Detail):
    """The Building Inspector's authorization of building materials (§ 370-8 B(2))."""

    frontage: str
    authorized_from: Day
    authorized_until: Day
    by: str | None = None  # the Building Inspector who authorized it
    location: str | None = None


class SweepingDetail(_Detail):
    """Construction dirt or debris on a street (§ 144-17)."""

    frontage: str
    occurred_at: Instant | None = None  # default: the action's time
    location: str | None = None  # the street, in words (default: the frontage)
    description: str | None = None
    # § 144-17 bills the primary contractor, not the frontage's owner: who, and where.
    contractor: str | None = None
    contractor_address: tuple[str, ...] | None = None


class _PrivilegeMeasures(_Detail):
    temporary_walk_width_mm: Length | None = None
    street_width_mm: Length | None = None
    street_occupied_mm: Length | None = None


class PrivilegeDetail(_PrivilegeMeasures):
    """A § 370-9 street privilege permit as the Clerk-Treasurer issued it."""

    frontage: str
    issued_on: Day
    earlier_termination_on: Day | None = None
    holder: str | None = None
    location: str | None = None  # default: the frontage
    placed: str | None = None  # what it lets stand there
    area: Area = "street"


class FindingDetail(_Detail):
    """What an inspector found under a rule no sensor sees (``inspections``): § 370-10 C
    snow on a public way, § 370-11 C a mailbox not cleared, § 370-14 dumping, § 144-12 B
    an excavation not fenced 4 ft high."""

    frontage: str
    rule: Annotated[FindingRule, _choice("rule", get_args(FindingRule))]
    observed_at: Instant | None = None  # default: the action's time
    location: str | None = None  # default: the frontage
    description: str | None = None
    # § 370-10 C: where the snow went, and whether it came from this parcel's own walk.
    onto: Annotated[DepositOnto, _choice("onto", get_args(DepositOnto))] = "street"
    from_own_walk: Flag = False
    # § 144-12 B: the fence between the excavation and the right-of-way (none: no fence).
    fence_height_mm: Length | None = None
    fence_height_ft: Length | None = None
    fence_height_in: Length = 0.0

    @property
    def fence_height(self) -> float | None:
        if self.fence_height_mm is not None:
            return 0.0 + self.fence_height_mm
        if self.fence_height_ft is not None:
            feet = 0.0 + length_to_mm(self.fence_height_ft, "feet")
            return feet + length_to_mm(self.fence_height_in, "inches")
        return None


class WorkDetail(_Detail):
    """A demolition completed (§ 144-11) or an excavation opened (§ 144-12 C): when."""

    frontage: str
    at: Instant  # the demolition's completion, or the opening of the excavation
    location: str | None = None
    description: str | None = None


ReviewDecision = Literal["cleared", "not_cleared"]


def _reason(reason: str) -> str:
    if not reason.strip():
        raise ValueError("a review decision must give the person's reason")
    return reason


class ReviewDetail(_Detail):
    """A person's decision on a deadline waiting in review (``needs_review``).

    ``decision``: ``cleared`` (the walk was cleared in time: the deadline closes
    with no notice) or ``not_cleared`` (the notice path, as a violation found by
    the pole would have taken); ``reason`` in the person's words (what they saw or
    relied on); ``deadline`` the one the item was listed with, so a decision meant
    for one snowfall's deadline never closes a later one.
    """

    decision: Annotated[ReviewDecision, _choice("decision", get_args(ReviewDecision))]
    reason: Annotated[str, AfterValidator(_reason)]
    deadline: Instant | None = None


CorrectableStep = Literal["record_delivery", "abatement_done"]
"""The entries a person may correct or undo: each moves a clock that can be moved back.

A service (its time, its method, or it never happened: entered on the wrong notice) and
the crew's completion (its time, or entered too soon). A later act resting on one (the
crew's work after a period ran out, a bill after the work) must be undone first."""
CORRECTABLE: Final[tuple[str, ...]] = get_args(CorrectableStep)


def _why(reason: str) -> str:
    if not reason.strip():
        raise ValueError("a correction must give the person's reason")
    return reason


class CorrectionDetail(_Detail):
    """A wrong entry corrected (``at`` of the action is the right time) or undone.

    ``entry`` is the corrected entry's id in the case records, which stays as it was
    recorded; ``step`` what it recorded; ``method`` a service's right method (default:
    as recorded); ``undo``: the entry should never have been made.
    """

    entry: Count
    step: Annotated[CorrectableStep, _choice("step", CORRECTABLE)]
    reason: Annotated[str, AfterValidator(_why)]
    undo: Flag = False
    method: str | None = None
    notice: str | None = None


class InspectionDetail(_PrivilegeMeasures):
    """An inspector at a § 370-9 permit's site: is the material still there (and measures)."""

    present: Flag


# -- actions -------------------------------------------------------------------------


class _Action(BaseModel):
    """Who did what to which target, when (event time, in UTC)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    target: str
    at: Annotated[datetime, AfterValidator(_aware)]
    who: Annotated[str, AfterValidator(_named)]

    @property
    def cause(self) -> Cause:
        return Cause(kind="person", at=self.at, who=self.who)


class _CaseAction(_Action):
    """A step on a violation's case; ``target`` is the violation key."""

    detail: CaseDetail = Field(default_factory=CaseDetail)


class ConfirmHazard(_CaseAction):
    """An officer finds an immediate danger (B(1)): the 2-hour notice is issued."""

    kind: Literal["confirm_hazard"] = "confirm_hazard"


class RecordDelivery(_CaseAction):
    """A written notice reached the owner: B(1)/(2) periods run from here."""

    kind: Literal["record_delivery"] = "record_delivery"


class OwnerUnavailable(_CaseAction):
    """No one to receive a hazard notice: the village removes at once (B(1))."""

    kind: Literal["owner_unavailable"] = "owner_unavailable"


class InspectedClear(_CaseAction):
    """An inspector saw the walk cleared to the width (cure)."""

    kind: Literal["inspected_clear"] = "inspected_clear"


class AbatementDone(_CaseAction):
    """The village's crew finished; the costs are incurred (F, G)."""

    kind: Literal["abatement_done"] = "abatement_done"


class BillReceived(_CaseAction):
    """The owner received the bill: 10 calendar days run from here (G)."""

    kind: Literal["bill_received"] = "bill_received"


class PaidInFull(_CaseAction):
    """The bill is paid."""

    kind: Literal["paid_in_full"] = "paid_in_full"


class CorrectEntry(_Action):
    """A wrong entry on a violation's case corrected or undone, with the reason; the case
    is recomputed from the corrected facts. ``target`` is the violation key."""

    kind: Literal["correct_entry"] = "correct_entry"
    detail: CorrectionDetail


class RecordTreated(_Action):
    """Ice that cannot be removed was sanded or salted (A); ``target`` is the frontage."""

    kind: Literal["record_treated"] = "record_treated"
    detail: CaseDetail = Field(default_factory=CaseDetail)


class RecordIce(_Action):
    """An inspector saw untreated ice on the walk (A); ``target`` is the frontage.

    The inspector's entry stands beside the pole's sensing (a wet or icy surface at
    or below freezing): the decision at the deadline says which one it rests on.
    """

    kind: Literal["record_ice"] = "record_ice"
    detail: CaseDetail = Field(default_factory=CaseDetail)


class DecideReview(_Action):
    """A person decides a clearing deadline that is waiting in review (its pole's
    evidence did not come within the wait); ``target`` is the frontage."""

    kind: Literal["decide_review"] = "decide_review"
    detail: ReviewDetail


class RecordPour(_Action):
    """Concrete placed; ``target`` is the pour's id."""

    kind: Literal["record_pour"] = "record_pour"
    detail: PourDetail


class RecordPermit(_Action):
    """A street-opening permit; ``target`` is the permit's id."""

    kind: Literal["record_permit"] = "record_permit"
    detail: PermitDetail


class RecordObstruction(_Action):
    """An obstruction seen by an inspector; ``target`` is the obstruction's id."""

    kind: Literal["record_obstruction"] = "record_obstruction"
    detail: ObstructionDetail


class RecordMaterialsAuthorization(_Action):
    """Building materials authorized by the Building Inspector; ``target`` is its reference."""

    kind: Literal["record_materials_authorization"] = "record_materials_authorization"
    detail: AuthorizationDetail


class ObstructionNoticeDelivered(_Action):
    """The written notice reached the owner: 24 h run from here (§ 370-8 D/E)."""

    kind: Literal["obstruction_notice_delivered"] = "obstruction_notice_delivered"
    detail: NoDetail = Field(default_factory=NoDetail)


class ObstructionRemoved(_Action):
    """An inspector saw the obstruction gone."""

    kind: Literal["obstruction_removed"] = "obstruction_removed"
    detail: NoDetail = Field(default_factory=NoDetail)


class RecordSweepingIncident(_Action):
    """Construction debris on the street; ``target`` is the incident's id."""

    kind: Literal["record_sweeping_incident"] = "record_sweeping_incident"
    detail: SweepingDetail


class SweepingDone(_Action):
    """The contractor swept the street."""

    kind: Literal["sweeping_done"] = "sweeping_done"
    detail: NoDetail = Field(default_factory=NoDetail)


class RecordStreetPrivilege(_Action):
    """A § 370-9 permit issued; ``target`` is the permit number."""

    kind: Literal["record_street_privilege"] = "record_street_privilege"
    detail: PrivilegeDetail


class StreetPrivilegeInspected(_Action):
    """An inspector looked at a § 370-9 permit's site; ``target`` is the permit number."""

    kind: Literal["street_privilege_inspected"] = "street_privilege_inspected"
    detail: InspectionDetail


class RecordInspectionFinding(_Action):
    """An inspector's finding under § 370-10 C, § 370-11 C, § 370-14 or § 144-12 B;
    ``target`` is the finding's id."""

    kind: Literal["record_inspection_finding"] = "record_inspection_finding"
    detail: FindingDetail


class RecordDemolitionCompleted(_Action):
    """A demolition completed: § 144-11's 30 days to fill run; ``target`` is its id."""

    kind: Literal["record_demolition_completed"] = "record_demolition_completed"
    detail: WorkDetail


class RecordExcavationOpened(_Action):
    """An excavation or foundation opened: § 144-12 C's 3 months run; ``target`` is its id."""

    kind: Literal["record_excavation_opened"] = "record_excavation_opened"
    detail: WorkDetail


class InspectionNoticeDelivered(_Action):
    """The written notice (or § 144-12 C order) reached the owner: the period runs."""

    kind: Literal["inspection_notice_delivered"] = "inspection_notice_delivered"
    detail: NoDetail = Field(default_factory=NoDetail)


class InspectionCorrected(_Action):
    """An inspector saw it corrected (cleared, removed, fenced, filled, building resumed)."""

    kind: Literal["inspection_corrected"] = "inspection_corrected"
    detail: NoDetail = Field(default_factory=NoDetail)


CaseStep = (
    ConfirmHazard
    | RecordDelivery
    | OwnerUnavailable
    | InspectedClear
    | AbatementDone
    | BillReceived
    | PaidInFull
)
"""A step a person records on a violation's case (§ 370-10 B–G)."""

EnforcementAction = CaseStep | CorrectEntry
"""What ``enforcement.Enforcement`` takes: a step, or the correction of one."""

ColdAction = RecordPour | RecordPermit
"""Cold weather (§ 370-5 (9), §§ 370-6, 370-7)."""

StreetAction = (
    RecordObstruction
    | RecordMaterialsAuthorization
    | ObstructionNoticeDelivered
    | ObstructionRemoved
    | RecordSweepingIncident
    | SweepingDone
    | RecordStreetPrivilege
    | StreetPrivilegeInspected
    | RecordInspectionFinding
    | RecordDemolitionCompleted
    | RecordExcavationOpened
    | InspectionNoticeDelivered
    | InspectionCorrected
)
"""Obstructions (§ 370-8), street sweeping (§ 144-17), street privilege permits (§ 370-9),
and the inspector-entered rules (§ 370-10 C, § 370-11 C, § 370-14, §§ 144-11, 144-12 B, C)."""

AnyAction = EnforcementAction | RecordTreated | RecordIce | DecideReview | ColdAction | StreetAction

Action = Annotated[AnyAction, Field(discriminator="kind")]
"""Any person's action, told apart by ``kind``."""

ACTION_TYPES: Final[dict[str, type[_Action]]] = {
    t.model_fields["kind"].default: t for t in get_args(AnyAction)
}
"""Each action kind's model."""

STREET_ACTIONS: Final = frozenset(t.model_fields["kind"].default for t in get_args(StreetAction))
"""The kinds ``sidewalk street`` records."""


@cache
def _codec() -> TypeAdapter[AnyAction]:
    return TypeAdapter(Action)


class ActionError(ValueError):
    """An action that cannot be applied as given: ``problems`` names each field and why."""

    def __init__(self, kind: str, target: str, problems: list[tuple[str, str]]) -> None:
        self.kind = kind
        self.target = target
        self.problems = problems
        said = "; ".join(_say(name, why) for name, why in problems)
        super().__init__(f"{kind} {target}: {said}")

    @property
    def fields(self) -> list[str]:
        """The fields at fault (``detail.`` fields by their own name, e.g. ``forecast.0.at``)."""
        return [name for name, _ in self.problems if name]


def parse_action(
    kind: str,
    target: str,
    detail: Mapping[str, Any] | None = None,
    *,
    at: datetime,
    who: str,
) -> AnyAction:
    """The typed action for ``kind`` on ``target`` with ``detail``; ``ActionError`` if not valid.

    ``at`` is the event time of the action (with a zone) and ``who`` the person
    recording it; ``detail`` is the JSON detail as stored or entered.
    """
    try:
        action_kind(kind)
    except ValueError as exc:
        raise ActionError(kind, target, [("kind", str(exc))]) from None
    data = {"kind": kind, "target": target, "at": at, "who": who, "detail": dict(detail or {})}
    try:
        return _codec().validate_python(data)
    except ValidationError as exc:
        raise ActionError(kind, target, _problems(kind, exc)) from None


def action_detail(action: AnyAction) -> dict[str, Any]:
    """The detail as it is stored (JSON-ready), only the fields given."""
    return action.detail.model_dump(mode="json", exclude_unset=True)


def _problems(kind: str, exc: ValidationError) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for error in exc.errors(include_url=False):
        loc = list(error["loc"])
        if loc and loc[0] == kind:
            loc = loc[1:]  # the union's tag
        if loc and loc[0] == "detail":
            loc = loc[1:]
        name = ".".join(str(part) for part in loc)
        if error["type"] == "missing":
            why = "is required"
        elif error["type"] == "value_error":
            why = str(error["ctx"]["error"])
        elif error["type"] == "extra_forbidden":
            why = f"is not a field of {kind} (it takes {_fields(kind) or 'none'})"
        else:
            why = error["msg"]
        problems.append((name, why))
    return problems


def _fields(kind: str) -> str:
    detail = ACTION_TYPES[kind].model_fields["detail"].annotation
    if isinstance(detail, type) and issubclass(detail, BaseModel):
        return ", ".join(detail.model_fields)
    return ""


def _say(name: str, why: str) -> str:
    if not name:
        return why
    if why.startswith("is "):
        return f"{name} {why}"
    return f"{name}: {why}"
