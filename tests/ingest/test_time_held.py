"""A reading out of line at a batch boundary is held for its pole's next reading to judge.

On real Mosquitto through ingest. A day's buffer delivered late carries one
reading stamped a day ahead. Within a batch its next
reading shows it out of line; as the last of a batch it has none, and it was
stored (the pole's clock moved a day ahead), or, before that, the good
readings after it were quarantined. Now ingest holds it, acknowledged and
kept in the store's file, and the pole's next reading decides: in line with
the run before it, the held one is quarantined; following it (a clock reset),
it stands. A restart while it is held loses nothing. A jump stamped as it
arrived is vouched for by the broker's receipt and stands at once; one that
is not, with no next reading within the hold, is quarantined.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sidewalk.core.contract import TimePolicy, WeatherReading, topic_for
from sidewalk.core.mqtt import MqttClient
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import T0, running_ingest, scenario_clock, settings, slug

pytestmark = pytest.mark.services

MIN = 60_000
DAY = 86_400_000
LIVE = TimePolicy()


def buffered_day(device: str, n: int = 458, bad: int = 60) -> list[WeatherReading]:
    """A day's buffer, one reading per 3 minutes, ``bad`` stamped a day ahead."""
    readings = [
        WeatherReading(device=device, seq=s, ts=T0 + s * 3 * MIN, air_temp_c=-2.0)
        for s in range(1, n + 1)
    ]
    readings[bad - 1] = WeatherReading(
        device=device, seq=bad, ts=T0 + bad * 3 * MIN + DAY, air_temp_c=-2.0
    )
    return readings


def publish(broker: MosquittoServer, site: str, readings: list[WeatherReading]) -> None:
    sender = MqttClient(settings(broker.host, broker.port, slug("sender"), clean_start=True))
    sender.connect()
    try:
        for r in readings:
            assert sender.publish_and_wait(topic_for(site, r.device, "weather"), r.to_json(), 1)
    finally:
        sender.disconnect()


def store_of(ingest: IngestConsumer) -> SqliteTimeSeriesStore:
    store = ingest.store
    assert isinstance(store, SqliteTimeSeriesStore)
    return store


def quarantined(store: SqliteTimeSeriesStore, device: str) -> list[tuple[int, str]]:
    return [
        (WeatherReading.model_validate_json(d.payload).seq, d.detail)
        for d in store.dead_letters(reason="implausible_time", device=device)
    ]


OUT_OF_LINE = (
    "stamped 1 day 0 h ahead of the pole's previous reading (seq 59) and 23 h 57 min ahead of"
    " its next one, though taken between them: one reading out of line with its pole's clock"
)


