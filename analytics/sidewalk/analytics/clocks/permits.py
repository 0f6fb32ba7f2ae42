"""Street openings: § 370-6 permits and the § 370-7 clocks. Pure, event-time.

Permits, excavations and repavings are records staff enter; these functions
compute their windows and deadlines from the ordinance profile and say which
rule (with its citation and any unconfirmed mark) each answer comes from.

Day counts follow the general Wisconsin way of computing time: the day of the
event is not counted and the last day is counted whole, so "30 days from the
date of approval" of a permit approved March 3 runs to the end of April 2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from sidewalk.core.calendar import (
    CitedRule,
    Deadline,
    add_calendar_days,
    add_months,
    end_of_day,
    local_date,
    plus_elapsed,
    start_of_day,
)
from sidewalk.core.profile import Profile

Severity = Literal["violation", "advisory", "unknown"]


@dataclass(frozen=True)
class Finding:
    """One rule checked against a record: what is wrong (or uncertain), and the rule behind it.

    ``at`` is the event time the finding is about (the opening, the pour, the
    deadline that passed), never the time the check ran.
    """

    rule: str
    citation: str | None
    severity: Severity
    message: str
    at: datetime
    unconfirmed: bool = False
    notes: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        rule: str,
        severity: Severity,
        message: str,
        at: datetime,
        *sources: CitedRule,
        notes: tuple[str, ...] = (),
    ) -> Finding:
        """A finding citing every profile value it was decided with."""
        citations = list(dict.fromkeys(s.citation for s in sources if s.citation))
        return cls(
            rule=rule,
            citation="; ".join(citations) or None,
            severity=severity,
            message=message,
            at=at,
            unconfirmed=any(s.unconfirmed for s in sources),
            notes=tuple(dict.fromkeys([*(s.note for s in sources if s.note), *notes])),
        )

    @classmethod
    def missed(cls, deadline: Deadline, severity: Severity, message: str, at: datetime) -> Finding:
        """A finding about a deadline, carrying the deadline's citation and marks."""
        return cls(
            deadline.rule,
            deadline.citation,
            severity,
            message,
            at,
            deadline.unconfirmed,
            deadline.notes,
        )


@dataclass(frozen=True)
class StreetOpeningPermit:
    """A § 370-6 permit as entered by staff; ``approved_at`` fixes its "date of approval"."""

    id: str
    segment: str
    approved_at: datetime
    renewals: int = 0
    frontage: str | None = None  # the frontage whose case records carry it, if staff named one


@dataclass(frozen=True)
class Excavation:
    """An opening in a street, alley, sidewalk or public way, with the notices given for it.

    ``emergency`` records the Village Board's (or its designee's) determination
    that this is an emergency excavation (§ 370-7 A, H). Notice times are when
    each notice was given; ``None`` means none is on record.
    """

    id: str
    segment: str
    starts_at: datetime
    emergency: bool = False
    permit: StreetOpeningPermit | None = None
    permit_applied_at: datetime | None = None
    dpw_notified_at: datetime | None = None
    parties_notified_at: datetime | None = None
    backfill_at: datetime | None = None
    backfill_notified_at: datetime | None = None
    utility_loss_at: datetime | None = None
    utility_loss_notified_at: datetime | None = None
    board_found_essential: bool = False


@dataclass(frozen=True)
class Repaving:
    """A street segment permanently improved or repaved (§ 370-7 I), on its completion date."""

    segment: str
    completed_on: date


def in_frozen_ground_window(day: date, profile: Profile) -> bool:
    """§ 370-7 A: whether openings are barred on this local date (both window ends included)."""
    return profile.street_openings.frozen_ground_window.window.contains(day)


def permit_application_deadline(emergency_at: datetime, profile: Profile) -> Deadline:
    """§ 370-7 H: an emergency's permit application, by the end of the next business day."""
    rule = profile.street_openings.emergency_permit_application
    day = local_date(emergency_at, profile.zone)
    last = profile.business_calendar.add_business_days(day, rule.days)
    return Deadline.of(
        "street_openings.emergency_permit_application",
        emergency_at,
        end_of_day(last, profile.zone),
        rule,
        profile.calendar,
    )


