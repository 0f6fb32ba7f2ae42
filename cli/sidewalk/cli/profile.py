"""``sidewalk profile …``: the Village confirms the ordinance values its code text leaves open.

A value marked ``unconfirmed`` in the ordinance profile (§ 370-10 B(2)'s
period, the abatement rates, …) is used by no notice until it is confirmed
here: who confirmed it (the Village Board, the Clerk-Treasurer), when, and the
board action or ordinance reference. The confirmation is recorded in the case
records and the audit log, and the notices held for it are then issued.
(The dashboard has no confirmation page yet: confirm here.)
"""

from __future__ import annotations

from typing import Annotated

import typer

from sidewalk.cli.common import (
    ConfigOption,
    WhoOption,
    command_group,
    console,
    fail,
    no_nul,
    refusals,
    village,
)

profile_app = command_group(__doc__)


@profile_app.command("confirm")
def confirm(  # noqa: PLR0917 (a confirmation is these things)
    name: Annotated[
        str, typer.Argument(help="the value's dotted name, as `profile unconfirmed` lists it")
    ],
    by: Annotated[
        str,
        typer.Option("--by", help='who confirmed it, e.g. "Village Board" or a name and office'),
    ],
    reference: Annotated[
        str,
        typer.Option(
            "--reference",
            help='the board action or ordinance, e.g. "Board minutes 2027-01-12, item 7"',
        ),
    ],
    at: Annotated[str | None, typer.Option(help="when it was confirmed (default: now)")] = None,
    who: WhoOption = "clerk",
    config: ConfigOption = None,
) -> None:
    """Record the Village's confirmation of one unconfirmed profile value; held notices go out."""
    from sidewalk.alerts.confirm import ConfirmationError, confirm_value
    from sidewalk.alerts.issue import NoticeIssuer
    from sidewalk.cli.notices import letterhead

    no_nul(name=name, by=by, reference=reference, who=who)
    if not by.strip() or not reference.strip():
        fail("--by and --reference must say who confirmed the value and on what authority")
    place = village(config)
    when = place.instant("--at", at)
    with place.cases() as cases, refusals(ConfirmationError):
        issuer = NoticeIssuer(cases, place.profile, letterhead=letterhead(place))
        record, released = confirm_value(
            cases, place.profile, name, by=by, reference=reference, at=when, who=who,
            issuer=issuer,
        )  # fmt: skip
    console().print(
        f"confirmed {record.name} = {record.value} by {record.confirmed_by} "
        f"({record.reference}); recorded by {record.recorded_by}",
        markup=False,
    )
    issued = [n.number for n in released if n.status == "rendered"]
    still = [n.number for n in released if n.status == "held"]
    if issued:
        console().print(f"released {len(issued)} held notice(s): {', '.join(issued)}", markup=False)
    if still:
        console().print(
            f"{len(still)} notice(s) still held for other values: {', '.join(still)}", markup=False
        )


@profile_app.command("unconfirmed")
def unconfirmed(config: ConfigOption = None) -> None:
    """Every value the code text leaves open, whether the Village confirmed it, and the
    notices held for it."""
    from rich.table import Table

    from sidewalk.alerts.confirm import unconfirmed_report

    place = village(config)
    with place.cases() as cases:
        report = unconfirmed_report(cases, place.profile)
    table = Table(title="Profile values the code text leaves open")
    for column in ("value", "as used", "confirmed", "held notices", "why it is open"):
        table.add_column(column)
    for item in report:
        done = item.confirmation
        table.add_row(
            item.name,
            item.value,
            f"{done.confirmed_by}, {done.confirmed_at:%Y-%m-%d} ({done.reference})"
            if done
            else "NO",
            str(item.held_notices),
            item.note,
        )
    console().print(table)
    waiting = [i for i in report if not i.confirmed]
    if waiting:
        console().print(
            f"{len(waiting)} value(s) wait for the Village's confirmation", markup=False
        )
        raise typer.Exit(1)


__all__ = ["profile_app"]
