"""What ingest exposes: its counters and backlog, the store's dead letters, gaps and devices.

Collectors read existing state at scrape time (``IngestStats``, the consumer's
queue, the SQLite time series), so no hot path carries metric calls. The one
timing, the store commit, is a histogram observed by ``TimedStore`` around
``write_batch``, outside the consumer. Names follow Prometheus conventions:
base units in the name, ``_total`` on counters. ``docs/observability.md``
lists every metric.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

from sidewalk.core.contract import AnyReading, TimePolicy
from sidewalk.core.health import (
    Check,
    Pingable,
    database_reachable,
    sqlite_writable,
    threads_alive,
)
from sidewalk.core.observability import (
    Observability,
    RenderedFamily,
    go_float,
    go_seconds,
    label_value,
)
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.space import FreeSpaceFloor
from sidewalk.storage.timeseries import BatchResult, DeadLetter, StatusUpdate, TimeSeriesStore

# The documented default port (docs/observability.md); off unless configured.
INGEST_PORT: Final = 9464
# A fsync'd SQLite commit takes milliseconds; a stalled disk takes seconds.
COMMIT_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class IngestCollector(Collector):
    """``IngestStats`` and the consumer's uncommitted backlog."""

    def __init__(self, consumer: IngestConsumer) -> None:
        self._consumer = consumer

    def collect(self) -> Iterable[Metric]:
        s = self._consumer.stats
        counters = (
            ("sidewalk_ingest_received_messages", "Messages received and committed", s.received),
            ("sidewalk_readings_stored", "Readings stored (new, not duplicates)", s.stored),
            (
                "sidewalk_readings_duplicate",
                "Readings dropped as (device, seq) dupes",
                s.duplicates,
            ),
            (
                "sidewalk_readings_conflicting",
                "Re-sent (device, seq) copies whose content differs (seq_conflict dead letters)",
                s.conflicts,
            ),
            (
                "sidewalk_ingest_dead_letters",
                "Dead letters written by this process",
                s.dead_letters,
            ),
            ("sidewalk_ingest_statuses", "Device status messages recorded", s.statuses),
            ("sidewalk_seq_gaps_opened", "Seq gaps opened by this process", s.gaps_opened),
            ("sidewalk_ingest_batches", "Batches committed", s.batches),
            (
                "sidewalk_readings_quarantined",
                "Readings held as implausible_time dead letters (ts implausible)",
                s.quarantined,
            ),
            (
                "sidewalk_seq_epochs_started",
                "Seq spaces begun (new or re-imaged poles)",
                s.epochs_started,
            ),
            (
                "sidewalk_ingest_too_large_messages",
                "Messages over the size limit for their stream (too_large dead letters)",
                s.too_large,
            ),
            (
                "sidewalk_ingest_evidence_over_quota",
                "Evidence JPEGs refused by their device's daily quota (evidence_quota)",
                s.over_quota,
            ),
        )
        for name, doc, value in counters:
            yield CounterMetricFamily(name, doc, value=value)
        mqtt = self._consumer.mqtt
        yield CounterMetricFamily(
            "sidewalk_ingest_mqtt_handler_errors",
            "Exceptions raised while handing received messages over (logged with the topic)",
            value=mqtt.handler_errors,
        )
        yield CounterMetricFamily(
            "sidewalk_ingest_session_takeovers",
            "Times the broker gave ingest's session to another client with its client id",
            value=mqtt.session_takeovers,
        )
        known = self._consumer.known_devices
        if known is not None:
            unknown = CounterMetricFamily(
                "sidewalk_ingest_unknown_device_messages",
                "Messages from devices the registry does not know (unknown_device dead letters)",
                labels=["site"],
            )
            for site, count in sorted(known.unknown_by_site.items()):
                unknown.add_metric([site], count)
            yield unknown
            yield GaugeMetricFamily(
                "sidewalk_ingest_known_devices", "Poles in the registry", value=len(known)
            )
        yield GaugeMetricFamily(
            "sidewalk_ingest_consumer_lag_messages",
            "Messages received from the broker but not yet committed and acknowledged",
            value=self._consumer.pending,
        )
        problem = getattr(self._consumer, "write_problem", None)
        yield GaugeMetricFamily(
            "sidewalk_ingest_refusing",
            "1 while ingest writes and acknowledges nothing (disk below its floor, write failing)",
            value=1.0 if problem else 0.0,
        )
        age = getattr(self._consumer, "oldest_pending_age_s", None)
        if isinstance(age, int | float):
            yield GaugeMetricFamily(
                "sidewalk_ingest_oldest_pending_age_seconds",
                "Age of the oldest received but uncommitted message",
                value=float(age),
            )


# One device's lines: last seen (b"" before it was heard), online, max seq.
_DeviceLines = tuple[bytes, bytes, bytes]
_Row = tuple[Any, ...]  # device, max_seq, status, last_seen_at, clock_faults
_SEEN: Final = "sidewalk_device_last_seen_timestamp_seconds"
_ONLINE: Final = "sidewalk_device_online"
_MAX_SEQ: Final = "sidewalk_device_max_seq"


