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

Seq spaces (``Reading.epoch``): a pole's seqs are unique within its epoch, a
random id its buffer creates with its seq state, so a re-imaged pole starts
again at seq 1 in a new epoch. Each ``(device, epoch)`` is a ``seq_spaces``
row whose ``base`` places it on the device's one line of stored seqs:
``readings.seq`` = ``base`` + the pole's seq (the payload keeps the pole's
own). The first space of a device has base 0 (so a pole without epochs, space
``''``, is stored as before); a new epoch of a device that has readings starts
after them and closes the previous space (its open gaps are lost: that disk is
gone). The watermark is published for the device's current space, in its own
seqs, with its epoch.

Time: with a ``TimePolicy``, a reading whose ``ts`` is implausible (ahead of its
receipt, or older than the pole's last accepted reading while its seq is
newer) is quarantined: kept byte for byte as an ``implausible_time`` dead
letter, its seq accounted for (so the watermark passes it and a re-send is a
duplicate) but not stored as a reading, and the device's ``clock_faults``
counted.

Secondary views (InfluxDB) catch up from this store, not from memory: the same
transaction appends each newly stored reading to ``export_log``, and each sink
keeps a durable cursor in ``export_cursors`` (``export_after`` /
``advance_export``). The log is pruned below the lowest cursor of the
registered sinks. With no sink registered nothing is logged (a store without
a view carries no export rows); the first sink registered is backfilled with
every reading stored so far, so a view added later starts complete.
"""

from __future__ import annotations

import contextlib
import hashlib
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
    READING_STREAMS,
    AnyReading,
    FrameRef,
    SnowMeasurement,
    Status,
    TimePolicy,
    WeatherReading,
    topic_for,
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

-- One per (device, epoch): stored seq = base + the pole's seq. last_seq/last_ts:
-- the pole's last accepted reading (time checks); suspect: its clock stepped back
-- and has not been seen right since (``TimePolicy``); closed_at: the highest pole
-- seq of a space a later epoch replaced.
CREATE TABLE IF NOT EXISTS seq_spaces (
    device     TEXT    NOT NULL,
    epoch      TEXT    NOT NULL,
    base       INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL DEFAULT 0,
    last_ts    INTEGER NOT NULL DEFAULT 0,
    suspect    INTEGER NOT NULL DEFAULT 0,
    started_at INTEGER NOT NULL,
    closed_at  INTEGER,
    PRIMARY KEY (device, epoch)
);

-- Stored seqs of quarantined readings (their bytes are dead letters).
CREATE TABLE IF NOT EXISTS quarantined (
    device TEXT    NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (device, seq)
) WITHOUT ROWID;

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
    """A message that broke the contract.

    The store keeps the first ``dead_letter_prefix`` bytes of ``payload``
    (4 KiB by default: every well-formed reading whole) with the whole
    payload's length and sha256, so a flood of large payloads cannot fill the
    disk. Read back, ``payload`` is that prefix and ``payload_len`` /
    ``payload_sha256`` describe the original.
    """

    received_at_ms: int
    topic: str
    device: str | None
    payload: bytes
    reason: str
    detail: str
    payload_len: int | None = None
    payload_sha256: str | None = None

    @property
    def truncated(self) -> bool:
        """Whether ``payload`` is only a prefix of what was received."""
        return self.payload_len is not None and self.payload_len > len(self.payload)


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


# Columns added to ``devices`` after its first release (added to older files on open).
# A dead letter keeps this many bytes of its payload (plus length and sha256).
DEAD_LETTER_PREFIX = 4096
_DEAD_LETTER_COLUMNS = {"payload_len": "INTEGER", "payload_sha256": "TEXT"}

_DEVICE_COLUMNS = {
    "epoch": "TEXT",
    "clock_faults": "INTEGER NOT NULL DEFAULT 0",
    "clock_fault_at": "INTEGER",
    "clock_fault": "TEXT",
}


@dataclass(frozen=True, slots=True)
class DeviceState:
    """What the store knows of a device's stream and availability.

    ``epoch`` is the device's current seq space (None: a pole without epochs).
    ``clock_faults`` counts its readings quarantined for an implausible time;
    ``clock_fault`` says why the last one was, ``clock_fault_at_ms`` when.
    """

    device: str
    site: str | None
    max_seq: int
    floor_seq: int
    status: str | None
    status_ts_ms: int | None
    last_seen_at_ms: int | None
    epoch: str | None = None
    clock_faults: int = 0
    clock_fault_at_ms: int | None = None
    clock_fault: str | None = None


@dataclass(frozen=True, slots=True)
class SeqSpace:
    """One epoch of a device: stored seq = ``base`` + the pole's seq."""

    device: str
    epoch: str | None
    base: int
    started_at_ms: int
    closed_at_seq: int | None


