"""``sidewalk street``: obstructions (§ 370-8), privilege permits (§ 370-9), debris (§ 144-17).

Each entry records a person's action in the case records (with an audit row
naming them); the analytics runner applies it on its next tick and runs the
removal, permit or sweeping clock from it. ``status`` reads the clock records
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
    day,
    fail,
    print_actions,
    print_clocks,
    record,
    village,
)

street_app = command_group(
    "Obstructions, street privilege permits and street sweeping: record them; show the "
    "clocks they run."
)

IdOption = Annotated[str, typer.Option("--id", help="the obstruction's, permit's or incident's id")]
AtOption = Annotated[str, typer.Option(help="when it happened (ISO 8601, or local time)")]
FrontageOption = Annotated[str, typer.Option(help="the frontage whose records carry the case")]
AreaOption = Annotated[str, typer.Option(help="sidewalk or street (§ 370-8 D or E)")]
Mm = Annotated[float | None, typer.Option(min=0)]


@street_app.command()
def obstruction(  # noqa: PLR0917 (Typer maps parameters to options)
    id: IdOption,
    frontage: FrontageOption,
    at: AtOption,
    who: WhoOption,
    area: AreaOption = "sidewalk",
    width_mm: Annotated[float | None, typer.Option(help="narrowest clear width, mm")] = None,
    width_ft: Annotated[int | None, typer.Option(help="narrowest clear width, feet")] = None,
    width_in: Annotated[float, typer.Option(help="… and inches (with --width-ft)")] = 0.0,
    location: Annotated[str | None, typer.Option(help="where, in words")] = None,
    description: Annotated[
        str, typer.Option(help="what narrows the walk or blocks the street")
    ] = "",
    config: ConfigOption = None,
) -> None:
    """Record an obstruction: on a sidewalk a case under the clear width, on a street always."""
    if area not in {"sidewalk", "street"}:
        fail("--area is sidewalk or street")
    detail: dict[str, Any] = {"frontage": frontage, "description": description, "area": area}
    if location is not None:
        detail["location"] = location
    if width_mm is not None and width_ft is not None:
        fail("give the clear width as --width-mm or as --width-ft, not both")
    if area == "sidewalk" and width_mm is None and width_ft is None:
        fail("give the clear width as --width-mm or as --width-ft (--width-in)")
    if width_mm is not None:
        detail["clear_width_mm"] = width_mm
    elif width_ft is not None:
        detail |= {"clear_width_ft": width_ft, "clear_width_in": width_in}
    place = village(config)
    record(place, "record_obstruction", id, place.instant("--at", at), who, detail)


@street_app.command()
def delivered(id: IdOption, at: AtOption, who: WhoOption, config: ConfigOption = None) -> None:
    """The written notice reached the owner or occupant: the removal clock starts."""
    place = village(config)
    record(place, "obstruction_notice_delivered", id, place.instant("--at", at), who, {})


@street_app.command()
def removed(id: IdOption, at: AtOption, who: WhoOption, config: ConfigOption = None) -> None:
    """An inspector saw the obstruction gone."""
    place = village(config)
    record(place, "obstruction_removed", id, place.instant("--at", at), who, {})


@street_app.command()
def permit(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the permit number")],
    frontage: FrontageOption,
    issued_on: Annotated[str, typer.Option(help="the date of issue, YYYY-MM-DD")],
    who: WhoOption,
    holder: Annotated[str, typer.Option(help="to whom it is issued")] = "",
    location: Annotated[str | None, typer.Option(help="where, in words")] = None,
    placed: Annotated[str, typer.Option(help="what it lets stand there")] = "",
    area: AreaOption = "street",
    ends_on: Annotated[
        str | None, typer.Option(help="an earlier termination date written on it, YYYY-MM-DD")
    ] = None,
    walk_width_mm: Mm = None,
    street_width_mm: Mm = None,
    street_occupied_mm: Mm = None,
    config: ConfigOption = None,
) -> None:
    """Record a § 370-9 street privilege permit; it terminates three months after issue."""
    from sidewalk.core.calendar import start_of_day

    issued = day("--issued-on", issued_on)
    if area not in {"sidewalk", "street"}:
        fail("--area is sidewalk or street")
    detail: dict[str, Any] = {
        "frontage": frontage, "issued_on": issued.isoformat(), "holder": holder,
        "placed": placed, "area": area,
    }  # fmt: skip
    if location is not None:
        detail["location"] = location
    if ends_on is not None:
        detail["earlier_termination_on"] = day("--ends-on", ends_on).isoformat()
    for name, value in (
        ("temporary_walk_width_mm", walk_width_mm),
        ("street_width_mm", street_width_mm),
        ("street_occupied_mm", street_occupied_mm),
    ):
        if value is not None:
            detail[name] = value
    place = village(config)
    at = start_of_day(issued, place.profile.zone)  # it runs from its issue date
    record(place, "record_street_privilege", id, at, who, detail)


@street_app.command()
def inspected(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the permit number")],
    at: AtOption,
    who: WhoOption,
    present: Annotated[
        bool, typer.Option("--present/--vacated", help="is what the permit allowed still there?")
    ] = True,
    walk_width_mm: Mm = None,
    street_width_mm: Mm = None,
    street_occupied_mm: Mm = None,
    config: ConfigOption = None,
) -> None:
    """An inspector looked at a permit's site: its conditions, or, after it ended, vacated?"""
    detail: dict[str, Any] = {"present": present}
    for name, value in (
        ("temporary_walk_width_mm", walk_width_mm),
        ("street_width_mm", street_width_mm),
        ("street_occupied_mm", street_occupied_mm),
    ):
        if value is not None:
            detail[name] = value
    place = village(config)
    record(place, "street_privilege_inspected", id, place.instant("--at", at), who, detail)


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
    place = village(config)
    record(place, "record_sweeping_incident", id, place.instant("--at", at), who, detail)


@street_app.command()
def swept(id: IdOption, at: AtOption, who: WhoOption, config: ConfigOption = None) -> None:
    """The contractor swept the street."""
    place = village(config)
    record(place, "sweeping_done", id, place.instant("--at", at), who, {})


@street_app.command()
def status(config: ConfigOption = None) -> None:
    """Obstruction, permit and sweeping clocks, their deadlines (local time), refused entries."""
    from sidewalk.analytics.clocks.actions import STREET_ACTIONS
    from sidewalk.analytics.clocks.obstructions import OBSTRUCTION, PRIVILEGE, SWEEPING

    place = village(config)
    with place.cases() as cases:
        for kind in (OBSTRUCTION, PRIVILEGE, SWEEPING):
            print_clocks(kind, cases.clocks.list(kind=kind), place.profile)
        print_actions(cases, STREET_ACTIONS)
