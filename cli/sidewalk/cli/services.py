"""``sidewalk ingest`` and ``sidewalk analytics``: the two long-running MQTT consumers.

Each runs until SIGINT/SIGTERM. A broker, database or store it cannot reach is one
line naming the setting, and exit 2. paho, SQLAlchemy and APScheduler load when
a command runs (``common``: a fast --help).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sidewalk.cli.common import (
    ConfigOption,
    LogFormatOption,
    MetricsPortOption,
    configure_logging,
    console,
    fail,
    metrics_port_free,
    require_broker,
    unreachable_broker,
    village,
)

if TYPE_CHECKING:
    import threading
    from collections.abc import Iterator
    from datetime import datetime

    from sidewalk.analytics.runner import RebuildReport
    from sidewalk.cli.common import Village
    from sidewalk.core.config import Settings
    from sidewalk.core.contract import Reading
    from sidewalk.ingest.health import HealthListener
    from sidewalk.ingest.known import KnownDevices
    from sidewalk.storage.cases import CaseStore
    from sidewalk.storage.evidence import EvidenceStore
    from sidewalk.storage.influx import InfluxForwarder
    from sidewalk.storage.timeseries import SqliteTimeSeriesStore


def ingest(
    config: ConfigOption = None,
    metrics_port: MetricsPortOption = None,
    log_format: LogFormatOption = None,
) -> None:
    """Consume readings into the time-series store until interrupted."""
    from prometheus_client import CollectorRegistry

    from sidewalk.core.config import mqtt_settings
    from sidewalk.core.heap import settle_heap
    from sidewalk.core.mqtt import MqttError
    from sidewalk.ingest.consumer import HEAP_YOUNG_THRESHOLD, IngestConsumer
    from sidewalk.ingest.metrics import TimedStore, ingest_observability
    from sidewalk.ingest.validate import SizeLimits
    from sidewalk.storage.evidence import EvidenceStore
    from sidewalk.storage.space import FreeSpaceFloor

    place = village(config)
    settings = place.settings
    configure_logging(settings, log_format)
    require_broker(settings)
    metrics_port_free(settings, metrics_port, "ingest_port")
    stop = _stop_signal()
    limits = settings.ingest
    with ExitStack() as running:
        cases = running.enter_context(place.cases()) if limits.known_devices_only else None
        known = None if cases is None else _known_devices(cases)
        store = _timeseries(settings)
        running.callback(store.close)
        influx = _influx(settings, running)
        registry = CollectorRegistry()
        evidence = EvidenceStore(settings.data_dir / "evidence")
        running.callback(evidence.close)
        # Below the floor ingest neither writes nor acknowledges (docs/storage.md).
        space = FreeSpaceFloor(
            [settings.timeseries.sqlite_path.parent, evidence.root],
            min_free_bytes=limits.min_free_bytes,
            min_free_percent=limits.min_free_percent,
        )
        consumer = IngestConsumer(
            TimedStore(store, registry),
            mqtt_settings(settings, settings.mqtt.client_id),
            site=settings.site,
            shared_group=settings.mqtt.shared_group,
            batch_size=settings.mqtt.ack_batch,
            influx=influx,
            evidence=evidence,
            time_policy=settings.time.policy(),
            limits=SizeLimits(limits.max_message_bytes, limits.max_jpeg_bytes),
            evidence_quota_bytes=limits.evidence_quota_bytes_per_day,
            space=space,
            known_devices=known,
        )
        # Start-up objects frozen and fewer young passes (``HEAP_YOUNG_THRESHOLD``
        # says why; docs/scaling.md has the drain figures, bench/ingest_load.py).
        settle_heap(young_threshold=HEAP_YOUNG_THRESHOLD)
        health = None
        try:
            consumer.start()
            if cases is not None:
                health = _listen_to_health(settings, cases, running)
        except MqttError as exc:
            unreachable_broker(settings, exc)
        running.callback(consumer.stop)
        port = metrics_port or settings.observability.ingest_port
        if port:
            obs = ingest_observability(
                consumer, store.path, registry, space=space, view=influx, health=health, cases=cases
            )
            running.callback(obs.serve(settings.observability.host, port).stop)
        _start_pruner(settings, store, evidence, running)
        console().print(f"ingest consuming {settings.site} into {settings.timeseries.sqlite_path}")
        stop.wait()


def _known_devices(cases: CaseStore) -> KnownDevices:
    """The registry's poles (``[ingest] known_devices_only``), read once now: a case
    database ingest cannot read is one line and exit 2, not a silent accept-all."""
    from sidewalk.ingest.known import KnownDevices

    known = KnownDevices(cases.registry.known_device_ids)
    if not known.refresh():
        fail(
            "cannot read the registry's poles from the case database: fix cases.database_url"
            " (SIDEWALK_CASES__DATABASE_URL), or set [ingest] known_devices_only = false"
        )
    if not len(known):
        console().print(
            "no poles are registered yet: their readings are kept as dead letters until"
            " `sidewalk registry pole add` registers them"
        )
    return known


def _listen_to_health(settings: Settings, cases: CaseStore, running: ExitStack) -> HealthListener:
    """Record each registered pole's health report (last heard, calibration it runs)."""
    from sidewalk.core.config import mqtt_settings
    from sidewalk.ingest.health import HealthListener

    client_id = f"{settings.mqtt.client_id}-health"
    listener = HealthListener(mqtt_settings(settings, client_id), settings.site, cases.registry)
    listener.connect()
    running.callback(listener.close)
    return listener