@dataclass(slots=True)
class _Space:
    base: int
    last_seq: int
    last_ts: int
    suspect: bool
    closed_at: int | None
    dirty: bool = False

    def held(self, *, suspect: bool) -> None:
        if suspect != self.suspect:
            self.suspect, self.dirty = suspect, True

    def accepted(self, seq: int, ts: int) -> None:
        self.suspect, self.dirty = False, True
        if seq > self.last_seq:
            self.last_seq, self.last_ts = seq, ts


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
    # The watermark for every device the batch touched: stored up to, in the
    # seqs of the device's current epoch, and that epoch.
    watermarks: dict[str, int] = field(default_factory=dict)
    watermark_epochs: dict[str, str | None] = field(default_factory=dict)
    # Readings kept as implausible_time dead letters instead of being stored.
    quarantined: list[AnyReading] = field(default_factory=list)
    # (device, epoch, base) of each seq space this batch began.
    epochs_started: list[tuple[str, str | None, int]] = field(default_factory=list)


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
        time_policy: TimePolicy | None = None,
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

    def __init__(self, path: str | Path, *, dead_letter_prefix: int = DEAD_LETTER_PREFIX) -> None:
        if dead_letter_prefix < 0:
            raise ValueError("dead_letter_prefix must be at least 0")
        self.path = Path(path)
        self.dead_letter_prefix = dead_letter_prefix
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        have = {row[1] for row in self._db.execute("PRAGMA table_info(devices)")}
        for name, decl in _DEVICE_COLUMNS.items():
            if name not in have:
                self._db.execute(f"ALTER TABLE devices ADD COLUMN {name} {decl}")
        have = {row[1] for row in self._db.execute("PRAGMA table_info(dead_letters)")}
        for name, decl in _DEAD_LETTER_COLUMNS.items():
            if name not in have:
                self._db.execute(f"ALTER TABLE dead_letters ADD COLUMN {name} {decl}")

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
        time_policy: TimePolicy | None = None,
    ) -> BatchResult:
        """Store readings, statuses and dead letters in one transaction.

        Duplicates by ``(device, epoch, seq)`` are skipped and reported; a
        duplicate whose content differs is also dead-lettered as
        ``seq_conflict``. With ``time_policy``, a reading with an implausible
        ``ts`` (judged against ``received_at_ms``) is quarantined. Readings
        extend, open or fill seq gaps. Durable on return.
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
                    self._record_status(status_update, now, result)
                    touched.add(status_update.status.device)
                max_seq: dict[str, int] = {}
                spaces: dict[tuple[str, str], _Space] = {}
                for r in readings:
                    key = (r.device, r.__dict__.get("epoch") or "")
                    if key not in spaces:
                        if r.device not in max_seq:
                            self._ensure_device(r.device, sites.get(r.device), now)
                            max_seq[r.device] = 0
                            touched.add(r.device)
                        spaces[key] = self._space(r.device, key[1], now, result)
                for dev in max_seq:
                    # After the spaces: a new one is placed after what the device has.
                    max_seq[dev] = self._max_seq(dev)
                if result.epochs_started:
                    self._reload_closed(spaces)
                stored_keys = self._write_readings(
                    readings, max_seq, spaces=spaces, sites=sites, policy=time_policy, now=now,
                    result=result,
                )  # fmt: skip
                if stored_keys and _has_sinks(db):
                    db.executemany(
                        "INSERT INTO export_log (device, seq) VALUES (?, ?)", stored_keys
                    )
                for dev, top in max_seq.items():
                    db.execute(
                        "UPDATE devices SET max_seq = ?, last_seen_at = ? WHERE device = ?",
                        (top, now, dev),
                    )
                db.executemany(
                    "UPDATE seq_spaces SET last_seq = ?, last_ts = ?, suspect = ?"
                    " WHERE device = ? AND epoch = ?",
                    [(sp.last_seq, sp.last_ts, sp.suspect, dev, ep)
                     for (dev, ep), sp in spaces.items() if sp.dirty],
                )  # fmt: skip
                for dl in dead_letters:
                    self._insert_dead_letter(dl)
                for dev in touched:
                    self._apply_floor(dev, now)
                    result.watermarks[dev], result.watermark_epochs[dev] = self._watermark(dev)
                db.execute("COMMIT")
            except BaseException:
                _rollback(db)
                raise
        return result

    def _write_readings(
        self,
        readings: Sequence[AnyReading],
        max_seq: dict[str, int],
        *,
        spaces: dict[tuple[str, str], _Space],
        sites: Mapping[str, str],
        policy: TimePolicy | None,
        now: int,
        result: BatchResult,
    ) -> list[tuple[str, int]]:
        """Store readings set-wise, with the outcome of storing them one by one in order.

        Returns the ``(device, stored seq)`` of each row inserted. A reading's
        stored seq is its seq space's base plus its own; a reading of a closed
        space beyond where it closed is a ``seq_conflict`` (that seq is the
        next epoch's now). A new reading with an implausible time is
        quarantined: its seq counts as received, its bytes become a dead letter.

        A seq above the device's running maximum is new (it may open a gap);
        one at or below it is a duplicate if stored before (in the table or
        earlier in this batch), else a late fill. One SELECT per device tells
        which, then every row goes in one ``executemany`` and the gaps the
        fills hit are split in one pass: two workers dealt alternate seqs of
        a device by round robin fill a gap with nearly every reading.
        """
        placed, low = self._place(readings, max_seq, spaces, sites, now)
        existing = {dev: self._existing_seqs(dev, seqs) for dev, seqs in low.items()}
        rows: list[tuple[str, int, str, int, str | None, int, str]] = []
        gaps: list[tuple[str, int, int, int]] = []
        fills: dict[str, list[int]] = {}
        dups: list[tuple[AnyReading, int, str]] = []
        held: list[tuple[AnyReading, int, str, str]] = []
        seen: dict[str, set[int]] = {dev: set() for dev in max_seq}
        for r, space, seq in placed:
            dev = r.device
            row = (
                dev,
                seq,
                r.stream,
                r.ts,
                # pydantic's __getattr__ makes a missing-attribute getattr
                # cost as much as the insert; the field dict does not.
                r.__dict__.get("frontage"),
                now,
                r.to_json().decode(),
            )
            seen_dev = seen[dev]
            if seq > max_seq[dev]:
                if seq > max_seq[dev] + 1:
                    gap = SeqGap(dev, max_seq[dev] + 1, seq - 1, now, None)
                    gaps.append((dev, gap.from_seq, gap.to_seq, now))
                    result.gaps_opened.append(gap)
                max_seq[dev] = seq
            elif seq in seen_dev or seq in existing[dev]:
                result.duplicates.append((dev, r.seq))
                dups.append((r, seq, row[-1]))
                continue
            else:
                fills.setdefault(dev, []).append(seq)
            seen_dev.add(seq)
            if policy is not None and (
                verdict := policy.problem(
                    r.seq, r.ts, now, space.last_seq, space.last_ts, suspect=space.suspect
                )
            ):
                held.append((r, seq, row[-1], verdict[0]))
                space.held(suspect=verdict[1])
                continue
            if space.suspect or r.seq > space.last_seq:
                space.accepted(r.seq, r.ts)
            rows.append(row)
            result.stored.append(r)
        if held:
            self._quarantine(held, sites, now, result)
        if gaps:
            self._db.executemany(
                "INSERT INTO seq_gaps (device, from_seq, to_seq, detected_at) VALUES (?, ?, ?, ?)",
                gaps,
            )
        self._insert(rows)
        for r, seq, payload in dups:
            self._check_conflict(r, seq, payload, now)
        for dev, seqs in fills.items():
            self._fill(dev, seqs)
        return [(row[0], row[1]) for row in rows]

    def _place(
        self,
        readings: Sequence[AnyReading],
        max_seq: dict[str, int],
        spaces: dict[tuple[str, str], _Space],
        sites: Mapping[str, str],
        now: int,
    ) -> tuple[list[tuple[AnyReading, _Space, int]], dict[str, list[int]]]:
        """Each reading with its space and stored seq; per device, the seqs not above its top."""
        low: dict[str, list[int]] = {}
        top = dict(max_seq)
        placed: list[tuple[AnyReading, _Space, int]] = []
        for r in readings:
            space = spaces[r.device, r.__dict__.get("epoch") or ""]
            if space.closed_at is not None and r.seq > space.closed_at:
                self._insert_dead_letter(
                    DeadLetter(now, _topic(sites, r), r.device, r.to_json(), "seq_conflict",
                               f"seq {r.seq} of epoch {r.epoch or '(none)'}, which a later epoch"
                               f" replaced after its seq {space.closed_at}")
                )  # fmt: skip
                continue
            seq = space.base + r.seq
            placed.append((r, space, seq))
            if seq > top[r.device]:
                top[r.device] = seq
            else:
                low.setdefault(r.device, []).append(seq)
        return placed, low

    def _quarantine(
        self,
        held: list[tuple[AnyReading, int, str, str]],
        sites: Mapping[str, str],
        now: int,
        result: BatchResult,
    ) -> None:
        """Keep implausibly timed readings as dead letters, their seqs as received."""
        faults: dict[str, tuple[int, str]] = {}
        for r, seq, payload, problem in held:
            result.quarantined.append(r)
            self._db.execute("INSERT OR IGNORE INTO quarantined VALUES (?, ?)", (r.device, seq))
            self._insert_dead_letter(
                DeadLetter(
                    now, _topic(sites, r), r.device, payload.encode(), "implausible_time", problem
                )
            )
            faults[r.device] = (faults.get(r.device, (0, ""))[0] + 1, problem)
        for dev, (count, problem) in faults.items():
            self._db.execute(
                "UPDATE devices SET clock_faults = clock_faults + ?, clock_fault_at = ?,"
                " clock_fault = ? WHERE device = ?",
                (count, now, problem, dev),
            )

    def _existing_seqs(self, device: str, seqs: list[int]) -> set[int]:
        """Which of ``seqs`` the store already holds for ``device`` (stored or quarantined)."""
        found: set[int] = set()
        wanted = sorted(set(seqs))
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self._db.execute(
                    f"SELECT seq FROM readings WHERE device = ? AND seq IN ({marks})"
                    f" UNION ALL SELECT seq FROM quarantined WHERE device = ? AND seq IN ({marks})",
                    (device, *chunk, device, *chunk),
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
        return self._max_seq(device)

    def _max_seq(self, device: str) -> int:
        row = self._db.execute("SELECT max_seq FROM devices WHERE device = ?", (device,)).fetchone()
        return int(row[0])

    def _space(self, device: str, epoch: str, now: int, result: BatchResult) -> _Space:
        """The seq space ``(device, epoch)``, begun here if new (the device must exist)."""
        row = self._db.execute(
            "SELECT base, last_seq, last_ts, suspect, closed_at FROM seq_spaces"
            " WHERE device = ? AND epoch = ?",
            (device, epoch),
        ).fetchone()
        if row is not None:
            base, last_seq, last_ts, suspect, closed_at = row
            return _Space(base, last_seq, last_ts, bool(suspect), closed_at)
        max_seq, current = self._db.execute(
            "SELECT max_seq, epoch FROM devices WHERE device = ?", (device,)
        ).fetchone()
        # A pole without epochs is the device's one space from seq 0; so is a
        # device's first epoch. A later epoch (a re-imaged pole, seq 1 again)
        # goes after everything stored, and the space before it is closed.
        base = 0 if epoch == "" else int(max_seq)
        if epoch and (max_seq or current):
            self._db.execute(
                "INSERT INTO seq_spaces (device, epoch, base, started_at) VALUES (?, ?, 0, ?)"
                " ON CONFLICT (device, epoch) DO NOTHING",
                (device, current or "", now),
            )
            self._db.execute(
                "UPDATE seq_spaces SET closed_at = ? - base WHERE device = ? AND closed_at IS NULL",
                (base, device),
            )
            # That pole's disk is gone: what it never delivered cannot come any more.
            self._db.execute(
                "UPDATE seq_gaps SET lost_at = ? WHERE device = ? AND lost_at IS NULL",
                (now, device),
            )
        self._db.execute(
            "INSERT INTO seq_spaces (device, epoch, base, started_at) VALUES (?, ?, ?, ?)",
            (device, epoch, base, now),
        )
        self._db.execute("UPDATE devices SET epoch = ? WHERE device = ?", (epoch, device))
        result.epochs_started.append((device, epoch or None, base))
        return _Space(base, 0, 0, False, None)

    def _reload_closed(self, spaces: dict[tuple[str, str], _Space]) -> None:
        """A space read before a later one of its device began in this batch is closed now."""
        for (device, epoch), space in spaces.items():
            row = self._db.execute(
                "SELECT closed_at FROM seq_spaces WHERE device = ? AND epoch = ?", (device, epoch)
            ).fetchone()
            space.closed_at = row[0]

    def _watermark(self, device: str) -> tuple[int, str | None]:
        """Stored up to, in the seqs of the device's current epoch, and that epoch."""
        epoch, base = self._db.execute(
            "SELECT d.epoch, s.base FROM devices d LEFT JOIN seq_spaces s"
            " ON s.device = d.device AND s.epoch = d.epoch WHERE d.device = ?",
            (device,),
        ).fetchone()
        return max(0, self._stored_up_to(device) - (base or 0)), epoch or None

    def _record_status(self, update: StatusUpdate, now: int, result: BatchResult) -> None:
        st = update.status
        self._ensure_device(st.device, update.site, now)
        space = self._space(st.device, st.epoch or "", now, result)
        # A floor counts in its own seq space, and only the current one moves it
        # (a stale status of a replaced epoch says nothing about the new one).
        floor = 0
        if st.buffer_floor_seq and space.closed_at is None:
            floor = space.base + st.buffer_floor_seq
        self._db.execute(
            "UPDATE devices SET status = ?, status_ts = ?, last_seen_at = ?,"
            " floor_seq = MAX(floor_seq, ?) WHERE device = ?",
            (st.state, st.ts, now, floor, st.device),
        )

    def _check_conflict(self, r: AnyReading, seq: int, payload: str, now: int) -> None:
        row = self._db.execute(
            "SELECT payload FROM readings WHERE device = ? AND seq = ?", (r.device, seq)
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
        # A bounded prefix, the whole payload's length and hash: a pole sending
        # 15 MB of junk costs 4 KiB here, and the hash still identifies it.
        length = dl.payload_len if dl.payload_len is not None else len(dl.payload)
        sha = dl.payload_sha256 or hashlib.sha256(dl.payload).hexdigest()
        self._db.execute(
            "INSERT INTO dead_letters (received_at, topic, device, payload, reason, detail,"
            " payload_len, payload_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (dl.received_at_ms, dl.topic, dl.device, dl.payload[: self.dead_letter_prefix],
             dl.reason, dl.detail, length, sha),
        )  # fmt: skip

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
                "SELECT received_at, topic, device, payload, reason, detail, payload_len,"
                f" payload_sha256 FROM dead_letters{where} ORDER BY id",
                args,
            ).fetchall()
        return [DeadLetter(r[0], r[1], r[2], bytes(r[3]), r[4], r[5], r[6], r[7]) for r in rows]

    def frame_referenced(self, device: str | None, sha256: str, *, since_ms: int = 0) -> bool:
        """Whether a stored ``FrameRef`` (of ``device``, if given) names this image."""
        sql = "SELECT 1 FROM readings WHERE stream = 'frame' AND ts >= ?"
        args: list[object] = [since_ms]
        if device is not None:
            sql += " AND device = ?"
            args.append(device)
        sql += " AND json_extract(payload, '$.sha256') = ? LIMIT 1"
        args.append(sha256)
        with self._lock:
            return self._db.execute(sql, args).fetchone() is not None

    def prune(
        self, *, readings_before_ms: int | None, dead_letters_before_ms: int | None
    ) -> dict[str, int]:
        """Delete readings with ``ts`` and dead letters received before the cutoffs.

        Seq bookkeeping (``devices``, ``seq_spaces``, gaps) stays, so the
        watermark does not move back; a pole re-sends only above it. Returns
        how many rows of each went. Small transactions: ingest's writer waits
        for at most one of them.
        """
        counts = {"readings": 0, "dead_letters": 0}
        jobs: list[tuple[str, str]] = []
        if readings_before_ms is not None:
            jobs.append(("readings",
                         "DELETE FROM readings WHERE (device, seq) IN (SELECT device, seq"
                         " FROM readings WHERE stream = ? AND ts < ? LIMIT 5000)"))  # fmt: skip
        if dead_letters_before_ms is not None:
            jobs.append(("dead_letters",
                         "DELETE FROM dead_letters WHERE id IN (SELECT id FROM dead_letters"
                         " WHERE received_at < ? LIMIT 5000)"))  # fmt: skip
        for table, sql in jobs:
            streams: tuple[str | None, ...] = READING_STREAMS if table == "readings" else (None,)
            for stream in streams:
                while True:
                    with self._lock:
                        db = self._db
                        db.execute("BEGIN IMMEDIATE")
                        try:
                            if stream is None:
                                cur = db.execute(sql, (dead_letters_before_ms,))
                            else:
                                cur = db.execute(sql, (stream, readings_before_ms))
                            db.execute("COMMIT")
                        except BaseException:
                            _rollback(db)
                            raise
                    counts[table] += cur.rowcount
                    if cur.rowcount < 5000:
                        break
        return counts

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
                "SELECT device, site, max_seq, floor_seq, status, status_ts, last_seen_at,"
                " NULLIF(epoch, ''), clock_faults, clock_fault_at, clock_fault"
                " FROM devices WHERE device = ?",
                (device,),
            ).fetchone()
        return None if row is None else DeviceState(*row)

    def seq_spaces(self, device: str) -> list[SeqSpace]:
        """A device's epochs in the order they began (a re-imaged pole starts a new one)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT device, NULLIF(epoch, ''), base, started_at, closed_at FROM seq_spaces"
                " WHERE device = ? ORDER BY base, started_at",
                (device,),
            ).fetchall()
        return [SeqSpace(*r) for r in rows]

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


def _rollback(db: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open.

    SQLite rolls back by itself on some errors (a full disk: SQLITE_FULL), and a
    ROLLBACK then fails with "cannot rollback - no transaction is active",
    which used to hide the real cause in a chained traceback.
    """
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def _has_sinks(db: sqlite3.Connection) -> bool:
    """Whether any export sink is registered (read inside the writer's transaction)."""
    return db.execute("SELECT 1 FROM export_cursors LIMIT 1").fetchone() is not None


def _topic(sites: Mapping[str, str], r: AnyReading) -> str:
    """The topic a reading came on, for its dead letter (the store is not told it)."""
    site = sites.get(r.device)
    return topic_for(site, r.device, r.stream) if site else f"(of {r.device}/{r.stream})"


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
