"""The engine's fast path for readings that change nothing decides exactly as before.

Pure, no sockets. The index of clocks awaiting a decision must follow every
clock through onset, cessation, decision, review and restore; the hindsight
fit and the median filter, rewritten for speed, must give bit-identical numbers.
"""

from __future__ import annotations

import itertools
import json
import random
import statistics
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.cessation import _best_hinge, _hinge_fit, _median
from sidewalk.analytics.clocks.engine import AWAITING, ClockEngine, FrontageSpec
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import AnyReading, SnowMeasurement, WeatherReading
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE, Pole, every, storm

CHICAGO = ZoneInfo("America/Chicago")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
DEADLINE = ONSET + timedelta(hours=28)  # a 4-hour storm, then 24 h
STEP = timedelta(minutes=5)


def awaiting(engine: ClockEngine) -> dict[str, datetime]:
    """Every clock past its deadline and undecided, found the slow way."""
    grace = engine.params.decision_grace
    return {
        f: c.deadline + grace
        for f, c in engine.clocks.items()
        if c.state in AWAITING and c.deadline is not None
    }


def test_the_clocks_awaiting_a_decision_are_known_through_a_winter_of_storms() -> None:
    pole = Pole()
    readings: list[AnyReading] = []
    for day in range(3):  # storm, deadline, next storm before and after the deadline
        onset = ONSET + timedelta(days=day, hours=6 * day)
        readings += storm(pole, onset, hours=4)
        deadline = onset + timedelta(hours=28)
        readings += [pole.weather(deadline - timedelta(hours=h), 80.0) for h in (6, 3)]
        readings.append(pole.camera(deadline - timedelta(minutes=30), "a", 1500.0))
    readings.sort(key=lambda r: r.ts)
    engine = ClockEngine(load_profile(), [FrontageSpec(f, DEVICE) for f in ("a", "b", "c")])
    seen_waiting = 0
    for reading in readings:
        engine.step(reading)
        assert engine._awaiting == awaiting(engine)
        seen_waiting += bool(engine._awaiting)
    assert seen_waiting > 0  # the test went through clearing periods
    # Time alone: past every wait, the silent ones go to review, and the index follows.
    engine.advance(readings[-1].event_time + timedelta(days=2))
    assert engine._awaiting == awaiting(engine)
    assert {c.state for c in engine.clocks.values()} & {"needs_review", "violation", "complied"}
    restored = ClockEngine(load_profile(), [FrontageSpec(f, DEVICE) for f in ("a", "b", "c")])
    restored.restore(engine.snapshot())
    assert restored._awaiting == awaiting(restored) == engine._awaiting
    assert restored.next_due() == engine.next_due()


def reference_hinge_fit(
    points: list[tuple[float, float]], b: float
) -> tuple[float, float, float] | None:
    """The fit as first written: every point summed, ``min`` on each."""
    n = len(points)
    sx = sy = sxx = sxy = 0.0
    for x, y in points:
        u = min(x - b, 0.0)
        sx += u
        sy += y
        sxx += u * u
        sxy += u * y
    det = n * sxx - sx * sx
    if det <= 1e-12:
        return None
    slope = (n * sxy - sx * sy) / det
    level = (sy - slope * sx) / n
    sse = sum((y - level - slope * min(x - b, 0.0)) ** 2 for x, y in points)
    return sse, level, slope


def test_the_hindsight_fit_and_the_median_are_bit_identical_to_the_plain_sums() -> None:
    rng = random.Random(17)
    for _ in range(60):
        n = rng.randint(3, 40)
        x0 = rng.uniform(0, 3)
        xs = sorted({round(x0 + rng.uniform(0, 6), rng.choice((2, 6, 12))) for _ in range(n)})
        points = [(x, rng.choice((0.0, rng.uniform(0, 400)))) for x in xs]
        sy = 0.0
        for _, y in points:
            sy += y
        for b, _ in points[2:]:
            assert _hinge_fit(points, b, sy) == reference_hinge_fit(points, b)
        depths = [y for _, y in points[: rng.randint(1, 9)]]
        assert _median(list(depths)) == statistics.median(depths)


def test_every_break_fitted_at_once_picks_the_break_and_numbers_of_the_loop() -> None:
    """``_best_hinge`` (numpy, then the near-best refitted) is the first least-squares
    break of the plain loop over ``reference_hinge_fit``, with its exact numbers, ties
    (a flat or two-level record fits several breaks equally) and degenerate fits too."""
    rng = random.Random(2017)
    ties = 0
    for case in range(400):
        n = rng.randint(0, 70)
        xs = sorted({round(rng.uniform(0, 6), rng.choice((2, 3, 6, 12))) for _ in range(n)})
        shape = case % 4
        if shape == 0:
            points = [(x, 120.0) for x in xs]  # flat: every break fits alike
        elif shape == 1:
            points = [(x, rng.choice((100.0, 110.0))) for x in xs]
        elif shape == 2:  # a storm's rise into a level, with sensor noise
            points = [(x, 80.0 + 40.0 * min(x, 3.5) + rng.gauss(0, 4)) for x in xs]
        else:
            points = [(x, rng.uniform(0, 400)) for x in xs]
        expected: tuple[float, float, float, float] | None = None
        sses = []
        for b, _ in points[2:]:
            fit = reference_hinge_fit(points, b)
            if fit is not None:
                sses.append(fit[0])
                if expected is None or fit[0] < expected[0]:
                    expected = (fit[0], b, fit[1], fit[2])
        ties += expected is not None and sses.count(expected[0]) > 1
        assert _best_hinge(points) == expected
    assert ties > 10  # the first of equal fits was chosen, not just any


