"""Evidence JPEGs on ``…/<device>/jpeg`` land in the content-addressed store before the ack."""

from __future__ import annotations

import hashlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from sidewalk.core.contract import jpeg_topic
from sidewalk.core.mqtt import MqttClient
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, settings, slug

pytestmark = pytest.mark.services


def a_jpeg() -> bytes:
    frame = np.full((48, 64, 3), 200, np.uint8)
    cv2.rectangle(frame, (10, 10), (40, 30), (20, 20, 20), -1)
    ok, body = cv2.imencode(".jpg", frame)
    assert ok
    return bytes(body)


def test_jpeg_bytes_are_stored_by_hash_and_non_jpeg_is_dead_lettered(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    evidence = EvidenceStore(tmp_path / "evidence")
    body = a_jpeg()
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, evidence=evidence
    ) as ingest:
        raw = MqttClient(settings(broker.host, broker.port, slug("raw")))
        raw.connect()
        try:
            raw.publish_and_wait(jpeg_topic(site, device), body)
            raw.publish_and_wait(jpeg_topic(site, device), b"GIF89a not a jpeg")
        finally:
            raw.disconnect()
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        assert ingest.wait_for(lambda: ingest.stats.dead_letters == 1, timeout_s=10)
        [letter] = store.dead_letters(reason="not_jpeg")
        assert letter.device == device
    sha = hashlib.sha256(body).hexdigest()
    assert evidence.path(sha).read_bytes() == body
