"""The paho adapter: negotiation, refusal, reconnection, manual acks."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidewalk.core.mqtt import (
    MqttClient,
    MqttConnectRefused,
    MqttMessage,
    MqttSettings,
    MqttUnreachable,
)
from sidewalk.edge.simulated import SimulatedPole
from sidewalk.ingest.embedded_broker import EmbeddedBroker
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer, free_port
from tests.ingest.pipeline import running_ingest, running_publisher, settings, slug, storm

pytestmark = pytest.mark.services


def test_v5_is_negotiated_with_mosquitto(broker: MosquittoServer) -> None:
    client = MqttClient(settings(broker.host, broker.port, slug("c"), clean_start=True))
    client.connect()
    try:
        assert client.protocol == "5"
        assert client.is_connected
    finally:
        client.disconnect()
    assert not client.is_connected


def test_refused_connection_raises(tmp_path: Path) -> None:
    closed = MosquittoServer(tmp_path, allow_anonymous=False)
    closed.start()
    try:
        client = MqttClient(settings(closed.host, closed.port, slug("c")))
        with pytest.raises(MqttConnectRefused) as err:
            client.connect()
        assert err.value.reason == "not_authorized"
        assert not client.is_connected
    finally:
        closed.stop()


def test_nothing_listening_raises() -> None:
    client = MqttClient(settings("127.0.0.1", free_port(), slug("c")))
    with pytest.raises(MqttUnreachable):
        client.connect()
    assert not client.is_connected


def test_reconnect_keeps_consuming_and_unacked_messages_come_again(
    broker: MosquittoServer,
) -> None:
    """Messages received but not acknowledged are re-delivered after a restart."""
    topic = f"sidewalk/v1/{slug('site')}/pole-1/weather"
    inbox: queue.SimpleQueue[MqttMessage] = queue.SimpleQueue()
    connects = threading.Semaphore(0)
    consumer = MqttClient(
        settings(broker.host, broker.port, slug("consumer")),
        on_message=inbox.put,
        on_connect=lambda _present: connects.release(),
        manual_ack=True,
    )
    consumer.connect()
    assert connects.acquire(timeout=1)
    consumer.subscribe(topic)
    sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
    sender.connect()
    try:
        assert sender.publish_and_wait(topic, b"first", 1)
        first = inbox.get(timeout=5)
        assert first.payload == b"first"
        # Not acknowledged: the broker must send it again on the next connection.
        broker.restart()
        assert connects.acquire(timeout=10), "consumer did not reconnect"
        again = inbox.get(timeout=5)
        assert again.payload == b"first"
        consumer.ack(again)
        # The sender reconnects too (its message waits queued meanwhile).
        assert sender.publish_and_wait(topic, b"second", 1, timeout_s=10)
        second = inbox.get(timeout=5)
        assert second.payload == b"second"
        consumer.ack(second)
    finally:
        sender.disconnect()
        consumer.disconnect()
        broker.start()


@pytest.fixture
def amqtt_broker() -> Iterator[tuple[str, int]]:
    """The embedded amqtt broker the one-command demo runs (MQTT 3.1.1 only)."""
    broker = EmbeddedBroker()
    broker.start()
    try:
        yield broker.host, broker.port
    finally:
        broker.stop()


def test_same_path_through_amqtt_falls_back_to_3_1_1(
    amqtt_broker: tuple[str, int], tmp_path: Path
) -> None:
    host, port = amqtt_broker
    site, device = slug("site"), slug("pole")
    with (
        running_ingest(host, port, tmp_path / "ts.db", site, connect_timeout_s=1.0) as ingest,
        running_publisher(
            host, port, tmp_path / "buf.db", site, device, connect_timeout_s=1.0
        ) as pub,
    ):
        assert ingest.protocol == "3.1.1"
        played = SimulatedPole(pub, storm(200)).run()
        assert pub.wait_stored(200, timeout_s=30), pub.watermark
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        assert store.readings(device=device) == played
        assert store.gaps(device) == []


def test_settings_never_show_the_password_in_a_log_line() -> None:
    settings = MqttSettings("127.0.0.1", 1883, "ingest", username="ingest", password="s3cret-pw")
    assert "s3cret-pw" not in repr(settings)
    assert "s3cret-pw" not in f"{settings}"
    assert settings.password == "s3cret-pw"
