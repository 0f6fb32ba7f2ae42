"""§ 370-9 street privilege permits and § 370-8 street obstructions, run by the engine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import (
    AbatementOrdered,
    Event,
    RuleFinding,
    StreetCase,
    Transition,
)
from sidewalk.analytics.clocks.obstructions import OBSTRUCTION, PRIVILEGE
from sidewalk.core.profile import Profile, load_profile
from tests.clocks.live import EXAMPLE_PROFILE

CLYMAN = load_profile()
EXAMPLE = load_profile(EXAMPLE_PROFILE)
FRONTAGE = "main-st-101"
WHO = "Pat Inspector"


def engine(profile: Profile = CLYMAN) -> ClockEngine:
    return ClockEngine(profile, [FrontageSpec(FRONTAGE, "pole-1")])


def act(e: ClockEngine, kind: str, target: str, at: datetime, /, **detail: Any) -> list[Event]:
    return e.act(parse_action(kind, target, detail, at=at, who=WHO))


def issue(e: ClockEngine, permit: str, issued_on: str, **detail: Any) -> list[Event]:
    base = {"frontage": FRONTAGE, "issued_on": issued_on, "holder": "Acme Builders",
            "location": "110 Main St", "placed": "a dumpster"}  # fmt: skip
    return act(e, "record_street_privilege", permit, datetime(2026, 11, 30, tzinfo=UTC),
               **{**base, **detail})  # fmt: skip


def transitions(events: list[Event], clock: str) -> list[Transition]:
    return [t for t in events if isinstance(t, Transition) and t.clock == clock]


def test_a_permit_issued_nov_30_terminates_at_the_end_of_feb_28() -> None:
    e = engine()
    [valid] = transitions(issue(e, "SP-1", "2026-11-30"), PRIVILEGE)
    start = datetime(2026, 11, 30, 6, tzinfo=UTC)  # local midnight, CST
    end = datetime(2027, 3, 1, 6, tzinfo=UTC)  # the end of Feb 28, CST
    assert (valid.from_state, valid.to_state, valid.at) == ("none", "valid", start)
    assert valid.detail["until"] == end.isoformat()
    assert (valid.detail["holder"], valid.detail["placed"]) == ("Acme Builders", "a dumpster")
    assert e.next_due() == end
    assert e.advance(end - timedelta(seconds=1)) == []
    [expired] = transitions(e.advance(end), PRIVILEGE)
    assert (expired.to_state, expired.at, expired.cause.kind) == ("expired", end, "deadline")
    assert expired.detail["cause"] == "terminated: 3 months (§ 370-9 E (inferred)) from issue"
    assert e.next_due() is None


def test_example_village_runs_six_months_and_an_earlier_date_wins() -> None:
    e = engine(EXAMPLE)
    [valid] = transitions(issue(e, "SP-2", "2026-11-30"), PRIVILEGE)
    assert valid.detail["until"] == datetime(2027, 5, 31, 5, tzinfo=UTC).isoformat()  # CDT
    [short] = transitions(issue(e, "SP-3", "2026-11-30", earlier_termination_on="2026-12-15"),
                          PRIVILEGE)  # fmt: skip
    end = datetime(2026, 12, 16, 6, tzinfo=UTC)
    assert short.detail["until"] == end.isoformat()
    [expired] = transitions(e.advance(end + timedelta(hours=1)), PRIVILEGE)
    assert expired.frontage == "SP-3"
    assert expired.detail["cause"] == "terminated: the earlier termination date on the permit"


def test_conditions_are_checked_at_issue_and_when_inspected() -> None:
    e = engine(EXAMPLE)  # 5-ft temporary walks, at most 1/4 of the street
    events = issue(e, "SP-4", "2026-11-30", temporary_walk_width_mm=1300.0,
                   street_width_mm=10000.0, street_occupied_mm=2000.0)  # fmt: skip
    [walk] = [f for f in events if isinstance(f, RuleFinding)]
    assert (walk.rule, walk.subject) == (
        "obstructions.temporary_walk_min_width",
        "street_privilege:SP-4",
    )
    seen = datetime(2026, 12, 10, 15, tzinfo=UTC)
    later = act(e, "street_privilege_inspected", "SP-4", seen, present=True,
                temporary_walk_width_mm=1600.0, street_occupied_mm=3000.0)  # fmt: skip
    [street] = [f for f in later if isinstance(f, RuleFinding)]
    assert (street.rule, street.at) == ("obstructions.privilege_max_street", seen)


def test_material_left_after_termination_is_a_finding_and_an_obstruction_case() -> None:
    e = engine()
    issue(e, "SP-5", "2026-11-30")
    end = datetime(2027, 3, 1, 6, tzinfo=UTC)
    e.advance(end + timedelta(hours=1))
    seen = end + timedelta(days=2)
    events = act(e, "street_privilege_inspected", "SP-5", seen, present=True)
    [finding] = [f for f in events if isinstance(f, RuleFinding)
                 and f.subject == "street_privilege:SP-5"]  # fmt: skip
    assert (finding.rule, finding.severity, finding.at) == (
        "permits.street_privilege_term", "violation", seen,
    )  # fmt: skip
    assert "a dumpster still at 110 Main St" in finding.message
    [case] = [c for c in events if isinstance(c, StreetCase)]
    assert (case.key, case.frontage) == ("obstruction:SP-5", FRONTAGE)
    [opened] = transitions(events, OBSTRUCTION)
    assert (opened.to_state, opened.detail["area"]) == ("obstructed", "street")
    delivered = seen + timedelta(hours=1)
    [running] = act(e, "obstruction_notice_delivered", "SP-5", delivered)
    assert isinstance(running, Transition)
    assert running.detail["until"] == (delivered + timedelta(hours=24)).isoformat()
    due = e.advance(delivered + timedelta(hours=25))
    assert [type(x) for x in due] == [Transition, AbatementOrdered]
    with pytest.raises(ValueError, match="inspected already"):
        act(e, "street_privilege_inspected", "SP-5", seen + timedelta(days=1), present=False)


def test_an_area_vacated_after_termination_is_no_case() -> None:
    e = engine()
    issue(e, "SP-6", "2026-11-30")
    e.advance(datetime(2027, 3, 2, tzinfo=UTC))
    assert act(e, "street_privilege_inspected", "SP-6", datetime(2027, 3, 2, tzinfo=UTC),
               present=False) == []  # fmt: skip
    assert "SP-6" not in e.street.obstructions


def test_a_street_obstruction_needs_no_width_and_runs_the_street_removal_period() -> None:
    for profile, hours in ((CLYMAN, 24), (EXAMPLE, 12)):
        e = engine(profile)
        seen = datetime(2026, 12, 2, 15, tzinfo=UTC)
        events = act(e, "record_obstruction", "OB-9", seen, frontage=FRONTAGE, area="street",
                     kind="other", location="Main St at Elm",
                     description="pallets in the lane")  # fmt: skip
        [finding] = [f for f in events if isinstance(f, RuleFinding)]
        assert finding.rule == "obstructions.street_removal_after_notice"
        assert finding.citation == profile.obstructions.street_removal_after_notice.citation
        assert any(isinstance(c, StreetCase) for c in events)
        [running] = act(e, "obstruction_notice_delivered", "OB-9", seen)
        assert isinstance(running, Transition)
        assert running.detail["until"] == (seen + timedelta(hours=hours)).isoformat()
        assert running.detail["rule"] == "obstructions.street_removal_after_notice"


def test_a_snapshot_restores_the_privilege_clocks() -> None:
    e = engine()
    issue(e, "SP-7", "2026-11-30")
    fresh = engine()
    fresh.restore(e.snapshot())
    end = datetime(2027, 3, 1, 6, tzinfo=UTC)
    assert fresh.next_due() == end
    assert transitions(fresh.advance(end), PRIVILEGE) == transitions(e.advance(end), PRIVILEGE)
