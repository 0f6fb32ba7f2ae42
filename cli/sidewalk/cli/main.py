"""``sidewalk``: the command line.

``demo``       the whole system on embedded defaults, replaying a storm through MQTT
``edge``       a pole: ``run`` the device, ``simulate`` a scenario, send a ``command``
``ingest``     consume readings into the time-series store
``analytics``  run the ordinance clocks live and record violations and notices
``replay``     play a scenario straight into the clock engine (no broker)
"""

from __future__ import annotations

import logging
import signal
import tempfile
import threading
from pathlib import Path
from typing import Annotated, get_args

import typer
from rich.console import Console
from rich.table import Table

from sidewalk.alerts.cli import alerts_app
from sidewalk.analytics.clocks.events import ActionKind, action_kind
from sidewalk.analytics.cold_cli import cold_app
from sidewalk.analytics.inspect_cli import inspect_app
from sidewalk.analytics.street_cli import street_app
from sidewalk.core.clock import format_local
from sidewalk.core.config import ConfigError, Settings, load_settings
from sidewalk.core.profile import ProfileError, load_profile
from sidewalk.edge.cli import edge_app
from sidewalk.scenarios import ScenarioError, load_scenario

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
app.add_typer(edge_app, name="edge")
app.add_typer(alerts_app, name="notices")
app.add_typer(cold_app, name="cold")
app.add_typer(street_app, name="street")
app.add_typer(inspect_app, name="inspect")
console = Console()

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="TOML configuration file (secrets come from the environment)"
    ),
]


def _settings(path: Path | None) -> Settings:
    try:
        return load_settings(path)
    except ConfigError as exc:
        console.print(f"[red]configuration error:[/red] {exc}")
        raise typer.Exit(2) from None


MetricsPortOption = Annotated[
    int | None,
    typer.Option(
        "--metrics-port",
        help="serve /metrics, /healthz, /readyz on this port (default: observability.*_port; off)",
    ),
]
LogFormatOption = Annotated[
    str | None,
    typer.Option("--log-format", help="text | json (default: observability.log_format)"),
]


def _logging(settings: Settings, log_format: str | None) -> None:
    from sidewalk.core.logs import configure_logging

    fmt = log_format or settings.observability.log_format
    if fmt not in {"text", "json"}:
        console.print("[red]--log-format is text or json[/red]")
        raise typer.Exit(2)
    configure_logging("json" if fmt == "json" else "text", settings.observability.log_level)


