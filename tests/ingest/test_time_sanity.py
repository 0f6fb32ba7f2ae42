"""Time sanity one reading cannot defeat: judged against its receipt and its neighbours.

A pole's day-long buffer delivered after an outage can carry one reading
stamped a day ahead that is not ahead of its (late) receipt. Taken as the
pole's reference, it made every good reading after it "stepped back" (390 of
458 quarantined) and moved a deadline. Now it is judged by the pole's readings
before and after it: it alone is quarantined, with the reason in words, and
moves nothing. A pole that really was off for a day resumes a day later, and
its jump stands. A fresh pole stamping readings in 2000 is refused as older
than any buffer holds. A reading stamped far ahead that ends its batch is held
for its pole's next reading to judge (was: stored, moving the pole's clock).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sidewalk.analytics.clocks.gate import ReadingGate
from sidewalk.core.contract import MAX_BEHIND_MS, TimePolicy, WeatherReading, span_words
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

T0 = 1_764_460_800_000  # 2025-11-30T00:00:00Z
MIN = 60_000
DAY = 86_400_000
LIVE = TimePolicy()
REPLAY = TimePolicy(max_ahead_ms=None)  # a replay on the scenario's time: no receipt to judge by


def weather(seq: int, ts: int, device: str = "pole-1") -> WeatherReading:
    return WeatherReading(device=device, seq=seq, ts=ts, air_temp_c=-2.0)


def buffered_day_with_one_reading_a_day_ahead(n: int = 458, bad: int = 60) -> list[WeatherReading]:
    """A day's buffer, one reading per 3 minutes, ``bad`` stamped a day ahead."""
    readings = [weather(s, T0 + s * 3 * MIN) for s in range(1, n + 1)]
    readings[bad - 1] = weather(bad, T0 + bad * 3 * MIN + DAY)
    return readings


def held(store: SqliteTimeSeriesStore) -> list[tuple[int, str]]:
    return [
        (WeatherReading.model_validate_json(d.payload).seq, d.detail)
        for d in store.dead_letters(reason="implausible_time")
    ]


