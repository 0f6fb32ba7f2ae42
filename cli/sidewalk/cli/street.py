"""``sidewalk street``: obstructions (§ 370-8), privilege permits (§ 370-9), debris (§ 144-17),
and the rules inspectors enforce by sight (§ 370-10 C, § 370-11 C, § 370-14, §§ 144-11, 144-12).

Each entry records a person's action in the case records (with an audit row
naming them); the analytics runner applies it on its next tick and runs the
removal, permit or sweeping clock from it. ``status`` reads the clock records
the runner wrote, so it shows what the running system knows. The written notice a
case calls for is issued with ``sidewalk notices issue obstruction|finding``; its service
(``delivered``, ``noticed``, with the method) is recorded on that notice in the register,
and the case's period runs from it (``alerts.delivery.record_notice_delivery``).

Each command imports the clocks and the records when it runs (``common``: a fast --help).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from sidewalk.cli.common import (
    ConfigOption,
    WhoOption,
    command_group,
    console,
    day,
    fail,
    print_actions,
    print_clocks,
    record,
    refusals,
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


KindOption = Annotated[
    str,
    typer.Option(
        help="what it is: fixture (a temporary, unattached fixture, § 370-8 C), "
        "building_materials (§ 370-8 B(2)), excavation (§ 370-8 B(3)) or other"
    ),
]


@street_app.command()
def obstruction(  # noqa: PLR0917 (Typer maps parameters to options)
    id: IdOption,
    frontage: FrontageOption,
    at: AtOption,
    who: WhoOption,
    kind: KindOption,
    area: AreaOption = "sidewalk",
    width_mm: Annotated[float | None, typer.Option(help="narrowest clear width, mm")] = None,
    width_ft: Annotated[int | None, typer.Option(help="narrowest clear width, feet")] = None,
    width_in: Annotated[float, typer.Option(help="… and inches (with --width-ft)")] = 0.0,
    location: Annotated[str | None, typer.Option(help="where, in words")] = None,
    description: Annotated[
        str, typer.Option(help="what narrows the walk or blocks the street")
    ] = "",
    privilege_permit: Annotated[
        str | None, typer.Option(help="the § 370-9 street privilege permit it stands under")
    ] = None,
    opening_permit: Annotated[
        str | None, typer.Option(help="the §§ 370-6/370-7 permit an excavation is under")
    ] = None,
    authorization: Annotated[
        str | None, typer.Option(help="the Building Inspector's authorization (materials)")
    ] = None,
    sidewalk_width_mm: Annotated[
        float | None, typer.Option(min=0, help="the walk's whole width, mm (materials)")
    ] = None,
    street_width_mm: Mm = None,
    street_occupied_mm: Mm = None,
    gutters_clear: Annotated[
        bool | None, typer.Option("--gutters-clear/--gutters-blocked", help="materials")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record an obstruction: a case unless a permit, authorization or § 370-8 C fixture rule
    on record covers it (the engine checks the references against its records)."""
    if area not in {"sidewalk", "street"}:
        fail("--area is sidewalk or street")
    detail: dict[str, Any] = {
        "frontage": frontage, "description": description, "area": area, "kind": kind,
    }  # fmt: skip
    if location is not None:
        detail["location"] = location
    if width_mm is not None and width_ft is not None:
        fail("give the clear width as --width-mm or as --width-ft, not both")
    if width_mm is not None:
        detail["clear_width_mm"] = width_mm
    elif width_ft is not None:
        detail |= {"clear_width_ft": width_ft, "clear_width_in": width_in}
    for name, value in (
        ("privilege_permit", privilege_permit),
        ("opening_permit", opening_permit),
        ("materials_authorization", authorization),
        ("sidewalk_width_mm", sidewalk_width_mm),
        ("street_width_mm", street_width_mm),
        ("street_occupied_mm", street_occupied_mm),
        ("gutters_clear", gutters_clear),
    ):
        if value is not None:
            detail[name] = value
    place = village(config)
    record(place, "record_obstruction", id, place.instant("--at", at), who, detail)


