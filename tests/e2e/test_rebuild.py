"""The engine's saved state lost mid-storm: analytics refuses, ``--rebuild`` makes it again.

The first storm's first 1,000 readings go into the time-series store (as ingest
stores them) and through a runner built as ``sidewalk analytics`` builds it; both
notices are issued and the clerk records the first one served by hand. Then the
saved state's row is deleted from the case database. ``sidewalk analytics`` must
refuse in one line; ``sidewalk analytics --rebuild`` must make the state again from
the stored readings and the recorded action, finding both notices on record (the
same numbers, no row twice, nothing queued to send); then analytics starts on a
real Mosquitto and carries on with the rest of the storm as the lost state would
have, and takes a new action on the case served before the loss.
"""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sidewalk.alerts.delivery import record_notice_delivery
from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.runner import split_identity
from sidewalk.cli import app
from sidewalk.core.contract import AnyReading, topic_for
from sidewalk.core.mqtt import MqttClient, MqttSettings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import CaseStore, NoticeRecord
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from sidewalk.system import build_analytics, frontage_specs, open_cases, seed_scenario
from tests.harness.mosquitto import MosquittoServer

pytestmark = pytest.mark.services
CLIENT_ID = "rebuild-test"
SPLIT = 1_000  # past both notices' decision (reading 893), before the storm's end
CLI_ENV = {"COLUMNS": "300"}  # the one line unwrapped


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """The commands run here in-process set the root logger up as a service does: put it
    back, so later tests' command output carries no log lines."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def rows(cases: CaseStore) -> dict[str, Any]:
    """Every record the rebuild could make twice, as comparable values."""
    clocks = cases.clocks.list()
    history = cases.clocks.history
    transitions = [(t.clock_id, t.to_state, t.at) for c in clocks for t in history(c.id)]
    return {
        "clocks": sorted((c.key, c.state) for c in clocks),
        "transitions": sorted(transitions),
        "violations": sorted(v.key for v in cases.clocks.list_violations()),
        "notices": sorted((n.number, n.kind, n.frontage_id) for n in cases.notices.list()),
        "abatements": len(cases.bills.list_abatements()),
        "deliveries": len(cases.notices.list_deliveries()),
        "audit": sorted((a.action, a.subject) for a in cases.audit.list()),
    }


def case_states(engine: ClockEngine) -> dict[str, str]:
    return {key: str(case.state) for key, case in engine.enforcement.cases.items()}


def one_line(output: str) -> str:
    [line] = [x for x in output.splitlines() if x.strip()]
    return line


@dataclass
class Lost:
    """The village after the first part of the storm, its saved state deleted."""

    profile: Profile
    cases: CaseStore
    config: Path
    mqtt: MqttSettings
    site: str
    device: str
    rest: list[AnyReading]  # the storm's readings not yet seen
    notices: list[NoticeRecord]
    state: bytes  # the engine's state that was lost
    rows: dict[str, Any]


@pytest.fixture(scope="module")
def street(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first storm's street registered in a case database (made once, copied)."""
    path = tmp_path_factory.mktemp("rebuild-street") / "cases.sqlite3"
    profile = load_profile()
    cases = open_cases(f"sqlite:///{path}", profile)
    seed_scenario(cases, load_scenario("first-storm"), profile=profile)
    cases.close()
    return path


def storm_then_loss(
    tmp_path: Path, broker: MosquittoServer, street: Path, *, seen: int = SPLIT, serve: bool = True
) -> Lost:
    """The store holds the storm's first ``SPLIT`` readings; analytics saw ``seen`` of
    them (and, with ``serve``, the clerk served the first notice) before its saved state
    was deleted."""
    profile = load_profile()
    story = load_scenario("first-storm")
    site, device = story.scenario.site, story.scenario.device
    readings = to_readings(story, expand(story))
    first = readings[:SPLIT]
    database = tmp_path / "cases.sqlite3"
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        f'site = "{site}"\ndata_dir = "{tmp_path}"\n'
        f'[mqtt]\nurl = "mqtt://{broker.host}:{broker.port}"\n'
        f'[cases]\ndatabase_url = "sqlite:///{database}"\n'
        f'[timeseries]\nsqlite_path = "{tmp_path / "timeseries.sqlite3"}"\n'
        f'[analytics]\nclient_id = "{CLIENT_ID}"\n'
    )
    shutil.copyfile(street, database)
    cases = open_cases(f"sqlite:///{database}", profile)
    store = SqliteTimeSeriesStore(tmp_path / "timeseries.sqlite3")
    store.write_batch(first, sites={device: site})
    store.close()
    mqtt = MqttSettings(host=broker.host, port=broker.port, client_id=CLIENT_ID)
    runner = build_analytics(cases, profile, mqtt, site=site, mode="stream", persist_jobs=False)
    for reading in first[:seen]:
        runner.handle(reading)
    notices = cases.notices.list()
    if serve:
        served = notices[0].issued_at + timedelta(minutes=40)
        assert served < first[-1].event_time
        record_notice_delivery(cases, notices[0].id, served, "Pat Clerk", "hand", profile=profile)
    runner.tick()  # applies the service and saves the state
    assert cases.clocks.load_engine_snapshot(CLIENT_ID) is not None
    with sqlite3.connect(database) as db:
        db.execute("DELETE FROM engine_snapshots WHERE name = ?", (CLIENT_ID,))
    return Lost(
        profile, cases, config, mqtt, site, device, readings[SPLIT:], notices,
        runner.engine.snapshot(), rows(cases),
    )  # fmt: skip


