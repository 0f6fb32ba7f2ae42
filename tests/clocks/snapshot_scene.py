"""A short winter for snapshot compatibility: readings, person actions and time.

``tests/clocks/data/pre_refactor_snapshots.json`` holds what the engine made of
this scene before the § 370-10 A clearing clock moved out of ``engine.py`` into
``clearing.py``: at each checkpoint its snapshot, and from there to the end the
events (their ``repr``) and the final snapshot. ``test_snapshot_compat`` restores
each stored snapshot into today's engine, plays the rest and compares.

Regenerate (only with the code whose snapshots are to be kept, e.g. the commit
before a deliberate change to what the clocks decide) by running this module on
that code, in a worktree whose package directories come first on the path::

    git worktree add --detach /tmp/before <commit>
    PYTHONPATH=/tmp/before/analytics:/tmp/before/core:$PWD \
        .venv/bin/python -m tests.clocks.snapshot_scene OUT.json  # then into data/
    git worktree remove /tmp/before

(The file was made on 2f03e62, the commit before the move.)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.actions import parse_action
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.core.contract import AnyReading
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE, Pole, storm

CHICAGO = ZoneInfo("America/Chicago")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
FRONTAGES = ("a", "b", "c", "d")
WHO = "Inspector Vogel"

# A step: a reading, a person's action (kind, target or a function of the engine
# naming it, detail, at) or time alone.
Target = str | Callable[[ClockEngine], str]
Step = AnyReading | tuple[str, Target, dict[str, Any], datetime] | datetime


def engine() -> ClockEngine:
    return ClockEngine(load_profile(), [FrontageSpec(f, DEVICE) for f in FRONTAGES])


def _first_case(engine: ClockEngine) -> str:
    return sorted(engine.enforcement.cases)[0]


def steps() -> list[Step]:
    """Two storms: clearing periods, ice on the pavement, a violation and its case."""
    pole = Pole()
    out: list[Step] = []
    readings: list[AnyReading] = list(storm(pole, ONSET, hours=4))
    deadline = ONSET + timedelta(hours=4 + 24)
    readings += [pole.weather(deadline - timedelta(hours=h), 80.0) for h in (8, 4)]
    readings.append(pole.pavement(deadline - timedelta(hours=2), -3.0))
    readings.append(pole.camera(deadline - timedelta(hours=1), "a", 1500.0))
    readings.append(
        pole.camera(deadline - timedelta(hours=1), "b", 300.0, width_uncertainty_mm=40.0)
    )
    readings.append(
        pole.camera(deadline - timedelta(minutes=50), "c", 1400.0, ice=True, surface="wet")
    )
    readings.sort(key=lambda r: r.ts)
    out += readings
    out.append(("record_treated", "c", {}, deadline - timedelta(minutes=20)))
    out += [pole.weather(deadline + timedelta(hours=h), 80.0) for h in (1, 2)]
    out.append(pole.camera(deadline + timedelta(hours=2), "a", 1500.0))
    out.append(deadline + timedelta(hours=3))
    out.append(("record_delivery", _first_case, {}, deadline + timedelta(hours=5)))
    out.append(deadline + timedelta(days=2))
    second = ONSET + timedelta(days=4)
    out += storm(pole, second, hours=3, base=80.0)
    out.append(pole.camera(second + timedelta(hours=20), "b", 1500.0))
    out.append(second + timedelta(days=3))
    return out


def checkpoints(all_steps: list[Step]) -> list[int]:
    """After which steps a snapshot is taken: mid-storm, in the clearing period, past
    the first deadline with a case open, between the storms."""
    times = [i for i, s in enumerate(all_steps) if isinstance(s, datetime)]
    return [20, 70, times[0] + 1, times[-2] + 1]


def play(engine: ClockEngine, part: list[Step]) -> list[str]:
    """Each step on ``engine``; the events' ``repr``, in order."""
    events: list[str] = []
    for step in part:
        if isinstance(step, datetime):
            events += map(repr, engine.advance(step))
        elif isinstance(step, tuple):
            kind, target, detail, at = step
            name = target if isinstance(target, str) else target(engine)
            events += map(repr, engine.advance(at))
            events += map(repr, engine.act(parse_action(kind, name, detail, at=at, who=WHO)))
        else:
            events += map(repr, engine.step(step))
    return events


def record() -> dict[str, Any]:
    """What this engine makes of the scene, from each checkpoint on."""
    all_steps = steps()
    out: list[dict[str, Any]] = []
    for at in checkpoints(all_steps):
        first = engine()
        play(first, all_steps[:at])
        snapshot = first.snapshot().decode()
        # Played on from a restart, as a snapshot is used (a restored datetime's
        # tzinfo is pydantic's, and an event's repr shows it).
        resumed = engine()
        resumed.restore(snapshot.encode())
        events = play(resumed, all_steps[at:])
        out.append(
            {"after_step": at, "snapshot": snapshot, "events": events,
             "final": resumed.snapshot().decode()}
        )  # fmt: skip
    return {"steps": len(all_steps), "checkpoints": out}


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(record(), f, indent=1)
        f.write("\n")
