"""``sidewalk review``: the clearing deadlines a person must look at.

Two kinds (issue 14, item 8; ``docs/clocks.md``): a deadline whose pole's readings
up to it did not come in within ``[analytics] evidence_wait_minutes``
(``needs_review``: camera evidence missing; it stays open, and the readings still
decide it if they come), and a deadline decided ``unverified`` (the pole's readings
came, but no fresh measurement, or ice only suspected): an inspector must look.
"Unverified" is never a silent final state: both are listed here and on the
dashboard's alerts.

The records load when the command runs (``common``: a fast --help).
"""

from __future__ import annotations

from typing import Annotated

import typer

from sidewalk.cli.common import ConfigOption, console, village


def review(
    config: ConfigOption = None,
    all_: Annotated[
        bool, typer.Option("--all", help="also the unverified deadlines already closed")
    ] = False,
) -> None:
    """List the clearing deadlines waiting for a person: evidence missing, unverified."""
    from sidewalk.core.clock import format_local

    place = village(config)
    with place.cases() as cases:
        clocks = cases.clocks.list(kind="clearing")
        waiting = [c for c in clocks if c.state == "needs_review"]
        unverified = [c for c in clocks if c.state == "unverified" and (all_ or c.active)]
        # Each unverified decision's reason, by frontage and deadline (its audit row).
        reasons = {
            (a.subject.removeprefix("frontage:"), a.detail.get("deadline")): a.detail.get("reason")
            for a in cases.audit.list()
            if a.action == "clearing.unverified"
        }
        zone = place.profile.zone
        out = console()
        out.print(f"needs review, camera evidence missing: {len(waiting) or 'none'}")
        for clock in waiting:
            due = "" if clock.deadline is None else format_local(clock.deadline, zone)
            out.print(f"  {clock.frontage_id}: deadline {due}", soft_wrap=True, markup=False)
        out.print(f"unverified, an inspector must look: {len(unverified) or 'none'}")
        for clock in unverified:
            due = "" if clock.deadline is None else format_local(clock.deadline, zone)
            at = None if clock.deadline is None else clock.deadline.isoformat()
            why = reasons.get((clock.frontage_id, at)) or "no fresh camera measurement"
            out.print(f"  {clock.frontage_id}: deadline {due}: {why}", soft_wrap=True, markup=False)
