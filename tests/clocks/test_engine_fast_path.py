"""The engine's fast path for readings that change nothing decides exactly as before.

Pure, no sockets. The index of clocks awaiting a decision must follow every
clock through onset, cessation, decision, review and restore; the hindsight
fit and the median filter, rewritten for speed, must give bit-identical numbers.
"""

from __future__ import annotations

import random
import statistics
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.cessation import _hinge_fit, _median
from sidewalk.analytics.clocks.engine import AWAITING, ClockEngine, FrontageSpec
from sidewalk.core.contract import AnyReading
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE, Pole, storm

CHICAGO = ZoneInfo("America/Chicago")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
DEADLINE = ONSET + timedelta(hours=28)  # a 4-hour storm, then 24 h


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