def test_one_buffered_reading_a_day_ahead_is_the_one_held(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    readings = buffered_day_with_one_reading_a_day_ahead()
    # Delivered after the outage: the bad one is not ahead of its receipt.
    received = readings[-1].ts + DAY // 2
    assert readings[59].ts < received
    result = store.write_batch(readings, received_at_ms=received, time_policy=LIVE)
    assert [r.seq for r in result.quarantined] == [60]
    assert len(result.stored) == 457  # every good reading kept (was: 60 of 458)
    assert held(store) == [
        (60, "stamped 1 day 0 h ahead of the pole's previous reading (seq 59) and 23 h 57 min"
             " ahead of its next one, though taken between them: one reading out of line with"
             " its pole's clock"),
    ]  # fmt: skip
    # It set no reference: the pole's next delivery is judged by seq 458.
    later = store.write_batch([weather(459, T0 + 459 * 3 * MIN)], received_at_ms=received,
                              time_policy=LIVE)  # fmt: skip
    assert [r.seq for r in later.stored] == [459]


def test_in_a_replay_with_no_receipt_to_judge_by_the_outlier_is_still_held(
    tmp_path: Path,
) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    readings = buffered_day_with_one_reading_a_day_ahead()
    # A replay goes in batches: the outlier and its neighbours in one of them.
    for start in range(0, len(readings), 100):
        store.write_batch(readings[start : start + 100], received_at_ms=T0, time_policy=REPLAY)
    assert [seq for seq, _ in held(store)] == [60]
    assert len(store.seqs("pole-1")) == 457


def test_a_pole_off_for_a_day_resumes_a_day_later_and_its_jump_stands(tmp_path: Path) -> None:
    before = [weather(s, T0 + s * MIN) for s in range(1, 11)]
    resumed = [weather(s, T0 + DAY + s * MIN) for s in range(11, 21)]
    for policy in (LIVE, REPLAY):
        store = SqliteTimeSeriesStore(tmp_path / f"{policy.max_ahead_ms}.db")
        result = store.write_batch(
            before + resumed, received_at_ms=T0 + DAY + 21 * MIN, time_policy=policy
        )
        assert result.quarantined == []
        assert len(result.stored) == 20


def test_a_fresh_pole_stamping_2000_is_refused_and_sets_no_reference(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    y2000 = 946_684_800_000
    now = T0 + 10 * MIN
    result = store.write_batch(
        [weather(1, y2000), weather(2, y2000 + MIN)], received_at_ms=now, time_policy=LIVE
    )
    assert [r.seq for r in result.quarantined] == [1, 2]
    [(_, detail), _] = held(store)
    assert detail == (
        "stamped 25 years 340 days before the time it arrived, older than a pole's buffer holds"
        " (2 years 1 day): the pole's clock was not set"
    )
    # Its clock set: accepted, not judged "stepped back" against 2000 nor against nothing.
    right = store.write_batch([weather(3, now - MIN)], received_at_ms=now, time_policy=LIVE)
    assert [r.seq for r in right.stored] == [3]
    # A reading buffered just inside the bound is still a buffered reading.
    old = store.write_batch(
        [weather(1, now - MAX_BEHIND_MS + MIN, "pole-2")], received_at_ms=now, time_policy=LIVE
    )
    assert old.quarantined == []


def test_the_gate_holds_the_same_reading_given_the_batch() -> None:
    readings = buffered_day_with_one_reading_a_day_ahead()
    received = readings[-1].ts + DAY // 2
    gate = ReadingGate(LIVE)
    verdicts = gate.admit_many(readings, received)
    assert [r.seq for r, v in zip(readings, verdicts, strict=True) if v] == [60]
    assert gate.state.skipped == {"implausible_time": 1}
    # One at a time, without the next reading, it takes the outlier (docs/data-path.md's
    # limit), but no good reading after it is "stepped back" from it (was: 398 skipped).
    alone = ReadingGate(LIVE)
    assert [alone.admit(r, received) for r in readings] == [None] * len(readings)


def test_an_outlier_last_in_its_batch_is_held_and_the_next_batch_quarantines_it(
    tmp_path: Path,
) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    readings = buffered_day_with_one_reading_a_day_ahead()
    received = readings[-1].ts + DAY // 2
    # The outlier ends the first batch: nothing after it to judge it by, so it is held
    # (was: stored, and the pole's clock moved a day ahead).
    first = store.write_batch(readings[:60], received_at_ms=received, time_policy=LIVE)
    assert [r.seq for r in first.held] == [60]
    assert first.quarantined == []
    assert len(first.stored) == 59
    assert store.stored_up_to("pole-1") == 60  # acknowledged: the pole does not re-send it
    later = store.write_batch(readings[60:], received_at_ms=received, time_policy=LIVE)
    assert [r.seq for r in later.quarantined] == [60]
    assert held(store) == [
        (60, "stamped 1 day 0 h ahead of the pole's previous reading (seq 59) and 23 h 57 min"
             " ahead of its next one, though taken between them: one reading out of line with"
             " its pole's clock"),
    ]  # fmt: skip
    assert len(store.seqs("pole-1")) == 457  # every good reading kept, the outlier not stored
    assert max(r.ts for r in store.readings(device="pole-1")) == readings[-1].ts
    # A real step back after the run is still one.
    back = store.write_batch([weather(459, T0 + 459 * 3 * MIN - DAY)], received_at_ms=received,
                             time_policy=LIVE)  # fmt: skip
    assert [r.seq for r in back.quarantined] == [459]


def test_a_jump_the_next_batch_follows_stands(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    before = [weather(s, T0 + s * MIN) for s in range(1, 11)]
    reset = [weather(s, T0 + DAY + s * MIN) for s in range(11, 21)]
    received = T0 + 2 * DAY  # delivered a day late: the receipt does not vouch for the jump
    first = store.write_batch([*before, reset[0]], received_at_ms=received, time_policy=LIVE)
    assert [r.seq for r in first.held] == [11]
    nxt = store.write_batch(reset[1:], received_at_ms=received, time_policy=LIVE)
    assert nxt.quarantined == []
    assert [r.seq for r in nxt.stored] == list(range(11, 21))
    assert store.readings(device="pole-1")[10].ts == reset[0].ts


def test_a_jump_stamped_as_it_arrived_stands_and_one_nothing_follows_is_quarantined(
    tmp_path: Path,
) -> None:
    wait = LIVE.max_hold_ms or 0
    before = [weather(s, T0 + s * MIN) for s in range(1, 11)]
    # Stamped as it arrived (the pole was off for a day): the broker's receipt vouches for it.
    store = SqliteTimeSeriesStore(tmp_path / "right.db")
    now = T0 + DAY
    at_once = store.write_batch(
        [*before, weather(11, now - 5 * MIN)], received_at_ms=now, time_policy=LIVE
    )
    assert at_once.held == []
    assert [r.seq for r in at_once.stored][-1] == 11
    # Stamped a day ahead of its run but half a day before it arrived: quarantined.
    store = SqliteTimeSeriesStore(tmp_path / "wrong.db")
    now = T0 + DAY + DAY // 2
    store.write_batch([*before, weather(11, T0 + DAY)], received_at_ms=now, time_policy=LIVE)
    early = store.write_batch([], received_at_ms=now + wait - 1, time_policy=LIVE)
    assert early.stored == []
    assert early.quarantined == []
    ended = store.write_batch([], received_at_ms=now + wait, time_policy=LIVE)
    assert [r.seq for r in ended.quarantined] == [11]
    assert held(store) == [
        (11, "stamped 23 h 50 min ahead of the pole's previous reading (seq 10) and no reading"
             " of the pole came within 15 min to confirm it; it was stamped 12 h 00 min before"
             " the time it arrived (at most 10 min): the pole's clock did not move"),
    ]  # fmt: skip
    assert len(store.seqs("pole-1")) == 10


def test_a_held_reading_re_sent_is_a_duplicate(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    before = [weather(s, T0 + s * MIN) for s in range(1, 11)]
    now = T0 + DAY + DAY // 2
    jump = weather(11, T0 + DAY)
    store.write_batch([*before, jump], received_at_ms=now, time_policy=LIVE)
    again = store.write_batch([jump, weather(12, T0 + 12 * MIN)], received_at_ms=now,
                              time_policy=LIVE)  # fmt: skip
    assert again.duplicates == [("pole-1", 11)]
    assert [r.seq for r in again.quarantined] == [11]
    assert [r.seq for r in again.stored] == [12]
    assert len(store.dead_letters(reason="implausible_time")) == 1


def test_durations_read_as_a_person_says_them() -> None:
    assert [span_words(ms) for ms in (45_000, 10 * MIN, 245 * MIN + 30_000, DAY, 367 * DAY)] == [
        "45 s", "10 min", "4 h 05 min", "1 day 0 h", "1 year 2 days",
    ]  # fmt: skip


def test_a_store_from_before_holds_gains_them_and_holds(tmp_path: Path) -> None:
    path = tmp_path / "ts.db"
    SqliteTimeSeriesStore(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP INDEX seq_spaces_held")
    for column in ("held_seq", "held_ts", "held_at", "held_stream", "held_frontage",
                   "held_payload"):  # fmt: skip
        db.execute(f"ALTER TABLE seq_spaces DROP COLUMN {column}")
    db.commit()
    db.close()
    store = SqliteTimeSeriesStore(path)  # the release before: its file gains the columns
    readings = buffered_day_with_one_reading_a_day_ahead()
    received = readings[-1].ts + DAY // 2
    first = store.write_batch(readings[:60], received_at_ms=received, time_policy=LIVE)
    assert [r.seq for r in first.held] == [60]
    store.close()
    store = SqliteTimeSeriesStore(path)
    later = store.write_batch(readings[60:], received_at_ms=received, time_policy=LIVE)
    assert [r.seq for r in later.quarantined] == [60]
    assert len(store.seqs("pole-1")) == 457


def test_a_next_reading_stepped_back_from_both_leaves_the_held_one_waiting(
    tmp_path: Path,
) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    run = [weather(s, T0 + s * MIN) for s in range(1, 11)]
    first = store.write_batch([*run, weather(11, T0 + DAY)], received_at_ms=T0, time_policy=REPLAY)
    assert [r.seq for r in first.held] == [11]
    # Stepped back from the run and from the held one: that one is judged, not the held one.
    back = store.write_batch([weather(12, T0 - DAY)], received_at_ms=T0, time_policy=REPLAY)
    assert [r.seq for r in back.quarantined] == [12]
    assert back.stored == []
    # The next in line with the run decides: the held one was out of line.
    nxt = store.write_batch([weather(13, T0 + 13 * MIN)], received_at_ms=T0, time_policy=REPLAY)
    assert [r.seq for r in nxt.quarantined] == [11]
    assert [r.seq for r in nxt.stored] == [13]
    assert store.seqs("pole-1") == [*range(1, 11), 13]


def test_in_a_replay_a_held_reading_nothing_follows_is_quarantined(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    run = [weather(s, T0 + s * MIN) for s in range(1, 11)]
    store.write_batch([*run, weather(11, T0 + DAY)], received_at_ms=T0, time_policy=REPLAY)
    ended = store.write_batch(
        [], received_at_ms=T0 + (REPLAY.max_hold_ms or 0), time_policy=REPLAY
    )
    assert [r.seq for r in ended.quarantined] == [11]
    assert held(store) == [
        (11, "stamped 23 h 50 min ahead of the pole's previous reading (seq 10) and no reading"
             " of the pole came within 15 min to confirm it, nor a time it arrived to judge it"
             " by (a replay)"),
    ]  # fmt: skip
