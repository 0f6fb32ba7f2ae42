"""Simulator self-check of the cessation time, beside references measured in the same run.

Circular: the poles are simulated from the hourly labels that are also the truth, so
these rows compare detector versions and sensor sets, not accuracy. The accuracy
against minute-resolution METAR truth is ``bench/cessation_independent.py``.

For each good Minneapolis winter (2016-17, 2017-18) and ``--seeds`` simulated
poles, the sensor simulator turns the hourly record into 5-minute pole readings
and the detector runs over them; truth is the end of each labelled storm (runs
of ``Snow`` hours, lulls of up to 2 h merged; see ``sidewalk.scenarios.accuracy``).
Only storms that laid down at least 10 mm of new snow are scored. Rows:

* ``detector``: the current ``SnowfallDetector`` with default parameters;
* ``ideal sensors``: the same detector on the same weather with no noise, no
  faults and no lulls (what the sensors cost);
* ``gauge only`` / ``depth only``: the stream with the depth, or the gauge,
  removed (what each sensor contributes);
* ``previous detector``: the detector as first committed (42c01fa), loaded
  from git, when git can show it.

``clock`` columns score the cessation each storm's clearing clock finally ran
from: an onset detected before the deadline restarts the clock, so a false
alarm after a storm moves its deadline (in the owner's favour).

    uv run python -m bench.cessation_error [--seeds 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import numpy as np

from sidewalk.core.contract import WeatherReading
from sidewalk.scenarios.accuracy import (
    Episode,
    detect_episodes,
    score,
    storms_from_hours,
    with_new_snow,
)
from sidewalk.scenarios.sensors import SensorModel, simulate_pole
from sidewalk.scenarios.weather import load_minneapolis, winter_bounds

WINTERS = ("2016-17", "2017-18")
PREVIOUS = "42c01fa:sidewalk/analytics/clocks/cessation.py"
IDEAL = SensorModel(
    depth_noise_mm=0.0,
    echo_outlier_prob=0.0,
    drift_spike_prob=0.0,
    depth_dropout_prob=0.0,
    iced_prob=0.0,
    outage_prob_per_hour=0.0,
    lull_prob=0.0,
)
Detect = Callable[[Sequence[WeatherReading]], list[Episode]]


@dataclass
class Tally:
    errors: list[float] = field(default_factory=list)
    clock_errors: list[float] = field(default_factory=list)
    storms: int = 0
    missed: int = 0
    merged: int = 0
    false_alarms: int = 0
    seconds: float = 0.0


def _previous_detector() -> types.ModuleType | None:
    """The first committed detector, as a module, or None without git."""
    try:
        source = subprocess.run(
            ["git", "show", PREVIOUS], capture_output=True, check=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("previous_cessation")
    sys.modules[module.__name__] = module  # dataclasses look their module up by name
    exec(compile(source, PREVIOUS, "exec"), module.__dict__)  # our own file, from git history
    return module


def _previous_episodes(module: types.ModuleType) -> Detect:
    def detect(readings: Sequence[WeatherReading]) -> list[Episode]:
        detector: Any = module.SnowfallDetector("pole-1")
        changes: list[Any] = []
        for r in readings:
            changes += detector.observe(r)
            changes += detector.advance(r.event_time)
        changes += detector.advance(readings[-1].event_time + timedelta(days=2))
        out, onset = [], None
        for c in changes:
            if c.kind == "onset":
                onset = c.at
            elif onset is not None:
                out.append(Episode(onset, c.at))
        return out

    return detect


def _strip(readings: Sequence[WeatherReading], field_name: str) -> list[WeatherReading]:
    """The stream without one sensor; readings left with nothing are dropped, as a pole would."""
    out = []
    for r in readings:
        kept = r.model_copy(update={field_name: None})
        if (
            kept.snow_depth_mm is not None
            or kept.precip_mm is not None
            or kept.air_temp_c is not None
        ):
            out.append(kept)
    return out


def _row(name: str, t: Tally) -> str:
    e, c = np.abs(t.errors), np.abs(t.clock_errors)
    signed = float(np.median(t.errors)) if t.errors else float("nan")
    return (
        f"{name:<20}{len(t.errors):>5}{t.missed:>7}{t.merged:>7}{t.false_alarms:>6}"
        f"{np.median(e):>8.0f}{np.percentile(e, 90):>7.0f}{signed:>+8.0f}"
        f"{np.median(c):>8.0f}{np.percentile(c, 90):>7.0f}{t.seconds:>8.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    previous = _previous_detector()
    rows: dict[str, Tally] = {}

    def tally(name: str, storms: Any, readings: Sequence[WeatherReading], detect: Detect) -> None:
        t = rows.setdefault(name, Tally())
        t0 = time.perf_counter()
        result = score(storms, detect(readings))
        t.seconds += time.perf_counter() - t0
        t.errors += result.errors_minutes
        t.clock_errors += result.clock_errors_minutes
        t.storms += len(result.storms)
        t.missed += result.missed
        t.merged += result.merged
        t.false_alarms += result.false_alarms

    def current(readings: Sequence[WeatherReading]) -> list[Episode]:
        return detect_episodes(readings, "pole-1")

    for winter in WINTERS:
        hours = load_minneapolis(*winter_bounds(winter))
        truth = storms_from_hours(hours)
        for seed in range(args.seeds):
            print(f"{winter} pole seed {seed} ...", flush=True)
            sim = simulate_pole(hours, "pole-1", seed=seed)
            storms = with_new_snow(truth, sim.truth)
            tally("detector", storms, sim.readings, current)
            ideal = simulate_pole(hours, "pole-1", seed=seed, model=IDEAL)
            tally("ideal sensors", with_new_snow(truth, ideal.truth), ideal.readings, current)
            tally("gauge only", storms, _strip(sim.readings, "snow_depth_mm"), current)
            tally("depth only", storms, _strip(sim.readings, "precip_mm"), current)
            if previous is not None:
                tally("previous detector", storms, sim.readings, _previous_episodes(previous))
    print(
        f"\nMinneapolis {', '.join(WINTERS)} x {args.seeds} simulated poles; storms with >= 10 mm"
        " new snow; errors in minutes (detected - true end; + = late)"
    )
    print(
        f"{'':<20}{'n':>5}{'missed':>7}{'merged':>7}{'false':>6}"
        f"{'|err|50':>8}{'p90':>7}{'signed':>8}{'clock50':>8}{'p90':>7}{'det s':>8}"
    )
    for name, t in rows.items():
        print(_row(name, t))
    print(f"\nsensor model: {replace(SensorModel())}")


if __name__ == "__main__":
    main()
