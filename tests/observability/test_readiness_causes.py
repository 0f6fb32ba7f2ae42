"""Readiness true only when the process can do its work: one test per cause.

Ingest on a real Mosquitto: its writer thread ended, its readings store
refusing writes, its InfluxDB view unreachable (a real forwarder at a closed
port), its case database refusing the poles' health reports. Analytics: its
worker thread ended. (A dead paho network thread and a taken-over session:
``tests/mqtt/test_never_silent.py``; analytics' case database refusing writes:
``test_analytics_endpoints.py``.) Each check names what failed; the others
stay "ok".
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from sidewalk.analytics.metrics import analytics_observability
from sidewalk.core.contract import (
    AnyReading,
    DeviceHealth,
    TimePolicy,
    WeatherReading,
    health_topic,
    topic_for,
)
from sidewalk.core.health import run_checks
from sidewalk.core.mqtt import MqttClient
from sidewalk.core.observability import Observability
from sidewalk.core.profile import load_profile
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.ingest.health import HealthListener
from sidewalk.ingest.metrics import ingest_observability
from sidewalk.scenarios import load_scenario
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.influx import InfluxForwarder
from sidewalk.storage.timeseries import (
    BatchResult,
    DeadLetter,
    SqliteTimeSeriesStore,
    StatusUpdate,
)
from sidewalk.system import build_analytics, open_cases, seed_scenario
from tests.harness.mosquitto import MosquittoServer, free_port
from tests.ingest.pipeline import settings, slug
from tests.observability.scrape import eventually

pytestmark = pytest.mark.services

FULL = "database or disk is full"
STORM = load_scenario("first-storm")


def disk_full(*args: object, **kw: object) -> Any:
    """What SQLite raises through SQLAlchemy when the disk is full."""
    raise OperationalError("UPDATE devices", {}, sqlite3.OperationalError(FULL))


class FaultyStore(SqliteTimeSeriesStore):
    """A readings store whose writes raise ``fault`` once it is set."""

    fault: BaseException | None = None

    def write_batch(
        self,
        readings: Sequence[AnyReading],
        *,
        sites: Mapping[str, str] | None = None,
        statuses: Sequence[StatusUpdate] = (),
        dead_letters: Sequence[DeadLetter] = (),
        received_at_ms: int | None = None,
        time_policy: TimePolicy | None = None,
    ) -> BatchResult:
        if self.fault is not None:
            raise self.fault
        return super().write_batch(
            readings,
            sites=sites,
            statuses=statuses,
            dead_letters=dead_letters,
            received_at_ms=received_at_ms,
            time_policy=time_policy,
        )


def checks(obs: Observability) -> dict[str, str]:
    """``/readyz``'s checks, by name: "ok" or the reason."""
    body: dict[str, str] = run_checks(obs.ready).body()["checks"]
    return body


@contextmanager
def ingest(
    broker: MosquittoServer, store: SqliteTimeSeriesStore, site: str, **obs_kw: Any
) -> Iterator[tuple[IngestConsumer, Observability, MqttClient]]:
    consumer = IngestConsumer(
        store, settings(broker.host, broker.port, slug("ingest")), site=site, batch_wait_s=0.01
    )
    sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
    consumer.start()
    sender.connect()
    try:
        yield consumer, ingest_observability(consumer, store.path, **obs_kw), sender
    finally:
        sender.disconnect()
        consumer.stop()


def send(sender: MqttClient, site: str, seq: int) -> None:
    ts = time.time_ns() // 1_000_000 - 60_000
    reading = WeatherReading(device="pole-1", seq=seq, ts=ts, air_temp_c=-3.0)
    assert sender.publish_and_wait(topic_for(site, "pole-1", "weather"), reading.to_json())


# The thread ends on purpose: pytest would report its exception as a warning.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_ingest_with_its_writer_thread_ended_is_not_ready(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    store, site = FaultyStore(tmp_path / "ts.db"), slug("site")
    try:
        with ingest(broker, store, site) as (consumer, obs, sender):
            assert set(checks(obs).values()) == {"ok"}
            store.fault = SystemExit()  # a fault the writer's loop cannot catch: it ends
            send(sender, site, 1)
            assert eventually(lambda: not consumer.writer_alive, 5)
            got = checks(obs)
            assert "ingest-writer thread not running" in got["writer"]
            assert got["broker"] == "ok"  # connected, and deaf all the same
    finally:
        store.close()


