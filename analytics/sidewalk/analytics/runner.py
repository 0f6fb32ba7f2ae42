"""The live analytics runner: MQTT readings → clock engine → case records.

Analytics is its own MQTT consumer (a persistent session with a fixed client
id); it never calls ingest. Each message is acknowledged only after the
events it caused are in the case records.

Time:
* ``live``: wall-clock time. APScheduler calls ``advance(now)`` on a short
  tick and at each exact deadline the engine reports (``next_due``). With a
  database URL the job store is persisted, so a deadline set before a restart
  still fires after it (late, if the server was down, but it fires). The tick
  also applies the actions people recorded (hazard confirmed, notice
  delivered, bill paid …) from the case records, in the order recorded.
* ``stream``: the readings' own event time, for replays through the broker
  at any speed. A replay gives exactly the notices the live run would.

A clearing deadline is decided only on the pole's readings up to it: live,
each tick tells the engine which poles are *behind* (their
readings queued for analytics: every pole before the session is connected and
for a tick after, then each pole with messages received and not yet
processed), so their bounded wait for evidence does not count the time
analytics was down or busy; a pole silent past the wait goes to a person's
review. The first tick runs at start, before any queued reading.

Before the engine sees a reading from the broker, the engine's
``ReadingGate`` gives it ingest's verdicts (analytics acts only on readings
ingest would store): a duplicate or conflicting ``(device, epoch, seq)`` and a
reading with an implausible time (``TimePolicy``: ahead of the runner's clock,
or a newer seq older than the pole's last accepted reading) are skipped and
counted. In ``stream`` mode the event time has nothing to do with the wall
clock, so only the stepped-back check applies. ``skipped()`` gives every count
of readings not acted on, the detectors' out-of-order ones included.

Saved state: ``start`` restores the engine from its snapshot in the case
database, which names the site and the database it was saved for
(``SnapshotIdentity``). It refuses (``SavedStateRefused``) a snapshot it cannot
read, one of another site or database, and a missing one where the case
database holds cases of its site: an engine started from nothing would forget
them. ``rebuild`` makes the state again from the stored readings.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import CLEARING, ClockEngine
from sidewalk.analytics.clocks.events import Event, Transition
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.analytics.registry import RegistryWatch
from sidewalk.core.clock import Clock, SystemClock, to_ms
from sidewalk.core.contract import ContractError, Reading, TimePolicy, parse_payload
from sidewalk.core.mqtt import MqttClient, MqttError, MqttMessage, MqttSettings
from sidewalk.storage.cases import ActionRecord

log = logging.getLogger(__name__)

Mode = Literal["live", "stream"]
T = TypeVar("T")

# APScheduler persists a job as a reference to a module-level function plus
# plain arguments; the running process registers itself here under its id.
_RUNNERS: dict[str, AnalyticsRunner] = {}


def _device_of(topic: str) -> str:
    """``sidewalk/v1/<site>/<device>/<stream>``'s device ('' if the topic has none)."""
    parts = topic.split("/")
    return parts[3] if len(parts) > 3 else ""


def deadline_scheduler() -> Any:
    """APScheduler's background scheduler, kept alive when a date job it fired is
    already gone from the job store.

    The case database's job store is shared: an analytics process starting while the
    one it replaces is still stopping runs the same ``next-due`` job, and whichever
    removes it second gets ``JobLookupError`` inside APScheduler's own loop. Uncaught,
    that ends the scheduler's thread, and with it every later deadline and tick until
    the process is restarted (liveness fails meanwhile: ``metrics.py`` watches the
    thread). The job ran (or the other process ran it): gone is what was wanted.
    """
    # Deferred with the scheduler (slow to import; replays never schedule).
    from apscheduler.jobstores.base import JobLookupError
    from apscheduler.schedulers.background import BackgroundScheduler

    class DeadlineScheduler(BackgroundScheduler):  # type: ignore[misc]  # untyped library
        def remove_job(self, job_id: str, jobstore: str | None = None) -> None:
            try:
                super().remove_job(job_id, jobstore)
            except JobLookupError:
                log.info("scheduled job %s was already removed (another scheduler ran it)", job_id)

    return DeadlineScheduler


def fire_due(runner_id: str) -> None:
    """Scheduler entry point: advance the registered runner to now."""
    runner = _RUNNERS.get(runner_id)
    if runner is None:
        log.warning("deadline job for runner %s, which is not running here", runner_id)
        return
    runner.tick()


