"""Obstructions and streets: § 370-8, § 370-9 and § 144-17. Pure, event-time.

The camera's clear-width measurement flags a narrowed sidewalk; an officer's
written notice starts the 24-hour removal clock at its delivery; the village
removes what is left at the deadline and bills through the shared billing
machinery (§ 370-8 F, same terms as § 370-10 G). Street-privilege permits
(§ 370-9) end three calendar months after issue, and what they allowed must
then be gone; construction debris on a street (§ 144-17) is swept within 24
hours of the incident.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Final, Literal

from sidewalk.analytics.clocks.events import (
    AbatementOrdered,
    Cause,
    RuleFinding,
    StreetCase,
    Transition,
)
from sidewalk.analytics.clocks.permits import Finding
from sidewalk.analytics.clocks.states import ObstructionState, PermitState, SweepingState
from sidewalk.core.calendar import (
    Deadline,
    add_calendar_days,
    add_months,
    end_of_day,
    plus_elapsed,
    start_of_day,
)
from sidewalk.core.clock import require_aware
from sidewalk.core.profile import Profile, Rule

PublicArea = Literal["sidewalk", "street"]
ObstructionKind = Literal["fixture", "building_materials", "excavation", "other"]
"""What the inspector saw: a temporary, unattached fixture (§ 370-8 C), building
materials (§ 370-8 B(2)), an excavation or opening (§ 370-8 B(3)), or anything else."""


@dataclass(frozen=True)
class Obstruction:
    """Something obstructing a sidewalk or encumbering a street, as observed and noticed.

    ``kind`` is what the inspector saw; ``clear_width_mm`` is the narrowest
    unobstructed width measured (sidewalks); ``sidewalk_width_mm`` the walk's
    whole width (building materials: at most half of it); ``street_width_mm`` and
    ``street_occupied_mm`` the traveled street and what the materials take of it;
    ``gutters_clear`` whether the gutters still flow. ``privilege_permit``,
    ``opening_permit`` and ``materials_authorization`` are the references the
    inspector wrote down (a § 370-9 permit, a §§ 370-6/370-7 opening permit, the
    Building Inspector's authorization); the engine checks them against its records.
    ``notice_delivered_at`` is when the written notice reached the owner or
    occupant; ``removed_at`` is when the obstruction was seen gone.
    """

    id: str
    location: str
    area: PublicArea
    observed_at: datetime
    clear_width_mm: float | None = None
    notice_delivered_at: datetime | None = None
    removed_at: datetime | None = None
    kind: ObstructionKind = "other"
    sidewalk_width_mm: float | None = None
    street_width_mm: float | None = None
    street_occupied_mm: float | None = None
    gutters_clear: bool | None = None
    privilege_permit: str | None = None
    opening_permit: str | None = None
    materials_authorization: str | None = None


@dataclass(frozen=True)
class OnRecord:
    """What the engine's records say about an obstruction's references and frontage.

    Each ``*_permit``/``authorization`` is true only when the reference names a
    record the engine holds that covers the obstruction's place and time;
    ``commercial`` when the frontage is recorded in a commercial zone (§ 370-8 C(1)).
    ``problems`` says, in words, why a reference given did not hold.
    """

    privilege_permit: bool = False
    opening_permit: bool = False
    materials_authorization: bool = False
    commercial: bool = False
    problems: tuple[str, ...] = ()


NOTHING_ON_RECORD: Final = OnRecord()


def _removal_rule(obstruction: Obstruction, profile: Profile) -> tuple[str, Rule]:
    area = obstruction.area
    rules = profile.obstructions
    rule = (
        rules.sidewalk_removal_after_notice
        if area == "sidewalk"
        else rules.street_removal_after_notice
    )
    return f"obstructions.{area}_removal_after_notice", rule


def clear_width_finding(obstruction: Obstruction, profile: Profile) -> Finding | None:
    """§ 370-8 C(3): a fixture leaving the walk narrower than 3 ft ("less than": 3 ft is allowed).

    Only the floor for a commercial property's temporary fixtures: whether the
    exception applies at all is ``obstruction_finding``'s question.
    """
    rule = profile.obstructions.fixture_min_clear_width
    width = obstruction.clear_width_mm
    if obstruction.area != "sidewalk" or width is None or width >= rule.length_mm:
        return None
    return Finding.of(
        "obstructions.fixture_min_clear_width",
        "violation",
        f"unobstructed width {width:.0f} mm is less than {rule.describe()}",
        obstruction.observed_at,
        rule,
    )


def street_obstruction_finding(obstruction: Obstruction, profile: Profile) -> Finding | None:
    """§ 370-8 A/E: anything encumbering a street without an exception is prohibited.

    There is no width to meet: seen on the street, it gets the written notice
    that directs removal within 24 hours.
    """
    if obstruction.area != "street":
        return None
    rule = profile.obstructions.street_removal_after_notice
    return Finding.of(
        "obstructions.street_removal_after_notice",
        "violation",
        f"the street at {obstruction.location} is obstructed or encumbered; a written notice "
        f"directs removal within {rule.describe()}",
        obstruction.observed_at,
        rule,
    )


_KIND_WORDS: Final = {
    "fixture": "a temporary fixture",
    "building_materials": "building materials",
    "excavation": "an excavation or opening",
    "other": "not a fixture, building materials or a permitted excavation",
}


def _prohibited(obstruction: Obstruction, profile: Profile, why: str) -> Finding:
    """§ 370-8 A: prohibited whatever width remains; the notice's removal period is cited."""
    name, rule = _removal_rule(obstruction, profile)
    return Finding.of(
        name,
        "violation",
        f"the {obstruction.area} at {obstruction.location} is obstructed "
        f"({_KIND_WORDS[obstruction.kind]}): {why}; "
        f"a written notice directs removal within {rule.describe()}",
        obstruction.observed_at,
        rule,
    )


def _materials_finding(obstruction: Obstruction, profile: Profile) -> Finding | None:
    """§ 370-8 B(2): authorized materials take at most 1/2 of the walk, 1/3 of the street,
    and leave the gutters flowing; anything measured over that, or not measured, is a violation."""
    rules = profile.obstructions
    at = obstruction.observed_at
    if obstruction.gutters_clear is not True:
        return Finding.of(
            "obstructions.building_materials_max_street",
            "violation",
            "building materials interfere with the flow in the gutters (or it was not recorded "
            "that they do not)",
            at,
            rules.building_materials_max_street,
        )
    if obstruction.area == "sidewalk":
        walk, clear = obstruction.sidewalk_width_mm, obstruction.clear_width_mm
        rule, name = rules.building_materials_max_sidewalk, "building_materials_max_sidewalk"
        occupied = None if walk is None or clear is None else max(walk - clear, 0.0)
        width = walk
    else:
        width, occupied = obstruction.street_width_mm, obstruction.street_occupied_mm
        rule, name = rules.building_materials_max_street, "building_materials_max_street"
    if width is None or occupied is None or width <= 0:
        return Finding.of(
            f"obstructions.{name}",
            "violation",
            f"building materials on the {obstruction.area}: the share they take was not "
            f"measured, so the limit of {rule.describe()} cannot be shown to be met",
            at,
            rule,
        )
    if occupied / width > rule.fraction:
        return Finding.of(
            f"obstructions.{name}",
            "violation",
            f"building materials cover {occupied / width:.0%} of the {obstruction.area}, "
            f"more than {rule.describe()}",
            at,
            rule,
        )
    return None


def obstruction_finding(  # noqa: PLR0911 (one return per exception of § 370-8 B and C)
    obstruction: Obstruction, profile: Profile, on_record: OnRecord = NOTHING_ON_RECORD
) -> Finding | None:
    """The § 370-8 finding an observation makes, or None when an exception of B or C holds.

    § 370-8 A prohibits every obstruction "except as provided in Subsections B
    and C": a § 370-9 permit on record and running (B(1)); building materials
    the Building Inspector authorized, within 1/2 of the walk or 1/3 of the
    street with the gutters free (B(2)); an excavation under a §§ 370-6/370-7
    permit on record and valid (B(3)); a temporary, unattached fixture of a
    property in a commercial area leaving at least 3 ft (C). Anything else is a
    violation whatever width remains.
    """
    problems = "; ".join(on_record.problems)
    if on_record.privilege_permit:
        return None
    kind = obstruction.kind
    if kind == "excavation":
        if on_record.opening_permit:
            return None
        return _prohibited(
            obstruction, profile, problems or "no street-opening permit on record covers it"
        )
    if kind == "building_materials":
        if not on_record.materials_authorization:
            return _prohibited(
                obstruction,
                profile,
                problems
                or "no Building Inspector's authorization or street privilege permit "
                "on record covers it",
            )
        return _materials_finding(obstruction, profile)
    if kind == "fixture" and obstruction.area == "sidewalk":
        if not on_record.commercial:
            return _prohibited(
                obstruction,
                profile,
                "fixtures may stand on a sidewalk only where the property is in an area used "
                "for commercial uses, and this frontage is not recorded as commercial",
            )
        return clear_width_finding(obstruction, profile)
    return _prohibited(
        obstruction,
        profile,
        problems or "no permit, authorization or exception covers it, whatever width remains",
    )


def removal_deadline(obstruction: Obstruction, profile: Profile) -> Deadline | None:
    """§ 370-8 D/E: removal within 24 hours (elapsed) of the notice's delivery; None before it."""
    delivered = obstruction.notice_delivered_at
    if delivered is None:
        return None
    name, rule = _removal_rule(obstruction, profile)
    return Deadline.of(name, delivered, plus_elapsed(delivered, rule.duration), rule)


def obstruction_state(
    obstruction: Obstruction,
    profile: Profile,
    at: datetime,
    on_record: OnRecord = NOTHING_ON_RECORD,
) -> ObstructionState:
    """Where the § 370-8 sequence stands at event time ``at``.

    ``overdue`` means the removal deadline passed with the obstruction still
    there: § 370-8 F has the village remove it and bill the owner.
    """
    require_aware(at)
    if obstruction.removed_at is not None and obstruction.removed_at <= at:
        return ObstructionState.REMOVED
    deadline = removal_deadline(obstruction, profile)
    if deadline is not None and deadline.start <= at:
        return ObstructionState.OVERDUE if deadline.passed(at) else ObstructionState.REMOVAL_PERIOD
    if obstruction_finding(obstruction, profile, on_record) is None:
        return ObstructionState.COMPLIANT
    return ObstructionState.OBSTRUCTED


def building_materials_check(
    at: datetime,
    profile: Profile,
    *,
    sidewalk_width_mm: float | None = None,
    sidewalk_occupied_mm: float | None = None,
    street_width_mm: float | None = None,
    street_occupied_mm: float | None = None,
) -> list[Finding]:
    """§ 370-8 B(2), advisory: building materials on at most 1/2 of the sidewalk, 1/3 of the street.

    "Not more than" admits the share itself: exactly half the sidewalk is allowed.
    """
    rules = profile.obstructions
    findings: list[Finding] = []
    for area, width, occupied, name, rule in (
        (
            "sidewalk",
            sidewalk_width_mm,
            sidewalk_occupied_mm,
            "building_materials_max_sidewalk",
            rules.building_materials_max_sidewalk,
        ),
        (
            "street",
            street_width_mm,
            street_occupied_mm,
            "building_materials_max_street",
            rules.building_materials_max_street,
        ),
    ):
        if width is None or occupied is None or width <= 0:
            continue
        if occupied / width > rule.fraction:
            findings.append(
                Finding.of(
                    f"obstructions.{name}",
                    "advisory",
                    f"building materials cover {occupied / width:.0%} of the {area}, "
                    f"more than {rule.describe()}",
                    at,
                    rule,
                )
            )
    return findings


@dataclass(frozen=True)
class StreetPrivilegePermit:
    """A § 370-9 permit to occupy a street or sidewalk while building or moving.

    ``holder``, ``location`` and ``placed`` (what the permit lets stand there)
    are as the Clerk-Treasurer wrote them; ``area`` is where it stands.
    """

    id: str
    issued_on: date
    earlier_termination_on: date | None = None
    temporary_walk_width_mm: float | None = None
    street_width_mm: float | None = None
    street_occupied_mm: float | None = None
    holder: str = ""
    location: str = ""
    placed: str = ""
    area: PublicArea = "street"


def street_privilege_expiry(permit: StreetPrivilegePermit, profile: Profile) -> Deadline:
    """§ 370-9: ends at the end of three calendar months from issue, or an earlier date it names.

    Issued Nov 30, it ends at the end of Feb 28 (Feb 29 in a leap year): a
    month without the issuing day ends on its last day.
    """
    rule = profile.permits.street_privilege_term
    last = add_months(permit.issued_on, rule.months)
    if permit.earlier_termination_on is not None:
        last = min(last, permit.earlier_termination_on)
    return Deadline.of(
        "permits.street_privilege_term",
        start_of_day(permit.issued_on, profile.zone),
        end_of_day(last, profile.zone),
        rule,
    )


def street_privilege_check(
    permit: StreetPrivilegePermit, profile: Profile, at: datetime
) -> list[Finding]:
    """§ 370-9 D: a temporary walk at least 4 ft wide; the street at most 1/3 covered."""
    rules = profile.obstructions
    findings: list[Finding] = []
    walk = permit.temporary_walk_width_mm
    if walk is not None and walk < rules.temporary_walk_min_width.length_mm:
        findings.append(
            Finding.of(
                "obstructions.temporary_walk_min_width",
                "violation",
                f"temporary walk {walk:.0f} mm wide, less than "
                f"{rules.temporary_walk_min_width.describe()}",
                at,
                rules.temporary_walk_min_width,
            )
        )
    width, occupied = permit.street_width_mm, permit.street_occupied_mm
    if width and occupied is not None and occupied / width > rules.privilege_max_street.fraction:
        findings.append(
            Finding.of(
                "obstructions.privilege_max_street",
                "violation",
                f"obstruction covers {occupied / width:.0%} of the street, more than "
                f"{rules.privilege_max_street.describe()}",
                at,
                rules.privilege_max_street,
            )
        )
    return findings


@dataclass(frozen=True)
class SweepingIncident:
    """Construction dirt or debris on a street (§ 144-17), and what followed."""

    id: str
    location: str
    occurred_at: datetime
    swept_at: datetime | None = None
    bill_received_on: date | None = None
    paid_on: date | None = None
    # The primary contractor the Village's bill goes to (§ 144-17), as recorded.
    contractor: str | None = None
    contractor_address: tuple[str, ...] | None = None


def sweeping_deadline(incident: SweepingIncident, profile: Profile) -> Deadline:
    """§ 144-17: the contractor sweeps within 24 hours (elapsed) of the incident."""
    rule = profile.streets.sweeping_deadline
    start = incident.occurred_at
    return Deadline.of("streets.sweeping_deadline", start, plus_elapsed(start, rule.duration), rule)


def sweeping_payment_deadline(incident: SweepingIncident, profile: Profile) -> Deadline | None:
    """§ 144-17: the village's bill paid within 30 calendar days of its receipt."""
    if incident.bill_received_on is None:
        return None
    rule = profile.streets.sweeping_costs_payable
    last = add_calendar_days(incident.bill_received_on, rule.days)
    return Deadline.of(
        "streets.sweeping_costs_payable",
        start_of_day(incident.bill_received_on, profile.zone),
        end_of_day(last, profile.zone),
        rule,
    )


def sweeping_check(incident: SweepingIncident, profile: Profile, at: datetime) -> list[Finding]:
    """§ 144-17 at event time ``at``: not swept in time (village sweeps); bill left unpaid."""
    require_aware(at)
    findings: list[Finding] = []
    sweep = sweeping_deadline(incident, profile)
    swept = incident.swept_at
    if (swept is None and sweep.passed(at)) or (swept is not None and swept >= sweep.due):
        findings.append(
            Finding.missed(
                sweep,
                "advisory",
                "street not swept in time: the village cleans it and bills",
                sweep.due,
            )
        )
    payment = sweeping_payment_deadline(incident, profile)
    if payment is not None:
        paid = incident.paid_on
        paid_late = paid is not None and start_of_day(paid, profile.zone) >= payment.due
        if (paid is None and payment.passed(at)) or paid_late:
            findings.append(
                Finding.missed(payment, "violation", "sweeping costs not paid in time", payment.due)
            )
    return findings


# -- the engine piece: § 370-8 removal and § 144-17 sweeping clocks, live ----------

OBSTRUCTION = "obstruction"
SWEEPING = "sweeping"
PRIVILEGE = "street_privilege"


@dataclass
class _ObstructionClock:
    obstruction: Obstruction
    frontage: str
    state: ObstructionState
    deadline: Deadline | None = None


@dataclass
class _SweepingClock:
    incident: SweepingIncident
    frontage: str
    deadline: Deadline
    state: SweepingState = SweepingState.SWEEPING_PERIOD


@dataclass
class _PrivilegeClock:
    permit: StreetPrivilegePermit
    frontage: str
    expiry: Deadline
    state: PermitState = PermitState.VALID
    # After expiry: what the inspector saw ("vacated" or "still there"), once.
    inspected: str | None = None


@dataclass(frozen=True)
class MaterialsAuthorization:
    """The Building Inspector's authorization of building materials on a public way
    (§ 370-8 B(2)) "for the period authorized": from its first to its last day."""

    id: str
    frontage: str
    authorized_from: date
    authorized_until: date
    by: str = ""
    location: str = ""

    def covers(self, frontage: str, at: datetime, profile: Profile) -> bool:
        """Whether it was in force for ``frontage`` at ``at`` (its days whole, village time)."""
        return frontage == self.frontage and start_of_day(
            self.authorized_from, profile.zone
        ) <= at < end_of_day(self.authorized_until, profile.zone)


@dataclass
class StreetState:
    """What ``StreetClocks`` must remember across a restart."""

    now: datetime | None
    obstructions: dict[str, _ObstructionClock]
    sweeping: dict[str, _SweepingClock]
    # Absent from snapshots written before § 370-9 permits ran live: starts empty.
    privileges: dict[str, _PrivilegeClock] = field(default_factory=dict)
    # Absent from snapshots written before § 370-8 B(2) authorizations were recorded.
    authorizations: dict[str, MaterialsAuthorization] = field(default_factory=dict)


StreetEvent = Transition | RuleFinding | StreetCase | AbatementOrdered


@dataclass
class StreetClocks:
    """Obstruction removal clocks and sweeping clocks, from what inspectors record.

    Transitions use the engine's ``Transition`` with the obstruction's or
    incident's id in its ``frontage`` field (as the cold-weather clocks do) and
    the frontage whose records carry it in ``detail["frontages"]``.
    """

    profile: Profile
    now: datetime | None = None
    obstructions: dict[str, _ObstructionClock] = field(default_factory=dict)
    sweeping: dict[str, _SweepingClock] = field(default_factory=dict)
    privileges: dict[str, _PrivilegeClock] = field(default_factory=dict)
    authorizations: dict[str, MaterialsAuthorization] = field(default_factory=dict)

    def observe_obstruction(
        self,
        obstruction: Obstruction,
        frontage: str,
        description: str,
        cause: Cause,
        *,
        commercial: bool = False,
        opening_permit_valid: bool | None = None,
    ) -> list[StreetEvent]:
        """An inspector saw an obstruction: a case unless an exception of § 370-8 B or C holds.

        The references the inspector gave are checked here against the permits and
        authorizations on record (a § 370-9 permit running at the time, for the same
        frontage; a Building Inspector's authorization in force); an opening permit's
        validity is the engine's (``opening_permit_valid``: None when none is on record).
        """
        on_record = self.on_record(
            obstruction, frontage, commercial=commercial, opening_permit_valid=opening_permit_valid
        )
        finding = obstruction_finding(obstruction, self.profile, on_record)
        return self._open_case(
            obstruction, frontage, description, cause, finding, on_record=on_record
        )

    def on_record(  # noqa: PLR0912 (one branch per reference and outcome)
        self,
        obstruction: Obstruction,
        frontage: str,
        *,
        commercial: bool = False,
        opening_permit_valid: bool | None = None,
    ) -> OnRecord:
        """What the records say about the obstruction's references (see ``OnRecord``)."""
        at = obstruction.observed_at
        problems: list[str] = []
        privilege = False
        if (ref := obstruction.privilege_permit) is not None:
            held = self.privileges.get(ref)
            if held is None:
                problems.append(f"street privilege permit {ref} is not on record")
            elif held.frontage != frontage:
                problems.append(f"street privilege permit {ref} is for {held.frontage}")
            elif not held.expiry.start <= at < held.expiry.due:
                problems.append(
                    f"street privilege permit {ref} was not in force then "
                    f"(it ran until {held.expiry.due.isoformat()})"
                )
            else:
                privilege = True
        opening = False
        if (ref := obstruction.opening_permit) is not None:
            if opening_permit_valid is None:
                problems.append(f"street-opening permit {ref} is not on record")
            elif not opening_permit_valid:
                problems.append(f"street-opening permit {ref} was not valid then")
            else:
                opening = True
        authorized = False
        if (ref := obstruction.materials_authorization) is not None:
            auth = self.authorizations.get(ref)
            if auth is None:
                problems.append(f"building materials authorization {ref} is not on record")
            elif not auth.covers(frontage, at, self.profile):
                problems.append(
                    f"building materials authorization {ref} does not cover {frontage} then "
                    f"({auth.frontage}, {auth.authorized_from} to {auth.authorized_until})"
                )
            else:
                authorized = True
        return OnRecord(privilege, opening, authorized, commercial, tuple(problems))

    def record_authorization(self, authorization: MaterialsAuthorization) -> list[StreetEvent]:
        """The Building Inspector authorized building materials on a public way (§ 370-8 B(2))."""
        if authorization.id in self.authorizations:
            raise ValueError(f"authorization {authorization.id!r} is already recorded")
        if authorization.authorized_until < authorization.authorized_from:
            raise ValueError(f"authorization {authorization.id!r} ends before it begins")
        self.authorizations[authorization.id] = authorization
        return []

    def _open_case(
        self,
        obstruction: Obstruction,
        frontage: str,
        description: str,
        cause: Cause,
        finding: Finding | None,
        *,
        on_record: OnRecord = NOTHING_ON_RECORD,
    ) -> list[StreetEvent]:
        if obstruction.id in self.obstructions:
            raise ValueError(f"obstruction {obstruction.id!r} is already recorded")
        state = ObstructionState.OBSTRUCTED if finding else ObstructionState.COMPLIANT
        clock = _ObstructionClock(obstruction, frontage, ObstructionState.NONE)
        self.obstructions[obstruction.id] = clock
        detail: dict[str, object] = {
            "area": obstruction.area,
            "description": description,
            "kind": obstruction.kind,
        }
        exempt = [
            name
            for name, held in (
                ("privilege_permit", on_record.privilege_permit),
                ("opening_permit", on_record.opening_permit),
                ("materials_authorization", on_record.materials_authorization),
            )
            if held
        ]
        for name in ("privilege_permit", "opening_permit", "materials_authorization"):
            if (ref := getattr(obstruction, name)) is not None:
                detail[name] = ref
        if exempt:
            detail["on_record"] = exempt
        if on_record.problems:
            detail["problems"] = list(on_record.problems)
        if finding is not None:
            detail["finding"] = finding.message
        if obstruction.clear_width_mm is not None:
            detail["clear_width_mm"] = obstruction.clear_width_mm
        fixture_rule = self.profile.obstructions.fixture_min_clear_width
        if obstruction.kind == "fixture" and on_record.commercial:
            detail["required_width_mm"] = fixture_rule.length_mm
        detail["citation"] = (
            finding.citation
            if finding
            else (fixture_rule.citation if obstruction.kind == "fixture" else None)
        )
        out: list[StreetEvent] = [self._move(clock, state, obstruction.observed_at, cause, detail)]
        if finding is not None:
            subject = f"{OBSTRUCTION}:{obstruction.id}"
            out += [
                _rule_finding(subject, finding),
                StreetCase(
                    subject, frontage, finding.rule, finding.citation, finding.at,
                    {**detail, "location": obstruction.location},
                ),
            ]  # fmt: skip
        return out

    def notice_delivered(
        self, obstruction_id: str, at: datetime, cause: Cause
    ) -> list[StreetEvent]:
        """The written notice reached the owner: the removal clock runs from ``at``."""
        clock = self._obstruction(obstruction_id)
        if clock.state != ObstructionState.OBSTRUCTED:
            raise ValueError(
                f"obstruction {obstruction_id!r} is {clock.state}, not awaiting notice"
            )
        clock.obstruction = replace(clock.obstruction, notice_delivered_at=at)
        clock.deadline = removal_deadline(clock.obstruction, self.profile)
        assert clock.deadline is not None
        detail: dict[str, object] = {
            "until": clock.deadline.due.isoformat(),
            "rule": clock.deadline.rule,
            "citation": clock.deadline.citation,
        }
        return [self._move(clock, ObstructionState.REMOVAL_PERIOD, at, cause, detail)]

    def removed(self, obstruction_id: str, at: datetime, cause: Cause) -> list[StreetEvent]:
        """An inspector saw it gone; after the deadline the village's abatement stands."""
        clock = self._obstruction(obstruction_id)
        if clock.state not in {ObstructionState.OBSTRUCTED, ObstructionState.REMOVAL_PERIOD}:
            raise ValueError(f"obstruction {obstruction_id!r} is {clock.state}; nothing to remove")
        if clock.deadline is not None and clock.deadline.passed(at):
            return self._overdue(clock)  # removed too late: decided at the deadline all the same
        clock.obstruction = replace(clock.obstruction, removed_at=at)
        return [self._move(clock, ObstructionState.REMOVED, at, cause, {})]

    def record_sweeping(
        self, incident: SweepingIncident, frontage: str, description: str, cause: Cause
    ) -> list[StreetEvent]:
        """Construction debris on the street: the contractor's 24 hours run from the incident."""
        if incident.id in self.sweeping:
            raise ValueError(f"sweeping incident {incident.id!r} is already recorded")
        deadline = sweeping_deadline(incident, self.profile)
        clock = _SweepingClock(incident, frontage, deadline, SweepingState.NONE)
        self.sweeping[incident.id] = clock
        detail: dict[str, object] = {
            "until": deadline.due.isoformat(),
            "rule": deadline.rule,
            "citation": deadline.citation,
            "location": incident.location,
            "description": description,
        }
        return [
            self._move(clock, SweepingState.SWEEPING_PERIOD, incident.occurred_at, cause, detail)
        ]

    def swept(self, incident_id: str, at: datetime, cause: Cause) -> list[StreetEvent]:
        """The street was swept; at or after the deadline the village's sweeping stands."""
        clock = self.sweeping.get(incident_id)
        if clock is None:
            raise KeyError(f"no sweeping incident {incident_id!r}")
        if clock.state != SweepingState.SWEEPING_PERIOD:
            raise ValueError(f"sweeping incident {incident_id!r} is {clock.state}")
        if clock.deadline.passed(at):
            return self._sweeping_missed(clock)
        clock.incident = replace(clock.incident, swept_at=at)
        return [self._move(clock, SweepingState.SWEPT, at, cause, {})]

    def record_privilege(
        self, permit: StreetPrivilegePermit, frontage: str, cause: Cause
    ) -> list[StreetEvent]:
        """A § 370-9 permit issued: it runs to its termination; its conditions are checked."""
        if permit.id in self.privileges:
            raise ValueError(f"street privilege permit {permit.id!r} is already recorded")
        expiry = street_privilege_expiry(permit, self.profile)
        clock = _PrivilegeClock(permit, frontage, expiry, PermitState.NONE)
        self.privileges[permit.id] = clock
        detail: dict[str, object] = {
            "until": expiry.due.isoformat(),
            "rule": expiry.rule,
            "citation": expiry.citation,
            "holder": permit.holder,
            "location": permit.location,
            "placed": permit.placed,
            "area": permit.area,
            "issued_on": permit.issued_on.isoformat(),
        }
        subject = f"{PRIVILEGE}:{permit.id}"
        # It runs from the start of its issue date, however late it is entered.
        issued = replace(cause, at=expiry.start)
        out: list[StreetEvent] = [self._move(clock, PermitState.VALID, issued.at, issued, detail)]
        findings = street_privilege_check(permit, self.profile, issued.at)
        return out + [_rule_finding(subject, f) for f in findings]

    def privilege_inspected(
        self,
        permit_id: str,
        at: datetime,
        cause: Cause,
        *,
        present: bool,
        temporary_walk_width_mm: float | None = None,
        street_width_mm: float | None = None,
        street_occupied_mm: float | None = None,
    ) -> list[StreetEvent]:
        """An inspector looked at a permit's site.

        While the permit runs: its § 370-9 D conditions checked on what was
        measured (``temporary_walk_width_mm``, ``street_width_mm``,
        ``street_occupied_mm``). After it ended: the area must be vacated
        (§ 370-9 D(7), E); material still there is a § 370-8 obstruction under
        the permit's id, awaiting the written notice (``obstruction_notice_delivered``).
        """
        clock = self.privileges.get(permit_id)
        if clock is None:
            raise KeyError(f"no street privilege permit {permit_id!r}")
        subject = f"{PRIVILEGE}:{permit_id}"
        if not clock.expiry.passed(at):
            permit = clock.permit
            checked = replace(
                permit,
                temporary_walk_width_mm=_given(
                    temporary_walk_width_mm, permit.temporary_walk_width_mm
                ),
                street_width_mm=_given(street_width_mm, permit.street_width_mm),
                street_occupied_mm=_given(street_occupied_mm, permit.street_occupied_mm),
            )
            return [_rule_finding(subject, f)
                    for f in street_privilege_check(checked, self.profile, at)]  # fmt: skip
        if clock.inspected is not None:
            raise ValueError(f"street privilege permit {permit_id!r} was inspected already")
        clock.inspected = "still there" if present else "vacated"
        if not present:
            return []
        rule = self.profile.permits.street_privilege_term
        finding = Finding.of(
            "permits.street_privilege_term",
            "violation",
            f"{clock.permit.placed or 'material'} still at {clock.permit.location or 'the site'} "
            f"after the permit ended {clock.expiry.due.isoformat()}",
            at,
            rule,
        )
        obstruction = Obstruction(
            permit_id, clock.permit.location or clock.frontage, clock.permit.area, at
        )
        description = f"left after street privilege permit {permit_id} ended"
        out: list[StreetEvent] = [_rule_finding(subject, finding)]
        return out + self._open_case(obstruction, clock.frontage, description, cause, finding)

    def advance(self, to: datetime) -> list[StreetEvent]:
        """Move event time to ``to`` (never backwards); returns what came due."""
        require_aware(to)
        if self.now is not None and to <= self.now:
            return []
        self.now = to
        out: list[StreetEvent] = []
        for held in self.privileges.values():
            if held.state == PermitState.VALID and held.expiry.passed(to):
                term = self.profile.permits.street_privilege_term
                earlier = held.permit.earlier_termination_on
                why = (
                    "the earlier termination date on the permit"
                    if earlier is not None
                    and earlier < add_months(held.permit.issued_on, term.months)
                    else f"{term.describe()} from issue"
                )
                due = held.expiry.due
                cause = Cause(kind="deadline", at=due)
                out.append(
                    self._move(
                        held, PermitState.EXPIRED, due, cause, {"cause": f"terminated: {why}"}
                    )
                )
        for clock in self.obstructions.values():
            if (
                clock.state == ObstructionState.REMOVAL_PERIOD
                and clock.deadline
                and clock.deadline.passed(to)
            ):
                out += self._overdue(clock)
        for sweep in self.sweeping.values():
            if sweep.state == SweepingState.SWEEPING_PERIOD and sweep.deadline.passed(to):
                out += self._sweeping_missed(sweep)
        return out

    def next_due(self) -> datetime | None:
        """The next instant at which ``advance`` would decide something."""
        due = [
            c.deadline.due
            for c in self.obstructions.values()
            if c.state == ObstructionState.REMOVAL_PERIOD and c.deadline is not None
        ]
        due += [
            s.deadline.due
            for s in self.sweeping.values()
            if s.state == SweepingState.SWEEPING_PERIOD
        ]
        due += [p.expiry.due for p in self.privileges.values() if p.state == PermitState.VALID]
        return min(due, default=None)

    def state(self) -> StreetState:
        """The clocks' state for a snapshot."""
        return StreetState(
            self.now, self.obstructions, self.sweeping, self.privileges, self.authorizations
        )

    def load(self, state: StreetState) -> None:
        """Resume from ``state()``."""
        self.now = state.now
        self.obstructions = dict(state.obstructions)
        self.sweeping = dict(state.sweeping)
        self.privileges = dict(state.privileges)
        self.authorizations = dict(state.authorizations)

    # -- internals -----------------------------------------------------------

    def _obstruction(self, obstruction_id: str) -> _ObstructionClock:
        clock = self.obstructions.get(obstruction_id)
        if clock is None:
            raise KeyError(f"no obstruction {obstruction_id!r}")
        return clock

    def _overdue(self, clock: _ObstructionClock) -> list[StreetEvent]:
        assert clock.deadline is not None
        due = clock.deadline.due
        key = f"{OBSTRUCTION}:{clock.obstruction.id}"
        move = self._move(clock, ObstructionState.OVERDUE, due, Cause(kind="deadline", at=due), {})
        # § 370-8 F: the village removes it and bills on § 370-10 G's terms.
        reason = "obstruction_not_removed"  # a key (alerts.wording.ABATEMENT_REASONS)
        citation = clock.deadline.citation or ""
        return [
            move,
            AbatementOrdered(f"{key}/abatement", key, clock.frontage, due, reason, citation),
        ]

    def _sweeping_missed(self, clock: _SweepingClock) -> list[StreetEvent]:
        due = clock.deadline.due
        key = f"{SWEEPING}:{clock.incident.id}"
        move = self._move(clock, SweepingState.OVERDUE, due, Cause(kind="deadline", at=due), {})
        [finding] = [f for f in sweeping_check(clock.incident, self.profile, due)
                     if f.rule == clock.deadline.rule]  # fmt: skip
        evidence: dict[str, object] = {
            "location": clock.incident.location,
            "occurred_at": clock.incident.occurred_at.isoformat(),
            "deadline": due.isoformat(),
        }
        if clock.incident.contractor:
            evidence["contractor"] = clock.incident.contractor
            evidence["contractor_address"] = list(clock.incident.contractor_address or ())
        citation = clock.deadline.citation or ""
        return [
            move,
            _rule_finding(key, finding),
            StreetCase(key, clock.frontage, finding.rule, finding.citation, due, evidence),
            AbatementOrdered(
                f"{key}/abatement", key, clock.frontage, due, "street_not_swept", citation
            ),
        ]

    @staticmethod
    def _move(
        clock: _ObstructionClock | _SweepingClock | _PrivilegeClock,
        to_state: ObstructionState | SweepingState | PermitState,
        at: datetime,
        cause: Cause,
        detail: dict[str, object],
    ) -> Transition:
        from_state = clock.state
        if isinstance(clock, _ObstructionClock):
            assert isinstance(to_state, ObstructionState)
            name, subject = OBSTRUCTION, clock.obstruction.id
            clock.state = to_state
        elif isinstance(clock, _PrivilegeClock):
            assert isinstance(to_state, PermitState)
            name, subject = PRIVILEGE, clock.permit.id
            clock.state = to_state
        else:
            assert isinstance(to_state, SweepingState)
            name, subject = SWEEPING, clock.incident.id
            clock.state = to_state
        return Transition(
            subject, name, from_state, to_state, at, cause,
            {**detail, "frontages": [clock.frontage]},
        )  # fmt: skip


def _rule_finding(subject: str, f: Finding) -> RuleFinding:
    return RuleFinding(
        subject, f.rule, f.citation, f.severity, f.message, f.at, f.unconfirmed, f.notes
    )


def _given(measured: float | None, recorded: float | None) -> float | None:
    return recorded if measured is None else measured
