"""InfluxDB v2 write path and Flux query building: the one module that owns influxdb-client.

Writes use the v2 write API in batching mode (gzip, retries with exponential
backoff), so they work with InfluxDB 2/3 and with servers that implement the
same endpoint (VictoriaMetrics, used by the tests).

Mapping of a contract reading to line protocol (``reading_to_point``):

- measurement = the stream (``weather``, ``snow``, ``frame``);
- tags = ``device``, ``site`` (when known, from the topic) and ``frontage``
  (snow and frame readings);
- fields = every measured value under its unit-carrying name
  (``snow_depth_mm``, ``cleared_width_mm`` …) plus ``seq``; absent values are
  not written. A field's type follows the contract's annotation (a float field
  stays float even when JSON delivered ``3``), because InfluxDB rejects a field
  whose type changes between points;
- time = ``ts`` at millisecond precision.

Two writers. ``InfluxForwarder`` is what ingest uses: SQLite is the system of
record, so the InfluxDB view catches up from the SQLite store's export log and
a durable cursor, never from memory; a server that is down for hours, or an
ingest killed with ``-9``, costs a delay, not points. Delivery into InfluxDB is
at least once: a batch written again after a crash overwrites itself, because
a point with the same measurement, tags and timestamp replaces the old one.
``InfluxWriter`` is the library's batching writer (in memory, retried, then
given up), for one-off loads.
"""

from __future__ import annotations

import logging
import threading
import time
import types
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

from influxdb_client.client.influxdb_client import InfluxDBClient
from influxdb_client.client.write.point import Point
from influxdb_client.client.write_api import SYNCHRONOUS, WriteApi, WriteOptions
from influxdb_client.domain.write_precision import WritePrecision
from influxdb_client.rest import ApiException

from sidewalk.core.contract import Reading
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

log = logging.getLogger(__name__)

FieldKind = Literal["float", "int", "bool", "str"]
# Contract fields that are identity or routing, not measurements.
_NOT_FIELDS = frozenset({"schema_", "device", "seq", "ts", "stream", "frontage"})


class InfluxWriteError(RuntimeError):
    """Batches the server refused or that failed after every retry (their data is lost)."""

    def __init__(self, failures: Sequence[BaseException]) -> None:
        super().__init__(f"{len(failures)} batch(es) not written; first: {failures[0]!r}")
        self.failures = tuple(failures)


