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
    from datetime import datetime

    from sidewalk.core.config import Settings
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
        try:
            consumer.start()
            if cases is not None:
                _listen_to_health(settings, cases, running)
        except MqttError as exc:
            unreachable_broker(settings, exc)
        running.callback(consumer.stop)
        port = metrics_port or settings.observability.ingest_port
        if port:
            obs = ingest_observability(consumer, store.path, registry, space=space)
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


def _listen_to_health(settings: Settings, cases: CaseStore, running: ExitStack) -> None:
    """Record each registered pole's health report (last heard, calibration it runs)."""
    from sidewalk.core.config import mqtt_settings
    from sidewalk.ingest.health import HealthListener

    client_id = f"{settings.mqtt.client_id}-health"
    listener = HealthListener(mqtt_settings(settings, client_id), settings.site, cases.registry)
    listener.connect()
    running.callback(listener.close)


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
) -> None:
    """Run the ordinance clocks on live time until interrupted."""
    from sidewalk.analytics.metrics import analytics_observability
    from sidewalk.analytics.runner import SavedStateUnreadable
    from sidewalk.core.config import mqtt_settings
    from sidewalk.core.heap import settle_heap
    from sidewalk.core.mqtt import MqttError
    from sidewalk.system import build_analytics

    place = village(config)
    settings = place.settings
    configure_logging(settings, log_format)
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
        except SavedStateUnreadable as exc:
            fail(str(exc))
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


def _stop_signal() -> threading.Event:
    """Set by SIGINT or SIGTERM; taken before start-up, so a signal during it stops cleanly."""
    import signal
    import threading

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return stop
