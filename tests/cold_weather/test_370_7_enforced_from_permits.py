"""§ 370-7 G, H and I enforced in operation: the permit entry's dates, judged by the engine.

Each case runs the real ``ClockEngine`` on the ``record_permit`` actions a clerk
enters (first the permit, later the work's dates on the same permit), and
advances event time through the deadlines, as the runner does.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import Event, RuleFinding
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE

CHICAGO = ZoneInfo("America/Chicago")
H = "street_openings.emergency_permit_application"
COLD_MIX = "street_openings.cold_mix_replacement_by"
PAVEMENT = "street_openings.permanent_pavement_within"
UTILITIES = "street_openings.utility_completion"
MORATORIUM = "street_openings.repaving_moratorium"
WORK = (H, COLD_MIX, PAVEMENT, UTILITIES, MORATORIUM)


def at(y: int, mo: int, d: int, h: int = 9, mi: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=CHICAGO)


def engine_at(when: datetime) -> ClockEngine:
    engine = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    engine.advance(when)
    return engine


def enter(engine: ClockEngine, permit: str, when: datetime, **detail: Any) -> list[Event]:
    """The clerk's entry at ``when`` (the engine's time moves there first, as the runner's)."""
    events = engine.advance(when)
    return events + engine.act(
        parse_action("record_permit", permit, detail, at=when, who="Dana Reyes")
    )


def found(events: list[Event], rule: str | None = None) -> list[RuleFinding]:
    """The § 370-7 G, H, I findings among ``events`` (of ``rule``, if given)."""
    rules = WORK if rule is None else (rule,)
    return [e for e in events if isinstance(e, RuleFinding) and e.rule in rules]


def test_an_emergency_opening_applied_for_five_days_later_is_found_at_its_entry() -> None:
    opened = at(2026, 12, 4, 22)  # a Friday night: apply by the end of Monday, Dec 7
    applied = at(2026, 12, 9, 10)
    engine = engine_at(opened)
    events = enter(
        engine, "SO-1", applied, street="Main St", opened_at=opened.isoformat(),
        emergency=True, applied_at=applied.isoformat(), approved_at=applied.isoformat(),
    )  # fmt: skip
    [finding] = found(events, H)
    assert (finding.subject, finding.severity, finding.citation) == (
        "permit:SO-1", "violation", "§ 370-7 H",
    )  # fmt: skip
    assert finding.at == applied
    assert "Monday, December 7, 2026" in finding.message
    assert "Wednesday, December 9, 2026 at 10:00 AM CST" in finding.message
    assert "_" not in finding.message
    assert "T22" not in finding.message
    # In time (by the end of Monday): no finding.
    on_time = engine_at(opened)
    monday = at(2026, 12, 7, 23, 59)
    ok = enter(on_time, "SO-2", monday, street="Main St", opened_at=opened.isoformat(),
               emergency=True, applied_at=monday.isoformat())  # fmt: skip
    assert found(ok, H) == []


def test_an_emergency_reported_without_an_application_is_found_when_the_day_ends() -> None:
    opened = at(2026, 12, 4, 22)
    engine = engine_at(opened)
    detail = {"street": "Main St", "opened_at": opened.isoformat(), "emergency": True}
    assert found(enter(engine, "SO-3", opened + timedelta(hours=1), **detail), H) == []
    due = at(2026, 12, 8, 0)  # the midnight ending Monday
    assert engine.next_due() == due
    assert found(engine.advance(due - timedelta(seconds=1)), H) == []
    [missing] = found(engine.advance(due), H)
    assert missing.at == due
    assert "no application is on record" in missing.message
    assert found(engine.advance(due + timedelta(days=3)), H) == []  # once
    # The application entered later is a finding of its own: late, at its time.
    late = at(2026, 12, 10, 9)
    [entered] = found(enter(engine, "SO-3", late, **detail, applied_at=late.isoformat()), H)
    assert entered.at == late
    assert "it was applied for on Thursday" in entered.message


def test_cold_mix_must_be_replaced_by_the_following_june_1() -> None:
    opened = at(2027, 1, 10, 3)
    engine = engine_at(opened)
    detail = {
        "street": "Elm St", "opened_at": opened.isoformat(), "emergency": True,
        "applied_at": at(2027, 1, 11).isoformat(), "cold_mix_on": "2027-01-10",
    }  # fmt: skip
    assert found(enter(engine, "SO-4", at(2027, 1, 11), **detail)) == []
    june_2 = at(2027, 6, 2, 0)
    assert found(engine.advance(june_2 - timedelta(seconds=1)), COLD_MIX) == []
    [missing] = found(engine.advance(june_2), COLD_MIX)
    assert (missing.severity, missing.citation) == ("violation", "§ 370-7G")
    assert "Tuesday, June 1, 2027" in missing.message
    assert "no permanent pavement is on record" in missing.message
    # Cold mix in place: the 60 days of the permit are not what governs (no finding).
    assert found(engine.advance(at(2027, 6, 3)), PAVEMENT) == []
    # Replaced before June 1 and entered then: nothing at all.
    kept = engine_at(opened)
    enter(kept, "SO-5", at(2027, 1, 11), **detail)
    assert found(enter(kept, "SO-5", at(2027, 5, 28), **detail,
                       permanent_pavement_on="2027-05-28")) == []  # fmt: skip
    assert found(kept.advance(at(2027, 7, 1))) == []


