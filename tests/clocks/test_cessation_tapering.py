"""A storm that tapers off: the gauge's end comes from its rate at the end, not its average.

Held-out Lincoln NE 2022-23 (bench/cessation_independent.py, 10 poles): an overnight
storm tipped every 5 min for hours, then every 25-35 min for its last three hours;
the storm's median spacing (5 min) said the last tip placed the end, and the
cessation came 13 min before the snow stopped. The detector now takes the wider
of the storm's median spacing and that of its last three.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sidewalk.analytics.clocks.cessation import DetectionParams, SnowfallChange, SnowfallDetector
from sidewalk.core.clock import to_ms
from sidewalk.core.contract import WeatherReading

T0 = datetime(2023, 1, 18, 15, 0, tzinfo=UTC)
DEVICE = "pole-1"


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def run(
    tips: set[int], minutes: int, params: DetectionParams | None = None
) -> list[SnowfallChange]:
    """A pole reading every 5 min, flat depth (snow too light or too dry to show), cold air,
    one 0.2 mm tip at each minute in ``tips``."""
    detector = SnowfallDetector(DEVICE, params or DetectionParams())
    changes: list[SnowfallChange] = []
    for seq, m in enumerate(range(0, minutes, 5), start=1):
        reading = WeatherReading(
            device=DEVICE,
            seq=seq,
            ts=to_ms(at(m)),
            snow_depth_mm=120.0,
            precip_mm=0.2 if m in tips else 0.0,
            air_temp_c=-1.0,
        )
        changes += detector.observe(reading)
        changes += detector.advance(reading.event_time)
    return changes + detector.advance(at(minutes) + timedelta(days=1))


# Four hours of tips every 5 min, then the storm tapers: 30, 35 and 25 min apart.
HEAVY = set(range(60, 300, 5))
TAPER = [325, 360, 385]
LAST = TAPER[-1]


def test_a_tapering_storm_ends_at_its_last_spacing_after_the_last_tip() -> None:
    changes = run(HEAVY | set(TAPER), 12 * 60)
    assert [c.kind for c in changes] == ["onset", "cessation"]
    ceased = changes[-1]
    # The last three spacings are 30, 35 and 25 min (median 30): the snow may have
    # gone on 30 min after the last tip, so the clock starts then, not at the tip.
    assert ceased.at == at(LAST + 30)
    assert ceased.basis == "gauge_latest"
    assert ceased.earliest == at(LAST)


def test_the_storms_median_alone_would_have_ended_it_at_the_last_tip() -> None:
    """The same stream with the recent spacings left out (the detector before)."""
    changes = run(HEAVY | set(TAPER), 12 * 60, DetectionParams(recent_spacings=0))
    assert changes[-1].at == at(LAST)
    assert changes[-1].basis == "gauge"


def test_a_steady_heavy_storm_still_ends_at_its_last_tip() -> None:
    """Tips within 10 min to the end place it: no extension, whatever the rule."""
    changes = run(HEAVY, 10 * 60)
    assert changes[-1].at == at(max(HEAVY))
    assert changes[-1].basis == "gauge"
    assert changes[-1].earliest == changes[-1].at


def test_a_lull_is_not_a_spacing() -> None:
    """A gap over the onset window (a lull inside one storm) does not widen the end."""
    tips = set(range(60, 180, 5)) | set(range(250, 300, 5))  # 70-min lull, then 5-min tips
    changes = run(tips, 10 * 60)
    assert [c.kind for c in changes] == ["onset", "cessation"]
    assert changes[-1].at == at(295)
    assert changes[-1].basis == "gauge"


def test_recent_spacings_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="recent_spacings"):
        DetectionParams(recent_spacings=-1)
