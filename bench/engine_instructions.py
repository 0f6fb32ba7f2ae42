"""Clock-engine cost in CPU instructions: a figure a busy machine does not move.

Wall-clock readings/s (``bench.engine_throughput``) vary with whatever else
the machine runs. This counts the instructions the engine executes instead,
under ``valgrind --tool=callgrind``, for a small fixed village (default 50
frontages, 10 days: ``engine_throughput``'s stream, 26,377 readings).

The payloads are built first, outside valgrind, and written to a file; a
child process under callgrind validates them and builds the engine with
collection off, then feeds every reading through ``step`` (``observe`` +
``advance`` to its event time; in a tree without ``step``, those two calls)
from inside ``itertools.starmap``, and callgrind counts only while that runs
(``--toggle-collect=starmap_next``: the engine's code never calls starmap).
Hash randomisation is fixed (``PYTHONHASHSEED=0``), so every run does the
same work. Under callgrind the run takes minutes of CPU; on a busy machine,
much longer.

``--path`` picks what is fed: ``step`` (each validated reading, one call
each: the reading-by-reading reference), ``many`` (the validated readings
of each instant, one ``step_many`` call per instant: the runner's batch
path) or ``rows`` (the payload dicts of each instant, one ``replay_rows`` call
per instant: the replay from the store, not validated again). Either way the
count is of the engine's work only, divided by the readings.

The script needs only ``bench.engine_throughput``'s stream, so it can be
copied into an older tree to measure that tree the same way (``--path step``).

    uv run python -m bench.engine_instructions [--frontages 50] [--days 10] [--path step]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.engine_throughput import _stepper, _stream, _templates, _validate

PER_POLE = 10


def _specs(frontages: int) -> list[tuple[str, str]]:
    return [(f"f-{i:05d}", f"pole-{i // PER_POLE:04d}") for i in range(frontages)]


def _inner(payloads: Path, frontages: int, path: str) -> None:
    """Under callgrind: validate and build (not counted), then feed (counted)."""
    from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
    from sidewalk.core.contract import AnyReading
    from sidewalk.core.profile import load_profile

    rows = json.loads(payloads.read_text())
    readings = [_validate(p) for p in rows]
    engine = ClockEngine(load_profile(), [FrontageSpec(f, d) for f, d in _specs(frontages)])
    if path == "step":
        feed = _stepper(engine)

        def step(reading: AnyReading) -> int:
            return len(feed(reading))

        events = sum(itertools.starmap(step, ((r,) for r in readings)))
    else:
        # One call per instant, as a runner's batch or a replay's read of the store.
        items: list[Any] = rows if path == "rows" else readings
        feed_many: Callable[[list[Any]], list[Any]] = (
            engine.replay_rows if path == "rows" else engine.step_many
        )
        chunks = [list(g) for _, g in itertools.groupby(items, key=_ts)]

        def step_many(chunk: list[Any]) -> int:
            return len(feed_many(chunk))

        events = sum(itertools.starmap(step_many, ((c,) for c in chunks)))
    print(f"readings {len(readings)} events {events}")


def _ts(item: Any) -> int:
    ts: int = item["ts"] if isinstance(item, dict) else item.ts
    return ts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--frontages", type=int, default=50)
    parser.add_argument("--days", type=int, default=10)
    parser.add_argument("--path", choices=("step", "many", "rows"), default="step")
    parser.add_argument("--inner", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        _inner(args.inner, args.frontages, args.path)
        return
    poles = -(-args.frontages // PER_POLE)
    templates = _templates(args.days)
    payloads = list(_stream(templates, poles, _specs(args.frontages), args.days, 60))
    print(f"{args.frontages} frontages, {args.days} days: under callgrind (minutes) ...")
    with tempfile.TemporaryDirectory() as tmp:
        stream, out = Path(tmp) / "payloads.json", Path(tmp) / "callgrind.out"
        stream.write_text(json.dumps(payloads))
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        cmd += ["--collect-atstart=no", "--toggle-collect=starmap_next"]
        cmd += [sys.executable, "-m", "bench.engine_instructions", "--inner", str(stream)]
        cmd += ["--frontages", str(args.frontages), "--path", args.path]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        match = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if not match or int(match.group(1)) == 0:
        sys.exit("callgrind counted nothing: this Python has no starmap_next symbol")
    fed = proc.stdout.split()
    readings, events, engine = int(fed[1]), int(fed[3]), int(match.group(1))
    print(f"{readings:,} readings, {events:,} events")
    what = {"step": "step: observe + advance", "many": "step_many", "rows": "replay_rows"}
    print(f"{f'engine instructions ({what[args.path]})':<44}{engine:>16,}")
    print(f"{'per reading':<44}{engine / readings:>16,.0f}")


if __name__ == "__main__":
    main()
