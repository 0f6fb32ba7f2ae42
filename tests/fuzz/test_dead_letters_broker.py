"""Malformed messages through the real path: Mosquitto → IngestConsumer → SQLite.

Each generated message must land in ``dead_letters`` byte for byte with the
reason ``classify`` gives, the counts must match exactly, and the valid
readings published between them must all be stored.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from sidewalk.core.mqtt import MqttClient, MqttMessage
from sidewalk.ingest.validate import Rejected, classify
from sidewalk.storage.timeseries import DEAD_LETTER_PREFIX, SqliteTimeSeriesStore
from tests.fuzz.payloads import DEVICE, REASONS, T0, bad_topics, broken_payloads, valid_readings
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, slug
from tests.ingest.pipeline import settings as mqtt_settings

pytestmark = pytest.mark.services

N_MALFORMED = 300
GOOD_DEVICE = "pole-good"


def _good(seq: int) -> bytes:
    body = {"schema": 1, "device": GOOD_DEVICE, "seq": seq, "ts": T0 + seq, "air_temp_c": -2.0}
    return json.dumps(body).encode()


def test_malformed_messages_become_dead_letters_and_good_ones_are_stored(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site = slug("fuzz")
    expected: list[tuple[str, bytes, str, str | None]] = []
    sizes: list[tuple[int, str]] = []
    raw = MqttClient(mqtt_settings(broker.host, broker.port, slug("raw"), clean_start=True))

    @settings(
        max_examples=N_MALFORMED,
        phases=[Phase.generate],
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        case=st.one_of(
            broken_payloads().map(lambda b: (f"sidewalk/v1/{site}/{DEVICE}/{b[0]}", b[1])),
            st.tuples(bad_topics(site), valid_readings().map(lambda r: json.dumps(r[1]).encode())),
        )
    )
    def publish_one(case: tuple[str, bytes]) -> None:
        topic, payload = case
        verdict = classify(MqttMessage(topic, payload, 1, False, 0), 0)
        assert isinstance(verdict, Rejected), (topic, payload[:200], verdict)
        letter = verdict.dead_letter
        # The store keeps a bounded prefix, with the whole payload's length and hash.
        expected.append((topic, payload[:DEAD_LETTER_PREFIX], letter.reason, letter.device))
        sizes.append((len(payload), hashlib.sha256(payload).hexdigest()))
        raw.publish(topic, payload, 1)
        # A valid reading after each malformed one: the stream must go on.
        raw.publish(f"sidewalk/v1/{site}/{GOOD_DEVICE}/weather", _good(len(expected)), 1)

    with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
        raw.connect()
        try:
            publish_one()
            n = len(expected)
            # received also counts ingest's own watermarks coming back (ignored).
            assert ingest.wait_for(
                lambda: ingest.stats.dead_letters >= n and ingest.stats.stored >= n, 60
            ), ingest.stats
        finally:
            raw.disconnect()
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        letters = store.dead_letters()
        assert ingest.stats.dead_letters == n == len(letters) == N_MALFORMED
        assert ingest.stats.stored == n
        got = Counter((d.topic, d.payload, d.reason, d.device) for d in letters)
        assert got == Counter(expected)
        assert Counter((d.payload_len, d.payload_sha256) for d in letters) == Counter(sizes)
        assert all(d.reason in REASONS and d.detail for d in letters)
        assert store.seqs(GOOD_DEVICE) == list(range(1, len(expected) + 1))
        assert store.count(DEVICE) == 0
        reasons = Counter(d.reason for d in letters)
        # The generators reach most of the contract's ways to fail, not one.
        assert len(reasons) >= 6, reasons
