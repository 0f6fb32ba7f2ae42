"""Evidence images on disk, content-addressed: the file's name is its sha256.

A notice cites a frame by the hash in its ``FrameRef``; the same bytes always
land in the same file, so a re-sent frame is harmless and a stored frame is
never overwritten. Files go to ``<root>/<first two hex digits>/<sha256>.jpg``
(fewer entries per directory) through a temporary file, fsync and an atomic
link, so a crash leaves either the whole image or nothing.

An index (``<root>/index.sqlite3``, opened on first use) records who sent each
image, its size and when, and whether a ``FrameRef`` is known to name it. It
is what the per-device daily quota (``bytes_since``) and the retention prune
(``sidewalk.storage.retention``) read. A file without a row (stored before the
index, or by ``put`` alone, as inspection photos are) is never pruned.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


_INDEX_SCHEMA = """
CREATE TABLE IF NOT EXISTS evidence (
    sha256      TEXT PRIMARY KEY,
    device      TEXT,
    bytes       INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    referenced  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS evidence_device_time ON evidence (device, received_at);
CREATE INDEX IF NOT EXISTS evidence_time ON evidence (received_at);
"""


@dataclass(frozen=True, slots=True)
class EvidenceEntry:
    """One stored image: its hash, sender, size, arrival and whether a FrameRef names it."""

    sha256: str
    device: str | None
    bytes: int
    received_at_ms: int
    referenced: bool


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class EvidenceStore:
    """Content-addressed JPEG files under one directory, with a small index."""

    INDEX = "index.sqlite3"

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _index(self) -> sqlite3.Connection:
        # Opened on first use: a reader (the dashboard) that only shows images
        # never creates it.
        if self._db is None:
            db = sqlite3.connect(
                self.root / self.INDEX, isolation_level=None, check_same_thread=False, timeout=30
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_INDEX_SCHEMA)
            self._db = db
        return self._db

    def close(self) -> None:
        """Close the index (the files need no closing)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def admit(self, body: bytes, device: str | None, *, now_ms: int | None = None) -> str:
        """``put`` the image and record it in the index (sender, size, arrival)."""
        sha = self.put(body)
        with self._lock:
            self._index().execute(
                "INSERT OR IGNORE INTO evidence (sha256, device, bytes, received_at)"
                " VALUES (?, ?, ?, ?)",
                (sha, device, len(body), _now_ms() if now_ms is None else now_ms),
            )
        return sha

    def bytes_since(self, device: str, since_ms: int) -> int:
        """Bytes of images ``device`` sent at or after ``since_ms`` (its quota's use)."""
        with self._lock:
            row = (
                self._index()
                .execute(
                    "SELECT COALESCE(SUM(bytes), 0) FROM evidence"
                    " WHERE device = ? AND received_at >= ?",
                    (device, since_ms),
                )
                .fetchone()
            )
        return int(row[0])

    def mark_referenced(self, sha256s: list[str]) -> None:
        """A ``FrameRef`` names these images: they are evidence, not strays."""
        if not sha256s:
            return
        with self._lock:
            self._index().executemany(
                "UPDATE evidence SET referenced = 1 WHERE sha256 = ?", [(s,) for s in sha256s]
            )

    def entry(self, sha256: str) -> EvidenceEntry | None:
        """The index row of an image (None: not indexed)."""
        with self._lock:
            row = (
                self._index()
                .execute(
                    "SELECT sha256, device, bytes, received_at, referenced FROM evidence"
                    " WHERE sha256 = ?",
                    (sha256,),
                )
                .fetchone()
            )
        return None if row is None else EvidenceEntry(row[0], row[1], row[2], row[3], bool(row[4]))

    def entries(self) -> list[EvidenceEntry]:
        """Every indexed image (what ingest admitted from a device).

        Files without a row (stored before the index, or by ``put`` alone, as
        inspection photos are) are not listed, so retention never touches them.
        """
        with self._lock:
            rows = (
                self._index()
                .execute("SELECT sha256, device, bytes, received_at, referenced FROM evidence")
                .fetchall()
            )
        return [EvidenceEntry(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows]

    def delete(self, sha256: str) -> None:
        """Remove an image and its index row (retention; never called for cited evidence)."""
        with contextlib.suppress(FileNotFoundError):
            self.path(sha256).unlink()
        with self._lock:
            self._index().execute("DELETE FROM evidence WHERE sha256 = ?", (sha256,))

    def prefix(self, sha256: str, n: int) -> bytes:
        """The first ``n`` bytes of an image (for a dead letter about it)."""
        with self.path(sha256).open("rb") as f:
            return f.read(n)

    def path(self, sha256: str) -> Path:
        """Where the image with this hash lives (whether or not it is there)."""
        if not _SHA256.match(sha256):
            raise ValueError(f"{sha256!r} is not a lowercase sha256 hex digest")
        return self.root / sha256[:2] / f"{sha256}.jpg"

    def put(self, body: bytes) -> str:
        """Store ``body`` durably under its sha256 (once) and return the hash."""
        sha = hashlib.sha256(body).hexdigest()
        target = self.path(sha)
        if target.exists():
            return sha
        target.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            # link, not rename: it fails instead of replacing an existing file,
            # which another writer of the same bytes may have made first.
            with contextlib.suppress(FileExistsError):
                os.link(tmp, target)
        finally:
            os.unlink(tmp)
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return sha

    def get(self, sha256: str) -> bytes:
        """The image's bytes; ``FileNotFoundError`` if it never arrived."""
        return self.path(sha256).read_bytes()

    def __contains__(self, sha256: object) -> bool:
        return (
            isinstance(sha256, str) and bool(_SHA256.match(sha256)) and self.path(sha256).exists()
        )
