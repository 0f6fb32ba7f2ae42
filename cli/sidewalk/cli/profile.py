"""``sidewalk profile …``: the Village confirms the ordinance values its code text leaves open.

A value marked ``unconfirmed`` in the ordinance profile (§ 370-10 B(2)'s
period, the abatement rates, …) is used by no notice until it is confirmed
here: who confirmed it (the Village Board, the Clerk-Treasurer), when, and the
board action or ordinance reference. The confirmation is recorded in the case
records and the audit log, and the notices held for it are then issued.
(The dashboard has no confirmation page yet: confirm here.)
"""

from __future__ import annotations

from pathlib import Path
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
    names: Annotated[
        list[str] | None,
        typer.Argument(
            help="the values' dotted names, as `profile unconfirmed` lists them (one or more)",
            show_default=False,
        ),
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option(
            "--from-file",
            help="a text file of names, one a line (# starts a comment), e.g. the board's list",
        ),
    ] = None,
    at: Annotated[str | None, typer.Option(help="when it was confirmed (default: now)")] = None,
    who: WhoOption = "clerk",
    config: ConfigOption = None,
) -> None:
    """Record the Village's confirmation of unconfirmed profile values (one action of the
    Board may confirm several: each is recorded and audited); held notices go out."""
    from sidewalk.alerts.confirm import ConfirmationError, confirm_value, unconfirmed_report
    from sidewalk.alerts.issue import NoticeIssuer
    from sidewalk.cli.notices import letterhead

    wanted = [*(names or []), *(_names_in(from_file) if from_file is not None else [])]
    no_nul(names=wanted, by=by, reference=reference, who=who)
    if not wanted:
        fail("name the values to confirm (`sidewalk profile unconfirmed` lists them)"
             " or give --from-file")
    if not by.strip() or not reference.strip():
        fail("--by and --reference must say who confirmed the value and on what authority")
    place = village(config)
    when = place.instant("--at", at)
    with place.cases() as cases, refusals(ConfirmationError):
        # Every name checked before any is recorded: a typo confirms nothing.
        open_names = {i.name for i in unconfirmed_report(cases, place.profile) if not i.confirmed}
        unknown = [n for n in dict.fromkeys(wanted) if n not in open_names]
        if unknown and len(wanted) > 1:
            fail(
                f"not confirmed, none of them: {', '.join(unknown)} is not a value awaiting"
                " confirmation (`sidewalk profile unconfirmed` lists them)",
                status=1,
            )
        issuer = NoticeIssuer(cases, place.profile, letterhead=letterhead(place))
        results = [
            confirm_value(
                cases, place.profile, name, by=by, reference=reference, at=when, who=who,
                issuer=issuer,
            )
            for name in dict.fromkeys(wanted)
        ]  # fmt: skip
    released = []
    for record, freed in results:
        console().print(
            f"confirmed {record.name} = {record.value} by {record.confirmed_by} "
            f"({record.reference}); recorded by {record.recorded_by}",
            markup=False,
        )
        released += freed
    # A notice held for two of these values is released once, by the later one.
    final = {n.number: n for n in released}
    issued = [n for n, notice in final.items() if notice.status == "rendered"]
    still = [n for n, notice in final.items() if notice.status == "held"]
    if issued:
        console().print(f"released {len(issued)} held notice(s): {', '.join(issued)}", markup=False)
    if still:
        console().print(
            f"{len(still)} notice(s) still held for other values: {', '.join(still)}", markup=False
        )


def _names_in(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"--from-file {path}: {exc.strerror or exc}")
    return [n for line in text.splitlines() if (n := line.split("#", 1)[0].strip())]


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
    # The name is what the clerk types into `profile confirm`: never wrapped or cut.
    table.add_column("value", no_wrap=True)
    for column in ("as used", "confirmed", "held notices", "why it is open"):
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
