"""§ 370-5 (9): a walk poured in cold weather (below 50 °F) is kept free of traffic for
96 hours from the start, when the readings before the pour already say so; not 48 h
lengthened only by a cold reading after it."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.cold_weather import KEEP_OFF, ColdWeatherClocks, Pour
from sidewalk.core.calendar import plus_elapsed
from sidewalk.core.profile import load_profile
from tests.cold_weather.test_cold_weather_engine import Probe

CHICAGO = ZoneInfo("America/Chicago")
T0 = datetime(2026, 10, 20, 8, tzinfo=CHICAGO)
CLYMAN = load_profile()


def pour_after(*air: tuple[float, float]) -> tuple[str, datetime]:
    """Air readings (hours from T0, °F), then a walk poured at T0: its first keep-off."""
    probe, clocks = Probe(), ColdWeatherClocks(CLYMAN, {"pole-1": "main-st"})
    for hours, temp_f in air:
        clocks.feed([probe.air(plus_elapsed(T0, timedelta(hours=hours)), temp_f)])
    [moved] = [t for t in clocks.record_pour(Pour("WO-1", "sidewalk", T0, "Main St", "main-st"))
               if t.clock == KEEP_OFF]  # fmt: skip
    return moved.to_state, datetime.fromisoformat(str(moved.detail["until"]))


def test_cold_readings_before_the_pour_start_the_96_hours_at_once() -> None:
    state, until = pour_after((-3, 44.0), (-1, 46.0))
    assert state == "keep_off_cold"
    assert until == plus_elapsed(T0, timedelta(hours=96))


def test_warm_readings_before_the_pour_start_the_48_hours() -> None:
    state, until = pour_after((-3, 44.0), (-1, 55.0))  # the air at the pour: 55 °F
    assert state == "keep_off_normal"
    assert until == plus_elapsed(T0, timedelta(hours=48))


def test_a_pour_entered_late_counts_the_readings_since_it() -> None:
    # 52 °F at the pour, 41 °F two hours later, both read before the pour was entered.
    state, until = pour_after((-1, 52.0), (2, 41.0))
    assert state == "keep_off_cold"
    assert until == plus_elapsed(T0, timedelta(hours=96))


def test_a_reading_older_than_the_72_hours_before_the_pour_is_not_the_air_at_it() -> None:
    state, until = pour_after((-73, 30.0))
    assert state == "keep_off_normal"
    assert until == plus_elapsed(T0, timedelta(hours=48))
    state, _ = pour_after((-71, 30.0))
    assert state == "keep_off_cold"


def test_the_air_kept_is_the_forecast_window_and_the_reading_before_it() -> None:
    probe, clocks = Probe(), ColdWeatherClocks(CLYMAN, {"pole-1": "main-st"})
    hours = (-200, -100, -2, -1)
    clocks.feed([probe.air(plus_elapsed(T0, timedelta(hours=h)), 30.0 + i)
                 for i, h in enumerate(hours)])  # fmt: skip
    assert [t for _, t in clocks.subgrade["main-st"].air] == [31.0, 32.0, 33.0]