def test_a_lost_state_is_refused_then_rebuilt_from_the_stored_readings(
    tmp_path: Path, broker: MosquittoServer, street: Path
) -> None:
    lost = storm_then_loss(tmp_path, broker, street)
    cases, site = lost.cases, lost.site
    assert len(lost.notices) == 2
    args = ["analytics", "--event-time", "--config", str(lost.config)]
    refused = CliRunner().invoke(app, args, env=CLI_ENV)
    assert refused.exit_code == 2, refused.output
    line = one_line(refused.output)
    assert line.startswith(
        "analytics: the case database holds 2 open cases, 2 notices and 4 clock records (1 "
        f"still running) for site {site} but no saved engine state for client id "
        f"'{CLIENT_ID}' (was analytics.client_id changed?). Nothing was started."
    ), line
    assert line.endswith(f"run: sidewalk analytics --config {lost.config} --event-time --rebuild")
    assert cases.clocks.load_engine_snapshot(CLIENT_ID) is None

    rebuilt = CliRunner().invoke(app, [*args, "--rebuild"], env=CLI_ENV)
    assert rebuilt.exit_code == 0, rebuilt.output
    assert one_line(rebuilt.output).startswith(
        "rebuilt from 1,000 readings (1 storm) and 1 recorded action; 2 notices already on "
        f"record, 0 new; state saved for client id '{CLIENT_ID}'. Start analytics with:"
    ), rebuilt.output
    # Found, not made again: the same notice numbers, no row twice, nothing queued.
    assert rows(cases) == lost.rows
    assert cases.notices.list_delivery_jobs() == []
    saved = cases.clocks.load_engine_snapshot(CLIENT_ID)
    assert saved is not None
    assert saved.startswith(f'{{"identity":{{"site":"{site}","database":"')
    # The state made again is the lost one: every clock, case, detector and progress
    # mark. Only the reading gate differs: the test fed the first runner by hand, past
    # the gate; the rebuild took the readings through it, as live, so a reading the
    # broker brings again after the restart is known.
    was, made = json.loads(lost.state), json.loads(split_identity(saved)[1])
    assert {k: v for k, v in made.items() if k != "gate"} == {
        k: v for k, v in was.items() if k != "gate"
    }
    assert made["gate"]["spaces"][f"{lost.device}/"]["runs"] == [[1, SPLIT]]
    carries_on(lost)


def carries_on(lost: Lost) -> None:
    """Analytics starts on the rebuilt state and goes on as the lost one would have."""
    cases, rest = lost.cases, lost.rest
    reference = ClockEngine(lost.profile, frontage_specs(cases, lost.site))
    reference.restore(lost.state)
    runner = build_analytics(
        cases, lost.profile, lost.mqtt, site=lost.site, mode="stream", persist_jobs=False,
        tick_seconds=0.2,
    )  # fmt: skip
    runner.start()
    assert case_states(runner.engine) == case_states(reference)
    for reading in rest:
        reference.step(reading)
    publisher = MqttClient(
        MqttSettings(host=lost.mqtt.host, port=lost.mqtt.port, client_id="rebuild-pole")
    )
    publisher.connect()
    served = cases.clocks.get_violation(lost.notices[0].violation_id or 0)
    try:
        for reading in rest:
            topic = topic_for(lost.site, lost.device, reading.stream)
            publisher.publish_and_wait(topic, reading.to_json())
        assert runner.wait_for(lambda: runner.processed == len(rest), 30)
        assert case_states(runner.engine) == case_states(reference)
        assert runner.engine.now == reference.now == rest[-1].event_time
        # The case served before the loss goes on: the inspector finds the walk cleared.
        cases.actions.record("inspected_clear", served.key, rest[-1].event_time, "Inspector")
        assert runner.wait_for(lambda: case_states(runner.engine)[served.key] == "cured", 10)
    finally:
        publisher.disconnect()
        runner.stop()
    assert cases.clocks.get_violation(served.id).status == "cured"
    assert [n.number for n in cases.notices.list()] == [n.number for n in lost.notices]
    cases.close()