def _device_lines(row: _Row) -> _DeviceLines:
    """A device's three lines, as ``sample_line`` writes them (inlined: 5,000 poles)."""
    device, top, status, last_seen, _ = row
    labels = f'{{device="{label_value(device)}"}} '
    return (
        b"" if last_seen is None else f"{_SEEN}{labels}{go_seconds(last_seen)}\n".encode(),
        f"{_ONLINE}{labels}{'1.0' if status == 'online' else '0.0'}\n".encode(),
        f"{_MAX_SEQ}{labels}{go_float(top)}\n".encode(),
    )


class StoreCollector(Collector):
    """Dead letters, seq gaps and device bookkeeping, read from the SQLite time series.

    Its own read-only connection: a scrape never waits on ingest's writer lock
    (WAL lets readers run beside the writer).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        # Each device's exposition lines by its ``devices`` row, rendered when the row
        # changed and kept from one scrape to the next: thousands of poles, most
        # unchanged between scrapes (a scrape under 100 ms with 5,000).
        self._device_lines: dict[_Row, _DeviceLines] = {}
        # The last scrape's rows and the three families' joined lines.
        self._rows: list[_Row] = []
        self._blocks: tuple[bytes, bytes, bytes] = (b"", b"", b"")

    def _query(self, sql: str) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._db is None:
                self._db = sqlite3.connect(
                    f"file:{self.path}?mode=ro", uri=True, check_same_thread=False, timeout=5
                )
            return self._db.execute(sql).fetchall()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def collect(self) -> Iterable[Metric]:
        dead = CounterMetricFamily(
            "sidewalk_dead_letters", "Dead letters in the store, by reason", labels=["reason"]
        )
        for reason, count in self._query(
            "SELECT reason, COUNT(*) FROM dead_letters GROUP BY reason ORDER BY reason"
        ):
            dead.add_metric([reason], count)
        yield dead
        gaps = GaugeMetricFamily(
            "sidewalk_seq_gaps",
            "Seq gaps by device; state open (still awaited) or lost (the pole no longer holds it)",
            labels=["device", "state"],
        )
        missing = GaugeMetricFamily(
            "sidewalk_seq_gap_readings",
            "Readings inside seq gaps, by device and state",
            labels=["device", "state"],
        )
        for device, state, count, readings in self._query(
            "SELECT device, CASE WHEN lost_at IS NULL THEN 'open' ELSE 'lost' END AS state,"
            " COUNT(*), SUM(to_seq - from_seq + 1) FROM seq_gaps GROUP BY device, state"
        ):
            gaps.add_metric([device, state], count)
            missing.add_metric([device, state], readings)
        yield gaps
        yield missing
        rows = self._query(
            "SELECT device, max_seq, status, last_seen_at, clock_faults FROM devices"
            " ORDER BY device"
        )
        seen, online, max_seq = self._device_blocks(rows)
        device = ("device",)
        yield RenderedFamily(
            _SEEN, "When ingest last heard from the device (Unix time)", "gauge",
            lines=seen, label_names=device,
            samples=lambda: [
                Sample(_SEEN, {"device": r[0]}, r[3] / 1000) for r in rows if r[3] is not None
            ],
        )  # fmt: skip
        yield RenderedFamily(
            _ONLINE, "1 when the device's last status was online", "gauge",
            lines=online, label_names=device,
            samples=lambda: [
                Sample(_ONLINE, {"device": r[0]}, 1.0 if r[2] == "online" else 0.0) for r in rows
            ],
        )  # fmt: skip
        yield RenderedFamily(
            _MAX_SEQ, "Highest seq stored from the device", "gauge",
            lines=max_seq, label_names=device,
            samples=lambda: [Sample(_MAX_SEQ, {"device": r[0]}, r[1]) for r in rows],
        )  # fmt: skip
        clock_faults = CounterMetricFamily(
            "sidewalk_device_clock_faults",
            "Readings of the device quarantined for an implausible time (its clock jumped)",
            labels=["device"],
        )
        # Only poles whose clock has jumped: a series per pole per scrape adds up
        # (the scrape stays small with thousands of registered poles).
        for row in rows:
            if row[4]:
                clock_faults.add_metric([row[0]], row[4])
        yield clock_faults

    def _device_blocks(self, rows: list[_Row]) -> tuple[bytes, bytes, bytes]:
        """The three per-device families' lines: a changed row's rendered anew, the
        others' as kept; a device gone from the table is dropped."""
        with self._lock:  # two scrapes at once share the kept lines
            if rows == self._rows:
                return self._blocks
            kept, fresh = self._device_lines, {}
            for row in rows:
                lines = kept.get(row)
                fresh[row] = _device_lines(row) if lines is None else lines
            every = fresh.values()
            self._blocks = (
                b"".join([lines[0] for lines in every]),
                b"".join([lines[1] for lines in every]),
                b"".join([lines[2] for lines in every]),
            )
            self._device_lines, self._rows = fresh, rows
            return self._blocks


