"""The § 370-8 obstruction and § 144-17 sweeping clocks running live through the real runner."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.profile import Profile, load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.system import frontage_specs
from tests.clocks.live import findings, seeded, set_frontage

FRONTAGE = "main-st-103"
T0 = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)
# The day before the spring change: 24 h elapsed end an hour later on the wall clock.
BEFORE_DST = datetime(2027, 3, 13, 16, 0, tzinfo=UTC)  # 10:00 CST
WHO = "Pat Inspector"


@dataclass
class Live:
    runner: AnalyticsRunner
    cases: CaseStore
    profile: Profile

    def act(self, kind: str, target: str, at: datetime, /, **detail: Any) -> None:
        self.cases.actions.record(kind, target, at, WHO, detail)
        self.runner.tick()

    def observe(self, obstruction: str, at: datetime, **width: Any) -> None:
        detail = {"frontage": FRONTAGE, "description": "sandwich board", "kind": "fixture"}
        self.act("record_obstruction", obstruction, at, **{**detail, **width})

    def findings(self, subject: str) -> list[dict[str, Any]]:
        return findings(self.cases, subject)


@pytest.fixture
def live(tmp_path: Path) -> Live:
    system = seeded(tmp_path)
    # § 370-8 C: a sandwich board may stand only in front of a commercial property.
    set_frontage(system.cases, FRONTAGE, zone="commercial")
    return Live(system.runner("street-live-test"), system.cases, system.profile)


def test_370_8_C3_a_fixture_narrowing_the_walk_to_2_ft_6_in_is_a_case(live: Live) -> None:
    live.observe("OB-1", T0, clear_width_ft=2, clear_width_in=6)
    rule = live.profile.obstructions.fixture_min_clear_width
    [finding] = live.findings("obstruction:OB-1")
    assert (finding["action"], finding["rule"], finding["citation"]) == (
        "finding.violation", "obstructions.fixture_min_clear_width", rule.citation,
    )  # fmt: skip
    case = live.cases.clocks.violation_by_key("obstruction:OB-1")
    assert case is not None
    assert (case.frontage_id, case.detected_at, case.citation) == (FRONTAGE, T0, rule.citation)
    assert case.evidence["clear_width_mm"] == pytest.approx(762.0)
    [clock] = live.cases.clocks.list(kind="obstruction")
    assert (clock.key, clock.state, clock.deadline) == (f"{FRONTAGE}/obstruction/OB-1",
                                                         "obstructed", None)  # fmt: skip


def test_370_8_C_a_commercial_fixture_leaving_3_ft_is_no_case(live: Live) -> None:
    live.observe(
        "OB-2", T0, clear_width_mm=live.profile.obstructions.fixture_min_clear_width.length_mm
    )
    assert live.findings("obstruction:OB-2") == []
    assert live.cases.clocks.violation_by_key("obstruction:OB-2") is None
    [clock] = live.cases.clocks.list(kind="obstruction")
    assert clock.state == "compliant"


def test_370_8_A_obstruction_leaving_3ft_is_a_violation(live: Live) -> None:
    # A bicycle rack chained to the walk is no temporary fixture: 3 ft, even 4 ft left
    # change nothing (§ 370-8 A), and a residential frontage has no fixture exception.
    three_ft = live.profile.obstructions.fixture_min_clear_width.length_mm
    live.observe("OB-20", T0, kind="other", clear_width_mm=three_ft + 300)
    set_frontage(live.cases, "main-st-101", zone="residential")
    live.act(
        "record_obstruction", "OB-21", T0, frontage="main-st-101", kind="fixture",
        description="sandwich board", clear_width_mm=three_ft + 300,
    )  # fmt: skip
    for key in ("obstruction:OB-20", "obstruction:OB-21"):
        case = live.cases.clocks.violation_by_key(key)
        assert case is not None
        assert case.rule == "obstructions.sidewalk_removal_after_notice"
        [finding] = live.findings(key)
        assert finding["action"] == "finding.violation"
    assert "commercial" in live.findings("obstruction:OB-21")[0]["message"]
    states = {c.key: c.state for c in live.cases.clocks.list(kind="obstruction")}
    assert states == {
        f"{FRONTAGE}/obstruction/OB-20": "obstructed",
        "main-st-101/obstruction/OB-21": "obstructed",
    }


def test_370_8_B_permits_and_authorizations_are_checked_against_the_records(
    live: Live,
) -> None:
    day = T0.astimezone(ZoneInfo("America/Chicago")).date()
    live.act(
        "record_street_privilege", "SP-1", T0 - timedelta(days=1), frontage=FRONTAGE,
        issued_on=day.isoformat(), placed="scaffold", area="sidewalk",
    )  # fmt: skip
    live.act(
        "record_materials_authorization", "BI-7", T0 - timedelta(days=1), frontage=FRONTAGE,
        authorized_from=day.isoformat(), authorized_until=(day + timedelta(days=3)).isoformat(),
    )  # fmt: skip
    live.act(
        "record_permit", "SO-1", T0 - timedelta(days=1), street="Main St 100 block",
        opened_at=(T0 - timedelta(days=1)).isoformat(), emergency=True, frontage=FRONTAGE,
    )  # fmt: skip
    walk = 1219.2
    materials = {"kind": "building_materials", "sidewalk_width_mm": walk, "gutters_clear": True}
    live.observe("OB-30", T0, kind="other", privilege_permit="SP-1", clear_width_mm=0)
    live.observe("OB-31", T0, **materials, materials_authorization="BI-7", clear_width_mm=700)
    live.observe("OB-32", T0, kind="excavation", opening_permit="SO-1")
    # Over half the walk; an authorization past its last day; a permit nobody recorded.
    live.observe("OB-33", T0, **materials, materials_authorization="BI-7", clear_width_mm=500)
    live.observe(
        "OB-34", T0 + timedelta(days=5), **materials, materials_authorization="BI-7",
        clear_width_mm=700,
    )  # fmt: skip
    live.observe("OB-35", T0, kind="other", privilege_permit="SP-404", clear_width_mm=0)
    states = {c.key.rpartition("/")[2]: c.state for c in live.cases.clocks.list(kind="obstruction")}
    assert states == {
        "OB-30": "compliant", "OB-31": "compliant", "OB-32": "compliant",
        "OB-33": "obstructed", "OB-34": "obstructed", "OB-35": "obstructed",
    }  # fmt: skip
    [over] = live.findings("obstruction:OB-33")
    assert over["rule"] == "obstructions.building_materials_max_sidewalk"
    assert "does not cover" in live.findings("obstruction:OB-34")[0]["message"]
    assert "SP-404 is not on record" in live.findings("obstruction:OB-35")[0]["message"]


def test_removal_is_due_24_hours_after_delivery_across_the_dst_change(live: Live) -> None:
    live.observe("OB-3", BEFORE_DST - timedelta(hours=3), clear_width_mm=500)
    live.act("obstruction_notice_delivered", "OB-3", BEFORE_DST)
    [clock] = live.cases.clocks.list(kind="obstruction")
    assert clock.state == "removal_period"
    assert clock.deadline == BEFORE_DST + timedelta(hours=24)
    local = clock.deadline.astimezone(ZoneInfo("America/Chicago"))
    assert (local.hour, local.tzname()) == (11, "CDT")  # 10:00 CST + 24 h elapsed
    assert live.runner.engine.next_due() == clock.deadline


def test_removed_before_the_deadline_closes_it_without_abatement(live: Live) -> None:
    live.observe("OB-4", T0, clear_width_mm=600)
    live.act("obstruction_notice_delivered", "OB-4", T0 + timedelta(hours=1))
    live.act("obstruction_removed", "OB-4", T0 + timedelta(hours=20))
    live.runner.advance(T0 + timedelta(days=3))
    [clock] = live.cases.clocks.list(kind="obstruction")
    assert (clock.state, clock.closed_at) == ("removed", T0 + timedelta(hours=20))
    assert live.cases.bills.list_abatements() == []


def test_not_removed_at_the_deadline_orders_abatement_once(live: Live) -> None:
    live.observe("OB-5", T0, clear_width_mm=600)
    delivered = T0 + timedelta(hours=1)
    live.act("obstruction_notice_delivered", "OB-5", delivered)
    live.runner.advance(delivered + timedelta(hours=23, minutes=59))
    assert live.cases.bills.list_abatements() == []
    live.runner.advance(delivered + timedelta(hours=25))
    [abatement] = live.cases.bills.list_abatements()
    case = live.cases.clocks.violation_by_key("obstruction:OB-5")
    assert case is not None
    assert (abatement.key, abatement.violation_id, abatement.ordered_at) == (
        "obstruction:OB-5/abatement", case.id, delivered + timedelta(hours=24),
    )  # fmt: skip
    citation = live.profile.obstructions.sidewalk_removal_after_notice.citation
    assert abatement.detail["citation"] == citation
    [clock] = live.cases.clocks.list(kind="obstruction")
    assert clock.state == "overdue"
    # Re-running the same events (a replay after a restart) stores nothing more.
    fresh = ClockEngine(live.profile, frontage_specs(live.cases, "clyman"))
    for action in live.cases.actions.list():
        events = fresh.act(
            parse_action(action.kind, action.target, action.detail, at=action.at,
                         who=action.who)
        )  # fmt: skip
        live.runner.recorder.record(events)
    live.runner.recorder.record(fresh.advance(delivered + timedelta(days=2)))
    assert len(live.cases.bills.list_abatements()) == 1
    assert len(live.cases.clocks.list_violations()) == 1
    live.act("obstruction_removed", "OB-5", delivered + timedelta(hours=30))
    errors = {a.kind: a.error for a in live.cases.actions.list()}
    assert "overdue" in str(errors["obstruction_removed"])


def test_sweeping_done_in_time_closes_it(live: Live) -> None:
    live.act("record_sweeping_incident", "SW-1", T0, frontage=FRONTAGE, location="Main St")
    [clock] = live.cases.clocks.list(kind="sweeping")
    assert (clock.state, clock.deadline) == ("sweeping_period", T0 + timedelta(hours=24))
    assert clock.citation == live.profile.streets.sweeping_deadline.citation
    live.act("sweeping_done", "SW-1", T0 + timedelta(hours=5))
    live.runner.advance(T0 + timedelta(days=2))
    [clock] = live.cases.clocks.list(kind="sweeping")
    assert clock.state == "swept"
    assert live.cases.bills.list_abatements() == []
    assert live.findings("sweeping:SW-1") == []


def test_sweeping_missed_is_a_finding_and_an_abatement_once(live: Live) -> None:
    live.act("record_sweeping_incident", "SW-2", T0, frontage=FRONTAGE, location="Main St")
    live.runner.advance(T0 + timedelta(hours=25))
    live.runner.advance(T0 + timedelta(hours=50))
    [finding] = live.findings("sweeping:SW-2")
    assert finding["rule"] == "streets.sweeping_deadline"
    [abatement] = live.cases.bills.list_abatements()
    assert (abatement.key, abatement.ordered_at) == ("sweeping:SW-2/abatement",
                                                     T0 + timedelta(hours=24))  # fmt: skip
    assert live.cases.clocks.violation_by_key("sweeping:SW-2") is not None
    [clock] = live.cases.clocks.list(kind="sweeping")
    assert clock.state == "overdue"


def test_a_restored_engine_resumes_the_street_clocks(live: Live) -> None:
    live.observe("OB-6", T0, clear_width_mm=600)
    live.act("obstruction_notice_delivered", "OB-6", T0 + timedelta(hours=1))
    live.act("record_sweeping_incident", "SW-3", T0, frontage=FRONTAGE)
    engine = live.runner.engine
    saved = engine.snapshot()
    fresh = ClockEngine(load_profile(), frontage_specs(live.cases, "clyman"))
    fresh.restore(saved)
    assert fresh.snapshot() == saved
    assert fresh.next_due() == engine.next_due() == T0 + timedelta(hours=24)
    until = T0 + timedelta(days=2)
    assert fresh.advance(until) == engine.advance(until) != []
    assert fresh.snapshot() == engine.snapshot()


def test_a_snapshot_from_before_the_street_clocks_restores_with_them_empty(live: Live) -> None:
    live.observe("OB-7", T0, clear_width_mm=600)
    state = json.loads(live.runner.engine.snapshot())
    del state["street"]  # what a runner saved before this change looks like
    fresh = ClockEngine(load_profile(), frontage_specs(live.cases, "clyman"))
    fresh.restore(json.dumps(state).encode())
    assert fresh.street.obstructions == {}
    assert fresh.now == live.runner.engine.now


def test_bad_details_are_kept_with_their_error(live: Live) -> None:
    live.act("record_obstruction", "OB-8", T0, frontage=FRONTAGE, kind="fixture")
    live.act(
        "record_obstruction", "OB-9", T0, frontage="nowhere", kind="fixture", clear_width_mm=500
    )
    live.act(
        "record_obstruction", "OB-10", T0, frontage=FRONTAGE, kind="fixture",
        clear_width_mm="wide",
    )  # fmt: skip
    live.act("obstruction_notice_delivered", "OB-11", T0)
    live.act("record_sweeping_incident", "SW-4", T0)
    errors = {a.target: a.error for a in live.cases.actions.list()}
    assert "clear width is required" in str(errors["OB-8"])
    assert "unknown frontage" in str(errors["OB-9"])
    assert "must be a number" in str(errors["OB-10"])
    assert "no obstruction" in str(errors["OB-11"])
    assert "frontage is required" in str(errors["SW-4"])
    assert live.cases.clocks.list(kind="obstruction") == []
    assert live.runner.engine.street.obstructions == {}
