"""``sidewalk cold``: staff enter pours and street-opening permits; the clocks' status.

Entering a pour or a permit records a person's action in the case records (with
an audit row naming them); the analytics runner applies it on its next tick and
runs the keep-off and permit clocks from it. ``status`` reads the clock records
the runner wrote, so it shows what the running system knows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from sidewalk.analytics.clocks.cold_weather import FROZEN_SUBGRADE, KEEP_OFF, OPENING_PERMIT
from sidewalk.core.clock import format_local
from sidewalk.core.config import ConfigError, load_settings
from sidewalk.core.profile import Profile, ProfileError, load_profile
from sidewalk.storage.cases import CaseStore

cold_app = typer.Typer(
    add_completion=False,
    help="Cold weather: record pours and street-opening permits; show the clocks they run.",
)
console = Console()

ConfigOption = Annotated[Path | None, typer.Option("--config", "-c", help="TOML configuration")]
WhoOption = Annotated[str, typer.Option(help="the person recording it (goes in the audit log)")]


def _instant(option: str, text: str) -> datetime:
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        console.print(
            f"[red]{option} needs ISO 8601 with a UTC offset, e.g. 2026-11-20T09:30-06:00"
        )
        raise typer.Exit(2)
    return at


@contextmanager
def _cases(config: Path | None) -> Iterator[tuple[CaseStore, Profile]]:
    from sidewalk.system import open_cases

    try:
        settings = load_settings(config)
        profile = load_profile(settings.profile)
    except (ConfigError, ProfileError) as exc:
        console.print(f"[red]configuration error:[/red] {exc}")
        raise typer.Exit(2) from None
    cases = open_cases(settings.cases.database_url, profile)
    try:
        yield cases, profile
    finally:
        cases.close()


def _record(config: Path | None, action: tuple[str, str, datetime, str, dict[str, Any]]) -> None:
    kind, target, at, who, detail = action
    with _cases(config) as (cases, _profile):
        record = cases.record_action(kind, target, at, who, detail)
    console.print(f"recorded action #{record.id}: {kind} {target} by {who}; the runner applies it")


@cold_app.command()
def pour(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the pour's id, e.g. a work order number")],
    site: Annotated[str, typer.Option(help="the site (pole) whose sensors cover the pour")],
    at: Annotated[str, typer.Option(help="when the concrete was placed, ISO 8601 with offset")],
    who: WhoOption,
    kind: Annotated[str, typer.Option(help="sidewalk (§ 370-5 (9)) or street (§ 370-7G)")] = (
        "sidewalk"
    ),
    location: Annotated[str | None, typer.Option(help="where, in words")] = None,
    frontage: Annotated[
        str | None, typer.Option(help="the frontage whose records carry the clock")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record a concrete pour; its keep-off clock starts at the pour's time."""
    when = _instant("--at", at)
    detail: dict[str, Any] = {"kind": kind, "site": site, "at": when.isoformat()}
    if location is not None:
        detail["location"] = location
    if frontage is not None:
        detail["frontage"] = frontage
    _record(config, ("record_pour", id, when, who, detail))


@cold_app.command()
def permit(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the permit number")],
    street: Annotated[str, typer.Option(help="the street segment opened")],
    opened_at: Annotated[str, typer.Option(help="when the opening starts, ISO 8601 with offset")],
    who: WhoOption,
    approved_at: Annotated[
        str | None, typer.Option(help="the date of approval (default: --opened-at)")
    ] = None,
    emergency: Annotated[
        bool, typer.Option("--emergency", help="the Board found it an emergency (§ 370-7 A, H)")
    ] = False,
    renewals: Annotated[int, typer.Option(help="30-day renewals granted so far")] = 0,
    frontage: Annotated[
        str | None, typer.Option(help="the frontage whose records carry the clock")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record a street-opening permit (or its renewal, with a higher --renewals)."""
    opened = _instant("--opened-at", opened_at)
    detail: dict[str, Any] = {
        "street": street,
        "opened_at": opened.isoformat(),
        "emergency": emergency,
        "renewals": renewals,
    }
    if approved_at is not None:
        detail["approved_at"] = _instant("--approved-at", approved_at).isoformat()
    if frontage is not None:
        detail["frontage"] = frontage
    # A renewal is granted when entered; a first entry is dated by the opening.
    _record(config, ("record_permit", id, datetime.now(UTC) if renewals else opened, who, detail))


@cold_app.command()
def status(config: ConfigOption = None) -> None:
    """Frozen sites, running keep-off clocks, permits and their deadlines (local time)."""
    with _cases(config) as (cases, profile):
        for kind, active_only in (
            (FROZEN_SUBGRADE, False),
            (KEEP_OFF, True),
            (OPENING_PERMIT, False),
        ):
            clocks = cases.list_clocks(kind=kind, active_only=active_only)
            if kind == FROZEN_SUBGRADE:
                clocks = [c for c in clocks if c.state == "frozen"]
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
        kinds = {"record_pour", "record_permit"}
        for action in cases.list_actions():
            if action.kind not in kinds:
                continue
            if action.applied_at is None:
                console.print(f"pending: {action.kind} {action.target} by {action.who}")
            elif action.error is not None:
                console.print(f"[red]refused:[/red] {action.kind} {action.target}: {action.error}")
