"""The cold-weather clocks running live: readings and staff records through the real runner."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.clocks.events import Transition
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import WeatherReading
from sidewalk.core.profile import load_profile
from sidewalk.core.units import f_to_c
from sidewalk.storage.cases import CaseStore
from sidewalk.system import frontage_specs
from tests.clocks.live import findings, seeded

POLE = "pole-main-01"  # first-storm's pole: the default probe of its frontages' site
T0 = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)  # inside Nov 15 – Apr 1
WHO = "Dana Reyes"


@dataclass
class Live:
    runner: AnalyticsRunner
    cases: CaseStore
    seq: int = 0

    def ground(self, at: datetime, temp_c: float) -> None:
        self.seq += 1
        self.runner.handle(
            WeatherReading(
                device=POLE,
                seq=self.seq,
                ts=to_ms(at),
                ground_temp_c=temp_c,
                ground_probe_depth_mm=300,
            )
        )

    def air(self, at: datetime, temp_f: float) -> None:
        self.seq += 1
        self.runner.handle(
            WeatherReading(device=POLE, seq=self.seq, ts=to_ms(at), air_temp_c=f_to_c(temp_f))
        )

    def pour(self, pour_id: str, at: datetime, **detail: Any) -> None:
        base = {"kind": "sidewalk", "site": POLE, "at": at.isoformat(), "frontage": "main-st-103"}
        self.cases.actions.record("record_pour", pour_id, at, WHO, {**base, **detail})
        self.runner.tick()

    def findings(self, subject: str) -> list[dict[str, Any]]:
        return findings(self.cases, subject)


@pytest.fixture
def live(tmp_path: Path) -> Live:
    system = seeded(tmp_path)
    return Live(system.runner("cold-live-test"), system.cases)


def test_frozen_ground_probe_opens_a_frozen_subgrade_record_per_frontage(live: Live) -> None:
    live.ground(T0, 3.0)
    live.ground(T0 + timedelta(hours=1), -1.5)
    clocks = live.cases.clocks.list(kind="frozen_subgrade")
    assert [c.frontage_id for c in clocks] == ["main-st-101", "main-st-103", "main-st-105"]
    assert {c.state for c in clocks} == {"frozen"}
    assert {c.key for c in clocks} == {f"{f}/frozen_subgrade/{POLE}" for f in
                                       ("main-st-101", "main-st-103", "main-st-105")}  # fmt: skip
    assert [r.name for r in clocks[0].rules] == ["cold_weather.frozen_subgrade_at_or_below"]
    history = live.cases.clocks.history(clocks[0].id)
    assert [(h.to_state, h.at) for h in history] == [
        ("thawed", T0),
        ("frozen", T0 + timedelta(hours=1)),
    ]
    assert live.runner.engine.cold.frozen_sites() == [POLE]


def test_pour_in_cold_air_keeps_traffic_off_96_hours(live: Live) -> None:
    live.pour("WO-1", T0)
    [clock] = live.cases.clocks.list(kind="keep_off")
    assert clock.frontage_id == "main-st-103"
    assert clock.deadline == T0 + timedelta(hours=48)  # normal until a cold reading
    live.air(T0 + timedelta(hours=2), 41.0)
    [clock] = live.cases.clocks.list(kind="keep_off")
    assert (clock.state, clock.deadline) == ("keep_off_cold", T0 + timedelta(hours=96))
    assert clock.cause.who == WHO
    live.runner.advance(T0 + timedelta(hours=95))
    assert live.cases.clocks.list(kind="keep_off", active_only=True)
    live.runner.advance(T0 + timedelta(hours=97))
    [clock] = live.cases.clocks.list(kind="keep_off")
    assert (clock.state, clock.closed_at) == ("ended", T0 + timedelta(hours=96))


def test_pour_in_normal_air_keeps_traffic_off_48_hours(live: Live) -> None:
    live.pour("WO-2", T0)
    live.air(T0 + timedelta(hours=2), 60.0)
    live.runner.advance(T0 + timedelta(hours=49))
    [clock] = live.cases.clocks.list(kind="keep_off")
    assert (clock.state, clock.closed_at) == ("ended", T0 + timedelta(hours=48))


def test_pour_on_frozen_subgrade_with_a_cold_forecast_is_found(live: Live) -> None:
    live.ground(T0 - timedelta(hours=1), -2.0)
    forecast = [{"at": (T0 + timedelta(hours=h)).isoformat(), "temp_f": 20.0} for h in (0, 80)]
    live.pour("WO-3", T0, forecast=forecast)
    rules = {(f["action"], f["rule"]) for f in live.findings("pour:WO-3")}
    assert rules == {
        ("finding.violation", "cold_weather.frozen_subgrade_at_or_below"),
        ("finding.violation", "cold_weather.pour_min_temp"),
    }


def test_permit_opened_in_frozen_ground_window_without_emergency_is_found(live: Live) -> None:
    for permit_id, emergency in (("SO-1", False), ("SO-2", True)):
        detail = {
            "street": "Main St 100 block", "opened_at": T0.isoformat(),
            "emergency": emergency, "frontage": "main-st-101",
        }  # fmt: skip
        live.cases.actions.record("record_permit", permit_id, T0, WHO, detail)
    live.runner.tick()
    window = "street_openings.frozen_ground_window"
    assert [f["action"] for f in live.findings("permit:SO-1") if f["rule"] == window] == [
        "finding.violation"
    ]
    assert not [f for f in live.findings("permit:SO-2") if f["rule"] == window]
    permits = live.cases.clocks.list(kind="opening_permit")
    assert [(c.key, c.state) for c in permits] == [
        ("main-st-101/opening_permit/SO-1", "valid"),
        ("main-st-101/opening_permit/SO-2", "valid"),
    ]
    assert all(c.deadline is not None and c.deadline > T0 + timedelta(days=30) for c in permits)


def test_a_restored_engine_resumes_every_cold_clock(live: Live) -> None:
    live.ground(T0 - timedelta(hours=1), -2.0)
    live.pour("WO-4", T0)
    live.cases.actions.record(
        "record_permit", "SO-3", T0, WHO, {"street": "Main St", "opened_at": T0.isoformat()}
    )
    live.runner.tick()
    engine = live.runner.engine
    saved = engine.snapshot()
    fresh = ClockEngine(load_profile(), frontage_specs(live.cases, "clyman"))
    fresh.restore(saved)
    assert fresh.snapshot() == saved
    assert fresh.next_due() == engine.next_due() == T0 + timedelta(hours=48)
    later = [
        WeatherReading(device=POLE, seq=100, ts=to_ms(T0 + timedelta(hours=3)), air_temp_c=2.0),
        *(
            WeatherReading(
                device=POLE,
                seq=101 + h,
                ts=to_ms(T0 + timedelta(hours=4 + h)),
                ground_temp_c=1.0,
                ground_probe_depth_mm=300,
            )
            for h in range(3)  # above the deadband for the whole dwell: thawed
        ),
    ]
    until = T0 + timedelta(days=40)
    events = [*engine.feed(later), *engine.advance(until)]
    again = [*fresh.feed(later), *fresh.advance(until)]
    assert again == events
    assert {(e.clock, e.to_state) for e in events if isinstance(e, Transition)} >= {
        ("keep_off", "keep_off_cold"), ("keep_off", "ended"), ("frozen_subgrade", "thawed"),
        ("opening_permit", "expired"),
    }  # fmt: skip
    assert fresh.snapshot() == engine.snapshot()


def test_a_pour_with_a_bad_detail_is_kept_with_its_error(live: Live) -> None:
    live.pour("WO-5", T0, kind="asphalt")
    live.cases.actions.record("record_pour", "WO-6", T0, WHO, {"kind": "sidewalk", "site": POLE})
    live.cases.actions.record("record_permit", "SO-4", T0, WHO, {"opened_at": T0.isoformat()})
    live.runner.tick()
    errors = {a.target: a.error for a in live.cases.actions.list()}
    assert "pour kind" in str(errors["WO-5"])
    assert "at is required" in str(errors["WO-6"])
    assert "street" in str(errors["SO-4"])
    assert live.cases.clocks.list(kind="keep_off") == []
    assert live.runner.engine.cold.keep_off == {}


def test_a_snapshot_from_before_the_cold_clocks_restores_with_them_empty(live: Live) -> None:
    live.pour("WO-7", T0)
    state = json.loads(live.runner.engine.snapshot())
    del state["cold"]  # what a runner saved before this change looks like
    fresh = ClockEngine(load_profile(), frontage_specs(live.cases, "clyman"))
    fresh.restore(json.dumps(state).encode())
    assert fresh.cold.keep_off == {}
    assert fresh.now == live.runner.engine.now


def test_an_opening_permit_record_closes_on_expiry_and_a_late_renewal_opens_another(
    live: Live,
) -> None:
    detail = {"street": "Main St", "opened_at": T0.isoformat(), "frontage": "main-st-101"}
    live.cases.actions.record("record_permit", "SO-8", T0, WHO, detail)
    live.runner.tick()
    [clock] = live.cases.clocks.list(kind="opening_permit")
    due = clock.deadline
    assert due is not None
    live.runner.advance(due + timedelta(hours=1))
    [clock] = live.cases.clocks.list(kind="opening_permit")
    assert (clock.state, clock.closed_at) == ("expired", due)
    expired = live.cases.clocks.history(clock.id)[-1]
    assert expired.detail["cause"] == f"permits.opening_permit_validity ended at {due.isoformat()}"
    renewed = due + timedelta(hours=2)
    live.cases.actions.record("record_permit", "SO-8", renewed, WHO, {**detail, "renewals": 1})
    live.runner.tick()
    records = live.cases.clocks.list(kind="opening_permit")
    assert [(c.key, c.state, c.closed_at is None) for c in records] == [
        ("main-st-101/opening_permit/SO-8", "expired", False),
        ("main-st-101/opening_permit/SO-8/renewal-1", "valid", True),
    ]
    assert [a.error for a in live.cases.actions.list()] == [None, None]


def test_a_pour_applied_later_is_judged_on_the_ground_at_its_own_time(live: Live) -> None:
    for h in range(12):  # frozen until T0 + 4 h, then well above the band
        live.ground(T0 + timedelta(hours=h), -1.5 if h < 4 else 2.0)
    frozen_rule = "cold_weather.frozen_subgrade_at_or_below"
    live.pour("WO-20", T0 + timedelta(hours=1))  # entered at T0 + 11 h, poured on frozen ground
    live.pour("WO-21", T0 + timedelta(hours=10))  # poured on thawed ground
    [found] = [f for f in live.findings("pour:WO-20") if f["rule"] == frozen_rule]
    assert found["action"] == "finding.violation"
    assert found["key"] == f"pour:WO-20/{frozen_rule}/{(T0 + timedelta(hours=1)).isoformat()}"
    assert [f for f in live.findings("pour:WO-21") if f["rule"] == frozen_rule] == []
