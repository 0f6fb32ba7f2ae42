"""Store-and-forward on the device's disk.

Every reading gets the device's next ``seq`` in the same SQLite transaction
that stores it (WAL, ``synchronous=FULL``), so seqs stay monotonic across
restarts, power cuts and ``kill -9``, and a reading whose ``append`` returned
is on disk. A reading stays until the server's retained "stored up to"
watermark passes it (``release_through``). The buffer is bounded: when full,
the oldest readings go, and ``dropped`` counts them; the publisher reports the
resulting floor so the server can record them as lost instead of waiting.

The seq state has an identity, its ``epoch``: a random id created with it (a
new or re-imaged pole, an empty disk) and carried in every reading. The server
keys readings by ``(device, epoch, seq)`` and echoes the epoch in its
watermark, and the publisher frees readings only by a watermark of its own
epoch: a re-imaged pole that boots offline restarts at seq 1, and the old
pole's retained watermark must never free those new readings unsent.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidewalk.core.contract import READING_STREAMS, STREAM_MODELS, AnyReading

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pending (
    seq     INTEGER PRIMARY KEY,
    stream  TEXT NOT NULL,
    payload BLOB NOT NULL
);
INSERT OR IGNORE INTO meta VALUES ('next_seq', 1), ('dropped', 0);
CREATE TABLE IF NOT EXISTS identity (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class BufferedReading:
    """A reading waiting for the server's watermark, as the bytes to publish."""

    seq: int
    stream: str
    payload: bytes


class ReadingBuffer:
    """The on-disk queue of one device's readings. Thread-safe."""

    def __init__(self, path: str | Path, device: str, *, max_rows: int = 1_000_000) -> None:
        if max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        self.path = Path(path)
        self.device = device
        self.max_rows = max_rows
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        self._rows = int(self._db.execute("SELECT COUNT(*) FROM pending").fetchone()[0])
        self.epoch = self._epoch()

    def _epoch(self) -> str | None:
        """This seq state's epoch; created with it (before its first seq is used).

        A buffer written by software without epochs (a seq already used, no
        epoch) keeps its one epoch-less seq space, which the server knows as
        ``''``: giving it an epoch now would split a running seq space in two.
        """
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT value FROM identity WHERE key = 'epoch'").fetchone()
                if row is None and self._meta("next_seq") == 1:
                    row = (secrets.token_hex(8),)
                    db.execute("INSERT INTO identity VALUES ('epoch', ?)", row)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return None if row is None else str(row[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def _meta(self, key: str) -> int:
        return int(self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])

    def append(self, stream: str, ts_ms: int, values: Mapping[str, Any]) -> AnyReading:
        """Validate a reading, give it the next seq and store it durably.

        ``values`` are the stream's measurement fields (``air_temp_c``,
        ``frontage``, ``cleared_width_mm``, …) without ``device``/``seq``/``ts``.
        Raises ``pydantic.ValidationError`` (a ``ValueError``) for a reading
        that breaks the contract; no seq is used up by it.
        """
        if stream not in READING_STREAMS:
            raise ValueError(f"{stream!r} is not a reading stream ({', '.join(READING_STREAMS)})")
        reserved = {"device", "seq", "ts", "schema", "stream", "epoch"} & set(values)
        if reserved:
            raise ValueError(f"values may not set {sorted(reserved)}; the buffer assigns them")
        model = STREAM_MODELS[stream]
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                seq = self._meta("next_seq")
                fields = {**values, "device": self.device, "seq": seq, "ts": ts_ms}
                if self.epoch is not None:
                    fields["epoch"] = self.epoch
                reading = model.model_validate(fields)
                db.execute(
                    "INSERT INTO pending (seq, stream, payload) VALUES (?, ?, ?)",
                    (seq, stream, reading.to_json()),
                )
                db.execute("UPDATE meta SET value = ? WHERE key = 'next_seq'", (seq + 1,))
                excess = self._rows + 1 - self.max_rows
                if excess > 0:
                    db.execute(
                        "DELETE FROM pending WHERE seq IN"
                        " (SELECT seq FROM pending ORDER BY seq LIMIT ?)",
                        (excess,),
                    )
                    db.execute("UPDATE meta SET value = value + ? WHERE key = 'dropped'", (excess,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._rows += 1 - max(excess, 0)
        assert isinstance(reading, AnyReading)
        return reading

    def after(self, seq: int, limit: int = 500) -> list[BufferedReading]:
        """Buffered readings with a seq above ``seq``, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, stream, payload FROM pending WHERE seq > ? ORDER BY seq LIMIT ?",
                (seq, limit),
            ).fetchall()
        return [BufferedReading(int(s), str(st), bytes(p)) for s, st, p in rows]

    def release_through(self, seq: int) -> int:
        """The server stored everything up to ``seq``: forget it. Returns rows freed.

        ``seq`` must come from a watermark of this buffer's ``epoch`` (the
        publisher checks). Also moves the seq counter past ``seq``, so a device whose disk was
        replaced never re-uses a seq the server already holds.
        """
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                freed = db.execute("DELETE FROM pending WHERE seq <= ?", (seq,)).rowcount
                db.execute(
                    "UPDATE meta SET value = MAX(value, ?) WHERE key = 'next_seq'", (seq + 1,)
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._rows -= freed
        return int(freed)

    @property
    def next_seq(self) -> int:
        """The seq the next appended reading will get."""
        with self._lock:
            return self._meta("next_seq")

    @property
    def floor(self) -> int:
        """The lowest seq still held, or ``next_seq`` when empty.

        Anything below it is either stored on the server or dropped for good.
        """
        with self._lock:
            row = self._db.execute("SELECT MIN(seq) FROM pending").fetchone()
            return int(row[0]) if row[0] is not None else self._meta("next_seq")

    @property
    def dropped(self) -> int:
        """How many readings the bound has discarded unsent, ever."""
        with self._lock:
            return self._meta("dropped")

    def __len__(self) -> int:
        with self._lock:
            return self._rows
