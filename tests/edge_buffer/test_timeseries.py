"""The SQLite time-series store, on a temp file."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sidewalk.core.contract import AnyReading, SnowMeasurement, Status, WeatherReading
from sidewalk.storage.timeseries import DeadLetter, SqliteTimeSeriesStore, StatusUpdate

T0 = 1_764_460_800_000


def _w(seq: int, device: str = "pole-1", temp: float = -1.0) -> WeatherReading:
    return WeatherReading(device=device, seq=seq, ts=T0 + seq * 1000, air_temp_c=temp)


def _snow(seq: int, frontage: str, device: str = "pole-1") -> SnowMeasurement:
    return SnowMeasurement(
        device=device,
        seq=seq,
        ts=T0 + seq * 1000,
        frontage=frontage,
        snow_cover_fraction=0.25,
        cleared_width_mm=1300.0,
    )


def test_queries_return_contract_models(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    batch: list[AnyReading] = [
        _w(1),
        _snow(2, "main-st-1"),
        _snow(3, "main-st-2"),
        _w(1, device="pole-2"),
    ]
    result = store.write_batch(batch, sites={"pole-1": "clyman", "pole-2": "clyman"})
    assert result.stored == batch
    assert result.watermarks == {"pole-1": 3, "pole-2": 1}
    store.close()
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")  # durable across reopening
    assert store.readings(device="pole-1") == batch[:3]
    assert store.readings(stream="snow") == batch[1:3]
    assert store.readings(frontage="main-st-2") == [batch[2]]
    assert store.readings(start_ms=T0 + 2000, end_ms=T0 + 3000) == [batch[1]]
    assert store.readings(device="pole-2", stream="weather") == [batch[3]]
    assert store.readings(limit=1) == [batch[0]]
    state = store.device_state("pole-2")
    assert state is not None
    assert (state.site, state.max_seq) == ("clyman", 1)


def test_duplicates_are_reported_and_a_conflicting_one_dead_lettered(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    store.write_batch([_w(1), _w(2)])
    result = store.write_batch([_w(2), _w(1, temp=5.0), _w(3), _w(3)])
    assert result.duplicates == [("pole-1", 2), ("pole-1", 3)]
    assert result.conflicts == [("pole-1", 1)]  # a different copy is no plain duplicate
    assert result.stored == [_w(3)]
    assert store.count() == 3
    [conflict] = store.dead_letters(reason="seq_conflict")
    assert conflict.device == "pole-1"
    assert store.readings(device="pole-1")[0] == _w(1)


def test_a_gap_is_recorded_and_closed_piece_by_piece(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    result = store.write_batch([_w(1), _w(2), _w(7)])
    assert [(g.from_seq, g.to_seq) for g in result.gaps_opened] == [(3, 6)]
    assert store.stored_up_to("pole-1") == 2
    store.write_batch([_w(5)])
    assert [(g.from_seq, g.to_seq) for g in store.gaps()] == [(3, 4), (6, 6)]
    store.write_batch([_w(3), _w(4)])
    assert store.stored_up_to("pole-1") == 5
    result = store.write_batch([_w(6)])
    assert store.gaps() == []
    assert result.watermarks == {"pole-1": 7}


def test_the_device_floor_marks_gaps_lost_and_frees_the_watermark(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    store.write_batch([_w(1), _w(4), _w(9)])
    assert store.stored_up_to("pole-1") == 1
    online = Status(device="pole-1", state="online", ts=T0, buffer_floor_seq=6)
    result = store.write_batch([], statuses=[StatusUpdate("clyman", online)])
    assert result.watermarks == {"pole-1": 5}
    assert [(g.from_seq, g.to_seq) for g in store.gaps(lost_only=True)] == [(2, 3), (5, 5)]
    assert [(g.from_seq, g.to_seq, g.lost_at_ms) for g in store.gaps()] == [
        (2, 3, store.gaps()[0].lost_at_ms),
        (5, 5, store.gaps()[1].lost_at_ms),
        (6, 8, None),
    ]
    # A lost reading that turns up after all is still taken, and un-lost.
    store.write_batch([_w(5), _w(6), _w(7), _w(8)])
    assert store.stored_up_to("pole-1") == 9
    assert [(g.from_seq, g.to_seq) for g in store.gaps()] == [(2, 3)]
    state = store.device_state("pole-1")
    assert state is not None
    assert (state.status, state.floor_seq, state.site) == ("online", 6, "clyman")


def test_a_floor_ahead_of_everything_seen_starts_the_device_there(tmp_path: Path) -> None:
    """A new server meets a device whose older readings live elsewhere."""
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    online = Status(device="pole-1", state="online", ts=T0, buffer_floor_seq=1000)
    store.write_batch([], statuses=[StatusUpdate("clyman", online)])
    result = store.write_batch([_w(1000), _w(1001)])
    assert result.gaps_opened == []
    assert result.watermarks == {"pole-1": 1001}
    [lost] = store.gaps(lost_only=True)
    assert (lost.from_seq, lost.to_seq) == (1, 999)


def test_dead_letters_query_by_reason_device_and_time(tmp_path: Path) -> None:
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    letters = [
        DeadLetter(T0, "sidewalk/v1/s/pole-1/weather", "pole-1", b"{x", "malformed_json", "d"),
        DeadLetter(T0 + 5, "sidewalk/v1/s/pole-2/weather", "pole-2", b"{}", "unknown_schema", "d"),
        DeadLetter(T0 + 9, "junk/topic", None, b"\xff", "bad_topic", "d"),
    ]
    store.write_batch([], dead_letters=letters)
    # Read back, each letter also says how long its payload was and its sha256.
    stored = [
        replace(d, payload_len=len(d.payload), payload_sha256=hashlib.sha256(d.payload).hexdigest())
        for d in letters
    ]
    assert store.dead_letters() == stored
    assert store.dead_letters(reason="unknown_schema") == [stored[1]]
    assert store.dead_letters(device="pole-1") == [stored[0]]
    assert store.dead_letters(start_ms=T0 + 1, end_ms=T0 + 9) == [stored[1]]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=40), max_size=80),
    st.integers(min_value=1, max_value=10),
)
def test_watermark_and_gaps_match_what_arrived(arrivals: list[int], batch: int) -> None:
    """Whatever order, duplication and batching: the watermark is the contiguous
    prefix and the open gaps are exactly the missing seqs below the highest."""
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteTimeSeriesStore(Path(tmp) / "ts.db")
        for i in range(0, len(arrivals), batch):
            store.write_batch([_w(s) for s in arrivals[i : i + batch]])
        got = set(arrivals)
        prefix = 0
        while prefix + 1 in got:
            prefix += 1
        assert store.stored_up_to("pole-1") == prefix
        assert store.seqs("pole-1") == sorted(got)
        missing = {s for g in store.gaps("pole-1") for s in range(g.from_seq, g.to_seq + 1)}
        assert missing == set(range(1, max(got, default=0))) - got
        store.close()
