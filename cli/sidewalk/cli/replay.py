"""``sidewalk replay``: a scenario (or a real winter) straight into the clock engine.

No broker: what the live run must match. The engine, the scenarios and the
records load when the command runs (``common``: a fast --help).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sidewalk.cli.common import console, fail, load_profile, open_case_records
from sidewalk.cli.demo import load_story


def replay(  # noqa: PLR0917 - Typer maps each option to a parameter
    scenario: Annotated[
        str, typer.Argument(help="bundled scenario name or TOML path (ignored with --winter)")
    ] = "first-storm",
    profile_path: Annotated[
        Path | None, typer.Option("--profile", help="another ordinance profile (what-if)")
    ] = None,
    winter: Annotated[
        str | None, typer.Option(help="replay a real winter instead, e.g. 2017-18")
    ] = None,
    source: Annotated[
        str, typer.Option(help="minneapolis (hourly, 2012-18) or milwaukee (daily, 1938-)")
    ] = "minneapolis",
    frontages: Annotated[int, typer.Option(help="simulated frontages in the village")] = 30,
    seed: Annotated[int, typer.Option(help="seed of the simulated owners and sensors")] = 1,
) -> None:
    """Play a scenario (or a real winter) straight into the clock engine and report."""
    if winter is not None:
        _season(winter, source, profile_path, frontages, seed)
        return
    import tempfile

    from sidewalk.system import notice_summary, replay_in_process

    story = load_story(scenario)
    profile = load_profile(profile_path)
    with tempfile.TemporaryDirectory(prefix="sidewalk-replay-") as tmp:
        cases = open_case_records(f"sqlite:///{tmp}/cases.sqlite3", profile)
        try:
            count, notices = replay_in_process(story, cases, profile)
        finally:
            cases.close()
    console().print(
        f"replayed {count} readings of {story.scenario.name} under {profile.village.name}"
    )
    for frontage, kind, deadline in notice_summary(notices):
        console().print(f"  {kind} for {frontage}, deadline {deadline}")
    for notice in notices:
        console().rule(notice.number)
        console().print(notice.body_text or "", markup=False, highlight=False, soft_wrap=True)


def _season(winter: str, source: str, profile: Path | None, frontages: int, seed: int) -> None:
    from sidewalk.scenarios.season import render_report, run_season

    if source == "minneapolis":
        report = run_season(winter, "minneapolis", profile, frontages, seed, console())
    elif source == "milwaukee":
        report = run_season(winter, "milwaukee", profile, frontages, seed, console())
    else:
        fail("--source is minneapolis or milwaukee")
    render_report(report, console())
