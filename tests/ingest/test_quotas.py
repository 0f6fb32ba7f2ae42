"""One pole must not fill the server's disk: size limits, bounded dead letters, the
evidence quota, the free-space floor and a one-line cause when writes fail.

Everything through a real Mosquitto; the broker-side limit through one started
with ``deploy/mosquitto.conf``'s own ``max_packet_size`` line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from sidewalk.core.contract import WeatherReading, jpeg_topic, topic_for
from sidewalk.core.mqtt import MqttClient, MqttPacketTooLarge
from sidewalk.ingest.consumer import IngestConsumer, write_failure_cause
from sidewalk.ingest.metrics import ingest_observability
from sidewalk.ingest.validate import SizeLimits
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.space import FreeSpaceFloor
from sidewalk.storage.timeseries import DEAD_LETTER_PREFIX, SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import T0, running_ingest, settings, slug

pytestmark = pytest.mark.services

REPO = Path(__file__).resolve().parents[2]
KIB = 1024


def deploy_max_packet_size() -> int:
    """The ``max_packet_size`` that ``deploy/mosquitto.conf`` ships."""
    text = (REPO / "deploy" / "mosquitto.conf").read_text()
    match = re.search(r"^max_packet_size\s+(\d+)\s*$", text, re.MULTILINE)
    assert match, "deploy/mosquitto.conf must set max_packet_size"
    return int(match.group(1))


@pytest.fixture(scope="module")
def limited_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MosquittoServer]:
    """A Mosquitto with the deploy file's packet size limit."""
    limit = deploy_max_packet_size()
    server = MosquittoServer(
        tmp_path_factory.mktemp("limited"), extra_config=f"max_packet_size {limit}\n"
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def a_jpeg(n: int, salt: bytes = b"") -> bytes:
    """A body with JPEG's start and end markers, ``n`` bytes long."""
    middle = (salt + b"\0" * n)[: n - 5]
    return b"\xff\xd8\xff" + middle + b"\xff\xd9"


def weather(device: str, seq: int) -> bytes:
    return WeatherReading(device=device, seq=seq, ts=T0 + seq, air_temp_c=-3.0).to_json()


def test_the_broker_refuses_a_packet_over_the_deploy_limit_and_the_pole_is_told(
    limited_broker: MosquittoServer,
) -> None:
    """A v5 publisher learns the limit from CONNACK and is refused before sending;
    a client that ignores it is disconnected with "Packet too large" (0x95)."""
    limit = deploy_max_packet_size()
    site, device = slug("site"), slug("pole")
    topic = jpeg_topic(site, device)
    pole = MqttClient(settings(limited_broker.host, limited_broker.port, slug("pole")))
    pole.connect()
    try:
        assert pole.max_packet_size == limit
        with pytest.raises(MqttPacketTooLarge) as refused:
            pole.publish(topic, a_jpeg(limit + 1))
        assert refused.value.limit == limit
        assert "over the broker's maximum" in str(refused.value)
        assert pole.is_connected  # nothing was sent: the session is intact
        assert pole.publish_and_wait(topic, a_jpeg(100 * KIB))
    finally:
        pole.disconnect()
    # A client that does not check (paho alone): the broker cuts the connection
    # with a reason code the client sees, and the message goes nowhere.
    reasons: list[int] = []
    gone = threading.Event()
    raw = paho.Client(CallbackAPIVersion.VERSION2, client_id=slug("raw"), protocol=paho.MQTTv5)

    def on_disconnect(*args: object) -> None:
        reason = args[3]
        assert isinstance(reason, ReasonCode)
        reasons.append(reason.value)
        gone.set()

    raw.on_disconnect = on_disconnect
    raw.connect(limited_broker.host, limited_broker.port)
    raw.loop_start()
    try:
        raw.publish(topic, a_jpeg(limit + 1), qos=1)
        assert gone.wait(10)
    finally:
        raw.disconnect()
        raw.loop_stop()
    # 0x95 "Packet too large" when the client reads the broker's DISCONNECT; a
    # client still writing its 20 MB when the socket closes sees only the close
    # (0x80). The broker's log names the cause either way.
    assert reasons[0] in {0x95, 0x80}
    assert "disconnected due to oversize packet" in limited_broker.log.read_text()


def test_oversize_messages_are_too_large_dead_letters_with_a_bounded_prefix(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    """One pole's attack: 1 MB, 15 MB, 10 MB "JPEG"s and junk on weather.
    Each becomes a dead letter of 4 KiB plus length and sha256; nothing is
    kept as evidence and the store stays small."""
    site, device = slug("site"), slug("pole")
    evidence = EvidenceStore(tmp_path / "evidence")
    sizes = [1_000_000, 15_000_000, 10_000_000]
    junk = b"x" * 2_000_000
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, evidence=evidence,
        limits=SizeLimits(message_bytes=16 * KIB, jpeg_bytes=512 * KIB),
    ) as ingest:  # fmt: skip
        raw = MqttClient(settings(broker.host, broker.port, slug("raw")))
        raw.connect()
        try:
            for n in sizes:
                assert raw.publish_and_wait(jpeg_topic(site, device), a_jpeg(n), timeout_s=30)
            assert raw.publish_and_wait(topic_for(site, device, "weather"), junk, timeout_s=30)
            assert raw.publish_and_wait(topic_for(site, device, "weather"), weather(device, 1))
        finally:
            raw.disconnect()
        assert ingest.wait_for(lambda: ingest.stats.dead_letters == 4 and ingest.stats.stored == 1)
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        letters = store.dead_letters(reason="too_large")
        assert ingest.stats.too_large == 4
    assert [d.payload_len for d in letters] == [*sizes, len(junk)]
    for letter, body in zip(letters, [*(a_jpeg(n) for n in sizes), junk], strict=True):
        assert letter.device == device
        assert letter.payload == body[:DEAD_LETTER_PREFIX]
        assert letter.truncated
        assert letter.payload_sha256 == hashlib.sha256(body).hexdigest()
    assert "at most 524288" in letters[0].detail
    assert list(evidence.root.glob("??/*.jpg")) == []
    # 28 MB received; what stays on disk is a few pages per dead letter.
    on_disk = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert on_disk < 1_000_000, on_disk


def test_evidence_beyond_a_devices_daily_quota_is_refused_with_a_reason(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device, other = slug("site"), slug("pole"), slug("pole")
    evidence = EvidenceStore(tmp_path / "evidence")
    frames = [a_jpeg(60 * KIB, salt=bytes([i])) for i in range(3)]
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, evidence=evidence,
        evidence_quota_bytes=150 * KIB,
    ) as ingest:  # fmt: skip
        raw = MqttClient(settings(broker.host, broker.port, slug("raw")))
        raw.connect()
        try:
            for body in [*frames, frames[0]]:  # the last: a re-send, already stored
                assert raw.publish_and_wait(jpeg_topic(site, device), body)
            assert raw.publish_and_wait(jpeg_topic(site, other), frames[2])  # its own quota
        finally:
            raw.disconnect()
        assert ingest.wait_for(lambda: ingest.stats.received >= 5)
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        [refused] = store.dead_letters(reason="evidence_quota")
    assert refused.device == device
    assert refused.payload_sha256 == hashlib.sha256(frames[2]).hexdigest()
    assert "over its quota of 153600 bytes per day" in refused.detail
    assert ingest.stats.over_quota == 1
    assert evidence.bytes_since(device, 0) == 2 * 60 * KIB
    for body in frames:  # the third came from the other pole, within its own quota
        assert hashlib.sha256(body).hexdigest() in evidence


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_below_the_free_space_floor_ingest_refuses_and_says_why(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    """The floor set above the real free space: nothing is written or acknowledged,
    /readyz is 503 with the reason, the metrics show it; lowered, all arrives."""
    site, device = slug("site"), slug("pole")
    space = FreeSpaceFloor([tmp_path], min_free_bytes=0, min_free_percent=0, cache_s=0)
    space.min_free_bytes = space.report().free_bytes + 10 * 1024**4  # 10 TiB more than free
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, space=space, write_retry_s=0.1
    ) as ingest:
        obs = ingest_observability(ingest, tmp_path / "ts.db", space=space).serve()
        raw = MqttClient(settings(broker.host, broker.port, slug("raw")))
        raw.connect()
        try:
            for seq in range(1, 6):
                raw.publish_and_wait(topic_for(site, device, "weather"), weather(device, seq))
            assert ingest.wait_for(lambda: ingest.write_problem is not None, 5)
            status, body = _get(f"{obs.url}/readyz")
            assert status == 503
            reason = json.loads(body)["checks"]["disk"]
            assert reason.startswith("disk space low:")
            assert "below the floor" in reason
            assert json.loads(body)["checks"]["store"] == "ok"  # the store is fine
            _, metrics = _get(f"{obs.url}/metrics")
            assert "sidewalk_ingest_refusing 1.0" in metrics
            assert "sidewalk_storage_free_floor_bytes" in metrics
            assert ingest.pending == 5  # held, unacknowledged
            store = ingest.store
            assert isinstance(store, SqliteTimeSeriesStore)
            assert store.count(device) == 0
            # Space again (an operator, the prune): everything arrives, nothing lost.
            space.min_free_bytes = 0
            assert ingest.wait_for(lambda: ingest.stats.stored == 5, 10)
            assert _get(f"{obs.url}/readyz")[0] == 200
            assert ingest.write_problem is None
            assert store.seqs(device) == [1, 2, 3, 4, 5]
        finally:
            raw.disconnect()
            obs.stop()


def test_a_full_database_is_one_line_naming_the_cause_not_a_traceback_a_second(
    broker: MosquittoServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLite's own limit (max_page_count) gives a real SQLITE_FULL. The log names
    "disk full" once (not "cannot rollback"), /readyz says so, and nothing is lost."""
    site, device = slug("site"), slug("pole")
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    mqtt = settings(broker.host, broker.port, slug("ingest"))
    ingest = IngestConsumer(store, mqtt, site=site, write_retry_s=0.05, time_policy=None)
    obs = ingest_observability(ingest, store.path).serve()
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages}")
    caplog.set_level(logging.DEBUG, logger="sidewalk.ingest.consumer")
    ingest.start()
    raw = MqttClient(settings(broker.host, broker.port, slug("raw")))
    raw.connect()
    try:
        # The file's own pages hold about 30 readings: 80 overflow them.
        for seq in range(1, 81):
            raw.publish(topic_for(site, device, "weather"), weather(device, seq))
        assert ingest.wait_for(lambda: ingest.write_problem is not None, 5)
        time.sleep(1.0)  # about 20 retries
        status, body = _get(f"{obs.url}/readyz")
        assert status == 503
        assert "disk full" in json.loads(body)["checks"]["store"]
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1, [r.getMessage() for r in errors]
        [line] = errors
        assert "disk full" in line.getMessage()
        assert line.exc_info is None  # one line, no traceback
        assert not any("cannot rollback" in r.getMessage() for r in caplog.records)
        store._db.execute("PRAGMA max_page_count = 1073741823")
        assert ingest.wait_for(lambda: ingest.stats.stored == 80, 10)
        assert store.seqs(device) == list(range(1, 81))
        assert any("commits again" in r.getMessage() for r in caplog.records)
    finally:
        raw.disconnect()
        ingest.stop()
        obs.stop()
        store.close()


def test_write_failure_causes_are_named() -> None:
    import errno
    import sqlite3

    # What SQLite raised on a full disk: the rollback error, the cause in its context.
    chained = sqlite3.OperationalError("cannot rollback - no transaction is active")
    chained.__context__ = sqlite3.OperationalError("database or disk is full")
    assert write_failure_cause(chained).startswith("disk full")
    assert write_failure_cause(OSError(errno.ENOSPC, "No space left on device")).startswith(
        "disk full"
    )
    locked = write_failure_cause(sqlite3.OperationalError("database is locked"))
    assert locked.startswith("database locked")
