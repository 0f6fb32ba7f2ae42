"""``SqliteTimeSeriesStore``: the writer's transaction and the readers' queries.

Seq bookkeeping, dead letters and export cursors are its parts in
``seqs``, ``deadletters`` and ``export``; the file's schema is in ``schema``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from sidewalk.core.contract import (
    AnyReading,
    FrameRef,
    SnowMeasurement,
    TimePolicy,
    WeatherReading,
)
from sidewalk.storage.timeseries.deadletters import _DeadLetters, _topic
from sidewalk.storage.timeseries.export import _Exports, _has_sinks
from sidewalk.storage.timeseries.records import (
    DEAD_LETTER_PREFIX,
    BatchResult,
    DeadLetter,
    SeqGap,
    StatusUpdate,
    _reading_from_json,
)
from sidewalk.storage.timeseries.schema import _connect, _filters, _rollback
from sidewalk.storage.timeseries.seqs import _SeqBook, _Space

# Readings rows go in flat lists, one per stream and per with or without a
# frontage: per row device, stored seq, ts, payload[, frontage]. received_at and
# stream are bound once per statement (``?1``, ``?2``), not once per row.
# Beyond any ts (``EventTimeMs`` ends in 2100): a time check that is off.
_NEVER = 1 << 62


def _time_bounds(policy: TimePolicy | None, now: int) -> tuple[bool, int, int, int]:
    """(always ask ``policy``, ceiling, floor, step): a reading of a space that is
    not suspect, with ``ts`` between ``floor`` and ``ceiling`` and within ``step``
    of its space's last ``ts`` either way, is one ``TimePolicy.problem`` always
    passes, so the per-reading loop asks it only about the others."""
    if policy is None:
        return False, _NEVER, -_NEVER, _NEVER
    ahead, back, behind = policy.max_ahead_ms, policy.max_step_back_ms, policy.max_behind_ms
    return (
        type(policy) is not TimePolicy,  # a subclass may judge otherwise: always ask it
        now + ahead if ahead is not None else _NEVER,
        now - behind if ahead is not None and behind is not None else -_NEVER,
        back if back is not None else _NEVER,
    )


def _next_ts(placed: list[_Placed]) -> list[int | None]:
    """Per reading, the ``ts`` of its seq space's next reading in the batch, if that
    one has a later seq (a re-sent older copy is no neighbour to judge by)."""
    out: list[int | None] = [None] * len(placed)
    later: dict[int, tuple[int, int]] = {}
    for i in range(len(placed) - 1, -1, -1):
        _, _, own_seq, ts, space, _, _ = placed[i]
        nxt = later.get(id(space))
        if nxt is not None and nxt[0] > own_seq:
            out[i] = nxt[1]
        later[id(space)] = (own_seq, ts)
    return out


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


# A reading placed in its seq space: the reading, its device, own seq and ts,
# the space, its stored seq (base + own) and its field dict.
_Placed = tuple[AnyReading, str, int, int, _Space, int, dict[str, Any]]


# Rows per multi-row INSERT: 502 bound values at most (SQLite allows 32,766).
_ROWS_PER_INSERT = 100

# Each reading model's pydantic-core serializer, called as ``Reading.to_json``
# calls it (the canonical JSON, stored as the payload) without that method's
# Python frame: 1,700 of the 10,800 instructions it costs per reading. Another
# class (a subclass) goes through ``to_json`` itself.
_TO_JSON = {
    cls: cls.__pydantic_serializer__.to_json for cls in (WeatherReading, SnowMeasurement, FrameRef)
}


@cache
def _insert_sql(frontage: bool, rows: int) -> str:
    """INSERT of ``rows`` rows: ``?1`` received_at and ``?2`` stream shared by all,
    then per row device, seq, ts, payload[, frontage] (the flat lists' order)."""
    width = 5 if frontage else 4
    values = []
    for i in range(rows):
        n = 3 + i * width
        f = f",?{n + 4}" if frontage else ""
        values.append(f"(?{n},?{n + 1},?2,?{n + 2},?1,?{n + 3}{f})")
    cols = "device, seq, stream, ts, received_at, payload" + (", frontage" if frontage else "")
    return f"INSERT OR IGNORE INTO readings ({cols}) VALUES " + ",".join(values)


class SqliteTimeSeriesStore(_SeqBook, _DeadLetters, _Exports):
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
        self._db = _connect(self.path)

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
                placed, low, conflicts, second = self._place(
                    readings, max_seq, spaces, sites=sites, now=now, result=result, touched=touched
                )
                if second and result.epochs_started:
                    # A space read before a later one of its device began in this
                    # batch may be closed now: place every reading again against it.
                    self._reload_closed(spaces)
                    placed, low, conflicts, _ = self._place(
                        readings, max_seq, spaces, sites=sites, now=now, result=result,
                        touched=touched,
                    )  # fmt: skip
                for letter in conflicts:
                    self._insert_dead_letter(letter)
                self._write_readings(
                    placed, low, max_seq, spaces=spaces, sites=sites, policy=time_policy, now=now,
                    result=result,
                )  # fmt: skip
                if result.stored and _has_sinks(db):
                    # The rows inserted, in the order received.
                    db.executemany(
                        "INSERT INTO export_log (device, seq) VALUES (?, ?)",
                        [(r.device, spaces[(r.device, r.epoch or "")].base + r.seq)
                         for r in result.stored],
                    )  # fmt: skip
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

    def _write_readings(  # noqa: PLR0912, PLR0915 (ingest's per-reading loop, its common case inlined)
        self,
        placed: list[_Placed],
        low: dict[str, list[int]],
        max_seq: dict[str, int],
        *,
        spaces: dict[tuple[str, str], _Space],
        sites: Mapping[str, str],
        policy: TimePolicy | None,
        now: int,
        result: BatchResult,
    ) -> None:
        """Store readings set-wise, with the outcome of storing them one by one in order.

        A reading's
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

        This is ingest's per-reading loop, so it reads the field dicts and
        inlines the common case (a new seq, a plausible time) of the checks.
        """
        existing = {dev: self._existing_seqs(dev, seqs) for dev, seqs in low.items()}
        # INSERT rows by stream, flat: without a frontage, and with one.
        plain: dict[str, list[Any]] = {}
        framed: dict[str, list[Any]] = {}
        gaps: list[tuple[str, int, int, int]] = []
        fills: dict[str, list[int]] = {}
        dups: list[tuple[AnyReading, int, str]] = []
        held: list[tuple[AnyReading, int, str, str]] = []
        # Stored seqs seen in this batch, kept only for a device with a seq at
        # or below its running maximum (``low``): only there can one repeat.
        seen: dict[str, set[int]] = {dev: set() for dev in low}
        stored = result.stored
        judge, ceiling, floor, step = _time_bounds(policy, now)
        to_json = _TO_JSON
        # The next reading of each one's space, for a reading out of line (built when first asked).
        after: list[int | None] | None = None
        for i, (r, dev, own_seq, ts, space, seq, fields) in enumerate(placed):
            top = max_seq[dev]
            if seq > top:
                if seq > top + 1:
                    gap = SeqGap(dev, top + 1, seq - 1, now, None)
                    gaps.append((dev, gap.from_seq, gap.to_seq, now))
                    result.gaps_opened.append(gap)
                max_seq[dev] = seq
            elif seq in seen[dev] or seq in existing[dev]:
                result.duplicates.append((dev, own_seq))
                dups.append((r, seq, r.to_json().decode()))
                continue
            else:
                fills.setdefault(dev, []).append(seq)
            if dev in seen:
                seen[dev].add(seq)
            if space.held_seq is not None and own_seq > space.held_seq and policy is not None:
                # The pole's next reading after one held: it decides that one first.
                self._settle_held(dev, fields["epoch"] or "", space, ts, policy, sites, result)
            if policy is not None and (
                judge
                or space.suspect
                or ts > ceiling
                or ts < floor
                or ts < space.last_ts - step
                or ts > space.last_ts + step
            ):
                # Outside the window no rule can object to: the policy decides.
                if after is None:
                    after = _next_ts(placed)
                before = space.before_ts
                if before is None and space.last_seq and ts < space.last_ts - step:
                    before = space.before_ts = self._before_ts(dev, space)
                verdict = policy.problem(
                    own_seq, ts, now, space.last_seq, space.last_ts, suspect=space.suspect,
                    next_ts=after[i], before_ts=before,
                )  # fmt: skip
                if verdict:
                    held.append((r, seq, r.to_json().decode(), verdict[0]))
                    space.held(suspect=verdict[1])
                    continue
                if (
                    after[i] is None
                    and space.held_seq is None
                    and policy.hold(own_seq, ts, now, space.last_seq, space.last_ts)
                ):
                    # Far ahead of its pole's run with nothing after it to judge it by.
                    self._hold(r, dev, fields, space, now, result)
                    continue
            if own_seq > space.last_seq:
                # ``space.accepted``, inlined for the common case: a call per reading.
                space.before_ts = space.last_ts if space.last_seq else None
                space.last_seq, space.last_ts, space.suspect, space.dirty = own_seq, ts, False, True
            elif space.suspect:
                space.accepted(own_seq, ts)
            dump = to_json.get(type(r))
            # A str: sqlite3 binds bytes through its adapter lookup (3,300 instructions).
            payload = (
                r.to_json() if dump is None else dump(r, by_alias=True, exclude_none=True)
            ).decode()
            frontage = fields.get("frontage")
            if frontage is None:
                out = plain.get(fields["stream"])
                if out is None:
                    out = plain[fields["stream"]] = []
                out += (dev, seq, ts, payload)
            else:
                out = framed.get(fields["stream"])
                if out is None:
                    out = framed[fields["stream"]] = []
                out += (dev, seq, ts, payload, frontage)
            stored.append(r)
        if policy is not None and policy.max_hold_ms is not None:
            self._expire_held(spaces, policy, sites, now, result)
        if held:
            self._quarantine(held, sites, now, result)
        if gaps:
            self._db.executemany(
                "INSERT INTO seq_gaps (device, from_seq, to_seq, detected_at) VALUES (?, ?, ?, ?)",
                gaps,
            )
        for stream, flat in plain.items():
            self._insert_rows(flat, stream, now, frontage=False)
        for stream, flat in framed.items():
            self._insert_rows(flat, stream, now, frontage=True)
        self._resent(dups, fills, now, result)

    def _hold(  # noqa: PLR0917 (the reading, its fields and space, as the loop has them)
        self,
        r: AnyReading,
        device: str,
        fields: dict[str, Any],
        space: _Space,
        now: int,
        result: BatchResult,
    ) -> None:
        """Keep a reading for its pole's next one to judge: in its seq space's row,
        committed with the batch (it is acknowledged), moving no clock."""
        space.held_seq, space.held_ts, space.held_at = fields["seq"], fields["ts"], now
        self._db.execute(
            "UPDATE seq_spaces SET held_seq = ?, held_ts = ?, held_at = ?, held_stream = ?,"
            " held_frontage = ?, held_payload = ? WHERE device = ? AND epoch = ?",
            (fields["seq"], fields["ts"], now, fields["stream"], fields.get("frontage"),
             r.to_json().decode(), device, fields["epoch"] or ""),
        )  # fmt: skip
        result.held.append(r)

    def _settle_held(  # noqa: PLR0917 (the held reading's space and its next reading)
        self,
        device: str,
        epoch: str,
        space: _Space,
        next_ts: int | None,
        policy: TimePolicy,
        sites: Mapping[str, str],
        result: BatchResult,
    ) -> None:
        """Decide a held reading: by its pole's next reading (``next_ts``), or, with
        none within the hold, by the time it arrived. Stored, it becomes the pole's
        reference; quarantined, it is an ``implausible_time`` dead letter."""
        seq, ts, at = space.held_seq or 0, space.held_ts, space.held_at
        if next_ts is None:
            verdict = policy.judge_expired(
                ts, at, space.last_seq, space.last_ts, suspect=space.suspect
            )
        else:
            decided, verdict = policy.judge_held(
                seq, ts, at, space.last_seq, space.last_ts, next_ts, suspect=space.suspect
            )
            if not decided:
                return
        stream, frontage, payload = self._db.execute(
            "SELECT held_stream, held_frontage, held_payload FROM seq_spaces"
            " WHERE device = ? AND epoch = ?",
            (device, epoch),
        ).fetchone()
        r = _reading_from_json(stream, payload)
        self._db.execute(
            "UPDATE seq_spaces SET held_seq = NULL, held_ts = NULL, held_at = NULL,"
            " held_stream = NULL, held_frontage = NULL, held_payload = NULL"
            " WHERE device = ? AND epoch = ?",
            (device, epoch),
        )
        space.held_seq = None
        if verdict:
            self._quarantine([(r, space.base + seq, payload, verdict[0])], sites, at, result)
            space.held(suspect=verdict[1])
            return
        self._db.execute(
            "INSERT OR IGNORE INTO readings (device, seq, stream, ts, received_at, payload,"
            " frontage) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (device, space.base + seq, stream, ts, at, payload, frontage),
        )
        space.accepted(seq, ts)
        result.stored.append(r)

    def _expire_held(
        self,
        spaces: dict[tuple[str, str], _Space],
        policy: TimePolicy,
        sites: Mapping[str, str],
        now: int,
        result: BatchResult,
    ) -> None:
        """Decide the held readings no next reading came to judge within the hold."""
        rows = self._db.execute(
            "SELECT device, epoch FROM seq_spaces WHERE held_seq IS NOT NULL AND held_at <= ?",
            (now - (policy.max_hold_ms or 0),),
        ).fetchall()
        for device, epoch in rows:
            space = spaces.get((device, epoch))
            if space is None:
                space = spaces[(device, epoch)] = self._space(device, epoch, now, result)
            if space.held_seq is not None:
                self._settle_held(device, epoch, space, None, policy, sites, result)

    def _before_ts(self, device: str, space: _Space) -> int | None:
        """The ts of the stored reading before the space's last accepted one."""
        row = self._db.execute(
            "SELECT ts FROM readings WHERE device = ? AND seq > ? AND seq < ?"
            " ORDER BY seq DESC LIMIT 1",
            (device, space.base, space.base + space.last_seq),
        ).fetchone()
        return None if row is None else int(row[0])

    def _resent(
        self,
        dups: list[tuple[AnyReading, int, str]],
        fills: dict[str, list[int]],
        now: int,
        result: BatchResult,
    ) -> None:
        """Re-sent copies: those that differ from the stored one are conflicts (dead
        letters), not duplicates; fill gaps."""
        differ = [self._check_conflict(r, seq, payload, now) for r, seq, payload in dups]
        if any(differ):
            # ``dups`` are the last of ``result.duplicates``, in the same order.
            first = len(result.duplicates) - len(dups)
            mine = result.duplicates[first:]
            result.conflicts += [d for d, c in zip(mine, differ, strict=True) if c]
            result.duplicates[first:] = [d for d, c in zip(mine, differ, strict=True) if not c]
        for dev, seqs in fills.items():
            self._fill(dev, seqs)

    def _place(
        self,
        readings: Sequence[AnyReading],
        max_seq: dict[str, int],
        spaces: dict[tuple[str, str], _Space],
        *,
        sites: Mapping[str, str],
        now: int,
        result: BatchResult,
        touched: set[str],
    ) -> tuple[list[_Placed], dict[str, list[int]], list[DeadLetter], bool]:
        """Each reading with its space and stored seq; per device, the seqs not above
        its running top; the ``seq_conflict`` dead letters of closed spaces; and
        whether a device has a second space in the batch (then one begun here
        may have closed one read before it: read them again, place again).

        Registers each device (``max_seq``: its top before the batch) and reads
        or begins each seq space the first time a reading names it. Each
        reading's fields are read here once, into its ``_Placed`` (an attribute
        read on a pydantic model costs several dict lookups).
        """
        low: dict[str, list[int]] = {}
        top = dict(max_seq)
        placed: list[_Placed] = []
        add = placed.append
        conflicts: list[DeadLetter] = []
        second = False
        for r in readings:
            fields = r.__dict__
            dev, own, epoch = fields["device"], fields["seq"], fields["epoch"] or ""
            space = spaces.get((dev, epoch))
            if space is None:
                if dev not in max_seq:
                    # A space begun here does not move the device's max_seq.
                    max_seq[dev] = top[dev] = self._ensure_device(dev, sites.get(dev), now)
                    touched.add(dev)
                else:
                    second = True
                space = spaces[(dev, epoch)] = self._space(dev, epoch, now, result)
            if space.closed_at is not None and own > space.closed_at:
                conflicts.append(
                    DeadLetter(now, _topic(sites, r), dev, r.to_json(), "seq_conflict",
                               f"seq {own} of epoch {epoch or '(none)'}, which a later epoch"
                               f" replaced after its seq {space.closed_at}")
                )  # fmt: skip
                continue
            seq = space.base + own
            add((r, dev, own, fields["ts"], space, seq, fields))
            if seq > top[dev]:
                top[dev] = seq
            else:
                low.setdefault(dev, []).append(seq)
        return placed, low, conflicts, second

    def _existing_seqs(self, device: str, seqs: list[int]) -> set[int]:
        """Which of ``seqs`` the store already holds for ``device`` (stored, quarantined
        or held for its pole's next reading)."""
        found: set[int] = set()
        wanted = sorted(set(seqs))
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self._db.execute(
                    f"SELECT seq FROM readings WHERE device = ? AND seq IN ({marks})"
                    f" UNION ALL SELECT seq FROM quarantined WHERE device = ? AND seq IN ({marks})"
                    " UNION ALL SELECT base + held_seq FROM seq_spaces"
                    " WHERE device = ? AND held_seq IS NOT NULL",
                    (device, *chunk, device, *chunk, device),
                )
            )
        return found

    def _insert_rows(self, flat: list[Any], stream: str, now: int, *, frontage: bool) -> None:
        """INSERT the flat rows of one stream ``_ROWS_PER_INSERT`` to a statement.

        One statement of many rows opens the table's and indexes' cursors once
        and releases the GIL once; ``executemany`` does both per row, and each
        release can hand the GIL to ingest's receiving thread for up to a
        switch interval (5 ms) while the writer waits to take it back. The
        rest (fewer than ``_ROWS_PER_INSERT``) goes one row to a statement: a
        statement per remainder size would crowd sqlite3's statement cache.
        """
        db, width = self._db, 5 if frontage else 4
        step = _ROWS_PER_INSERT * width
        full = len(flat) - len(flat) % step
        if full:
            many = _insert_sql(frontage, _ROWS_PER_INSERT)
            for i in range(0, full, step):
                db.execute(many, [now, stream, *flat[i : i + step]])
        if full < len(flat):
            db.executemany(
                _insert_sql(frontage, 1),
                [(now, stream, *flat[i : i + width]) for i in range(full, len(flat), width)],
            )

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
        if readings_before_ms is not None:
            # Device by device, on (device, ts): readings has no (stream, ts) index
            # (one fewer b-tree for ingest to keep per reading).
            with self._lock:
                devices = [row[0] for row in self._db.execute("SELECT device FROM devices")]
            for device in devices:
                with self._lock:
                    # A read first: a device with nothing that old costs no transaction.
                    old = self._db.execute(
                        "SELECT 1 FROM readings WHERE device = ? AND ts < ? LIMIT 1",
                        (device, readings_before_ms),
                    ).fetchone()
                if old is not None:
                    counts["readings"] += self._delete_chunks(
                        "DELETE FROM readings WHERE (device, seq) IN (SELECT device, seq"
                        " FROM readings WHERE device = ? AND ts < ? LIMIT 5000)",
                        (device, readings_before_ms),
                    )
        if dead_letters_before_ms is not None:
            counts["dead_letters"] = self._delete_chunks(
                "DELETE FROM dead_letters WHERE id IN (SELECT id FROM dead_letters"
                " WHERE received_at < ? LIMIT 5000)",
                (dead_letters_before_ms,),
            )
        return counts

    def _delete_chunks(self, sql: str, args: tuple[object, ...]) -> int:
        """Run a ``DELETE … LIMIT 5000`` until it deletes fewer; one transaction each."""
        total = 0
        while True:
            with self._lock:
                db = self._db
                db.execute("BEGIN IMMEDIATE")
                try:
                    cur = db.execute(sql, args)
                    db.execute("COMMIT")
                except BaseException:
                    _rollback(db)
                    raise
            total += cur.rowcount
            if cur.rowcount < 5000:
                return total
