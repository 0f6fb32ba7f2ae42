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
from datetime import date, datetime, timedelta
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
from sidewalk.core.clock import format_local
from sidewalk.core.profile import DateWindowRule, Profile, Rule

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

    The work's dates as the clerk enters them (§ 370-7 G, I): when a temporary
    cold-mix surface was placed, when the permanent pavement was replaced, when
    the Clerk-Treasurer notified the permittee of a repaving determination, and
    when its excavation work in that street was completed. ``pavement_removed``
    is false for an opening that took up no pavement (G does not apply).
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
    pavement_removed: bool = True
    cold_mix_on: date | None = None
    permanent_pavement_on: date | None = None
    repaving_notice_on: date | None = None
    work_completed_on: date | None = None


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


_NOTICE_WORDS = {
    "street_openings.dpw_notice_before_excavation": (
        "The notice to the Director of Public Works of the excavation's location and extent"
    ),
    "street_openings.affected_parties_notice": (
        "The notice to everyone affected by the work, a business day before it begins,"
    ),
    "street_openings.backfill_notice": (
        "The notice to the Village Clerk-Treasurer or Director of Public Works before backfilling"
    ),
    "street_openings.utility_loss_notice": (
        "The notice to the private properties before their utility service is lost"
    ),
}

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
    each § 370-7 G, H, I deadline met late or, once due, not met (``work_check``); an opening
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
                f"{excavation.segment} was opened on {day_words(day)}, inside the "
                f"frozen-ground period {_window_words(window)} when no openings are permitted "
                f"({window.citation}), and it is not on record as determined an emergency.",
                excavation.starts_at,
                window,
            )
        )
    if excavation.permit is not None:
        expiry = permit_expiry(excavation.permit, profile)
        if expiry.passed(excavation.starts_at):
            findings.append(
                Finding.missed(
                    expiry,
                    "violation",
                    f"{excavation.segment} was opened on "
                    f"{format_local(excavation.starts_at, profile.zone)}, after permit "
                    f"{excavation.permit.id} expired at the end of {_last_day(expiry, profile)} "
                    f"({expiry.citation}).",
                    excavation.starts_at,
                )
            )
    findings += _moratorium(excavation, profile, repavings)
    findings += work_check(excavation, profile, at)
    for notice in advisory_notices(excavation, profile):
        given: datetime | None = getattr(excavation, _NOTICE_GIVEN[notice.rule])
        late = given is not None and given > notice.due
        if late or (given is None and notice.passed(at)):
            shown = (
                f"it was given late, on {format_local(given, profile.zone)}"
                if given is not None
                else "it is not on record"
            )
            # A business-day notice is due by the end of a day; an hours notice at an instant.
            by = (
                f"the end of {_last_day(notice, profile)}"
                if notice.rule == "street_openings.affected_parties_notice"
                else format_local(notice.due, profile.zone)
            )
            message = f"{_NOTICE_WORDS[notice.rule]} was due by {by} ({notice.citation}); {shown}."
            # A late notice is found at its giving; a missing one at its due time.
            findings.append(Finding.missed(notice, "advisory", message, given or notice.due))
    return findings


def work_deadlines(excavation: Excavation, profile: Profile) -> list[Deadline]:
    """§ 370-7 G, H, I: the deadlines this opening's work runs against.

    H: an emergency's permit application by the end of the next business day.
    G: a temporary cold-mix surface replaced by the following June 1; otherwise
    the permanent pavement replaced within 60 days of the date of the permit
    (read as applying where no cold mix was placed: with cold mix in winter the
    June 1 date governs, or the winter rule could never be met). I: after the
    Clerk-Treasurer's notice of a repaving determination, the excavation work in
    that street completed within 30 days.
    """
    zone = profile.zone
    out: list[Deadline] = []
    if excavation.emergency:
        out.append(permit_application_deadline(excavation.starts_at, profile))
    if excavation.cold_mix_on is not None:
        out.append(
            cold_mix_replacement_deadline(start_of_day(excavation.cold_mix_on, zone), profile)
        )
    elif excavation.permit is not None and excavation.pavement_removed:
        out.append(permanent_pavement_deadline(excavation.permit, profile))
    if excavation.repaving_notice_on is not None:
        notified = start_of_day(excavation.repaving_notice_on, zone)
        out.append(utility_completion_deadline(notified, profile))
    return out