@street_app.command()
def authorize(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the authorization's reference")],
    frontage: FrontageOption,
    from_day: Annotated[str, typer.Option("--from", help="its first day, YYYY-MM-DD")],
    until_day: Annotated[str, typer.Option("--until", help="its last day, YYYY-MM-DD")],
    who: WhoOption,
    by: Annotated[str | None, typer.Option(help="the Building Inspector")] = None,
    location: Annotated[str | None, typer.Option(help="where, in words")] = None,
    config: ConfigOption = None,
) -> None:
    """Record the Building Inspector's authorization of building materials (§ 370-8 B(2))."""
    from sidewalk.core.calendar import start_of_day

    first = day("--from", from_day)
    detail: dict[str, Any] = {
        "frontage": frontage,
        "authorized_from": first.isoformat(),
        "authorized_until": day("--until", until_day).isoformat(),
    }
    if by is not None:
        detail["by"] = by
    if location is not None:
        detail["location"] = location
    place = village(config)
    at = start_of_day(first, place.profile.zone)
    record(place, "record_materials_authorization", id, at, who, detail)


MethodOption = Annotated[
    str,
    typer.Option(
        help="how it was served: hand (personal delivery), posted (on the premises) or mail"
        " (--at is the day it was received); what counts is the profile's notice_delivery"
    ),
]
# What the service starts, per case kind, for the line printed.
_PERIOD_WORDS = {"obstruction": "the removal period", "inspection": "the period to correct"}
_SERVED_BY = {"hand": "by hand", "posted": "by posting on the premises", "mail": "by mail"}


def _served(case_key: str, *, at: str, who: str, method: str, config: Any) -> None:
    """Record the service of the case's notice in the register: the notice's delivery, and
    the step that starts the case's period at ``at`` (``alerts.delivery``)."""
    from sidewalk.alerts.delivery import NotReadyError, record_notice_delivery
    from sidewalk.alerts.issue import CASE_WORDS, notice_of_case
    from sidewalk.cli.common import no_nul
    from sidewalk.core.clock import format_local

    no_nul(id=case_key, who=who)
    kind, _, case_id = case_key.partition(":")
    issue = "obstruction" if kind == "obstruction" else "finding"
    place = village(config)
    when = place.instant("--at", at)
    with place.cases() as cases, refusals(ValueError, NotReadyError):
        notice = notice_of_case(cases, case_key)
        if notice is None:
            fail(
                f"refused: the notice register holds no notice for {CASE_WORDS[kind]} {case_id};"
                f" issue it first: sidewalk notices issue {issue} --id {case_id}"
            )
        if notice.delivered_at is not None:
            served = format_local(notice.delivered_at, place.profile.zone)
            fail(f"refused: notice {notice.number} was served already, {served}")
        record_notice_delivery(cases, notice.id, when, who, method, profile=place.profile)
    console().print(
        f"recorded: notice {notice.number} served {_SERVED_BY.get(method, method)},"
        f" {format_local(when, place.profile.zone)}, by {who}; {_PERIOD_WORDS[kind]} runs"
        " from then (sidewalk street status shows its deadline once the runner applies it)",
        soft_wrap=True,
    )


