"""Wiring: builds the components from settings. The CLI and the end-to-end tests use it.

Nothing here decides anything; it only connects the pieces the way
``DESIGN.md`` draws them: pole → broker → ingest → time series, and
broker → analytics → case records → alerts.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from sidewalk.alerts.confirm import confirm_value, unconfirmed_report
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.letterhead import Letterhead
from sidewalk.analytics.clocks.cessation import DetectionParams
from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.analytics.registry import RegistryWatch, frontage_specs
from sidewalk.analytics.runner import AnalyticsRunner, Mode
from sidewalk.core.config import MqttConfig, Settings, VillageConfig, mqtt_settings
from sidewalk.core.contract import TimePolicy, WeatherReading
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.edge.publisher import Publisher
from sidewalk.edge.simulated import SimulatedPole
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.ingest.embedded_broker import EmbeddedBroker
from sidewalk.ingest.known import KnownDevices
from sidewalk.scenarios import Scenario, expand, to_readings
from sidewalk.storage.cases import CaseStore, NoticeRecord, TransitionRecord
from sidewalk.storage.connect import open_cases
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

__all__ = [
    "ActionTicker",
    "DemoResult",
    "ReplayedStorm",
    "build_analytics",
    "confirm_for_demo",
    "demo_letterhead",
    "frontage_specs",
    "mqtt_settings",  # lives in core: the pole's tools connect with it too
    "notice_summary",
    "open_cases",  # lives in storage: every command opens the case records the same way
    "profile_for",
    "replay_in_process",
    "replay_storm",
    "run_through_broker",
    "seed_scenario",
    "serve_demo",
]


def profile_for(settings: Settings) -> Profile:
    return load_profile(settings.profile)


# Who confirms the profile's open values in a demo or test village (never the Village).
DEMO_CONFIRMER = "Sidewalk Watch demo setup"


def confirm_for_demo(
    cases: CaseStore,
    profile: Profile,
    scenario: str,
    *,
    echo: Callable[[str], None] | None = None,
) -> None:
    """Confirm, in the open, the values the profile leaves unconfirmed, for a demo village.

    A real village's values are confirmed by the Village (``sidewalk profile
    confirm``); a scenario's stand-in village confirms them here, each one
    recorded and audited under ``DEMO_CONFIRMER`` with a reference that says
    it is not a board action, and printed through ``echo``. Idempotent.
    """
    for item in unconfirmed_report(cases, profile):
        if item.confirmed:
            continue
        confirm_value(
            cases, profile, item.name, by=DEMO_CONFIRMER,
            reference=f"demo scenario {scenario}: placeholder value, not a Village Board action",
            at=datetime.now(UTC), who="demo",
        )  # fmt: skip
        if echo is not None:
            echo(f"demo setup confirms {item.name} = {item.value} (profile note: {item.note})")


def demo_letterhead(workdir: Path, profile: Profile) -> Letterhead:
    """A letterhead for a demo run, plainly marked as one, with a drawn signature."""
    signature = workdir / "demo-signature.png"
    if not signature.exists():
        _draw_signature(signature)
    village = VillageConfig(
        office="Village Hall (demonstration letterhead)",
        address_lines=["set [village] in the settings file", f"{profile.village.name}, WI"],
        telephone="(920) 555-0100",
        email="clerk@village.example",
        office_hours="Monday to Friday, 8:00 AM to 4:00 PM",
        officer_name="Dana Krüger",
        officer_title="Clerk-Treasurer",
        signature_image=signature,
    )
    return Letterhead.from_settings(village, profile)


def _draw_signature(path: Path) -> None:
    from PIL import Image, ImageDraw  # fpdf2's own dependency

    image = Image.new("RGB", (600, 150), "white")
    pen = ImageDraw.Draw(image)
    points = [(20 + x * 5, 90 + int(35 * ((x % 14) - 7) * ((x // 14) % 2 * 2 - 1) / 7))
              for x in range(112)]  # fmt: skip
    pen.line(points, fill=(20, 30, 120), width=4)
    image.save(path, format="PNG", optimize=False)


def seed_scenario(
    cases: CaseStore,
    scenario: Scenario,
    *,
    profile: Profile | None = None,
    echo: Callable[[str], None] | None = None,
) -> None:
    """Register the scenario's pole, owners and frontages, and confirm, in the open, the
    profile values its notices need (``confirm_for_demo``; idempotent)."""
    head = scenario.scenario
    cases.registry.upsert_device(head.device, head.site)
    for f in scenario.frontage:
        owner_id = f"owner-{f.id}"
        cases.registry.upsert_owner(owner_id, f.owner, f.mailing_address)
        cases.registry.upsert_frontage(
            f.id,
            site=head.site,
            parcel_number=f.parcel,
            street_address=f.address,
            length_ft=f.length_ft,
            zone="residential",
            owner_id=owner_id,
            device_id=head.device,
        )
    confirm_for_demo(cases, profile or load_profile(), head.name, echo=echo)


def commission_scenario(
    cases: CaseStore,
    scenario: Scenario,
    parcels: Path,
    *,
    profile: Profile | None = None,
    echo: Callable[[str], None] | None = None,
) -> Scenario:
    """Set the scenario's street up as a village does: the county's parcel
    file through the same import as ``sidewalk registry import``, then the pole
    registered and assigned to the scenario's frontages (matched by address), then
    the profile values its notices need confirmed in the open. Returns the scenario
    with the registry's frontage ids, for the pole simulator. Idempotent."""
    from sidewalk.registry.apply import apply, compare, snapshot
    from sidewalk.registry.county import parse_records, read_parcel_file
    from sidewalk.registry.frontages import derive_frontages

    head = scenario.scenario
    say = echo or (lambda _line: None)
    parsed = parse_records(read_parcel_file(parcels))
    derived = derive_frontages(parsed.parcels, refused_ground=parsed.refused_ground)
    snap = snapshot(cases)
    effective = head.start - timedelta(days=365)  # owners of record long before the storm
    diff = compare(parsed, snap, effective)
    if not diff.is_empty():
        done = apply(cases, parsed, derived, diff, snap, effective=effective, site=head.site,
                     who="demo setup")  # fmt: skip
        say(f"registry import {parcels.name}: {done.parcels} parcels, {done.frontages} frontages")
    by_address = {f.street_address.casefold(): f for f in cases.registry.list_frontages()}
    ids: dict[str, str] = {}
    for f in scenario.frontage:
        found = by_address.get(f.address.casefold())
        if found is None:
            raise ValueError(f"{parcels.name} has no parcel at {f.address} (frontage {f.id})")
        ids[f.id] = found.id
    cases.registry.upsert_device(head.device, head.site, label="demo pole", who="demo setup")
    cases.registry.assign_pole(head.device, sorted(ids.values()), at=effective, who="demo setup")
    say(
        f"registry pole add {head.device} --watches "
        + ", ".join(f.address for f in scenario.frontage)
    )
    confirm_for_demo(cases, profile or load_profile(), head.name, echo=echo)
    return scenario.renamed(ids)


