"""The ingest fast paths against their slow references.

- ``_BufferedClient._packet_read``: a whole QoS 1 PUBLISH goes to the fast lane;
  anything else (QoS 0, a malformed or partial packet) goes paho's own way.
- ``parse_payload``'s one-call fast path accepts exactly what the reference
  path accepts, with an equal model; every rejection keeps its reason.
- ``write_batch``'s set-based duplicate and gap bookkeeping gives the same
  store as writing the readings one at a time.
- ``IngestConsumer.oldest_pending_age_s`` against a real broker.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from hypothesis import HealthCheck, given, settings
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

from sidewalk.core.contract import (
    STREAM_MODELS,
    AnyReading,
    ContractError,
    SnowMeasurement,
    WeatherReading,
    _parse_payload_slow,
    parse_payload,
    parse_topic,
    topic_for,
)
from sidewalk.core.mqtt import MqttClient, MqttSettings, _BufferedClient
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import (
    BatchResult,
    SqliteTimeSeriesStore,
    StatusUpdate,
)
from tests.fuzz.payloads import DEVICE, SITE, T0, broken_payloads, valid_readings
from tests.ingest.pipeline import scenario_clock, slug

# --- the receive fast lane ------------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _publish(
    topic: bytes, payload: bytes, *, qos: int, mid: int = 7, topic_len: int | None = None
) -> bytes:
    """An MQTT 5 PUBLISH packet; ``topic_len`` lies about the topic's length."""
    body = (topic_len if topic_len is not None else len(topic)).to_bytes(2, "big") + topic
    if qos:
        body += mid.to_bytes(2, "big")
    body += b"\x00" + payload  # no properties
    return bytes([0x30 | qos << 1]) + _varint(len(body)) + body


class _Sock:
    """Serves what the test queued, then says 'would block' like a non-blocking socket."""

    def __init__(self, data: bytes = b"") -> None:
        self.data = bytearray(data)

    def recv(self, n: int) -> bytes:
        if not self.data:
            raise BlockingIOError
        out = bytes(self.data[:n])
        del self.data[:n]
        return out

    def close(self) -> None:
        self.data.clear()


def _client(buffered: bytes, rest: bytes = b"") -> tuple[_BufferedClient, list[Any], list[Any]]:
    """A client whose read buffer holds ``buffered`` and whose socket holds ``rest``."""
    client = _BufferedClient(
        callback_api_version=CallbackAPIVersion.VERSION2,
        client_id="t",
        protocol=paho.MQTTv5,
        manual_ack=True,
    )
    fast: list[Any] = []
    slow: list[Any] = []
    client.fast_connection = 3
    client.fast_publish = lambda msgs: fast.append([(m.topic, m.payload, m.mid) for m in msgs])
    client.on_message = lambda _c, _u, m: slow.append((m.topic, m.payload, m.qos))
    sock = _Sock(rest)
    client._sock = sock  # type: ignore[assignment]  # only recv() is used
    client._rbuf, client._rpos, client._rsock = buffered, 0, sock
    return client, fast, slow


def test_whole_qos1_publishes_take_the_fast_lane_as_one_list() -> None:
    a = _publish(b"sidewalk/v1/s/d/weather", b'{"x":1}', qos=1, mid=300)
    b = _publish(b"sidewalk/v1/s/d/snow", b"", qos=1, mid=301)
    # A payload over 127 bytes: a two-byte remaining length.
    c = _publish(b"sidewalk/v1/s/d/jpeg", b"y" * 300, qos=1, mid=302)
    q0 = _publish(b"a/b", b"zero", qos=0)
    client, fast, slow = _client(a + b + c + q0)
    assert client._packet_read() == MQTTErrorCode.MQTT_ERR_SUCCESS
    # One list up to the first packet that is not a QoS 1 PUBLISH.
    assert client._rpos == len(a + b + c)
    assert fast == [
        [
            ("sidewalk/v1/s/d/weather", b'{"x":1}', 300),
            ("sidewalk/v1/s/d/snow", b"", 301),
            ("sidewalk/v1/s/d/jpeg", b"y" * 300, 302),
        ]
    ]
    assert slow == []
    assert client._packet_read() == MQTTErrorCode.MQTT_ERR_SUCCESS
    assert slow == [("a/b", b"zero", 0)]


def test_fast_lane_messages_carry_qos_retain_and_connection() -> None:
    retained = bytearray(_publish(b"a/b", b"r", qos=1, mid=5))
    retained[0] |= 0x01
    client, _, _ = _client(bytes(retained))
    got: list[Any] = []
    client.fast_publish = got.extend
    assert client._packet_read() == MQTTErrorCode.MQTT_ERR_SUCCESS
    assert [(m.qos, m.retain, m.mid, m.connection) for m in got] == [(1, True, 5, 3)]


