"""Builders shared by the data-path tests: unique ids, a running ingest, a pole."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sidewalk.core.contract import TimePolicy
from sidewalk.core.mqtt import MqttSettings
from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.edge.publisher import Publisher
from sidewalk.edge.simulated import ScenarioReading
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

T0 = 1_764_460_800_000  # 2025-11-30T00:00:00Z
DAY_MS = 86_400_000


def scenario_clock(at_ms: int = T0 + DAY_MS) -> Callable[[], int]:
    """Ingest's receipt clock for readings dated by a scenario (``now_ms=``): it reads
    ``at_ms`` now and runs on with the real time.

    A reading stamped from ``T0`` is judged against this, not the machine's date: the
    "too old" rule (older than a pole's buffer holds, 731 days) would otherwise refuse
    every reading of these tests from 2027-12-01 on. A day after ``T0`` by default, so
    readings of the scenario's first day are behind their receipt, never ahead of it.
    """
    start = time.monotonic_ns()
    return lambda: at_ms + (time.monotonic_ns() - start) // 1_000_000


def slug(prefix: str) -> str:
    """A fresh id, so tests sharing one broker never see each other's traffic."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def settings(host: str, port: int, client_id: str, **kw: Any) -> MqttSettings:
    """Broker settings with the tests' short reconnect delays."""
    return MqttSettings(host=host, port=port, client_id=client_id, reconnect_max_s=1, **kw)


def storm(n: int, frontage: str = "main-st-101", t0: int = T0) -> list[ScenarioReading]:
    """n readings alternating weather and per-frontage snow, one per minute from ``t0``."""
    out: list[ScenarioReading] = []
    for i in range(n):
        ts = t0 + i * 60_000
        if i % 2 == 0:
            weather = {"air_temp_c": -5.0 + i % 7, "precip_mm": 0.2}
            out.append(ScenarioReading(ts, "weather", weather))
        else:
            out.append(
                ScenarioReading(
                    ts,
                    "snow",
                    {
                        "frontage": frontage,
                        "snow_cover_fraction": (i % 10) / 10,
                        "cleared_width_mm": float(i % 1500),
                    },
                )
            )
    return out


@contextmanager
def running_ingest(
    host: str,
    port: int,
    db: Path,
    site: str,
    *,
    client_id: str | None = None,
    connect_timeout_s: float = 3.0,
    **kw: Any,
) -> Iterator[IngestConsumer]:
    """An ingest consumer for one site, stopped (and its store closed) on exit.

    Tests replay storms dated by their scenario, not the wall clock, so by
    default no reading is judged "ahead" (pass ``time_policy`` to judge).
    """
    store = SqliteTimeSeriesStore(db)
    mqtt = settings(host, port, client_id or slug("ingest"), connect_timeout_s=connect_timeout_s)
    kw.setdefault("time_policy", TimePolicy(max_ahead_ms=None))
    consumer = IngestConsumer(store, mqtt, site=site, **kw)
    consumer.start()
    try:
        yield consumer
    finally:
        consumer.stop()
        store.close()


@contextmanager
def running_publisher(
    host: str,
    port: int,
    buffer_path: Path,
    site: str,
    device: str,
    *,
    connect_timeout_s: float = 3.0,
    max_rows: int = 1_000_000,
    **kw: Any,
) -> Iterator[Publisher]:
    """A started publisher over a disk buffer, stopped (and buffer closed) on exit."""
    buffer = ReadingBuffer(buffer_path, device, max_rows=max_rows)
    mqtt = settings(host, port, f"pole-{device}", connect_timeout_s=connect_timeout_s)
    publisher = Publisher(buffer, mqtt, site=site, **kw)
    publisher.start()
    try:
        yield publisher
    finally:
        publisher.stop()
        buffer.close()