def build_analytics(
    cases: CaseStore,
    profile: Profile,
    mqtt: MqttSettings,
    *,
    site: str,
    mode: Mode,
    persist_jobs: bool = True,
    tick_seconds: float = 30.0,
    time_policy: TimePolicy | None = None,
    letterhead: Letterhead | None = None,
    evidence_wait: timedelta | None = None,
) -> AnalyticsRunner:
    """Engine + recorder + notice issuer + runner, for the frontages in the case records.

    ``evidence_wait``: how long a deadline waits for its pole's readings before it goes
    to a person's review (``[analytics] evidence_wait_minutes``; the engine's default)."""
    params = None if evidence_wait is None else DetectionParams(evidence_wait=evidence_wait)
    engine = ClockEngine(profile, frontage_specs(cases, site), params)
    issuer = NoticeIssuer(cases, profile, letterhead=letterhead)
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
        time_policy=time_policy,
        registry=RegistryWatch(cases, site),
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
    # The scenario as played: with the registry's frontage ids after a county import.
    scenario: Scenario | None = None


def run_through_broker(
    scenario: Scenario,
    workdir: Path,
    *,
    mqtt_url: str | None = None,
    database_url: str | None = None,
    profile: Profile | None = None,
    run_id: str = "demo",
    timeout_s: float = 120.0,
    letterhead: Letterhead | None = None,
    echo: Callable[[str], None] | None = None,
    parcels: Path | None = None,
) -> DemoResult:
    """Play a scenario through a real broker, ingest, analytics and alerts.

    With no ``mqtt_url`` an embedded broker (amqtt) starts on a free loopback
    port. Both stores default to SQLite files in ``workdir``. With ``parcels``
    (a county parcel file) the street comes in as a village's does
    (``commission_scenario``); otherwise the scenario seeds the registry.
    """
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
        if parcels is not None:
            scenario = commission_scenario(cases, scenario, parcels, profile=profile, echo=echo)
        else:
            seed_scenario(cases, scenario, profile=profile, echo=echo)
        ingest = IngestConsumer(
            store,
            mqtt_settings(settings, f"{run_id}-ingest", protocol=protocol),
            site=site,
            # A replay runs on the scenario's time, not the wall clock's: no "ahead".
            time_policy=TimePolicy(max_ahead_ms=None),
            # As `sidewalk ingest` runs: only the registry's poles are stored.
            known_devices=KnownDevices(cases.registry.known_device_ids),
        )
        ingest.start()
        analytics = build_analytics(
            cases,
            profile,
            mqtt_settings(settings, f"{run_id}-analytics", protocol=protocol),
            site=site,
            mode="stream",
            letterhead=letterhead or demo_letterhead(workdir, profile),
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
            clock.frontage_id + "@" + clock.started_at.isoformat(): cases.clocks.history(clock.id)
            for clock in cases.clocks.list()
        }
        return DemoResult(
            published=len(played),
            stored=store.count(),
            duplicates=ingest.stats.duplicates,
            dead_letters=ingest.stats.dead_letters,
            seconds=seconds,
            protocol=ingest.protocol,
            notices=cases.notices.list(),
            history=history,
            scenario=scenario,
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
    seed_scenario(cases, scenario, profile=profile)
    engine = ClockEngine(profile, frontage_specs(cases, scenario.scenario.site))
    issuer = NoticeIssuer(cases, profile)
    recorder = CaseRecorder(
        cases, profile, on_violation=issuer.clearing_violation, on_notice=issuer.required_notice
    )
    readings = to_readings(scenario, expand(scenario))
    for reading in readings:
        recorder.record(engine.observe(reading) + engine.advance(reading.event_time))
    return len(readings), cases.notices.list()


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
    # Deferred: FastAPI and the UI take seconds to import, and only --serve needs them.
    from sidewalk.dashboard.app import create_app, serve
    from sidewalk.dashboard.auth import add_user

    cases = open_cases(f"sqlite:///{workdir / 'cases.sqlite3'}", profile)
    timeseries = SqliteTimeSeriesStore(workdir / "timeseries.sqlite3")
    offline = MqttSettings(host="127.0.0.1", port=1, client_id=f"{run_id}-analytics")
    runner = build_analytics(
        cases, profile, offline, site=scenario.scenario.site, mode="stream", persist_jobs=False,
        letterhead=demo_letterhead(workdir, profile),
    )  # fmt: skip
    saved = cases.clocks.load_engine_snapshot(offline.client_id)
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


# -- a replayed storm for the dashboard (``sidewalk demo --serve``, the tests) --


@dataclass
class ReplayedStorm:
    """The stores and runner after a scenario's replay; ``end`` is its last event time."""

    cases: CaseStore
    timeseries: SqliteTimeSeriesStore
    runner: AnalyticsRunner
    end: datetime

    def close(self) -> None:
        self.timeseries.close()
        self.cases.close()


def replay_storm(scenario: Scenario, workdir: Path, profile: Profile) -> ReplayedStorm:
    """Replay ``scenario`` into fresh SQLite stores in ``workdir``.

    The readings go into a real SQLite time-series store and, in event time,
    through the runner's own ``handle`` (engine → recorder → notice issuer), so
    the case records hold exactly what the live path would. The runner is never
    connected to a broker: ``ActionTicker`` ticks it for the actions people record.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    cases = open_cases(f"sqlite:///{workdir / 'cases.sqlite3'}", profile)
    timeseries = SqliteTimeSeriesStore(workdir / "timeseries.sqlite3")
    seed_scenario(cases, scenario, profile=profile)
    head = scenario.scenario
    # Never connected: the demo feeds it directly and ticks it for actions.
    offline = MqttSettings(host="127.0.0.1", port=1, client_id=f"dashboard-demo-{head.site}")
    runner = build_analytics(
        cases, profile, offline, site=head.site, mode="stream", persist_jobs=False,
        letterhead=demo_letterhead(workdir, profile),
    )  # fmt: skip
    readings = to_readings(scenario, expand(scenario))
    timeseries.write_batch(readings, sites={head.device: head.site})
    for reading in readings:
        runner.handle(reading)
    last = max(r.event_time for r in readings if isinstance(r, WeatherReading))
    cases.registry.record_device_seen(head.device, last, "online")
    return ReplayedStorm(cases, timeseries, runner, head.end)


class ActionTicker:
    """Applies recorded actions through ``runner.tick()`` on a short interval.

    For a runner that is not connected to a broker (the demo's), whose
    recorded actions would otherwise wait for a reading.
    """

    def __init__(self, runner: AnalyticsRunner, interval_s: float = 0.2) -> None:
        self.runner = runner
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-action-ticker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.runner.tick()
