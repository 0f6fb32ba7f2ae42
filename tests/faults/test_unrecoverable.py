"""What no re-send can bring back shows as a lost seq gap; the deploy broker queues in full."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from sidewalk.system import open_cases
from tests.faults.harness import broker_offline_queue, deploy_queueing_lines, readings
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, running_publisher, slug

pytestmark = pytest.mark.services
PASSWORD = "correct horse battery"


def test_a_reading_the_pole_dropped_shows_as_a_lost_gap_on_the_dashboard(
    tmp_path: Path, broker: MosquittoServer
) -> None:
    site, device = slug("site"), slug("pole")
    items = readings(170, 1_764_460_800_000, 60_000)
    buffer_path = tmp_path / "buf.db"
    with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        with running_publisher(broker.host, broker.port, buffer_path, site, device) as pub:
            for item in items[:20]:
                pub.record(item.stream, item.ts_ms, item.values)
            assert pub.wait_stored(20, timeout_s=15)
        # Offline with a full buffer: the pole drops its oldest readings (seqs 21..70).
        buffer = ReadingBuffer(buffer_path, device, max_rows=100)
        for item in items[20:]:
            buffer.append(item.stream, item.ts_ms, item.values)
        assert (buffer.dropped, buffer.floor) == (50, 71)
        buffer.close()
        with running_publisher(
            broker.host, broker.port, buffer_path, site, device, max_rows=100
        ) as pub:
            # The floor in the pole's status lets the watermark pass the hole.
            assert pub.wait_stored(170, timeout_s=20), (pub.watermark, store.gaps(device))
        assert store.seqs(device) == list(range(1, 21)) + list(range(71, 171))
        assert [(g.from_seq, g.to_seq) for g in store.gaps(device, lost_only=True)] == [(21, 70)]

        profile = load_profile()
        cases = open_cases(f"sqlite:///{tmp_path / 'cases.sqlite3'}", profile)
        cases.registry.upsert_device(device, site)
        add_user(cases, "viewer", PASSWORD, "viewer", who="test")
        app = create_app(cases, store, profile, secret_key="fault-test-secret-0123456789")
        with TestClient(app) as client:
            login = client.post("/api/session", json={"username": "viewer", "password": PASSWORD})
            assert login.status_code == 200, login.text
            rows = {row["id"]: row for row in client.get("/api/devices").json()}
    row = rows[device]
    # As a set: the devices route once listed a lost gap twice (gaps() already includes lost ones),
    # reported to the dashboard's owner.
    assert {(g["from"], g["to"], g["lost"]) for g in row["gaps"]} == {(21, 70, True)}
    assert row["stored_up_to"] == 170
    assert row["readings"] == 120


def test_the_deploy_broker_delivers_a_full_offline_queue(tmp_path: Path) -> None:
    lines = deploy_queueing_lines()
    assert "max_queued_messages 0" in lines
    assert "persistence true" in lines
    loss = broker_offline_queue(tmp_path, 20_000)
    assert loss.acked == 20_000
    assert loss.delivered == 20_000, f"the broker dropped {loss.lost} queued messages"
