"""What each long-running process exposes: its registry, liveness and readiness checks.

``ingest_observability`` / ``analytics_observability`` / ``device_observability``
return an ``Observability`` whose ``serve(host, port)`` starts the endpoints.
Liveness asks only "are this process's worker threads running"; readiness
asks whether it can do its work now: broker connected, store writable,
database reachable.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry

from sidewalk.observability.health import Check, flag, threads_alive
from sidewalk.observability.metrics import (
    AnalyticsCollector,
    CaseCollector,
    DeviceCollector,
    IngestCollector,
    StoreCollector,
)
from sidewalk.observability.server import DEFAULT_HOST, ObservabilityServer

if TYPE_CHECKING:
    from sidewalk.analytics.runner import AnalyticsRunner
    from sidewalk.edge.device import Device
    from sidewalk.ingest.consumer import IngestConsumer
    from sidewalk.storage.cases import CaseStore

# Documented per-process defaults (docs/observability.md); off unless configured.
INGEST_PORT = 9464
ANALYTICS_PORT = 9465
EDGE_PORT = 9466


@dataclass
class Observability:
    """One process's metrics registry and its two sets of checks."""

    registry: CollectorRegistry
    live: dict[str, Check] = field(default_factory=dict)
    ready: dict[str, Check] = field(default_factory=dict)

    def serve(self, host: str = DEFAULT_HOST, port: int = 0) -> ObservabilityServer:
        """Start ``/metrics``, ``/healthz`` and ``/readyz`` on ``host:port`` (0 = any free)."""
        server = ObservabilityServer(
            self.registry, live=self.live, ready=self.ready, host=host, port=port
        )
        server.start()
        return server


def sqlite_writable(path: Path, timeout_s: float = 1.0) -> Check:
    """Readiness: a write transaction on the SQLite file can begin (then is rolled back)."""

    def check() -> str | None:
        if not path.exists():
            return f"{path.name} does not exist"
        try:
            db = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute("ROLLBACK")
            finally:
                db.close()
        except sqlite3.Error as exc:
            return f"{path.name} not writable: {exc}"
        return None

    return check


def database_reachable(cases: CaseStore) -> Check:
    """Readiness: the case database answers a round trip."""

    def check() -> str | None:
        cases.ping()
        return None

    return check


def _consumer_connected(consumer: IngestConsumer) -> bool:
    connected = getattr(consumer, "connected", None)
    if isinstance(connected, bool):
        return connected
    # Until the consumer exposes ``connected``: its client's own flag.
    return bool(consumer._client.is_connected)


def ingest_observability(
    consumer: IngestConsumer, store_path: Path, registry: CollectorRegistry | None = None
) -> Observability:
    """Ingest: counters, lag, dead letters, gaps and devices; writer alive; broker and store."""
    registry = registry or CollectorRegistry()
    registry.register(IngestCollector(consumer))
    registry.register(StoreCollector(store_path))
    return Observability(
        registry,
        live={"writer": threads_alive(["ingest-writer"])},
        ready={
            "broker": flag(lambda: _consumer_connected(consumer), "not connected to the broker"),
            "store": sqlite_writable(store_path),
        },
    )


def analytics_observability(
    runner: AnalyticsRunner, registry: CollectorRegistry | None = None
) -> Observability:
    """Analytics: clocks by state and progress; worker alive; broker and case database."""
    registry = registry or CollectorRegistry()
    registry.register(AnalyticsCollector(runner))
    threads = [f"analytics-{runner.id}"]
    if runner.mode == "live":
        threads.append("APScheduler")  # fires the deadlines; its thread's fixed name
    return Observability(
        registry,
        live={"worker": threads_alive(threads)},
        ready={
            "broker": flag(lambda: runner.connected, "not connected to the broker"),
            "database": database_reachable(runner.recorder.cases),
        },
    )


def dashboard_collectors(
    cases: CaseStore, registry: CollectorRegistry | None = None
) -> CollectorRegistry:
    """The dashboard's registry: notices from the case records."""
    registry = registry or CollectorRegistry()
    registry.register(CaseCollector(cases))
    return registry


def device_observability(
    device: Device, registry: CollectorRegistry | None = None
) -> Observability:
    """A pole (after ``start()``): buffer depth and session; publisher alive; broker and buffer."""
    registry = registry or CollectorRegistry()
    registry.register(DeviceCollector(device))
    ready: dict[str, Check] = {
        "broker": flag(
            lambda: device.publisher is not None and device.publisher.connected,
            "not connected to the broker (readings keep buffering)",
        ),
    }
    if device.buffer is not None:
        ready["buffer"] = sqlite_writable(device.buffer.path)
    return Observability(
        registry, live={"publisher": threads_alive([f"publisher-{device.device}"])}, ready=ready
    )