def test_fast_lane_skips_properties_and_reads_long_lengths() -> None:
    # Properties present (payload format indicator, 2 bytes), and a payload
    # whose remaining length takes three bytes.
    body = (3).to_bytes(2, "big") + b"a/b" + (77).to_bytes(2, "big") + b"\x02\x01\x01"
    big = b"z" * 20_000
    packet = bytes([0x32]) + _varint(len(body) + len(big)) + body + big
    small = _publish(b"c/d", b"ok", qos=1, mid=78)
    client, fast, slow = _client(packet + small)
    assert client._packet_read() == MQTTErrorCode.MQTT_ERR_SUCCESS
    assert fast == [[("a/b", big, 77), ("c/d", b"ok", 78)]]
    assert slow == []


def test_qos0_publish_goes_through_paho() -> None:
    client, fast, slow = _client(_publish(b"a/b", b"zero", qos=0))
    assert client._packet_read() == MQTTErrorCode.MQTT_ERR_SUCCESS
    assert fast == []
    assert slow == [("a/b", b"zero", 0)]


def test_malformed_publish_is_handed_back_to_paho_which_reports_it() -> None:
    # The topic length points past the end of the packet: the fast lane cannot
    # parse it, so paho reads it and reports a protocol error; the buffer then
    # continues with the next packet, which takes the fast lane again.
    bad = _publish(b"a/b", b"", qos=1, topic_len=200)
    good = _publish(b"c/d", b"ok", qos=1, mid=9)
    client, fast, slow = _client(bad + good)
    assert client._packet_read() == MQTTErrorCode.MQTT_ERR_PROTOCOL
    assert fast == []
    assert slow == []
    assert client._rpos == len(bad)
    assert client._packet_read() == MQTTErrorCode.MQTT_ERR_SUCCESS
    assert fast == [[("c/d", b"ok", 9)]]


def test_partial_publish_is_assembled_by_paho_then_delivered_fast() -> None:
    packet = _publish(b"sidewalk/v1/s/d/weather", b"x" * 100, qos=1, mid=42)
    client, fast, slow = _client(packet[:10], rest=packet[10:])
    assert client._packet_read() == MQTTErrorCode.MQTT_ERR_SUCCESS
    assert fast == [[("sidewalk/v1/s/d/weather", b"x" * 100, 42)]]
    assert slow == []


# --- parse_payload: fast path against the reference -----------------------------

FAST = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _both(topic: str, payload: bytes) -> tuple[Any, Any]:
    """(parse_payload's outcome, the reference path's): a model or (reason, detail)."""

    def run(f: Any) -> Any:
        try:
            return f()
        except ContractError as exc:
            return (exc.reason, exc.detail)

    return (
        run(lambda: parse_payload(topic, payload)),
        run(lambda: _parse_payload_slow(parse_topic(topic), payload)),
    )


def _assert_same(topic: str, payload: bytes) -> None:
    fast, slow = _both(topic, payload)
    assert fast == slow
    if not isinstance(slow, tuple):
        assert type(fast) is type(slow)
        assert fast.to_json() == slow.to_json()
        assert fast.model_fields_set == slow.model_fields_set


@FAST
@given(valid_readings())
def test_fast_parse_equals_reference_on_valid_readings(case: tuple[str, dict[str, Any]]) -> None:
    stream, values = case
    topic = topic_for(SITE, DEVICE, stream)
    _assert_same(topic, json.dumps(values).encode())
    _assert_same(topic, json.dumps(values, separators=(",", ":")).encode())


@FAST
@given(broken_payloads())
def test_fast_parse_equals_reference_on_broken_payloads(case: tuple[str, bytes]) -> None:
    stream, payload = case
    _assert_same(topic_for(SITE, DEVICE, stream), payload)


BASE = '"device":"pole-1","seq":5,"ts":1764460800000,"air_temp_c":-5'


