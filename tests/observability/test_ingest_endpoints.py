"""A real ingest on a real Mosquitto, scraped over HTTP like Prometheus does."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from sidewalk.core.contract import AnyReading, Status, TimePolicy, WeatherReading, topic_for
from sidewalk.core.mqtt import MqttClient
from sidewalk.core.observability import ObservabilityServer
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.ingest.metrics import TimedStore, ingest_observability
from sidewalk.storage.timeseries import (
    BatchResult,
    DeadLetter,
    SqliteTimeSeriesStore,
    StatusUpdate,
)
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import T0, scenario_clock, settings, slug
from tests.observability.scrape import eventually, get, probe, scrape, value

pytestmark = pytest.mark.services

LAG = "sidewalk_ingest_consumer_lag_messages"


class GatedStore(SqliteTimeSeriesStore):
    """A store whose writes wait for ``gate``: a stalled disk, for the lag to build."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()

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
        self.waiting.set()
        self.gate.wait(10)
        return super().write_batch(
            readings,
            sites=sites,
            statuses=statuses,
            dead_letters=dead_letters,
            received_at_ms=received_at_ms,
            time_policy=time_policy,
        )


@contextmanager
def observed_ingest(
    broker: MosquittoServer, store: SqliteTimeSeriesStore, site: str
) -> Iterator[tuple[IngestConsumer, ObservabilityServer]]:
    registry = CollectorRegistry()
    consumer = IngestConsumer(
        TimedStore(store, registry),
        # A broker killed before its autosave loses the session: that reads as a
        # takeover (see test_never_silent) for this hold, then readiness is green.
        settings(broker.host, broker.port, slug("ingest"), connect_timeout_s=3, takeover_hold_s=2),
        site=site,
        batch_wait_s=0.01,
        now_ms=scenario_clock(),
    )
    consumer.start()
    server = ingest_observability(consumer, store.path, registry).serve(port=0)
    try:
        yield consumer, server
    finally:
        server.stop()
        consumer.stop()


@contextmanager
def sender(broker: MosquittoServer) -> Iterator[MqttClient]:
    client = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
    client.connect()
    try:
        yield client
    finally:
        client.disconnect()


def lag(server: ObservabilityServer) -> float:
    return value(scrape(server.url), LAG) or 0.0


def weather(device: str, seq: int) -> bytes:
    return WeatherReading(device=device, seq=seq, ts=T0 + seq * 60_000, air_temp_c=-2.0).to_json()


