"""The SQLite time-series store: the system of record for readings.

Readings are keyed ``UNIQUE(device, seq)`` so a re-sent reading is dropped as a
duplicate. Alongside them the store keeps dead letters (messages that broke
the contract, with their reason), seq gaps (readings never received; a gap a
later re-send fills is removed, so what remains is truly missing) and per
device state (highest seq, the device's buffer floor, last status).

``stored_up_to(device)`` is the highest seq S such that every seq 1..S is
stored or known lost for good (below the device's reported buffer floor).
Ingest publishes it as the device's retained watermark. Seqs start at 1.

``write_batch`` is one transaction in WAL mode with ``synchronous=FULL``:
when it returns, the batch survives a power cut.

Secondary views (InfluxDB) catch up from this store, not from memory: the same
transaction appends each newly stored reading to ``export_log``, and each sink
keeps a durable cursor in ``export_cursors`` (``export_after`` /
``advance_export``). The log is pruned below the lowest cursor of the
registered sinks. With no sink registered nothing is logged (a store without
a view carries no export rows); the first sink registered is backfilled with
every reading stored so far, so a view added later starts complete.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sidewalk.core.contract import (
    AnyReading,
    FrameRef,
    SnowMeasurement,
    Status,
    WeatherReading,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS readings (
    device      TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    stream      TEXT    NOT NULL,
    ts          INTEGER NOT NULL,
    frontage    TEXT,
    received_at INTEGER NOT NULL,
    payload     TEXT    NOT NULL,
    PRIMARY KEY (device, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS readings_stream_ts ON readings (stream, ts);
CREATE INDEX IF NOT EXISTS readings_device_ts ON readings (device, ts);
CREATE INDEX IF NOT EXISTS readings_frontage_ts ON readings (frontage, ts)
    WHERE frontage IS NOT NULL;

CREATE TABLE IF NOT EXISTS dead_letters (
    id          INTEGER PRIMARY KEY,
    received_at INTEGER NOT NULL,
    topic       TEXT    NOT NULL,
    device      TEXT,
    payload     BLOB    NOT NULL,
    reason      TEXT    NOT NULL,
    detail      TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS dead_letters_reason ON dead_letters (reason, received_at);
CREATE INDEX IF NOT EXISTS dead_letters_device ON dead_letters (device, received_at);
CREATE INDEX IF NOT EXISTS dead_letters_time ON dead_letters (received_at);

CREATE TABLE IF NOT EXISTS seq_gaps (
    device      TEXT    NOT NULL,
    from_seq    INTEGER NOT NULL,
    to_seq      INTEGER NOT NULL,
    detected_at INTEGER NOT NULL,
    lost_at     INTEGER,
    PRIMARY KEY (device, from_seq)
);

CREATE TABLE IF NOT EXISTS devices (
    device       TEXT PRIMARY KEY,
    site         TEXT,
    max_seq      INTEGER NOT NULL DEFAULT 0,
    floor_seq    INTEGER NOT NULL DEFAULT 0,
    status       TEXT,
    status_ts    INTEGER,
    last_seen_at INTEGER
);

-- Export to secondary views (InfluxDB): every stored reading in commit order.
-- AUTOINCREMENT so an id is never reused after the log is pruned to empty,
-- which would hide new rows below a sink's cursor.
CREATE TABLE IF NOT EXISTS export_log (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    device TEXT    NOT NULL,
    seq    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS export_cursors (
    sink    TEXT PRIMARY KEY,
    last_id INTEGER NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A message that broke the contract, kept byte for byte."""

    received_at_ms: int
    topic: str
    device: str | None
    payload: bytes
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class SeqGap:
    """Seqs ``from_seq..to_seq`` of ``device`` were never stored.

    ``lost_at_ms`` is set once the device reported it no longer holds them.
    """

    device: str
    from_seq: int
    to_seq: int
    detected_at_ms: int
    lost_at_ms: int | None


@dataclass(frozen=True, slots=True)
class DeviceState:
    """What the store knows of a device's stream and availability."""

    device: str
    site: str | None
    max_seq: int
    floor_seq: int
    status: str | None
    status_ts_ms: int | None
    last_seen_at_ms: int | None


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """A device's availability message and the site its topic named."""

    site: str
    status: Status


@dataclass(frozen=True, slots=True)
class ExportBatch:
    """Stored readings after a sink's cursor, in commit order, with their device's site."""

    last_id: int
    readings: list[tuple[AnyReading, str | None]]


