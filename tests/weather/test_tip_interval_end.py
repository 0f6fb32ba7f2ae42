"""The tip-interval end (issue 16, docs/cessation.md): an option, off by default.

A tipping bucket tips once per 0.2 mm, so snow at the storm's rate can go on
for up to one tip spacing after the last tip. With the option on, a cessation
the last tip decides is moved one median tip spacing later; off, nothing
changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidewalk.analytics.clocks.cessation import DetectionParams, SnowfallChange, SnowfallDetector
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import WeatherReading

T0 = datetime(2020, 1, 6, 6, 0, tzinfo=UTC)


def _run(tip_minutes: list[int], params: DetectionParams) -> list[SnowfallChange]:
    detector = SnowfallDetector("pole-1", params)
    changes: list[SnowfallChange] = []
    for i, m in enumerate(range(0, 8 * 60, 5)):
        r = WeatherReading(
            device="pole-1",
            seq=i + 1,
            ts=to_ms(T0 + timedelta(minutes=m)),
            snow_depth_mm=0.0,
            precip_mm=0.2 if m in tip_minutes else 0.0,
            air_temp_c=-4.0,
        )
        changes += detector.observe(r)
        changes += detector.advance(r.event_time)
    return changes


def _cessation(changes: list[SnowfallChange]) -> datetime:
    (c,) = [c for c in changes if c.kind == "cessation"]
    return c.at


def test_off_by_default_the_last_tip_is_the_end() -> None:
    tips = [60, 90, 120, 150, 180]  # light snow: a tip every 30 min
    assert not DetectionParams().tip_interval_end
    assert _cessation(_run(tips, DetectionParams())) == T0 + timedelta(minutes=180)


def test_on_the_end_is_one_median_tip_spacing_after_the_last_tip() -> None:
    # Spacings 30, 30, 30, 20 (the funnel's last melt-out is not the rate):
    # the median, 30 min, not the last one.
    tips = [60, 90, 120, 150, 170]
    params = DetectionParams(tip_interval_end=True)
    assert _cessation(_run(tips, params)) == T0 + timedelta(minutes=200)


def test_on_a_lull_longer_than_the_onset_window_is_not_a_spacing() -> None:
    # Two bursts 2 h apart within one storm: the 2 h lull is not the rate.
    tips = [60, 70, 80, 200, 210, 220]
    params = DetectionParams(tip_interval_end=True)
    assert _cessation(_run(tips, params)) == T0 + timedelta(minutes=230)