def test_the_skewed_last_of_a_batch_is_held_and_quarantined_by_the_next_batch(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    readings = buffered_day(device)
    clock = scenario_clock(readings[-1].ts + DAY // 2)  # delivered late: not ahead of receipt
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, time_policy=LIVE, now_ms=clock
    ) as ingest:
        store = store_of(ingest)
        publish(broker, site, readings[:60])  # the skewed one ends what ingest has
        assert ingest.wait_for(lambda: ingest.stats.held == 1, 10), ingest.stats
        assert store.seqs(device) == list(range(1, 60))
        assert quarantined(store, device) == []
        assert store.stored_up_to(device) == 60  # acknowledged: the pole sends on from 61
        publish(broker, site, readings[60:])
        assert ingest.wait_for(lambda: len(store.seqs(device)) == 457, 20), store.seqs(device)
        assert ingest.wait_for(lambda: ingest.stats.quarantined == 1, 5)
        assert quarantined(store, device) == [(60, OUT_OF_LINE)]
        assert 60 not in store.seqs(device)
        assert max(r.ts for r in store.readings(device=device)) == readings[-1].ts


def test_a_clock_reset_the_next_batch_confirms_moves_the_poles_time(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device = slug("site"), slug("pole")
    readings = [
        WeatherReading(device=device, seq=s, ts=T0 + s * MIN + (DAY if s > 10 else 0),
                       air_temp_c=-2.0)
        for s in range(1, 21)
    ]  # fmt: skip
    clock = scenario_clock(T0 + 2 * DAY)  # delivered a day late: the receipt vouches for nothing
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, time_policy=LIVE, now_ms=clock
    ) as ingest:
        store = store_of(ingest)
        publish(broker, site, readings[:11])  # the first reading after the reset ends it
        assert ingest.wait_for(lambda: ingest.stats.held == 1, 10), ingest.stats
        assert store.seqs(device) == list(range(1, 11))
        publish(broker, site, readings[11:])
        assert ingest.wait_for(lambda: len(store.seqs(device)) == 20, 10), store.seqs(device)
        assert quarantined(store, device) == []
        assert [r.ts for r in store.readings(device=device)][10] == readings[10].ts


def test_a_reading_held_across_a_restart_of_ingest_is_not_lost(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    site, device, ingest_id = slug("site"), slug("pole"), slug("ingest")
    readings = buffered_day(device)
    clock = scenario_clock(readings[-1].ts + DAY // 2)
    db = tmp_path / "ts.db"
    with running_ingest(
        broker.host, broker.port, db, site, client_id=ingest_id, time_policy=LIVE, now_ms=clock
    ) as ingest:
        publish(broker, site, readings[:60])
        assert ingest.wait_for(lambda: ingest.stats.held == 1, 10), ingest.stats
    # Ingest is gone; the held reading was acknowledged, so only the store has it.
    with running_ingest(
        broker.host, broker.port, db, site, client_id=ingest_id, time_policy=LIVE, now_ms=clock
    ) as ingest:
        store = store_of(ingest)
        assert store.seqs(device) == list(range(1, 60))
        publish(broker, site, readings[60:])
        assert ingest.wait_for(lambda: len(store.seqs(device)) == 457, 20), store.seqs(device)
        assert ingest.wait_for(lambda: ingest.stats.quarantined == 1, 5)
        assert quarantined(store, device) == [(60, OUT_OF_LINE)]
        assert ingest.stats.stored == 398
        assert ingest.stats.duplicates == 0  # the broker did not deliver seq 60 again


@pytest.mark.parametrize(
    ("stamped_before_receipt", "stands"),
    [(0, True), (DAY // 2, False)],
    ids=["as-it-arrived", "half-a-day-before"],
)
def test_a_jump_is_judged_by_its_receipt_when_no_next_reading_comes(
    broker: MosquittoServer, tmp_path: Path, stamped_before_receipt: int, stands: bool
) -> None:
    site, device = slug("site"), slug("pole")
    receipt = T0 + DAY + DAY // 2
    run = [WeatherReading(device=device, seq=s, ts=T0 + s * MIN, air_temp_c=-2.0)
           for s in range(1, 11)]  # fmt: skip
    jump = WeatherReading(device=device, seq=11, ts=receipt - stamped_before_receipt,
                          air_temp_c=-2.0)  # fmt: skip
    policy = TimePolicy(max_hold_ms=1_000)
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, time_policy=policy,
        now_ms=scenario_clock(receipt),
    ) as ingest:  # fmt: skip
        store = store_of(ingest)
        publish(broker, site, [*run, jump])  # and then the pole is silent
        # Stamped as it arrived, the broker's receipt vouches for it: no hold.
        held = 0 if stands else 1
        assert ingest.wait_for(lambda: ingest.stats.held == held, 10), ingest.stats
        decided = ingest.wait_for(lambda: ingest.stats.stored + ingest.stats.quarantined == 11, 10)
        assert decided, ingest.stats
        assert (store.seqs(device)[-1] == 11) is stands
        letters = quarantined(store, device)
        assert [seq for seq, _ in letters] == ([] if stands else [11])
        if not stands:
            assert "no reading of the pole came within 1 s to confirm it" in letters[0][1]