@dataclass(slots=True)
class BatchResult:
    """What one ``write_batch`` did."""

    stored: list[AnyReading] = field(default_factory=list)
    duplicates: list[tuple[str, int]] = field(default_factory=list)
    gaps_opened: list[SeqGap] = field(default_factory=list)
    # stored_up_to for every device the batch touched.
    watermarks: dict[str, int] = field(default_factory=dict)


class TimeSeriesStore(Protocol):
    """What ingest and readers need from a time-series store."""

    def write_batch(
        self,
        readings: Sequence[AnyReading],
        *,
        sites: Mapping[str, str] | None = None,
        statuses: Sequence[StatusUpdate] = (),
        dead_letters: Sequence[DeadLetter] = (),
        received_at_ms: int | None = None,
    ) -> BatchResult:
        """Store everything in one durable transaction."""
        ...

    def stored_up_to(self, device: str) -> int:
        """Highest seq S with every seq 1..S stored or known lost."""
        ...

    def readings(
        self,
        *,
        device: str | None = None,
        stream: str | None = None,
        frontage: str | None = None,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int | None = None,
    ) -> list[AnyReading]:
        """Readings matching every given filter, in event-time order."""
        ...

    def close(self) -> None:
        """Release the store."""
        ...


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class SqliteTimeSeriesStore:
    """``TimeSeriesStore`` on one SQLite file (WAL, ``synchronous=FULL``).

    Safe to share between threads (one connection behind a lock); several
    processes may open the same file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def write_batch(
        self,
        readings: Sequence[AnyReading],
        *,
        sites: Mapping[str, str] | None = None,
        statuses: Sequence[StatusUpdate] = (),
        dead_letters: Sequence[DeadLetter] = (),
        received_at_ms: int | None = None,
    ) -> BatchResult:
        """Store readings, statuses and dead letters in one transaction.

        Duplicates by ``(device, seq)`` are skipped and reported; a duplicate
        whose content differs is also dead-lettered as ``seq_conflict``.
        Readings extend, open or fill seq gaps. Durable on return.
        """
        now = _now_ms() if received_at_ms is None else received_at_ms
        result = BatchResult()
        sites = sites or {}
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                touched: set[str] = set()
                for status_update in statuses:
                    self._record_status(status_update, now)
                    touched.add(status_update.status.device)
                max_seq: dict[str, int] = {}
                for r in readings:
                    if r.device not in max_seq:
                        max_seq[r.device] = self._ensure_device(r.device, sites.get(r.device), now)
                        touched.add(r.device)
                self._write_readings(readings, max_seq, now, result)
                if result.stored and _has_sinks(db):
                    db.executemany(
                        "INSERT INTO export_log (device, seq) VALUES (?, ?)",
                        [(r.device, r.seq) for r in result.stored],
                    )
                for dev, top in max_seq.items():
                    db.execute(
                        "UPDATE devices SET max_seq = ?, last_seen_at = ? WHERE device = ?",
                        (top, now, dev),
                    )
                for dl in dead_letters:
                    self._insert_dead_letter(dl)
                for dev in touched:
                    self._apply_floor(dev, now)
                    result.watermarks[dev] = self._stored_up_to(dev)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return result

    def _write_readings(
        self,
        readings: Sequence[AnyReading],
        max_seq: dict[str, int],
        now: int,
        result: BatchResult,
    ) -> None:
        """Store readings set-wise, with the outcome of storing them one by one in order.

        A seq above the device's running maximum is new (it may open a gap);
        one at or below it is a duplicate if stored before (in the table or
        earlier in this batch), else a late fill. One SELECT per device tells
        which, then every row goes in one ``executemany`` and the gaps the
        fills hit are split in one pass: two workers dealt alternate seqs of
        a device by round robin fill a gap with nearly every reading.
        """
        low: dict[str, list[int]] = {}
        top = dict(max_seq)
        for r in readings:
            if r.seq > top[r.device]:
                top[r.device] = r.seq
            else:
                low.setdefault(r.device, []).append(r.seq)
        existing = {dev: self._existing_seqs(dev, seqs) for dev, seqs in low.items()}
        rows: list[tuple[str, int, str, int, str | None, int, str]] = []
        gaps: list[tuple[str, int, int, int]] = []
        fills: dict[str, list[int]] = {}
        dups: list[tuple[AnyReading, str]] = []
        seen: dict[str, set[int]] = {dev: set() for dev in max_seq}
        for r in readings:
            dev = r.device
            row = (
                dev,
                r.seq,
                r.stream,
                r.ts,
                # pydantic's __getattr__ makes a missing-attribute getattr
                # cost as much as the insert; the field dict does not.
                r.__dict__.get("frontage"),
                now,
                r.to_json().decode(),
            )
            seen_dev = seen[dev]
            if r.seq > max_seq[dev]:
                if r.seq > max_seq[dev] + 1:
                    gap = SeqGap(dev, max_seq[dev] + 1, r.seq - 1, now, None)
                    gaps.append((dev, gap.from_seq, gap.to_seq, now))
                    result.gaps_opened.append(gap)
                max_seq[dev] = r.seq
            elif r.seq in seen_dev or r.seq in existing[dev]:
                result.duplicates.append((dev, r.seq))
                dups.append((r, row[-1]))
                continue
            else:
                fills.setdefault(dev, []).append(r.seq)
            seen_dev.add(r.seq)
            rows.append(row)
            result.stored.append(r)
        if gaps:
            self._db.executemany(
                "INSERT INTO seq_gaps (device, from_seq, to_seq, detected_at) VALUES (?, ?, ?, ?)",
                gaps,
            )
        self._insert(rows)
        for r, payload in dups:
            self._check_conflict(r, payload, now)
        for dev, seqs in fills.items():
            self._fill(dev, seqs)

    def _existing_seqs(self, device: str, seqs: list[int]) -> set[int]:
        """Which of ``seqs`` the table already holds for ``device``."""
        found: set[int] = set()
        wanted = sorted(set(seqs))
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self._db.execute(
                    f"SELECT seq FROM readings WHERE device = ? AND seq IN ({marks})",
                    (device, *chunk),
                )
            )
        return found

    def _insert(self, rows: list[tuple[str, int, str, int, str | None, int, str]]) -> int:
        if not rows:
            return 0
        cur = self._db.executemany(
            "INSERT OR IGNORE INTO readings"
            " (device, seq, stream, ts, frontage, received_at, payload)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        return int(cur.rowcount)

    def _ensure_device(self, device: str, site: str | None, now: int) -> int:
        self._db.execute(
            "INSERT INTO devices (device, site, last_seen_at) VALUES (?, ?, ?)"
            " ON CONFLICT (device) DO UPDATE SET site = COALESCE(excluded.site, site)",
            (device, site, now),
        )
        row = self._db.execute("SELECT max_seq FROM devices WHERE device = ?", (device,)).fetchone()
        return int(row[0])

    def _record_status(self, update: StatusUpdate, now: int) -> None:
        st = update.status
        self._ensure_device(st.device, update.site, now)
        self._db.execute(
            "UPDATE devices SET status = ?, status_ts = ?, last_seen_at = ?,"
            " floor_seq = MAX(floor_seq, ?) WHERE device = ?",
            (st.state, st.ts, now, st.buffer_floor_seq or 0, st.device),
        )

    def _check_conflict(self, r: AnyReading, payload: str, now: int) -> None:
        row = self._db.execute(
            "SELECT payload FROM readings WHERE device = ? AND seq = ?", (r.device, r.seq)
        ).fetchone()
        if row is not None and json.loads(row[0]) != json.loads(payload):
            self._insert_dead_letter(
                DeadLetter(
                    now,
                    f"(re-sent {r.stream} of {r.device})",
                    r.device,
                    payload.encode(),
                    "seq_conflict",
                    f"seq {r.seq} already stored with different content",
                )
            )

    def _insert_dead_letter(self, dl: DeadLetter) -> None:
        self._db.execute(
            "INSERT INTO dead_letters (received_at, topic, device, payload, reason, detail)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (dl.received_at_ms, dl.topic, dl.device, dl.payload, dl.reason, dl.detail),
        )

    def _fill(self, device: str, seqs: list[int]) -> None:
        """Late readings arrived: take them out of the gaps that contained them.

        Each gap hit is replaced by what is left of it (its maximal runs of
        still-missing seqs), keeping its detected and lost times.
        """
        points = sorted(seqs)
        hit = self._db.execute(
            "SELECT from_seq, to_seq, detected_at, lost_at FROM seq_gaps"
            " WHERE device = ? AND from_seq <= ? AND to_seq >= ?",
            (device, points[-1], points[0]),
        ).fetchall()
        deleted: list[tuple[str, int]] = []
        pieces: list[tuple[str, int, int, int, int | None]] = []
        for lo, hi, detected, lost in hit:
            inside = points[bisect_left(points, lo) : bisect_right(points, hi)]
            if not inside:
                continue
            deleted.append((device, lo))
            start = lo
            for seq in inside:
                if start <= seq - 1:
                    pieces.append((device, start, seq - 1, detected, lost))
                start = seq + 1
            if start <= hi:
                pieces.append((device, start, hi, detected, lost))
        self._db.executemany("DELETE FROM seq_gaps WHERE device = ? AND from_seq = ?", deleted)
        self._db.executemany(
            "INSERT INTO seq_gaps (device, from_seq, to_seq, detected_at, lost_at)"
            " VALUES (?, ?, ?, ?, ?)",
            pieces,
        )

    def _apply_floor(self, device: str, now: int) -> None:
        """Mark what lies below the device's buffer floor and was never stored as lost."""
        max_seq, floor = self._db.execute(
            "SELECT max_seq, floor_seq FROM devices WHERE device = ?", (device,)
        ).fetchone()
        if floor <= 1:
            return
        if max_seq < floor - 1:
            self._db.execute(
                "INSERT INTO seq_gaps (device, from_seq, to_seq, detected_at, lost_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (device, max_seq + 1, floor - 1, now, now),
            )
            self._db.execute("UPDATE devices SET max_seq = ? WHERE device = ?", (floor - 1, device))
        straddling = self._db.execute(
            "SELECT from_seq, to_seq, detected_at FROM seq_gaps"
            " WHERE device = ? AND lost_at IS NULL AND from_seq < ? AND to_seq >= ?",
            (device, floor, floor),
        ).fetchall()
        for lo, hi, detected in straddling:
            self._db.execute(
                "UPDATE seq_gaps SET to_seq = ? WHERE device = ? AND from_seq = ?",
                (floor - 1, device, lo),
            )
            self._db.execute(
                "INSERT INTO seq_gaps (device, from_seq, to_seq, detected_at) VALUES (?, ?, ?, ?)",
                (device, floor, hi, detected),
            )
        self._db.execute(
            "UPDATE seq_gaps SET lost_at = ? WHERE device = ? AND lost_at IS NULL AND to_seq < ?",
            (now, device, floor),
        )

    def _stored_up_to(self, device: str) -> int:
        row = self._db.execute(
            "SELECT d.max_seq, (SELECT MIN(from_seq) FROM seq_gaps g"
            "  WHERE g.device = d.device AND g.lost_at IS NULL)"
            " FROM devices d WHERE d.device = ?",
            (device,),
        ).fetchone()
        if row is None:
            return 0
        max_seq, first_open = row
        return int(max_seq) if first_open is None else int(first_open) - 1

    def stored_up_to(self, device: str) -> int:
        """Highest seq S with every seq 1..S stored or known lost (0: none)."""
        with self._lock:
            return self._stored_up_to(device)

    def readings(
        self,
        *,
        device: str | None = None,
        stream: str | None = None,
        frontage: str | None = None,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int | None = None,
    ) -> list[AnyReading]:
        """Readings matching every given filter, ordered by event time then seq.

        ``start_ms`` is inclusive, ``end_ms`` exclusive.
        """
        where, args = _filters(
            ("device = ?", device),
            ("stream = ?", stream),
            ("frontage = ?", frontage),
            ("ts >= ?", start_ms),
            ("ts < ?", end_ms),
        )
        sql = f"SELECT stream, payload FROM readings{where} ORDER BY ts, device, seq"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [_reading_from_json(stream_, payload) for stream_, payload in rows]

    def count(self, device: str | None = None) -> int:
        """How many readings are stored (for one device, or all)."""
        where, args = _filters(("device = ?", device))
        with self._lock:
            return int(
                self._db.execute(f"SELECT COUNT(*) FROM readings{where}", args).fetchone()[0]
            )

    def seqs(self, device: str) -> list[int]:
        """Every stored seq of a device, ascending."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq FROM readings WHERE device = ? ORDER BY seq", (device,)
            ).fetchall()
        return [int(r[0]) for r in rows]

    def dead_letters(
        self,
        *,
        reason: str | None = None,
        device: str | None = None,
        start_ms: int | None = None,
        end_ms: int | None = None,
    ) -> list[DeadLetter]:
        """Dead letters matching every given filter, oldest first."""
        where, args = _filters(
            ("reason = ?", reason),
            ("device = ?", device),
            ("received_at >= ?", start_ms),
            ("received_at < ?", end_ms),
        )
        with self._lock:
            rows = self._db.execute(
                "SELECT received_at, topic, device, payload, reason, detail"
                f" FROM dead_letters{where} ORDER BY id",
                args,
            ).fetchall()
        return [DeadLetter(r[0], r[1], r[2], bytes(r[3]), r[4], r[5]) for r in rows]

    def gaps(self, device: str | None = None, *, lost_only: bool = False) -> list[SeqGap]:
        """Every seq gap, open and lost (with ``lost_only``, only those given up as lost)."""
        where, args = _filters(("device = ?", device))
        if lost_only:
            where += (" AND" if where else " WHERE") + " lost_at IS NOT NULL"
        with self._lock:
            rows = self._db.execute(
                "SELECT device, from_seq, to_seq, detected_at, lost_at"
                f" FROM seq_gaps{where} ORDER BY device, from_seq",
                args,
            ).fetchall()
        return [SeqGap(*r) for r in rows]

    def device_state(self, device: str) -> DeviceState | None:
        """Last known status, last-seen time and seq bookkeeping of a device."""
        with self._lock:
            row = self._db.execute(
                "SELECT device, site, max_seq, floor_seq, status, status_ts, last_seen_at"
                " FROM devices WHERE device = ?",
                (device,),
            ).fetchone()
        return None if row is None else DeviceState(*row)

    # ------------------------------------------------------------ export cursors

    def register_export(self, sink: str) -> int:
        """Create ``sink``'s cursor (at the log's start) if absent; return it.

        The first sink of the store is backfilled: every reading stored before
        it existed is logged for export (in the order received), in the same
        transaction, so no reading is stored between the backfill and the
        cursor's creation without being logged.
        """
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                if not _has_sinks(db):
                    db.execute("DELETE FROM export_log")
                    db.execute(
                        "INSERT INTO export_log (device, seq)"
                        " SELECT device, seq FROM readings ORDER BY received_at, device, seq"
                    )
                db.execute(
                    "INSERT INTO export_cursors (sink, last_id) VALUES (?, 0)"
                    " ON CONFLICT (sink) DO NOTHING",
                    (sink,),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return self._cursor(sink)

    def _cursor(self, sink: str) -> int:
        row = self._db.execute(
            "SELECT last_id FROM export_cursors WHERE sink = ?", (sink,)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def export_cursor(self, sink: str) -> int:
        """The last export-log id ``sink`` has confirmed (0: nothing yet)."""
        with self._lock:
            return self._cursor(sink)

    def export_after(self, sink: str, limit: int = 5000) -> ExportBatch:
        """Up to ``limit`` stored readings after ``sink``'s cursor, oldest first."""
        with self._lock:
            after = self._cursor(sink)
            rows = self._db.execute(
                "SELECT x.id, r.stream, r.payload, d.site FROM export_log x"
                " JOIN readings r ON r.device = x.device AND r.seq = x.seq"
                " LEFT JOIN devices d ON d.device = x.device"
                " WHERE x.id > ? ORDER BY x.id LIMIT ?",
                (after, limit),
            ).fetchall()
        last = int(rows[-1][0]) if rows else after
        return ExportBatch(last, [(_reading_from_json(st, pl), site) for _, st, pl, site in rows])

    def export_backlog(self, sink: str) -> int:
        """How many stored readings ``sink`` has not confirmed yet."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM export_log WHERE id > ?", (self._cursor(sink),)
            ).fetchone()
        return int(row[0])

    def advance_export(self, sink: str, last_id: int) -> None:
        """Durably move ``sink``'s cursor to ``last_id`` and prune what every sink has."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO export_cursors (sink, last_id) VALUES (?, ?)"
                    " ON CONFLICT (sink) DO UPDATE SET last_id = MAX(last_id, excluded.last_id)",
                    (sink, last_id),
                )
                db.execute(
                    "DELETE FROM export_log WHERE id <= (SELECT MIN(last_id) FROM export_cursors)"
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise


def _has_sinks(db: sqlite3.Connection) -> bool:
    """Whether any export sink is registered (read inside the writer's transaction)."""
    return db.execute("SELECT 1 FROM export_cursors LIMIT 1").fetchone() is not None


def _filters(*pairs: tuple[str, object]) -> tuple[str, list[object]]:
    clauses = [sql for sql, value in pairs if value is not None]
    args = [value for _, value in pairs if value is not None]
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


_READING_MODELS: dict[str, type[WeatherReading] | type[SnowMeasurement] | type[FrameRef]] = {
    "weather": WeatherReading,
    "snow": SnowMeasurement,
    "frame": FrameRef,
}


def _reading_from_json(stream: str, payload: str) -> AnyReading:
    return _READING_MODELS[stream].model_validate_json(payload)
