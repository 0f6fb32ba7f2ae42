"""Known devices only: a pole the registry does not know stores nothing.

Its readings are ``unknown_device`` dead letters, counted by site; a pole
registered while ingest runs is accepted from its next reading; a registry
that cannot be read keeps the last list (and before any list, accepts none).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sidewalk.core.contract import WeatherReading, topic_for
from sidewalk.core.mqtt import MqttClient
from sidewalk.ingest.known import KnownDevices
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import T0, running_ingest, settings, slug


def test_the_registry_is_read_again_when_an_unknown_pole_speaks() -> None:
    now = [0.0]
    registered = {"pole-1"}
    calls = []

    def load() -> set[str]:
        calls.append(now[0])
        return set(registered)

    known = KnownDevices(load, refresh_s=30, miss_refresh_s=5, clock=lambda: now[0])
    assert "pole-1" in known
    assert "pole-2" not in known
    registered.add("pole-2")
    now[0] = 2.0
    assert "pole-2" not in known  # asked again no sooner than every 5 s
    now[0] = 5.0
    assert "pole-2" in known
    assert calls == [0.0, 5.0]


def test_an_unreadable_registry_keeps_the_last_list_and_first_accepts_none() -> None:
    state: dict[str, set[str] | None] = {"ids": None}

    def load() -> set[str]:
        if state["ids"] is None:
            raise OSError("database is away")
        return state["ids"]

    known = KnownDevices(load, refresh_s=0, miss_refresh_s=0)
    assert "pole-1" not in known
    state["ids"] = {"pole-1"}
    assert "pole-1" in known
    state["ids"] = None
    assert "pole-1" in known


@pytest.mark.services
def test_readings_from_an_unregistered_pole_are_dead_letters_until_it_is_registered(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, pole, stranger = slug("site"), slug("pole"), slug("made-up")
    cases = CaseStore(f"sqlite:///{tmp_path / 'cases.db'}")
    cases.create_schema()
    cases.registry.upsert_device(pole, site)
    known = KnownDevices(cases.registry.known_device_ids, miss_refresh_s=0)
    sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
    sender.connect()

    def send(device: str, seq: int) -> None:
        reading = WeatherReading(device=device, seq=seq, ts=T0 + seq * 60_000, air_temp_c=-3.0)
        assert sender.publish_and_wait(topic_for(site, device, "weather"), reading.to_json())

    try:
        with running_ingest(
            broker.host, broker.port, tmp_path / "ts.db", site, known_devices=known
        ) as ingest:
            send(pole, 1)
            send(stranger, 1)
            send(stranger, 2)
            assert ingest.wait_for(lambda: ingest.stats.received >= 3)
            store = ingest.store
            assert isinstance(store, SqliteTimeSeriesStore)
            assert store.count(pole) == 1
            assert store.count(stranger) == 0
            letters = store.dead_letters(reason="unknown_device")
            assert [(d.device, d.reason) for d in letters] == [(stranger, "unknown_device")] * 2
            assert "sidewalk registry pole add" in letters[0].detail
            assert "Poles page" in letters[0].detail  # as the pole's own log line says
            assert known.unknown_by_site == {site: 2}
            # Registered while ingest runs: its next reading is stored.
            cases.registry.upsert_device(stranger, site)
            send(stranger, 3)
            assert ingest.wait_for(lambda: store.count(stranger) == 1)
    finally:
        sender.disconnect()
        cases.close()
