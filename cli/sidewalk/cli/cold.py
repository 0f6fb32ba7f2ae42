"""``sidewalk cold``: staff enter pours and street-opening permits; the clocks' status.

Entering a pour or a permit records a person's action in the case records (with
an audit row naming them); the analytics runner applies it on its next tick and
runs the keep-off and permit clocks from it. ``status`` reads the clock records
the runner wrote, so it shows what the running system knows.

Each command imports the clocks and the records when it runs (``common``: a fast --help).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from sidewalk.cli.common import (
    ConfigOption,
    WhoOption,
    command_group,
    print_actions,
    print_clocks,
    record,
    village,
)

cold_app = command_group(
    "Cold weather: record pours and street-opening permits; show the clocks they run."
)


@cold_app.command()
def pour(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the pour's id, e.g. a work order number")],
    site: Annotated[str, typer.Option(help="the site (pole) whose sensors cover the pour")],
    at: Annotated[str, typer.Option(help="when the concrete was placed (ISO 8601 or local)")],
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
    place = village(config)
    when = place.instant("--at", at)
    detail: dict[str, Any] = {"kind": kind, "site": site, "at": when.isoformat()}
    if location is not None:
        detail["location"] = location
    if frontage is not None:
        detail["frontage"] = frontage
    record(place, "record_pour", id, when, who, detail)


@cold_app.command()
def permit(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the permit number")],
    street: Annotated[str, typer.Option(help="the street segment opened")],
    opened_at: Annotated[str, typer.Option(help="when the opening starts (ISO 8601 or local)")],
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
    place = village(config)
    opened = place.instant("--opened-at", opened_at)
    detail: dict[str, Any] = {
        "street": street,
        "opened_at": opened.isoformat(),
        "emergency": emergency,
        "renewals": renewals,
    }
    if approved_at is not None:
        detail["approved_at"] = place.instant("--approved-at", approved_at).isoformat()
    if frontage is not None:
        detail["frontage"] = frontage
    # A renewal is granted when entered; a first entry is dated by the opening.
    when = place.instant("--at", None) if renewals else opened
    record(place, "record_permit", id, when, who, detail)


@cold_app.command()
def status(config: ConfigOption = None) -> None:
    """Frozen sites, running keep-off clocks, permits and their deadlines (local time)."""
    from sidewalk.analytics.clocks.cold_weather import FROZEN_SUBGRADE, KEEP_OFF, OPENING_PERMIT

    place = village(config)
    with place.cases() as cases:
        for kind, active_only in (
            (FROZEN_SUBGRADE, False),
            (KEEP_OFF, True),
            (OPENING_PERMIT, False),
        ):
            clocks = cases.clocks.list(kind=kind, active_only=active_only)
            if kind == FROZEN_SUBGRADE:
                clocks = [c for c in clocks if c.state == "frozen"]
            print_clocks(kind, clocks, place.profile)
        print_actions(cases, {"record_pour", "record_permit"})
