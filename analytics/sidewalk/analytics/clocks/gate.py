"""Analytics acts only on readings ingest would store: the same verdicts, reached alone.

Analytics and ingest are separate consumers of the broker stream and never
call each other, so analytics repeats ingest's two verdicts on each reading
before the clock engine sees it (``ReadingGate.admit``):

* **(device, epoch, seq)**: the first copy of a seq is the reading; a re-sent
  copy, or one whose content differs (ingest's ``seq_conflict``), is skipped.
  A new epoch of a device closes its earlier ones where they stood, as the
  store does: a later reading of a closed epoch beyond that is skipped too.
* **time**: ``TimePolicy.problem`` against the receive time, the pole's
  last accepted reading of the same epoch and, given a batch (``admit_many``),
  the pole's next reading in it, exactly as ingest's store judges it
  (``implausible_time``): such a reading is quarantined and moves no clock.

The seqs seen are kept as merged runs per seq space, a handful of pairs in the
engine's snapshot (saved with it, so a restart judges a re-delivered message
as before). At most ``MAX_RUNS`` runs are kept per space: past that the two
lowest merge, and a reading falling between them is taken as a duplicate
(ingest, which keeps every seq, would still store it: dozens of open gaps in
one pole's stream first).

Every reading skipped is counted by reason (``skipped``), in the snapshot too.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from sidewalk.core.contract import Reading, TimePolicy

MAX_RUNS = 64


@dataclass
class SeqSpaceSeen:
    """What analytics has seen of one ``(device, epoch)``."""

    # Sorted, disjoint, non-adjacent [lo, hi] runs of seqs seen.
    runs: list[list[int]] = field(default_factory=list)
    # The last accepted (not quarantined) reading: the stepped-back check's reference.
    last_seq: int = 0
    last_ts: int = 0
    # The accepted reading's before that (``TimePolicy``'s ``before_ts``; 0: none).
    before_ts: int = 0
    # The pole's clock stepped back and has not been seen right since (``TimePolicy``).
    suspect: bool = False
    # Set when a later epoch of the device began: its highest seq seen by then.
    closed_at: int | None = None

    def seen(self, seq: int) -> bool:
        i = bisect.bisect_right(self.runs, [seq, 2**63]) - 1
        return i >= 0 and self.runs[i][0] <= seq <= self.runs[i][1]

    def add(self, seq: int) -> None:
        runs = self.runs
        i = bisect.bisect_right(runs, [seq, 2**63])
        if i > 0 and runs[i - 1][1] >= seq - 1:
            runs[i - 1][1] = max(runs[i - 1][1], seq)
            i -= 1
        else:
            runs.insert(i, [seq, seq])
        if i + 1 < len(runs) and runs[i + 1][0] <= runs[i][1] + 1:
            runs[i][1] = max(runs[i][1], runs.pop(i + 1)[1])
        if len(runs) > MAX_RUNS:
            runs[0][1] = runs.pop(1)[1]


@dataclass
class GateState:
    """The gate's whole state (a field of the engine's snapshot)."""

    spaces: dict[str, SeqSpaceSeen] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)


class ReadingGate:
    """Decides, like ingest, whether a reading from the broker may reach the clocks."""

    def __init__(self, policy: TimePolicy | None = None) -> None:
        self.policy = policy
        self.state = GateState()

    def admit_many(self, readings: Sequence[Reading], received_ms: int) -> list[str | None]:
        """``admit`` each reading in order, each judged also by its pole's next
        reading in the list (ingest's store judges a batch so: ``TimePolicy``'s
        "out of line")."""
        after: list[int | None] = [None] * len(readings)
        later: dict[tuple[str, str | None], Reading] = {}
        for i in range(len(readings) - 1, -1, -1):
            r = readings[i]
            nxt = later.get((r.device, r.epoch))
            if nxt is not None and nxt.seq > r.seq:
                after[i] = nxt.ts
            later[(r.device, r.epoch)] = r
        return [self.admit(r, received_ms, next_ts=n) for r, n in zip(readings, after, strict=True)]

    def admit(self, reading: Reading, received_ms: int, next_ts: int | None = None) -> str | None:
        """None to pass ``reading`` on; else the reason it is skipped (and counted).

        ``next_ts``: the ``ts`` of the pole's next reading, when the caller holds it."""
        key = f"{reading.device}/{reading.epoch or ''}"
        space = self.state.spaces.get(key)
        if space is None:
            space = self.state.spaces[key] = self._begin(reading.device, reading.epoch)
        if space.seen(reading.seq):
            return self._skip("duplicate")
        if space.closed_at is not None and reading.seq > space.closed_at:
            return self._skip("seq_conflict")
        space.add(reading.seq)
        if self.policy is not None and (
            verdict := self.policy.problem(
                reading.seq,
                reading.ts,
                received_ms,
                space.last_seq,
                space.last_ts,
                suspect=space.suspect,
                next_ts=next_ts,
                before_ts=space.before_ts or None,
            )
        ):
            space.suspect = verdict[1]
            return self._skip("implausible_time")
        space.suspect = False
        if reading.seq > space.last_seq:
            space.before_ts = space.last_ts
            space.last_seq, space.last_ts = reading.seq, reading.ts
        return None

    def _begin(self, device: str, epoch: str | None) -> SeqSpaceSeen:
        if epoch:
            prefix = f"{device}/"
            for key, other in self.state.spaces.items():
                if key.startswith(prefix) and other.closed_at is None:
                    other.closed_at = other.runs[-1][1] if other.runs else 0
        return SeqSpaceSeen()

    def _skip(self, reason: str) -> str:
        self.state.skipped[reason] = self.state.skipped.get(reason, 0) + 1
        return reason