def _start_pruner(
    settings: Settings,
    store: SqliteTimeSeriesStore,
    evidence: EvidenceStore,
    running: ExitStack,
) -> None:
    """The retention prune on a timer (``[retention]``); evidence a notice cites stays."""
    from sidewalk.storage.retention import Pruner, RetentionPolicy

    cfg = settings.retention
    if cfg.prune_interval_s is None:
        return
    policy = RetentionPolicy(
        readings_days=cfg.readings_days,
        dead_letters_days=cfg.dead_letters_days,
        evidence_days=cfg.evidence_days,
        records_retention_days=cfg.records_retention_days,
        unreferenced_grace_s=cfg.unreferenced_evidence_grace_s,
    )
    url = settings.cases.database_url

    def cited(since: datetime) -> set[str]:
        # Opened per prune: an unreachable case database skips the evidence
        # prune (nothing cited may go) and never stops ingest.
        from sidewalk.core.config import Secrets
        from sidewalk.storage.cases import CaseStore

        if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
            # Never create an empty case database as a side effect.
            raise FileNotFoundError(f"no case database at {url}")
        secret = Secrets.from_env().db_password
        cases = CaseStore(url, password=secret.get_secret_value() if secret else None)
        try:
            return cases.notices.cited_evidence(since)
        finally:
            cases.close()

    pruner = Pruner(store, evidence, policy, cited=cited, interval_s=cfg.prune_interval_s)
    pruner.start()
    running.callback(pruner.stop)


def _timeseries(settings: Settings) -> SqliteTimeSeriesStore:
    import sqlite3

    from sidewalk.storage.timeseries import SqliteTimeSeriesStore

    path = settings.timeseries.sqlite_path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return SqliteTimeSeriesStore(path)
    except (OSError, sqlite3.Error) as exc:
        fail(
            f"cannot open the time-series store {str(path)!r} ({exc}): point"
            " timeseries.sqlite_path (SIDEWALK_TIMESERIES__SQLITE_PATH) at a writable file"
        )


def _influx(settings: Settings, running: ExitStack) -> InfluxForwarder | None:
    """The InfluxDB forwarder when ``timeseries.influx_url`` is set (catches up from SQLite)."""
    if not settings.timeseries.influx_url:
        return None
    from sidewalk.core.config import Secrets
    from sidewalk.storage.influx import InfluxForwarder
    from sidewalk.storage.timeseries import SqliteTimeSeriesStore

    token = Secrets.from_env().influx_token
    # Its own connection to the store: catching up never blocks ingest's writes.
    own = SqliteTimeSeriesStore(settings.timeseries.sqlite_path)
    running.callback(own.close)
    influx = InfluxForwarder(
        own,
        url=settings.timeseries.influx_url,
        token=token.get_secret_value() if token else "",
        org=settings.timeseries.influx_org,
        bucket=settings.timeseries.influx_bucket,
        site=settings.site,
    )
    influx.start()
    running.callback(influx.close)
    return influx


