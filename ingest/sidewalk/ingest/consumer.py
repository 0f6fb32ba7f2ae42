"""The ingest consumer: MQTT → validation → SQLite, acknowledging only what is durable.

paho's network thread validates the messages of each socket read and queues
them, with their verdicts, as one list (one hand-over per read, not per message).
One writer thread takes batches (up to ``batch_size`` messages or
``batch_wait_s`` after the first; with a backlog already queued, up to
``BACKLOG_BATCH_FACTOR`` times as many), writes readings, statuses and dead
letters in one transaction, and only then
acknowledges every message of the batch. After each commit it publishes, per
device, the retained "stored up to" watermark that lets the device free its
buffer. A crash before the commit loses nothing: the unacknowledged messages
come again and the store drops duplicates by ``(device, epoch, seq)``.

Limits: a payload over ``limits`` for its stream is a ``too_large`` dead letter
(never parsed); an evidence JPEG over its device's ``evidence_quota_bytes``
for the last 24 hours an ``evidence_quota`` one. Below the ``space`` floor
(``sidewalk.storage.space``) nothing is written or acknowledged: messages wait
at the broker, ``write_problem`` says why (``/readyz``), and the log says it in
one line, repeated at most once a minute. A failing write is named the same
way (disk full, database locked).

Time: each batch is judged with ``time_policy`` against its receive time (the
commit's clock): a reading stamped implausibly ahead of it, or older than its
pole's last accepted reading while its seq is newer, is quarantined by the
store as an ``implausible_time`` dead letter and counted (``quarantined``).
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import logging
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sidewalk.core.contract import (
    MAX_DETAIL_CHARS,
    AnyReading,
    FrameRef,
    Reading,
    StoredWatermark,
    TimePolicy,
    stamp_words,
    subscription,
    topic_for,
)
from sidewalk.core.mqtt import MqttClient, MqttMessage, MqttSettings
from sidewalk.ingest.fair import fair_share
from sidewalk.ingest.known import KnownDevices, unknown_device_detail
from sidewalk.ingest.loglimit import DeadLetterLog
from sidewalk.ingest.validate import (
    Accepted,
    Availability,
    Evidence,
    Ignored,
    Judged,
    Rejected,
    SizeLimits,
    Verdict,
    judge_many,
    shed_bodies,
)
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.space import FreeSpaceFloor
from sidewalk.storage.timeseries import (
    BatchResult,
    DeadLetter,
    StatusUpdate,
    TimeSeriesStore,
)

log = logging.getLogger(__name__)


class ReadingSink(Protocol):
    """A secondary store fed after the SQLite commit (the InfluxDB writer)."""

    def write(self, readings: Sequence[Reading]) -> None:
        """Write readings; may buffer and retry on its own."""
        ...


@dataclass(slots=True)
class IngestStats:
    """Counters since start (read them from any thread; they only grow)."""

    received: int = 0
    stored: int = 0
    duplicates: int = 0
    dead_letters: int = 0
    statuses: int = 0
    gaps_opened: int = 0
    batches: int = 0
    # Readings held as implausible_time dead letters (also in dead_letters).
    quarantined: int = 0
    # Seq spaces begun (a new or re-imaged pole's epoch).
    epochs_started: int = 0
    # Dead letters for size (too_large) and evidence quota (evidence_quota).
    too_large: int = 0
    over_quota: int = 0
    # Messages from a device the registry does not know (unknown_device dead letters).
    unknown_device: int = 0
    # Re-sent copies whose content differs from the stored reading (seq_conflict
    # dead letters, also in dead_letters; not in duplicates).
    conflicts: int = 0
    # Readings held for their pole's next reading to judge (``TimePolicy.hold``);
    # each is later counted in stored or quarantined.
    held: int = 0


# Ten minutes either way (``TimePolicy``'s defaults); ``None`` judges no times.
DEFAULT_TIME_POLICY = TimePolicy()

# With a backlog queued, a batch takes up to this many times ``batch_size``.
BACKLOG_BATCH_FACTOR = 10
# Generation 0's allocation count between the collector's passes in an ingest
# process (``settle_heap(young_threshold=…)``). A backlog batch is 5,000 readings
# of about five tracked objects each, alive until its commit: at 20,000 every
# pass walked most of a batch alive and moved it to the older generations (2,750
# instructions a reading draining); at 200,000 a batch has mostly died by
# reference count when a pass comes. Cycles are still collected, less often.
HEAP_YOUNG_THRESHOLD = 200_000
# ``IngestConsumer._full_at`` while the writer is not waiting for a batch to fill.
_NOT_WAITING = 1 << 62
# The same write problem is logged at most once per this many seconds.
STALL_LOG_EVERY_S = 60.0
DAY_MS = 86_400_000


class _QuotaTally(dict[str, int]):
    """Evidence bytes charged per device in one batch, and the images admitted."""

    def __init__(self) -> None:
        super().__init__()
        self.shas: set[str] = set()


@dataclass(slots=True)
class _Arrival:
    """When a list of messages arrived (monotonic), and how many of it are not done."""

    at: float
    left: int


# Messages of one socket read with their verdicts, in the same order.
_Chunk = tuple[list[MqttMessage], list[Judged]]


@dataclass(slots=True)
class _Sorted:
    """One batch sorted for its transaction."""

    readings: list[AnyReading] = field(default_factory=list)
    statuses: list[StatusUpdate] = field(default_factory=list)
    dead: list[DeadLetter] = field(default_factory=list)
    sites: dict[str, str] = field(default_factory=dict)
    frames: list[tuple[str, bytes]] = field(default_factory=list)


def write_failure_cause(exc: BaseException) -> str:
    """One line naming why a write failed: disk full, database locked, or the error itself.

    Looks through the exception's chain, where the real cause used to hide
    behind "cannot rollback - no transaction is active".
    """
    seen: BaseException | None = exc
    chain: list[BaseException] = []
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for e in chain:
        text = str(e).lower()
        if isinstance(e, OSError) and e.errno in {errno.ENOSPC, errno.EDQUOT}:
            return f"disk full ({e.strerror or e})"
        if isinstance(e, sqlite3.Error) and ("disk is full" in text or "database or disk" in text):
            return "disk full (SQLite: database or disk is full)"
        if isinstance(e, sqlite3.Error) and "locked" in text:
            return f"database locked (SQLite: {e})"
        if isinstance(e, sqlite3.Error) and "readonly" in text.replace("-", ""):
            return f"database read-only (SQLite: {e})"
    return f"{type(exc).__name__}: {exc}"[:MAX_DETAIL_CHARS]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class IngestConsumer:
    """Consumes ``sidewalk/v1/<site>/+/+`` into a ``TimeSeriesStore``.

    ``shared_group`` subscribes through ``$share/<group>/…`` so several
    workers split the stream (each needs its own ``client_id``).
    """

    def __init__(
        self,
        store: TimeSeriesStore,
        mqtt: MqttSettings,
        *,
        site: str = "+",
        shared_group: str | None = None,
        batch_size: int = 500,
        batch_wait_s: float = 0.05,
        influx: ReadingSink | None = None,
        on_stored: Callable[[Sequence[AnyReading]], None] | None = None,
        write_retry_s: float = 1.0,
        evidence: EvidenceStore | None = None,
        time_policy: TimePolicy | None = DEFAULT_TIME_POLICY,
        now_ms: Callable[[], int] | None = None,
        limits: SizeLimits | None = None,
        evidence_quota_bytes: int | None = None,
        space: FreeSpaceFloor | None = None,
        known_devices: KnownDevices | None = None,
    ) -> None:
        """``known_devices``: accept only the registry's poles (``known``); ``None``
        accepts any device (tests and replays that register nothing)."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.store = store
        self.stats = IngestStats()
        self._topic = subscription(site)
        if shared_group is not None:
            self._topic = f"$share/{shared_group}/{self._topic}"
        # A broker that deals a shared subscription out message by message
        # (Mosquitto) hands each worker every other seq of a device: the gaps
        # it opens are the other worker's and close when that one commits.
        # They are still recorded; only a warning per gap would flood the log.
        self._gap_log_level = logging.WARNING if shared_group is None else logging.DEBUG
        self._batch_size = batch_size
        self._max_batch = BACKLOG_BATCH_FACTOR * batch_size
        self._batch_wait_s = batch_wait_s
        self._influx = influx
        self._evidence = evidence
        self._on_stored = on_stored
        self._write_retry_s = write_retry_s
        self._time_policy = time_policy
        # When ``_settle_held`` last looked for holds that ran out (monotonic s).
        self._hold_checked = time.monotonic()
        # The receive time readings are judged against (injectable for tests).
        self._now_ms = now_ms or _now_ms
        self._limits = limits or SizeLimits()
        # Bytes of evidence per device per 24 hours (None: no quota).
        self._evidence_quota = evidence_quota_bytes
        self._space = space
        self._known = known_devices
        # The first dead letter of each reason per minute in the log, then counts.
        self._dead_log = DeadLetterLog(log)
        # Why the writer is not committing right now (None: it is).
        self.write_problem: str | None = None
        self._stall_logged: tuple[str, float, int] | None = None
        # Each socket read's messages with their verdicts: paho's thread validates
        # on receipt, so validation runs while the writer waits on the fsync
        # (the GIL is free then).
        self._queue: queue.SimpleQueue[_Chunk] = queue.SimpleQueue()
        # What a batch could not take of the last list (the batch was full).
        self._carry: _Chunk | None = None
        if mqtt.receive_maximum < batch_size:
            # A window smaller than the batch would make every batch wait for
            # the timer: the broker stops sending until we ack.
            mqtt = dataclasses.replace(mqtt, receive_maximum=min(65535, 2 * batch_size))
        # Arrival times of the received, not yet committed messages, per list,
        # oldest first: paho's thread appends, the writer takes off what it finished.
        self._arrivals: deque[_Arrival] = deque()
        # Messages received, and finished (committed or given back); each
        # counter has one writing thread.
        self._received_n = 0
        self._finished_n = 0
        # Messages put on the queue (paho's thread) and taken into batches (the
        # writer). A writer waiting for a batch to fill sleeps until the queue
        # holds ``_full_at - _taken_n`` (paho's thread sets ``_filled``), not
        # woken by every socket read; ``_NOT_WAITING`` while it is not waiting.
        self._put_n = 0
        self._taken_n = 0
        self._full_at = _NOT_WAITING
        self._filled = threading.Event()
        self._client = MqttClient(
            mqtt, on_messages=self._receive_many, on_connect=self._on_connect, manual_ack=True
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sites: dict[str, str] = {}
        self._published: dict[str, tuple[str | None, int]] = {}
        self._committed = threading.Condition()

    @property
    def known_devices(self) -> KnownDevices | None:
        """The registry's poles this consumer accepts (``None``: any)."""
        return self._known

    @property
    def mqtt(self) -> MqttClient:
        """The broker session (its ``problem``, handler errors and takeovers)."""
        return self._client

    @property
    def writer_alive(self) -> bool:
        """True while the thread that stores and acknowledges what arrives is running."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def protocol(self) -> str | None:
        """The MQTT protocol negotiated with the broker ("5" or "3.1.1")."""
        return self._client.protocol

    @property
    def pending(self) -> int:
        """Messages received but not yet committed: the queue plus the batch being written."""
        return self._received_n - self._finished_n

    @property
    def oldest_pending_age_s(self) -> float | None:
        """Seconds since the oldest received, not yet committed message arrived (None: none)."""
        try:
            oldest = self._arrivals[0].at
        except IndexError:
            return None
        return max(0.0, time.monotonic() - oldest)

    def _receive(self, msg: MqttMessage) -> None:
        """One message on its own (tests; paho's thread hands over lists)."""
        self._receive_many([msg])

    def _receive_many(self, msgs: list[MqttMessage]) -> None:
        # paho's thread. A dead letter's received_at is set at commit, as before.
        if not msgs:
            return
        try:
            verdicts = judge_many(msgs, self._limits)
        except Exception:
            verdicts = self._judge_alone(msgs)
        shed_bodies(msgs, verdicts, self._limits)
        # Counted before the writer can take them.
        self._arrivals.append(_Arrival(time.monotonic(), len(msgs)))
        self._received_n += len(msgs)
        self._queue.put((msgs, verdicts))
        self._put_n += len(msgs)
        if self._put_n >= self._full_at:
            self._filled.set()

    def _judge_alone(self, msgs: list[MqttMessage]) -> list[Judged]:
        """``judge_many`` of each message on its own, after it raised on the list: a
        message it still raises on is an ``internal_error`` dead letter (stored and
        acknowledged, as a bad message is, not sent again and again by the broker),
        logged with its topic and counted in the broker session's ``handler_errors``."""
        out: list[Judged] = []
        for msg in msgs:
            try:
                out.extend(judge_many([msg], self._limits))
            except Exception as exc:
                self._client.handler_failed(
                    "message", msg.topic, exc, "the message is kept as a dead letter"
                )
                detail = f"ingest failed while checking it: {type(exc).__name__}: {exc}"
                letter = DeadLetter(
                    0, msg.topic, None, msg.payload, "internal_error", detail[:MAX_DETAIL_CHARS]
                )
                out.append(Rejected(letter))
        return out

    def start(self) -> None:
        """Connect (raising if the broker refuses), subscribe and start writing."""
        if self._thread is not None:
            raise RuntimeError("ingest already started")
        self._stop.clear()
        self._client.connect()
        self._thread = threading.Thread(target=self._write_loop, name="ingest-writer", daemon=True)
        self._thread.start()
        # A resumed session already holds the subscription, and its SUBACK
        # would queue behind the backlog; a new session must be subscribed
        # before start() returns, or what is published next is not queued.
        self._client.subscribe(self._topic, 1, wait=not self._client.session_present)

    def run(self) -> None:
        """``start()`` and block until ``stop()`` is called from another thread."""
        self.start()
        self._stop.wait()
        self.stop()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Commit and acknowledge what was received, then disconnect."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout_s)
        self._client.disconnect()

    def wait_for(self, predicate: Callable[[], bool], timeout_s: float = 10.0) -> bool:
        """Wait until ``predicate()`` holds, re-checking after every commit."""
        deadline = time.monotonic() + timeout_s
        with self._committed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._committed.wait(min(left, 0.5))
        return True

    def _on_connect(self, session_present: bool) -> None:
        # A restarted broker may have lost the retained watermarks: send each
        # again at the next commit that touches its device.
        self._published.clear()

    def _next_batch(self) -> _Chunk:
        """The next batch's messages and verdicts (empty after 0.2 s without any)."""
        msgs: list[MqttMessage] = []
        verdicts: list[Judged] = []
        chunk, self._carry = self._carry, None
        if chunk is None:
            try:
                chunk = self._queue.get(timeout=0.2)
            except queue.Empty:
                return msgs, verdicts
        self._take(chunk, msgs, verdicts)
        deadline = time.monotonic() + self._batch_wait_s
        while len(msgs) < self._batch_size:
            try:
                chunk = self._queue.get_nowait()
            except queue.Empty:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                # Asleep until a full batch is queued or the timer ends.
                self._filled.clear()
                self._full_at = self._taken_n + self._batch_size - len(msgs)
                if self._put_n < self._full_at:
                    self._filled.wait(left)
                self._full_at = _NOT_WAITING
                continue
            self._take(chunk, msgs, verdicts)
        # A backlog already received (the broker may send beyond our Receive
        # Maximum, or a restart left one) goes in larger commits: each commit's
        # fsync and bookkeeping then serve more readings. Nothing waits for it.
        while len(msgs) < self._max_batch:
            try:
                chunk = self._queue.get_nowait()
            except queue.Empty:
                break
            self._take(chunk, msgs, verdicts)
        if len(msgs) > self._batch_size:
            # Beside other poles, one pole takes at most a batch size of a backlog batch.
            fair = fair_share(msgs, verdicts, self._batch_size)
            if fair is not None:
                msgs, verdicts, rest, rest_verdicts = fair
                self._give_back(rest, rest_verdicts)
        return msgs, verdicts

    def _give_back(self, msgs: list[MqttMessage], verdicts: list[Judged]) -> None:
        """Messages taken but left for the next batch: first in line, before any carry.

        ``_finished`` counts messages off the arrival lists oldest first, so while
        some wait here ``oldest_pending_age_s`` may read younger than the oldest
        of them (by less than the time one batch takes)."""
        self._taken_n -= len(msgs)
        if self._carry is not None:
            msgs, verdicts = msgs + self._carry[0], verdicts + self._carry[1]
        self._carry = (msgs, verdicts)

    def _take(self, chunk: _Chunk, msgs: list[MqttMessage], verdicts: list[Judged]) -> None:
        """Add a received list to the batch; what exceeds the largest batch waits for the next."""
        room = self._max_batch - len(msgs)
        more, judged = chunk
        if len(more) <= room:
            msgs += more
            verdicts += judged
            self._taken_n += len(more)
        else:
            msgs += more[:room]
            verdicts += judged[:room]
            self._carry = (more[room:], judged[room:])
            self._taken_n += room

    def _finished(self, n: int) -> None:
        """n messages committed, or given back to the broker unacknowledged: not pending."""
        self._finished_n += n
        arrivals = self._arrivals
        while n > 0:
            head = arrivals[0]
            if head.left > n:
                head.left -= n
                return
            n -= head.left
            arrivals.popleft()

    def _write_loop(self) -> None:
        while True:
            # After stop() one more batch is committed; anything still queued
            # stays unacknowledged and the broker delivers it next time.
            stopping = self._stop.is_set()
            msgs, verdicts = self._next_batch()
            try:
                if msgs and not self._commit(msgs, verdicts):
                    return
                if not msgs:
                    self._settle_held()
            except Exception:
                # Whatever failed, the batch's unacknowledged messages come
                # again; the consumer must keep consuming, not die quietly.
                log.exception("ingest batch of %d failed", len(msgs))
            finally:
                # Messages leave in arrival order.
                self._finished(len(msgs))
            if stopping:
                return

    def _settle_held(self) -> None:
        """While no message comes, end the holds that ran out (an empty batch decides
        them, ``TimePolicy.judge_expired``): every quarter of the hold, at most."""
        policy = self._time_policy
        if policy is None or policy.max_hold_ms is None:
            return
        now = time.monotonic()
        if now < self._hold_checked + policy.max_hold_ms / 4000:
            return
        self._hold_checked = now
        if self._space is not None and self._space.problem() is not None:
            return  # the disk's floor: no write now (the next batch decides them)
        result = self.store.write_batch([], received_at_ms=self._now_ms(), time_policy=policy)
        if result.stored or result.quarantined:
            self._after_commit(result, 0, 0, 0)

    def _commit(self, msgs: list[MqttMessage], verdicts: list[Judged]) -> bool:
        """Write one batch durably, then ack it. False when stopped before success."""
        now = self._now_ms()
        b = self._only_readings(verdicts) or self._sort(msgs, verdicts, now)
        while True:
            problem = self._space.problem() if self._space is not None else None
            error: BaseException | None = None
            if problem is None:
                try:
                    result = self._write(b.readings, b.sites, b.statuses, b.dead, b.frames, now)
                    break
                except Exception as exc:
                    # Not acknowledged, so nothing is lost; the broker keeps it.
                    problem, error = write_failure_cause(exc), exc
            self._stalled(problem, error, len(msgs))
            if self._stop.wait(self._write_retry_s):
                return False
        self._written(result)
        self._client.ack_many(msgs)
        self._sites.update(b.sites)
        self._after_commit(result, len(msgs), len(b.statuses), len(b.dead))
        return True

    def _sort(self, msgs: list[MqttMessage], verdicts: list[Judged], now: int) -> _Sorted:
        """What of the batch goes where: readings, statuses, dead letters, images."""
        b = _Sorted()
        known = self._known
        # Registered, per device: asked once a batch (a pole not registered is
        # asked per message below, so a registration lands at the next one).
        registered: dict[str, bool] = {}
        readings, sites = b.readings, b.sites
        charged = _QuotaTally()
        for msg, judged in zip(msgs, verdicts, strict=True):
            if isinstance(judged, tuple):
                # The common case, kept short: a reading from a registered pole.
                site, device, reading = judged
                if (
                    known is None
                    or registered.get(device)
                    or (device not in registered and registered.setdefault(device, device in known))
                ):
                    readings.append(reading)
                    sites[device] = site
                    continue
                received: Verdict = Accepted(site, reading)
            else:
                received = judged
            verdict = self._screen(msg, received, now)
            if isinstance(verdict, Accepted):
                readings.append(verdict.reading)
                sites[verdict.reading.device] = verdict.site
            elif isinstance(verdict, Availability):
                b.statuses.append(verdict.update)
                sites[verdict.update.status.device] = verdict.update.site
            elif isinstance(verdict, Evidence):
                refused = self._admissible(msg, verdict, charged, now)
                if refused is None:
                    b.frames.append((verdict.device, verdict.body))
                else:
                    b.dead.append(refused)
            elif isinstance(verdict, Rejected):
                b.dead.append(self._rejected(msg, verdict, now))
            else:
                assert isinstance(verdict, Ignored)
        return b

    def _only_readings(self, verdicts: list[Judged]) -> _Sorted | None:
        """``_sort`` of a batch of readings only (judge_many's (site, device,
        reading)), the common case, in two comprehensions instead of its loop;
        None for any other batch, or a pole not registered (``_sort`` then)."""
        if set(map(type, verdicts)) != {tuple}:
            return None
        # Ignored: every verdict was checked to be a tuple just above; mypy cannot narrow the list.
        judged: list[tuple[str, str, AnyReading]] = verdicts  # type: ignore[assignment]
        sites = {device: site for site, device, _ in judged}  # each device's last site
        known = self._known
        if known is not None and not all(device in known for device in sites):
            return None
        return _Sorted(readings=[reading for _, _, reading in judged], sites=sites)

    def _rejected(self, msg: MqttMessage, verdict: Rejected, now: int) -> DeadLetter:
        letter = verdict.dead_letter
        self.stats.too_large += letter.reason == "too_large"
        self._dead_log.note(letter, msg.topic)
        return dataclasses.replace(letter, received_at_ms=now)

    def _screen(self, msg: MqttMessage, verdict: Verdict, now: int) -> Verdict:
        """A reading, frame or status from a pole the registry does not know
        (``known``) becomes an ``unknown_device`` dead letter."""
        if self._known is None:
            return verdict
        if isinstance(verdict, Accepted):
            device, site = verdict.reading.device, verdict.site
        elif isinstance(verdict, Availability):
            device, site = verdict.update.status.device, verdict.update.site
        elif isinstance(verdict, Evidence):
            device, site = verdict.device, msg.topic.split("/")[2]
        else:
            return verdict
        if device in self._known:
            return verdict
        self.stats.unknown_device += 1
        self._known.count_unknown(site)
        detail = unknown_device_detail(device)
        return Rejected(DeadLetter(now, msg.topic, device, msg.payload, "unknown_device", detail))

    def _written(self, result: BatchResult) -> None:
        """After a durable write: end a stall, note which images a FrameRef names."""
        if self.write_problem is not None:
            log.warning("ingest commits again (was: %s)", self.write_problem)
            self.write_problem, self._stall_logged = None, None
        if self._evidence is None:
            return
        # By exact type: isinstance on a pydantic model goes through its ABC check.
        named = [r.sha256 for r in result.stored if type(r) is FrameRef]
        if named:
            try:
                self._evidence.mark_referenced(named)
            except Exception as exc:
                # The retention prune finds the FrameRef in the readings anyway.
                log.warning("evidence index not updated: %s", write_failure_cause(exc))

    def _write(  # noqa: PLR0917 (the parts of one batch)
        self,
        readings: list[AnyReading],
        sites: dict[str, str],
        statuses: list[StatusUpdate],
        dead: list[DeadLetter],
        frames: list[tuple[str, bytes]],
        now: int,
    ) -> BatchResult:
        # Images first: a FrameRef acknowledged without its bytes on disk
        # would cite evidence that does not exist.
        for device, body in frames:
            assert self._evidence is not None
            self._evidence.admit(body, device, now_ms=now)
        return self.store.write_batch(
            readings,
            sites=sites,
            statuses=statuses,
            dead_letters=dead,
            received_at_ms=now,
            time_policy=self._time_policy,
        )

    def _admissible(
        self, msg: MqttMessage, verdict: Evidence, charged: _QuotaTally, now: int
    ) -> DeadLetter | None:
        """None if the image may be stored; else the dead letter saying why not."""
        if self._evidence is None:
            return DeadLetter(now, msg.topic, verdict.device, msg.payload, "no_evidence_store",
                              "this ingest keeps no evidence images")  # fmt: skip
        over = self._over_quota(verdict.device, verdict.body, charged, now)
        if over is None:
            return None
        letter = DeadLetter(now, msg.topic, verdict.device, msg.payload, "evidence_quota", over)
        self._dead_log.note(letter, msg.topic)
        return letter

    def _over_quota(self, device: str, body: bytes, charged: _QuotaTally, now: int) -> str | None:
        """Why this image exceeds its device's daily evidence quota (None: it fits)."""
        quota, store = self._evidence_quota, self._evidence
        if quota is None or store is None:
            return None
        sha = hashlib.sha256(body).hexdigest()
        if sha in charged.shas or sha in store:
            return None  # a re-send of a stored (or this batch's) image costs nothing
        used = charged.get(device)
        if used is None:
            used = store.bytes_since(device, now - DAY_MS)
        if used + len(body) > quota:
            with self._committed:
                self.stats.over_quota += 1
            return (
                f"{len(body)} bytes would bring {device}'s evidence in the last 24 h to"
                f" {used + len(body)}, over its quota of {quota} bytes per day"
            )
        charged[device] = used + len(body)
        charged.shas.add(sha)
        return None

    def _stalled(self, problem: str, error: BaseException | None, pending: int) -> None:
        """Note and log (one line, at most once a minute per cause) why nothing commits."""
        self.write_problem = problem
        now = time.monotonic()
        last = self._stall_logged
        if last is not None and last[0] == problem and now - last[1] < STALL_LOG_EVERY_S:
            self._stall_logged = (problem, last[1], last[2] + 1)
            return
        repeats = last[2] if last is not None and last[0] == problem else 0
        log.error(
            "ingest cannot commit: %s; %d messages wait unacknowledged at the broker"
            " (retrying every %.1f s%s)",
            problem, pending, self._write_retry_s,
            f"; {repeats} more times since the last report" if repeats else "",
            extra={"reason": problem},
        )  # fmt: skip
        if error is not None:
            log.debug("the failed write", exc_info=error)
        self._stall_logged = (problem, now, 0)

    def _after_commit(self, result: BatchResult, received: int, statuses: int, dead: int) -> None:
        now = _now_ms()
        for device, seq in result.watermarks.items():
            epoch = result.watermark_epochs.get(device)
            if self._published.get(device) == (epoch, seq) or device not in self._sites:
                continue
            mark = StoredWatermark(device=device, seq=seq, ts=now, epoch=epoch)
            self._client.publish(
                topic_for(self._sites[device], device, "stored"), mark.to_json(), 1, retain=True
            )
            self._published[device] = (epoch, seq)
        with self._committed:
            s = self.stats
            s.received += received
            s.stored += len(result.stored)
            s.duplicates += len(result.duplicates)
            s.conflicts += len(result.conflicts)
            s.dead_letters += dead + len(result.conflicts)
            s.statuses += statuses
            s.gaps_opened += len(result.gaps_opened)
            s.batches += 1
            s.quarantined += len(result.quarantined)
            s.dead_letters += len(result.quarantined)
            s.held += len(result.held)
            s.epochs_started += len(result.epochs_started)
            self._committed.notify_all()
        self._dead_log.tick()
        for device, epoch, base in result.epochs_started:
            # A device's first space is routine; a later one is a re-imaged pole.
            log.log(
                logging.WARNING if base else logging.INFO,
                "%s: new seq space (epoch %s), stored after seq %d",
                device,
                epoch,
                base,
                extra={"device": device, "epoch": epoch, "base": base},
            )
        for r in result.quarantined:
            log.warning(
                "quarantined %s seq %d of %s: implausible time, stamped %s",
                r.stream,
                r.seq,
                r.device,
                stamp_words(r.ts),
                extra={"reason": "implausible_time", "device": r.device, "seq": r.seq},
            )
        for r in result.held:
            log.warning(
                "held %s seq %d of %s for the pole's next reading: stamped %s",
                r.stream,
                r.seq,
                r.device,
                stamp_words(r.ts),
                extra={"reason": "held", "device": r.device, "seq": r.seq},
            )
        for gap in result.gaps_opened:
            log.log(
                self._gap_log_level,
                "seq gap %s %d..%d",
                gap.device,
                gap.from_seq,
                gap.to_seq,
                extra={"device": gap.device, "from_seq": gap.from_seq, "to_seq": gap.to_seq},
            )
        if not result.stored:
            return
        if self._on_stored is not None:
            try:
                self._on_stored(result.stored)
            except Exception:
                log.exception("on_stored hook failed (the readings are stored)")
        if self._influx is not None:
            try:
                self._influx.write(result.stored)
            except Exception:
                # SQLite is the system of record; InfluxDB is a view of it.
                log.exception("InfluxDB write failed for %d readings", len(result.stored))
