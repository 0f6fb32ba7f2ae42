"""Two ingest workers on one shared subscription, one of them killed mid-stream.

Worker B runs in its own process so ``kill -9`` is a real crash: whatever it
held unacknowledged (received, or committed but not yet acked) must reach the
store exactly once after the broker re-delivers it to the restarted B (its
session persists, as under systemd's ``Restart=``). Both workers write one
SQLite file (WAL, busy timeout), which is what makes ``(device, seq)``
de-duplication hold across workers.

Run as a module, this file is worker B: ``python -m tests.ingest.test_shared_workers
HOST PORT DB SITE GROUP CLIENT_ID``; it says "ready" once subscribed and stops when
stdin closes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sidewalk.core.contract import WeatherReading, topic_for
from sidewalk.core.mqtt import MqttClient
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import BatchResult, SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import T0, running_ingest, scenario_clock, settings, slug

DEVICES = 4
PER_DEVICE = 600
N = DEVICES * PER_DEVICE


def _worker_main(argv: list[str]) -> None:
    host, port, db, site, group, client_id = argv
    store = SqliteTimeSeriesStore(db)
    consumer = IngestConsumer(
        store, settings(host, int(port), client_id), site=site, shared_group=group, batch_size=50,
        now_ms=scenario_clock(),
    )  # fmt: skip
    consumer.start()
    print("ready", flush=True)
    sys.stdin.read()
    consumer.stop()
    store.close()


@contextmanager
def _worker_b(
    broker: MosquittoServer, db: Path, site: str, group: str
) -> Iterator[subprocess.Popen[str]]:
    args = [broker.host, str(broker.port), str(db), site, group, f"{site}-b"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.ingest.test_shared_workers", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(15)


def _publish(client: MqttClient, site: str, seqs: range) -> None:
    for seq in seqs:
        for d in range(DEVICES):
            device = f"{site}-pole-{d}"
            reading = WeatherReading(device=device, seq=seq, ts=T0 + seq * 1000, air_temp_c=-2.0)
            client.publish(topic_for(site, device, "weather"), reading.to_json(), 1)


def _wait(predicate: object, timeout_s: float) -> bool:
    assert callable(predicate)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)  # polling another process's commits in the shared file
    return bool(predicate())


def test_killed_worker_loses_nothing_and_stores_nothing_twice(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site = slug("share")
    group = slug("workers")
    db = tmp_path / "ts.db"
    pub = MqttClient(settings(broker.host, broker.port, f"{site}-pub", clean_start=True))
    pub.connect()
    try:
        with running_ingest(broker.host, broker.port, db, site, shared_group=group) as a:
            store = a.store
            assert isinstance(store, SqliteTimeSeriesStore)
            with _worker_b(broker, db, site, group) as b:
                _publish(pub, site, range(1, 201))
                # B must have committed its share before the crash, or the
                # test would not show a crashed worker's messages surviving.
                assert _wait(lambda: store.count() - a.stats.stored > 0, 10)
                _publish(pub, site, range(201, 401))
                os.kill(b.pid, signal.SIGKILL)
                b.wait(5)
                _publish(pub, site, range(401, PER_DEVICE + 1))
            # systemd would restart it: same client id, same persistent session.
            with _worker_b(broker, db, site, group):
                assert _wait(lambda: store.count() >= N, 15), store.count()
                time.sleep(0.3)  # a late duplicate would land now; none may
            assert a.stats.stored > 0
            assert a.stats.dead_letters == 0
            assert store.count() == N
            for d in range(DEVICES):
                device = f"{site}-pole-{d}"
                assert store.seqs(device) == list(range(1, PER_DEVICE + 1))
                assert store.gaps(device) == []
            assert store.dead_letters() == []
    finally:
        pub.disconnect()


class _GatedStore(SqliteTimeSeriesStore):
    """The real store, holding each write until the test opens the gate."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()

    def write_batch(self, *args: Any, **kw: Any) -> BatchResult:
        self.gate.wait(10)
        return super().write_batch(*args, **kw)


def test_pending_counts_what_is_received_and_not_yet_committed(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    # The observability lag gauge reads this; a worker's backlog must show.
    site = slug("lag")
    store = _GatedStore(tmp_path / "ts.db")
    consumer = IngestConsumer(
        store, settings(broker.host, broker.port, f"{site}-ingest"), site=site, batch_size=100,
        now_ms=scenario_clock(),
    )  # fmt: skip
    consumer.start()
    pub = MqttClient(settings(broker.host, broker.port, f"{site}-pub", clean_start=True))
    pub.connect()
    try:
        assert consumer.pending == 0
        _publish(pub, site, range(1, 11))  # 40 readings
        assert _wait(lambda: consumer.pending == 4 * 10, 5), consumer.pending
        assert store.count() == 0
        store.gate.set()
        assert consumer.wait_for(lambda: consumer.stats.stored == 40)
        assert _wait(lambda: consumer.pending == 0, 5), consumer.pending
    finally:
        store.gate.set()
        pub.disconnect()
        consumer.stop()
        store.close()


if __name__ == "__main__":
    _worker_main(sys.argv[1:])