def test_ingest_with_its_readings_store_refusing_writes_is_not_ready(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    store, site = FaultyStore(tmp_path / "ts.db"), slug("site")
    try:
        with ingest(broker, store, site) as (_, obs, sender):
            store.fault = sqlite3.OperationalError(FULL)
            send(sender, site, 1)
            assert eventually(lambda: checks(obs)["store"] != "ok", 5)
            got = checks(obs)
            assert got["store"].startswith("writes failing")
            assert FULL in got["store"]
            assert got["writer"] == "ok"
            store.fault = None  # space again: the retried batch commits
            assert eventually(lambda: checks(obs)["store"] == "ok", 10)
            assert store.seqs("pole-1") == [1]
    finally:
        store.close()


def test_ingest_with_its_influx_view_unreachable_is_not_ready(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    store, site = SqliteTimeSeriesStore(tmp_path / "ts.db"), slug("site")
    own = SqliteTimeSeriesStore(store.path)  # the forwarder's own connection, as deployed
    view = InfluxForwarder(
        own, f"http://127.0.0.1:{free_port()}", "token", "org", "bucket", timeout_ms=500
    )
    try:
        view.start()
        with ingest(broker, store, site, view=view) as (_, obs, sender):
            send(sender, site, 1)
            assert eventually(lambda: checks(obs)["view"] != "ok", 5)
            got = checks(obs)
            assert "InfluxDB view not written" in got["view"]
            assert got["store"] == "ok"  # the record holds the reading
            assert eventually(lambda: store.seqs("pole-1") == [1], 5)
            view.close()
            assert "forwarder not running" in checks(obs)["view"]
    finally:
        view.close()
        own.close()
        store.close()


def test_ingest_with_its_case_database_refusing_health_reports_is_not_ready(
    broker: MosquittoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases: CaseStore = open_cases(f"sqlite:///{tmp_path / 'cases.db'}", load_profile())
    seed_scenario(cases, STORM)
    site, device = STORM.scenario.site, STORM.scenario.device
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    recorded: list[str] = []
    listener = HealthListener(
        settings(broker.host, broker.port, slug("health"), clean_start=True),
        site,
        cases.registry,
        on_recorded=lambda h: recorded.append(h.device),
    )
    pole = MqttClient(settings(broker.host, broker.port, slug("pole"), clean_start=True))

    def report() -> None:
        health = DeviceHealth(device=device, ts=time.time_ns() // 1_000_000, buffered=0, dropped=0)
        assert pole.publish_and_wait(health_topic(site, device), health.to_json())

    try:
        listener.connect()
        pole.connect()
        with ingest(broker, store, site, health=listener, cases=cases) as (_, obs, _sender):
            report()
            assert eventually(lambda: recorded == [device], 5)
            assert checks(obs)["database"] == "ok"
            monkeypatch.setattr(cases.registry, "record_device_seen", disk_full)
            report()
            assert eventually(lambda: checks(obs)["database"] != "ok", 5)
            got = checks(obs)["database"]
            assert "recording pole health to the case database failing" in got
            assert FULL in got
            assert "UPDATE" not in got  # one line, not the statement
            monkeypatch.undo()
            report()
            assert eventually(lambda: checks(obs)["database"] == "ok", 5)
    finally:
        pole.disconnect()
        listener.close()
        store.close()
        cases.close()


# The thread ends on purpose: pytest would report its exception as a warning.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_analytics_with_its_worker_thread_ended_is_not_ready(
    broker: MosquittoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = open_cases(f"sqlite:///{tmp_path / 'cases.db'}", load_profile())
    runner = build_analytics(
        cases,
        load_profile(),
        settings(broker.host, broker.port, slug("analytics")),
        site=STORM.scenario.site,
        mode="stream",
        persist_jobs=False,
    )
    obs = analytics_observability(runner)

    def ended(*args: object, **kw: object) -> bool:
        raise SystemExit  # a fault the worker's loop cannot catch: it ends

    try:
        runner.start()
        assert checks(obs)["worker"] == "ok"
        monkeypatch.setattr(runner, "_run_until_saved", ended)
        sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
        sender.connect()
        try:
            site, device = STORM.scenario.site, STORM.scenario.device
            reading = WeatherReading(
                device=device, seq=1, ts=time.time_ns() // 1_000_000, air_temp_c=-3.0
            )
            assert sender.publish_and_wait(topic_for(site, device, "weather"), reading.to_json())
        finally:
            sender.disconnect()
        assert eventually(lambda: checks(obs)["worker"] != "ok", 5)
        got = checks(obs)
        assert f"analytics-{runner.id}" in got["worker"]
        assert got["broker"] == "ok"  # connected, and deaf all the same
    finally:
        runner.stop()
        cases.close()
