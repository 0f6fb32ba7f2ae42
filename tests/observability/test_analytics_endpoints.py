"""Analytics on a real Mosquitto: clocks by state as the storm moves them, and its probes."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from sidewalk.analytics.metrics import analytics_observability
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.contract import AnyReading, topic_for
from sidewalk.core.mqtt import MqttClient
from sidewalk.core.profile import load_profile
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import CaseStore
from sidewalk.system import build_analytics, open_cases, seed_scenario
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import settings, slug
from tests.observability.scrape import eventually, probe, samples, scrape, value

pytestmark = pytest.mark.services

STORM = load_scenario("first-storm")
FULL = "database or disk is full"


@pytest.fixture
def cases(tmp_path: Path) -> Iterator[CaseStore]:
    store = open_cases(f"sqlite:///{tmp_path / 'cases.db'}", load_profile())
    seed_scenario(store, STORM)
    yield store
    store.close()


def publish(client: MqttClient, readings: list[AnyReading]) -> None:
    site = STORM.scenario.site
    for reading in readings[:-1]:
        client.publish(topic_for(site, reading.device, reading.stream), reading.to_json())
    last = readings[-1]
    assert client.publish_and_wait(topic_for(site, last.device, last.stream), last.to_json())


def clocks(text: str) -> dict[tuple[str, str], float]:
    """``sidewalk_clocks`` as {(kind, state): count}."""
    out: dict[tuple[str, str], float] = {}
    for (name, labels), v in samples(text).items():
        if name == "sidewalk_clocks":
            label = dict(labels)
            out[label["kind"], label["state"]] = v
    return out


def engine_counts(runner: AnalyticsRunner) -> dict[tuple[str, str], float]:
    """What the engine holds, counted here straight from its clocks and cases."""
    counts: Counter[tuple[str, str]] = Counter()
    for clock in runner.engine.clocks.values():
        counts["clearing", clock.state] += 1
    for case in runner.engine.enforcement.cases.values():
        counts["enforcement", case.state] += 1
    for site in runner.engine.cold.subgrade.values():
        counts["frozen_subgrade", site.state] += 1
    return {k: float(v) for k, v in counts.items()}


def test_clocks_by_state_follow_the_storm(broker: MosquittoServer, cases: CaseStore) -> None:
    profile = load_profile()
    runner = build_analytics(
        cases,
        profile,
        settings(broker.host, broker.port, slug("analytics")),
        site=STORM.scenario.site,
        mode="stream",
        persist_jobs=False,
    )
    readings = to_readings(STORM, expand(STORM))
    obs = analytics_observability(runner)
    server = obs.serve(port=0)
    sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
    try:
        # Not started: no worker, no broker session; the database answers.
        status, body = probe(server.url, "/readyz")
        assert status == 503
        assert body["checks"] == {
            "broker": "not connected to the broker",
            "worker": f"thread(s) not running: analytics-{runner.id}",
            "database": "ok",
        }
        assert probe(server.url, "/healthz")[0] == 503
        runner.start()
        sender.connect()
        assert probe(server.url, "/readyz") == (
            200,
            {"status": "ok", "checks": {"broker": "ok", "worker": "ok", "database": "ok"}},
        )
        assert probe(server.url, "/healthz")[0] == 200

        # The snow has stopped for all three frontages: three 24-hour clocks run.
        publish(sender, readings[:270])
        assert runner.wait_for(lambda: runner.processed == 270, 30)
        text = scrape(server.url)
        assert clocks(text) == engine_counts(runner)
        assert clocks(text)["clearing", "clearing_period"] == 3
        assert value(text, "sidewalk_analytics_processed_readings_total") == 270
        assert value(text, "sidewalk_analytics_pending_messages") == 0
        event_time = value(text, "sidewalk_analytics_event_time_seconds")
        assert event_time == readings[269].event_time.timestamp()

        # The storm's end: A complied, B and C in violation with notices issued.
        publish(sender, readings[270:])
        assert runner.wait_for(lambda: runner.processed == len(readings), 60)
        after = clocks(scrape(server.url))
        assert after == engine_counts(runner)
        assert after["clearing", "complied"] == 1
        assert after["clearing", "violation"] == 2
        assert after["enforcement", "notice_issued"] == 2
        assert ("clearing", "clearing_period") not in after
    finally:
        sender.disconnect()
        server.stop()
        runner.stop()


def test_readyz_is_red_while_the_case_database_refuses_writes(
    broker: MosquittoServer, cases: CaseStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk: every batch fails to record while the database still answers a ping."""
    runner = build_analytics(
        cases,
        load_profile(),
        settings(broker.host, broker.port, slug("analytics")),
        site=STORM.scenario.site,
        mode="stream",
        persist_jobs=False,
    )
    readings = to_readings(STORM, expand(STORM))
    server = analytics_observability(runner).serve(port=0)
    sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
    save = cases.clocks.save_engine_snapshot

    def disk_full(*args: object, **kw: object) -> None:
        # What SQLite raises through SQLAlchemy when the disk is full.
        raise OperationalError("UPDATE engine_snapshots", {}, sqlite3.OperationalError(FULL))

    try:
        runner.start()
        sender.connect()
        publish(sender, readings[:10])
        assert runner.wait_for(lambda: runner.processed == 10, 10)
        assert probe(server.url, "/readyz")[0] == 200
        monkeypatch.setattr(cases.clocks, "save_engine_snapshot", disk_full)
        publish(sender, readings[10:20])
        assert eventually(lambda: probe(server.url, "/readyz")[0] == 503, 10)
        problem = probe(server.url, "/readyz")[1]["checks"]["database"]
        assert "recording to the case database failing" in problem
        assert FULL in problem
        assert "UPDATE" not in problem  # one line, not the statement
        assert probe(server.url, "/readyz")[1]["checks"]["broker"] == "ok"
        # Space again: the batch being retried is saved and readiness turns green.
        monkeypatch.setattr(cases.clocks, "save_engine_snapshot", save)
        assert runner.wait_for(lambda: runner.processed >= 20, 10)
        assert eventually(lambda: probe(server.url, "/readyz")[0] == 200, 5)
    finally:
        sender.disconnect()
        server.stop()
        runner.stop()