@street_app.command()
def delivered(
    id: IdOption,
    at: AtOption,
    who: WhoOption,
    method: MethodOption = "hand",
    config: ConfigOption = None,
) -> None:
    """The obstruction's written notice (sidewalk notices issue obstruction) was served on the
    owner or occupant: the 24 hours to remove it (§ 370-8 D/E) run from then."""
    _served(f"obstruction:{id}", at=at, who=who, method=method, config=config)


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
    contractor: Annotated[
        str | None, typer.Option(help="the primary contractor § 144-17 bills")
    ] = None,
    contractor_address: Annotated[
        list[str] | None, typer.Option(help="the contractor's mailing address, one per line")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record construction dirt or debris on a street; the sweeping clock starts."""
    detail: dict[str, Any] = {"frontage": frontage, "description": description}
    if location is not None:
        detail["location"] = location
    if contractor is not None:
        detail["contractor"] = contractor
    if contractor_address:
        detail["contractor_address"] = list(contractor_address)
    place = village(config)
    record(place, "record_sweeping_incident", id, place.instant("--at", at), who, detail)


@street_app.command()
def swept(id: IdOption, at: AtOption, who: WhoOption, config: ConfigOption = None) -> None:
    """The contractor swept the street."""
    place = village(config)
    record(place, "sweeping_done", id, place.instant("--at", at), who, {})


RULES_HELP = (
    "snow_on_street (§ 370-10 C), mailbox (§ 370-11 C), dumping (§ 370-14) or "
    "excavation_fence (§ 144-12 B)"
)


@street_app.command()
def finding(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the finding's id")],
    frontage: FrontageOption,
    rule: Annotated[str, typer.Option(help=RULES_HELP)],
    at: AtOption,
    who: WhoOption,
    location: Annotated[str | None, typer.Option(help="where, in words")] = None,
    description: Annotated[str, typer.Option(help="what was seen")] = "",
    onto: Annotated[
        str, typer.Option(help="§ 370-10 C: street, alley, sidewalk or public_land")
    ] = "street",
    from_own_walk: Annotated[
        bool, typer.Option(help="§ 370-10 C: the snow came from this parcel's own walk")
    ] = False,
    fence_height_mm: Annotated[
        float | None,
        typer.Option(min=0, help="§ 144-12 B: the fence's height, mm (none: no fence)"),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record what an inspector found under a rule no sensor sees; a case unless within
    the Code (§ 370-10 C's exception, a fence 4 ft high)."""
    detail: dict[str, Any] = {
        "frontage": frontage, "rule": rule, "description": description, "onto": onto,
        "from_own_walk": from_own_walk,
    }  # fmt: skip
    if location is not None:
        detail["location"] = location
    if fence_height_mm is not None:
        detail["fence_height_mm"] = fence_height_mm
    place = village(config)
    record(place, "record_inspection_finding", id, place.instant("--at", at), who, detail)


def _work(kind: str, id: str, *, frontage: str, at: str, who: str, description: str,
          config: Any) -> None:  # fmt: skip
    place = village(config)
    when = place.instant("--at", at)
    detail = {"frontage": frontage, "at": when.isoformat(), "description": description}
    record(place, kind, id, when, who, detail)


@street_app.command()
def demolition(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the demolition permit's or site's id")],
    frontage: FrontageOption,
    at: Annotated[str, typer.Option(help="when the demolition was completed")],
    who: WhoOption,
    description: Annotated[str, typer.Option(help="what was razed")] = "",
    config: ConfigOption = None,
) -> None:
    """§ 144-11: a demolition completed; the 30 days to fill its excavation start."""
    _work(
        "record_demolition_completed", id, frontage=frontage, at=at, who=who,
        description=description, config=config,
    )  # fmt: skip


@street_app.command()
def excavation(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the excavation's id")],
    frontage: FrontageOption,
    at: Annotated[str, typer.Option(help="when the excavation or foundation was opened")],
    who: WhoOption,
    description: Annotated[str, typer.Option(help="what is open")] = "",
    config: ConfigOption = None,
) -> None:
    """§ 144-12 C: an excavation for building purposes opened; after 3 months it is abandoned."""
    _work(
        "record_excavation_opened", id, frontage=frontage, at=at, who=who,
        description=description, config=config,
    )  # fmt: skip


@street_app.command()
def noticed(
    id: Annotated[str, typer.Option("--id", help="the finding's, demolition's or excavation's id")],
    at: AtOption,
    who: WhoOption,
    method: MethodOption = "hand",
    config: ConfigOption = None,
) -> None:
    """The finding's written notice (sidewalk notices issue finding; § 144-12 C: the order)
    was served on the owner: the period to correct runs from then."""
    _served(f"inspection:{id}", at=at, who=who, method=method, config=config)


@street_app.command()
def corrected(
    id: Annotated[str, typer.Option("--id", help="the finding's, demolition's or excavation's id")],
    at: AtOption,
    who: WhoOption,
    config: ConfigOption = None,
) -> None:
    """An inspector saw it corrected (cleared, removed, fenced, filled, building resumed)."""
    place = village(config)
    record(place, "inspection_corrected", id, place.instant("--at", at), who, {})


@street_app.command()
def status(config: ConfigOption = None) -> None:
    """Obstruction, permit and sweeping clocks, their deadlines (local time), refused entries."""
    from sidewalk.analytics.clocks.actions import STREET_ACTIONS
    from sidewalk.analytics.clocks.inspections import INSPECTION
    from sidewalk.analytics.clocks.obstructions import OBSTRUCTION, PRIVILEGE, SWEEPING

    place = village(config)
    with place.cases() as cases:
        for kind in (OBSTRUCTION, PRIVILEGE, SWEEPING, INSPECTION):
            print_clocks(kind, cases.clocks.list(kind=kind), place.profile)
        print_actions(cases, STREET_ACTIONS)