def analytics(
    config: ConfigOption = None,
    event_time: Annotated[
        bool,
        typer.Option(
            "--event-time", help="run on the readings' own time (a replay through the broker)"
        ),
    ] = False,
    metrics_port: MetricsPortOption = None,
    log_format: LogFormatOption = None,
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            help="make the clocks' saved state again from the readings ingest stored "
            "(timeseries.sqlite_path) and the actions people recorded, then exit. Use it "
            "when analytics refuses to start because its saved state is missing, damaged "
            "or not this case database's. Stop analytics first. Notices and records "
            "already in the case database are kept, never made twice, and nothing is "
            "sent; it ends with one line saying what it found",
        ),
    ] = False,
) -> None:
    """Run the ordinance clocks on live time until interrupted (with --rebuild: make their
    saved state again from the stored readings, then exit)."""
    from sidewalk.analytics.metrics import analytics_observability
    from sidewalk.analytics.runner import SavedStateRefused
    from sidewalk.core.config import mqtt_settings
    from sidewalk.core.heap import settle_heap
    from sidewalk.core.mqtt import MqttError
    from sidewalk.system import build_analytics

    place = village(config)
    settings = place.settings
    configure_logging(settings, log_format)
    again = " ".join(
        ["sidewalk analytics", *(["--config", str(config)] if config else [])]
        + (["--event-time"] if event_time else [])
    )
    if rebuild:
        _rebuild(place, event_time=event_time, again=again)
        return
    require_broker(settings)
    metrics_port_free(settings, metrics_port, "analytics_port")
    stop = _stop_signal()
    from datetime import timedelta

    with place.cases() as cases:
        runner = build_analytics(
            cases,
            place.profile,
            mqtt_settings(settings, settings.analytics.client_id),
            site=settings.site,
            mode="stream" if event_time else "live",
            tick_seconds=settings.analytics.tick_seconds,
            evidence_wait=timedelta(minutes=settings.analytics.evidence_wait_minutes),
            # Every letter the live clocks issue carries the Village's letterhead.
            letterhead=place.letterhead(),
            # Event time (a replay) has no "ahead" of the wall clock to judge.
            time_policy=replace(settings.time.policy(), max_ahead_ms=None)
            if event_time
            else settings.time.policy(),
        )
        # As ingest: the start-up heap (profile, registry, the restored engine) frozen
        # and fewer young passes; a batch's objects die by reference count.
        settle_heap(young_threshold=20_000)
        try:
            runner.start()
        except SavedStateRefused as exc:
            fail(
                f"analytics: {exc}. Nothing was started. To rebuild the state from the "
                f"stored readings, run: {again} --rebuild"
            )
        except MqttError as exc:
            runner.stop()
            unreachable_broker(settings, exc)
        port = metrics_port or settings.observability.analytics_port
        endpoints = (
            analytics_observability(runner).serve(settings.observability.host, port)
            if port
            else None
        )
        console().print(
            f"analytics running for {len(runner.engine.clocks)} frontage(s) on {settings.site}"
        )
        stop.wait()
        if endpoints is not None:
            endpoints.stop()
        runner.stop()


