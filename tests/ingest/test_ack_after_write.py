"""Ingest acknowledges nothing it has not committed."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from sidewalk.core.contract import AnyReading, TimePolicy, WeatherReading, topic_for
from sidewalk.core.mqtt import MqttClient
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import (
    BatchResult,
    DeadLetter,
    SqliteTimeSeriesStore,
    StatusUpdate,
)
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import T0, running_ingest, settings, slug

pytestmark = pytest.mark.services


class BrokenDisk(SqliteTimeSeriesStore):
    """A store whose disk fails every write (the reads still work)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.attempts = 0
        self.failing = threading.Event()

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
        self.attempts += 1
        self.failing.set()
        raise sqlite3.OperationalError("disk I/O error")


def test_a_failed_write_acknowledges_nothing_and_the_broker_keeps_it(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device, ingest_id = slug("site"), slug("pole"), slug("ingest")
    topic = topic_for(site, device, "weather")
    broken = BrokenDisk(tmp_path / "ts.db")
    consumer = IngestConsumer(
        broken, settings(broker.host, broker.port, ingest_id), site=site, write_retry_s=0.05
    )
    consumer.start()
    sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
    sender.connect()
    try:
        for seq in (1, 2, 3):
            reading = WeatherReading(device=device, seq=seq, ts=T0 + seq, air_temp_c=-1.0)
            assert sender.publish_and_wait(topic, reading.to_json(), 1)
        assert broken.failing.wait(5)
    finally:
        consumer.stop()
        broken.close()
    assert broken.attempts >= 1
    assert consumer.stats.batches == 0
    # Same session, working disk: the broker delivers all three again.
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, client_id=ingest_id
    ) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        assert ingest.wait_for(lambda: store.seqs(device) == [1, 2, 3], 10), store.seqs(device)
    sender.disconnect()
