"""Bounded re-send: a stalled ingest does not multiply the broker's queue.

Once, with ingest stalled for 6 minutes, the pole's re-sends left the broker
holding 62,539 messages for 32,873 readings, and analytics processed every
copy. Here, on the real Mosquitto: ingest's SQLite file is locked for 3 s (its
writer blocks, nothing is acknowledged or stored, the watermark stops) while
the pole keeps recording, with an ack window of 0.3 s, so the window expires
several times during the stall. A watcher subscribed to the pole's topics
counts every copy the broker accepted, and feeds each through analytics'
``ReadingGate`` the way the analytics runner does.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from sidewalk.analytics.clocks.gate import ReadingGate
from sidewalk.core.contract import Reading, parse_payload
from sidewalk.core.mqtt import MqttClient, MqttMessage
from sidewalk.edge.simulated import SimulatedPole
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, running_publisher, settings, slug, storm

pytestmark = pytest.mark.services

BEFORE, DURING = 200, 1000  # readings recorded before and during the stall
STALL_S = 3.0
WINDOW = 500  # max_unstored: readings out beyond the watermark


class Watcher:
    """Counts each copy of each reading the broker routes, and what the gate admits."""

    def __init__(self) -> None:
        self.copies: Counter[int] = Counter()
        self.gate = ReadingGate()
        self.admitted = 0
        self._lock = threading.Lock()

    def __call__(self, msg: MqttMessage) -> None:
        reading = parse_payload(msg.topic, msg.payload)
        if not isinstance(reading, Reading):
            return  # the pole's status, ingest's watermark
        with self._lock:
            self.copies[reading.seq] += 1
            if self.gate.admit(reading, time.time_ns() // 1_000_000) is None:
                self.admitted += 1

    @property
    def highest(self) -> int:
        with self._lock:
            return max(self.copies, default=0)


def test_a_stalled_ingest_gets_each_reading_about_once(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    n = BEFORE + DURING
    scenario = storm(n)
    watcher = Watcher()
    watch = MqttClient(
        settings(broker.host, broker.port, slug("watch"), clean_start=True), on_message=watcher
    )
    watch.connect()
    watch.subscribe(f"sidewalk/v1/{site}/{device}/+")
    db = tmp_path / "ts.db"
    try:
        with (
            running_ingest(broker.host, broker.port, db, site) as ingest,
            running_publisher(
                broker.host,
                broker.port,
                tmp_path / "buf.db",
                site,
                device,
                resend_after_s=0.3,
                resend_max_s=5.0,
                max_unstored=WINDOW,
            ) as pub,
        ):
            SimulatedPole(pub, iter(scenario[:BEFORE])).run()
            assert pub.wait_stored(BEFORE, timeout_s=30), pub.watermark

            # Stall: ingest's writer blocks on the lock; nothing commits.
            lock = sqlite3.connect(db, isolation_level=None, timeout=5)
            lock.execute("BEGIN EXCLUSIVE")
            stalled = time.monotonic()
            try:
                SimulatedPole(pub, iter(scenario[BEFORE:])).run()
                time.sleep(max(0.0, stalled + STALL_S - time.monotonic()))
                # The window: nothing beyond the watermark (BEFORE) + WINDOW went out.
                during = watcher.highest
                assert pub.watermark == BEFORE
            finally:
                lock.execute("ROLLBACK")
                lock.close()
            resent_in_stall = pub.resent

            assert pub.wait_stored(n, timeout_s=30), pub.watermark
            store = ingest.store
            assert isinstance(store, SqliteTimeSeriesStore)
            assert store.seqs(device) == list(range(1, n + 1))
            assert store.gaps(device) == []
    finally:
        watch.disconnect()

    copies = sum(watcher.copies.values())
    assert sorted(watcher.copies) == list(range(1, n + 1))
    assert during <= BEFORE + WINDOW, during
    # The ack window expired during the stall, so copies went again: one
    # probe per expiry (0.3, 0.6, 1.2 s … backing off), not the whole window.
    assert resent_in_stall >= 1
    assert copies / n <= 1.1, (copies, n, watcher.copies.most_common(3))
    # Analytics acts on each reading once, whatever the broker delivered.
    assert watcher.admitted == n
    assert watcher.gate.state.skipped.get("duplicate", 0) == copies - n
