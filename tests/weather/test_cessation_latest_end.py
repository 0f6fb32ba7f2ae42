"""An end the evidence cannot place to 10 minutes is the latest it allows (docs/cessation.md).

A tipping bucket tips once per 0.2 mm, so snow at the storm's rate can go on for up to
one tip spacing after the last tip. Streams here are built with the true end known:
the detector's end is never before it, and the cessation says how it was determined.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sidewalk.analytics.clocks.cessation import DetectionParams, SnowfallChange, SnowfallDetector
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import WeatherReading
from sidewalk.scenarios.accuracy import detect_episodes
from sidewalk.scenarios.independent import minute_weather
from sidewalk.scenarios.metar import Report
from sidewalk.scenarios.sensors import simulate_pole

T0 = datetime(2020, 1, 6, 6, 0, tzinfo=UTC)
PREVIOUS = DetectionParams(end_resolution=None, mixed_max_air_temp_c=1.5)


def _run(
    tip_minutes: list[int],
    params: DetectionParams | None = None,
    temp: Callable[[int], float] = lambda _: -4.0,
) -> list[SnowfallChange]:
    detector = SnowfallDetector("pole-1", params or DetectionParams())
    changes: list[SnowfallChange] = []
    for i, m in enumerate(range(0, 8 * 60, 5)):
        r = WeatherReading(
            device="pole-1",
            seq=i + 1,
            ts=to_ms(T0 + timedelta(minutes=m)),
            snow_depth_mm=0.0,
            precip_mm=0.2 if m in tip_minutes else 0.0,
            air_temp_c=temp(m),
        )
        changes += detector.observe(r)
        changes += detector.advance(r.event_time)
    return changes


def _cessation(changes: list[SnowfallChange]) -> SnowfallChange:
    (c,) = [c for c in changes if c.kind == "cessation"]
    return c


def minutes(m: int) -> datetime:
    return T0 + timedelta(minutes=m)


def test_light_snow_the_end_is_one_tip_spacing_after_the_last_tip() -> None:
    # 0.4 mm/h into the bucket: a tip every 30 min. The snow truly stopped at 200, the
    # bucket two-thirds full, so no tip after 180: the last tip is 20 min early.
    true_end = minutes(200)
    tips = [60, 90, 120, 150, 180]
    assert _cessation(_run(tips, PREVIOUS)).at == minutes(180)  # the previous detector: early
    c = _cessation(_run(tips))
    assert c.at == minutes(210) >= true_end
    assert c.basis == "gauge_latest"
    assert c.earliest == minutes(180)


def test_the_storms_median_spacing_not_the_funnels_last_melt_out() -> None:
    # Spacings 30, 30, 30, 20: the median (30 min), not the last one.
    c = _cessation(_run([60, 90, 120, 150, 170]))
    assert c.at == minutes(200)
    # A lull longer than the onset window is not a spacing: 10 min apart places the end.
    c = _cessation(_run([60, 70, 80, 200, 210, 220]))
    assert c.at == minutes(220)
    assert c.basis == "gauge"


def test_tips_within_ten_minutes_place_the_end_at_the_last_tip() -> None:
    c = _cessation(_run(list(range(60, 185, 5))))
    assert c.at == minutes(180)
    assert c.basis == "gauge"
    assert c.earliest == c.at


def test_a_changeover_keeps_the_snowfall_open_while_it_may_still_be_snow() -> None:
    # Snow at -1 °C to 120, then wet snow at +2.5 °C (a changeover) to a true end at 150.
    def temp(m: int) -> float:
        return -1.0 if m <= 120 else 2.5

    tips = list(range(60, 155, 5))
    assert _cessation(_run(tips, PREVIOUS, temp)).at == minutes(120)  # early by 30 min
    c = _cessation(_run(tips, temp=temp))
    assert c.at == minutes(150)
    # Warm precipitation alone is rain: it starts nothing.
    assert _run(tips, temp=lambda _: 2.5) == []


def test_a_simulated_pole_under_minute_truth_is_never_early() -> None:
    # A synthetic record: light snow from 10:12 to 14:37 (the remarks' minutes), -3 °C, hourly
    # reports at :51; the pole snows over exactly those minutes at the hourly 0.5 mm.
    def report(h: int, body: str, rmk: str = "", mm: float | None = 0.5) -> Report:
        when = datetime(2020, 1, 6, h, 51, tzinfo=UTC)
        metar = f"KTST 06{h:02d}51Z 36010KT 2SM {body} OVC010 M03/M05 A3000 RMK AO2 {rmk}SLP200"
        return Report("TST", when, metar, air_temp_c=-3.0, precip_mm=mm)

    reports = [report(h, "OVC020", mm=None) for h in range(4, 10)]
    reports += [report(10, "-SN", "SNB12 ")] + [report(h, "-SN") for h in range(11, 14)]
    reports += [report(14, "BR", "SNE37 ", mm=0.3)]
    reports += [report(h, "BR", mm=None) for h in range(15, 23)]
    true_end = datetime(2020, 1, 6, 14, 37, tzinfo=UTC)
    hours = minute_weather(reports)
    for seed in range(3):
        sim = simulate_pole(hours, "pole-1", seed=seed)
        snowing = [s.at for s in sim.truth if s.snowing]
        assert snowing[0] >= datetime(2020, 1, 6, 10, 10, tzinfo=UTC)
        assert snowing[-1] + timedelta(minutes=5) >= true_end > snowing[-1]
        [episode] = detect_episodes(sim.readings, "pole-1")
        assert episode.cessation >= true_end - timedelta(minutes=10)
        assert episode.cessation <= true_end + timedelta(minutes=90)