class SpaceCollector(Collector):
    """Free space on the stores' file system and the floor ingest refuses below."""

    def __init__(self, space: FreeSpaceFloor) -> None:
        self._space = space

    def collect(self) -> Iterable[Metric]:
        report = self._space.report()
        yield GaugeMetricFamily(
            "sidewalk_storage_free_bytes",
            "Free bytes on the stores' fullest file system (for an unprivileged writer)",
            value=report.free_bytes,
        )
        yield GaugeMetricFamily(
            "sidewalk_storage_free_floor_bytes",
            "Below this many free bytes ingest refuses new messages (they wait at the broker)",
            value=report.floor_bytes,
        )


class TimedStore:
    """A ``TimeSeriesStore`` that times each durable ``write_batch`` into a histogram."""

    def __init__(self, store: TimeSeriesStore, registry: CollectorRegistry) -> None:
        self.inner = store
        self.commit_seconds = Histogram(
            "sidewalk_ingest_commit_seconds",
            "Time to write one batch durably (readings, statuses, dead letters)",
            buckets=COMMIT_BUCKETS,
            registry=registry,
        )

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
        started = time.perf_counter()
        try:
            return self.inner.write_batch(
                readings,
                sites=sites,
                statuses=statuses,
                dead_letters=dead_letters,
                received_at_ms=received_at_ms,
                time_policy=time_policy,
            )
        finally:
            self.commit_seconds.observe(time.perf_counter() - started)

    def stored_up_to(self, device: str) -> int:
        return self.inner.stored_up_to(device)

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
        return self.inner.readings(
            device=device,
            stream=stream,
            frontage=frontage,
            start_ms=start_ms,
            end_ms=end_ms,
            limit=limit,
        )

    def close(self) -> None:
        self.inner.close()


class ViewWriter(Protocol):
    """The time-series view's forwarder (``InfluxForwarder``): why it is not writing."""

    @property
    def problem(self) -> str | None: ...


class HealthRecorder(Protocol):
    """The poles' health listener (``HealthListener``): why it is not recording, or
    not receiving."""

    @property
    def record_problem(self) -> str | None: ...

    @property
    def listen_problem(self) -> str | None: ...


def _writer_ready(consumer: IngestConsumer) -> Check:
    """Readiness of the writer thread: without it nothing received is stored or acknowledged."""
    return lambda: (
        None
        if consumer.writer_alive
        else "ingest-writer thread not running: nothing received is stored or acknowledged"
    )


def _case_database_ready(health: HealthRecorder, cases: Pingable) -> Check:
    """Readiness of the case database ingest writes the poles' health reports to: the last
    report was recorded, and it answers a round trip."""
    reachable = database_reachable(cases)
    return lambda: health.record_problem or reachable()


def _broker_ready(consumer: IngestConsumer) -> Check:
    """Readiness of the broker session: connected, network thread alive, our own session."""
    return lambda: consumer.mqtt.problem


def _store_ready(consumer: IngestConsumer, store_path: Path) -> Check:
    """Readiness of the store: no failing commit, and a write transaction can begin."""
    writable = sqlite_writable(store_path)

    def check() -> str | None:
        problem = getattr(consumer, "write_problem", None)
        if isinstance(problem, str) and not problem.startswith("disk space low"):
            return f"writes failing: {problem}"
        return writable()

    return check


def ingest_observability(
    consumer: IngestConsumer,
    store_path: Path,
    registry: CollectorRegistry | None = None,
    *,
    space: FreeSpaceFloor | None = None,
    view: ViewWriter | None = None,
    health: HealthRecorder | None = None,
    cases: Pingable | None = None,
) -> Observability:
    """Ingest: counters, lag, dead letters, gaps and devices; writer alive. Ready while
    its session is its own, its writer runs, and each store it writes takes writes:
    the readings store, the time-series view (``view``, when configured) and the case
    database (``health`` with ``cases``, when it records the poles' health), the health
    listener's broker session (``health``); and the disk."""
    registry = registry or CollectorRegistry()
    registry.register(IngestCollector(consumer))
    registry.register(StoreCollector(store_path))
    ready: dict[str, Check] = {
        "broker": _broker_ready(consumer),
        "writer": _writer_ready(consumer),
        "store": _store_ready(consumer, store_path),
    }
    if view is not None:
        ready["view"] = lambda: view.problem
    if health is not None:
        # Its own broker session: a dead one would leave every pole looking silent.
        ready["health_reports"] = lambda: health.listen_problem
    if health is not None and cases is not None:
        ready["database"] = _case_database_ready(health, cases)
    if space is not None:
        registry.register(SpaceCollector(space))
        ready["disk"] = space.problem
    return Observability(registry, live={"writer": threads_alive(["ingest-writer"])}, ready=ready)
