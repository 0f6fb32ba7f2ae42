"""§ 370-10 B–G through the runner and the case records.

People's actions become records and notices.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.system import build_analytics
from tests.harness.storm import StormTemplate, replay_once, restore

UNUSED_BROKER = MqttSettings(host="127.0.0.1", port=1, client_id="records-test")


@pytest.fixture(scope="module")
def storm_template(tmp_path_factory: pytest.TempPathFactory) -> StormTemplate:
    """first-storm replayed once for the module (tests/harness/storm.py)."""
    database = tmp_path_factory.mktemp("records-storm") / "cases.sqlite3"
    return replay_once(database, load_profile(), UNUSED_BROKER)


@pytest.fixture
def stormed(storm_template: StormTemplate, tmp_path: Path) -> tuple[AnalyticsRunner, CaseStore]:
    """first-storm fed through a stream-mode runner (no broker needed for handle/tick):
    a copy of the module's replay, with a runner resumed from its engine state."""
    return restore(storm_template, tmp_path / "cases.sqlite3", load_profile(), UNUSED_BROKER)


def key_for(cases: CaseStore, frontage: str) -> str:
    [violation] = [
        v
        for n in cases.notices.list(frontage_id=frontage)
        if (v := cases.clocks.get_violation(n.violation_id or 0))
    ]
    return violation.key


def test_hazard_confirmed_and_delivered_then_village_abates(
    stormed: tuple[AnalyticsRunner, CaseStore],
) -> None:
    runner, cases = stormed
    key = key_for(cases, "main-st-105")
    decided = runner.engine.now
    assert decided is not None
    confirmed = decided + timedelta(minutes=30)
    cases.actions.record("confirm_hazard", key, confirmed, "Officer Pat Quinn")
    runner.tick()
    hazard = cases.notices.list(kind="hazard_notice")
    assert [n.frontage_id for n in hazard] == ["main-st-105"]
    assert hazard[0].body_text is not None
    assert "Officer Pat Quinn" in hazard[0].body_text
    assert "within 2 hours" in hazard[0].body_text
    delivered = confirmed + timedelta(minutes=45)
    cases.actions.record("record_delivery", key, delivered, "Officer Pat Quinn")
    runner.tick()
    runner.advance(delivered + timedelta(hours=2))
    abatement = cases.bills.abatement_by_key(f"{key}/abatement")
    assert abatement is not None
    assert abatement.ordered_at == delivered + timedelta(hours=2)
    actions = cases.actions.list(target=key)
    assert [a.error for a in actions] == [None, None]
    audit = [a.action for a in cases.audit.list(subject=key)]
    assert "action.confirm_hazard" in audit
    assert "action.record_delivery" in audit
    assert cases.audit.verify_chain().ok


def test_an_action_out_of_order_is_kept_with_its_reason(
    stormed: tuple[AnalyticsRunner, CaseStore],
) -> None:
    runner, cases = stormed
    key = key_for(cases, "main-st-103")
    cases.actions.record("bill_received", key, datetime(2026, 12, 20, tzinfo=UTC), "Clerk Lee")
    runner.tick()
    [action] = cases.actions.list(target=key)
    assert action.applied_at is not None
    assert action.error is not None
    assert "no bill outstanding" in action.error
    assert cases.actions.pending() == []


def test_offenses_count_every_started_24_hours(stormed: tuple[AnalyticsRunner, CaseStore]) -> None:
    runner, cases = stormed
    key = key_for(cases, "main-st-105")
    violation = cases.clocks.violation_by_key(key)
    assert violation is not None
    assert violation.offense_count == 1
    missed = datetime.fromisoformat(str(violation.evidence["deadline"]))
    runner.advance(missed + timedelta(hours=49))
    violation = cases.clocks.violation_by_key(key)
    assert violation is not None
    assert violation.offense_count == 3


def test_a_restarted_runner_resumes_from_its_snapshot(
    stormed: tuple[AnalyticsRunner, CaseStore], tmp_path: Path
) -> None:
    runner, cases = stormed
    runner.tick()  # saves the snapshot
    again = build_analytics(
        cases, load_profile(), UNUSED_BROKER, site="clyman", mode="stream", persist_jobs=False
    )
    saved = cases.clocks.load_engine_snapshot(UNUSED_BROKER.client_id)
    assert saved is not None
    again.engine.restore(saved.encode())
    assert again.engine.snapshot() == runner.engine.snapshot()
    assert {k: c.state for k, c in again.engine.enforcement.cases.items()} == {
        k: "notice_issued" for k in runner.engine.enforcement.cases
    }


def test_an_action_applied_just_before_a_crash_is_not_applied_twice(
    stormed: tuple[AnalyticsRunner, CaseStore],
) -> None:
    runner, cases = stormed
    key = key_for(cases, "main-st-105")
    assert runner.engine.now is not None
    cases.actions.record("confirm_hazard", key, runner.engine.now, "Officer Pat Quinn")
    # The runner saves the state that includes the action, then dies before marking it.
    acted, _marks = runner._apply_actions()
    runner._save()
    assert acted
    again = build_analytics(
        cases, load_profile(), UNUSED_BROKER, site="clyman", mode="stream", persist_jobs=False
    )
    saved = cases.clocks.load_engine_snapshot(UNUSED_BROKER.client_id)
    assert saved is not None
    again.engine.restore(saved.encode())
    again.tick()
    [action] = cases.actions.list(target=key)
    assert action.applied_at is not None
    assert action.error is None  # a second confirm_hazard would have been refused
    assert len(cases.notices.list(kind="hazard_notice")) == 1