def test_what_the_stored_readings_decide_and_the_records_lack_is_recorded_not_sent(
    tmp_path: Path, broker: MosquittoServer, street: Path
) -> None:
    """Analytics stopped before the deadline while ingest kept storing, then its state
    was lost: the rebuild decides the two violations the records lack, records their
    notices (rendered, for the clerk) and says so, and queues nothing. Run again (on
    live time) after the clerk served the first notice, it finds them on record and
    applies the service, at its own time between the stored readings."""
    lost = storm_then_loss(tmp_path, broker, street, seen=120, serve=False)
    assert lost.notices == []
    args = ["analytics", "--config", str(lost.config), "--rebuild"]
    first = CliRunner().invoke(app, args, env=CLI_ENV)
    assert first.exit_code == 0, first.output
    numbers = [n.number for n in lost.cases.notices.list()]
    assert len(numbers) == 2
    assert one_line(first.output).startswith(
        "rebuilt from 1,000 readings (1 storm); 0 notices already on record, 2 new "
        f"({', '.join(numbers)}: the readings call for them and the case database did not "
        "have them; nothing was sent: review them in `sidewalk notices register` before "
        "`sidewalk notices queue`); also not on record before, now recorded: "
    ), first.output
    assert all(n.body_text for n in lost.cases.notices.list())
    assert lost.cases.notices.list_delivery_jobs() == []
    recorded = rows(lost.cases)
    cases, notice = lost.cases, lost.cases.notices.list()[0]
    served = notice.issued_at + timedelta(minutes=40)
    record_notice_delivery(cases, notice.id, served, "Pat Clerk", "hand", profile=lost.profile)
    [action] = cases.actions.pending()
    again = CliRunner().invoke(app, args, env=CLI_ENV)
    assert again.exit_code == 0, again.output
    assert one_line(again.output).startswith(
        "rebuilt from 1,000 readings (1 storm) and 1 recorded action; 2 notices already on"
        " record, 0 new; also not on record before, now recorded: 1 clock record, "
    ), again.output
    now = rows(cases)
    for kind in ("violations", "notices", "abatements"):
        assert now[kind] == recorded[kind]
    assert set(recorded["transitions"]) < set(now["transitions"])
    assert cases.actions.get(action.id).applied_at is not None
    assert cases.actions.get(action.id).error is None
    saved = cases.clocks.load_engine_snapshot(CLIENT_ID)
    assert saved is not None
    served_case = cases.clocks.get_violation(notice.violation_id or 0).key
    assert json.loads(split_identity(saved)[1])["cases"][served_case]["state"] == "notice_period"
    assert cases.notices.list_delivery_jobs() == []
    cases.close()


@pytest.mark.parametrize("page", [1, 7])
def test_the_stored_readings_come_in_event_time_order_once_each(tmp_path: Path, page: int) -> None:
    """``--rebuild`` reads the store a page at a time; the storm's instants hold one
    reading or four, so a page of 1 or 7 cuts through instants."""
    from sidewalk.cli.services import _stored_readings

    story = load_scenario("first-storm")
    device = story.scenario.device
    readings = to_readings(story, expand(story))[:40]
    store = SqliteTimeSeriesStore(tmp_path / "timeseries.sqlite3")
    try:
        store.write_batch(list(reversed(readings)), sites={device: story.scenario.site})
        got = [r for batch in _stored_readings(store, {device}, page=page) for r in batch]
        assert [r for batch in _stored_readings(store, {"another-pole"}) for r in batch] == []
    finally:
        store.close()
    key = [(r.ts, r.device, r.seq) for r in readings]
    assert [(r.ts, r.device, r.seq) for r in got] == sorted(key)
    assert len({r.seq for r in got}) == len(readings)