def _village_storm() -> tuple[list[FrontageSpec], list[AnyReading]]:
    """A storm at one pole over three days, with every kind of frontage and reading.

    ``clears`` clears by the deadline, ``never`` never does (a violation, a case,
    offenses), ``cures`` clears late (a cured case), ``silent``'s camera stops
    before the deadline (unverified); fresh cover on a cleared walk, pavement and
    ground-probe temperatures, a frame out of order and a repeated weather reading.
    """
    pole = Pole()
    onset = ONSET.astimezone(UTC)
    weather = storm(pole, onset, hours=4)
    end = weather[-1].event_time
    weather += [pole.weather(t, 80.0) for t in every(end, onset + timedelta(days=3), STEP)]
    readings: list[AnyReading] = list(weather)
    readings.append(weather[40])  # a repeated reading: the detector skips it as late
    for t in every(onset - timedelta(hours=1), onset + timedelta(days=3), timedelta(hours=1)):
        hours = (t - onset) / timedelta(hours=1)
        snowing = 0 < hours <= 4
        for frontage, cleared_after in (("clears", 6), ("never", 10_000), ("cures", 40)):
            clear = hours >= cleared_after
            cover = 0.9 if snowing or (hours > 4 and not clear) else 0.05
            readings.append(_frame(pole, t, frontage, 1524.0 if clear else 0.0, cover))
        if hours < 20:
            readings.append(_frame(pole, t, "silent", 1524.0, 0.05))
        if hours % 6 == 0:
            readings.append(pole.pavement(t, -3.0 if hours < 30 else 2.0))
        if hours % 12 == 0:
            pole.seq += 1
            readings.append(
                WeatherReading(
                    device=DEVICE, seq=pole.seq, ts=to_ms(t), air_temp_c=-6.0,
                    ground_temp_c=-2.0, ground_probe_depth_mm=300,
                )
            )  # fmt: skip
    late = _frame(pole, onset + timedelta(hours=30, minutes=30), "clears", 1524.0, 0.05)
    readings.sort(key=lambda r: r.ts)  # stable: each instant's weather, then its frames
    readings.insert(len(readings) - 200, late)  # arrives ~ a day late
    specs = [FrontageSpec(f, DEVICE) for f in ("clears", "cures", "never", "silent")]
    return specs, readings


def _frame(pole: Pole, at: datetime, frontage: str, width: float, cover: float) -> AnyReading:
    pole.seq += 1
    return SnowMeasurement(
        device=DEVICE, seq=pole.seq, ts=to_ms(at), frontage=frontage,
        cleared_width_mm=width, snow_cover_fraction=cover,
    )  # fmt: skip


def test_the_batch_path_gives_the_same_events_and_state_as_reading_by_reading() -> None:
    specs, readings = _village_storm()
    one_by_one = ClockEngine(load_profile(), specs)
    expected = [e for r in readings for e in one_by_one.step(r)]
    kinds = {type(e).__name__ for e in expected}
    assert {"ClearingViolation", "ClearingUnverified", "OffenseCounted"} <= kinds
    cured = [e for e in expected if getattr(e, "to_state", None) == "cured"]
    assert cured  # the late clearer's case
    assert sum(d.late_readings + d.late_camera for d in one_by_one.detectors.values()) >= 1

    whole = ClockEngine(load_profile(), specs)
    assert whole.step_many(readings) == expected
    by_instant = ClockEngine(load_profile(), specs)
    chunks = [list(g) for _, g in itertools.groupby(readings, key=lambda r: r.ts)]
    assert [e for chunk in chunks for e in by_instant.step_many(chunk)] == expected
    # A replay from the store: the canonical JSON ingest stored, parsed, not validated again.
    rows = [json.loads(r.to_json()) for r in readings]
    stored = ClockEngine(load_profile(), specs)
    assert stored.replay_rows(rows) == expected
    snapshot = one_by_one.snapshot()
    for engine in (whole, by_instant, stored):
        assert engine.snapshot() == snapshot
        assert engine._awaiting == awaiting(engine)
    # Observe-only (the live runner), then one advance: as ``observe`` one by one.
    observed = ClockEngine(load_profile(), specs)
    expected_observed = [e for r in readings for e in observed.observe(r)]
    live = ClockEngine(load_profile(), specs)
    assert live.step_many(readings, advance=False) == expected_observed
    assert live.snapshot() == observed.snapshot()