def _leaf_types(annotation: Any) -> set[type]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _leaf_types(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return set().union(*(_leaf_types(arg) for arg in get_args(annotation)))
    return {annotation} if isinstance(annotation, type) else set()


@cache
def _field_kinds(model: type[Reading]) -> dict[str, FieldKind]:
    """Line-protocol type of each measured field, from the contract's annotations."""
    kinds: dict[str, FieldKind] = {}
    for name, info in model.model_fields.items():
        if name in _NOT_FIELDS:
            continue
        leaves = _leaf_types(info.annotation) - {type(None)}
        if float in leaves:
            kinds[name] = "float"
        elif bool in leaves:
            kinds[name] = "bool"
        elif int in leaves:
            kinds[name] = "int"
        elif str in leaves:
            kinds[name] = "str"
    return kinds


_COERCE: dict[FieldKind, type] = {"float": float, "int": int, "bool": bool, "str": str}


def reading_to_point(reading: Reading, site: str | None = None) -> Point:
    """Map one contract reading to a line-protocol point (pure; see module doc)."""
    stream = getattr(reading, "stream", None)
    if not isinstance(stream, str):
        raise ValueError(f"{type(reading).__name__} has no stream: not a stored reading")
    # influxdb-client leaves Point's methods unannotated; Any keeps mypy strict elsewhere.
    point: Any = Point(stream).tag("device", reading.device)  # type: ignore[no-untyped-call]
    if site is not None:
        point = point.tag("site", site)
    frontage = getattr(reading, "frontage", None)
    if frontage is not None:
        point = point.tag("frontage", frontage)
    point = point.field("seq", reading.seq)
    for name, kind in _field_kinds(type(reading)).items():
        value = getattr(reading, name)
        if value is not None:
            point = point.field(name, _COERCE[kind](value))
    return cast(Point, point.time(reading.ts, WritePrecision.MS))


class InfluxWriter:
    """Batched, retried, gzip-compressed writes of contract readings.

    ``write`` only queues: batches go out every ``batch_size`` points or
    ``flush_interval_ms``, on a background thread. ``flush`` blocks until
    everything queued so far has been written or has failed, and raises
    ``InfluxWriteError`` for failed batches, so a caller can acknowledge its
    source only after ``flush`` returns.
    """

    def __init__(
        self,
        url: str,
        token: str,
        org: str,
        bucket: str,
        *,
        batch_size: int = 1000,
        flush_interval_ms: int = 1000,
        max_retries: int = 5,
        retry_interval_ms: int = 1000,
        max_retry_delay_ms: int = 30_000,
        max_retry_time_ms: int = 180_000,
        exponential_base: int = 2,
        timeout_ms: int = 10_000,
        site: str | None = None,
    ) -> None:
        self.bucket = bucket
        self.org = org
        self.site = site
        self._client = InfluxDBClient(
            url=url, token=token, org=org, enable_gzip=True, timeout=timeout_ms
        )
        self._options = WriteOptions(
            batch_size=batch_size,
            flush_interval=flush_interval_ms,
            jitter_interval=0,
            retry_interval=retry_interval_ms,
            max_retries=max_retries,
            max_retry_delay=max_retry_delay_ms,
            max_retry_time=max_retry_time_ms,
            exponential_base=exponential_base,
        )
        self._lock = threading.Lock()
        self._failures: list[BaseException] = []
        self._api = self._open()

    def _open(self) -> WriteApi:
        api: WriteApi = self._client.write_api(
            write_options=self._options,
            error_callback=self._on_error,
            retry_callback=self._on_retry,
        )
        return api

    def _on_error(self, conf: tuple[str, str, str], data: str, exc: BaseException) -> None:
        log.error("influx batch to %s failed for good: %r", conf[0], exc)
        with self._lock:
            self._failures.append(exc)

    def _on_retry(self, conf: tuple[str, str, str], data: str, exc: BaseException) -> None:
        log.warning("influx batch to %s will be retried: %r", conf[0], exc)

    def write(self, readings: Sequence[Reading], *, site: str | None = None) -> None:
        """Queue readings; ``site`` (else the writer's default) becomes a tag."""
        points = [reading_to_point(r, site or self.site) for r in readings]
        if points:
            # Each point carries its own (ms) precision; the batcher groups by it.
            self._api.write(self.bucket, self.org, record=points)

    def flush(self) -> None:
        """Write everything queued; raise ``InfluxWriteError`` for batches that failed."""
        # influxdb-client's WriteApi.flush() is a no-op; closing the batching
        # API is the library's only way to drain it, so close and reopen.
        _close(self._api)
        self._api = self._open()
        self._raise_failures()

    def close(self) -> None:
        """Flush, then release the client. Raises like ``flush``."""
        _close(self._api)
        self._client.close()  # type: ignore[no-untyped-call]  # unannotated in influxdb-client
        self._raise_failures()

    def _raise_failures(self) -> None:
        with self._lock:
            failures, self._failures = self._failures, []
        if failures:
            raise InfluxWriteError(failures)


def _close(api: WriteApi) -> None:
    """Drain the batching queue (waits for in-flight batches, retries included)."""
    api.close()  # type: ignore[no-untyped-call]  # unannotated in influxdb-client


# Statuses with which InfluxDB refuses the points themselves (bad line protocol,
# a field type conflict, points outside the retention period).
_POINTS_REFUSED = frozenset({400, 422})


class InfluxForwarder:
    """Keeps an InfluxDB view in step with the SQLite store, from a durable cursor.

    A thread reads stored readings after the sink's cursor (``store.export_after``),
    writes them synchronously, and advances the cursor only once the server has
    accepted the batch. While the server is unreachable or answers 5xx/429 it
    backs off (``backoff_min_s`` doubling to ``backoff_max_s``) and retries the
    same batch; when the server returns it catches up. A 400 or 422 is
    a refusal of the points themselves (InfluxDB writes the valid points of a
    partial write): it is logged, counted in ``rejected`` and skipped, so one
    bad point cannot stall the view for good.

    It is ingest's ``ReadingSink``: ``write`` only wakes the thread (the store
    already holds the readings). It also polls every ``poll_s``, so it follows
    a store that another process writes.
    """

    def __init__(
        self,
        store: SqliteTimeSeriesStore,
        url: str,
        token: str,
        org: str,
        bucket: str,
        *,
        sink: str = "influx",
        batch_size: int = 5000,
        poll_s: float = 1.0,
        backoff_min_s: float = 0.5,
        backoff_max_s: float = 30.0,
        timeout_ms: int = 10_000,
        site: str | None = None,
    ) -> None:
        self.store = store
        self.sink = sink
        self.bucket = bucket
        self.org = org
        self.site = site
        self.written = 0
        self.rejected = 0
        self.failures = 0
        self._batch_size = batch_size
        self._poll_s = poll_s
        self._backoff_min_s = backoff_min_s
        self._backoff_max_s = backoff_max_s
        # No client-side retries: the backoff below owns them, and a stuck
        # retry loop inside the library would hide the outage from ``down``.
        self._client = InfluxDBClient(
            url=url, token=token, org=org, enable_gzip=True, timeout=timeout_ms, retries=False
        )
        self._api = self._client.write_api(write_options=SYNCHRONOUS)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._progress = threading.Condition()
        self._down_since: float | None = None
        self._last_error = ""
        self._thread: threading.Thread | None = None
        store.register_export(sink)

    @property
    def down(self) -> bool:
        """True while the last attempt to write failed."""
        return self._down_since is not None

    @property
    def problem(self) -> str | None:
        """Why the view is not being written right now (None: it is), for readiness."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return "InfluxDB forwarder not running; the view falls behind the store"
        since = self._down_since
        if since is None:
            return None
        return (
            f"InfluxDB view not written for {time.monotonic() - since:.0f} s "
            f"({self._last_error}); the store keeps the readings, the view catches up"
        )

    def start(self) -> None:
        """Start the forwarding thread."""
        if self._thread is not None:
            raise RuntimeError("forwarder already started")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="influx-forwarder", daemon=True)
        self._thread.start()

    def write(self, readings: Sequence[Reading]) -> None:
        """Readings were committed to the store: forward them soon."""
        self._wake.set()

    def backlog(self) -> int:
        """Stored readings not yet accepted by the server."""
        return self.store.export_backlog(self.sink)

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until everything stored so far is in InfluxDB; False on timeout."""
        deadline = time.monotonic() + timeout_s
        self._wake.set()
        with self._progress:
            while self.backlog() > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.set()
                self._progress.wait(min(left, 0.2))
        return True

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop the thread (the cursor is durable; nothing is lost) and release the client."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout_s)
        self._api.close()  # type: ignore[no-untyped-call]  # unannotated in influxdb-client
        # Ignored: influxdb-client leaves ``close`` unannotated.
        self._client.close()  # type: ignore[no-untyped-call]

    def forward_once(self) -> int:
        """Write one batch after the cursor; return how many readings it held.

        Raises what the server or the connection raised (the cursor stays).
        """
        batch = self.store.export_after(self.sink, self._batch_size)
        if not batch.readings:
            return 0
        points = [reading_to_point(r, site or self.site) for r, site in batch.readings]
        try:
            self._api.write(self.bucket, self.org, record=points)
        except ApiException as exc:
            # Only a refusal of the points themselves is skipped. A wrong token
            # (401/403), a missing bucket (404), throttling or a server error
            # is an outage: retried, never skipped, or the view would lose data.
            if exc.status not in _POINTS_REFUSED:
                raise
            log.error("influx refused %d points (skipped): %s", len(points), exc)
            self.rejected += len(points)
        else:
            self.written += len(points)
        self.store.advance_export(self.sink, batch.last_id)
        return len(points)

    def _run(self) -> None:
        backoff = self._backoff_min_s
        while not self._stop.is_set():
            try:
                sent = self.forward_once()
            except Exception as exc:
                self.failures += 1
                self._last_error = type(exc).__name__
                if self._down_since is None:
                    self._down_since = time.monotonic()
                    log.warning("influx unreachable, backing off: %r", exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self._backoff_max_s)
                continue
            if self._down_since is not None:
                log.warning(
                    "influx back after %.1f s; catching up", time.monotonic() - self._down_since
                )
                self._down_since = None
            backoff = self._backoff_min_s
            with self._progress:
                self._progress.notify_all()
            if sent == 0:
                self._wake.wait(self._poll_s)
                self._wake.clear()


# ---------------------------------------------------------------- Flux


def flux_string(value: str) -> str:
    """A Flux string literal for any text: quotes, backslashes and ``${`` escaped."""
    escaped = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("${", "\\${")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


def flux_time(value: datetime) -> str:
    """An RFC 3339 UTC time literal; naive datetimes are refused."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive datetime {value!r} in a Flux range")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def flux_range_query(
    bucket: str,
    measurement: str,
    device: str,
    start: datetime,
    stop: datetime,
    *,
    fields: Sequence[str] = (),
) -> str:
    """Flux reading one device's stream over ``[start, stop)``, optionally some fields.

    Every string is emitted as an escaped literal and times are rendered from
    ``datetime`` values, so no argument can change the query's shape.
    """
    start_lit, stop_lit = flux_time(start), flux_time(stop)
    if stop <= start:
        raise ValueError("stop must be after start")
    lines = [
        f"from(bucket: {flux_string(bucket)})",
        f"  |> range(start: {start_lit}, stop: {stop_lit})",
        f"  |> filter(fn: (r) => r._measurement == {flux_string(measurement)})",
        f"  |> filter(fn: (r) => r.device == {flux_string(device)})",
    ]
    if fields:
        wanted = " or ".join(f"r._field == {flux_string(f)}" for f in fields)
        lines.append(f"  |> filter(fn: (r) => {wanted})")
    return "\n".join(lines)
