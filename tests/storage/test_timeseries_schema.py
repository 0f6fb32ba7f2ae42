"""Opening the time-series file: its schema is made and upgraded once, whoever opens it."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from sidewalk.core.contract import AnyReading, FrameRef, SnowMeasurement, WeatherReading
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from sidewalk.storage.timeseries.schema import _DEAD_LETTER_COLUMNS, _DEVICE_COLUMNS

T0 = 1_764_460_800_000
ADDED = {"devices": _DEVICE_COLUMNS, "dead_letters": _DEAD_LETTER_COLUMNS}


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def test_a_second_opener_waits_for_the_first_ones_upgrade(tmp_path: Path) -> None:
    # Two workers start on a file an older release made. One is adding the new
    # columns (its transaction open) when the other opens the file: that one
    # must wait and find them, not add them again ("duplicate column name",
    # seen when the load bench started two workers on one new file).
    path = tmp_path / "ts.db"
    SqliteTimeSeriesStore(path).close()
    first = sqlite3.connect(path, isolation_level=None)
    for table, columns in ADDED.items():
        for name in columns:
            first.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
    first.execute("BEGIN IMMEDIATE")
    for table, columns in ADDED.items():
        for name, decl in columns.items():
            first.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")

    opened: list[SqliteTimeSeriesStore] = []
    failed: list[BaseException] = []

    def second() -> None:
        try:
            opened.append(SqliteTimeSeriesStore(path))
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(0.3)  # the second opener reaches the file while the upgrade is open
    first.execute("COMMIT")
    thread.join(30)
    assert failed == []
    assert len(opened) == 1
    store = opened[0]
    for table, columns in ADDED.items():
        names = _columns(first, table)
        assert all(names.count(name) == 1 for name in columns)
    result = store.write_batch([WeatherReading(device="pole-1", seq=1, ts=T0, air_temp_c=-2.0)])
    assert len(result.stored) == 1
    state = store.device_state("pole-1")
    assert state is not None
    assert state.clock_faults == 0  # an added column, readable
    store.close()
    first.close()


def test_an_older_file_loses_the_stream_index_and_gains_the_frame_index(tmp_path: Path) -> None:
    # readings (stream, ts) cost ingest a b-tree insert per reading that no
    # query needs any more; a file made before keeps no copy of it.
    path = tmp_path / "ts.db"
    SqliteTimeSeriesStore(path).close()
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("DROP INDEX readings_frame_ts")
    old.execute("CREATE INDEX readings_stream_ts ON readings (stream, ts)")
    SqliteTimeSeriesStore(path).close()
    names = {row[0] for row in old.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "readings_stream_ts" not in names
    assert {"readings_device_ts", "readings_frontage_ts", "readings_frame_ts"} <= names
    old.close()


def test_a_mixed_batch_is_stored_row_for_row_in_multi_row_inserts(tmp_path: Path) -> None:
    # Ingest's INSERTs go 100 rows to a statement, grouped by stream and
    # frontage, with received_at and stream bound once per statement: every
    # column of every row must still be the reading's own, full statements
    # and the remainder alike, and the export log must follow the order received.
    readings: list[AnyReading] = []
    for i in range(1, 261):
        readings.append(WeatherReading(device="pole-a", seq=i, ts=T0 + i, air_temp_c=-1.5))
        if i % 2 == 0:
            readings.append(
                SnowMeasurement(
                    device="pole-b", seq=i // 2, ts=T0 + i, frontage=f"lot-{i % 7}",
                    snow_cover_fraction=0.5, cleared_width_mm=900.0, epoch="00000000000000e1",
                )
            )  # fmt: skip
        if i % 37 == 0:
            readings.append(
                FrameRef(device="pole-c", seq=i // 37, ts=T0 + i, sha256=f"{i:064x}", bytes_len=9)
            )
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    try:
        store.register_export("view")
        result = store.write_batch(readings, received_at_ms=T0 + 999)
        assert len(result.stored) == len(readings)
        assert not result.duplicates
        rows = {
            (device, seq): (stream, ts, frontage, received_at, payload)
            for device, seq, stream, ts, frontage, received_at, payload in store._db.execute(
                "SELECT device, seq, stream, ts, frontage, received_at, payload FROM readings"
            )
        }
        assert len(rows) == len(readings)
        for r in readings:
            assert rows[(r.device, r.seq)] == (
                r.stream, r.ts, getattr(r, "frontage", None), T0 + 999, r.to_json().decode()
            )  # fmt: skip
        exported = store.export_after("view", limit=len(readings)).readings
        assert [(r.device, r.seq) for r, _ in exported] == [(r.device, r.seq) for r in readings]
        again = store.write_batch(readings, received_at_ms=T0 + 2000)
        assert not again.stored
        assert len(again.duplicates) == len(readings)
    finally:
        store.close()


def test_the_stored_payload_is_each_readings_canonical_json(tmp_path: Path) -> None:
    t0 = 1_764_460_800_000
    readings: list[AnyReading] = [
        WeatherReading(device="pole-1", seq=1, ts=t0, air_temp_c=-2.5, epoch="0123456789abcdef"),
        SnowMeasurement(device="pole-1", seq=2, ts=t0, frontage="main-101",
                        snow_cover_fraction=0.25, cleared_width_mm=1219.2),
        FrameRef(device="pole-1", seq=3, ts=t0, sha256="b" * 64, bytes_len=7, frontage="main-101"),
    ]  # fmt: skip
    store = SqliteTimeSeriesStore(tmp_path / "ts.db")
    store.write_batch(readings, sites={"pole-1": "clyman"}, received_at_ms=t0)
    with store._lock:
        rows = store._db.execute("SELECT payload, typeof(payload) FROM readings ORDER BY seq")
        stored = rows.fetchall()
    store.close()
    assert stored == [(r.to_json().decode(), "text") for r in readings]
