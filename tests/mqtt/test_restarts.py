"""Restarts and crashes of the broker and the pole, against a real Mosquitto."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidewalk.edge.simulated import ScenarioReading, SimulatedPole
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import T0, running_ingest, running_publisher, slug, storm

pytestmark = pytest.mark.services

REPO = Path(__file__).resolve().parents[2]


def _store(consumer_store: object) -> SqliteTimeSeriesStore:
    assert isinstance(consumer_store, SqliteTimeSeriesStore)
    return consumer_store


@pytest.mark.parametrize("how", ["restart", "kill"])
def test_broker_restart_mid_stream_loses_and_duplicates_nothing(
    broker: MosquittoServer, tmp_path: Path, how: str
) -> None:
    """A clean restart keeps the broker's queue; after ``kill -9`` the watermark re-send
    recovers whatever the broker had acknowledged but not saved."""
    site, device = slug("site"), slug("pole")
    n = 2000
    half = threading.Event()
    scenario = storm(n)

    def played() -> Iterator[ScenarioReading]:
        for i, item in enumerate(scenario):
            if i == n // 2:
                half.set()
            yield item

    try:
        with (
            running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest,
            running_publisher(
                broker.host, broker.port, tmp_path / "buf.db", site, device, resend_after_s=1.0
            ) as pub,
        ):
            store = _store(ingest.store)
            pole = threading.Thread(target=SimulatedPole(pub, played()).run)
            pole.start()
            assert half.wait(10)
            assert ingest.wait_for(lambda: store.count(device) > 0, 10)
            assert pole.is_alive(), "the broker must go down mid-stream"
            if how == "kill":
                broker.kill()
            else:
                broker.stop()
            assert not broker.running
            broker.start()
            pole.join(30)
            assert pub.wait_stored(n, timeout_s=40), (pub.watermark, store.gaps(device))
            assert store.seqs(device) == list(range(1, n + 1))
            assert store.gaps(device) == []
            assert ingest.wait_for(lambda: ingest.stats.batches > 0 and pub.connected, 5)
    finally:
        broker.start()


def test_publisher_restart_continues_the_seq(broker: MosquittoServer, tmp_path: Path) -> None:
    site, device = slug("site"), slug("pole")
    with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
        store = _store(ingest.store)
        for run in range(2):
            with running_publisher(
                broker.host, broker.port, tmp_path / "buf.db", site, device
            ) as pub:
                # The second run records after the first (a pole whose clock went
                # back 40 minutes would have its readings quarantined).
                played = SimulatedPole(pub, storm(40, t0=T0 + run * 40 * 60_000)).run()
                assert [r.seq for r in played] == list(range(run * 40 + 1, run * 40 + 41))
                assert pub.wait_stored(timeout_s=10)
        assert store.seqs(device) == list(range(1, 81))
        state = store.device_state(device)
        assert state is not None
        assert ingest.wait_for(
            lambda: (s := store.device_state(device)) is not None and s.status == "stopped", 5
        )


def test_kill_9_of_the_pole_loses_nothing_buffered(broker: MosquittoServer, tmp_path: Path) -> None:
    site, device = slug("site"), slug("pole")
    buffer_path = tmp_path / "buf.db"
    with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
        store = _store(ingest.store)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.mqtt.pole_process",
                broker.host,
                str(broker.port),
                site,
                device,
                str(buffer_path),
                "100000",
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        confirmed = 0
        try:
            # Kill it while it is busy buffering and sending.
            for line in proc.stdout:
                confirmed = int(line.split()[1])
                if confirmed >= 1000:
                    break
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            proc.stdout.close()
        assert confirmed >= 1000
        # The broker publishes the pole's last will.
        assert ingest.wait_for(
            lambda: (s := store.device_state(device)) is not None and s.status == "offline", 10
        )
        with running_publisher(broker.host, broker.port, buffer_path, site, device) as pub:
            last = pub.buffer.next_seq - 1
            assert last >= confirmed
            assert pub.wait_stored(last, timeout_s=20), (pub.watermark, store.gaps(device))
            assert store.seqs(device) == list(range(1, last + 1))
            # The seq carries on from where the killed process stopped.
            assert pub.record("weather", 1_764_470_000_000, {"air_temp_c": 1.0}).seq == last + 1
            assert pub.wait_stored(last + 1, timeout_s=10)
