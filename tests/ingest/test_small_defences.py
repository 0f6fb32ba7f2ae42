"""Small defences of ingest, each below the broker (the consumer's own receive path).

* a key named twice (``{"seq": 16, "seq": 17}``) is refused, not stored as seq 17;
* a reading the broker replays as retained is refused, so a new store takes none;
* a payload over the limit leaves memory on receipt: only its size, hash and a
  prefix wait for the commit, never the body;
* a re-sent copy with different content is a conflict, not a duplicate;
* a flood of unknown devices is a few log lines with counts, not one per message;
* one pole's backlog does not hold another pole's readings behind it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidewalk.core.contract import Status, WeatherReading, topic_for
from sidewalk.core.mqtt import MqttClient, MqttMessage, MqttSettings
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.ingest.fair import fair_share
from sidewalk.ingest.known import KnownDevices
from sidewalk.ingest.loglimit import DeadLetterLog
from sidewalk.ingest.validate import Availability, Rejected, judge_many
from sidewalk.storage.timeseries import DEAD_LETTER_PREFIX, DeadLetter, SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, settings, slug

T0 = 1_764_460_800_000
SITE = "clyman"


def weather(seq: int, device: str = "pole-1", temp: float = -2.0) -> WeatherReading:
    return WeatherReading(device=device, seq=seq, ts=T0 + seq * 60_000, air_temp_c=temp)


def msg(reading: WeatherReading | Status, *, body: bytes | None = None, retain: bool = False,
        mid: int = 1) -> MqttMessage:  # fmt: skip
    topic = topic_for(SITE, reading.device, reading.stream)
    return MqttMessage(topic, reading.to_json() if body is None else body, 1, retain, mid)


class Consumer:
    """An ingest consumer driven by hand: messages in as paho hands them over, then one
    batch written and acknowledged (the acks recorded, no broker needed)."""

    def __init__(self, tmp_path: Path, known_devices: KnownDevices | None = None) -> None:
        self.store = SqliteTimeSeriesStore(tmp_path / "ts.db")
        mqtt = MqttSettings(host="127.0.0.1", port=1, client_id="ingest-by-hand")
        self.ingest = IngestConsumer(
            self.store, mqtt, time_policy=None, known_devices=known_devices
        )
        self.acked: list[MqttMessage] = []
        self.published: list[str] = []
        client = self.ingest._client
        # Ignored: methods replaced on the instance, the test's stand-in for the broker.
        client.ack_many = self.acked.extend  # type: ignore[method-assign,assignment]
        # Ignored: as above; the watermark publish is recorded, not sent.
        client.publish = self._publish  # type: ignore[method-assign,assignment]

    def _publish(self, topic: str, *_: object, **__: object) -> None:
        self.published.append(topic)

    def receive(self, msgs: list[MqttMessage]) -> None:
        self.ingest._receive_many(msgs)

    def commit(self) -> list[MqttMessage]:
        batch, verdicts = self.ingest._next_batch()
        assert self.ingest._commit(batch, verdicts)
        self.ingest._finished(len(batch))
        return batch


@pytest.fixture
def consumer(tmp_path: Path) -> Iterator[Consumer]:
    c = Consumer(tmp_path)
    yield c
    c.store.close()


def test_a_key_named_twice_is_refused_with_the_key_and_both_values(consumer: Consumer) -> None:
    good = weather(15).to_json()
    twice = weather(16).to_json().replace(b'"seq":16', b'"seq":16,"seq":17')
    consumer.receive([msg(weather(15), body=good), msg(weather(16), body=twice, mid=2)])
    consumer.commit()
    assert consumer.store.seqs("pole-1") == [15]  # was: [15, 17]
    [letter] = consumer.store.dead_letters()
    assert (letter.reason, letter.payload) == ("malformed_json", twice)
    assert letter.detail == (
        'the key "seq" appears twice (16, then 17): a message names each field once'
    )
    # The same with spaces around the colons, and the repeat with the same value.
    spaced = weather(18).to_json().replace(b":", b" : ").replace(b'"ts"', b'"ts" : 1, "ts"')
    same = weather(19).to_json().replace(b'"seq":19', b'"seq":19,"seq":19')
    verdicts = judge_many([msg(weather(18), body=spaced), msg(weather(19), body=same)])
    assert all(isinstance(v, Rejected) for v in verdicts)
    assert [v.dead_letter.detail[:24] for v in verdicts if isinstance(v, Rejected)] == [
        'the key "ts" appears twi', 'the key "seq" appears tw',
    ]  # fmt: skip


def test_a_retained_reading_is_refused_and_a_retained_status_kept(consumer: Consumer) -> None:
    status = Status(device="pole-1", state="online", ts=T0)
    [refused, kept] = judge_many([msg(weather(1), retain=True), msg(status, retain=True)])
    assert isinstance(refused, Rejected)
    assert refused.dead_letter.reason == "retained"
    assert "replayed this weather message as retained" in refused.dead_letter.detail
    assert isinstance(kept, Availability)  # a status is retained on purpose
    # A new store subscribing takes none of it; the same reading delivered live is stored.
    consumer.receive([msg(weather(1), retain=True)])
    consumer.commit()
    assert consumer.store.seqs("pole-1") == []
    consumer.receive([msg(weather(1), mid=2)])
    consumer.commit()
    assert consumer.store.seqs("pole-1") == [1]


def test_an_oversize_payload_leaves_memory_on_receipt(consumer: Consumer) -> None:
    huge = b"{" + b" " * (15 * 1024 * 1024) + b"}"
    consumer.receive([msg(weather(1), body=huge), msg(weather(2), mid=2)])
    # What waits for the writer: the message without its body, the letter with a prefix.
    queued, verdicts = consumer.ingest._queue.get_nowait()
    consumer.ingest._queue.put((queued, verdicts))
    assert [len(m.payload) for m in queued] == [0, len(weather(2).to_json())]
    refused = verdicts[0]
    assert isinstance(refused, Rejected)
    letter = refused.dead_letter
    assert (letter.payload_len, len(letter.payload)) == (len(huge), DEAD_LETTER_PREFIX)
    acked = consumer.commit()
    assert [m.mid for m in acked] == [1, 2]  # still acknowledged, so never re-sent
    [stored] = consumer.store.dead_letters(reason="too_large")
    assert stored.payload_len == len(huge)
    assert stored.detail == f"{len(huge)} bytes; a message on this stream is at most 16384"


def test_a_conflicting_copy_is_a_conflict_not_a_duplicate(consumer: Consumer) -> None:
    consumer.receive([msg(weather(1))])
    consumer.commit()
    consumer.receive([msg(weather(1), mid=2), msg(weather(1, temp=9.0), mid=3)])
    consumer.commit()
    stats = consumer.ingest.stats
    assert (stats.duplicates, stats.conflicts, stats.dead_letters) == (1, 1, 1)
    [letter] = consumer.store.dead_letters(reason="seq_conflict")
    assert b"9.0" in letter.payload


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_flood_of_unknown_devices_is_two_log_lines_with_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    dead = DeadLetterLog(logging.getLogger("test.deadlog"), clock=clock)
    with caplog.at_level(logging.WARNING, "test.deadlog"):
        for i in range(20_000):
            clock.t = i * 0.002
            device = f"ghost-{i}"
            letter = DeadLetter(0, f"sidewalk/v1/x/{device}/weather", device, b"{}",
                                "unknown_device", "not registered")  # fmt: skip
            dead.note(letter, letter.topic)
        clock.t = 61.0
        dead.tick()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert lines[0] == "dead letter unknown_device on sidewalk/v1/x/ghost-0/weather: not registered"
    assert lines[1] == (
        "19,999 messages from 19,999 unknown devices in the last 61 s, e.g. ghost-1, ghost-2,"
        " ghost-3; each is kept in dead letters (a pole of the Village's: register it)"
    )


def test_the_consumer_logs_unknown_devices_once_a_window(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    c = Consumer(tmp_path, known_devices=KnownDevices(lambda: ["pole-1"]))
    ghosts = [msg(weather(1, f"ghost-{i}"), mid=i + 1) for i in range(500)]
    with caplog.at_level(logging.WARNING, "sidewalk.ingest.consumer"):
        c.receive(ghosts)
        c.commit()
    assert c.ingest.stats.unknown_device == 500
    assert len(c.store.dead_letters(reason="unknown_device")) == 500
    assert len([r for r in caplog.records if "unknown_device" in r.getMessage()]) == 1
    c.store.close()


def test_one_poles_backlog_leaves_room_for_another_pole(consumer: Consumer) -> None:
    flood = [msg(weather(s, "pole-a"), mid=s) for s in range(1, 1501)]
    other = [msg(weather(s, "pole-b"), mid=10_000 + s) for s in range(1, 4)]
    consumer.receive(flood[:750])
    consumer.receive(other)
    consumer.receive(flood[750:])
    first = consumer.commit()  # batch size 500: a backlog batch takes up to 5,000
    assert [m.mid for m in first if "pole-b" in m.topic] == [10_001, 10_002, 10_003]
    assert sum("pole-a" in m.topic for m in first) == 500
    # Nothing lost or reordered per pole: pole-a's rest follow, oldest first.
    while consumer.ingest.pending:
        consumer.commit()
    assert consumer.store.seqs("pole-a") == list(range(1, 1501))
    assert consumer.store.seqs("pole-b") == [1, 2, 3]


def test_fair_share_keeps_arrival_order_and_a_lone_pole_whole() -> None:
    a = [msg(weather(s, "pole-a"), mid=s) for s in range(1, 8)]
    b = [msg(weather(s, "pole-b"), mid=100 + s) for s in range(1, 3)]
    mixed = [*a[:3], b[0], *a[3:], b[1]]
    verdicts = judge_many(mixed)
    fair = fair_share(mixed, verdicts, 2)
    assert fair is not None
    batch, batch_v, rest, _ = fair
    assert [m.mid for m in batch] == [1, 2, 101, 102]
    assert [m.mid for m in rest] == [3, 4, 5, 6, 7]
    # Ignored: a Judged may be a verdict object; every one here is a (site, device, reading) tuple.
    assert [v[1] for v in batch_v] == ["pole-a", "pole-a", "pole-b", "pole-b"]  # type: ignore[index]
    assert fair_share(a, judge_many(a), 2) is None  # one pole: its backlog goes at full speed
    assert fair_share(mixed, verdicts, 7) is None  # nobody over its share


@pytest.mark.services
def test_through_mosquitto_a_new_store_takes_no_retained_reading(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site = slug("retained")
    raw = MqttClient(settings(broker.host, broker.port, slug("raw"), clean_start=True))
    raw.connect()
    try:
        topic = topic_for(site, "pole-1", "weather")
        assert raw.publish_and_wait(topic, weather(1).to_json(), 1, retain=True)
        # A new ingest (a new store): the broker replays the retained reading to it.
        with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
            store = ingest.store
            assert isinstance(store, SqliteTimeSeriesStore)
            assert ingest.wait_for(lambda: ingest.stats.dead_letters == 1, 10), ingest.stats
            assert store.seqs("pole-1") == []
            [letter] = store.dead_letters(reason="retained")
            assert letter.payload == weather(1).to_json()
            # A reading delivered live is stored as ever.
            raw.publish(topic, weather(2).to_json(), 1)
            assert ingest.wait_for(lambda: store.seqs("pole-1") == [2], 10)
    finally:
        raw.publish_and_wait(topic_for(site, "pole-1", "weather"), b"", 1, retain=True)  # clear it
        raw.disconnect()
