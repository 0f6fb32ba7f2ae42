"""The snowfall detector against what real pole sensors do: noise, drift, dropouts, lulls, melt."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from sidewalk.analytics.clocks.cessation import DetectionParams, SnowfallChange, SnowfallDetector
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import SnowMeasurement, WeatherReading

T0 = datetime(2018, 1, 10, 0, 0, tzinfo=UTC)
STEP = timedelta(minutes=5)
DEVICE = "pole-1"

# depth(t_minutes) -> true depth, precip(t_minutes) -> mm this step
Profile = Callable[[int], float]


def stream(
    minutes: int,
    depth: Profile,
    precip: Profile = lambda _: 0.0,
    *,
    noise_mm: float = 10.0,
    seed: int = 0,
    temp_c: float = -5.0,
    skip: Callable[[int], bool] = lambda _: False,
    depth_missing: Callable[[int], bool] = lambda _: False,
) -> list[WeatherReading]:
    rng = random.Random(seed)
    out: list[WeatherReading] = []
    for i, m in enumerate(range(0, minutes, 5)):
        noise = max(-noise_mm, min(noise_mm, rng.gauss(0, noise_mm / 2.5)))
        if skip(m):
            continue
        out.append(
            WeatherReading(
                device=DEVICE,
                seq=i + 1,
                ts=to_ms(T0 + timedelta(minutes=m)),
                snow_depth_mm=None if depth_missing(m) else max(0.0, depth(m) + noise),
                precip_mm=precip(m),
                air_temp_c=temp_c,
            )
        )
    return out


def run(
    readings: list[WeatherReading], params: DetectionParams | None = None
) -> list[SnowfallChange]:
    detector = SnowfallDetector(DEVICE, params or DetectionParams())
    changes: list[SnowfallChange] = []
    for r in readings:
        changes += detector.observe(r)
        changes += detector.advance(r.event_time)
    return changes + detector.advance(readings[-1].event_time + timedelta(days=1))


def ramp(start: int, end: int, rate_mm_h: float, base: float = 0.0) -> Profile:
    return lambda m: base + rate_mm_h * (min(max(m, start), end) - start) / 60


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.mark.parametrize("seed", range(5))
def test_ten_mm_ultrasonic_noise_on_an_old_pack_never_starts_a_snowfall(seed: int) -> None:
    assert run(stream(3 * 24 * 60, lambda _: 150.0, seed=seed)) == []


def test_a_gust_of_drifting_snow_under_the_sensor_starts_nothing() -> None:
    """Four readings 40 mm high (20 minutes), twice a day: depth alone must outlast a gust."""

    def gust(m: int) -> float:
        return 40.0 if m % 720 in range(300, 320) else 0.0

    assert run(stream(2 * 24 * 60, lambda m: 150.0 + gust(m), noise_mm=2.0)) == []


def test_falling_snow_echoes_are_ignored_by_the_median() -> None:
    """One reading in ten reads 150 mm high; the cessation is still the true end."""
    depth = ramp(60, 300, 15.0)

    def echoes(m: int) -> float:
        return 150.0 if 60 < m < 300 and (m // 5) % 10 == 3 else 0.0

    changes = run(stream(12 * 60, lambda m: depth(m) + echoes(m), noise_mm=4.0))
    assert [c.kind for c in changes] == ["onset", "cessation"]
    assert abs(changes[1].at - at(300)) <= timedelta(minutes=10)


@pytest.mark.parametrize("seed", range(4))
def test_depth_only_storm_cessation_within_fifteen_minutes_despite_noise(seed: int) -> None:
    """No gauge at all (a frozen bucket): 4 h of 12 mm/h snow ending at minute 300."""
    changes = run(stream(10 * 60, ramp(60, 300, 12.0), seed=seed))
    assert [c.kind for c in changes] == ["onset", "cessation"]
    assert abs(changes[1].at - at(300)) <= timedelta(minutes=15)
    # Depth alone needs two 8-mm rises 30 min apart: at 12 mm/h the onset shows late.
    assert timedelta(0) <= changes[0].at - at(60) <= timedelta(minutes=90)
    assert changes[1].peak_depth_mm == pytest.approx(48.0, abs=5)


def test_a_one_hour_lull_stays_inside_one_storm() -> None:
    def precip(m: int) -> float:
        return 0.2 if (60 <= m < 180 or 240 <= m < 360) and m % 15 == 0 else 0.0

    def depth(m: int) -> float:
        return ramp(60, 180, 10.0)(m) + ramp(240, 360, 10.0)(m)

    changes = run(stream(12 * 60, depth, precip))
    assert [c.kind for c in changes] == ["onset", "cessation"]
    assert abs(changes[1].at - at(360)) <= timedelta(minutes=15)


def test_a_three_hour_break_is_two_storms() -> None:
    def precip(m: int) -> float:
        return 0.2 if (60 <= m < 180 or 360 <= m < 480) and m % 15 == 0 else 0.0

    kinds = [c.kind for c in run(stream(14 * 60, lambda _: 0.0, precip, noise_mm=0.0))]
    assert kinds == ["onset", "cessation", "onset", "cessation"]


def test_depth_dropouts_and_a_short_pole_outage_do_not_end_a_storm() -> None:
    changes = run(
        stream(
            12 * 60,
            ramp(60, 420, 12.0),
            skip=lambda m: 200 <= m < 260,  # the pole is dark for an hour
            depth_missing=lambda m: m % 20 == 5 or 300 <= m < 340,  # and the transducer ices up
        )
    )
    assert [c.kind for c in changes] == ["onset", "cessation"]
    assert abs(changes[1].at - at(420)) <= timedelta(minutes=15)


def test_settling_and_melt_after_a_storm_start_nothing_new() -> None:
    def depth(m: int) -> float:
        return 200.0 - 0.05 * m if m < 600 else 170.0 - 0.3 * (m - 600)

    assert run(stream(20 * 60, depth, temp_c=4.0)) == []


def test_a_single_tip_is_not_a_snowfall_but_steady_cold_tips_are() -> None:
    def one(m: int) -> float:
        return 0.2 if m == 120 else 0.0

    assert run(stream(6 * 60, lambda _: 0.0, one, noise_mm=0.0)) == []

    def steady(m: int) -> float:
        return 0.2 if 120 <= m < 240 and m % 20 == 0 else 0.0

    changes = run(stream(8 * 60, lambda _: 0.0, steady, noise_mm=0.0))
    # Tips 20 min apart cannot place the end to 10 min: the latest the gauge allows,
    # one spacing after the last tip (220).
    assert [(c.kind, c.at) for c in changes] == [("onset", at(120)), ("cessation", at(240))]
    assert changes[-1].basis == "gauge_latest"
    assert changes[-1].earliest == at(220)


def camera(minutes: int, cover: float, seq: int, frontage: str = "main-st-101") -> SnowMeasurement:
    return SnowMeasurement(
        device=DEVICE,
        seq=seq,
        ts=to_ms(at(minutes)),
        frontage=frontage,
        snow_cover_fraction=cover,
        cleared_width_mm=1500 * (1 - cover),
    )


def test_fresh_cover_on_a_cleared_walk_is_a_signal_when_cold() -> None:
    detector = SnowfallDetector(DEVICE)
    for r in stream(60, lambda _: 150.0, noise_mm=0.0):
        detector.observe(r)
    changes = detector.observe_camera(camera(60, 0.0, 100))
    changes += detector.observe_camera(camera(90, 0.5, 101))  # half the walk covered again
    changes += detector.observe_camera(camera(120, 0.9, 102))
    assert [(c.kind, c.at, c.cause.kind) for c in changes] == [("onset", at(90), "frame")]
    changes = detector.advance(at(120) + DetectionParams().quiet_period)
    assert [(c.kind, c.at) for c in changes] == [("cessation", at(120))]


def test_fresh_cover_when_warm_or_too_slow_is_not_a_signal() -> None:
    warm = SnowfallDetector(DEVICE)
    for r in stream(60, lambda _: 0.0, noise_mm=0.0, temp_c=5.0):
        warm.observe(r)
    changes = [
        c
        for i, f in enumerate((0.0, 0.6, 1.0))
        for c in warm.observe_camera(camera(60 + 30 * i, f, 100 + i))
    ]
    assert changes == []
    slow = SnowfallDetector(DEVICE)
    for r in stream(60, lambda _: 0.0, noise_mm=0.0):
        slow.observe(r)
    changes = [
        c
        for i, f in enumerate((0.0, 0.6, 1.0))
        for c in slow.observe_camera(camera(60 + 180 * i, f, 100 + i))
    ]
    assert changes == []


@pytest.mark.parametrize(("depth_end", "expected"), [(305, 300), (390, 390)])
def test_the_gauge_decides_unless_the_depth_rose_clearly_longer(
    depth_end: int, expected: int
) -> None:
    """A break one reading after the last tip is the same end; an hour and a half later is not."""

    def tips(m: int) -> float:
        return 0.2 if 60 <= m <= 300 and m % 10 == 0 else 0.0

    changes = run(stream(12 * 60, ramp(60, depth_end, 12.0), tips, noise_mm=0.0))
    assert [(c.kind, c.at) for c in changes] == [("onset", at(60)), ("cessation", at(expected))]
