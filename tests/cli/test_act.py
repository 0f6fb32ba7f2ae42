"""``sidewalk act``: notice numbers and addresses in, the runner's own keys recorded.

A first-storm replay through a stream-mode runner leaves two clearing-violation
notices (103 and 105 Main St) in SQLite case records; the command is run through
the root application, as ``sidewalk act …`` runs it, and the runner then applies
what was recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.cli import app
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import CaseStore
from tests.clocks.live import seeded


@dataclass
class Storm:
    cases: CaseStore
    runner: AnalyticsRunner
    config: Path

    def act(self, *args: str) -> tuple[int, str]:
        result = CliRunner().invoke(
            app, ["act", *args, "--config", str(self.config)], env={"COLUMNS": "200"}
        )
        return result.exit_code, result.output

    def case_state(self, frontage: str) -> str | None:
        clocks = self.cases.clocks.list(frontage_id=frontage, kind="enforcement")
        return clocks[-1].state if clocks else None


def replayed_storm(tmp_path: Path) -> Iterator[Storm]:
    system = seeded(tmp_path)
    runner = system.runner("act-cli-test")
    story = load_scenario("first-storm")
    for reading in to_readings(story, expand(story)):
        runner.handle(reading)
    assert [n.number for n in system.cases.notices.list()] == [
        "CLY-2026-000001",  # 103 Main St
        "CLY-2026-000002",  # 105 Main St
    ]
    yield Storm(system.cases, runner, system.config)
    system.cases.close()


@pytest.fixture
def storm(tmp_path: Path) -> Iterator[Storm]:
    """A storm of the test's own: it may record actions."""
    yield from replayed_storm(tmp_path)


@pytest.fixture(scope="module")
def refusing_storm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Storm]:
    """One storm for the refused commands: each asserts that nothing was recorded, so
    a refusal that wrote anything fails there (and the rest after it) all the same."""
    yield from replayed_storm(tmp_path_factory.mktemp("refusing-storm"))


def test_a_notice_number_is_resolved_to_its_case_and_the_runner_applies_it(storm: Storm) -> None:
    status, out = storm.act(
        "record_delivery", "CLY-2026-000002", "--who", "Pat Clerk", "--at", "2026-12-11T09:30"
    )
    assert status == 0, out
    assert out.strip() == (
        "recorded: notice delivered — notice CLY-2026-000002, 105 Main St,"
        " Friday, December 11, 2026 at 9:30 AM CST, by Pat Clerk; the analytics runner applies it"
    )
    assert "main-st-105:clearing" not in out  # no internal key
    [action] = storm.cases.actions.pending()
    violation = storm.cases.clocks.violation_by_key(action.target)
    assert violation is not None
    assert violation.frontage_id == "main-st-105"
    assert action.at == datetime(2026, 12, 11, 15, 30, tzinfo=UTC)  # local time, CST
    assert storm.cases.notices.get_by_number("CLY-2026-000002").delivered_at is not None

    storm.runner.tick()
    [applied] = storm.cases.actions.list()
    assert (applied.applied_at is not None, applied.error) == (True, None)
    assert storm.case_state("main-st-105") == "notice_period"

    status, out = storm.act("confirm_hazard", "CLY-2026-000002", "--who", "Officer Lee")
    assert status == 0, out
    storm.runner.tick()
    assert storm.case_state("main-st-105") == "hazard_notice_issued"
    assert all(a.error is None for a in storm.cases.actions.list())


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["record_delivery", "CLY-1999-000009"], "no notice 'CLY-1999-000009'"),
        (["record_delivery", "main-st-105:clearing:2026-12-10T23:00:00+00:00"], "no notice"),
        (["record_delivery", "'; DROP TABLE notices; --"], "no notice"),
        (["record_pour", "CLY-2026-000001"], "unknown step 'record_pour'"),
        (["launch_rocket", "CLY-2026-000001"], "unknown step 'launch_rocket'"),
        (["record_treated", "999 Nowhere Rd"], "no frontage, address or notice '999 Nowhere Rd'"),
        (["confirm_hazard", "CLY-2026-000001", "--at", "yesterday"], "--at 'yesterday'"),
        (["confirm_hazard", "CLY-2026-000001", "--at", "2026-03-08T02:30"], "a DST change"),
    ],
)
def test_an_unknown_or_invalid_target_is_one_line_and_exit_2(
    refusing_storm: Storm, args: list[str], said: str
) -> None:
    status, out = refusing_storm.act(*args, "--who", "Pat Clerk")
    assert status == 2, out
    assert said in out
    assert len(out.strip().splitlines()) == 1
    assert "Traceback" not in out
    assert refusing_storm.cases.actions.list() == []


def test_treatment_takes_the_street_address(storm: Storm) -> None:
    status, out = storm.act("record_treated", "  103 main st ", "--who", "Pat Clerk")
    assert status == 0, out
    assert "walk sanded or salted — 103 Main St" in out
    [action] = storm.cases.actions.pending()
    assert (action.kind, action.target) == ("record_treated", "main-st-103")
    storm.runner.tick()
    assert storm.cases.actions.list()[0].error is None


def test_the_steps_are_the_case_steps_and_treatment() -> None:
    from typing import get_args

    from sidewalk.analytics.clocks.actions import CaseStep
    from sidewalk.cli.act import STEPS

    case_steps = {t.model_fields["kind"].default for t in get_args(CaseStep)}
    assert set(STEPS) == case_steps | {"record_treated", "record_ice"}


