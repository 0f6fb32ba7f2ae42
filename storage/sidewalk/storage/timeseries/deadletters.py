"""Dead letters and quarantine: messages kept (a bounded prefix) with their reason.

A reading with an implausible time is quarantined: its stored seq goes in
``quarantined`` (so it counts as received), its bytes become an
``implausible_time`` dead letter and its device's ``clock_faults`` count it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from sidewalk.core.contract import AnyReading, topic_for
from sidewalk.storage.timeseries.records import BatchResult, DeadLetter
from sidewalk.storage.timeseries.schema import _Connected, _filters


class _DeadLetters(_Connected):
    """Writing and reading dead letters (the writer's half runs in its transaction)."""

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

    def _check_conflict(self, r: AnyReading, seq: int, payload: str, now: int) -> bool:
        """Whether the re-sent copy differs from the stored one (then dead-lettered)."""
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
            return True
        return False

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


    def unknown_senders(self, start_ms: int, limit: int = 20) -> list[tuple[str, int, int]]:
        """Devices whose messages were refused as unknown since ``start_ms``:
        (device, messages, last received ms), the latest first, at most ``limit``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT device, COUNT(*), MAX(received_at) FROM dead_letters"
                " WHERE reason = 'unknown_device' AND received_at >= ? AND device IS NOT NULL"
                " GROUP BY device ORDER BY MAX(received_at) DESC LIMIT ?",
                (start_ms, limit),
            ).fetchall()
        return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]


def _topic(sites: Mapping[str, str], r: AnyReading) -> str:
    """The topic a reading came on, for its dead letter (the store is not told it)."""
    site = sites.get(r.device)
    return topic_for(site, r.device, r.stream) if site else f"(of {r.device}/{r.stream})"