def done_at(excavation: Excavation, rule: str, profile: Profile) -> datetime | None:
    """When the thing a work deadline asks for was done, as entered; ``None``: not on record.

    A date entered (pavement, completion) counts from the start of that day, so
    work done on the last day is in time.
    """
    if rule == "street_openings.emergency_permit_application":
        return excavation.permit_applied_at
    done = {
        "street_openings.cold_mix_replacement_by": excavation.permanent_pavement_on,
        "street_openings.permanent_pavement_within": excavation.permanent_pavement_on,
        "street_openings.utility_completion": excavation.work_completed_on,
    }[rule]
    return None if done is None else start_of_day(done, profile.zone)


def _amount(rule: Rule) -> str:
    """``60 calendar days``, ``5 years``: a rule's value as a sentence states it."""
    return f"{rule.value.normalize():f} {rule.unit.replace('_', ' ')}"


def _window_words(rule: DateWindowRule) -> str:
    """``November 15 – April 1``: a yearly window without its citation."""
    first, last = (m.in_year(2001) for m in (rule.window.start, rule.window.end))
    return f"{first:%B} {first.day} – {last:%B} {last.day}"


def day_words(day: date) -> str:
    """``Monday, December 7, 2026``: how a finding names a day."""
    return f"{day:%A, %B} {day.day}, {day.year}"


def _last_day(deadline: Deadline, profile: Profile) -> str:
    """The last whole day a deadline allows, in words (``due`` is the midnight after it)."""
    return day_words(local_date(deadline.due - timedelta(microseconds=1), profile.zone))


def _work_message(excavation: Excavation, deadline: Deadline, done: datetime | None,
                  profile: Profile) -> str:  # fmt: skip
    """The finding's sentence: what was due, by when, and what the record shows."""
    zone, rules = profile.zone, profile.street_openings
    by = _last_day(deadline, profile)
    opened = day_words(local_date(excavation.starts_at, zone))
    if deadline.rule == "street_openings.emergency_permit_application":
        what = (
            f"The emergency opening of {excavation.segment} on {opened} needed its "
            f"excavation permit applied for by the end of the next business day, {by}"
        )
        shown = (
            "no application is on record"
            if done is None
            else (f"it was applied for on {format_local(done, zone)}")
        )
    elif deadline.rule == "street_openings.cold_mix_replacement_by":
        placed = day_words(local_date(deadline.start, zone))
        what = (
            f"The temporary cold-mix surface placed on {placed} in {excavation.segment} "
            f"had to be replaced with permanent pavement by {by}"
        )
        shown = (
            "no permanent pavement is on record"
            if done is None
            else (f"it was replaced on {day_words(local_date(done, zone))}")
        )
    elif deadline.rule == "street_openings.permanent_pavement_within":
        issued = day_words(local_date(deadline.start, zone))
        what = (
            f"The permanent pavement over the opening of {excavation.segment} had to be "
            f"replaced within {_amount(rules.permanent_pavement_within)} of the permit's "
            f"date, {issued}, that is by {by}"
        )
        shown = (
            "no permanent pavement is on record"
            if done is None
            else (f"it was replaced on {day_words(local_date(done, zone))}")
        )
    else:
        notified = day_words(local_date(deadline.start, zone))
        what = (
            f"After the Village's notice of {notified} that {excavation.segment} is to be "
            f"repaved, the excavation work in it had to be completed within "
            f"{_amount(rules.utility_completion)}, that is by {by}"
        )
        shown = (
            "no completion is on record"
            if done is None
            else (f"it was completed on {day_words(local_date(done, zone))}")
        )
    return f"{what} ({deadline.citation}); {shown}."


def work_check(excavation: Excavation, profile: Profile, at: datetime) -> list[Finding]:
    """§ 370-7 G, H, I as known at event time ``at``: each deadline met late, or passed
    with nothing on record. A late entry is found at the time it was done; a missing
    one at the deadline (so a later late entry is a finding of its own)."""
    findings: list[Finding] = []
    for deadline in work_deadlines(excavation, profile):
        done = done_at(excavation, deadline.rule, profile)
        if done is not None and done < deadline.due:
            continue
        if done is None and not deadline.passed(at):
            continue
        when = deadline.due if done is None else done
        message = _work_message(excavation, deadline, done, profile)
        findings.append(Finding.missed(deadline, "violation", message, when))
    return findings


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
                f"{repaving.segment} was repaved on {day_words(repaving.completed_on)}: no "
                f"opening is to be permitted in it for "
                f"{_amount(profile.street_openings.repaving_moratorium)}, through "
                f"{_last_day(lifted, profile)} ({lifted.citation}), unless the Village Board "
                f"or its designee finds it absolutely essential; it was opened on "
                f"{day_words(local_date(excavation.starts_at, profile.zone))}."
            )
            findings.append(Finding.missed(lifted, severity, message, excavation.starts_at))
    return findings