def cold_mix_replacement_deadline(placed_at: datetime, profile: Profile) -> Deadline:
    """§ 370-7G: winter cold mix replaced by the end of the following June 1."""
    rule = profile.street_openings.cold_mix_replacement_by
    last = rule.month_day.following(local_date(placed_at, profile.zone))
    return Deadline.of(
        "street_openings.cold_mix_replacement_by", placed_at, end_of_day(last, profile.zone), rule
    )


def permanent_pavement_deadline(permit: StreetOpeningPermit, profile: Profile) -> Deadline:
    """§ 370-7G: permanent pavement replaced within 60 calendar days of the date of the permit."""
    rule = profile.street_openings.permanent_pavement_within
    last = add_calendar_days(local_date(permit.approved_at, profile.zone), rule.days)
    return Deadline.of(
        "street_openings.permanent_pavement_within",
        permit.approved_at,
        end_of_day(last, profile.zone),
        rule,
    )


def permit_expiry(permit: StreetOpeningPermit, profile: Profile) -> Deadline:
    """§ 370-6: valid 30 calendar days from the date of approval, plus 30 days per renewal.

    A renewal runs on from the end of the period it renews (the text does not
    say; the profile's note on ``opening_permit_renewal`` records this reading).
    """
    validity = profile.permits.opening_permit_validity
    renewal = profile.permits.opening_permit_renewal
    days = validity.days + permit.renewals * renewal.days
    last = add_calendar_days(local_date(permit.approved_at, profile.zone), days)
    sources: tuple[CitedRule, ...] = (validity, renewal) if permit.renewals else (validity,)
    return Deadline.of(
        "permits.opening_permit_validity",
        permit.approved_at,
        end_of_day(last, profile.zone),
        *sources,
    )


def moratorium_until(repaving: Repaving, profile: Profile) -> Deadline:
    """§ 370-7 I: no openings for five years after the repaving date; ``due`` is when it lifts."""
    rule = profile.street_openings.repaving_moratorium
    last = add_months(repaving.completed_on, rule.months)
    return Deadline.of(
        "street_openings.repaving_moratorium",
        start_of_day(repaving.completed_on, profile.zone),
        end_of_day(last, profile.zone),
        rule,
    )


def utility_completion_deadline(notified_at: datetime, profile: Profile) -> Deadline:
    """§ 370-7 I: utilities notified of a repaving finish their excavation within 30 days."""
    rule = profile.street_openings.utility_completion
    last = add_calendar_days(local_date(notified_at, profile.zone), rule.days)
    return Deadline.of(
        "street_openings.utility_completion", notified_at, end_of_day(last, profile.zone), rule
    )


def repaving_determination_deadline(work_begins_on: date, profile: Profile) -> Deadline:
    """§ 370-7 I: the Board's repaving determination, not less than 30 days before work begins."""
    rule = profile.street_openings.repaving_determination_lead
    last = add_calendar_days(work_begins_on, -rule.days)
    return Deadline.of(
        "street_openings.repaving_determination_lead",
        start_of_day(work_begins_on, profile.zone),
        end_of_day(last, profile.zone),
        rule,
    )


def advisory_notices(excavation: Excavation, profile: Profile) -> list[Deadline]:
    """§ 370-7 B and F: the latest time each notice may be given for this excavation.

    For these clocks ``start`` is the planned event the notice must precede
    (excavation, backfilling, loss of service) and ``due`` the last moment to
    give it. Hour rules are real elapsed time; the one-business-day notice is
    due by the end of the business day before the work's local date. The DPW
    and loss-of-service notices do not apply to emergency excavations.
    """
    rules = profile.street_openings
    zone = profile.zone
    notices: list[Deadline] = []
    if not excavation.emergency:
        rule = rules.dpw_notice_before_excavation
        notices.append(
            Deadline.of(
                "street_openings.dpw_notice_before_excavation",
                excavation.starts_at,
                plus_elapsed(excavation.starts_at, -rule.duration),
                rule,
            )
        )
    parties = rules.affected_parties_notice
    day = local_date(excavation.starts_at, zone)
    for _ in range(parties.days):
        day = profile.business_calendar.previous_business_day(day)
    notices.append(
        Deadline.of(
            "street_openings.affected_parties_notice",
            excavation.starts_at,
            end_of_day(day, zone),
            parties,
            profile.calendar,
        )
    )
    if excavation.backfill_at is not None:
        rule = rules.backfill_notice
        notices.append(
            Deadline.of(
                "street_openings.backfill_notice",
                excavation.backfill_at,
                plus_elapsed(excavation.backfill_at, -rule.duration),
                rule,
            )
        )
    if excavation.utility_loss_at is not None and not excavation.emergency:
        rule = rules.utility_loss_notice
        notices.append(
            Deadline.of(
                "street_openings.utility_loss_notice",
                excavation.utility_loss_at,
                plus_elapsed(excavation.utility_loss_at, -rule.duration),
                rule,
            )
        )
    return notices


