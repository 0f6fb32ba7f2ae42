"""What the staff-entry commands (``sidewalk cold``, ``sidewalk street``) share.

Each entry records a person's action in the case records (with an audit row
naming them); the analytics runner applies it on its next tick. The status
commands read the clock records the runner wrote, so they show what the
running system knows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from sidewalk.core.clock import format_local
from sidewalk.core.config import ConfigError, load_settings
from sidewalk.core.profile import Profile, ProfileError, load_profile
from sidewalk.storage.cases import CaseStore, ClockRecord

console = Console()

ConfigOption = Annotated[Path | None, typer.Option("--config", "-c", help="TOML configuration")]
WhoOption = Annotated[str, typer.Option(help="the person recording it (goes in the audit log)")]

# kind, target, event time, who, detail
Action = tuple[str, str, datetime, str, dict[str, Any]]


def instant(option: str, text: str) -> datetime:
    """An ISO 8601 instant with a UTC offset, or exit 2 naming the option."""
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


def day(option: str, text: str) -> date:
    """An ISO 8601 date (YYYY-MM-DD), or exit 2 naming the option."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        console.print(f"[red]{option} needs an ISO 8601 date, e.g. 2026-11-30")
        raise typer.Exit(2) from None


@contextmanager
def open_records(config: Path | None) -> Iterator[tuple[CaseStore, Profile]]:
    """The configured case records and profile; a configuration error exits 2."""
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


def record(config: Path | None, action: Action) -> None:
    """Record one person's action for the runner to apply."""
    kind, target, at, who, detail = action
    with open_records(config) as (cases, _profile):
        stored = cases.record_action(kind, target, at, who, detail)
    console.print(f"recorded action #{stored.id}: {kind} {target} by {who}; the runner applies it")


def print_clocks(kind: str, clocks: Sequence[ClockRecord], profile: Profile) -> None:
    """One line per clock, so it reads (and greps) the same at any terminal width."""
    console.print(f"[bold]{kind}[/bold]: {len(clocks) or 'none'}")
    for clock in clocks:
        until = (
            "" if clock.deadline is None else f" until {format_local(clock.deadline, profile.zone)}"
        )
        # The key is <frontage>/<clock>/<id>[/<record>]: show the id (and record).
        name = clock.key.split("/", 2)[-1]
        console.print(
            f"  {name} ({clock.frontage_id}): {clock.state}{until}"
            f" — {clock.citation or 'no citation'}",
            soft_wrap=True,
        )


def print_actions(cases: CaseStore, kinds: Collection[str]) -> None:
    """Entries of these kinds the runner has not applied yet, or refused (with the reason)."""
    for action in cases.list_actions():
        if action.kind not in kinds:
            continue
        if action.applied_at is None:
            console.print(f"pending: {action.kind} {action.target} by {action.who}")
        elif action.error is not None:
            console.print(f"[red]refused:[/red] {action.kind} {action.target}: {action.error}")
