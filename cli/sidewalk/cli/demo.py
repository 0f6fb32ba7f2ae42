"""``sidewalk demo``: the whole system on embedded defaults, replaying a storm through MQTT.

The broker, the stores and the components load when the command runs (``common``:
a fast --help).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sidewalk.cli.common import ConfigOption, console, fail, load_profile, load_settings

if TYPE_CHECKING:
    from sidewalk.alerts.letterhead import Letterhead
    from sidewalk.core.config import Settings
    from sidewalk.core.profile import Profile
    from sidewalk.scenarios import Scenario
    from sidewalk.system import DemoResult


def demo(  # noqa: PLR0917 (Typer maps parameters to options)
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
    parcels: Annotated[
        Path | None,
        typer.Option(
            help="the county parcel file the street comes in through (default: the bundled"
            " scenario's own; none: the scenario's frontages are entered directly)"
        ),
    ] = None,
) -> None:
    """Replay a storm through the real MQTT path on embedded defaults and print the notices."""
    import logging
    import tempfile

    from sidewalk.scenarios import bundled_parcels
    from sidewalk.system import run_through_broker, serve_demo

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # amqtt logs a stack trace when a client first tries MQTT v5 (we then fall
    # back to 3.1.1, as designed); keep the demo's output readable.
    for name in ("amqtt", "asyncio", "transitions"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    settings = load_settings(config)
    story = load_story(scenario)
    profile = load_profile(settings.profile)
    where = workdir or Path(tempfile.mkdtemp(prefix="sidewalk-demo-"))
    console().print(
        f"[bold]Sidewalk Watch demo[/bold]: {story.scenario.name} — {story.scenario.description}"
    )
    broker = settings.mqtt.url or "embedded amqtt broker"
    console().print(f"broker: {broker}; stores: SQLite in {where}")
    database_url = settings.cases.database_url
    with console().status(
        "replaying the storm through pole → broker → ingest → analytics → alerts …"
    ):
        result = run_through_broker(
            story,
            where,
            mqtt_url=settings.mqtt.url,
            database_url=None if database_url.startswith("sqlite") else database_url,
            profile=profile,
            letterhead=_letterhead(settings, profile),
            echo=lambda line: console().print(line, markup=False, highlight=False),
            # The street comes in as a village's does: `sidewalk registry import`.
            parcels=parcels or bundled_parcels(story.scenario.name),
        )
    story = result.scenario or story
    _print(result, profile)
    expected = {(e.frontage, e.notice, e.deadline) for e in story.expect}
    got = {(n.frontage_id, n.kind, n.deadline) for n in result.notices}
    if story.expect:
        verdict = "[green]as expected[/green]" if got == expected else "[red]NOT as expected[/red]"
        console().print(f"scenario expectation: {len(expected)} notice(s) — {verdict}")
        if got != expected:
            raise typer.Exit(1)
    if serve:
        serve_demo(story, where, profile, port=port)


def _letterhead(settings: Settings, profile: Profile) -> Letterhead | None:
    """The settings' [village] letterhead; None: the demo's own, marked as a demonstration."""
    from sidewalk.alerts.letterhead import Letterhead

    return Letterhead.from_settings(settings.village, profile) if settings.village else None


def load_story(scenario: str) -> Scenario:
    """A bundled scenario by name, or a scenario TOML; an error exits 2."""
    from sidewalk.scenarios import ScenarioError, load_scenario

    try:
        return load_scenario(scenario)
    except ScenarioError as exc:
        fail(f"scenario: {exc}")


def _print(result: DemoResult, profile: Profile) -> None:
    from rich.table import Table

    from sidewalk.core.clock import format_local

    zone = profile.zone
    console().print(
        f"published {result.published} readings over MQTT {result.protocol}; "
        f"stored {result.stored} (duplicates dropped {result.duplicates}, "
        f"dead letters {result.dead_letters}) in {result.seconds:.1f} s"
    )
    table = Table(title=f"What the clocks did (event time, {zone.key})")
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
    console().print(table)
    console().print(f"[bold]{len(result.notices)} notice(s)[/bold]")
    for notice in result.notices:
        deadline = format_local(notice.deadline, zone) if notice.deadline else "-"
        console().rule(
            f"{notice.number} · {notice.frontage_id} · deadline {deadline} · {notice.status}"
        )
        console().print(
            notice.body_text or "(not rendered)", markup=False, highlight=False, soft_wrap=True
        )
