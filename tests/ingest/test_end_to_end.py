"""The data path against a real Mosquitto: pole → broker → ingest → SQLite."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from sidewalk.core.contract import AnyReading, Reading, StoredWatermark, topic_for
from sidewalk.core.mqtt import MqttClient
from sidewalk.edge.simulated import SimulatedPole
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import T0, running_ingest, running_publisher, settings, slug, storm

pytestmark = pytest.mark.services


def _raw_client(broker: MosquittoServer) -> MqttClient:
    client = MqttClient(settings(broker.host, broker.port, slug("raw"), clean_start=True))
    client.connect()
    return client


def _weather(device: str, seq: int, **extra: object) -> bytes:
    body: dict[str, object] = {
        "schema": 1,
        "device": device,
        "seq": seq,
        "ts": T0 + seq * 1000,
        "air_temp_c": -3.5,
    }
    body.update(extra)
    return json.dumps(body).encode()


def test_simulated_pole_readings_arrive_exactly_once(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    scenario = storm(300)
    with (
        running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest,
        running_publisher(broker.host, broker.port, tmp_path / "buf.db", site, device) as pub,
    ):
        played = SimulatedPole(pub, scenario).run()
        assert pub.wait_stored(timeout_s=20), f"watermark stuck at {pub.watermark}"
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        assert store.seqs(device) == list(range(1, 301))
        assert store.readings(device=device) == played
        assert store.stored_up_to(device) == 300
        assert store.gaps(device) == []
        # Freed on the device once the watermark passed everything.
        assert ingest.wait_for(lambda: len(pub.buffer) == 0, 5)
        state = store.device_state(device)
        assert state is not None
        assert state.status == "online"
        assert state.site == site


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"{not json", "malformed_json"),
        (b'{"schema": 2, "device": "DEV", "seq": 1, "ts": 1764460800000}', "unknown_schema"),
        (b'{"schema": 1, "device": "DEV", "ts": 1764460800000, "air_temp_c": 1}', "missing_field"),
        (
            b'{"schema": 1, "device": "DEV", "seq": 1, "ts": 1764460800000,'
            b' "air_temp_c": 1, "wind_kph": 3}',
            "extra_field",
        ),
        (
            b'{"schema": 1, "device": "DEV", "seq": 1, "ts": 1764460800000, "air_temp_c": 99}',
            "out_of_range",
        ),
        (
            b'{"schema": 1, "device": "someone-else", "seq": 1, "ts": 1764460800000,'
            b' "air_temp_c": 1}',
            "topic_mismatch",
        ),
    ],
)
def test_malformed_message_is_dead_lettered_and_stream_goes_on(
    broker: MosquittoServer, tmp_path: Path, payload: bytes, reason: str
) -> None:
    site, device = slug("site"), slug("pole")
    payload = payload.replace(b"DEV", device.encode())
    topic = topic_for(site, device, "weather")
    with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
        raw = _raw_client(broker)
        try:
            raw.publish(topic, _weather(device, 1), 1)
            raw.publish(topic, payload, 1)
            raw.publish(topic, _weather(device, 2), 1)
            store = ingest.store
            assert isinstance(store, SqliteTimeSeriesStore)
            assert ingest.wait_for(
                lambda: store.count(device) == 2 and ingest.stats.dead_letters == 1
            )
        finally:
            raw.disconnect()
        letters = store.dead_letters(reason=reason)
        assert len(letters) == 1, store.dead_letters()
        assert letters[0].payload == payload
        assert letters[0].topic == topic
        assert letters[0].device == device
        assert store.dead_letters(device=device) == letters
        assert store.stored_up_to(device) == 2


def test_duplicates_dropped_and_gap_recorded_then_closed(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    topic = topic_for(site, device, "weather")
    stored_topic = topic_for(site, device, "stored")
    marks: list[int] = []
    watcher = MqttClient(
        settings(broker.host, broker.port, slug("watch"), clean_start=True),
        on_message=lambda m: marks.append(json.loads(m.payload)["seq"]),
    )
    watcher.connect()
    watcher.subscribe(stored_topic)
    with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        raw = _raw_client(broker)
        try:
            for seq in (1, 2, 2, 5, 1):
                raw.publish(topic, _weather(device, seq), 1)
            assert ingest.wait_for(lambda: ingest.stats.received == 5)
            assert store.seqs(device) == [1, 2, 5]
            assert ingest.stats.duplicates == 2
            assert ingest.stats.gaps_opened == 1
            [gap] = store.gaps(device)
            assert (gap.from_seq, gap.to_seq, gap.lost_at_ms) == (3, 4, None)
            assert store.stored_up_to(device) == 2
            assert ingest.wait_for(lambda: marks[-1:] == [2])

            raw.publish(topic, _weather(device, 4), 1)
            assert ingest.wait_for(lambda: store.seqs(device) == [1, 2, 4, 5])
            assert [(g.from_seq, g.to_seq) for g in store.gaps(device)] == [(3, 3)]
            raw.publish(topic, _weather(device, 3), 1)
            assert ingest.wait_for(lambda: store.gaps(device) == [])
            assert store.stored_up_to(device) == 5
            assert ingest.wait_for(lambda: marks[-1:] == [5])
            assert store.dead_letters(device=device) == []
        finally:
            raw.disconnect()
            watcher.disconnect()


def test_buffer_keeps_readings_until_the_watermark_passes(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    ingest_id = slug("ingest")
    raw = _raw_client(broker)
    stored_topic = topic_for(site, device, "stored")
    try:
        # No ingest yet: the broker acknowledges everything, the buffer keeps it.
        with running_publisher(broker.host, broker.port, tmp_path / "buf.db", site, device) as pub:
            SimulatedPole(pub, storm(50)).run()
            assert not pub.wait_stored(1, timeout_s=0.5)
            assert len(pub.buffer) == 50
            # A watermark covering 20 frees exactly those.
            mark = StoredWatermark(device=device, seq=20, ts=T0, epoch=pub.buffer.epoch)
            assert raw.publish_and_wait(stored_topic, mark.to_json(), 1, retain=True)
            assert pub.wait_stored(20, timeout_s=5)
            assert pub.buffer.after(0, 100)[0].seq == 21
            assert len(pub.buffer) == 30
        # Ingest arrives later; the restarted publisher re-sends what is not covered.
        with (
            running_ingest(
                broker.host, broker.port, tmp_path / "ts.db", site, client_id=ingest_id
            ) as ingest,
            running_publisher(broker.host, broker.port, tmp_path / "buf.db", site, device) as pub,
        ):
            assert pub.wait_stored(50, timeout_s=20)
            store = ingest.store
            assert isinstance(store, SqliteTimeSeriesStore)
            assert store.seqs(device) == list(range(21, 51))
            [lost] = store.gaps(device, lost_only=True)
            assert (lost.from_seq, lost.to_seq) == (1, 20)
            # 1..20 were declared stored by someone else: not ours to wait for.
            assert ingest.wait_for(lambda: len(pub.buffer) == 0, 5)
    finally:
        raw.publish_and_wait(stored_topic, b"", 1, retain=True)
        raw.disconnect()


def test_readings_the_full_buffer_dropped_are_recorded_lost_not_awaited(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    buf = tmp_path / "buf.db"
    # Link to ingest down (nobody consumes): the bound of 10 drops the oldest 20.
    with running_publisher(broker.host, broker.port, buf, site, device, max_rows=10) as pub:
        SimulatedPole(pub, storm(30)).run()
        assert (pub.buffer.dropped, pub.buffer.floor) == (20, 21)
    with (
        running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest,
        running_publisher(broker.host, broker.port, buf, site, device, max_rows=10) as pub,
    ):
        assert pub.wait_stored(30, timeout_s=20), pub.watermark
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        assert store.seqs(device) == list(range(21, 31))
        [lost] = store.gaps(device, lost_only=True)
        assert (lost.from_seq, lost.to_seq) == (1, 20)
        assert ingest.wait_for(lambda: len(pub.buffer) == 0, 5)


def test_readings_lost_after_the_broker_took_them_are_sent_again(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    """No reconnect happens: only the stalled watermark tells the pole to re-send."""
    site, device = slug("site"), slug("pole")
    seen = threading.Semaphore(0)
    watcher = MqttClient(
        settings(broker.host, broker.port, slug("watch"), clean_start=True),
        on_message=lambda _m: seen.release(),
    )
    watcher.connect()
    watcher.subscribe(topic_for(site, device, "weather"))
    with running_publisher(
        broker.host, broker.port, tmp_path / "buf.db", site, device, resend_after_s=0.5
    ) as pub:
        # Ingest is not subscribed yet: the broker takes these and drops them.
        SimulatedPole(pub, storm(20)).run()
        for _ in range(10):  # the 10 weather readings have passed the broker
            assert seen.acquire(timeout=5)
        watcher.disconnect()
        with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
            assert pub.wait_stored(20, timeout_s=15), pub.watermark
            store = ingest.store
            assert isinstance(store, SqliteTimeSeriesStore)
            assert store.seqs(device) == list(range(1, 21))


class _FailingInflux:
    """An InfluxDB writer whose server is down."""

    def __init__(self) -> None:
        self.calls = 0

    def write(self, readings: Sequence[Reading]) -> None:
        self.calls += 1
        raise ConnectionError("influxdb unreachable")


def test_hooks_see_each_stored_reading_once_and_influx_failures_do_not_block(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    seen: list[AnyReading] = []
    influx = _FailingInflux()
    topic = topic_for(site, device, "weather")
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, on_stored=seen.extend, influx=influx
    ) as ingest:
        raw = _raw_client(broker)
        try:
            for seq in (1, 2, 2, 3):
                raw.publish(topic, _weather(device, seq), 1)
            assert ingest.wait_for(lambda: ingest.stats.received == 4)
        finally:
            raw.disconnect()
        assert [r.seq for r in seen] == [1, 2, 3]
        assert influx.calls >= 1


def test_two_workers_on_a_shared_subscription_store_everything_once(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    group = slug("workers")
    db = tmp_path / "ts.db"
    with (
        running_ingest(broker.host, broker.port, db, site, shared_group=group) as one,
        running_ingest(broker.host, broker.port, db, site, shared_group=group) as two,
        running_publisher(broker.host, broker.port, tmp_path / "buf.db", site, device) as pub,
    ):
        SimulatedPole(pub, storm(400)).run()
        assert pub.wait_stored(400, timeout_s=20), pub.watermark
        store = one.store
        assert isinstance(store, SqliteTimeSeriesStore)
        assert store.seqs(device) == list(range(1, 401))
        assert store.gaps(device) == []
        assert one.stats.stored > 0
        assert two.stats.stored > 0
        assert one.stats.stored + two.stats.stored == 400