def test_permanent_pavement_within_60_days_of_the_permit() -> None:
    issued = at(2027, 5, 3, 8)  # outside the frozen-ground window
    engine = engine_at(issued)
    detail = {"street": "Oak St", "opened_at": at(2027, 5, 4).isoformat(),
              "approved_at": issued.isoformat()}  # fmt: skip
    assert found(enter(engine, "SO-6", issued, **detail)) == []
    due = at(2027, 7, 3, 0)  # May 3 + 60 days = July 2, whole
    assert found(engine.advance(due - timedelta(seconds=1)), PAVEMENT) == []
    [missing] = found(engine.advance(due), PAVEMENT)
    assert "Friday, July 2, 2027" in missing.message
    assert "Monday, May 3, 2027" in missing.message
    [late] = found(enter(engine, "SO-6", at(2027, 7, 9), **detail,
                         permanent_pavement_on="2027-07-08"), PAVEMENT)  # fmt: skip
    assert late.at == at(2027, 7, 8, 0)
    assert "it was replaced on Thursday, July 8" in late.message
    # An opening that took up no pavement: G's pavement clocks do not run.
    grass = engine_at(issued)
    enter(grass, "SO-7", issued, **detail, pavement_removed=False)
    assert found(grass.advance(at(2027, 8, 1)), PAVEMENT) == []


def test_utilities_finish_within_30_days_of_the_repaving_notice() -> None:
    issued = at(2027, 5, 3, 8)
    engine = engine_at(issued)
    detail = {"street": "Oak St", "opened_at": issued.isoformat(), "pavement_removed": False,
              "repaving_notice_on": "2027-06-01"}  # fmt: skip
    enter(engine, "SO-8", issued, **detail)
    due = at(2027, 7, 2, 0)  # June 1 + 30 days = July 1, whole
    assert found(engine.advance(due - timedelta(seconds=1)), UTILITIES) == []
    [missing] = found(engine.advance(due), UTILITIES)
    assert missing.citation == "§ 370-7 I (inferred)"
    assert "Thursday, July 1" in missing.message
    on_time = engine_at(issued)
    enter(on_time, "SO-9", issued, **detail)
    assert found(enter(on_time, "SO-9", at(2027, 6, 30), **detail,
                       work_completed_on="2027-06-30")) == []  # fmt: skip
    assert found(on_time.advance(at(2027, 8, 1))) == []


@pytest.mark.parametrize(("essential", "expected"), [(False, 1), (True, 0)])
def test_a_permit_on_a_street_repaved_within_five_years(essential: bool, expected: int) -> None:
    issued = at(2027, 5, 3, 8)
    engine = engine_at(issued)
    events = enter(engine, "SO-10", issued, street="Oak St", opened_at=issued.isoformat(),
                   street_repaved_on="2023-08-01", essential=essential)  # fmt: skip
    hits = found(events, MORATORIUM)
    assert len(hits) == expected
    if hits:
        assert "Tuesday, August 1, 2023" in hits[0].message
        assert "through Tuesday, August 1, 2028" in hits[0].message
    old = engine_at(issued)
    assert found(enter(old, "SO-11", issued, street="Oak St", opened_at=issued.isoformat(),
                       street_repaved_on="2022-05-01"), MORATORIUM) == []  # fmt: skip


def test_a_restarted_engine_keeps_the_work_deadlines_and_finds_each_once() -> None:
    issued = at(2027, 5, 3, 8)
    engine = engine_at(issued)
    enter(engine, "SO-12", issued, street="Oak St", opened_at=issued.isoformat())
    due = at(2027, 7, 3, 0)
    engine.advance(at(2027, 6, 20))  # past the permit's 30 days: only G's clock is left
    assert engine.next_due() == due
    fresh = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    fresh.restore(engine.snapshot())
    assert fresh.next_due() == due
    assert len(found(fresh.advance(due), PAVEMENT)) == 1
    again = ClockEngine(load_profile(), [FrontageSpec("a", DEVICE)])
    again.restore(fresh.snapshot())
    assert found(again.advance(due + timedelta(days=1))) == []
    assert again.next_due() is None


def test_a_repeated_entry_with_nothing_new_is_refused() -> None:
    issued = at(2027, 5, 3, 8)
    engine = engine_at(issued)
    detail = {"street": "Oak St", "opened_at": issued.isoformat()}
    enter(engine, "SO-13", issued, **detail)
    with pytest.raises(ValueError, match="nothing new"):
        enter(engine, "SO-13", issued + timedelta(hours=1), **detail)
    with pytest.raises(ValueError, match="another street"):
        enter(engine, "SO-13", issued + timedelta(hours=1), street="Elm St",
              opened_at=issued.isoformat(), permanent_pavement_on="2027-05-20")  # fmt: skip


def test_a_renewal_entered_with_the_work_dates_judges_them_too() -> None:
    issued = at(2027, 5, 3, 8)
    engine = engine_at(issued)
    detail = {"street": "Oak St", "opened_at": issued.isoformat()}
    enter(engine, "SO-14", issued, **detail)
    events = enter(engine, "SO-14", at(2027, 7, 9), **detail, renewals=1,
                   permanent_pavement_on="2027-07-08")  # fmt: skip
    # Event time passed the 60 days first (none on record), then the late date entered.
    missing, late = found(events, PAVEMENT)
    assert missing.at == at(2027, 7, 3, 0)
    assert late.at == at(2027, 7, 8, 0)
    assert engine.cold.permits["SO-14"].permit.renewals == 1
    # A renewal with nothing of the work: renewed, nothing found, nothing refused.
    assert found(enter(engine, "SO-14", at(2027, 7, 10), **detail, renewals=2)) == []
