"""A pole through a day-long broker outage and a broker restart, against real Mosquitto.

Eight simulated sensors at one sample a minute on a simulated clock: a day is
11,520 readings, produced in about a second of wall time.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from sidewalk.core.contract import WeatherReading, parse_payload
from sidewalk.edge.device import SimulatedClock
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.edge_device.poles import START, Recorder, fast_dir, pole_settings, running_device
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, slug

pytestmark = pytest.mark.services

DAY = 8 * 24 * 60  # 11,520


def _weather_seqs(recorder: Recorder) -> list[int]:
    out = []
    for m in recorder.messages:
        reading = parse_payload(m.topic, m.payload)
        assert isinstance(reading, WeatherReading)
        out.append(reading.seq)
    return out


def test_a_day_buffered_through_an_outage_arrives_once_in_order(
    broker: MosquittoServer,
) -> None:
    site, device = slug("site"), slug("pole")
    with fast_dir() as tmp, running_ingest(broker.host, broker.port, tmp / "ts.db", site) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        # A persistent session, so the raw view also spans the outage.
        recorder = Recorder(
            broker.host, broker.port, f"sidewalk/v1/{site}/{device}/weather", clean_start=False
        )
        try:
            broker.stop()
            clock = SimulatedClock(START)
            cfg = pole_settings(broker.host, broker.port, tmp / "pole", site=site, device=device)
            with running_device(cfg, clock, loop=False) as pole:
                assert pole.buffer is not None
                pole.run(until=START + timedelta(days=1))
                assert pole.stats.readings == DAY
                assert len(pole.buffer) == DAY
                assert store.count(device) == 0
                broker.start()
                assert ingest.wait_for(lambda: store.count(device) == DAY, timeout_s=60)
                assert pole.publisher is not None
                assert pole.publisher.wait_stored(DAY, timeout_s=20)
            assert store.seqs(device) == list(range(1, DAY + 1))
            assert not store.gaps(device)
            assert recorder.wait(lambda ms: len(ms) >= DAY, timeout_s=20)
            # Each reading crossed the broker once, oldest first.
            assert _weather_seqs(recorder) == list(range(1, DAY + 1))
            assert ingest.stats.duplicates == 0
        finally:
            recorder.close()


def test_broker_restart_mid_stream_loses_nothing(broker: MosquittoServer) -> None:
    site, device = slug("site"), slug("pole")
    with fast_dir() as tmp, running_ingest(broker.host, broker.port, tmp / "ts.db", site) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        clock = SimulatedClock(START)
        cfg = pole_settings(broker.host, broker.port, tmp / "pole", site=site, device=device)
        with running_device(cfg, clock, loop=False) as pole:
            assert pole.publisher is not None
            pole.run(until=START + timedelta(hours=12))
            # Restart as soon as the first batch is stored: the publisher is mid-drain.
            assert ingest.wait_for(lambda: store.count(device) > 0, timeout_s=20)
            broker.restart()
            # The second half of the day is still to be played: it crosses the restarted broker.
            assert store.count(device) <= DAY // 2
            pole.run(until=START + timedelta(days=1))
            assert ingest.wait_for(lambda: store.count(device) == DAY, timeout_s=60)
            assert pole.publisher.wait_stored(DAY, timeout_s=20)
            assert pole.buffer is not None
            assert len(pole.buffer) == 0
        assert store.seqs(device) == list(range(1, DAY + 1))
        assert not store.gaps(device)