@pytest.mark.parametrize(
    "payload",
    [
        "{" + BASE + "}",  # no schema: the model's default would take it
        '{"schema":1.0,' + BASE + "}",
        '{"schema":true,' + BASE + "}",
        '{"schema":1,"schema":1.0,' + BASE + "}",
        '{"schema":1.0,"schema":1,' + BASE + "}",
        '{"schema":1,"sch\\u0065ma":true,' + BASE + "}",
        '{"schema":1,' + BASE + ',"stream":"snow"}',
        '{"schema":1,' + BASE + ',"stream":"weather"}',
        '{"schema":1,' + BASE.replace("pole-1", "pole-2") + "}",
        '{"schema":1,' + BASE + "} x",
        '\ufeff{"schema":1,' + BASE + "}",
        '{"schema":1,' + BASE + ',"precip_mm":NaN}',
        '{"schema":1,' + BASE + ',"precip_mm":1e400}',
        '{"schema":1,' + BASE.replace('"seq":5', '"seq":' + "9" * 5000) + "}",
        '{"schema":1,' + BASE.replace('"seq":5', '"seq":5.0') + "}",
        '{"schema":1,' + BASE + ',"air_temp_c":"x"}',
        '{"schema":1,' + BASE.replace('"air_temp_c":-5', '"air_temp_c":"x","air_temp_c":-5') + "}",
        '{"schema":1,' + BASE + ',"x":{"schema":1}}',
        '{"schema":1,' + BASE + ',"x":' + "[" * 3000 + "]" * 3000 + "}",
        '{"schema":1,"device":"pole-1","seq":5,"ts":1764460800000}',
    ],
)
def test_fast_parse_equals_reference_on_edge_cases(payload: str) -> None:
    _assert_same("sidewalk/v1/s/pole-1/weather", payload.encode())


def test_fast_parse_takes_the_common_payload() -> None:
    # The fast path must actually serve the well-formed stream (else it is dead weight).
    from sidewalk.core.contract import _parse_payload_fast

    payload = WeatherReading(device="pole-1", seq=1, ts=T0, air_temp_c=-1).to_json()
    parts = parse_topic("sidewalk/v1/s/pole-1/weather")
    assert _parse_payload_fast(parts, payload) is not None
    assert _parse_payload_fast(parts, payload.replace(b'"schema":1', b'"schema":1.0')) is None


@pytest.mark.parametrize("stream", sorted(STREAM_MODELS))
def test_fast_path_takes_schema_only_as_the_integer_1_on_every_stream(stream: str) -> None:
    # The fast validator is each model's own with `schema` required and strict;
    # pydantic-core would silently reuse a plain model's prebuilt validator
    # (default 1, `1.0` and `true` taken) if the class were not unmarked while
    # it is built. The slow path says unknown_schema to all three.
    from sidewalk.core.contract import _parse_payload_fast

    example: Any = {
        "weather": WeatherReading(device="pole-1", seq=1, ts=T0, air_temp_c=-1),
        "snow": SnowMeasurement(
            device="pole-1", seq=1, ts=T0, frontage="a", snow_cover_fraction=0, cleared_width_mm=0
        ),
    }.get(stream)
    if example is None:
        values: dict[str, Any] = {"device": "pole-1", "seq": 1, "ts": T0, "state": "online"}
        values |= {"sha256": "0" * 64, "bytes_len": 1} if stream == "frame" else {}
        model = STREAM_MODELS[stream]
        fields = model.model_fields
        example = model(**{k: v for k, v in values.items() if k in fields})
    payload = example.to_json()
    parts = parse_topic(topic_for(SITE, "pole-1", stream))
    assert type(_parse_payload_fast(parts, payload)) is STREAM_MODELS[stream]
    for schema in (b"", b'"schema":1.0,', b'"schema":true,'):
        other = payload.replace(b'"schema":1,', schema)
        assert _parse_payload_fast(parts, other) is None
        with pytest.raises(ContractError) as err:
            parse_payload(topic_for(SITE, "pole-1", stream), other)
        assert err.value.reason == "unknown_schema"


def test_every_stream_model_is_covered() -> None:
    # The fast path's argument holds only for flat models of bounded scalars;
    # a new stream with a free-form field must be checked before it joins.
    flat = {"weather", "snow", "frame", "status", "stored"}
    assert set(STREAM_MODELS) == flat


# --- write_batch: set-based against one at a time -------------------------------


def _reading(device: str, seq: int, variant: int = 0) -> AnyReading:
    if seq % 3 == 0:
        return SnowMeasurement(
            device=device,
            seq=seq,
            ts=T0 + seq,
            frontage="main-st-101",
            snow_cover_fraction=0.5,
            cleared_width_mm=1000.0 + variant,
        )
    return WeatherReading(device=device, seq=seq, ts=T0 + seq, air_temp_c=-5.0 + variant)