def a_step_the_case_cannot_take_is_refused_at_once(storm: Storm) -> None:
    status, out = storm.act("abatement_done", "CLY-2026-000001", "--who", "Crew Chief")
    assert status == 2
    assert out.strip() == "refused: CLY-2026-000001: no abatement was ordered (state notice_issued)"
    status, out = storm.act("bill_received", "CLY-2026-000001", "--who", "Pat Clerk")
    assert status == 2
    assert "no bill outstanding" in out
    assert storm.cases.actions.list() == []


def test_370_10_b_a_wrong_service_is_corrected_then_undone_and_the_clock_follows(
    storm: Storm,
) -> None:
    """A step the case cannot take is refused at once (one replay serves both checks).

    A service entered at the wrong time is corrected (the owner's deadline moves); once
    the corrected period runs out and removal is ordered, undoing the service (entered on
    the wrong notice) withdraws the order: no order stands on a void service. The entry
    stays on record; each correction names who and why."""
    a_step_the_case_cannot_take_is_refused_at_once(storm)
    number = "CLY-2026-000002"

    def clock() -> tuple[str, datetime | None]:
        return case_clock(storm)

    status, out = storm.act("record_delivery", number, "--who", "Pat Clerk",
                            "--at", "2026-12-11T09:30")  # fmt: skip
    assert status == 0, out
    storm.runner.tick()
    assert clock() == ("notice_period", datetime(2026, 12, 12, 15, 30, tzinfo=UTC))

    status, out = storm.act("record_delivery", number, "--who", "Pat Clerk", "--correct",
                            "--at", "2026-12-11T13:00")  # fmt: skip
    assert status == 2
    assert "--reason" in out
    why = "served at 1 PM, not 9:30"
    status, out = storm.act("record_delivery", number, "--who", "Pat Clerk", "--correct",
                            "--at", "2026-12-11T13:00", "--reason", why)  # fmt: skip
    assert status == 0, out
    assert "corrected to Friday, December 11, 2026 at 1:00 PM CST" in out
    storm.runner.tick()
    assert clock() == ("notice_period", datetime(2026, 12, 12, 19, 0, tzinfo=UTC))
    notice = storm.cases.notices.get_by_number(number)
    assert notice.delivered_at == datetime(2026, 12, 11, 19, 0, tzinfo=UTC)
    first, fix = storm.cases.actions.list()
    assert (first.kind, first.at) == ("record_delivery", datetime(2026, 12, 11, 15, 30, tzinfo=UTC))
    assert fix.error is None
    assert (fix.who, fix.detail["entry"], fix.detail["reason"]) == (
        "Pat Clerk", first.id, "served at 1 PM, not 9:30",
    )  # fmt: skip
    [audited] = [a for a in storm.cases.audit.list(f"notice:{number}")
                 if a.action == "notice.delivery_corrected"]  # fmt: skip
    assert (audited.actor, audited.detail["reason"]) == ("Pat Clerk", "served at 1 PM, not 9:30")

    storm.runner.advance(datetime(2026, 12, 12, 19, 30, tzinfo=UTC))  # the period ran out
    assert clock()[0] == "abatement_ordered"
    [order] = storm.cases.bills.list_abatements()
    assert (order.status, order.ordered_at) == (
        "ordered",
        datetime(2026, 12, 12, 19, 0, tzinfo=UTC),
    )

    the_work_is_undone_before_the_service(storm, number)


def case_clock(storm: Storm) -> tuple[str, datetime | None]:
    """105 Main St's case: its state and deadline as recorded."""
    [c] = storm.cases.clocks.list(frontage_id="main-st-105", kind="enforcement")
    return c.state, c.deadline


def the_work_is_undone_before_the_service(storm: Storm, number: str) -> None:
    """The crew's completion rests on the service: undone first, then the service; the
    order the expired period gave is withdrawn, and nothing is ordered again."""
    status, out = storm.act("abatement_done", number, "--who", "Crew Chief",
                            "--at", "2026-12-12T15:00")  # fmt: skip
    assert status == 0, out
    storm.runner.tick()
    status, out = storm.act("record_delivery", number, "--who", "Pat Clerk", "--undo",
                            "--reason", "entered on the wrong notice")  # fmt: skip
    assert (status, " ".join(out.split())) == (2, "refused: The crew's completion of the"
        " Village's work was recorded on Saturday, December 12, 2026 at 3:00 PM CST after the"
        " service of the notice, and rests on it: undo the crew's completion of the Village's"
        " work first.")  # fmt: skip
    status, out = storm.act("abatement_done", number, "--who", "Pat Clerk", "--undo",
                            "--reason", "the crew had not finished")  # fmt: skip
    assert status == 0, out
    storm.runner.tick()
    assert case_clock(storm)[0] == "abatement_ordered"
    status, out = storm.act("record_delivery", number, "--who", "Pat Clerk", "--undo",
                            "--reason", "entered on the wrong notice")  # fmt: skip
    assert status == 0, out
    storm.runner.tick()
    storm.runner.advance(datetime(2026, 12, 13, 19, 30, tzinfo=UTC))
    assert case_clock(storm) == ("notice_issued", None)
    assert storm.cases.bills.list_abatements()[0].status == "withdrawn"
    notice = storm.cases.notices.get_by_number(number)
    assert (notice.delivered_at, notice.status) == (None, "rendered")
    assert storm.cases.actions.list()[0].kind == "record_delivery"  # kept as recorded
    status, out = storm.act("record_delivery", number, "--who", "Pat Clerk", "--undo",
                            "--reason", "again")  # fmt: skip
    assert (status, out.strip()) == (
        2,
        "refused: the service of the notice is not on record"
        f" for notice {number} (never recorded, or undone)",
    )
    assert len(storm.cases.actions.list()) == 5  # nothing recorded by the refusals
