"""The season replay: a real winter through the clock engine for a few simulated frontages."""

from __future__ import annotations

import heapq
import io
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.core.profile import load_profile
from sidewalk.core.units import MM_PER_FOOT
from sidewalk.scenarios.accuracy import Storm
from sidewalk.scenarios.season import (
    _camera_stream,
    _owners,
    _plan_clearing,
    _replay,
    _simulate_village,
    _Walk,
    frontage_ids,
    render_report,
    run_season,
)
from sidewalk.scenarios.sensors import SimulatedStep
from sidewalk.scenarios.weather import load_minneapolis

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example_village.toml"
T0 = datetime(2018, 1, 10, tzinfo=UTC)


def test_frontage_ids_follow_the_house_numbering() -> None:
    ids = frontage_ids(12)
    assert ids[:3] == ["main-st-101", "main-st-103", "main-st-105"]
    assert ids[10:] == ["oak-st-101", "oak-st-103"]
    assert len(set(frontage_ids(200))) == 200


def test_owners_clear_after_the_snow_and_new_snow_covers_the_walk_again() -> None:
    storm = Storm(T0, T0 + timedelta(hours=2), 2, 30.0)
    walk = _Walk("main-st-101", "prompt", 5.0, cleared_ft=5.0)
    _plan_clearing(walk, [storm], random.Random(4))
    [(cleared_at, width)] = walk.plan
    assert cleared_at > storm.end
    assert width == 5.0
    steps = [
        SimulatedStep(T0 + timedelta(minutes=5 * i), i < 24, 1.0 if i < 24 else 0.0, 50.0, -5.0)
        for i in range(12 * 24)
    ]
    seen = {m.ts: m for m in _camera_stream([walk], steps, "pole-01", random.Random(1))}
    widths = [m.cleared_width_mm for m in sorted(seen.values(), key=lambda m: m.ts)]
    assert widths[0] > 4.5 * MM_PER_FOOT  # bare before the snow
    assert widths[1] < 150  # covered once 5 mm fell (the camera's ±30 mm aside)
    assert widths[-1] > 4.5 * MM_PER_FOOT  # cleared after the storm
    never = _Walk("main-st-103", "never", 5.0)
    _plan_clearing(never, [storm], random.Random(4))
    assert never.plan == []


def test_a_real_winter_replays_to_decisions_notices_and_a_what_if(minneapolis_csv: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, width=120)
    report = run_season("2017-18", "minneapolis", EXAMPLE, frontages=4, seed=3, console=console)
    assert report.poles == 1
    assert len(report.storms) > 20
    decided = report.outcome.complied + report.outcome.violations + report.outcome.unverified
    assert decided > 20
    in_rows = sum(r.complied + r.violations + r.unverified for r in report.storms)
    assert in_rows + sum(report.light_decisions.values()) == decided  # every decision in one row
    assert report.outcome.violations == len(report.outcome.notices)
    for row in report.storms:  # a deadline is shown only for storms whose clocks were decided
        assert (row.deadline is None) == (row.complied + row.violations + row.unverified == 0)
    assert report.what_if is not None
    assert report.what_if.profile == "Example Village"
    # 12 h after cessation in the example profile, 24 h in Clyman.
    notice = report.what_if.notices[0]
    assert notice.deadline - notice.cessation_at == timedelta(hours=12)
    assert report.cessation_median_min is not None
    # docs/cessation.md: the self-check's median is 30 min (an end the gauge cannot place to
    # 10 min is the latest it allows); the replay's is the same detector on the same simulator.
    assert report.cessation_median_min <= 40
    render_report(report, console)
    text = out.getvalue()
    assert "Village of Clyman" in text
    assert "Example Village" in text
    assert "█" in text


def test_advancing_only_when_due_gives_exactly_the_events_of_feed(minneapolis_csv: Path) -> None:
    hours = load_minneapolis(date(2017, 12, 1), date(2017, 12, 15), minneapolis_csv)
    rng = random.Random(5)
    walks = _owners(frontage_ids(12), rng)
    with Progress(console=Console(file=io.StringIO())) as progress:
        streams, _ = _simulate_village(hours, walks, 5, rng, progress)
        specs = [FrontageSpec(w.frontage, f"pole-{i // 10 + 1:02d}") for i, w in enumerate(walks)]
        end = hours[-1].start + timedelta(days=3)
        [fast] = _replay([ClockEngine(load_profile(), specs)], streams, end, progress)
    reference = ClockEngine(load_profile(), specs)
    slow = reference.feed(heapq.merge(*streams, key=lambda r: r.ts))
    slow += reference.advance(end)
    assert len(fast) > 20
    assert fast == slow
