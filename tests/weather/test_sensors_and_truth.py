"""The seeded pole simulator and the storm truth taken from snow labels."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from sidewalk.scenarios.accuracy import Episode, Storm, score, storms_from_hours, with_new_snow
from sidewalk.scenarios.sensors import SensorModel, simulate_pole, snow_ratio
from sidewalk.scenarios.weather import WeatherHour

T0 = datetime(2018, 1, 10, 12, 0, tzinfo=UTC)
QUIET = SensorModel(
    echo_outlier_prob=0.0,
    drift_spike_prob=0.0,
    depth_dropout_prob=0.0,
    iced_prob=0.0,
    outage_prob_per_hour=0.0,
    lull_prob=0.0,
)


def hours(pattern: str, temp: float = -5.0, label: str = "snow") -> list[WeatherHour]:
    """One hour per character: 's' snows (1.5 mm/h of water), '.' is dry."""
    return [
        WeatherHour(
            T0 + timedelta(hours=i),
            temp,
            1.5 if c == "s" else 0.0,
            0.0,
            label if c == "s" else None,
        )
        for i, c in enumerate(pattern)
    ]


def test_same_seed_same_stream_other_seed_other_noise() -> None:
    weather = hours("..sss.....")
    a = simulate_pole(weather, "pole-1", seed=7)
    b = simulate_pole(weather, "pole-1", seed=7)
    c = simulate_pole(weather, "pole-1", seed=8)
    assert a.readings == b.readings
    assert [r.snow_depth_mm for r in a.readings] != [r.snow_depth_mm for r in c.readings]


def test_snow_builds_depth_and_tips_the_bucket_then_stops() -> None:
    sim = simulate_pole(
        hours("..sss......."), "pole-1", seed=1, model=replace(QUIET, depth_noise_mm=0.0)
    )
    truth = sim.truth
    snowing = [s.at for s in truth if s.snowing]
    assert snowing[0] == T0 + timedelta(
        hours=1, minutes=30
    )  # the label at 02:00 covers 01:30-02:30
    assert snowing[-1] == T0 + timedelta(hours=4, minutes=25)
    new_snow = sum(s.new_snow_mm for s in truth)
    assert new_snow == pytest.approx(sum(s.new_snow_mm for s in truth if s.snowing))
    # 3 h at 1.5 mm/h (times a seeded lognormal factor per hour) at ratio 11.9.
    assert 20 < new_snow < 150
    tipped = sum(r.precip_mm or 0.0 for r in sim.readings)
    water = new_snow / snow_ratio(-5.0, QUIET.melt_on_contact_c)
    assert tipped == pytest.approx(water * QUIET.catch_efficiency, abs=0.4)
    assert all(
        r.snow_depth_mm == pytest.approx(s.true_depth_mm, abs=0.06)
        for r, s in zip(sim.readings, truth, strict=True)
    )


def test_snow_above_the_melt_threshold_lays_nothing_down_but_the_gauge_sees_water() -> None:
    sim = simulate_pole(hours("..sss.....", temp=3.0), "pole-1", seed=1, model=QUIET)
    assert max(s.true_depth_mm for s in sim.truth) == 0.0
    assert sum(r.precip_mm or 0.0 for r in sim.readings) > 1.0


def test_ultrasonic_noise_is_bounded_and_faults_show_up() -> None:
    weather = hours("ssssssssssss" + "." * 36)
    clean = simulate_pole(weather, "pole-1", seed=3, model=QUIET)
    errors = [
        abs((r.snow_depth_mm or 0) - s.true_depth_mm)
        for r, s in zip(clean.readings, clean.truth, strict=True)
    ]
    assert max(errors) <= QUIET.depth_noise_mm + 0.06
    assert max(errors) > 3  # there is noise
    faulty = simulate_pole(
        weather, "pole-1", seed=3, model=replace(SensorModel(), depth_dropout_prob=0.5)
    )
    assert sum(r.snow_depth_mm is None for r in faulty.readings) > len(faulty.readings) // 3
    dark = simulate_pole(
        weather, "pole-1", seed=3, model=replace(SensorModel(), outage_prob_per_hour=1.0)
    )
    assert len(dark.readings) < len(dark.truth)


def test_lulls_of_up_to_two_hours_stay_inside_one_storm() -> None:
    storms = storms_from_hours(hours("ss..ss...s.s"))
    assert [(s.onset, s.end, s.snow_hours) for s in storms] == [
        (T0 - timedelta(minutes=30), T0 + timedelta(hours=5, minutes=30), 4),
        (T0 + timedelta(hours=8, minutes=30), T0 + timedelta(hours=11, minutes=30), 2),
    ]
    assert storms_from_hours(hours("ss...s"), merge_gap_hours=3)[0].snow_hours == 3
    assert storms_from_hours(hours("......")) == []


def test_new_snow_is_attached_to_its_storm() -> None:
    weather = hours("..ss........ss..", temp=-5.0)
    sim = simulate_pole(weather, "pole-1", seed=2, model=QUIET)
    first, second = with_new_snow(storms_from_hours(weather), sim.truth)
    assert first.new_snow_mm > 10
    assert second.new_snow_mm > 10
    assert first.new_snow_mm + second.new_snow_mm == pytest.approx(
        sum(s.new_snow_mm for s in sim.truth), abs=0.2
    )


def test_scoring_matches_misses_merges_and_false_alarms() -> None:
    h = timedelta(hours=1)
    storms = [
        Storm(T0, T0 + 4 * h, 4, 40.0),
        Storm(T0 + 10 * h, T0 + 12 * h, 2, 30.0),
        Storm(T0 + 30 * h, T0 + 31 * h, 1, 2.0),  # light: not scored
        Storm(T0 + 50 * h, T0 + 52 * h, 2, 25.0),
    ]
    episodes = [
        Episode(T0 + h / 2, T0 + 4 * h + timedelta(minutes=20)),
        Episode(T0 + 10 * h, T0 + 12 * h - timedelta(minutes=10)),
        Episode(T0 + 80 * h, T0 + 81 * h),  # nothing fell: a false alarm
    ]
    result = score(storms, episodes)
    assert [s.error_minutes for s in result.storms] == [20.0, -10.0, None]
    assert (result.missed, result.light_storms, result.false_alarms, result.episodes) == (
        1,
        1,
        1,
        3,
    )
    assert result.abs_percentile(50) == 15.0
    merged = score(storms[:2], [Episode(T0, T0 + 12 * h)])
    assert merged.merged == 1
