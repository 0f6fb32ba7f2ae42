"""Wiring: builds the components from settings. The CLI and the end-to-end tests use it.

Nothing here decides anything; it only connects the pieces the way
``DESIGN.md`` draws them: pole → broker → ingest → time series, and
broker → analytics → case records → alerts.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.analytics.runner import AnalyticsRunner, Mode
from sidewalk.core.config import Secrets, Settings
from sidewalk.core.mqtt import MqttSettings, TlsSettings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.scenarios import Scenario, expand
from sidewalk.storage.cases import CaseStore, NoticeRecord, TransitionRecord


def mqtt_settings(
    settings: Settings,
    client_id: str,
    secrets: Secrets | None = None,
    protocol: Literal["auto", "5", "3.1.1"] = "auto",
) -> MqttSettings:
    """Connection settings for one client of the configured broker."""
    secrets = secrets or Secrets.from_env()
    cfg = settings.mqtt
    password = secrets.mqtt_password.get_secret_value() if secrets.mqtt_password else None
    tls = TlsSettings(ca_certs=str(cfg.ca_file) if cfg.ca_file else None) if cfg.tls else None
    return MqttSettings(
        host=cfg.host,
        port=cfg.port,
        client_id=client_id,
        username=cfg.username,
        password=password,
        tls=tls,
        receive_maximum=max(cfg.ack_batch * 2, 20),
        protocol=protocol,
    )


def profile_for(settings: Settings) -> Profile:
    return load_profile(settings.profile)


def open_cases(database_url: str, profile: Profile) -> CaseStore:
    """The case records, migrated to the current schema."""
    secret = Secrets.from_env().db_password  # never in the URL or the config file
    cases = CaseStore(
        database_url,
        password=secret.get_secret_value() if secret else None,
        zone=profile.village.timezone,
    )
    cases.create_schema()
    return cases


def seed_scenario(cases: CaseStore, scenario: Scenario) -> None:
    """Register the scenario's pole, owners and frontages (idempotent)."""
    head = scenario.scenario
    cases.upsert_device(head.device, head.site)
    for f in scenario.frontage:
        owner_id = f"owner-{f.id}"
        cases.upsert_owner(owner_id, f.owner, f.mailing_address)
        cases.upsert_frontage(
            f.id,
            site=head.site,
            parcel_number=f.parcel,
            street_address=f.address,
            length_ft=f.length_ft,
            zone="residential",
            owner_id=owner_id,
            device_id=head.device,
        )


def frontage_specs(cases: CaseStore, site: str | None = None) -> list[FrontageSpec]:
    """Every watched frontage and the pole whose weather tells its snowfall."""
    return [
        FrontageSpec(f.id, f.device_id)
        for f in cases.list_frontages(site=site)
        if f.device_id is not None
    ]


def build_analytics(
    cases: CaseStore,
    profile: Profile,
    mqtt: MqttSettings,
    *,
    site: str,
    mode: Mode,
    persist_jobs: bool = True,
    tick_seconds: float = 30.0,
) -> AnalyticsRunner:
    """Engine + recorder + notice issuer + runner, for the frontages in the case records."""
    engine = ClockEngine(profile, frontage_specs(cases, site))
    issuer = NoticeIssuer(cases, profile)
    recorder = CaseRecorder(
        cases, profile, on_violation=issuer.clearing_violation, on_notice=issuer.required_notice
    )
    return AnalyticsRunner(
        engine,
        recorder,
        mqtt,
        site=site,
        mode=mode,
        persist_jobs=persist_jobs,
        tick_seconds=tick_seconds,
    )


@dataclass
class DemoResult:
    """What one run of a scenario through the whole path produced."""

    published: int
    stored: int
    duplicates: int
    dead_letters: int
    seconds: float
    protocol: str | None
    notices: list[NoticeRecord]
    history: dict[str, list[TransitionRecord]] = field(default_factory=dict)