def test_metrics_count_readings_dead_letters_and_lag(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    topic = topic_for(site, device, "weather")
    store = GatedStore(tmp_path / "ts.db")
    try:
        with observed_ingest(broker, store, site) as (consumer, server), sender(broker) as pub:
            for seq in range(1, 11):
                assert pub.publish_and_wait(topic, weather(device, seq))
            assert pub.publish_and_wait(topic, b"{not json")
            assert pub.publish_and_wait(topic, b'{"schema": 7}')
            assert pub.publish_and_wait(topic, b"[1, 2")
            assert pub.publish_and_wait(f"sidewalk/v1/{site}/{device}/jpeg", b"GIF89a")
            status = Status(device=device, state="online", ts=T0, buffer_floor_seq=1)
            assert pub.publish_and_wait(topic_for(site, device, "status"), status.to_json())
            s = consumer.stats
            # The counters move inside the commit; the batch leaves the lag
            # just after it, so wait for both before the scrape.
            assert consumer.wait_for(
                lambda: (s.stored, s.dead_letters, s.statuses, consumer.pending) == (10, 4, 1, 0)
            )
            text = scrape(server.url)
            assert value(text, "sidewalk_readings_stored_total") == 10
            # Ingest also hears its own retained watermarks (ignored): at least the 15.
            received = value(text, "sidewalk_ingest_received_messages_total")
            assert received is not None
            assert received >= 15
            assert value(text, "sidewalk_dead_letters_total", reason="malformed_json") == 2
            assert value(text, "sidewalk_dead_letters_total", reason="unknown_schema") == 1
            assert value(text, "sidewalk_dead_letters_total", reason="not_jpeg") == 1
            assert value(text, "sidewalk_ingest_dead_letters_total") == 4
            assert value(text, "sidewalk_device_online", device=device) == 1
            assert value(text, "sidewalk_device_max_seq", device=device) == 10
            seen = value(text, "sidewalk_device_last_seen_timestamp_seconds", device=device)
            assert seen is not None
            assert seen > T0 / 1000
            batches = value(text, "sidewalk_ingest_batches_total")
            assert batches is not None
            assert batches >= 1
            # Every batch went through the timed write once.
            assert value(text, "sidewalk_ingest_commit_seconds_count") == batches
            # Ingest hears its own retained watermark after a commit (ignored), so the lag
            # can read 1 for a moment: what matters is that it comes back to 0.
            assert eventually(lambda: lag(server) == 0), lag(server)

            # A stalled disk: the writer holds one batch, the rest queue up as lag.
            store.gate.clear()
            store.waiting.clear()
            assert pub.publish_and_wait(topic, weather(device, 11))
            assert store.waiting.wait(5)
            for seq in range(12, 18):
                assert pub.publish_and_wait(topic, weather(device, seq))
            try:
                # Delivery from the broker is asynchronous: the lag builds as they arrive.
                # The batch held by the writer counts too: 1 + 6 (+ ingest's own retained
                # watermark coming back, when it arrives meanwhile).
                assert eventually(lambda: lag(server) >= 7, timeout_s=5), lag(server)
            finally:
                store.gate.set()
            assert eventually(lambda: lag(server) == 0)
            assert consumer.wait_for(lambda: consumer.stats.stored == 17)
            assert value(scrape(server.url), "sidewalk_readings_stored_total") == 17
    finally:
        store.close()


def test_seq_gaps_by_device_and_state(broker: MosquittoServer, tmp_path: Path) -> None:
    site, device = slug("site"), slug("pole")
    topic = topic_for(site, device, "weather")
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    try:
        with observed_ingest(broker, store, site) as (consumer, server), sender(broker) as pub:
            for seq in (1, 2, 6, 7, 12):  # gaps 3..5 and 8..11
                assert pub.publish_and_wait(topic, weather(device, seq))
            assert consumer.wait_for(lambda: consumer.stats.stored == 5)
            text = scrape(server.url)
            assert value(text, "sidewalk_seq_gaps", device=device, state="open") == 2
            assert value(text, "sidewalk_seq_gap_readings", device=device, state="open") == 7
            assert value(text, "sidewalk_seq_gaps_opened_total") == 2
    finally:
        store.close()


def test_readiness_follows_the_broker_and_liveness_the_writer(tmp_path: Path) -> None:
    own = MosquittoServer(tmp_path / "mqtt")  # killed here: not the session's broker
    own.start()
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    try:
        with observed_ingest(own, store, slug("site")) as (consumer, server):
            assert probe(server.url, "/readyz") == (
                200,
                {"status": "ok", "checks": {"broker": "ok", "writer": "ok", "store": "ok"}},
            )
            own.kill()
            assert eventually(lambda: probe(server.url, "/readyz")[0] == 503)
            status, body = probe(server.url, "/readyz")
            assert body["status"] == "unavailable"
            assert body["checks"]["broker"] == "not connected to the broker"
            assert body["checks"]["store"] == "ok"
            assert probe(server.url, "/healthz")[0] == 200  # alive, just not ready
            own.start()
            assert eventually(lambda: probe(server.url, "/readyz")[0] == 200, timeout_s=15)
            consumer.stop()
            status, body = probe(server.url, "/healthz")
            assert status == 503
            assert "ingest-writer" in body["checks"]["writer"]
    finally:
        store.close()
        own.stop()


def test_unknown_paths_are_404(broker: MosquittoServer, tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    try:
        with observed_ingest(broker, store, slug("site")) as (_, server):
            assert get(server.url + "/metrics/../secret")[0] == 404
            assert get(server.url + "/metrics?x=1")[0] == 200
    finally:
        store.close()
