"""Clock-engine throughput in-process, beside the bare validation loop as the floor.

A village of ``--frontages`` frontages, ``--per-pole`` to a pole, over a whole
winter (from 2017-11-01, ``--days`` days) at 5-minute weather resolution, each
frontage measured by the camera every ``--camera-minutes`` (one owner in
twenty never clears, the rest keep a 5-ft path). Pole weather comes
from the sensor simulator run on the real Minneapolis 2017-18 record (four
seeded poles, reused round-robin), so the detector sees real storms, noise and
faults. Both loops build the same JSON-like dicts and validate them with the
contract models; the engine loop then runs ``ClockEngine.step`` on each
(``observe`` + ``advance`` to its event time, what ``ClockEngine.feed`` does).
Peak memory is the process's peak RSS (``resource.getrusage``) after each
loop, the floor first; it includes the simulator's transient objects, so the
engine's own state is also given as the size of its ``snapshot()``. Each
loop's CPU time (``time.process_time``) is given beside its wall time: on a
machine busy with other work the wall-clock rates fall, the CPU-time rates
much less (``bench.engine_instructions`` counts instructions, which load does
not move at all).

    uv run python -m bench.engine_throughput [--frontages 1000] [--days 151]
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import Event
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import AnyReading, SnowMeasurement, WeatherReading
from sidewalk.core.profile import load_profile
from sidewalk.scenarios.sensors import simulate_pole
from sidewalk.scenarios.weather import load_minneapolis

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
                "device": f"pole-{p:04d}",
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
                p = int(device.removeprefix("pole-"))
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--frontages", type=int, default=1000)
    parser.add_argument("--per-pole", type=int, default=10)
    parser.add_argument("--days", type=int, default=151, help="151 = Nov 1 to Mar 31")
    parser.add_argument("--camera-minutes", type=int, default=60, choices=(5, 15, 30, 60))
    args = parser.parse_args()
    poles = -(-args.frontages // args.per_pole)
    frontages = [(f"f-{i:05d}", f"pole-{i // args.per_pole:04d}") for i in range(args.frontages)]
    print(
        f"simulating {TEMPLATES} template poles from the Minneapolis record ({args.days} days) ..."
    )
    templates = _templates(args.days)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024

    def floor() -> int:
        n = 0
        for payload in _stream(templates, poles, frontages, args.days, args.camera_minutes):
            _validate(payload)
            n += 1
        return n

    engine = ClockEngine(load_profile(), [FrontageSpec(f, d) for f, d in frontages])
    counts = {"events": 0}

    def with_engine() -> int:
        n = 0
        step = _stepper(engine)
        for payload in _stream(templates, poles, frontages, args.days, args.camera_minutes):
            counts["events"] += len(step(_validate(payload)))
            n += 1
        return n

    n_floor, t_floor, c_floor, rss_floor = _timed(floor)
    n_engine, t_engine, c_engine, rss_engine = _timed(with_engine)
    assert n_floor == n_engine
    span = f"{date.isoformat(START.date())} + {args.days} days"
    print(f"\n{args.frontages} frontages on {poles} poles, {span}, weather every 5 min,")
    events = counts["events"]
    print(f"camera every {args.camera_minutes} min; {n_engine:,} readings, {events:,} events;")
    print(f"RSS before the loops {base_rss} MiB\n")
    head = f"{'loop':<44}{'seconds':>10}{'readings/s':>14}{'peak RSS MiB':>14}"
    print(f"{head}{'CPU s':>10}{'per CPU s':>12}")
    rows = [
        ("floor: build dict + validate (contract)", t_floor, c_floor, n_floor, str(rss_floor)),
        ("engine: validate + step", t_engine, c_engine, n_engine, str(rss_engine)),
    ]
    if t_engine > t_floor and c_engine > c_floor:
        rows.append(
            ("engine alone (difference)", t_engine - t_floor, c_engine - c_floor, n_engine, "")
        )
    for name, seconds, cpu, n, rss in rows:
        print(
            f"{name:<44}{seconds:>10.1f}{n / seconds:>14,.0f}{rss:>14}{cpu:>10.1f}{n / cpu:>12,.0f}"
        )
    state_mib = len(engine.snapshot()) / 2**20
    cases = len(engine.enforcement.cases)
    print(f"\nengine state at the end: {state_mib:.1f} MiB as a snapshot (JSON), {cases:,} cases")


if __name__ == "__main__":
    main()
