"""``sidewalk review``: the clearing deadlines a person must look at, and deciding them.

Two kinds (``docs/clocks.md``): a deadline whose pole's readings
up to it did not come in within ``[analytics] evidence_wait_minutes``
(``needs_review``: camera evidence missing; it stays open, and the readings still
decide it if they come), and a deadline decided ``unverified`` (the pole's readings
came, but no fresh measurement, or ice only suspected): an inspector must look.
"Unverified" is never a silent final state: both are listed here and on the
dashboard's alerts.

``sidewalk review decide ADDRESS --cleared|--not-cleared --reason … --by …`` closes
a waiting (``needs_review``) deadline by a person's decision:
cleared in time (closed, no notice) or not cleared (the notice path, as a violation
the pole found would take). ADDRESS is the street address or the frontage's id, as
``sidewalk act`` takes it; a frontage with no deadline waiting is refused at once
(exit 2), and the analytics runner applies the decision with the clocks' own rules.

The records load when the command runs (``common``: a fast --help).
"""

from __future__ import annotations

from typing import Annotated

import typer

from sidewalk.cli.common import ConfigOption, command_group, console, fail, no_nul, village

review_app = command_group(
    "The clearing deadlines waiting for a person (evidence missing, unverified);"
    " decide one with `review decide`.",
    no_args_is_help=False,
)


@review_app.callback(invoke_without_command=True)
def review(
    ctx: typer.Context,
    config: ConfigOption = None,
    all_: Annotated[
        bool, typer.Option("--all", help="also the unverified deadlines already closed")
    ] = False,
) -> None:
    """List the clearing deadlines waiting for a person: evidence missing, unverified."""
    if ctx.invoked_subcommand is not None:
        return
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
        if waiting:
            out.print(
                "  decide one: sidewalk review decide ADDRESS --cleared|--not-cleared"
                " --reason TEXT --by NAME",
                soft_wrap=True,
                markup=False,
            )
        out.print(f"unverified, an inspector must look: {len(unverified) or 'none'}")
        for clock in unverified:
            due = "" if clock.deadline is None else format_local(clock.deadline, zone)
            at = None if clock.deadline is None else clock.deadline.isoformat()
            why = reasons.get((clock.frontage_id, at)) or "no fresh camera measurement"
            out.print(f"  {clock.frontage_id}: deadline {due}: {why}", soft_wrap=True, markup=False)


@review_app.command("decide")
def decide(  # noqa: PLR0917 (Typer maps parameters to options)
    target: Annotated[
        str, typer.Argument(help="the street address or frontage id, e.g. '105 Main St'")
    ],
    reason: Annotated[str, typer.Option(help="why: what the person saw or relied on")],
    by: Annotated[str, typer.Option(help="the person deciding (goes in the audit log)")],
    cleared: Annotated[
        bool | None,
        typer.Option(
            "--cleared/--not-cleared",
            help="cleared in time (closed, no notice) or not cleared (the notice path)",
        ),
    ] = None,
    at: Annotated[
        str | None, typer.Option(help="when it was decided, ISO 8601 or local time (default: now)")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Decide a deadline waiting for review: --cleared (no notice) or --not-cleared (notice)."""
    from sidewalk.analytics.clocks.actions import ActionError, parse_action
    from sidewalk.cli.act import _frontage
    from sidewalk.core.clock import format_local

    if cleared is None:
        fail("say --cleared (cleared in time: no notice) or --not-cleared (the notice path)")
    no_nul(target=target, reason=reason, by=by)
    if not by.strip():
        fail("--by: name the person deciding")
    if not reason.strip():
        fail("--reason: say why (what was seen or relied on)")
    place = village(config)
    when = place.instant("--at", at)
    zone = place.profile.zone
    with place.cases() as cases:
        frontage = _frontage(cases, target)
        address = frontage.street_address
        waiting = [
            c
            for c in cases.clocks.list(frontage_id=frontage.id, kind="clearing")
            if c.state == "needs_review" and c.deadline is not None
        ]
        if not waiting:
            fail(
                f"refused: {address} has no clearing deadline waiting for review"
                " (`sidewalk review` lists those that are)"
            )
        deadline = waiting[-1].deadline
        assert deadline is not None
        if when < deadline:
            fail(
                f"refused: --at {format_local(when, zone)} is before the deadline it decides"
                f" ({format_local(deadline, zone)})"
            )
        decision = "cleared" if cleared else "not_cleared"
        detail = {"decision": decision, "reason": reason, "deadline": deadline.isoformat()}
        try:
            parse_action("decide_review", frontage.id, detail, at=when, who=by)
        except ActionError as exc:
            fail(f"refused: {exc}")
        cases.actions.record("decide_review", frontage.id, when, by, detail)
    outcome = (
        "cleared in time: closed, no notice"
        if cleared
        else "not cleared: the written notice follows"
    )
    console().print(
        f"recorded: review decided — {address}, deadline {format_local(deadline, zone)}:"
        f" {outcome}; by {by}, {format_local(when, zone)}; the analytics runner applies it",
        soft_wrap=True,
        markup=False,
    )
