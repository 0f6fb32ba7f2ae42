"""The device's disk buffer, on a temp SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from sidewalk.core.contract import SnowMeasurement, WeatherReading
from sidewalk.edge.buffer import ReadingBuffer

T0 = 1_764_460_800_000


def _fill(buffer: ReadingBuffer, n: int) -> None:
    for i in range(n):
        buffer.append("weather", T0 + i, {"air_temp_c": float(i % 40)})


def test_seq_starts_at_one_and_survives_reopening(tmp_path: Path) -> None:
    buffer = ReadingBuffer(tmp_path / "b.db", "pole-1")
    first = buffer.append("weather", T0, {"air_temp_c": -2.5})
    assert isinstance(first, WeatherReading)
    assert (first.device, first.seq, first.ts) == ("pole-1", 1, T0)
    _fill(buffer, 4)
    buffer.close()
    again = ReadingBuffer(tmp_path / "b.db", "pole-1")
    assert again.next_seq == 6
    assert len(again) == 5
    snow = again.append(
        "snow", T0, {"frontage": "main-st-1", "snow_cover_fraction": 0.5, "cleared_width_mm": 900.0}
    )
    assert isinstance(snow, SnowMeasurement)
    assert snow.seq == 6
    rows = again.after(0, 10)
    assert [r.seq for r in rows] == [1, 2, 3, 4, 5, 6]
    assert rows[0].payload == first.to_json()
    assert rows[-1].stream == "snow"


def test_a_bad_reading_is_refused_and_uses_no_seq(tmp_path: Path) -> None:
    buffer = ReadingBuffer(tmp_path / "b.db", "pole-1")
    with pytest.raises(ValidationError):
        buffer.append("weather", T0, {"air_temp_c": 999.0})
    with pytest.raises(ValidationError):
        buffer.append("weather", T0, {"wind_kph": 3.0, "air_temp_c": 1.0})
    with pytest.raises(ValueError, match="not a reading stream"):
        buffer.append("status", T0, {})
    with pytest.raises(ValueError, match="assigns them"):
        buffer.append("weather", T0, {"seq": 7, "air_temp_c": 1.0})
    assert buffer.append("weather", T0, {"air_temp_c": 1.0}).seq == 1
    assert len(buffer) == 1


def test_release_through_frees_only_what_the_watermark_covers(tmp_path: Path) -> None:
    buffer = ReadingBuffer(tmp_path / "b.db", "pole-1")
    _fill(buffer, 10)
    assert buffer.release_through(4) == 4
    assert [r.seq for r in buffer.after(0, 100)] == [5, 6, 7, 8, 9, 10]
    assert buffer.floor == 5
    assert buffer.release_through(4) == 0
    assert [r.seq for r in buffer.after(7, 2)] == [8, 9]
    assert buffer.release_through(10) == 6
    assert len(buffer) == 0
    assert buffer.floor == 11


def test_a_watermark_beyond_our_seq_moves_the_counter_past_it(tmp_path: Path) -> None:
    """A device with a fresh disk must not re-use seqs the server already holds."""
    buffer = ReadingBuffer(tmp_path / "b.db", "pole-1")
    buffer.release_through(500)
    assert buffer.append("weather", T0, {"air_temp_c": 1.0}).seq == 501


def test_the_bound_drops_the_oldest_and_counts_them(tmp_path: Path) -> None:
    buffer = ReadingBuffer(tmp_path / "b.db", "pole-1", max_rows=5)
    _fill(buffer, 8)
    assert len(buffer) == 5
    assert buffer.dropped == 3
    assert buffer.floor == 4
    assert [r.seq for r in buffer.after(0, 100)] == [4, 5, 6, 7, 8]
    buffer.close()
    reopened = ReadingBuffer(tmp_path / "b.db", "pole-1", max_rows=5)
    assert reopened.dropped == 3
    assert len(reopened) == 5
