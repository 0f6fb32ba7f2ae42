"""Time you can trust and re-imaged poles, below the broker: the store's and analytics' verdicts.

* Time (``TimePolicy``): a reading stamped ahead of its receipt, or older than
  its pole's last accepted reading while its seq is newer (the pole's clock
  stepped back), is quarantined: an ``implausible_time`` dead letter, its seq
  accounted for (the watermark passes it, a re-send is a duplicate), the
  device's ``clock_faults`` counted; it never becomes the reference the next
  reading is judged by. A day's buffer re-sent after an outage is not.
* Epochs: a re-imaged pole (a new buffer, seq 1 again) is a new seq space,
  stored after the old one, never a ``seq_conflict``; the watermark names it.
* Analytics' ``ReadingGate`` reaches the same verdicts alone.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.clocks.gate import MAX_RUNS, ReadingGate, SeqSpaceSeen
from sidewalk.core.contract import (
    Status,
    StoredWatermark,
    TimePolicy,
    WeatherReading,
    parse_payload,
)
from sidewalk.core.profile import load_profile
from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.ingest.metrics import StoreCollector
from sidewalk.storage.timeseries import SqliteTimeSeriesStore, StatusUpdate

T0 = 1_764_460_800_000  # 2025-11-30T00:00:00Z
MIN = 60_000
DAY = 86_400_000
POLICY = TimePolicy()
E1 = "0123456789abcdef"
E2 = "fedcba9876543210"


def weather(seq: int, ts: int, epoch: str | None = None, temp: float = -2.0) -> WeatherReading:
    return WeatherReading(device="pole-1", seq=seq, ts=ts, epoch=epoch, air_temp_c=temp)


def minutely(first: int, last: int, epoch: str | None = None) -> list[WeatherReading]:
    return [weather(s, T0 + s * MIN, epoch) for s in range(first, last + 1)]


def quarantined_seqs(store: SqliteTimeSeriesStore) -> list[int]:
    return [json.loads(d.payload)["seq"] for d in store.dead_letters(reason="implausible_time")]


def test_a_reading_a_day_ahead_is_quarantined_and_judges_nothing_after_it(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    readings = minutely(1, 10)
    readings[4] = weather(5, T0 + 5 * MIN + DAY)
    received = T0 + 10 * MIN + 1000
    result = store.write_batch(readings, received_at_ms=received, time_policy=POLICY)
    assert [r.seq for r in result.quarantined] == [5]
    assert store.seqs("pole-1") == [1, 2, 3, 4, 6, 7, 8, 9, 10]  # 6.. judged against 4, not 5
    assert quarantined_seqs(store) == [5]
    [letter] = store.dead_letters(reason="implausible_time")
    assert letter.payload == readings[4].to_json()  # kept byte for byte
    assert letter.detail == (
        "stamped 23 h 54 min ahead of the time it arrived (a pole's clock may be at most 10 min"
        " ahead)"
    )
    # Its seq is accounted for: the watermark passes it and the pole may free it.
    assert result.watermarks == {"pole-1": 10}
    assert store.gaps("pole-1") == []
    state = store.device_state("pole-1")
    assert state is not None
    assert (state.clock_faults, state.clock_fault_at_ms) == (1, received)
    [faults] = [
        m for m in StoreCollector(store.path).collect() if m.name == "sidewalk_device_clock_faults"
    ]
    assert [(x.labels["device"], x.value) for x in faults.samples] == [("pole-1", 1)]
    # A re-send of it is a duplicate, not a second dead letter (nor, later, a reading).
    again = store.write_batch([readings[4]], received_at_ms=received + DAY, time_policy=POLICY)
    assert again.duplicates == [("pole-1", 5)]
    assert again.stored == again.quarantined == []
    assert quarantined_seqs(store) == [5]


def test_a_pole_clock_stepped_back_is_quarantined_until_it_is_right_again(
    tmp_path: Path,
) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    store.write_batch(minutely(1, 10), received_at_ms=T0 + 10 * MIN, time_policy=POLICY)
    # The clock steps back a day at seq 11 and stays there for more than a day.
    for seq in range(11, 21):
        now = T0 + seq * MIN
        store.write_batch([weather(seq, now - DAY)], received_at_ms=now, time_policy=POLICY)
    late = T0 + 2 * DAY
    caught_up = weather(21, late - DAY + 10 * MIN)  # past the last good reading's time…
    store.write_batch([caught_up], received_at_ms=late, time_policy=POLICY)
    assert quarantined_seqs(store) == list(range(11, 22))  # …but still a day behind its receipt
    # NTP puts it right: accepted again, the space no longer suspect.
    store.write_batch([weather(22, late + 1000)], received_at_ms=late + 2000, time_policy=POLICY)
    store.write_batch([weather(23, late - 9 * MIN)], received_at_ms=late + 3000, time_policy=POLICY)
    assert store.seqs("pole-1") == [*range(1, 11), 22, 23]
    assert store.stored_up_to("pole-1") == 23
    state = store.device_state("pole-1")
    assert state is not None
    assert state.clock_faults == 11
    assert state.clock_fault is not None
    assert "stepped back" in store.dead_letters(reason="implausible_time")[0].detail


def test_a_days_buffer_resent_after_an_outage_is_plausible(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    store.write_batch(minutely(1, 10), received_at_ms=T0 + 10 * MIN, time_policy=POLICY)
    drained = [weather(s, T0 + s * MIN) for s in range(11, 1451)]  # a day offline, in seq order
    result = store.write_batch(drained, received_at_ms=T0 + DAY + 11 * MIN, time_policy=POLICY)
    assert len(result.stored) == 1440
    assert result.quarantined == []
    # A late fill of an older seq is judged only against its receipt.
    store.write_batch(minutely(1452, 1460), received_at_ms=T0 + DAY + 12 * MIN)
    store.write_batch([weather(1451, T0 + 1451 * MIN)], received_at_ms=T0 + 2 * DAY,
                      time_policy=POLICY)  # fmt: skip
    assert store.stored_up_to("pole-1") == 1460


def test_without_a_policy_times_are_not_judged(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    result = store.write_batch([weather(1, T0 + 10 * DAY)], received_at_ms=T0)
    assert len(result.stored) == 1


def test_a_reimaged_pole_is_a_new_seq_space_not_a_conflict(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    first = store.write_batch(minutely(1, 53, E1), sites={"pole-1": "s"}, time_policy=POLICY,
                              received_at_ms=T0 + 60 * MIN)  # fmt: skip
    assert (first.watermarks, first.watermark_epochs) == ({"pole-1": 53}, {"pole-1": E1})
    # The same seqs again from a new epoch (re-imaged, booted offline): its status first.
    online = Status(device="pole-1", state="online", ts=T0, buffer_floor_seq=1, epoch=E2)
    new = [weather(s, T0 + (100 + s) * MIN, E2) for s in range(1, 31)]
    result = store.write_batch(new, statuses=[StatusUpdate("s", online)], time_policy=POLICY,
                               received_at_ms=T0 + 200 * MIN)  # fmt: skip
    assert len(result.stored) == 30
    assert result.epochs_started == [("pole-1", E2, 53)]
    assert (result.watermarks, result.watermark_epochs) == ({"pole-1": 30}, {"pole-1": E2})
    assert store.count("pole-1") == 83
    assert store.dead_letters() == []
    assert [(s.epoch, s.base, s.closed_at_seq) for s in store.seq_spaces("pole-1")] == [
        (E1, 0, 53),
        (E2, 53, None),
    ]
    # Readings keep the pole's own seq and epoch; a re-send of either life is a duplicate.
    assert {(r.epoch, r.seq) for r in store.readings(device="pole-1")} == {
        *((E1, s) for s in range(1, 54)),
        *((E2, s) for s in range(1, 31)),
    }
    again = store.write_batch([*minutely(1, 3, E1), *new[:3]], time_policy=POLICY,
                              received_at_ms=T0 + 201 * MIN)  # fmt: skip
    assert len(again.duplicates) == 6
    assert again.stored == []
    # A reading of the old life past where it ended would now collide: kept, not stored.
    store.write_batch([weather(54, T0 + 54 * MIN, E1)], received_at_ms=T0 + 202 * MIN)
    assert [d.reason for d in store.dead_letters()] == ["seq_conflict"]
    state = store.device_state("pole-1")
    assert state is not None
    assert state.epoch == E2


def test_a_store_from_before_epochs_opens_and_keeps_its_seqs(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE devices (device TEXT PRIMARY KEY, site TEXT, max_seq INTEGER NOT NULL"
        " DEFAULT 0, floor_seq INTEGER NOT NULL DEFAULT 0, status TEXT, status_ts INTEGER,"
        " last_seen_at INTEGER);"
        "INSERT INTO devices (device, max_seq) VALUES ('pole-1', 0);"
    )
    db.close()
    store = SqliteTimeSeriesStore(path)
    store.write_batch(minutely(1, 5))
    store.write_batch(minutely(6, 8))
    assert store.stored_up_to("pole-1") == 8
    state = store.device_state("pole-1")
    assert state is not None
    assert (state.epoch, state.clock_faults) == (None, 0)


def test_a_new_buffer_has_an_epoch_every_reading_carries(tmp_path: Path) -> None:
    buffer = ReadingBuffer(tmp_path / "b.db", "pole-1")
    epoch = buffer.epoch
    assert epoch is not None
    reading = buffer.append("weather", T0, {"air_temp_c": 1.0})
    assert reading.epoch == epoch
    [row] = buffer.after(0)
    assert json.loads(row.payload)["epoch"] == epoch
    buffer.close()
    assert ReadingBuffer(tmp_path / "b.db", "pole-1").epoch == epoch  # survives reboots
    assert ReadingBuffer(tmp_path / "c.db", "pole-1").epoch != epoch  # a new disk: a new one


def test_a_buffer_from_before_epochs_keeps_its_one_seq_space(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    buffer = ReadingBuffer(path, "pole-1")
    buffer.append("weather", T0, {"air_temp_c": 1.0})
    buffer.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE identity")  # as software without epochs left it
    db.commit()
    db.close()
    old = ReadingBuffer(path, "pole-1")
    assert old.epoch is None
    assert old.append("weather", T0 + MIN, {"air_temp_c": 1.0}).epoch is None


def test_epoch_is_optional_on_the_wire() -> None:
    topic = "sidewalk/v1/s/pole-1/weather"
    bare = b'{"schema":1,"device":"pole-1","seq":1,"ts":1764460800000,"air_temp_c":1.0}'
    # Ignored: ``parse_payload`` returns the union; a weather reading has ``epoch``.
    assert parse_payload(topic, bare).epoch is None  # type: ignore[attr-defined]
    with_epoch = weather(1, T0, E1).to_json()
    assert b'"epoch":"0123456789abcdef"' in with_epoch
    assert parse_payload(topic, with_epoch) == weather(1, T0, E1)
    mark = StoredWatermark(device="pole-1", seq=3, ts=T0)
    assert b"epoch" not in mark.to_json()  # a pole without epochs reads it as before


# --- analytics' gate: the same verdicts ---------------------------------------------


def test_the_gate_skips_duplicates_and_conflicts_by_device_epoch_seq() -> None:
    gate = ReadingGate(POLICY)
    now = T0 + DAY
    assert [gate.admit(r, now) for r in minutely(1, 3, E1)] == [None, None, None]
    assert gate.admit(weather(2, T0 + 2 * MIN, E1, temp=5.0), now) == "duplicate"  # conflict
    assert gate.admit(weather(2, T0 + 2 * MIN, E2), now) is None  # a new epoch's seq 2
    assert gate.admit(weather(4, T0 + 4 * MIN, E1), now) == "seq_conflict"  # E1 ended at 3
    assert gate.state.skipped == {"duplicate": 1, "seq_conflict": 1}


def test_the_gate_judges_time_as_the_store_does(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    gate = ReadingGate(POLICY)
    stream = [
        *minutely(1, 5),
        weather(6, T0 + 6 * MIN + DAY),  # ahead
        *minutely(7, 9),
        *(weather(s, T0 + s * MIN - DAY) for s in range(10, 14)),  # stepped back
        weather(14, T0 + 14 * MIN),  # right again
    ]
    received = T0 + 15 * MIN
    verdicts = [gate.admit(r, received) for r in stream]
    store.write_batch(stream, received_at_ms=received, time_policy=POLICY)
    skipped = [r.seq for r, v in zip(stream, verdicts, strict=True) if v is not None]
    assert skipped == quarantined_seqs(store) == [6, 10, 11, 12, 13]
    assert gate.state.skipped == {"implausible_time": 5}


def test_the_gates_seen_seqs_stay_a_few_runs() -> None:
    space = SeqSpaceSeen()
    for seq in [*range(1, 100), *range(200, 300), 150, 100]:
        space.add(seq)
    assert space.runs == [[1, 100], [150, 150], [200, 299]]
    assert space.seen(150)
    assert space.seen(100)
    assert not space.seen(101)
    for seq in range(1000, 1000 + 4 * MAX_RUNS, 2):  # every other seq: a run each
        space.add(seq)
    assert len(space.runs) == MAX_RUNS
    assert space.runs[0][0] == 1


def test_old_and_new_epochs_in_one_batch_never_share_a_stored_seq(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    store.write_batch(minutely(1, 5, E1))
    # The old life's last two, still in flight, arrive with the new life's first three.
    result = store.write_batch([*minutely(6, 7, E1), *minutely(1, 3, E2)])
    assert [(r.epoch, r.seq) for r in result.stored] == [(E2, 1), (E2, 2), (E2, 3)]
    assert result.duplicates == []
    assert [d.reason for d in store.dead_letters()] == ["seq_conflict", "seq_conflict"]
    assert store.seqs("pole-1") == [1, 2, 3, 4, 5, 6, 7, 8]


def test_the_gate_is_saved_with_the_engine() -> None:
    engine = ClockEngine(load_profile(), [])
    engine.gate.policy = POLICY
    for r in [*minutely(1, 5, E1), weather(6, T0 + 6 * MIN + DAY, E1)]:
        engine.gate.admit(r, T0 + 10 * MIN)
    again = ClockEngine(load_profile(), [])
    again.restore(engine.snapshot())
    assert again.gate.state == engine.gate.state
    assert again.gate.admit(weather(3, T0 + 3 * MIN, E1), T0 + 10 * MIN) == "duplicate"
    assert again.gate.state.skipped == {"implausible_time": 1, "duplicate": 1}