def run_through_broker(
    scenario: Scenario,
    workdir: Path,
    *,
    mqtt_url: str | None = None,
    database_url: str | None = None,
    profile: Profile | None = None,
    run_id: str = "demo",
    timeout_s: float = 120.0,
) -> DemoResult:
    """Play a scenario through a real broker, ingest, analytics and alerts.

    With no ``mqtt_url`` an embedded broker (amqtt) starts on a free loopback
    port. Both stores default to SQLite files in ``workdir``.
    """
    from sidewalk.core.config import MqttConfig
    from sidewalk.edge.buffer import ReadingBuffer
    from sidewalk.edge.publisher import Publisher
    from sidewalk.edge.simulated import SimulatedPole
    from sidewalk.ingest.consumer import IngestConsumer
    from sidewalk.ingest.embedded_broker import EmbeddedBroker
    from sidewalk.storage.timeseries import SqliteTimeSeriesStore

    workdir.mkdir(parents=True, exist_ok=True)
    profile = profile or load_profile()
    broker: EmbeddedBroker | None = None
    # The embedded broker is amqtt, which speaks 3.1.1 only and answers a v5
    # CONNECT with silence: skip the negotiation's timeout when we know.
    protocol: Literal["auto", "5", "3.1.1"] = "auto"
    if mqtt_url is None:
        protocol = "3.1.1"
        broker = EmbeddedBroker()
        broker.start()
        mqtt_url = f"mqtt://{broker.host}:{broker.port}"
    settings = Settings(
        site=scenario.scenario.site,
        data_dir=workdir,
        mqtt=MqttConfig(url=mqtt_url),
    )
    site = scenario.scenario.site
    started = time.monotonic()
    store = SqliteTimeSeriesStore(workdir / "timeseries.sqlite3")
    cases = open_cases(database_url or f"sqlite:///{workdir / 'cases.sqlite3'}", profile)
    ingest: IngestConsumer | None = None
    analytics: AnalyticsRunner | None = None
    publisher: Publisher | None = None
    try:
        seed_scenario(cases, scenario)
        ingest = IngestConsumer(
            store, mqtt_settings(settings, f"{run_id}-ingest", protocol=protocol), site=site
        )
        ingest.start()
        analytics = build_analytics(
            cases,
            profile,
            mqtt_settings(settings, f"{run_id}-analytics", protocol=protocol),
            site=site,
            mode="stream",
        )
        analytics.start()
        buffer = ReadingBuffer(
            workdir / f"{scenario.scenario.device}-buffer.sqlite3", scenario.scenario.device
        )
        publisher = Publisher(
            buffer, mqtt_settings(settings, scenario.scenario.device, protocol=protocol), site=site
        )
        publisher.start()
        played = SimulatedPole(publisher, expand(scenario)).run()
        if not publisher.wait_stored(timeout_s=timeout_s):
            raise TimeoutError(
                f"ingest did not store all {len(played)} readings within {timeout_s:.0f} s"
            )
        runner = analytics
        if not runner.wait_for(lambda: runner.processed >= len(played), timeout_s=timeout_s):
            raise TimeoutError(f"analytics processed {runner.processed} of {len(played)} readings")
        seconds = time.monotonic() - started
        history = {
            clock.frontage_id + "@" + clock.started_at.isoformat(): cases.clock_history(clock.id)
            for clock in cases.list_clocks()
        }
        return DemoResult(
            published=len(played),
            stored=store.count(),
            duplicates=ingest.stats.duplicates,
            dead_letters=ingest.stats.dead_letters,
            seconds=seconds,
            protocol=ingest.protocol,
            notices=cases.list_notices(),
            history=history,
        )
    finally:
        for component in (publisher, analytics, ingest):
            if component is not None:
                component.stop()
        store.close()
        cases.close()
        if broker is not None:
            broker.stop()


def replay_in_process(
    scenario: Scenario, cases: CaseStore, profile: Profile
) -> tuple[int, list[NoticeRecord]]:
    """The same scenario straight into the engine (no broker): what the live run must match."""
    from sidewalk.scenarios import to_readings

    seed_scenario(cases, scenario)
    engine = ClockEngine(profile, frontage_specs(cases, scenario.scenario.site))
    issuer = NoticeIssuer(cases, profile)
    recorder = CaseRecorder(
        cases, profile, on_violation=issuer.clearing_violation, on_notice=issuer.required_notice
    )
    readings = to_readings(scenario, expand(scenario))
    for reading in readings:
        recorder.record(engine.observe(reading) + engine.advance(reading.event_time))
    return len(readings), cases.list_notices()


def notice_summary(notices: Sequence[NoticeRecord]) -> list[tuple[str, str, str]]:
    """(frontage, kind, deadline ISO) per notice: what scenarios' expectations compare."""
    return sorted(
        (n.frontage_id, n.kind, n.deadline.isoformat() if n.deadline else "") for n in notices
    )


def serve_demo(
    scenario: Scenario,
    workdir: Path,
    profile: Profile,
    *,
    run_id: str = "demo",
    host: str = "127.0.0.1",
    port: int = 8080,
) -> None:
    """Serve the dashboard on the stores a ``run_through_broker`` replay left in ``workdir``.

    The runner is restored from the replay's engine snapshot and ticked for
    the actions people record on the page; the dashboard's clock is the
    storm's end, so its countdowns read as they did then.
    """
    import secrets

    from sidewalk.dashboard.app import create_app, serve
    from sidewalk.dashboard.auth import add_user
    from sidewalk.dashboard.demo import ActionTicker
    from sidewalk.storage.evidence import EvidenceStore
    from sidewalk.storage.timeseries import SqliteTimeSeriesStore

    cases = open_cases(f"sqlite:///{workdir / 'cases.sqlite3'}", profile)
    timeseries = SqliteTimeSeriesStore(workdir / "timeseries.sqlite3")
    offline = MqttSettings(host="127.0.0.1", port=1, client_id=f"{run_id}-analytics")
    runner = build_analytics(
        cases, profile, offline, site=scenario.scenario.site, mode="stream", persist_jobs=False
    )
    saved = cases.load_engine_snapshot(offline.client_id)
    if saved is not None:
        runner.engine.restore(saved.encode())
    password = secrets.token_urlsafe(12)
    add_user(cases, "demo", password, "admin", who="demo")
    ticker = ActionTicker(runner)
    ticker.start()
    end = scenario.scenario.end
    app = create_app(
        cases, timeseries, profile, secret_key=secrets.token_urlsafe(32), now=lambda: end,
        evidence=EvidenceStore(workdir / "evidence"),
    )  # fmt: skip
    print(f"dashboard on http://{host}:{port}/  user: demo  password: {password}", flush=True)
    try:
        serve(app, host, port)
    finally:
        ticker.stop()
        timeseries.close()
        cases.close()
