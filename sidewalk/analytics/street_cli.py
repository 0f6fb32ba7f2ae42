"""``sidewalk street``: inspectors record obstructions (§ 370-8) and street debris (§ 144-17).

Each entry records a person's action in the case records (with an audit row
naming them); the analytics runner applies it on its next tick and runs the
removal or sweeping clock from it. ``status`` reads the clock records the
runner wrote, so it shows what the running system knows.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console

from sidewalk.analytics.clocks.engine import STREET_ACTIONS
from sidewalk.analytics.clocks.obstructions import OBSTRUCTION, SWEEPING
from sidewalk.analytics.cold_cli import ConfigOption, WhoOption, _cases, _instant, _record
from sidewalk.core.clock import format_local

street_app = typer.Typer(
    add_completion=False,
    help="Obstructions and street sweeping: record them; show the removal and sweeping clocks.",
)
console = Console()

IdOption = Annotated[str, typer.Option("--id", help="the obstruction's or incident's id")]
AtOption = Annotated[str, typer.Option(help="when it happened, ISO 8601 with a UTC offset")]
FrontageOption = Annotated[str, typer.Option(help="the frontage whose records carry the case")]


@street_app.command()
def obstruction(  # noqa: PLR0917 (Typer maps parameters to options)
    id: IdOption,
    frontage: FrontageOption,
    at: AtOption,
    who: WhoOption,
    width_mm: Annotated[float | None, typer.Option(help="narrowest clear width, mm")] = None,
    width_ft: Annotated[int | None, typer.Option(help="narrowest clear width, feet")] = None,
    width_in: Annotated[float, typer.Option(help="… and inches (with --width-ft)")] = 0.0,
    description: Annotated[str, typer.Option(help="what narrows the walk")] = "",
    config: ConfigOption = None,
) -> None:
    """Record an obstruction seen on a sidewalk; under the clear width it opens a case."""
    when = _instant("--at", at)
    detail: dict[str, Any] = {"frontage": frontage, "description": description}
    if (width_mm is None) == (width_ft is None):
        console.print("[red]give the clear width as --width-mm or as --width-ft (--width-in)")
        raise typer.Exit(2)
    if width_mm is not None:
        detail["clear_width_mm"] = width_mm
    else:
        detail |= {"clear_width_ft": width_ft, "clear_width_in": width_in}
    _record(config, ("record_obstruction", id, when, who, detail))


@street_app.command()
def delivered(id: IdOption, at: AtOption, who: WhoOption, config: ConfigOption = None) -> None:
    """The written notice reached the owner or occupant: the removal clock starts."""
    _record(config, ("obstruction_notice_delivered", id, _instant("--at", at), who, {}))


@street_app.command()
def removed(id: IdOption, at: AtOption, who: WhoOption, config: ConfigOption = None) -> None:
    """An inspector saw the obstruction gone."""
    _record(config, ("obstruction_removed", id, _instant("--at", at), who, {}))


@street_app.command()
def sweeping(  # noqa: PLR0917 (Typer maps parameters to options)
    id: IdOption,
    frontage: FrontageOption,
    at: AtOption,
    who: WhoOption,
    location: Annotated[str | None, typer.Option(help="the street, in words")] = None,
    description: Annotated[str, typer.Option(help="what was left on the street")] = "",
    config: ConfigOption = None,
) -> None:
    """Record construction dirt or debris on a street; the sweeping clock starts."""
    detail: dict[str, Any] = {"frontage": frontage, "description": description}
    if location is not None:
        detail["location"] = location
    _record(config, ("record_sweeping_incident", id, _instant("--at", at), who, detail))


@street_app.command()
def swept(id: IdOption, at: AtOption, who: WhoOption, config: ConfigOption = None) -> None:
    """The contractor swept the street."""
    _record(config, ("sweeping_done", id, _instant("--at", at), who, {}))


@street_app.command()
def status(config: ConfigOption = None) -> None:
    """Obstruction and sweeping clocks, their deadlines (local time), refused entries."""
    with _cases(config) as (cases, profile):
        for kind in (OBSTRUCTION, SWEEPING):
            clocks = cases.list_clocks(kind=kind)
            console.print(f"[bold]{kind}[/bold]: {len(clocks) or 'none'}")
            for clock in clocks:
                # One line per clock, so it reads (and greps) the same at any terminal width.
                until = (
                    ""
                    if clock.deadline is None
                    else f" until {format_local(clock.deadline, profile.zone)}"
                )
                console.print(
                    f"  {clock.key.rsplit('/', 1)[-1]} ({clock.frontage_id}): {clock.state}{until}"
                    f" — {clock.citation or 'no citation'}",
                    soft_wrap=True,
                )
        for action in cases.list_actions():
            if action.kind not in STREET_ACTIONS:
                continue
            if action.applied_at is None:
                console.print(f"pending: {action.kind} {action.target} by {action.who}")
            elif action.error is not None:
                console.print(f"[red]refused:[/red] {action.kind} {action.target}: {action.error}")