_NOTICE_GIVEN = {
    "street_openings.dpw_notice_before_excavation": "dpw_notified_at",
    "street_openings.affected_parties_notice": "parties_notified_at",
    "street_openings.backfill_notice": "backfill_notified_at",
    "street_openings.utility_loss_notice": "utility_loss_notified_at",
}


def street_opening_check(
    excavation: Excavation,
    profile: Profile,
    at: datetime,
    repavings: Iterable[Repaving] = (),
) -> list[Finding]:
    """Everything §§ 370-6 and 370-7 say about one excavation, as known at event time ``at``.

    Flags an opening inside the frozen-ground window unless it is an emergency;
    an emergency's late (or, once due, missing) permit application; an opening
    after its permit expired; an opening inside a repaving moratorium unless
    the Board found it absolutely essential; and each advisory notice given
    late or, once due, not at all.
    """
    rules = profile.street_openings
    findings: list[Finding] = []
    day = local_date(excavation.starts_at, profile.zone)
    window = rules.frozen_ground_window
    if window.window.contains(day) and not excavation.emergency:
        findings.append(
            Finding.of(
                "street_openings.frozen_ground_window",
                "violation",
                f"opening on {day.isoformat()} inside the frozen-ground window "
                f"{window.start}..{window.end} and not determined an emergency",
                excavation.starts_at,
                window,
            )
        )
    if excavation.emergency:
        findings += _emergency_application(excavation, profile, at)
    if excavation.permit is not None:
        expiry = permit_expiry(excavation.permit, profile)
        if expiry.passed(excavation.starts_at):
            findings.append(
                Finding.missed(
                    expiry,
                    "violation",
                    f"opening after permit {excavation.permit.id} expired "
                    f"at {expiry.due.isoformat()}",
                    excavation.starts_at,
                )
            )
    findings += _moratorium(excavation, profile, repavings)
    for notice in advisory_notices(excavation, profile):
        given: datetime | None = getattr(excavation, _NOTICE_GIVEN[notice.rule])
        late = given is not None and given > notice.due
        if late or (given is None and notice.passed(at)):
            what = "given late" if late else "not on record"
            findings.append(
                Finding.missed(
                    notice,
                    "advisory",
                    f"notice {what}: due by {notice.due.isoformat()}",
                    notice.due,
                )
            )
    return findings


def _emergency_application(excavation: Excavation, profile: Profile, at: datetime) -> list[Finding]:
    deadline = permit_application_deadline(excavation.starts_at, profile)
    applied = excavation.permit_applied_at
    if applied is not None and applied < deadline.due:
        return []
    if applied is None and not deadline.passed(at):
        return []
    what = "made late" if applied is not None else "not made"
    message = f"emergency permit application {what}: due by {deadline.due.isoformat()}"
    return [Finding.missed(deadline, "violation", message, deadline.due)]


def _moratorium(
    excavation: Excavation, profile: Profile, repavings: Iterable[Repaving]
) -> list[Finding]:
    if excavation.board_found_essential:
        return []
    findings: list[Finding] = []
    for repaving in repavings:
        if repaving.segment != excavation.segment:
            continue
        lifted = moratorium_until(repaving, profile)
        began = end_of_day(repaving.completed_on, profile.zone)
        if began <= excavation.starts_at < lifted.due:
            # An emergency is no exemption by itself; the Board must find it essential.
            severity: Severity = "advisory" if excavation.emergency else "violation"
            message = (
                f"opening in {repaving.segment}, repaved {repaving.completed_on.isoformat()}, "
                f"before the moratorium lifts at {lifted.due.isoformat()}"
            )
            findings.append(Finding.missed(lifted, severity, message, excavation.starts_at))
    return findings
