"""Clock-engine throughput in-process, beside the bare validation loop as the floor.

A village of ``--frontages`` frontages, ``--per-pole`` to a pole, over a whole
winter (from 2017-11-01, ``--days`` days) at 5-minute weather resolution, each
frontage measured by the camera every ``--camera-minutes`` (one owner in
twenty never clears, the rest keep a 5-ft path). Pole weather comes
from the sensor simulator run on the real Minneapolis 2017-18 record (four
seeded poles, reused round-robin), so the detector sees real storms, noise and
faults. Every loop builds the same JSON-like dicts (the payloads as ingest
stores them), in event-time order:

* floor: validate each with the contract models, nothing else;
* source: only build them (what every loop spends on its rows before the engine
  or the models see one; a replay from the store parses them instead);
* replay: hand the rows to ``ClockEngine.replay_rows`` as they come (the
  replay from the store: rows ingest validated, not validated again; the
  batch path, advancing once per instant). This is the winter replay;
* validate + step_many: validate each, hand them over together
  (``ClockEngine.step_many``: the analytics runner's batch path);
* with ``--loops floor,replay,step``, also validate + step: ``ClockEngine.step`` on each
  (``observe`` + ``advance`` to its event time), the reading-by-reading
  reference (minutes of CPU for the whole winter).

Every engine loop must give the same number of events (checked). Peak memory
is the process's peak RSS (``resource.getrusage``) after each loop, the floor
first; it includes the simulator's transient objects, so the engine's own
state is also given as the size of its ``snapshot()``. Each loop's CPU time
(``time.process_time``) is given beside its wall time: on a machine busy with
other work the wall-clock rates fall, the CPU-time rates much less
(``bench.engine_instructions`` counts instructions, which load does not move
at all). The load average is printed at the start and the end.

The collector runs as ``sidewalk analytics`` runs it (``core.heap.settle_heap``:
start-up heap frozen, generation 0 every 20,000 allocations); ``--default-gc``
leaves CPython's defaults, as this bench ran before 2026-12-02.

    uv run python -m bench.engine_throughput [--frontages 1000] [--days 151] [--loops …]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import Event
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import AnyReading, SnowMeasurement, WeatherReading
from sidewalk.core.heap import settle_heap
from sidewalk.core.profile import load_profile
from sidewalk.scenarios.sensors import simulate_pole
from sidewalk.scenarios.weather import load_minneapolis
from sidewalk.storage.connect import open_cases

START = datetime(2017, 11, 1, 6, 0, tzinfo=UTC)
STEP_MS = 5 * 60 * 1000
TEMPLATES = 4
Row = tuple[float | None, float | None, float | None]


def _templates(days: int) -> list[dict[int, Row]]:
    """Per template pole: ts_ms -> (depth, precip, air temp) from the simulator."""
    first = START.date()
    hours = load_minneapolis(first, first + timedelta(days=days + 1))
    out = []
    for seed in range(TEMPLATES):
        sim = simulate_pole(hours, "pole-template", seed=seed)
        out.append({r.ts: (r.snow_depth_mm, r.precip_mm, r.air_temp_c) for r in sim.readings})
    return out


def _stream(
    templates: list[dict[int, Row]],
    poles: int,
    frontages: list[tuple[str, str]],
    days: int,
    camera_minutes: int,
) -> Iterator[dict[str, Any]]:
    """Payload dicts in event-time order: each pole's weather every 5 min, each camera hourly."""
    seqs = [0] * poles
    # Built once, as a row read from the store arrives with its strings already made.
    devices = [f"pole-{p:04d}" for p in range(poles)]
    pole_of = [int(device.removeprefix("pole-")) for _, device in frontages]
    start_ms = to_ms(START)
    steps = days * 24 * 12
    camera_every = camera_minutes // 5
    for step in range(steps):
        ts = start_ms + step * STEP_MS
        for p in range(poles):
            row = templates[p % TEMPLATES].get(ts)
            if row is None:
                continue  # the template pole was dark: this pole too
            seqs[p] += 1
            depth, precip, temp = row
            payload: dict[str, Any] = {
                "device": devices[p],
                "seq": seqs[p],
                "ts": ts,
                "stream": "weather",
            }
            if depth is not None:
                payload["snow_depth_mm"] = depth
            payload["precip_mm"] = precip
            payload["air_temp_c"] = temp
            yield payload
        if step % camera_every == 0:
            for i, (frontage, device) in enumerate(frontages):
                p = pole_of[i]
                seqs[p] += 1
                # One owner in twenty never clears; the rest keep the walk clear.
                never = i % 20 == 0
                yield {
                    "device": device,
                    "seq": seqs[p],
                    "ts": ts,
                    "stream": "snow",
                    "frontage": frontage,
                    "snow_cover_fraction": 1.0 if never else 0.0,
                    "cleared_width_mm": 0.0 if never else 1524.0,
                }


