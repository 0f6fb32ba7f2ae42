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
    weather: Annotated[
        Path | None,
        typer.Option(
            "--weather",
            help="replay your own weather file instead (docs/replay.md); the winter comes "
            "from its dates, --winter picks one when it covers several",
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="csv | isd | ghcn-daily | metar (default: from the file)"),
    ] = None,
    tz: Annotated[
        str | None,
        typer.Option(help="time zone of a csv file's times that carry no offset (America/Chicago)"),
    ] = None,
    frontages: Annotated[int, typer.Option(help="simulated frontages in the village")] = 30,
    seed: Annotated[int, typer.Option(help="seed of the simulated owners and sensors")] = 1,
) -> None:
    """Play a scenario (or a real winter) straight into the clock engine and report."""
    if weather is not None:
        _station(weather, fmt, tz, winter, profile_path, frontages, seed)
        return
    if fmt is not None or tz is not None:
        fail("--format and --tz go with --weather FILE")
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
    from sidewalk.scenarios.weather import WeatherDataMissing, record_path, winter_bounds

    if source not in ("minneapolis", "milwaukee"):
        fail("--source is minneapolis or milwaukee (or give your own file with --weather FILE)")
    if frontages < 1:
        fail("--frontages must be at least 1")
    try:
        winter_bounds(winter)
        record_path("minneapolis" if source == "minneapolis" else "milwaukee")
    except (ValueError, WeatherDataMissing) as exc:
        fail(f"--winter {winter}: {exc}" if isinstance(exc, ValueError) else str(exc))
    try:
        if source == "minneapolis":
            report = run_season(winter, "minneapolis", profile, frontages, seed, console())
        else:
            report = run_season(winter, "milwaukee", profile, frontages, seed, console())
    except ValueError as exc:
        if not str(exc).startswith(f"no {source} weather"):
            raise
        covers = "2012-13 to 2017-18" if source == "minneapolis" else "1938-39 onward"
        fail(f"{exc}: the {source} record covers {covers}; or use --weather FILE")
    render_report(report, console())


def _station(  # noqa: PLR0917 - the options of `sidewalk replay --weather`
    path: Path,
    fmt: str | None,
    tz: str | None,
    winter: str | None,
    profile: Path | None,
    frontages: int,
    seed: int,
) -> None:
    """A replay of the village's own weather file: one line and exit 2 if it cannot be."""
    from sidewalk.scenarios.season import render_report, run_season
    from sidewalk.scenarios.station import WeatherFileError, load_station_file, station_winter

    if frontages < 1:
        fail("--frontages must be at least 1")
    try:
        record = load_station_file(path, fmt, tz)
        season = station_winter(record, winter, seed)
    except WeatherFileError as exc:
        fail(str(exc))
    if not season.hours:
        fail(f"{path.name}: no readings in winter {season.winter}")
    report = run_season(
        season.winter, "minneapolis", profile, frontages, seed, console(), weather=season
    )
    render_report(report, console())
