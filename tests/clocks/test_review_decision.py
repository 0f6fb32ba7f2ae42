"""A person closes a review item: ``sidewalk review decide``.

The first storm through a stream-mode runner, its pole falling silent three hours
before the deadline: after the wait all three clearing deadlines wait for a person
(``needs_review``). Undisturbed, 101 Main St complied and 103 and 105 were
violations. Here a person decides 101 "cleared" (closed, no notice) and 103 "not
cleared" (the notice path: the written notice, the case, offenses counted from the
missed deadline), each with their name and reason in the records and the audit
log; a decision on a frontage with nothing waiting is refused at entry (exit 2);
105, left waiting, is still decided by the pole's readings when they come, which
change nothing the person decided.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.cli import app
from sidewalk.core.clock import format_local
from sidewalk.core.contract import Reading
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import CaseStore
from tests.alerts.test_letters import internal_words
from tests.clocks.live import seeded

# The first storm's clearing deadline is Friday, Dec 11, about 5:00 PM CST (the tests read
# the exact instant from the engine); the pole falls silent three hours before it.
CHICAGO = ZoneInfo("America/Chicago")
CUT = datetime(2026, 12, 11, 20, 0, tzinfo=UTC)


@dataclass
class Waiting:
    cases: CaseStore
    runner: AnalyticsRunner
    config: Path
    rest: list[Reading]
    deadline: datetime

    def cli(self, *args: str) -> tuple[int, str]:
        result = CliRunner().invoke(
            app, [*args, "--config", str(self.config)], env={"COLUMNS": "200"}
        )
        return result.exit_code, result.output

    def decide(self, target: str, *flags: str) -> tuple[int, str]:
        return self.cli("review", "decide", target, *flags)

    def clearing(self, frontage: str) -> str:
        return self.cases.clocks.list(frontage_id=frontage, kind="clearing")[-1].state


@pytest.fixture
def waiting(tmp_path: Path) -> Iterator[Waiting]:
    system = seeded(tmp_path)
    runner = system.runner("review-decide-test")
    story = load_scenario("first-storm")
    readings = to_readings(story, expand(story))
    for reading in readings:
        if reading.event_time <= CUT:
            runner.handle(reading)
    deadline = runner.engine.clocks["main-st-101"].deadline
    assert deadline is not None
    assert deadline - CUT > timedelta(hours=2)
    yield Waiting(system.cases, runner, system.config,
                  [r for r in readings if r.event_time > CUT], deadline)  # fmt: skip
    system.cases.close()


def test_370_10_A_a_person_decides_review_items_cleared_and_not_cleared(
    waiting: Waiting,
) -> None:
    # Nothing waits before the wait ends: refused at entry, one line, nothing recorded.
    status, out = waiting.decide("101 Main St", "--cleared", "--reason", "seen", "--by", "Quinn")
    assert status == 2
    assert "refused: 101 Main St has no clearing deadline waiting for review" in out
    assert waiting.cases.actions.list() == []

    waiting.runner.advance(waiting.deadline + timedelta(hours=2))  # the wait ends: a person looks
    assert {waiting.clearing(f) for f in ("main-st-101", "main-st-103", "main-st-105")} == {
        "needs_review"
    }
    assert "decide one: sidewalk review decide ADDRESS" in waiting.cli("review")[1]
    at = "2026-12-12T09:00"  # local time, the next morning
    status, out = waiting.decide(
        "101 main st", "--cleared", "--reason", "walk seen clear at 4:40 PM on patrol",
        "--by", "Officer Quinn", "--at", at,
    )  # fmt: skip
    assert status == 0, out
    due = format_local(waiting.deadline, CHICAGO)
    assert out.strip() == (
        f"recorded: review decided — 101 Main St, deadline {due}: cleared in time: closed,"
        " no notice; by Officer Quinn, Saturday, December 12, 2026 at 9:00 AM CST;"
        " the analytics runner applies it"
    )
    status, out = waiting.decide(
        "main-st-103", "--not-cleared", "--reason", "photo at 5:10 PM: snow across the walk",
        "--by", "Officer Quinn", "--at", at,
    )  # fmt: skip
    assert status == 0, out
    assert "not cleared: the written notice follows" in out
    waiting.runner.tick()
    assert [(a.kind, a.target, a.error) for a in waiting.cases.actions.list()] == [
        ("decide_review", "main-st-101", None),
        ("decide_review", "main-st-103", None),
    ]
    assert waiting.clearing("main-st-101") == "complied"
    assert waiting.clearing("main-st-103") == "violation"
    assert waiting.clearing("main-st-105") == "needs_review"
    [notice] = waiting.cases.notices.list()
    assert notice.frontage_id == "main-st-103"
    assert notice.kind == "clearing_violation"
    violation = waiting.cases.clocks.violation_by_key("main-st-103:clearing:" + _cessation(waiting))
    assert violation is not None
    assert violation.evidence["review"] == {
        "decision": "not_cleared", "by": "Officer Quinn",
        "reason": "photo at 5:10 PM: snow across the walk", "at": "2026-12-12T15:00:00+00:00",
    }  # fmt: skip
    assert violation.evidence["measured_width_mm"] is None
    _says_who_found_it(notice.body_text)
    # The case runs the notice path, offenses counted from the missed deadline.
    case = waiting.runner.engine.enforcement.cases[violation.key]
    assert (case.state, case.missed_deadline) == ("notice_issued", waiting.deadline)
    resolved = {
        a.subject: a for a in waiting.cases.audit.list() if a.action == "clearing.review_resolved"
    }
    assert resolved["frontage:main-st-101"].actor == "Officer Quinn"
    assert resolved["frontage:main-st-101"].detail["decided"] == "complied"
    assert resolved["frontage:main-st-103"].detail["reason"] == (
        "photo at 5:10 PM: snow across the walk"
    )
    assert [a.actor for a in waiting.cases.audit.list() if a.action == "action.decide_review"] == [
        "Officer Quinn",
        "Officer Quinn",
    ]

    # Decided already: a second decision is refused at entry.
    status, out = waiting.decide("101 Main St", "--not-cleared", "--reason", "x", "--by", "Lee")
    assert (status, out.count("\n")) == (2, 1)
    assert "has no clearing deadline waiting for review" in out

    # The pole's buffer drains: 105 is decided on its evidence; the decisions stand.
    for reading in waiting.rest:
        waiting.runner.handle(reading)
    assert waiting.clearing("main-st-101") == "complied"
    assert waiting.clearing("main-st-105") == "violation"
    assert sorted(n.frontage_id for n in waiting.cases.notices.list()) == [
        "main-st-103",
        "main-st-105",
    ]
    # Both cases count their offenses from the same missed deadline (§ 370-10 E).
    waiting.runner.advance(waiting.deadline + timedelta(hours=25))
    by_pole = waiting.cases.clocks.violation_by_key(violation.key.replace("103", "105"))
    assert by_pole is not None
    assert by_pole.offense_count == 2
    assert waiting.cases.clocks.get_violation(violation.id).offense_count == by_pole.offense_count


def test_a_review_decision_is_refused_at_entry_when_it_cannot_apply(waiting: Waiting) -> None:
    waiting.runner.advance(waiting.deadline + timedelta(hours=2))
    cases = [
        (["nowhere 9", "--cleared"], "no frontage, address or notice 'nowhere 9'"),
        (["101 Main St"], "say --cleared"),
        (["101 Main St", "--cleared", "--at", "2026-12-11T16:00"], "is before the deadline"),
    ]
    for args, said in cases:
        status, out = waiting.decide(*args, "--reason", "seen", "--by", "Quinn")
        assert status == 2, out
        assert said in out
        assert out.count("\n") == 1
    status, out = waiting.decide("101 Main St", "--cleared", "--reason", " ", "--by", "Quinn")
    assert (status, "--reason" in out) == (2, True)
    assert waiting.cases.actions.list() == []


def test_the_engine_refuses_a_decision_for_another_deadline_and_changes_nothing(
    waiting: Waiting,
) -> None:
    waiting.runner.advance(waiting.deadline + timedelta(hours=2))
    engine = waiting.runner.engine
    before = engine.snapshot()
    wrong = parse_action(
        "decide_review", "main-st-101",
        {"decision": "cleared", "reason": "seen",
         "deadline": (waiting.deadline - timedelta(days=1)).isoformat()},
        at=waiting.deadline + timedelta(hours=3), who="Quinn",
    )  # fmt: skip
    with pytest.raises(ValueError, match="deadline waiting for review is 2026-12-11T"):
        engine.act(wrong)
    with pytest.raises(KeyError):
        engine.act(wrong.model_copy(update={"target": "elm-st-9"}))
    assert engine.snapshot() == before


def _says_who_found_it(text: str | None) -> None:
    """The letter says who found it, in plain words; the reason is on the evidence page."""
    assert text is not None
    letter, _, record = text.partition("EVIDENCE RECORD")
    assert "Officer Quinn, for the Village, reviewed this sidewalk and found that it had not" in (
        letter
    )
    assert "camera measured" not in letter
    assert "Reason given: photo at 5:10 PM: snow across the walk." in record
    assert internal_words(letter) == internal_words(record) == []  # a letter, not a log


def _cessation(waiting: Waiting) -> str:
    clock = waiting.runner.engine.clocks["main-st-103"]
    assert clock.cessation_at is not None
    return clock.cessation_at.isoformat()
