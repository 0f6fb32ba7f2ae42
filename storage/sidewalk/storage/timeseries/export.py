"""Export to secondary views (InfluxDB): the log of stored readings and sink cursors.

``write_batch`` appends each newly stored reading to ``export_log`` in its
transaction while a sink is registered; each sink keeps a durable cursor in
``export_cursors`` and the log is pruned below the lowest of them.
"""

from __future__ import annotations

import sqlite3

from sidewalk.storage.timeseries.records import ExportBatch, _reading_from_json
from sidewalk.storage.timeseries.schema import _Connected


class _Exports(_Connected):
    """Export cursors of the registered sinks."""

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