def _validate(payload: dict[str, Any]) -> AnyReading:
    if payload["stream"] == "weather":
        return WeatherReading.model_validate(payload)
    return SnowMeasurement.model_validate(payload)


def _stepper(engine: ClockEngine) -> Callable[[AnyReading], list[Event]]:
    """``engine.step`` (observe, then advance to the reading's event time, as ``feed``
    does); an older engine without it: the same two calls."""
    step: Callable[[AnyReading], list[Event]] | None = getattr(engine, "step", None)
    if step is not None:
        return step

    def observe_and_advance(reading: AnyReading) -> list[Event]:
        return engine.observe(reading) + engine.advance(reading.event_time)

    return observe_and_advance


def _timed(run: Callable[[], int]) -> tuple[int, float, float, int]:
    """(items, wall seconds, CPU seconds, peak RSS in MiB after the run)."""
    t0, c0 = time.perf_counter(), time.process_time()
    n = run()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    return n, elapsed, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def _snapshot_cost(engine: ClockEngine, state: bytes) -> tuple[float, float]:
    """Seconds for ``snapshot()`` and for ``save_engine_snapshot`` (SQLite), best of 3."""
    dumps, saves = [], []
    with tempfile.TemporaryDirectory() as tmp:
        cases = open_cases(f"sqlite:///{Path(tmp) / 'cases.sqlite3'}", engine.profile)
        for _ in range(3):
            t0 = time.perf_counter()
            engine.snapshot()
            t1 = time.perf_counter()
            cases.clocks.save_engine_snapshot("bench", engine.now, state.decode())
            saves.append(time.perf_counter() - t1)
            dumps.append(t1 - t0)
        cases.close()
    return min(dumps), min(saves)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--frontages", type=int, default=1000)
    parser.add_argument("--per-pole", type=int, default=10)
    parser.add_argument("--days", type=int, default=151, help="151 = Nov 1 to Mar 31")
    parser.add_argument("--camera-minutes", type=int, default=60, choices=(5, 15, 30, 60))
    parser.add_argument(
        "--loops",
        default="floor,replay",
        help="of floor,replay,many,step (default floor,replay; floor and source always run first)",
    )
    parser.add_argument(
        "--default-gc",
        action="store_true",
        help="leave the garbage collector at CPython's defaults (sessions before 2026-12-02)",
    )
    args = parser.parse_args()
    poles = -(-args.frontages // args.per_pole)
    frontages = [(f"f-{i:05d}", f"pole-{i // args.per_pole:04d}") for i in range(args.frontages)]
    print(
        f"simulating {TEMPLATES} template poles from the Minneapolis record ({args.days} days) ..."
    )
    templates = _templates(args.days)
    # The garbage collector as ``sidewalk analytics`` runs it: the start-up heap
    # frozen, fewer young passes (``--default-gc``: CPython's own settings).
    if not args.default_gc:
        settle_heap(young_threshold=20_000)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    load_start = _load()

    def stream() -> Iterator[dict[str, Any]]:
        return _stream(templates, poles, frontages, args.days, args.camera_minutes)

    def floor() -> int:
        n = 0
        for payload in stream():
            _validate(payload)
            n += 1
        return n

    def engine() -> ClockEngine:
        return ClockEngine(load_profile(), [FrontageSpec(f, d) for f, d in frontages])

    events: dict[str, int] = {}
    engines: dict[str, ClockEngine] = {}

    def counted(
        name: str, run: Callable[[ClockEngine, list[int]], list[Event]]
    ) -> Callable[[], int]:
        def go() -> int:
            engines[name] = e = engine()
            n = [0]
            events[name] = len(run(e, n))
            return n[0]

        return go

    def counting(n: list[int], items: Iterator[Any]) -> Iterator[Any]:
        for item in items:
            n[0] += 1
            yield item

    def by_reading(e: ClockEngine, n: list[int]) -> list[Event]:
        step = _stepper(e)
        out: list[Event] = []
        for payload in counting(n, stream()):
            out += step(_validate(payload))
        return out

    every: dict[str, tuple[str, Callable[[], int]]] = {
        "replay": (
            "replay: rows, batch (replay_rows)",
            counted("replay", lambda e, n: e.replay_rows(counting(n, stream()))),
        ),
        "many": (
            "validate + step_many (batch)",
            counted("many", lambda e, n: e.step_many(_validate(p) for p in counting(n, stream()))),
        ),
        "step": ("validate + step (reading by reading)", counted("step", by_reading)),
    }
    chosen = [x for x in args.loops.split(",") if x != "floor"]
    if not chosen or any(x not in every for x in chosen):
        parser.error(f"--loops: floor and one or more of {', '.join(every)}")
    loops = [
        ("floor: build dict + validate (contract)", floor),
        ("source: build dict only (the rows fed)", lambda: sum(1 for _ in stream())),
    ] + [every[x] for x in chosen]
    results = [(name, *_timed(run)) for name, run in loops]
    _report(args, poles, results, chosen, events, engines[chosen[0]], base_rss, load_start)


def _report(  # noqa: PLR0917 (what the run measured)
    args: argparse.Namespace,
    poles: int,
    results: list[tuple[str, int, float, float, int]],
    chosen: list[str],
    events: dict[str, int],
    engine: ClockEngine,
    base_rss: int,
    load_start: str,
) -> None:
    counts = {r[1] for r in results}
    assert len(counts) == 1, counts
    assert len(set(events.values())) == 1, events  # every path: the same events
    n_readings = counts.pop()
    span = f"{date.isoformat(START.date())} + {args.days} days"
    print(f"\n{args.frontages} frontages on {poles} poles, {span}, weather every 5 min,")
    first = chosen[0]
    n_events = events[first]
    print(f"camera every {args.camera_minutes} min; {n_readings:,} readings, {n_events:,} events;")
    print(f"RSS before the loops {base_rss} MiB; load average {load_start} at the start\n")
    head = f"{'loop':<44}{'seconds':>10}{'readings/s':>14}{'peak RSS MiB':>14}"
    print(f"{head}{'CPU s':>10}{'per CPU s':>12}")
    for name, n, seconds, cpu, rss in results:
        print(
            f"{name:<44}{seconds:>10.1f}{n / seconds:>14,.0f}{rss:>14}{cpu:>10.1f}{n / cpu:>12,.0f}"
        )
    if "replay" in chosen:
        _, _, wall, cpu, _ = results[2 + chosen.index("replay")]
        print(f"\nreplay: {wall:.1f} s wall, {cpu:.1f} CPU s", end="")
        whole = args.frontages == 1000 and args.days == 151  # the 1,000-frontage village, Nov-Mar
        print(f" ({'within' if wall <= 60 else 'over'} the 60 s budget)" if whole else "")
    state = engine.snapshot()
    cases = len(engine.enforcement.cases)
    mib = len(state) / 2**20
    print(f"engine state at the end: {mib:.1f} MiB as a snapshot (JSON), {cases:,} cases")
    dump, save = _snapshot_cost(engine, state)
    print(
        f"saving it, as the runner does before each acknowledgement: snapshot() {dump * 1e3:.0f} ms"
        f" + the case database's write (SQLite) {save * 1e3:.0f} ms (best of 3)"
    )
    print(f"load average {_load()} at the end")


if __name__ == "__main__":
    main()
