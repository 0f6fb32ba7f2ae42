"""Simulator self-check: the detector against the storms its own simulator was fed.

Circular (the pole snows over the labelled hours, truth = last label + 30 min), so it
guards against regressions, not accuracy; the accuracy against minute-resolution METAR
truth is tests/weather/test_metar.py and bench/cessation_independent.py.
"""

from __future__ import annotations

from pathlib import Path

from sidewalk.scenarios.accuracy import detect_episodes, score, storms_from_hours, with_new_snow
from sidewalk.scenarios.sensors import simulate_pole
from sidewalk.scenarios.weather import load_minneapolis, winter_bounds


def test_cessation_error_on_the_2017_18_record_stays_within_the_measured_band(
    minneapolis_csv: Path,
) -> None:
    hours = load_minneapolis(*winter_bounds("2017-18"), minneapolis_csv)
    sim = simulate_pole(hours, "pole-1", seed=0)
    result = score(
        with_new_snow(storms_from_hours(hours), sim.truth), detect_episodes(sim.readings, "pole-1")
    )
    assert len(result.storms) > 50
    assert result.missed == 0
    assert result.false_alarms <= 5
    # docs/cessation.md, simulator self-check: median 35 min, p90 80 min over six pole-winters
    # (later than the labels' end + 30 min: a light storm's end is the latest the gauge allows).
    assert result.abs_percentile(50) <= 35
    # 85 before the tapering rule (recent_spacings): a tapering storm now ends one
    # recent spacing after its last tip, later, the owner's side (87.5 on this pole).
    assert result.abs_percentile(90) <= 90
    assert result.abs_percentile(90, clock=True) <= 120
