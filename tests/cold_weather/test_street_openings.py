"""§ 370-6 and § 370-7: frozen-ground window, emergency permits, pavement, moratorium, notices."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.permits import (
    Excavation,
    Finding,
    Repaving,
    StreetOpeningPermit,
    advisory_notices,
    cold_mix_replacement_deadline,
    in_frozen_ground_window,
    moratorium_until,
    permanent_pavement_deadline,
    permit_application_deadline,
    permit_expiry,
    repaving_determination_deadline,
    street_opening_check,
    utility_completion_deadline,
)
from sidewalk.core.profile import load_profile

CHICAGO = ZoneInfo("America/Chicago")
CLYMAN = load_profile()
EXAMPLE = load_profile(Path(__file__).resolve().parents[1] / "data" / "example_village.toml")


def at(y: int, mo: int, d: int, h: int = 9, mi: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=CHICAGO)


def well_noticed(starts_at: datetime, **changes: object) -> Excavation:
    """An opening whose every notice was given a week ahead."""
    early = starts_at - timedelta(days=7)
    fields: dict[str, object] = {
        "id": "x1",
        "segment": "main-st-100",
        "starts_at": starts_at,
        "permit": StreetOpeningPermit("p1", "main-st-100", early),
        "dpw_notified_at": early,
        "parties_notified_at": early,
    }
    fields.update(changes)
    # Ignored: a dict of mixed values cannot be typed per field.
    return Excavation(**fields)  # type: ignore[arg-type]


def rules(findings: list[Finding]) -> list[str]:
    return [f.rule for f in findings]


# -- § 370-7 A frozen ground -------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "inside"),
    [
        (date(2026, 11, 14), False),
        (date(2026, 11, 15), True),
        (date(2026, 12, 31), True),
        (date(2027, 1, 1), True),
        (date(2028, 2, 29), True),
        (date(2027, 4, 1), True),
        (date(2027, 4, 2), False),
    ],
)
def test_the_frozen_ground_window_runs_nov_15_through_apr_1(day: date, inside: bool) -> None:
    assert in_frozen_ground_window(day, CLYMAN) is inside


def test_example_village_has_its_own_window() -> None:
    assert not in_frozen_ground_window(date(2026, 11, 20), EXAMPLE)
    assert in_frozen_ground_window(date(2026, 12, 1), EXAMPLE)
    assert in_frozen_ground_window(date(2027, 3, 15), EXAMPLE)
    assert not in_frozen_ground_window(date(2027, 3, 16), EXAMPLE)
    assert in_frozen_ground_window(date(2027, 3, 16), CLYMAN)


def test_an_opening_on_nov_15_is_flagged_and_on_nov_14_it_is_not() -> None:
    inside = street_opening_check(well_noticed(at(2026, 11, 15)), CLYMAN, at(2026, 11, 20))
    assert rules(inside) == ["street_openings.frozen_ground_window"]
    assert inside[0].severity == "violation"
    assert inside[0].citation == "§ 370-7 A (inferred)"
    assert inside[0].at == at(2026, 11, 15)
    outside = street_opening_check(well_noticed(at(2026, 11, 14, 23, 59)), CLYMAN, at(2026, 11, 20))
    assert outside == []


def test_the_window_is_judged_on_the_village_date_not_the_utc_date() -> None:
    # 7 PM on Nov 14 in Clyman is already Nov 15 in UTC.
    evening = at(2026, 11, 14, 19)
    assert evening.astimezone(UTC).date() == date(2026, 11, 15)
    assert street_opening_check(well_noticed(evening), CLYMAN, evening) == []


def test_an_emergency_is_not_flagged_for_the_window() -> None:
    start = at(2027, 1, 12)
    opening = well_noticed(start, emergency=True, permit=None, permit_applied_at=start)
    assert street_opening_check(opening, CLYMAN, start + timedelta(days=10)) == []


# -- § 370-7 H emergency permit application ---------------------------------------


def test_a_friday_night_emergency_applies_by_the_end_of_monday() -> None:
    deadline = permit_application_deadline(at(2026, 12, 4, 22), CLYMAN)
    assert deadline.due == datetime(2026, 12, 8, 6, tzinfo=UTC)  # Tue 00:00 CST
    assert deadline.start == at(2026, 12, 4, 22)
    assert deadline.citation == "§ 370-7 H"
    assert deadline.unconfirmed  # the holiday list is not in the code text


def test_an_emergency_before_a_holiday_monday_applies_by_tuesday() -> None:
    deadline = permit_application_deadline(at(2026, 9, 5, 3), CLYMAN)  # Saturday before Labor Day
    assert deadline.due == datetime(2026, 9, 9, 5, tzinfo=UTC)  # Wed 00:00 CDT: all of Tuesday


def test_an_emergency_at_the_year_end_skips_the_observed_new_year() -> None:
    deadline = permit_application_deadline(at(2027, 12, 30, 16), CLYMAN)
    assert deadline.due == datetime(2028, 1, 4, 6, tzinfo=UTC)  # all of Monday, Jan 3


def test_example_village_gives_two_business_days_counting_saturday() -> None:
    thursday = at(2026, 12, 3, 10)
    clyman = permit_application_deadline(thursday, CLYMAN)
    example = permit_application_deadline(thursday, EXAMPLE)
    assert clyman.due == datetime(2026, 12, 5, 6, tzinfo=UTC)  # end of Friday
    assert example.due == datetime(2026, 12, 6, 6, tzinfo=UTC)  # end of Saturday
    assert not example.unconfirmed


def test_a_late_or_missing_emergency_application_is_flagged() -> None:
    start = at(2026, 12, 4, 22)
    due = permit_application_deadline(start, CLYMAN).due
    on_time = well_noticed(
        start, emergency=True, permit=None, permit_applied_at=due - timedelta(minutes=1)
    )
    late = well_noticed(start, emergency=True, permit=None, permit_applied_at=due)
    missing = well_noticed(start, emergency=True, permit=None)
    assert street_opening_check(on_time, CLYMAN, due + timedelta(days=1)) == []
    assert rules(street_opening_check(late, CLYMAN, due)) == [
        "street_openings.emergency_permit_application"
    ]
    assert street_opening_check(missing, CLYMAN, due - timedelta(seconds=1)) == []
    [finding] = street_opening_check(missing, CLYMAN, due)
    assert finding.at == due
    assert finding.unconfirmed


# -- § 370-7G pavement --------------------------------------------------------------


def test_cold_mix_is_replaced_by_the_end_of_the_following_june_1() -> None:
    for placed in (at(2026, 12, 20), at(2027, 1, 10), at(2027, 3, 31)):
        deadline = cold_mix_replacement_deadline(placed, CLYMAN)
        assert deadline.due == datetime(2027, 6, 2, 5, tzinfo=UTC)  # 00:00 CDT, June 2
        assert deadline.start == placed
    assert cold_mix_replacement_deadline(at(2027, 1, 10), EXAMPLE).due == datetime(
        2027, 5, 16, 5, tzinfo=UTC
    )


def test_permanent_pavement_counts_60_calendar_days_across_leap_day() -> None:
    leap = permanent_pavement_deadline(StreetOpeningPermit("p", "s", at(2028, 1, 1)), CLYMAN)
    common = permanent_pavement_deadline(StreetOpeningPermit("p", "s", at(2027, 1, 1)), CLYMAN)
    assert leap.due == datetime(2028, 3, 2, 6, tzinfo=UTC)  # through Mar 1, 2028
    assert common.due == datetime(2027, 3, 3, 6, tzinfo=UTC)  # through Mar 2, 2027
    assert permanent_pavement_deadline(
        StreetOpeningPermit("p", "s", at(2027, 1, 1)), EXAMPLE
    ).due == datetime(2027, 4, 2, 5, tzinfo=UTC)


# -- § 370-6 permit validity ----------------------------------------------------------


def test_a_permit_runs_30_days_from_approval_across_the_fall_change() -> None:
    permit = StreetOpeningPermit("p", "s", at(2026, 10, 10, 14))
    expiry = permit_expiry(permit, CLYMAN)
    assert expiry.due == datetime(2026, 11, 10, 6, tzinfo=UTC)  # end of Nov 9, CST
    assert expiry.start == permit.approved_at
    assert permit_expiry(permit, EXAMPLE).due == datetime(2026, 11, 25, 6, tzinfo=UTC)


def test_a_permit_across_the_spring_change_ends_at_local_midnight() -> None:
    expiry = permit_expiry(StreetOpeningPermit("p", "s", at(2026, 3, 1, 10)), CLYMAN)
    assert expiry.due == datetime(2026, 4, 1, 5, tzinfo=UTC)  # end of Mar 31, CDT


def test_a_renewal_adds_its_days_and_its_citation_and_note() -> None:
    renewed = permit_expiry(StreetOpeningPermit("p", "s", at(2026, 10, 10), renewals=1), CLYMAN)
    assert renewed.due == datetime(2026, 12, 10, 6, tzinfo=UTC)  # end of Dec 9
    assert renewed.citation == "§ 370-6 D (inferred); § 370-6 E (inferred)"
    assert any("renewal" in note for note in renewed.notes)


def test_opening_after_the_permit_expired_is_flagged() -> None:
    permit = StreetOpeningPermit("p1", "main-st-100", at(2026, 6, 1))
    expired = well_noticed(at(2026, 7, 2, 8), permit=permit)
    assert rules(street_opening_check(expired, CLYMAN, at(2026, 7, 2))) == [
        "permits.opening_permit_validity"
    ]
    last_day = well_noticed(at(2026, 7, 1, 23, 59), permit=permit)
    assert street_opening_check(last_day, CLYMAN, at(2026, 7, 2)) == []


# -- § 370-7 I repaving ---------------------------------------------------------------


def test_a_moratorium_from_leap_day_ends_on_feb_28() -> None:
    lifted = moratorium_until(Repaving("main-st-100", date(2028, 2, 29)), CLYMAN)
    assert lifted.due == datetime(2033, 3, 1, 6, tzinfo=UTC)  # after all of Feb 28, 2033
    example = moratorium_until(Repaving("main-st-100", date(2028, 2, 29)), EXAMPLE)
    assert example.due == datetime(2031, 3, 1, 6, tzinfo=UTC)


def test_openings_inside_a_moratorium_are_flagged_unless_found_essential() -> None:
    repaved = [Repaving("main-st-100", date(2026, 7, 15)), Repaving("elm-st-200", date(2020, 1, 1))]
    start = at(2029, 6, 1)
    found = street_opening_check(well_noticed(start), CLYMAN, start, repaved)
    assert rules(found) == ["street_openings.repaving_moratorium"]
    assert found[0].severity == "violation"
    emergency = well_noticed(start, emergency=True, permit_applied_at=start)
    assert [f.severity for f in street_opening_check(emergency, CLYMAN, start, repaved)] == [
        "advisory"
    ]
    essential = well_noticed(start, board_found_essential=True)
    assert street_opening_check(essential, CLYMAN, start, repaved) == []
    other = well_noticed(start, segment="oak-st-300")
    assert street_opening_check(other, CLYMAN, start, repaved) == []
    after = well_noticed(at(2031, 7, 16, 8))
    assert street_opening_check(after, CLYMAN, after.starts_at, repaved) == []
    last_day = well_noticed(at(2031, 7, 15, 16))
    assert rules(street_opening_check(last_day, CLYMAN, last_day.starts_at, repaved)) == [
        "street_openings.repaving_moratorium"
    ]


def test_utilities_finish_within_30_days_and_the_board_decides_30_days_ahead() -> None:
    notified = at(2026, 12, 15, 11)
    assert utility_completion_deadline(notified, CLYMAN).due == datetime(2027, 1, 15, 6, tzinfo=UTC)
    determination = repaving_determination_deadline(date(2027, 5, 3), CLYMAN)
    assert determination.due == datetime(2027, 4, 4, 5, tzinfo=UTC)  # through Apr 3


# -- § 370-7 B, F advisory notices ------------------------------------------------------


def test_the_dpw_notice_is_24_real_hours_before_even_across_the_fall_change() -> None:
    start = at(2026, 11, 1, 10)  # Sunday, CST; 24 h earlier was CDT
    [dpw, parties] = advisory_notices(well_noticed(start), CLYMAN)
    assert dpw.rule == "street_openings.dpw_notice_before_excavation"
    assert start - dpw.due == timedelta(hours=24)
    assert dpw.due.astimezone(CHICAGO).hour == 11  # 11 AM CDT on Saturday
    assert dpw.start == start
    assert parties.due == datetime(2026, 10, 31, 5, tzinfo=UTC)  # end of Friday Oct 30


def test_one_business_day_notice_before_a_tuesday_after_labor_day_is_due_friday() -> None:
    notices = advisory_notices(well_noticed(at(2026, 9, 8, 7)), CLYMAN)
    parties = next(n for n in notices if n.rule == "street_openings.affected_parties_notice")
    assert parties.due == datetime(2026, 9, 5, 5, tzinfo=UTC)  # end of Fri Sep 4
    assert parties.unconfirmed


def test_backfill_and_utility_loss_notices_and_the_emergency_exemptions() -> None:
    start = at(2026, 8, 10, 8)
    opening = well_noticed(
        start, backfill_at=at(2026, 8, 11, 13), utility_loss_at=at(2026, 8, 10, 9)
    )
    due = {n.rule: n.due for n in advisory_notices(opening, CLYMAN)}
    assert due["street_openings.backfill_notice"] == at(2026, 8, 11, 9)
    assert due["street_openings.utility_loss_notice"] == at(2026, 8, 9, 21)
    emergency = {n.rule for n in advisory_notices(well_noticed(start, emergency=True), CLYMAN)}
    assert emergency == {"street_openings.affected_parties_notice"}
    example = {n.rule: n.due for n in advisory_notices(opening, EXAMPLE)}
    assert example["street_openings.backfill_notice"] == at(2026, 8, 11, 5)


def test_late_and_missing_notices_are_advisory_findings() -> None:
    start = at(2026, 8, 10, 8)
    late_dpw = well_noticed(start, dpw_notified_at=start - timedelta(hours=23))
    [finding] = street_opening_check(late_dpw, CLYMAN, start)
    assert (finding.rule, finding.severity) == (
        "street_openings.dpw_notice_before_excavation",
        "advisory",
    )
    assert "late" in finding.message
    no_backfill_notice = well_noticed(start, backfill_at=at(2026, 8, 11, 13))
    assert street_opening_check(no_backfill_notice, CLYMAN, at(2026, 8, 11, 8, 59)) == []
    assert rules(street_opening_check(no_backfill_notice, CLYMAN, at(2026, 8, 11, 9))) == [
        "street_openings.backfill_notice"
    ]
