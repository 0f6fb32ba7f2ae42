"""Rules no sensor sees, entered by inspectors, run live through the real
runner with the obstruction clock's path: written notice → period from delivery →
abatement (→ bill → tax roll through the shared billing)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.cli.notices import notices_app
from sidewalk.cli.street import street_app
from sidewalk.core.profile import Profile, load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.system import frontage_specs
from tests.clocks.live import EXAMPLE_PROFILE, findings, seeded, set_frontage

CHICAGO = ZoneInfo("America/Chicago")
T0 = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)  # 9:00 CST
WHO = "Pat Inspector"


@dataclass
class Live:
    runner: AnalyticsRunner
    cases: CaseStore
    profile: Profile

    def act(self, kind: str, target: str, at: datetime, /, **detail: Any) -> None:
        self.cases.actions.record(kind, target, at, WHO, detail)
        self.runner.tick()

    def found(self, target: str, at: datetime, frontage: str, rule: str, **more: Any) -> None:
        self.act("record_inspection_finding", target, at, frontage=frontage, rule=rule, **more)

    def clock(self, target: str) -> Any:
        [clock] = [c for c in self.cases.clocks.list(kind="inspection")
                   if c.key.endswith(f"/{target}")]  # fmt: skip
        return clock

    def errors(self) -> dict[str, str | None]:
        return {a.target: a.error for a in self.cases.actions.list()}


def _live(tmp_path: Path, profile_file: Path | None = None) -> Live:
    system = seeded(tmp_path, profile_file)
    # § 370-10 C's exception is recorded for 105 Main St (building within 5 ft, walk to curb).
    set_frontage(system.cases, "main-st-105", may_deposit_on_street=True)
    return Live(system.runner("inspector-rules"), system.cases, system.profile)


@pytest.fixture
def live(tmp_path: Path) -> Live:
    return _live(tmp_path)


def test_370_10_C_snow_pushed_onto_the_street_is_a_case_unless_the_exception_applies(
    live: Live,
) -> None:
    live.found("SN-1", T0, "main-st-103", "snow_on_street", from_own_walk=True)
    live.found("SN-2", T0, "main-st-105", "snow_on_street", from_own_walk=True)
    # The exception lets snow from the parcel's own walk onto the street, nowhere else.
    live.found("SN-3", T0, "main-st-105", "snow_on_street", from_own_walk=True, onto="sidewalk")
    live.found("SN-4", T0, "main-st-105", "snow_on_street", from_own_walk=False)
    states = {k: live.clock(k).state for k in ("SN-1", "SN-2", "SN-3", "SN-4")}
    assert states == {"SN-1": "found", "SN-2": "compliant", "SN-3": "found", "SN-4": "found"}
    case = live.cases.clocks.violation_by_key("inspection:SN-1")
    assert case is not None
    assert case.rule == "snow_and_ice.deposit_removal_after_notice"
    assert case.citation is not None
    assert "§ 370-10 C" in case.citation
    [finding] = findings(live.cases, "inspection:SN-1")
    assert finding["unconfirmed"] is True  # the removal period is not in the code
    assert live.cases.clocks.violation_by_key("inspection:SN-2") is None


def test_370_11_C_mailbox_not_cleared_runs_the_notice_period_then_abatement(
    live: Live,
) -> None:
    live.found("MB-1", T0, "main-st-101", "mailbox", description="mailbox buried by the plow")
    delivered = T0 + timedelta(hours=2)
    live.act("inspection_notice_delivered", "MB-1", delivered)
    clock = live.clock("MB-1")
    period = live.profile.terraces.mailbox_clearing_after_notice.duration
    assert (clock.state, clock.deadline) == ("notice_period", delivered + period)
    assert live.runner.engine.next_due() == delivered + period
    live.runner.advance(delivered + period - timedelta(minutes=1))
    assert live.cases.bills.list_abatements() == []
    live.runner.advance(delivered + period + timedelta(minutes=1))
    [abatement] = live.cases.bills.list_abatements()
    assert (abatement.key, abatement.ordered_at) == (
        "inspection:MB-1/abatement", delivered + period,
    )  # fmt: skip
    assert live.clock("MB-1").state == "overdue"
    case = live.cases.clocks.violation_by_key("inspection:MB-1")
    assert case is not None
    assert abatement.violation_id == case.id


def test_370_14_dumped_snow_removed_in_time_closes_without_abatement(live: Live) -> None:
    live.found("DU-1", T0, "main-st-101", "dumping", description="snow piled in the alley")
    live.act("inspection_notice_delivered", "DU-1", T0 + timedelta(hours=1))
    live.act("inspection_corrected", "DU-1", T0 + timedelta(hours=5))
    live.runner.advance(T0 + timedelta(days=3))
    clock = live.clock("DU-1")
    assert (clock.state, clock.closed_at) == ("corrected", T0 + timedelta(hours=5))
    assert live.cases.bills.list_abatements() == []
    assert live.cases.clocks.violation_by_key("inspection:DU-1") is not None


def test_144_12_B_an_excavation_fenced_under_4_ft_is_a_case_and_4_ft_is_not(
    live: Live,
) -> None:
    four_ft = live.profile.construction.excavation_fence_min_height.length_mm
    live.found("FE-1", T0, "main-st-101", "excavation_fence", fence_height_mm=four_ft)
    live.found("FE-2", T0, "main-st-101", "excavation_fence", fence_height_mm=four_ft - 1)
    live.found("FE-3", T0, "main-st-101", "excavation_fence")  # no fence at all
    assert [live.clock(k).state for k in ("FE-1", "FE-2", "FE-3")] == [
        "compliant", "found", "found",
    ]  # fmt: skip
    [finding] = findings(live.cases, "inspection:FE-3")
    assert finding["rule"] == "construction.excavation_fence_min_height"
    assert "§ 144-12 B" in finding["citation"]
    assert "§ 144-21 B(1)" in finding["citation"]  # the 30 days after written notification
    # § 144-21: 30 days after the written notification, to the end of the day.
    live.act("inspection_notice_delivered", "FE-3", T0)
    due = live.clock("FE-3").deadline.astimezone(CHICAGO)
    assert (due.date().isoformat(), due.hour) == ("2027-01-02", 0)  # after all of Jan 1


def test_144_11_excavation_not_filled_30_days_after_demolition_is_a_case(live: Live) -> None:
    done = datetime(2026, 12, 2, 10, 0, tzinfo=CHICAGO)
    live.act("record_demolition_completed", "DM-1", done, frontage="main-st-101",
             at=done.isoformat(), description="garage razed")  # fmt: skip
    live.act("record_demolition_completed", "DM-2", done, frontage="main-st-103",
             at=done.isoformat())  # fmt: skip
    clock = live.clock("DM-1")
    # "not later than 30 consecutive days after demolition is completed": all of Jan 1.
    assert clock.state == "period_running"
    assert clock.deadline == datetime(2027, 1, 2, 0, 0, tzinfo=CHICAGO)
    live.act("inspection_corrected", "DM-2", datetime(2026, 12, 20, tzinfo=CHICAGO))
    live.runner.advance(datetime(2027, 1, 1, 23, 59, tzinfo=CHICAGO))
    assert live.cases.clocks.violation_by_key("inspection:DM-1") is None
    live.runner.advance(datetime(2027, 1, 2, 0, 1, tzinfo=CHICAGO))
    case = live.cases.clocks.violation_by_key("inspection:DM-1")
    assert case is not None
    assert case.rule == "construction.demolition_fill_within"
    assert case.detected_at == datetime(2027, 1, 2, 0, 0, tzinfo=CHICAGO)
    assert live.clock("DM-1").state == "found"
    assert live.clock("DM-2").state == "corrected"


def test_144_12_C_an_excavation_open_more_than_3_months_is_abandoned(live: Live) -> None:
    opened = datetime(2026, 11, 30, 8, 0, tzinfo=CHICAGO)
    live.act("record_excavation_opened", "EX-1", opened, frontage="main-st-101",
             at=opened.isoformat(), description="foundation hole")  # fmt: skip
    # Open "more than three months": past all of Feb 28, 2027 (Nov 30 + 3 months, clamped).
    assert live.clock("EX-1").deadline == datetime(2027, 3, 1, 0, 0, tzinfo=CHICAGO)
    live.runner.advance(datetime(2027, 3, 1, 0, 5, tzinfo=CHICAGO))
    assert live.clock("EX-1").state == "found"
    served = datetime(2027, 3, 2, 9, 0, tzinfo=CHICAGO)
    live.act("inspection_notice_delivered", "EX-1", served)
    order = live.profile.construction.abandoned_order_compliance
    assert order.unconfirmed  # 14 to 20 days: the Building Inspector's order states it
    assert live.clock("EX-1").deadline == datetime(2027, 3, 23, 0, 0, tzinfo=CHICAGO)
    live.runner.advance(datetime(2027, 3, 23, 0, 1, tzinfo=CHICAGO))
    [abatement] = live.cases.bills.list_abatements()
    assert abatement.key == "inspection:EX-1/abatement"


def test_another_village_runs_its_own_periods(tmp_path: Path) -> None:
    live = _live(tmp_path, EXAMPLE_PROFILE)
    done = datetime(2026, 12, 2, 10, 0, tzinfo=CHICAGO)
    live.act("record_demolition_completed", "DM-1", done, frontage="main-st-101",
             at=done.isoformat())  # fmt: skip
    assert live.clock("DM-1").deadline == datetime(2027, 1, 17, 0, 0, tzinfo=CHICAGO)  # 45 days
    live.found("MB-1", T0, "main-st-101", "mailbox")
    live.act("inspection_notice_delivered", "MB-1", T0)
    assert live.clock("MB-1").deadline == T0 + timedelta(hours=48)


def test_bad_entries_and_steps_out_of_order_are_refused_with_their_reason(live: Live) -> None:
    live.found("X-1", T0, "main-st-101", "potholes")
    live.found("X-2", T0, "nowhere", "mailbox")
    live.act("inspection_notice_delivered", "X-3", T0)
    live.found("X-4", T0, "main-st-101", "excavation_fence", fence_height_mm=2000)
    live.act("inspection_notice_delivered", "X-4", T0)
    errors = live.errors()
    assert "rule must be" in str(errors["X-1"])
    assert "unknown frontage" in str(errors["X-2"])
    assert "no inspection" in str(errors["X-3"])
    assert "not awaiting notice" in str(errors["X-4"])


def test_a_restored_engine_resumes_the_inspection_clocks(live: Live) -> None:
    live.found("MB-2", T0, "main-st-101", "mailbox")
    live.act("inspection_notice_delivered", "MB-2", T0 + timedelta(hours=1))
    engine = live.runner.engine
    saved = engine.snapshot()
    fresh = ClockEngine(load_profile(), frontage_specs(live.cases, "clyman"))
    fresh.restore(saved)
    assert fresh.snapshot() == saved
    assert fresh.next_due() == engine.next_due()
    until = T0 + timedelta(days=2)
    assert fresh.advance(until) == engine.advance(until) != []
    state = json.loads(saved)
    del state["inspections"]  # a snapshot written before these clocks
    older = ClockEngine(load_profile(), frontage_specs(live.cases, "clyman"))
    older.restore(json.dumps(state).encode())
    assert older.inspections.clocks == {}


def test_the_command_line_records_findings_and_shows_their_clocks(tmp_path: Path) -> None:
    system = seeded(tmp_path)
    cli = CliRunner()
    common = ["--who", WHO, "--config", str(system.config)]
    runner = system.runner("inspector-rules-cli")
    for args in (
        ["finding", "--id", "FE-9", "--frontage", "main-st-101", "--rule", "excavation_fence",
         "--at", "2026-12-02T09:00-06:00", "--description", "trench, no fence"],
        ["demolition", "--id", "DM-9", "--frontage", "main-st-103",
         "--at", "2026-12-02T10:00-06:00"],
        ["excavation", "--id", "EX-9", "--frontage", "main-st-105",
         "--at", "2026-12-02T10:00-06:00"],
    ):  # fmt: skip
        result = cli.invoke(street_app, [*args, *common])
        assert result.exit_code == 0, result.output
    runner.tick()
    # The period runs from the service of the notice the register holds for the finding.
    issued = cli.invoke(notices_app, ["issue", "finding", "--id", "FE-9",
                                      "--at", "2026-12-02T09:30-06:00", *common])  # fmt: skip
    assert issued.exit_code == 0, issued.output
    served = cli.invoke(street_app, ["noticed", "--id", "FE-9", "--at", "2026-12-02T10:00-06:00",
                                     *common])  # fmt: skip
    assert served.exit_code == 0, served.output
    runner.tick()
    status = cli.invoke(street_app, ["status", "--config", str(system.config)])
    assert status.exit_code == 0, status.output
    assert "FE-9 (main-st-101): notice_period" in status.output
    assert "DM-9 (main-st-103): period_running" in status.output
    assert "EX-9 (main-st-105): period_running" in status.output
