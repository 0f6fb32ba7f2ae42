"""How long ``sidewalk replay --weather FILE`` takes for a winter, beside reading the file alone.

Times, in one process and one run (CPU seconds, which a busy shared machine
disturbs less than the wall clock; wall seconds beside them):

1. reading the file (``station.load_station_file``) and cutting the season
   out of it (``station_winter``): what any replay of that file pays first;
2. the season replay itself (``season.run_season``) for ``--frontages``, and
   inside it its two phases: simulating the poles, owners and cameras
   (``_simulate_village``) and every reading through the clock engine
   (``_replay``).

Default file: the bundled Milwaukee GHCN-Daily record (the one file that gets
its SNOW/SNWD correction), winter 2018-19, 30 frontages, no what-if profile.

    uv run python -m bench.station_replay [FILE] [--winter 2018-19] [--frontages 30]
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console

from sidewalk.scenarios import season as season_module
from sidewalk.scenarios.season import run_season
from sidewalk.scenarios.station import load_station_file, station_winter
from sidewalk.scenarios.weather import record_path

T = TypeVar("T")


def _timed(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.process_time() - cpu, time.perf_counter() - wall


def _phase(name: str, spent: dict[str, tuple[float, float]]) -> None:
    """Time one of ``run_season``'s phases (it calls them through the module)."""
    inner = getattr(season_module, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        out, cpu, wall = _timed(inner, *args, **kwargs)
        spent[name] = (cpu, wall)
        return out

    setattr(season_module, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=None)
    parser.add_argument("--format", default=None)
    parser.add_argument("--winter", default="2018-19")
    parser.add_argument("--frontages", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    path = args.file or record_path("milwaukee")
    spent: dict[str, tuple[float, float]] = {}
    _phase("_simulate_village", spent)
    _phase("_replay", spent)
    record, load_cpu, load_wall = _timed(load_station_file, path, args.format)
    season, cut_cpu, cut_wall = _timed(station_winter, record, args.winter, args.seed)
    report, run_cpu, run_wall = _timed(
        run_season,
        season.winter,
        "minneapolis",
        None,
        args.frontages,
        args.seed,
        Console(file=io.StringIO()),
        weather=season,
    )
    print(f"{path.name}, winter {season.winter}, {args.frontages} frontages, seed {args.seed}")
    print(f"{'step':<44}{'CPU s':>8}{'wall s':>8}")
    print(f"{'read the file':<44}{load_cpu:>8.2f}{load_wall:>8.2f}")
    print(f"{'cut the season (and spread days to hours)':<44}{cut_cpu:>8.2f}{cut_wall:>8.2f}")
    replayed = f"replay ({report.readings:,} readings)"
    print(f"{replayed:<44}{run_cpu:>8.2f}{run_wall:>8.2f}")
    for name, label in (
        ("_simulate_village", "  simulate poles, owners, cameras"),
        ("_replay", "  readings through the clock engine"),
    ):
        cpu, wall = spent[name]
        print(f"{label:<44}{cpu:>8.2f}{wall:>8.2f}")
    print(f"engine readings/s (CPU): {report.readings / run_cpu:,.0f}")


if __name__ == "__main__":
    main()
