"""The SQLite file: its schema, the columns added to older files, the connection.

``_connect`` opens the file in WAL mode with ``synchronous=FULL``, creates what
is missing and adds to an older file the columns added after its release.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from pathlib import Path

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
-- Every query names a device or a frontage (or is a frame lookup); a (stream, ts)
-- index (dropped from older files) cost ingest as much as (device, ts) per reading.
CREATE INDEX IF NOT EXISTS readings_device_ts ON readings (device, ts);
CREATE INDEX IF NOT EXISTS readings_frontage_ts ON readings (frontage, ts)
    WHERE frontage IS NOT NULL;
CREATE INDEX IF NOT EXISTS readings_frame_ts ON readings (ts) WHERE stream = 'frame';
DROP INDEX IF EXISTS readings_stream_ts;

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
-- seq of a space a later epoch replaced. held_*: a reading stamped far ahead of
-- last_ts that ended its batch, acknowledged and kept here (neither stored nor
-- quarantined) until the pole's next reading or the hold's end decides
-- (``TimePolicy.hold``); held_seq is the pole's seq, held_at its receipt.
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

# Columns added after a table's first release (added to older files on open).
_DEAD_LETTER_COLUMNS = {"payload_len": "INTEGER", "payload_sha256": "TEXT"}

_SEQ_SPACE_COLUMNS = {
    "held_seq": "INTEGER",
    "held_ts": "INTEGER",
    "held_at": "INTEGER",
    "held_stream": "TEXT",
    "held_frontage": "TEXT",
    "held_payload": "TEXT",
}
# Made after the columns it names (an older file has them only once added).
_HELD_INDEX = "seq_spaces_held"
_HELD_INDEX_SQL = (
    f"CREATE INDEX IF NOT EXISTS {_HELD_INDEX} ON seq_spaces (held_at)"
    " WHERE held_seq IS NOT NULL"
)

_DEVICE_COLUMNS = {
    "epoch": "TEXT",
    "clock_faults": "INTEGER NOT NULL DEFAULT 0",
    "clock_fault_at": "INTEGER",
    "clock_fault": "TEXT",
}


def _connect(path: Path) -> sqlite3.Connection:
    """Open (creating or upgrading) the store's file: WAL, ``synchronous=FULL``.

    Several processes may open a new file at once (ingest workers of one
    store): the schema is created and upgraded in one ``BEGIN IMMEDIATE``
    transaction, so each opener waits for the write lock and then finds what
    the one before it made; the columns are looked up inside it, never before
    (that race added a column twice: "duplicate column name"). A file whose
    schema is complete is opened without the write lock (a reader must not
    wait for ingest's commits).
    """
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    if _complete(db):
        return db
    try:
        # The script's own BEGIN: executescript() commits first, so it cannot run inside one.
        db.executescript("BEGIN IMMEDIATE;" + _SCHEMA)
        _add_columns(db, "devices", _DEVICE_COLUMNS)
        _add_columns(db, "dead_letters", _DEAD_LETTER_COLUMNS)
        _add_columns(db, "seq_spaces", _SEQ_SPACE_COLUMNS)
        db.execute(_HELD_INDEX_SQL)
        db.execute("COMMIT")
    except BaseException:
        _rollback(db)
        db.close()
        raise
    return db


# Every table and index _SCHEMA creates, and those it drops from older files.
_OBJECTS = frozenset(re.findall(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)", _SCHEMA))
_DROPPED = frozenset(re.findall(r"DROP INDEX IF EXISTS (\w+)", _SCHEMA))


def _complete(db: sqlite3.Connection) -> bool:
    """Whether the file already has every table, index and added column (read only)."""
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    if not names >= _OBJECTS | {_HELD_INDEX} or names & _DROPPED:
        return False
    added = (
        ("devices", _DEVICE_COLUMNS),
        ("dead_letters", _DEAD_LETTER_COLUMNS),
        ("seq_spaces", _SEQ_SPACE_COLUMNS),
    )
    for table, columns in added:
        if not columns.keys() <= {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
            return False
    return True


def _add_columns(db: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    """Add to ``table`` the ``columns`` it lacks (a file made by an older release)."""
    have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    for name, decl in columns.items():
        if name not in have:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")


class _Connected:
    """What the parts of the store share: one connection behind a lock."""

    path: Path
    dead_letter_prefix: int
    _db: sqlite3.Connection
    _lock: threading.Lock


def _rollback(db: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open.

    SQLite rolls back by itself on some errors (a full disk: SQLITE_FULL), and a
    ROLLBACK then fails with "cannot rollback - no transaction is active",
    which used to hide the real cause in a chained traceback.
    """
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def _filters(*pairs: tuple[str, object]) -> tuple[str, list[object]]:
    clauses = [sql for sql, value in pairs if value is not None]
    args = [value for _, value in pairs if value is not None]
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args
