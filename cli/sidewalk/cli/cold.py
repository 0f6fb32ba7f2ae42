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
    console,
    fail,
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


# The § 370-7 B and F notices and the events they precede (ISO 8601 or local time).
DpwNotified = Annotated[
    str | None,
    typer.Option(
        help="when the Director of Public Works was told of the excavation (24 hours before)"
    ),
]
PartiesNotified = Annotated[
    str | None,
    typer.Option(help="when everyone affected was told of the work (a business day before)"),
]
ColdMixOn = Annotated[
    str | None, typer.Option(help="temporary cold mix placed (§ 370-7 G), YYYY-MM-DD")
]
PermanentPavementOn = Annotated[
    str | None, typer.Option(help="permanent pavement replaced (§ 370-7 G), YYYY-MM-DD")
]
BackfillAt = Annotated[
    str | None,
    typer.Option(help="when the backfilling or restoring of the surface is (or was) done"),
]
BackfillNotified = Annotated[
    str | None,
    typer.Option(help="when the Village was told of the backfilling (four hours before)"),
]
ServiceLossAt = Annotated[
    str | None, typer.Option(help="when private properties lose a utility service")
]
ServiceLossNotified = Annotated[
    str | None, typer.Option(help="when those properties were told of the loss (12 hours before)")
]


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
    applied_at: Annotated[
        str | None,
        typer.Option(
            help="when the permit was applied for (§ 370-7 H: an emergency's is due "
            "by the end of the next business day)"
        ),
    ] = None,
    pavement: Annotated[
        bool,
        typer.Option(
            "--pavement/--no-pavement",
            help="the opening took up pavement (§ 370-7 G's replacement applies)",
        ),
    ] = True,
    cold_mix_on: ColdMixOn = None,
    permanent_pavement_on: PermanentPavementOn = None,
    street_repaved_on: Annotated[
        str | None,
        typer.Option(
            help="the street's last permanent improvement or repaving (§ 370-7 I), YYYY-MM-DD"
        ),
    ] = None,
    essential: Annotated[
        bool,
        typer.Option(
            "--essential",
            help="the Board or its designee found the opening absolutely essential (§ 370-7 I)",
        ),
    ] = False,
    repaving_notice_on: Annotated[
        str | None,
        typer.Option(
            help="the Clerk-Treasurer's written notice of a repaving determination "
            "for this street (§ 370-7 I), YYYY-MM-DD"
        ),
    ] = None,
    work_completed_on: Annotated[
        str | None,
        typer.Option(help="the excavation work in the street completed (§ 370-7 I), YYYY-MM-DD"),
    ] = None,
    dpw_notified_at: DpwNotified = None,
    parties_notified_at: PartiesNotified = None,
    backfill_at: BackfillAt = None,
    backfill_notified_at: BackfillNotified = None,
    service_loss_at: ServiceLossAt = None,
    service_loss_notified_at: ServiceLossNotified = None,
    renewals: Annotated[int, typer.Option(help="30-day renewals granted so far")] = 0,
    frontage: Annotated[
        str | None, typer.Option(help="the frontage whose records carry the clock")
    ] = None,
    holder: Annotated[
        str | None,
        typer.Option(help="the permit holder: the person, firm or utility it is issued to"),
    ] = None,
    holder_address: Annotated[
        list[str] | None,
        typer.Option(
            help="the permit holder's mailing address, one line per option "
            "(e.g. --holder-address '200 Gas Way' --holder-address 'Watertown, WI 53094')"
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record a street-opening permit (or its renewal, with a higher --renewals), with the
    dates of its work and notices known so far; ``permit-work`` adds the others later."""
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
    if holder_address and not holder:
        fail("--holder-address needs --holder (whose address it is)")
    if holder is not None:
        if not holder.strip():
            fail("--holder needs the permit holder's name")
        if not holder_address:
            fail("--holder needs the holder's mailing address (--holder-address, one per line)")
        detail["holder"] = holder
        detail["holder_address"] = list(holder_address)
    if not pavement:
        detail["pavement_removed"] = False
    if essential:
        detail["essential"] = True
    detail |= _dates(
        place,
        days={"cold_mix_on": cold_mix_on, "permanent_pavement_on": permanent_pavement_on,
              "street_repaved_on": street_repaved_on, "repaving_notice_on": repaving_notice_on,
              "work_completed_on": work_completed_on},
        times={"applied_at": applied_at, "dpw_notified_at": dpw_notified_at,
               "parties_notified_at": parties_notified_at, "backfill_at": backfill_at,
               "backfill_notified_at": backfill_notified_at,
               "utility_loss_at": service_loss_at,
               "utility_loss_notified_at": service_loss_notified_at},
    )  # fmt: skip
    # A renewal is granted when entered; a first entry is dated by the opening.
    when = place.instant("--at", None) if renewals else opened
    record(place, "record_permit", id, when, who, detail)


@cold_app.command("permit-work")
def permit_work(  # noqa: PLR0917 (Typer maps parameters to options)
    id: Annotated[str, typer.Option("--id", help="the permit number")],
    who: WhoOption,
    applied_at: Annotated[
        str | None, typer.Option(help="when the permit was applied for (§ 370-7 H)")
    ] = None,
    cold_mix_on: ColdMixOn = None,
    permanent_pavement_on: PermanentPavementOn = None,
    repaving_notice_on: Annotated[
        str | None,
        typer.Option(
            help="the Clerk-Treasurer's notice of a repaving determination (§ 370-7 I), YYYY-MM-DD"
        ),
    ] = None,
    work_completed_on: Annotated[
        str | None,
        typer.Option(help="the excavation work in the street completed (§ 370-7 I), YYYY-MM-DD"),
    ] = None,
    backfill_at: BackfillAt = None,
    backfill_notified_at: BackfillNotified = None,
    service_loss_at: ServiceLossAt = None,
    service_loss_notified_at: ServiceLossNotified = None,
    at: Annotated[str | None, typer.Option(help="when this is entered (default: now)")] = None,
    config: ConfigOption = None,
) -> None:
    """Add the dates of a recorded permit's work as they happen: the engine judges them
    against § 370-7 G, H and I (and the § 370-7 F notices) on its next tick."""
    place = village(config)
    given = _dates(
        place,
        days={"cold_mix_on": cold_mix_on, "permanent_pavement_on": permanent_pavement_on,
              "repaving_notice_on": repaving_notice_on, "work_completed_on": work_completed_on},
        times={"applied_at": applied_at, "backfill_at": backfill_at,
               "backfill_notified_at": backfill_notified_at, "utility_loss_at": service_loss_at,
               "utility_loss_notified_at": service_loss_notified_at},
    )  # fmt: skip
    if not given:
        fail("give at least one date of the permit's work (see --help)")
    with place.cases() as cases:
        entries = [a for a in cases.actions.list(target=id)
                   if a.kind == "record_permit" and a.error is None]  # fmt: skip
    if not entries:
        fail(f"no street-opening permit {id!r} is on record; enter it with 'sidewalk cold permit'")
    first = entries[0].detail
    # The same permit, street and opening (and its renewals so far): the engine adds the dates.
    detail: dict[str, Any] = {
        "street": first["street"],
        "opened_at": first["opened_at"],
        "renewals": max(int(a.detail.get("renewals", 0)) for a in entries),
        **given,
    }
    record(place, "record_permit", id, place.instant("--at", at), who, detail)


def _dates(
    place: Any, *, days: dict[str, str | None], times: dict[str, str | None]
) -> dict[str, str]:
    """The dates and times given, as the permit entry stores them (each option checked)."""
    from sidewalk.cli.common import day

    out: dict[str, str] = {}
    for name, text in days.items():
        if text is not None:
            out[name] = day(f"--{name.replace('_', '-')}", text).isoformat()
    for name, text in times.items():
        if text is not None:
            option = f"--{name.replace('utility_loss', 'service_loss').replace('_', '-')}"
            out[name] = place.instant(option, text).isoformat()
    return out


_SEVERITY = {"violation": "Violation", "advisory": "Advisory", "unknown": "Cannot tell"}


@cold_app.command()
def status(config: ConfigOption = None) -> None:
    """Frozen ground, new concrete kept free of traffic, and street-opening permits with
    their deadlines and findings (local time)."""
    from sidewalk.alerts.letterhead import cited
    from sidewalk.analytics.clocks.cold_weather import FROZEN_SUBGRADE, KEEP_OFF

    place = village(config)
    out = console()
    with place.cases() as cases:
        frozen = [c for c in cases.clocks.list(kind=FROZEN_SUBGRADE) if c.state == "frozen"]
        out.print(f"Frozen ground: {_count(frozen)}", soft_wrap=True)
        for clock in frozen:
            out.print(f"  {_place(cases, clock.frontage_id)}: the ground probe reads frozen "
                      f"since {_local(place, clock.started_at)}", soft_wrap=True)  # fmt: skip
        kept = cases.clocks.list(kind=KEEP_OFF, active_only=True)
        out.print(f"New concrete kept free of traffic: {_count(kept)}", soft_wrap=True)
        for clock in kept:
            pour = clock.key.split("/", 2)[-1]
            until = "" if clock.deadline is None else f" until {_local(place, clock.deadline)}"
            out.print(f"  pour {pour} at {_place(cases, clock.frontage_id)}: keep traffic off"
                      f"{until}, {_keep_off_words(clock.state, place.profile)} "
                      f"({cited(clock.citation) or 'no citation'})", soft_wrap=True)  # fmt: skip
        _permits(cases, place, out)


def _permits(cases: Any, place: Any, out: Any) -> None:
    """Every street-opening permit entered (with or without a frontage), its validity,
    and what the engine found about it; pours and permits waiting for the runner or
    refused by it (with the reason)."""
    from datetime import UTC, datetime, timedelta

    from sidewalk.alerts.letterhead import cited, cited_in
    from sidewalk.analytics.clocks.cold_weather import OPENING_PERMIT
    from sidewalk.analytics.clocks.permits import StreetOpeningPermit, day_words, permit_expiry
    from sidewalk.core.calendar import local_date

    entries: dict[str, list[Any]] = {}
    waiting, refused = [], []
    for action in cases.actions.list():
        if action.kind not in _ENTRY_WORDS:
            continue
        if action.applied_at is None:
            waiting.append(action)
        elif action.error is not None:
            refused.append(action)
        elif action.kind == "record_permit":
            entries.setdefault(action.target, []).append(action)
    states = {c.key.split("/", 2)[-1]: c.state for c in cases.clocks.list(kind=OPENING_PERMIT)}
    profile = place.profile
    out.print(f"Street-opening permits: {_count(entries)}", soft_wrap=True)
    now = datetime.now(UTC)
    for permit_id, actions in entries.items():
        first = actions[0].detail
        opened = datetime.fromisoformat(first["opened_at"])
        approved = datetime.fromisoformat(first.get("approved_at") or first["opened_at"])
        renewals = max(int(a.detail.get("renewals", 0)) for a in actions)
        expiry = permit_expiry(
            StreetOpeningPermit(permit_id, first["street"], approved, renewals), profile
        )
        last = day_words(local_date(expiry.due - timedelta(microseconds=1), profile.zone))
        expired = states.get(permit_id) == "expired" or expiry.passed(now)
        valid = f"expired at the end of {last}" if expired else f"valid through {last}"
        emergency = ", an emergency opening" if first.get("emergency") else ""
        out.print(
            f"  permit {permit_id}, {first['street']}{emergency}: opened "
            f"{_local(place, opened)}; {valid} ({cited(expiry.citation) or 'no citation'})",
            soft_wrap=True,
        )
        holder = first.get("holder")
        address = ", ".join(first.get("holder_address") or ())
        out.print(
            f"    Permit holder: {holder}, {address}" if holder
            else "    Permit holder: not recorded (enter it with --holder and --holder-address)",
            soft_wrap=True,
        )  # fmt: skip
        found = False
        for finding in cases.audit.list(f"permit:{permit_id}"):
            if not finding.action.startswith("finding."):
                continue
            severity = _SEVERITY.get(finding.action.removeprefix("finding."), "Finding")
            mark = " This rests on a value the Village has not yet confirmed." if (
                finding.detail.get("unconfirmed")
            ) else ""  # fmt: skip
            # The finding's sentence cites as the profile writes it; the clerk reads the Code.
            said = cited_in(str(finding.detail.get("message", "")))
            out.print(f"    {severity}: {said}{mark}", soft_wrap=True)
            found = True
        if found:
            # § 370-7 G, H and I set the permittee's duties and no written notice from the
            # Village about them (I's notice is the Clerk-Treasurer's, of a repaving): the
            # findings are for the clerk, and no letter is issued for them.
            out.print("    The Village Code prescribes no written notice to the permit holder "
                      "for these findings; they are for the clerk to act on.",
                      soft_wrap=True)  # fmt: skip
    for action in waiting:
        what = _ENTRY_WORDS[action.kind]
        out.print(f"waiting for the analytics runner: {what} {action.target} entered by "
                  f"{action.who}", soft_wrap=True)  # fmt: skip
    for action in refused:
        what = _ENTRY_WORDS[action.kind]
        out.print(f"[red]refused:[/red] {what} {action.target}: {action.error}", soft_wrap=True)


_ENTRY_WORDS = {"record_pour": "pour", "record_permit": "permit"}


def _count(items: Any) -> str:
    return str(len(items)) if items else "none"


def _local(place: Any, at: Any) -> str:
    from sidewalk.core.clock import format_local

    return format_local(at, place.profile.zone)


def _place(cases: Any, frontage_id: str) -> str:
    """A frontage as the clerk knows it: its street address."""
    try:
        address = cases.registry.get_frontage(frontage_id).street_address
    except (KeyError, LookupError):
        return frontage_id
    return address or frontage_id


def _keep_off_words(state: str, profile: Any) -> str:
    """Why the keep-off period is as long as it is, in the Code's terms."""
    cold = profile.cold_weather
    if state == "keep_off_cold":
        return (f"cold weather (below {cold.cold_weather_below.deg_f:g} °F): "
                f"{cold.keep_off_cold.describe()}")  # fmt: skip
    if state == "protected":
        return f"street concrete: {profile.street_openings.street_concrete_protection.describe()}"
    return f"normal temperatures: {cold.keep_off_normal.describe()}"
