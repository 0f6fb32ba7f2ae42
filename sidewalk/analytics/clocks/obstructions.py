"""Obstructions and streets: § 370-8, § 370-9 and § 144-17. Pure, event-time.

The camera's clear-width measurement flags a narrowed sidewalk; an officer's
written notice starts the 24-hour removal clock at its delivery; the village
removes what is left at the deadline and bills through the shared billing
machinery (§ 370-8 F, same terms as § 370-10 G). Street-privilege permits
(§ 370-9) end three calendar months after issue; construction debris on a
street (§ 144-17) is swept within 24 hours of the incident.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from sidewalk.analytics.clocks.permits import Finding
from sidewalk.core.calendar import (
    Deadline,
    add_calendar_days,
    add_months,
    end_of_day,
    plus_elapsed,
    start_of_day,
)
from sidewalk.core.clock import require_aware
from sidewalk.core.profile import Profile

PublicArea = Literal["sidewalk", "street"]
ObstructionState = Literal["compliant", "obstructed", "removal_period", "removed", "overdue"]


@dataclass(frozen=True)
class Obstruction:
    """Something narrowing a sidewalk or encumbering a street, as observed and noticed.

    ``clear_width_mm`` is the narrowest unobstructed width measured (sidewalks);
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


def clear_width_finding(obstruction: Obstruction, profile: Profile) -> Finding | None:
    """§ 370-8 C: a sidewalk left narrower than 3 ft (3 ft itself is allowed: "less than")."""
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


def removal_deadline(obstruction: Obstruction, profile: Profile) -> Deadline | None:
    """§ 370-8 D/E: removal within 24 hours (elapsed) of the notice's delivery; None before it."""
    delivered = obstruction.notice_delivered_at
    if delivered is None:
        return None
    name = f"obstructions.{obstruction.area}_removal_after_notice"
    rule = (
        profile.obstructions.sidewalk_removal_after_notice
        if obstruction.area == "sidewalk"
        else profile.obstructions.street_removal_after_notice
    )
    return Deadline.of(name, delivered, plus_elapsed(delivered, rule.duration), rule)


def obstruction_state(obstruction: Obstruction, profile: Profile, at: datetime) -> ObstructionState:
    """Where the § 370-8 sequence stands at event time ``at``.

    ``overdue`` means the removal deadline passed with the obstruction still
    there: § 370-8 F has the village remove it and bill the owner.
    """
    require_aware(at)
    if obstruction.removed_at is not None and obstruction.removed_at <= at:
        return "removed"
    deadline = removal_deadline(obstruction, profile)
    if deadline is not None and deadline.start <= at:
        return "overdue" if deadline.passed(at) else "removal_period"
    if obstruction.area == "sidewalk" and clear_width_finding(obstruction, profile) is None:
        return "compliant"
    return "obstructed"


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
    """A § 370-9 permit to occupy a street or sidewalk while building or moving."""

    id: str
    issued_on: date
    earlier_termination_on: date | None = None
    temporary_walk_width_mm: float | None = None
    street_width_mm: float | None = None
    street_occupied_mm: float | None = None


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
