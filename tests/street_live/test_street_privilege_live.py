"""§ 370-9 permits and street obstructions entered on the command line, applied by the runner;
findings stored once however often they are judged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.cli.street import street_app
from sidewalk.system import frontage_specs
from tests.clocks.live import EXAMPLE_PROFILE, findings, seeded

WHO = ["--who", "Pat Inspector"]


def test_a_permit_from_the_cli_expires_closes_and_material_left_is_a_case(tmp_path: Path) -> None:
    # Example Village: six-month permits, a 12-hour street removal period.
    system = seeded(tmp_path, EXAMPLE_PROFILE)
    cases, cli = system.cases, CliRunner()
    common = [*WHO, "--config", str(system.config)]
    entered = cli.invoke(
        street_app,
        ["permit", "--id", "SP-1", "--frontage", "main-st-105", "--issued-on", "2026-11-30",
         "--holder", "Acme Builders", "--location", "105 Main St", "--placed", "a dumpster",
         *common],
    )  # fmt: skip
    assert entered.exit_code == 0, entered.output
    runner = system.runner("privilege-live-test")
    runner.tick()
    [clock] = cases.clocks.list(kind="street_privilege")
    end = datetime(2027, 5, 31, 5, tzinfo=UTC)  # the end of May 30, CDT: six months
    assert (clock.key, clock.state, clock.deadline) == (
        "main-st-105/street_privilege/SP-1", "valid", end,
    )  # fmt: skip
    assert clock.started_at == datetime(2026, 11, 30, 6, tzinfo=UTC)
    assert runner.engine.next_due() == end

    runner.advance(end + timedelta(minutes=1))
    [clock] = cases.clocks.list(kind="street_privilege")
    assert (clock.state, clock.closed_at) == ("expired", end)
    last = cases.clocks.history(clock.id)[-1]
    assert (
        last.detail["cause"]
        == "terminated: 6 months (Example Code § 370-9 E (inferred)) from issue"
    )

    seen = "2027-06-02T09:00-05:00"
    looked = cli.invoke(street_app, ["inspected", "--id", "SP-1", "--at", seen, "--present",
                                     *common])  # fmt: skip
    assert looked.exit_code == 0, looked.output
    acted = runner.tick()
    [finding] = findings(cases, "street_privilege:SP-1")
    assert (finding["action"], finding["rule"]) == (
        "finding.violation", "permits.street_privilege_term",
    )  # fmt: skip
    seen_utc = datetime.fromisoformat(seen).astimezone(UTC).isoformat()
    assert finding["key"] == f"street_privilege:SP-1/permits.street_privilege_term/{seen_utc}"
    case = cases.clocks.violation_by_key("obstruction:SP-1")
    assert case is not None
    assert case.frontage_id == "main-st-105"
    status = cli.invoke(street_app, ["status", "--config", str(system.config)])
    assert "SP-1 (main-st-105): expired" in status.output
    assert "SP-1 (main-st-105): obstructed" in status.output

    # The same events recorded again (a replay after a crash before the save): nothing new.
    before = len(cases.audit.list())
    runner.recorder.record(acted)
    assert len(cases.audit.list()) == before
    assert len(findings(cases, "street_privilege:SP-1")) == 1


def test_a_restart_that_applies_every_action_again_stores_no_finding_twice(
    tmp_path: Path,
) -> None:
    system = seeded(tmp_path)
    cases, cli = system.cases, CliRunner()
    common = [*WHO, "--config", str(system.config)]
    for args in (
        ["obstruction", "--id", "OB-7", "--frontage", "main-st-101", "--area", "street",
         "--kind", "other", "--location", "Main St at Elm", "--description", "pallets", "--at",
         "2026-12-02T09:00-06:00"],
        ["obstruction", "--id", "OB-8", "--frontage", "main-st-103", "--width-mm", "600",
         "--kind", "fixture", "--at", "2026-12-02T09:30-06:00"],
        ["permit", "--id", "SP-2", "--frontage", "main-st-103", "--issued-on", "2026-12-01",
         "--walk-width-mm", "900"],
    ):  # fmt: skip
        result = cli.invoke(street_app, [*args, *common])
        assert result.exit_code == 0, result.output
    system.runner("restart-test-1").tick()
    stored = {s: findings(cases, s) for s in
              ("obstruction:OB-7", "obstruction:OB-8", "street_privilege:SP-2")}  # fmt: skip
    assert [f["rule"] for f in stored["obstruction:OB-7"]] == [
        "obstructions.street_removal_after_notice"
    ]
    assert [f["rule"] for f in stored["street_privilege:SP-2"]] == [
        "obstructions.temporary_walk_min_width"
    ]
    # A restart that lost its state: a fresh engine applies every recorded action again.
    engine = ClockEngine(system.profile, frontage_specs(cases, "clyman"))
    recorder = CaseRecorder(cases, system.profile)
    for action in cases.actions.list():
        person = parse_action(action.kind, action.target, action.detail, at=action.at,
                              who=action.who)  # fmt: skip
        recorder.record(engine.act(person))
    assert {s: findings(cases, s) for s in stored} == stored
