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
* **held** (``admit_batch``, the live runner's path): a reading far ahead of its
  pole's run with no next reading in its batch to judge it by waits, as ingest's
  store holds it (``TimePolicy.hold``), until the pole's next reading decides
  (``TimePolicy.judge_held``) or ``TimePolicy.max_hold_ms`` passes with none
  (``expire``, ``TimePolicy.judge_expired``). A held reading moves no clock; it
  is kept in its seq space (``SeqSpaceSeen.held``, saved in the engine's
  snapshot, so a restart loses none), and a re-delivered copy is a duplicate.

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
from typing import Annotated, Final, Literal

from pydantic import Field

from sidewalk.core.contract import STREAM_MODELS, Reading, TimePolicy, span_words

MAX_RUNS = 64

Outcome = Literal["admitted", "held", "duplicate", "seq_conflict", "implausible_time"]
ADMITTED: Final = "admitted"
HELD: Final = "held"


# Each reading model's stream name (the models' ``stream`` literal, which ``Reading`` lacks).
_STREAM_OF = {model: name for name, model in STREAM_MODELS.items()}


def _is_none(value: object) -> bool:
    return value is None


@dataclass
class HeldReading:
    """A reading the gate holds for its pole's next one (``TimePolicy.hold``)."""

    seq: int
    ts: int
    # The time it arrived (epoch ms): what ``judge_held`` and ``judge_expired`` judge by.
    received_ms: int
    stream: str
    # The reading's canonical JSON (``Reading.to_json``), to hand on once it stands.
    payload: str

    def reading(self) -> Reading:
        model = STREAM_MODELS[self.stream]
        reading = model.model_validate_json(self.payload)
        assert isinstance(reading, Reading)
        return reading


@dataclass
class Verdict:
    """What the gate made of one reading of a batch (``admit_batch``)."""

    reading: Reading
    outcome: Outcome
    # The time policy's reason in words, for ``implausible_time`` and ``held``.
    detail: str | None = None
    # When the reading arrived (epoch ms); a held one decided later keeps its own.
    received_ms: int = 0


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
    # A reading held for the pole's next one (``admit_batch``); left out of the
    # snapshot when none, so older snapshots and those without one read as before.
    held: Annotated[HeldReading | None, Field(exclude_if=_is_none)] = None

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
        "out of line"). Holds nothing: a reading it cannot judge it takes."""
        after = _next_ts(readings)
        return [self.admit(r, received_ms, next_ts=n) for r, n in zip(readings, after, strict=True)]

    def admit_batch(self, readings: Sequence[Reading], received_ms: int) -> list[Verdict]:
        """Judge a batch as ingest's store does, holding as it holds.

        Each reading is judged with its pole's next one in the batch; one far
        ahead of its pole's run with none after it, and not stamped within
        ``max_step_back_ms`` of the time it arrived, is held (``HELD``) until the
        pole's next reading, in a later batch, decides it (``judge_held``): the
        held one's verdict comes just before that reading's, so the engine sees
        the pole's readings in order. Holds older than ``max_hold_ms`` at
        ``received_ms`` are decided first (``expire``). Every verdict, in order,
        the released and quarantined held ones included; the engine is to see
        the ``ADMITTED`` ones."""
        out = self.expire(received_ms)
        after = _next_ts(readings)
        for reading, next_ts in zip(readings, after, strict=True):
            out += self._judge(reading, received_ms, next_ts, hold=True)
        return out

    def expire(self, now_ms: int) -> list[Verdict]:
        """Decide every held reading no next reading came to judge within
        ``max_hold_ms`` of its arrival (``TimePolicy.judge_expired``)."""
        policy = self.policy
        if policy is None or policy.max_hold_ms is None:
            return []
        out: list[Verdict] = []
        for space in self.state.spaces.values():
            if space.held is not None and space.held.received_ms <= now_ms - policy.max_hold_ms:
                out += self._settle(space, None)
        return out

    def held(self) -> list[HeldReading]:
        """The readings held now, for their poles' next ones."""
        return [s.held for s in self.state.spaces.values() if s.held is not None]

    def admit(self, reading: Reading, received_ms: int, next_ts: int | None = None) -> str | None:
        """None to pass ``reading`` on; else the reason it is skipped (and counted).

        ``next_ts``: the ``ts`` of the pole's next reading, when the caller holds it.
        Holds nothing (``admit_batch`` does)."""
        [verdict] = self._judge(reading, received_ms, next_ts, hold=False)
        return None if verdict.outcome == ADMITTED else verdict.outcome

    def _judge(
        self, reading: Reading, received_ms: int, next_ts: int | None, *, hold: bool
    ) -> list[Verdict]:
        """The reading's verdict, preceded by its held predecessor's when it decides one."""
        key = f"{reading.device}/{reading.epoch or ''}"
        space = self.state.spaces.get(key)
        if space is None:
            space = self.state.spaces[key] = self._begin(reading.device, reading.epoch)
        if space.seen(reading.seq):
            return [Verdict(reading, self._skip("duplicate"), received_ms=received_ms)]
        if space.closed_at is not None and reading.seq > space.closed_at:
            return [Verdict(reading, self._skip("seq_conflict"), received_ms=received_ms)]
        space.add(reading.seq)
        out: list[Verdict] = []
        if space.held is not None and reading.seq > space.held.seq:
            # The pole's next reading after one held: it decides that one first.
            out += self._settle(space, reading.ts)
        policy = self.policy
        if policy is not None and (
            verdict := policy.problem(
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
            out.append(Verdict(reading, "implausible_time", verdict[0], received_ms))
            self._skip("implausible_time")
            return out
        if (
            hold
            and policy is not None
            and next_ts is None
            and space.held is None
            and policy.hold(reading.seq, reading.ts, received_ms, space.last_seq, space.last_ts)
        ):
            # Far ahead of its pole's run with nothing after it to judge it by.
            space.held = HeldReading(
                reading.seq,
                reading.ts,
                received_ms,
                _STREAM_OF[type(reading)],
                reading.to_json().decode(),
            )
            detail = (
                f"stamped {span_words(reading.ts - space.last_ts)} ahead of the pole's previous"
                f" reading (seq {space.last_seq}); held for the pole's next reading, at most"
                f" {span_words(policy.max_hold_ms or 0)}"
            )
            out.append(Verdict(reading, HELD, detail, received_ms))
            return out
        self._accepted(space, reading.seq, reading.ts)
        out.append(Verdict(reading, ADMITTED, received_ms=received_ms))
        return out

    def _settle(self, space: SeqSpaceSeen, next_ts: int | None) -> list[Verdict]:
        """Decide the space's held reading by its pole's next reading (``next_ts``)
        or, with none within the hold, by the time it arrived; nothing while the
        next one is stepped back from both (that one is judged first)."""
        held, policy = space.held, self.policy
        if held is None or policy is None:
            return []
        if next_ts is None:
            verdict = policy.judge_expired(
                held.ts, held.received_ms, space.last_seq, space.last_ts, suspect=space.suspect
            )
        else:
            decided, verdict = policy.judge_held(
                held.seq, held.ts, held.received_ms, space.last_seq, space.last_ts, next_ts,
                suspect=space.suspect,
            )  # fmt: skip
            if not decided:
                return []
        space.held = None
        reading = held.reading()
        if verdict:
            space.suspect = verdict[1]
            self._skip("implausible_time")
            return [Verdict(reading, "implausible_time", verdict[0], held.received_ms)]
        self._accepted(space, held.seq, held.ts)
        return [Verdict(reading, ADMITTED, received_ms=held.received_ms)]

    @staticmethod
    def _accepted(space: SeqSpaceSeen, seq: int, ts: int) -> None:
        space.suspect = False
        if seq > space.last_seq:
            space.before_ts = space.last_ts
            space.last_seq, space.last_ts = seq, ts

    def _begin(self, device: str, epoch: str | None) -> SeqSpaceSeen:
        if epoch:
            prefix = f"{device}/"
            for key, other in self.state.spaces.items():
                if key.startswith(prefix) and other.closed_at is None:
                    other.closed_at = other.runs[-1][1] if other.runs else 0
        return SeqSpaceSeen()

    def _skip(self, reason: Outcome) -> Outcome:
        self.state.skipped[reason] = self.state.skipped.get(reason, 0) + 1
        return reason


def _next_ts(readings: Sequence[Reading]) -> list[int | None]:
    """For each reading, the ``ts`` of its pole's next (newer) reading in the list."""
    after: list[int | None] = [None] * len(readings)
    later: dict[tuple[str, str | None], Reading] = {}
    for i in range(len(readings) - 1, -1, -1):
        r = readings[i]
        nxt = later.get((r.device, r.epoch))
        if nxt is not None and nxt.seq > r.seq:
            after[i] = nxt.ts
        later[(r.device, r.epoch)] = r
    return after
