"""Prometheus collectors that read each component's existing state at scrape time.

Counters come from state that only grows (``IngestStats``, rows in the store,
notices in the case records); gauges from what is true now (queue depths,
clock states, device bookkeeping). The one timing, the store commit, is a
histogram observed by ``TimedStore`` around ``write_batch``, outside ingest.
Names follow Prometheus conventions: base units in the name, ``_total`` on
counters. ``docs/observability.md`` lists every metric.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from sidewalk.core.contract import AnyReading
from sidewalk.storage.timeseries import BatchResult, DeadLetter, StatusUpdate, TimeSeriesStore

if TYPE_CHECKING:
    from sidewalk.analytics.clocks.engine import ClockEngine
    from sidewalk.analytics.runner import AnalyticsRunner
    from sidewalk.edge.device import Device
    from sidewalk.ingest.consumer import IngestConsumer
    from sidewalk.storage.cases import CaseStore

# A fsync'd SQLite commit takes milliseconds; a stalled disk takes seconds.
COMMIT_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


# -- pure: what the engine holds, by clock kind and state ------------------------------


def clock_states(engine: ClockEngine) -> Counter[tuple[str, str]]:
    """How many clocks of each kind are in each state (the clock kinds of ``docs/clocks.md``)."""
    counts: Counter[tuple[str, str]] = Counter()
    for clock in engine.clocks.values():
        counts["clearing", clock.state] += 1
    for case in engine.enforcement.cases.values():
        counts["enforcement", case.state] += 1
    for subgrade in engine.cold.subgrade.values():
        counts["frozen_subgrade", subgrade.state] += 1
    for keep_off in engine.cold.keep_off.values():
        counts["keep_off", keep_off.state] += 1
    for permit in engine.cold.permits.values():
        counts["opening_permit", permit.state] += 1
    for obstruction in engine.street.obstructions.values():
        counts["obstruction", obstruction.state] += 1
    for sweeping in engine.street.sweeping.values():
        counts["sweeping", sweeping.state] += 1
    return counts


# -- ingest ----------------------------------------------------------------------------


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
                "sidewalk_ingest_dead_letters",
                "Dead letters written by this process",
                s.dead_letters,
            ),
            ("sidewalk_ingest_statuses", "Device status messages recorded", s.statuses),
            ("sidewalk_seq_gaps_opened", "Seq gaps opened by this process", s.gaps_opened),
            ("sidewalk_ingest_batches", "Batches committed", s.batches),
        )
        for name, doc, value in counters:
            yield CounterMetricFamily(name, doc, value=value)
        yield GaugeMetricFamily(
            "sidewalk_ingest_consumer_lag_messages",
            "Messages received from the broker but not yet committed and acknowledged",
            value=self._consumer.pending,
        )
        age = getattr(self._consumer, "oldest_pending_age_s", None)
        if isinstance(age, int | float):
            yield GaugeMetricFamily(
                "sidewalk_ingest_oldest_pending_age_seconds",
                "Age of the oldest received but uncommitted message",
                value=float(age),
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
        seen = GaugeMetricFamily(
            "sidewalk_device_last_seen_timestamp_seconds",
            "When ingest last heard from the device (Unix time)",
            labels=["device"],
        )
        online = GaugeMetricFamily(
            "sidewalk_device_online",
            "1 when the device's last status was online",
            labels=["device"],
        )
        max_seq = GaugeMetricFamily(
            "sidewalk_device_max_seq", "Highest seq stored from the device", labels=["device"]
        )
        for device, top, status, last_seen in self._query(
            "SELECT device, max_seq, status, last_seen_at FROM devices ORDER BY device"
        ):
            if last_seen is not None:
                seen.add_metric([device], last_seen / 1000)
            online.add_metric([device], 1.0 if status == "online" else 0.0)
            max_seq.add_metric([device], top)
        yield seen
        yield online
        yield max_seq


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
    ) -> BatchResult:
        started = time.perf_counter()
        try:
            return self.inner.write_batch(
                readings,
                sites=sites,
                statuses=statuses,
                dead_letters=dead_letters,
                received_at_ms=received_at_ms,
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


# -- analytics -------------------------------------------------------------------------


class AnalyticsCollector(Collector):
    """The clock engine's states and the runner's progress."""

    def __init__(self, runner: AnalyticsRunner) -> None:
        self._runner = runner

    def collect(self) -> Iterable[Metric]:
        runner = self._runner
        # Under the runner's lock: the worker thread mutates these dicts.
        counts, now = runner.inspect(lambda engine: (clock_states(engine), engine.now))
        clocks = GaugeMetricFamily(
            "sidewalk_clocks", "Clocks in the engine by kind and state", labels=["kind", "state"]
        )
        for (kind, state), count in sorted(counts.items()):
            clocks.add_metric([kind, state], count)
        yield clocks
        yield CounterMetricFamily(
            "sidewalk_analytics_processed_readings",
            "Readings the engine has observed since start",
            value=runner.processed,
        )
        yield GaugeMetricFamily(
            "sidewalk_analytics_pending_messages",
            "Messages received by analytics and not yet processed",
            value=runner.pending,
        )
        if now is not None:
            yield GaugeMetricFamily(
                "sidewalk_analytics_event_time_seconds",
                "The engine's event time (Unix time); behind wall time while catching up",
                value=now.timestamp(),
            )


# -- case records (the dashboard) ------------------------------------------------------


class CaseCollector(Collector):
    """Notices in the case records, by kind and by status."""

    def __init__(self, cases: CaseStore) -> None:
        self._cases = cases

    def collect(self) -> Iterable[Metric]:
        # Counted by the database: a scrape never loads the notices' bodies.
        counts = self._cases.notice_counts()
        by_kind: Counter[str] = Counter()
        by_status: Counter[str] = Counter()
        for (kind, status), n in counts.items():
            by_kind[kind] += n
            by_status[status] += n
        issued = CounterMetricFamily("sidewalk_notices", "Notices issued, by kind", labels=["kind"])
        for kind, count in sorted(by_kind.items()):
            issued.add_metric([kind], count)
        yield issued
        status_family = GaugeMetricFamily(
            "sidewalk_notices_by_status", "Notices by current status", labels=["status"]
        )
        for name, count in sorted(by_status.items()):
            status_family.add_metric([name], count)
        yield status_family


# -- a pole ----------------------------------------------------------------------------


class DeviceCollector(Collector):
    """A pole's disk buffer, its counters and its broker session."""

    def __init__(self, device: Device) -> None:
        self._device = device

    def collect(self) -> Iterable[Metric]:
        d = self._device
        labels = [d.device]
        buffer, publisher = d.buffer, d.publisher

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            g = GaugeMetricFamily(name, doc, labels=["device"])
            g.add_metric(labels, value)
            return g

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            c = CounterMetricFamily(name, doc, labels=["device"])
            c.add_metric(labels, value)
            return c

        if buffer is not None:
            yield gauge(
                "sidewalk_device_buffer_depth_readings",
                "Readings held in the pole's disk buffer (not yet confirmed stored)",
                len(buffer),
            )
            yield counter(
                "sidewalk_device_buffer_dropped_readings",
                "Readings the buffer's bound discarded unsent",
                buffer.dropped,
            )
        if publisher is not None:
            yield gauge(
                "sidewalk_device_connected", "1 while the MQTT session is up", publisher.connected
            )
            yield gauge(
                "sidewalk_device_stored_watermark_seq",
                "The server's latest stored-up-to seq for this pole",
                publisher.watermark,
            )
        yield counter("sidewalk_device_readings", "Readings recorded", d.stats.readings)
        flagged = CounterMetricFamily(
            "sidewalk_device_flagged_values",
            "Sensor values withheld as not good, by sensor/quantity/quality",
            labels=["device", "key"],
        )
        for key, count in sorted(d.stats.flagged.items()):
            flagged.add_metric([d.device, key], count)
        yield flagged
