"""Why a stop is on the inspector's round, and the village's time, in words (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.casework import CaseNow
from sidewalk.analytics.clocks.states import CaseState, ClearingState
from sidewalk.dashboard.routes.rounds import stop_reason
from sidewalk.dashboard.time_words import village_time
from sidewalk.storage.cases.records import Cause, ClockRecord

ZONE = ZoneInfo("America/Chicago")
NOW = datetime(2026, 12, 7, 18, 0, tzinfo=UTC)  # 12:00 PM in Clyman


def clearing(state: ClearingState, deadline: datetime) -> ClockRecord:
    return ClockRecord(
        id=1, key="k", frontage_id="f", kind="clearing", state=state, started_at=NOW,
        deadline=deadline, closed_at=None, cause=Cause(kind="deadline", ts=0),
        citation=None, rules=(), unconfirmed=False,
    )  # fmt: skip


def case(state: CaseState, deadline: datetime | None, steps: tuple[str, ...] = ()) -> CaseNow:
    return CaseNow("v", state, deadline, steps, 0)


@pytest.mark.parametrize(
    ("at", "words"),
    [
        (NOW + timedelta(hours=3, minutes=30), "today 3:30 PM"),
        (NOW + timedelta(hours=21, minutes=30), "tomorrow 9:30 AM"),
        (NOW - timedelta(hours=14), "yesterday 10:00 PM"),
        (NOW + timedelta(days=12), "Sat, Dec 19, 12:00 PM"),
    ],
)
def test_an_instant_on_the_village_clock_with_its_day(at: datetime, words: str) -> None:
    assert village_time(at, NOW, ZONE) == words


def test_a_possible_hazard_says_what_was_found() -> None:
    why = stop_reason(
        case=case(CaseState.NOTICE_PERIOD, NOW + timedelta(hours=5), ("confirm_hazard",)),
        clock=None, hazard_reasons=("untreated ice on the walk (seen by the camera)",),
        now=NOW, zone=ZONE,
    )  # fmt: skip
    assert why == (
        "Possible hazard: untreated ice on the walk (seen by the camera)."
        " Decide whether it is an immediate danger."
    )


def test_a_notice_period_that_ended_says_when_and_what_to_check() -> None:
    ended = case(CaseState.NOTICE_PERIOD, NOW - timedelta(hours=2, minutes=30))
    assert stop_reason(case=ended, clock=None, now=NOW, zone=ZONE) == (
        "The notice period ended today 9:30 AM: check whether the sidewalk was cleared."
    )
    running = case(CaseState.HAZARD_PERIOD, NOW + timedelta(hours=2))
    assert stop_reason(case=running, clock=None, now=NOW, zone=ZONE) == (
        "Hazard notice posted: the owner must remove the hazard by today 2:00 PM."
    )


@pytest.mark.parametrize(
    ("state", "deadline", "words"),
    [
        (ClearingState.CLEARING_PERIOD, NOW + timedelta(hours=1),
         "Snow stopped: the owner must clear the sidewalk by today 1:00 PM."),
        (ClearingState.NEEDS_REVIEW, NOW - timedelta(hours=1),
         "The owner's deadline passed today 11:00 AM and the camera's pictures did not come"
         " in: look whether the sidewalk is cleared."),
        (ClearingState.UNVERIFIED, NOW - timedelta(days=1),
         "The owner's deadline passed yesterday 12:00 PM and the camera could not measure the"
         " sidewalk: look whether it is cleared."),
    ],
)  # fmt: skip
def test_a_snowfalls_deadline_says_when(
    state: ClearingState, deadline: datetime, words: str
) -> None:
    assert stop_reason(case=None, clock=clearing(state, deadline), now=NOW, zone=ZONE) == words