def _snapshot(store: SqliteTimeSeriesStore, devices: Sequence[str]) -> dict[str, Any]:
    return {
        "readings": store.readings(),
        "gaps": store.gaps(),
        "dead": [(d.topic, d.device, d.payload, d.reason, d.detail) for d in store.dead_letters()],
        "states": [store.device_state(d) for d in devices],
        "marks": [store.stored_up_to(d) for d in devices],
    }


def _write(
    store: SqliteTimeSeriesStore,
    readings: Sequence[AnyReading],
    sizes: Sequence[int],
    statuses: Mapping[int, StatusUpdate],
) -> list[tuple[Any, ...]]:
    """Write in batches of ``sizes``; a status in ``statuses`` goes alone before that index."""
    outcomes: list[tuple[Any, ...]] = []
    i = 0
    for size in sizes:
        chunk = readings[i : i + size]
        if i in statuses:
            store.write_batch([], statuses=[statuses[i]], received_at_ms=T0)
        r: BatchResult = store.write_batch(chunk, received_at_ms=T0)
        outcomes.append(
            (
                [(x.device, x.seq) for x in r.stored],
                r.duplicates,
                r.gaps_opened,
            )
        )
        i += size
    return outcomes


def test_set_based_write_equals_one_at_a_time(tmp_path: Path) -> None:
    from sidewalk.core.contract import Status

    rng = random.Random(20261130)
    devices = ["pole-a", "pole-b", "pole-c"]
    for trial in range(12):
        readings: list[AnyReading] = []
        for _ in range(rng.randint(50, 400)):
            dev = rng.choice(devices)
            # Mostly ascending with jumps, re-sends, late fills and conflicting copies.
            seq = rng.choice([rng.randint(1, 120), rng.randint(1, 30), rng.randint(100, 300)])
            readings.append(_reading(dev, seq, variant=rng.choice([0, 0, 0, 1])))
        # Batch boundaries for the set-based run; the status (a buffer floor) goes
        # in before the same reading in both runs, so the floor applies at one point.
        sizes: list[int] = []
        left = len(readings)
        while left:
            sizes.append(min(left, rng.randint(1, 150)))
            left -= sizes[-1]
        starts = [sum(sizes[:k]) for k in range(len(sizes))]
        floor_at = rng.choice(starts)
        floor = StatusUpdate(
            "s", Status(device="pole-b", state="online", ts=T0, buffer_floor_seq=rng.randint(2, 60))
        )
        one = SqliteTimeSeriesStore(tmp_path / f"one-{trial}.db")
        many = SqliteTimeSeriesStore(tmp_path / f"many-{trial}.db")
        ones = _write(one, readings, [1] * len(readings), {floor_at: floor})
        manys = _write(many, readings, sizes, {floor_at: floor})
        flat = [tuple([x for o in outs for x in o[k]] for k in range(3)) for outs in (ones, manys)]
        assert flat[0] == flat[1]
        assert _snapshot(one, devices) == _snapshot(many, devices)
        # The trial exercised duplicates and gaps.
        assert any(o[1] for o in ones)
        assert any(o[2] for o in ones)
        one.close()
        many.close()


def test_hundred_row_inserts_store_every_row_once_as_sent(tmp_path: Path) -> None:
    # 300 + 50 readings: full 100-row statements and the rest one by one, for
    # rows without a frontage (weather) and with one (snow, every third).
    store = SqliteTimeSeriesStore(tmp_path / "rows.db")
    a = [_reading("pole-a", s) for s in range(1, 301)]
    b = [_reading("pole-b", s) for s in range(1, 51)]
    result = store.write_batch(a + b, received_at_ms=T0)
    assert len(result.stored) == 350
    assert [r.to_json() for r in store.readings(device="pole-a")] == [r.to_json() for r in a]
    assert len(store.readings(frontage="main-st-101")) == 100 + 16
    again = store.write_batch(a + b, received_at_ms=T0)
    assert again.stored == []
    assert len(again.duplicates) == 350
    assert store.count() == 350
    store.close()


def test_round_robin_halves_fill_every_gap(tmp_path: Path) -> None:
    # Two workers dealt alternate seqs: each batch of one opens gaps the other fills.
    store = SqliteTimeSeriesStore(tmp_path / "rr.db")
    odd = [_reading("pole-a", s) for s in range(1, 2001, 2)]
    even = [_reading("pole-a", s) for s in range(2, 2001, 2)]
    for k in range(0, 1000, 250):
        store.write_batch(odd[k : k + 250], received_at_ms=T0)
        r = store.write_batch(even[k : k + 250], received_at_ms=T0)
        assert len(r.stored) == 250
        assert not r.duplicates
    assert store.gaps() == []
    assert store.stored_up_to("pole-a") == 2000
    assert store.count() == 2000
    store.close()


