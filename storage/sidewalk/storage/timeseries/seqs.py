"""Seq bookkeeping: devices, seq spaces (epochs), gaps, floors and the watermark."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from sidewalk.storage.timeseries.records import (
    BatchResult,
    DeviceState,
    SeqGap,
    SeqSpace,
    StatusUpdate,
)
from sidewalk.storage.timeseries.schema import _Connected, _filters


@dataclass(slots=True)
class _Space:
    base: int
    last_seq: int
    last_ts: int
    suspect: bool
    closed_at: int | None
    dirty: bool = False
    # The ts of the accepted reading before ``last_seq`` (None: not read yet).
    before_ts: int | None = None
    # A reading held for the pole's next one to judge (its own seq, ts, receipt).
    held_seq: int | None = None
    held_ts: int = 0
    held_at: int = 0

    def held(self, *, suspect: bool) -> None:
        if suspect != self.suspect:
            self.suspect, self.dirty = suspect, True

    def accepted(self, seq: int, ts: int) -> None:
        self.suspect, self.dirty = False, True
        if seq > self.last_seq:
            self.before_ts = self.last_ts if self.last_seq else None
            self.last_seq, self.last_ts = seq, ts


class _SeqBook(_Connected):
    """Per device state; the writer's half runs inside its transaction."""

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
            "SELECT base, last_seq, last_ts, suspect, closed_at, held_seq, held_ts, held_at"
            " FROM seq_spaces WHERE device = ? AND epoch = ?",
            (device, epoch),
        ).fetchone()
        if row is not None:
            base, last_seq, last_ts, suspect, closed_at, held_seq, held_ts, held_at = row
            return _Space(
                base, last_seq, last_ts, bool(suspect), closed_at,
                held_seq=held_seq, held_ts=held_ts or 0, held_at=held_at or 0,
            )  # fmt: skip
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