def _quiet_embedded_broker() -> None:
    # amqtt logs a stack trace when a client first tries MQTT v5 (we then fall
    # back to 3.1.1, as designed); keep the demo's output readable.
    for name in ("amqtt", "asyncio", "transitions"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _wait_for_signal() -> None:
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()


@app.command()
def demo(
    scenario: Annotated[
        str, typer.Argument(help="bundled scenario name or TOML path")
    ] = "first-storm",
    config: ConfigOption = None,
    workdir: Annotated[
        Path | None, typer.Option(help="where the demo's stores go (default: a new temp dir)")
    ] = None,
    serve: Annotated[
        bool, typer.Option("--serve", help="then open the dashboard on the replayed storm")
    ] = False,
    port: Annotated[int, typer.Option(help="dashboard port with --serve")] = 8080,
) -> None:
    """Replay a storm through the real MQTT path on embedded defaults and print the notices."""
    from sidewalk.system import run_through_broker

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    _quiet_embedded_broker()
    settings = _settings(config)
    try:
        story = load_scenario(scenario)
        profile = load_profile(settings.profile)
    except (ScenarioError, ProfileError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    where = workdir or Path(tempfile.mkdtemp(prefix="sidewalk-demo-"))
    broker = settings.mqtt.url or "embedded amqtt broker"
    console.print(
        f"[bold]Sidewalk Watch demo[/bold]: {story.scenario.name} — {story.scenario.description}"
    )
    console.print(f"broker: {broker}; stores: SQLite in {where}")
    database_url = (
        None if settings.cases.database_url.startswith("sqlite") else settings.cases.database_url
    )
    with console.status(
        "replaying the storm through pole → broker → ingest → analytics → alerts …"
    ):
        result = run_through_broker(
            story, where, mqtt_url=settings.mqtt.url, database_url=database_url, profile=profile
        )
    zone = profile.zone
    console.print(
        f"published {result.published} readings over MQTT {result.protocol}; "
        f"stored {result.stored} (duplicates dropped {result.duplicates}, "
        f"dead letters {result.dead_letters}) in {result.seconds:.1f} s"
    )
    table = Table(title="What the clocks did (event time, America/Chicago)")
    for column in ("frontage", "at", "from", "to", "cause"):
        table.add_column(column)
    for clock_key, steps in sorted(result.history.items()):
        for step in steps:
            cause = step.cause
            what = f"{cause.device}#{cause.seq}" if cause.seq is not None else cause.kind
            table.add_row(
                clock_key.split("@")[0],
                format_local(step.at, zone),
                step.from_state,
                step.to_state,
                what,
            )
    console.print(table)
    console.print(f"[bold]{len(result.notices)} notice(s)[/bold]")
    for notice in result.notices:
        deadline = format_local(notice.deadline, zone) if notice.deadline else "-"
        console.rule(
            f"{notice.number} · {notice.frontage_id} · deadline {deadline} · {notice.status}"
        )
        console.print(
            notice.body_text or "(not rendered)", markup=False, highlight=False, soft_wrap=True
        )
    expected = {(e.frontage, e.notice, e.deadline) for e in story.expect}
    got = {(n.frontage_id, n.kind, n.deadline) for n in result.notices}
    if story.expect:
        verdict = "[green]as expected[/green]" if got == expected else "[red]NOT as expected[/red]"
        console.print(f"scenario expectation: {len(expected)} notice(s) — {verdict}")
        if got != expected:
            raise typer.Exit(1)
    if serve:
        from sidewalk.system import serve_demo

        serve_demo(story, where, profile, port=port)


@app.command()
def ingest(
    config: ConfigOption = None,
    metrics_port: MetricsPortOption = None,
    log_format: LogFormatOption = None,
) -> None:
    """Consume readings into the time-series store until interrupted."""
    from prometheus_client import CollectorRegistry

    from sidewalk.ingest.consumer import IngestConsumer
    from sidewalk.observability.metrics import TimedStore
    from sidewalk.observability.process import ingest_observability
    from sidewalk.storage.timeseries import SqliteTimeSeriesStore
    from sidewalk.system import mqtt_settings

    settings = _settings(config)
    _logging(settings, log_format)
    if settings.mqtt.url is None:
        console.print("[red]mqtt.url is not set (set SIDEWALK_MQTT__URL)[/red]")
        raise typer.Exit(2)
    settings.timeseries.sqlite_path.parent.mkdir(parents=True, exist_ok=True)
    store = SqliteTimeSeriesStore(settings.timeseries.sqlite_path)
    influx = None
    if settings.timeseries.influx_url:
        from sidewalk.core.config import Secrets
        from sidewalk.storage.influx import InfluxForwarder

        token = Secrets.from_env().influx_token
        # Its own connection to the store: catching up never blocks ingest's writes.
        influx = InfluxForwarder(
            SqliteTimeSeriesStore(settings.timeseries.sqlite_path),
            url=settings.timeseries.influx_url,
            token=token.get_secret_value() if token else "",
            org=settings.timeseries.influx_org,
            bucket=settings.timeseries.influx_bucket,
            site=settings.site,
        )
        influx.start()
    from sidewalk.storage.evidence import EvidenceStore

    registry = CollectorRegistry()
    consumer = IngestConsumer(
        TimedStore(store, registry),
        mqtt_settings(settings, settings.mqtt.client_id),
        site=settings.site,
        shared_group=settings.mqtt.shared_group,
        batch_size=settings.mqtt.ack_batch,
        influx=influx,
        evidence=EvidenceStore(settings.data_dir / "evidence"),
    )
    consumer.start()
    port = metrics_port or settings.observability.ingest_port
    endpoints = None
    if port:
        obs = ingest_observability(consumer, store.path, registry)
        endpoints = obs.serve(settings.observability.host, port)
    console.print(f"ingest consuming {settings.site} into {settings.timeseries.sqlite_path}")
    _wait_for_signal()
    if endpoints is not None:
        endpoints.stop()
    consumer.stop()
    if influx is not None:
        influx.close()
        influx.store.close()
    store.close()


@app.command()
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
    from sidewalk.observability.process import analytics_observability
    from sidewalk.system import build_analytics, mqtt_settings, open_cases

    settings = _settings(config)
    _logging(settings, log_format)
    if settings.mqtt.url is None:
        console.print("[red]mqtt.url is not set (set SIDEWALK_MQTT__URL)[/red]")
        raise typer.Exit(2)
    profile = load_profile(settings.profile)
    cases = open_cases(settings.cases.database_url, profile)
    runner = build_analytics(
        cases,
        profile,
        mqtt_settings(settings, settings.analytics.client_id),
        site=settings.site,
        mode="stream" if event_time else "live",
        tick_seconds=settings.analytics.tick_seconds,
    )
    runner.start()
    port = metrics_port or settings.observability.analytics_port
    endpoints = None
    if port:
        endpoints = analytics_observability(runner).serve(settings.observability.host, port)
    console.print(
        f"analytics running for {len(runner.engine.clocks)} frontage(s) on {settings.site}"
    )
    _wait_for_signal()
    if endpoints is not None:
        endpoints.stop()
    runner.stop()
    cases.close()


ACTION_KINDS = get_args(ActionKind)


@app.command()
def act(
    kind: Annotated[str, typer.Argument(help=" | ".join(ACTION_KINDS))],
    target: Annotated[
        str, typer.Argument(help="violation key (or frontage id for record_treated)")
    ],
    who: Annotated[str, typer.Option(help="the person recording it (goes in the audit log)")],
    at: Annotated[
        str | None, typer.Option(help="when it happened, ISO 8601 with offset (default: now)")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record what a person did (hazard confirmed, notice delivered, …) for the clocks."""
    from datetime import UTC, datetime

    from sidewalk.system import open_cases

    try:
        action_kind(kind)
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    when = datetime.now(UTC) if at is None else datetime.fromisoformat(at)
    if when.tzinfo is None:
        console.print("[red]--at needs a UTC offset, e.g. 2026-12-11T09:30:00-06:00[/red]")
        raise typer.Exit(2)
    settings = _settings(config)
    cases = open_cases(settings.cases.database_url, load_profile(settings.profile))
    record = cases.record_action(kind, target, when, who)
    cases.close()
    console.print(
        f"recorded action #{record.id}: {kind} on {target} at {when.isoformat()} by {who}"
    )


dashboard_app = typer.Typer(
    add_completion=False, help="The public-works dashboard (FastAPI + a UI in the same process)."
)
app.add_typer(dashboard_app, name="dashboard")


@dashboard_app.callback(invoke_without_command=True)
def dashboard(  # noqa: PLR0917 - Typer maps each option to a parameter
    ctx: typer.Context,
    config: ConfigOption = None,
    host: Annotated[str, typer.Option(help="listen address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="listen port")] = 8080,
    geojson: Annotated[Path | None, typer.Option(help="frontage geometry (GeoJSON)")] = None,
    log_format: LogFormatOption = None,
) -> None:
    """Serve the dashboard over the configured stores (secret: SIDEWALK_DASHBOARD_SECRET)."""
    if ctx.invoked_subcommand is not None:
        return
    from sidewalk.dashboard.commands import dashboard_command

    settings = _settings(config)
    _logging(settings, log_format)
    dashboard_command(settings, host=host, port=port, geojson=geojson)


@dashboard_app.command("add-user")
def dashboard_add_user(
    name: Annotated[str, typer.Argument(help="login name")],
    role: Annotated[str, typer.Option(help="viewer | inspector | clerk | admin")],
    config: ConfigOption = None,
) -> None:
    """Create a dashboard account (the password is asked for, never a flag)."""
    from sidewalk.dashboard.commands import add_user_command

    password = typer.prompt("password", hide_input=True, confirmation_prompt=True)
    add_user_command(_settings(config), name, password, role)
    console.print(f"account {name} ({role}) created")


@app.command()
def replay(  # noqa: PLR0917 - Typer maps each option to a parameter
    scenario: Annotated[
        str, typer.Argument(help="bundled scenario name or TOML path (ignored with --winter)")
    ] = "first-storm",
    profile_path: Annotated[
        Path | None, typer.Option("--profile", help="another ordinance profile (what-if)")
    ] = None,
    winter: Annotated[
        str | None, typer.Option(help="replay a real winter instead, e.g. 2017-18")
    ] = None,
    source: Annotated[
        str, typer.Option(help="minneapolis (hourly, 2012-18) or milwaukee (daily, 1938-)")
    ] = "minneapolis",
    frontages: Annotated[int, typer.Option(help="simulated frontages in the village")] = 30,
    seed: Annotated[int, typer.Option(help="seed of the simulated owners and sensors")] = 1,
) -> None:
    """Play a scenario (or a real winter) straight into the clock engine and report."""
    if winter is not None:
        from sidewalk.scenarios.season import render_report, run_season

        if source == "minneapolis":
            report = run_season(winter, "minneapolis", profile_path, frontages, seed, console)
        elif source == "milwaukee":
            report = run_season(winter, "milwaukee", profile_path, frontages, seed, console)
        else:
            console.print("[red]--source is minneapolis or milwaukee[/red]")
            raise typer.Exit(2)
        render_report(report, console)
        return
    from sidewalk.system import notice_summary, open_cases, replay_in_process

    try:
        story = load_scenario(scenario)
        profile = load_profile(profile_path)
    except (ScenarioError, ProfileError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    with tempfile.TemporaryDirectory(prefix="sidewalk-replay-") as tmp:
        cases = open_cases(f"sqlite:///{tmp}/cases.sqlite3", profile)
        count, notices = replay_in_process(story, cases, profile)
        cases.close()
    console.print(
        f"replayed {count} readings of {story.scenario.name} under {profile.village.name}"
    )
    for frontage, kind, deadline in notice_summary(notices):
        console.print(f"  {kind} for {frontage}, deadline {deadline}")
    for notice in notices:
        console.rule(notice.number)
        console.print(notice.body_text or "", markup=False, highlight=False, soft_wrap=True)