# --- oldest_pending_age_s against the broker ------------------------------------


class _GatedStore(SqliteTimeSeriesStore):
    """A real store whose commits wait until the test opens the gate."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()

    def write_batch(self, readings: Sequence[AnyReading], **kw: Any) -> BatchResult:
        self.gate.wait(30)
        return super().write_batch(readings, **kw)


@pytest.mark.services
def test_oldest_pending_age(broker: Any, tmp_path: Path) -> None:
    site = slug("s")
    store = _GatedStore(tmp_path / "ts.db")
    mqtt = MqttSettings(host=broker.host, port=broker.port, client_id=slug("ingest"))
    consumer = IngestConsumer(store, mqtt, site=site, batch_wait_s=0.01, now_ms=scenario_clock())
    pub = MqttClient(MqttSettings(host=broker.host, port=broker.port, client_id=slug("pub")))
    consumer.start()
    pub.connect()
    try:
        assert consumer.oldest_pending_age_s is None
        reading = WeatherReading(device="pole-1", seq=1, ts=T0, air_temp_c=-2.0)
        pub.publish(topic_for(site, "pole-1", "weather"), reading.to_json(), 1)
        deadline = time.monotonic() + 10
        while consumer.pending == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert consumer.pending == 1
        time.sleep(0.3)
        age = consumer.oldest_pending_age_s
        assert age is not None
        assert 0.3 <= age < 10
        store.gate.set()
        assert consumer.wait_for(lambda: consumer.stats.stored == 1)
        # The ack (which clears the pending entry) follows the commit's count.
        assert consumer.wait_for(lambda: consumer.oldest_pending_age_s is None)
        assert store.count() == 1
    finally:
        store.gate.set()
        pub.disconnect()
        consumer.stop()
        store.close()


def test_backlog_goes_in_larger_batches_and_nothing_waits_for_it(tmp_path: Path) -> None:
    from sidewalk.core.mqtt import MqttMessage
    from sidewalk.ingest.consumer import BACKLOG_BATCH_FACTOR

    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    mqtt = MqttSettings(host="127.0.0.1", port=1, client_id="unused")
    consumer = IngestConsumer(store, mqtt, batch_size=10, batch_wait_s=1.0)
    topic = "sidewalk/v1/s/pole-1/weather"
    for seq in range(1, 10 * BACKLOG_BATCH_FACTOR + 6):
        msg = MqttMessage(topic, _reading("pole-1", seq).to_json(), 1, False, seq)
        consumer._receive(msg)
    assert consumer.pending == 10 * BACKLOG_BATCH_FACTOR + 5
    start = time.monotonic()
    first, _ = consumer._next_batch()
    second, _ = consumer._next_batch()
    assert len(first) == 10 * BACKLOG_BATCH_FACTOR
    assert [m.mid for m in first] == list(range(1, 10 * BACKLOG_BATCH_FACTOR + 1))
    assert len(second) == 5  # short of batch_size: it waited for the timer
    assert time.monotonic() - start >= 1.0
    store.close()


def test_a_received_list_larger_than_a_batch_is_split_in_arrival_order(tmp_path: Path) -> None:
    from sidewalk.core.mqtt import MqttMessage
    from sidewalk.ingest.consumer import BACKLOG_BATCH_FACTOR

    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    mqtt = MqttSettings(host="127.0.0.1", port=1, client_id="unused")
    consumer = IngestConsumer(store, mqtt, batch_size=10, batch_wait_s=0.01)
    topic = "sidewalk/v1/s/pole-1/weather"
    largest = 10 * BACKLOG_BATCH_FACTOR
    msgs = [
        MqttMessage(topic, _reading("pole-1", seq).to_json(), 1, False, seq)
        for seq in range(1, largest + 31)
    ]
    consumer._receive_many(msgs[:5])
    consumer._receive_many(msgs[5:])  # one socket read of largest + 25
    assert consumer.pending == largest + 30
    first, first_verdicts = consumer._next_batch()
    assert [m.mid for m in first] == list(range(1, largest + 1))
    assert len(first_verdicts) == len(first)
    consumer._finished(len(first))
    assert consumer.pending == 30
    assert consumer.oldest_pending_age_s is not None
    second, _ = consumer._next_batch()
    assert [m.mid for m in second] == list(range(largest + 1, largest + 31))
    consumer._finished(len(second))
    assert consumer.pending == 0
    assert consumer.oldest_pending_age_s is None
    store.close()