def _rebuild(place: Village, *, event_time: bool, again: str) -> None:
    """``sidewalk analytics --rebuild``: replay the stored readings and recorded actions
    into a fresh engine, find what is on record, save the state, say so in one line."""
    from datetime import timedelta

    from sidewalk.core.config import mqtt_settings
    from sidewalk.system import build_analytics

    settings = place.settings
    path = settings.timeseries.sqlite_path
    if not path.exists():
        # Never rebuild from an empty store made here: that is the fresh start refused.
        fail(
            f"analytics --rebuild: no time-series store at {str(path)!r}: point"
            " timeseries.sqlite_path (SIDEWALK_TIMESERIES__SQLITE_PATH) at the file ingest"
            " writes. Nothing was changed"
        )
    store = _timeseries(settings)
    try:
        with place.cases() as cases:
            runner = build_analytics(
                cases,
                place.profile,
                # Never connected: the readings come from the store.
                mqtt_settings(settings, settings.analytics.client_id),
                site=settings.site,
                mode="stream",
                persist_jobs=False,
                evidence_wait=timedelta(minutes=settings.analytics.evidence_wait_minutes),
                letterhead=place.letterhead(),
                time_policy=replace(settings.time.policy(), max_ahead_ms=None),
            )
            devices = {d.id for d in cases.registry.list_devices(settings.site)}
            report = runner.rebuild(
                _stored_readings(store, devices), actions_move_time=not event_time
            )
            console().print(rebuild_summary(report, runner.id, again), soft_wrap=True)
    finally:
        store.close()


def _stored_readings(
    store: SqliteTimeSeriesStore, devices: set[str], page: int = 5_000
) -> Iterator[list[Reading]]:
    """The stored weather and camera readings of ``devices``, in event-time order, a page
    at a time (an instant is never split between pages)."""
    from sidewalk.core.contract import SnowMeasurement, WeatherReading

    start: int | None = None
    while True:
        rows = store.readings(start_ms=start, limit=page)
        if not rows:
            return
        if len(rows) < page:
            cut, start = rows, None
        else:
            last = rows[-1].ts
            cut = [r for r in rows if r.ts < last]
            if not cut:  # a whole page of one instant: that instant alone
                cut = store.readings(start_ms=last, end_ms=last + 1)
                last += 1
            start = last
        yield [
            r
            for r in cut
            if isinstance(r, WeatherReading | SnowMeasurement) and r.device in devices
        ]
        if start is None:
            return


# ``RebuildReport.new_records``' kinds, one of each.
_ONE = {
    "clock records": "clock record",
    "clock transitions": "clock transition",
    "violations": "violation",
    "abatements": "abatement",
    "bills": "bill",
    "tax roll entries": "tax roll entry",
}


def rebuild_summary(report: RebuildReport, client_id: str, again: str) -> str:
    """The one line ``--rebuild`` ends with: what it replayed, what was on record, what
    was not, and what to do next."""
    storms = f"{report.storms:,} storm" + ("" if report.storms == 1 else "s")
    line = f"rebuilt from {report.readings:,} readings ({storms})"
    if report.actions:
        line += f" and {report.actions:,} recorded action" + ("s" if report.actions > 1 else "")
    if report.skipped:
        line += f"; {report.skipped:,} stored readings skipped as repeats"
    on_record, new = len(report.notices_on_record), len(report.notices_new)
    line += f"; {on_record:,} notice{'' if on_record == 1 else 's'} already on record, {new:,} new"
    if new:
        line += (
            f" ({', '.join(report.notices_new)}: the readings call for "
            f"{'it' if new == 1 else 'them'} and the case database did not have "
            f"{'it' if new == 1 else 'them'}; nothing was sent: review "
            f"{'it' if new == 1 else 'them'} in `sidewalk notices register` before "
            "`sidewalk notices queue`)"
        )
    others = {k: n for k, n in report.new_records.items() if k != "notices"}
    if others:
        line += "; also not on record before, now recorded: " + ", ".join(
            f"{n:,} {_ONE.get(k, k) if n == 1 else k}" for k, n in others.items()
        )
    if report.actions_differing:
        line += (
            f"; {len(report.actions_differing):,} recorded action(s) came out otherwise than"
            " when first applied (applied now and refused then, or the reverse)"
        )
    return line + f"; state saved for client id {client_id!r}. Start analytics with: {again}"


def _stop_signal() -> threading.Event:
    """Set by SIGINT or SIGTERM; taken before start-up, so a signal during it stops cleanly."""
    import signal
    import threading

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return stop