def _first_problem(exc: BaseException) -> str:
    """One line for ``exc``: pydantic's first error with where it is, else its first line."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = next(iter(errors()), None)
        if isinstance(first, dict):
            where = ".".join(str(part) for part in first.get("loc", ()))
            return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return next(iter(str(exc).splitlines()), type(exc).__name__)


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def _noting(
    issue: Callable[[Any, Any], Any] | None, numbers: set[str]
) -> Callable[[Any, Any], Any] | None:
    """``issue`` (the notice issuer's hook), noting the number of each notice it returns."""
    if issue is None:
        return None

    def noted(event: Any, record: Any) -> Any:
        notice = issue(event, record)
        number = getattr(notice, "number", None)
        if isinstance(number, str):
            numbers.add(number)
        return notice

    return noted


class SavedStateRefused(RuntimeError):
    """The runner's saved engine state cannot be taken as this case database's: analytics
    stops instead of starting from nothing (an empty engine would forget every open
    clock and case and issue nothing for them). ``--rebuild`` makes the state again."""


class SavedStateUnreadable(SavedStateRefused):
    """The clocks' state saved in the case database cannot be restored."""

    def __init__(self, name: str, cause: BaseException) -> None:
        super().__init__(
            f"the clocks' saved state {name!r} in the case database cannot be read "
            f"({_first_problem(cause)}); analytics does not start without it, as starting from "
            "nothing would forget every open clock and case"
        )
        self.name = name


class SavedStateMissing(SavedStateRefused):
    """No saved state for this runner, while the case database holds cases of its site."""

    def __init__(self, name: str, site: str, held: str) -> None:
        super().__init__(
            f"the case database holds {held} for site {site} but no saved engine state for "
            f"client id {name!r} (was analytics.client_id changed?)"
        )
        self.name = name


class SavedStateMismatch(SavedStateRefused):
    """The saved state names another site or another case database than this one."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"the saved engine state for client id {name!r} {why}")
        self.name = name


# The case database's own mark, kept beside the runners' saved states under a name no
# client id can take (client ids are slugs). Each saved state names the site and the mark
# of the database it was saved in, so a state that is not this database's is refused.
DATABASE_MARK = ":case-database"
_IDENTITY_HEAD = '{"identity":'


@dataclass(frozen=True)
class SnapshotIdentity:
    """Whose engine state a snapshot is: the site it ran for and its case database's mark."""

    site: str
    database: str

    def wrap(self, state_json: str) -> str:
        """``state_json`` (the engine's JSON object) with the identity as its first member:
        the engine's reader ignores it, and an older snapshot simply has none."""
        head = json.dumps({"site": self.site, "database": self.database}, separators=(",", ":"))
        return f"{_IDENTITY_HEAD}{head},{state_json[1:]}"


def split_identity(saved: str) -> tuple[SnapshotIdentity | None, str]:
    """(the identity, the engine's own JSON) of a saved state; None for one saved before
    snapshots carried an identity (taken as this database's, and given one on the next save)."""
    if not saved.startswith(_IDENTITY_HEAD):
        return None, saved
    try:
        head, end = json.JSONDecoder().raw_decode(saved, len(_IDENTITY_HEAD))
    except ValueError:
        return None, saved  # the engine's reader says what is wrong with it
    if not isinstance(head, dict) or saved[end : end + 1] != ",":
        return None, saved
    identity = SnapshotIdentity(str(head.get("site", "")), str(head.get("database", "")))
    return identity, "{" + saved[end + 1 :]


@dataclass
class RebuildReport:
    """What ``AnalyticsRunner.rebuild`` replayed and what it found on record."""

    readings: int = 0
    skipped: int = 0
    storms: int = 0
    actions: int = 0
    first: datetime | None = None
    last: datetime | None = None
    # Notice numbers the replay reached that were on record before it, and new ones.
    notices_on_record: list[str] = field(default_factory=list)
    notices_new: list[str] = field(default_factory=list)
    # Other records the replay wrote that were not on record: (what, how many).
    new_records: dict[str, int] = field(default_factory=dict)
    # Actions whose outcome in the replay differs from the one recorded (applied or refused).
    actions_differing: list[int] = field(default_factory=list)


class AnalyticsRunner:
    """Feeds one ``ClockEngine`` from MQTT and records what it decides."""

    def __init__(
        self,
        engine: ClockEngine,
        recorder: CaseRecorder,
        mqtt: MqttSettings,
        *,
        site: str = "+",
        mode: Mode = "live",
        clock: Clock | None = None,
        persist_jobs: bool = True,
        tick_seconds: float = 30.0,
        batch_size: int = 200,
        on_events: Callable[[Sequence[Event]], None] | None = None,
        time_policy: TimePolicy | None = None,
        registry: RegistryWatch | None = None,
    ) -> None:
        """``time_policy``: by default ingest's (``TimePolicy()``) live, and with no
        "ahead" check in ``stream`` mode; ``TimePolicy(None, None)`` judges no times.

        ``registry``: follow the registry's changes while running (frontages
        added, poles reassigned, parcels gone), each at its own effective time:
        live once the clock passes it, in ``stream`` mode once the readings'
        event time does, so a replay watches what the live run watched."""
        self.engine = engine
        if time_policy is None:
            time_policy = TimePolicy() if mode == "live" else TimePolicy(max_ahead_ms=None)
        engine.gate.policy = time_policy
        self.recorder = recorder
        self.mode = mode
        self.clock = clock or SystemClock()
        self.id = mqtt.client_id
        self.processed = 0
        self._site = site
        self._mqtt_settings = mqtt
        self._persist_jobs = persist_jobs
        self._tick_seconds = tick_seconds
        self._batch_size = batch_size
        self._on_events = on_events
        self._registry = registry
        self._registry_next: datetime | None = None
        self._registry_loaded = False
        self._lock = threading.Lock()
        self._queue: queue.Queue[MqttMessage | None] = queue.Queue()
        self._client: MqttClient | None = None
        self._worker: threading.Thread | None = None
        self._scheduler: Any = None
        self._scheduled_due: datetime | None = None
        # The engine state last written to the case records: what a failed
        # batch or tick rolls the engine back to, so the state saved next can
        # never include events whose records were not written.
        self._saved = engine.snapshot()
        # Whose state this is (site, case database), written with every save.
        self._identity: SnapshotIdentity | None = None
        self._stopping = threading.Event()
        # Messages received and not yet processed, per device: those poles are behind
        # (their evidence is queued here), not silent (``_behind``).
        self._unprocessed: dict[str, int] = {}
        self._count_lock = threading.Lock()
        self._connected_since: float | None = None
        # Recording to the case database failing since (monotonic) and the last
        # failure, until a save succeeds: readiness says so (a full disk makes
        # every batch fail while the database still answers a ping).
        self._write_failing_since: float | None = None
        self._write_failure: str | None = None

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Restore the saved engine state, connect, subscribe and start (returns at once)."""
        self._restore_saved()
        if self.mode == "live" or self.engine.now is not None:
            self._load_registry(self.engine.now if self.mode == "stream" else self.clock.now())
        self._saved = self.engine.snapshot()
        self._stopping.clear()
        self._connected_since = None
        with self._count_lock:
            self._unprocessed.clear()
        _RUNNERS[self.id] = self
        if self.mode == "live":
            # What came due while analytics was down is taken now, before any queued
            # reading arrives (as the persisted deadline job would, racing the queue):
            # every pole is behind on this tick, so the engine waits for the evidence
            # instead of deciding without it. Before the scheduler starts, so this
            # tick does not race its first jobs.
            self.tick()
            self._start_scheduler()
        self._client = MqttClient(self._mqtt_settings, on_message=self._received, manual_ack=True)
        self._client.connect()
        # Only now: a persistent session's queued messages may arrive during
        # connect(), and they must not be acknowledged before it returns.
        self._worker = threading.Thread(target=self._work, name=f"analytics-{self.id}", daemon=True)
        self._worker.start()
        for stream in ("weather", "snow"):
            self._client.subscribe(f"sidewalk/v1/{self._site}/+/{stream}", qos=1)

    def _restore_saved(self) -> None:
        """Restore the engine from its saved state, or refuse to start (``SavedStateRefused``).

        No saved state is a first start only while the case database holds no case of
        this site; a state saved for another site or in another case database is not
        this one's. Either way starting would forget, or mix up, every open case."""
        clocks = self.recorder.cases.clocks
        saved = clocks.load_engine_snapshot(self.id)
        mark = clocks.load_engine_snapshot(DATABASE_MARK)
        if saved is None:
            # An engine handed over with a state of its own (its owner restored it) is
            # not a start from nothing; a fresh one is, if there are cases it would forget.
            held = self._records_held() if self.engine.now is None else ""
            if held:
                raise SavedStateMissing(self.id, self._site, held)
            self._identity = self._own_identity(mark)
            return
        identity, state = split_identity(saved)
        if identity is not None:
            if identity.site != self._site:
                raise SavedStateMismatch(
                    self.id,
                    f"was saved for site {identity.site}, not for site {self._site} (does "
                    "another site's analytics use the same analytics.client_id? each site "
                    "needs its own)",
                )
            if identity.database != mark:
                raise SavedStateMismatch(
                    self.id,
                    "was saved in another case database, not in this one (was the saved "
                    "state copied from another database, or this database replaced?)",
                )
        try:
            self.engine.restore(state.encode())
        except (ValueError, KeyError, TypeError) as exc:  # pydantic's errors are ValueErrors
            raise SavedStateUnreadable(self.id, exc) from exc
        self._identity = self._own_identity(mark)

    def _own_identity(self, mark: str | None = None) -> SnapshotIdentity:
        """This runner's identity, giving the case database its mark on a first save."""
        clocks = self.recorder.cases.clocks
        mark = mark or clocks.load_engine_snapshot(DATABASE_MARK)
        if mark is None:
            clocks.save_engine_snapshot(DATABASE_MARK, None, uuid.uuid4().hex)
            # Read back: of two runners giving the mark at once, the one stored counts.
            mark = clocks.load_engine_snapshot(DATABASE_MARK) or ""
        self._identity = SnapshotIdentity(self._site, mark)
        return self._identity

    def _records_held(self) -> str:
        """What the case database holds for this runner's site ('' if nothing): the
        clock records, violations and notices a fresh engine would know nothing of."""
        cases = self.recorder.cases
        site = None if self._site == "+" else self._site
        ours = {f.id for f in cases.registry.list_frontages(site=site, include_retired=True)}
        clocks = [c for c in cases.clocks.list() if c.frontage_id in ours]
        violations = [v for v in cases.clocks.list_violations() if v.frontage_id in ours]
        notices = sum(n.frontage_id in ours for n in cases.notices.list())
        if not (clocks or violations or notices):
            return ""
        # A violation is a case until cured, paid or settled (its status says).
        open_cases = sum(v.status == "open" for v in violations)
        running = sum(c.closed_at is None for c in clocks)
        return (
            f"{_count(open_cases, 'open case')}, {_count(notices, 'notice')} and "
            f"{_count(len(clocks), 'clock record')} ({running:,} still running)"
        )

    def stop(self) -> None:
        """Stop consuming; unacknowledged messages come again on the next start."""
        self._stopping.set()
        if self._client is not None:
            self._client.disconnect()
            self._client = None
        self._queue.put(None)
        if self._worker is not None:
            self._worker.join(timeout=10)
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None
        _RUNNERS.pop(self.id, None)

    def wait_for(self, predicate: Callable[[], bool], timeout_s: float = 30.0) -> bool:
        """Wait (bounded) until ``predicate()`` holds; for tests and the demo."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.02)
        return predicate()

    # -- read-only views (metrics, readiness) ------------------------------------

    @property
    def pending(self) -> int:
        """Messages received and not yet processed."""
        return self._queue.qsize()

    @property
    def connected(self) -> bool:
        """True while the MQTT session is up."""
        client = self._client
        return client is not None and client.is_connected

    @property
    def broker_problem(self) -> str | None:
        """Why the broker session cannot feed the engine (None: it can): not connected,
        its network thread stopped, or the session taken over by another client."""
        client = self._client
        return "not connected to the broker" if client is None else client.problem

    @property
    def record_problem(self) -> str | None:
        """Why the engine's work is not being recorded right now (None: the last
        batch or tick was saved): the case database refusing writes."""
        since, failure = self._write_failing_since, self._write_failure
        if since is None or failure is None:
            return None
        ago = time.monotonic() - since
        return f"recording to the case database failing for {ago:.0f} s ({failure}); retrying"

    def _record_failed(self, exc: BaseException) -> None:
        if self._write_failing_since is None:
            self._write_failing_since = time.monotonic()
        first_line = next(iter(str(exc).splitlines()), "")  # SQLAlchemy appends the SQL
        self._write_failure = f"{type(exc).__name__}: {first_line}"

    @property
    def mqtt_handler_errors(self) -> int:
        """Exceptions raised while handing received messages over (this connection's client)."""
        client = self._client
        return 0 if client is None else client.handler_errors

    @property
    def session_takeovers(self) -> int:
        """Times the broker gave this runner's session to another client with its id."""
        client = self._client
        return 0 if client is None else client.session_takeovers

    def skipped(self) -> dict[str, int]:
        """Readings not acted on, by reason: the gate's (``duplicate``, ``seq_conflict``,
        ``implausible_time``) and the detectors' out-of-order ones (``late_weather``,
        ``late_camera``). Kept in the engine's saved state, so they count across restarts."""

        def read(engine: ClockEngine) -> dict[str, int]:
            counts = dict(engine.gate.state.skipped)
            detectors = engine.detectors.values()
            counts["late_weather"] = sum(d.late_readings for d in detectors)
            counts["late_camera"] = sum(d.late_camera for d in detectors)
            return counts

        return self.inspect(read)

    def inspect(self, read: Callable[[ClockEngine], T]) -> T:
        """``read(engine)`` under the runner's lock, so the worker never changes it midway."""
        with self._lock:
            return read(self.engine)

    # -- processing ------------------------------------------------------------

    def handle(self, reading: Reading) -> list[Event]:
        """Observe one reading (and, in stream mode, advance to its time); record the events.

        If recording fails, the engine goes back to its last saved state and
        the error propagates: the reading must be handled again.
        """
        with self._lock, self._rollback_on_error():
            return self._handle(reading)

    def _handle(self, reading: Reading) -> list[Event]:
        events: list[Event] = []
        if not self._registry_loaded:
            # A replay from its start: the registry as it stood at the first reading.
            self._load_registry(self.engine.now or reading.event_time)
        due = self._registry_next
        if self.mode == "stream" and due is not None and due <= reading.event_time:
            # A registry change between the last reading and this one: at its own time.
            events += self.engine.advance(due)
            self._follow_registry(due)
        if self.mode == "stream":
            # Ignored: the contract's ``Reading`` is wider than the engine's ``AnyReading``.
            events += self.engine.step(reading)  # type: ignore[arg-type]
        else:
            # Ignored: the contract's ``Reading`` is wider than the engine's ``AnyReading``.
            events += self.engine.observe(reading)  # type: ignore[arg-type]
        self._commit(events)
        self.processed += 1
        return events

    def advance(self, to: datetime) -> list[Event]:
        """Move event time to ``to`` with no reading (a replay's quiet stretch)."""
        with self._lock, self._rollback_on_error():
            events = self.engine.advance(to)
            self._commit(events)
            self._save()
        return events

    def tick(self) -> list[Event]:
        """Apply recorded actions, then advance to the clock's now (the scheduler's jobs)."""
        try:
            return self._tick()
        except Exception as exc:
            self._record_failed(exc)
            raise

    def _tick(self) -> list[Event]:
        with self._lock, self._rollback_on_error():
            # Each action's events are recorded as it is applied (findings are keyed, so
            # an action applied again after a crash before the save stores none twice).
            acted, marks = self._apply_actions()
            if acted and self._on_events is not None:
                self._on_events(acted)
            if self._registry is not None and self.mode == "live":
                now = self.clock.now()
                changed = self._registry.refresh()
                if changed or (self._registry_next is not None and self._registry_next <= now):
                    self._follow_registry(now)
            events = (
                self.engine.advance(self.clock.now(), behind=self._behind())
                if self.mode == "live"
                else []
            )
            self._commit(events)
            self._save()
            # Only after the state that includes them is saved: a crash before
            # this re-marks them on restart, without applying them twice.
            for action_id, error in marks:
                self.recorder.cases.actions.mark_applied(action_id, error=error)
        return acted + events

    # -- rebuilding the saved state ------------------------------------------------

    def rebuild(
        self, batches: Iterable[Sequence[Reading]], *, actions_move_time: bool = True
    ) -> RebuildReport:
        """Make the engine's state again from the stored readings and the recorded
        actions, in event-time order, then save it; for a runner not started.

        ``batches``: the readings ingest stored, in event-time order. Each person's
        action takes effect between the readings at its recorded time; with
        ``actions_move_time`` (a runner on live time, whose ticks moved the engine to each
        action's time before applying it) the engine moves to that time first, without
        (``--event-time``, where actions never moved event time) it does not.

        Everything the replay decides goes through the same idempotent recorder as
        live, so what is on record already (clock records, violations, notices,
        abatements, bills) is found, not made again; what the replay decides that is
        not on record is recorded, since the readings say so, and counted in the
        report. Nothing is queued for delivery: sending a notice stays a person's act
        (``sidewalk notices queue``)."""
        cases = self.recorder.cases
        report = RebuildReport()
        before = self._record_counts()
        numbers_before = {n.number for n in cases.notices.list()}
        reached: set[str] = set()
        cycles: set[str] = set()
        actions = sorted(cases.actions.list(), key=lambda a: (a.at, a.id))
        report.actions = len(actions)
        marks: list[tuple[int, str | None]] = []
        move = actions_move_time
        issuers = self.recorder.on_violation, self.recorder.on_notice
        self.recorder.on_violation = _noting(issuers[0], reached)
        self.recorder.on_notice = _noting(issuers[1], reached)
        try:
            with self._lock:
                for batch in batches:
                    readings = [r for r in batch if self._admitted(r, report)]
                    start = 0
                    for i, reading in enumerate(readings):
                        while actions and actions[0].at < reading.event_time:
                            self._seen(self._handle_many(readings[start:i]), cycles)
                            start = i
                            self._rebuild_action(actions.pop(0), marks, report, cycles, move)
                    self._seen(self._handle_many(readings[start:]), cycles)
                    if readings:
                        report.first = report.first or readings[0].event_time
                        report.last = readings[-1].event_time
                while actions:
                    self._rebuild_action(actions.pop(0), marks, report, cycles, move)
                self._save()
        finally:
            self.recorder.on_violation, self.recorder.on_notice = issuers
        for action_id, error in marks:
            cases.actions.mark_applied(action_id, error=error)
        report.readings = self.processed
        report.storms = len(cycles)
        numbers_after = {n.number for n in cases.notices.list()}
        report.notices_new = sorted(numbers_after - numbers_before)
        report.notices_on_record = sorted(reached & numbers_before)
        after = self._record_counts()
        report.new_records = {k: n - before[k] for k, n in after.items() if n > before[k]}
        return report

    def _admitted(self, reading: Reading, report: RebuildReport) -> bool:
        """Whether the gate takes a stored reading (builds its state for the next start)."""
        if self.engine.gate.admit(reading, time.time_ns() // 10**6) is None:
            return True
        report.skipped += 1
        return False

    def _rebuild_action(
        self,
        action: ActionRecord,
        marks: list[tuple[int, str | None]],
        report: RebuildReport,
        cycles: set[str],
        move: bool,
    ) -> None:
        """Apply one recorded action at its own time (``rebuild``)."""
        if not self._registry_loaded:
            self._load_registry(self.engine.now or action.at)
        events: list[Event] = []
        if move:
            due = self._registry_next
            if due is not None and due <= action.at:
                events += self.engine.advance(due)
                self._follow_registry(due)
            events += self.engine.advance(action.at)
        error: str | None = None
        try:
            person = parse_action(
                action.kind, action.target, action.detail, at=action.at, who=action.who
            )
            events += self.engine.act(person)
        except (KeyError, ValueError) as exc:
            error = str(exc)
        self._commit(events)
        self._seen(events, cycles)
        self.engine.applied_action_id = max(self.engine.applied_action_id, action.id)
        if action.applied_at is None:
            marks.append((action.id, error))
        elif (error is None) != (action.error is None):
            report.actions_differing.append(action.id)

    @staticmethod
    def _seen(events: Sequence[Event], cycles: set[str]) -> None:
        """Note each snowfall (its clearing cycle) the events belong to."""
        for event in events:
            if isinstance(event, Transition) and event.clock == CLEARING:
                cycle = event.detail.get("cycle")
                if isinstance(cycle, str):
                    cycles.add(cycle)

    def _record_counts(self) -> dict[str, int]:
        """How many of each kind of record the case database holds (``rebuild``'s check)."""
        cases = self.recorder.cases
        transitions, after = 0, 0
        while batch := cases.clocks.transitions_after(after, limit=5000):
            transitions += len(batch)
            after = batch[-1].id
        return {
            "clock records": len(cases.clocks.list()),
            "clock transitions": transitions,
            "violations": len(cases.clocks.list_violations()),
            "notices": len(cases.notices.list()),
            "abatements": len(cases.bills.list_abatements()),
            "bills": len(cases.bills.list()),
            "tax roll entries": len(cases.bills.list_tax_roll()),
        }

    def _load_registry(self, at: datetime | None) -> None:
        """Read the registry and watch its frontages as of ``at``."""
        if self._registry is None:
            return
        self._registry.refresh()
        self._follow_registry(at)
        self._registry_loaded = True

    def _follow_registry(self, at: datetime | None) -> None:
        """Watch the registry's frontages as of ``at``; note when they next change."""
        registry = self._registry
        if registry is None:
            return
        if self.engine.set_frontages(registry.specs_at(at)) and self._registry_loaded:
            log.info(
                "analytics now watches %d frontages (registry changes up to %s)",
                len(self.engine.frontages()),
                at,
            )
        self._registry_next = registry.next_change_after(at)

    def _apply_actions(self) -> tuple[list[Event], list[tuple[int, str | None]]]:
        events: list[Event] = []
        marks: list[tuple[int, str | None]] = []
        for action in self.recorder.cases.actions.pending():
            if action.id <= self.engine.applied_action_id:
                marks.append((action.id, None))  # applied before a crash lost only its mark
                continue
            try:
                person = parse_action(
                    action.kind, action.target, action.detail, at=action.at, who=action.who
                )
                applied = self.engine.act(person)
            except (KeyError, ValueError) as exc:
                # Refused (unknown case, step out of order): kept with its reason, never lost.
                self.engine.applied_action_id = action.id
                marks.append((action.id, str(exc)))
                continue
            self.recorder.record(applied)
            self.engine.applied_action_id = action.id
            marks.append((action.id, None))
            events += applied
        return events, marks

    def _commit(self, events: list[Event]) -> None:
        if events:
            self.recorder.record(events)
            if self._on_events is not None:
                self._on_events(events)
        if self.mode == "live":
            self._schedule_next_due()

    def _save(self) -> None:
        state = self.engine.snapshot()
        identity = self._identity or self._own_identity()
        self.recorder.cases.clocks.save_engine_snapshot(
            self.id, self.engine.now, identity.wrap(state.decode())
        )
        self._saved = state
        self._write_failing_since = self._write_failure = None

    @contextmanager
    def _rollback_on_error(self) -> Iterator[None]:
        """On any failure, put the engine back to the state last saved, then re-raise.

        The engine moves before its events are recorded; without this, a case
        database that fails mid-batch would leave the engine past events whose
        records were never written, and the next save would make that
        permanent: the notice would be lost.
        """
        try:
            yield
        except BaseException:
            self.engine.restore(self._saved)
            raise

    def _work(self) -> None:
        """Process a batch, save the engine's state, then acknowledge the batch.

        A crash before the save loses nothing: the broker re-delivers the
        unacknowledged messages to a runner restored from the last snapshot,
        and every record it writes is idempotent.
        """
        stream = self.mode == "stream"
        polled = time.monotonic()
        while True:
            try:
                # In event time no scheduler ticks: this thread takes the people's
                # actions itself, when idle for a tick's length and after batches.
                first = self._queue.get(timeout=self._tick_seconds if stream else None)
            except queue.Empty:
                self._stream_actions()
                polled = time.monotonic()
                continue
            if first is None:
                return
            batch = [first]
            while len(batch) < self._batch_size:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)
                    break
                batch.append(item)
            if not self._run_until_saved(batch):
                return  # stopping: unacknowledged, so the broker delivers it next time
            for msg in batch:
                self._ack(msg)
            with self._count_lock:
                for msg in batch:
                    device = _device_of(msg.topic)
                    left = self._unprocessed.get(device, 0) - 1
                    if left > 0:
                        self._unprocessed[device] = left
                    else:
                        self._unprocessed.pop(device, None)
            if stream and time.monotonic() - polled >= self._tick_seconds:
                self._stream_actions()
                polled = time.monotonic()

    def _stream_actions(self) -> None:
        """Apply the actions people recorded, in ``stream`` mode (``tick`` applies them
        and saves; no clock advance there). Each takes effect at its own recorded time,
        as live: a service recorded for 9:00 starts its period at 9:00 of event time.
        A failure is logged and retried on the next poll; the actions stay pending."""
        if self.engine.now is None:
            return  # event time has not begun: no frontage is watched yet, all would refuse
        try:
            self.tick()
        except Exception:
            log.exception("analytics could not apply the recorded actions; retrying")

    def _received(self, msg: MqttMessage) -> None:
        """paho's thread: count the message against its device, then queue it."""
        device = _device_of(msg.topic)
        with self._count_lock:
            self._unprocessed[device] = self._unprocessed.get(device, 0) + 1
        self._queue.put(msg)

    def _behind(self) -> list[str]:
        """Poles whose evidence analytics knows is queued, not silent.

        Every pole while analytics is not connected, and for a tick's length after it
        (re)connects: a persistent session's queued readings are on their way. Then
        each pole with messages received and not yet processed. The engine does not
        count their wait for evidence meanwhile."""
        client = self._client
        if client is None or not client.is_connected:
            self._connected_since = None
            return self.engine.devices
        now = time.monotonic()
        if self._connected_since is None:
            self._connected_since = now
        if now - self._connected_since < self._tick_seconds:
            return self.engine.devices
        with self._count_lock:
            return sorted(d for d, n in self._unprocessed.items() if n > 0)

    def _run_until_saved(self, batch: list[MqttMessage]) -> bool:
        """Handle the batch and save the state, retrying from the saved state until it works.

        The broker does not re-deliver an unacknowledged message on the same
        connection, so a failed batch is retried here (the case database
        restarting, a lock timeout), with backoff, until it is saved or the
        runner stops. False only when stopped first.
        """
        wait_s = 0.5
        while True:
            try:
                with self._lock, self._rollback_on_error():
                    self._handle_many(self._admit_many(batch))
                    self._save()
                return True
            except Exception as exc:
                self._record_failed(exc)
                log.exception(
                    "analytics could not record a batch of %d; retrying in %.1fs from the "
                    "last saved state (nothing acknowledged)",
                    len(batch),
                    wait_s,
                )
            if self._stopping.wait(wait_s):
                return False
            wait_s = min(wait_s * 2, 30.0)

    def _handle_many(self, readings: list[Reading]) -> list[Event]:
        """``_handle`` on each reading, handed to the engine together (``step_many``;
        ``advance=False`` live): the same events, recorded once for the batch."""
        if not readings:
            return []
        events: list[Event] = []
        if not self._registry_loaded:
            self._load_registry(self.engine.now or readings[0].event_time)
        stream = self.mode == "stream"
        start = 0
        for i, reading in enumerate(readings):
            due = self._registry_next
            if stream and due is not None and due <= reading.event_time:
                # A registry change between two readings: the ones before it, then the
                # change at its own time, then on (as ``_handle`` does one by one).
                # Ignored: the contract's ``Reading`` is wider than the engine's ``AnyReading``.
                events += self.engine.step_many(readings[start:i])  # type: ignore[arg-type]
                start = i
                events += self.engine.advance(due)
                self._follow_registry(due)
        # Ignored: the contract's ``Reading`` is wider than the engine's ``AnyReading``.
        events += self.engine.step_many(readings[start:], advance=stream)  # type: ignore[arg-type]
        self._commit(events)
        self.processed += len(readings)
        return events

    def _admit(self, msg: MqttMessage) -> Reading | None:
        """The message's reading, if the engine is to see it (parsed, through the gate)."""
        admitted = self._admit_many([msg])
        return admitted[0] if admitted else None

    def _admit_many(self, batch: Sequence[MqttMessage]) -> list[Reading]:
        """The batch's readings the engine is to see: parsed, then through the gate
        together, so each is judged by its pole's next reading too (as ingest's store)."""
        readings: list[Reading] = []
        topics: list[str] = []
        for msg in batch:
            try:
                payload = parse_payload(msg.topic, msg.payload)
            except ContractError:
                continue  # ingest dead-letters it with the reason; analytics skips it
            if isinstance(payload, Reading):
                readings.append(payload)
                topics.append(msg.topic)
        if not readings:
            return []
        received = to_ms(self.clock.now()) if self.mode == "live" else time.time_ns() // 10**6
        skips = self.engine.gate.admit_many(readings, received)
        for reading, topic, skip in zip(readings, topics, skips, strict=True):
            if skip is not None:
                # A pole re-sends whatever its watermark has not covered: duplicates are routine.
                log.log(
                    logging.DEBUG if skip == "duplicate" else logging.WARNING,
                    "analytics skips %s seq %d: %s",
                    topic,
                    reading.seq,
                    skip,
                    extra={"reason": skip, "device": reading.device, "seq": reading.seq},
                )
        return [r for r, skip in zip(readings, skips, strict=True) if skip is None]

    def _ack(self, msg: MqttMessage) -> None:
        if self._client is None:
            return
        try:
            self._client.ack(msg)
        except MqttError:
            # Disconnected meanwhile: the broker re-delivers, and every write is idempotent.
            log.warning("could not acknowledge %s; it will come again", msg.topic)

    # -- scheduling ------------------------------------------------------------

    def _start_scheduler(self) -> None:
        # Deferred: APScheduler is slow to import; replays and tests never schedule.
        from apscheduler.jobstores.memory import MemoryJobStore

        store = self.recorder.cases.job_store() if self._persist_jobs else MemoryJobStore()
        scheduler = deadline_scheduler()(
            jobstores={"default": store},
            # tick() serialises on the engine lock; a deadline job rescheduled while
            # the previous one is still finishing must not be skipped.
            job_defaults={"coalesce": True, "misfire_grace_time": None, "max_instances": 3},
            timezone="UTC",
        )
        scheduler.add_job(
            fire_due, "interval", seconds=self._tick_seconds, args=[self.id],
            id=f"{self.id}:tick", replace_existing=True,
        )  # fmt: skip
        scheduler.start()
        self._scheduler = scheduler

    def _schedule_next_due(self) -> None:
        due = self.engine.next_due()
        job_id = f"{self.id}:next-due"
        if self._scheduler is None:
            return
        # A date job that has fired is gone: schedule again even for the same instant.
        if due == self._scheduled_due and (due is None or self._scheduler.get_job(job_id)):
            return
        if due is None:
            # The date job may fire (and so vanish) between a look-up and the removal:
            # ``deadline_scheduler``'s ``remove_job`` takes a job already gone as gone.
            self._scheduler.remove_job(job_id)
        else:
            self._scheduler.add_job(
                fire_due, "date", run_date=due, args=[self.id], id=job_id, replace_existing=True
            )
        self._scheduled_due = due
