"""The camera's stated one sigma of a width (``SnowMeasurement.width_uncertainty_mm``)
in § 370-10 A's decision and cure: the stated uncertainty is the root-sum-square of
the profile's tolerance and twice that sigma, and a walk is "not cleared" only when
short beyond it (the owner's favour). Without the field, everything is as before:
the tolerance alone, and the same snapshot bytes."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from sidewalk.alerts.notices import Addressee, FrontageInfo, render_clearing_violation
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import ClearingViolation, Event, NoticeRequired, Transition
from sidewalk.core.contract import AnyReading
from sidewalk.core.profile import load_profile
from tests.clocks.streams import DEVICE, Pole, storm

CHICAGO = ZoneInfo("America/Chicago")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
DEADLINE = ONSET + timedelta(hours=4 + 24)
PROFILE = load_profile()
REQUIRED_MM = PROFILE.snow_and_ice.clearing_min_width.length_mm
TOLERANCE_MM = PROFILE.snow_and_ice.width_tolerance.length_mm  # 2 in
SHORT_2_5_IN = REQUIRED_MM - 2.5 * 25.4  # beyond the tolerance, within a large sigma
SIGMA_MM = 35.0  # 2 sigma = 70 mm; stated hypot(50.8, 70) = 86.5 mm, 3.4 in


def engine() -> ClockEngine:
    return ClockEngine(PROFILE, [FrontageSpec("a", DEVICE)])


def readings(pole: Pole, width_mm: float, sigma_mm: float | None) -> list[AnyReading]:
    out = storm(pole, ONSET, hours=4)
    out.append(pole.camera(DEADLINE - timedelta(minutes=15), "a", width_mm,
                           width_uncertainty_mm=sigma_mm))  # fmt: skip
    out.append(pole.camera(DEADLINE + timedelta(minutes=5), "a", width_mm,
                           width_uncertainty_mm=sigma_mm))  # fmt: skip
    return sorted(out, key=lambda r: (r.ts, r.seq))


def decide(width_mm: float, sigma_mm: float | None) -> tuple[ClockEngine, Pole, list[Event]]:
    eng, pole = engine(), Pole()
    events = eng.feed(readings(pole, width_mm, sigma_mm))
    events += eng.advance(DEADLINE + timedelta(minutes=10))
    return eng, pole, events


def decided(events: list[Event]) -> list[str]:
    return [
        t.to_state
        for t in events
        if isinstance(t, Transition)
        and t.clock == "clearing"
        and t.from_state in ("clearing_period", "needs_review")
    ]


def test_a_walk_2_5_in_short_with_a_large_stated_sigma_gets_no_notice() -> None:
    _, _, events = decide(SHORT_2_5_IN, SIGMA_MM)
    assert decided(events) == ["complied"]
    assert not [e for e in events if isinstance(e, ClearingViolation | NoticeRequired)]
    [complied] = [t for t in events if isinstance(t, Transition) and t.to_state == "complied"]
    assert complied.detail["width_uncertainty_mm"] == pytest.approx(
        math.hypot(TOLERANCE_MM, 2 * SIGMA_MM)
    )


def test_the_same_walk_without_the_field_is_judged_by_the_tolerance_as_before() -> None:
    _, _, events = decide(SHORT_2_5_IN, None)
    assert decided(events) == ["violation"]
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    assert violation.width_uncertainty_mm == TOLERANCE_MM
    assert [e for e in events if isinstance(e, NoticeRequired)]


def test_a_small_stated_sigma_still_issues_and_the_letter_states_the_combined_uncertainty() -> None:
    # 2 sigma = 20 mm: hypot(50.8, 20) = 54.6 mm; 2.5 in (63.5 mm) short is beyond it.
    _, _, events = decide(SHORT_2_5_IN, 10.0)
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    stated = math.hypot(TOLERANCE_MM, 20.0)
    assert violation.width_uncertainty_mm == pytest.approx(stated)
    assert violation.measured_at is not None
    rendered = render_clearing_violation(
        {
            "measured_width_mm": violation.measured_width_mm,
            "width_uncertainty_mm": violation.width_uncertainty_mm,
            "required_width_mm": violation.required_width_mm,
            "measured_at": violation.measured_at.isoformat(),
            "cessation_at": violation.cessation_at.isoformat(),
            "deadline": violation.deadline.isoformat(),
            "measured_by": DEVICE, "measured_seq": violation.measured_seq,
        },
        number="CLY-2026-000001", issued_at=violation.decided_at,
        owner=Addressee("Jane Smith", ("101 Main St", "Clyman, WI 53016")),
        frontage=FrontageInfo("a", "101 Main St", "026-0915-0001"), profile=PROFILE,
    )  # fmt: skip
    text = " ".join(rendered.text.split())
    # 54.6 mm = 2.15 in: to the quarter inch, never stated smaller than it is.
    assert "3 ft 9 1/2 in (± 2 1/4 in)" in text, text
    assert f"± {stated:.1f} mm" in text
    assert "± 2 in" not in text


def test_a_case_cures_within_the_measurements_stated_uncertainty() -> None:
    eng, pole, events = decide(300.0, None)
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    later = DEADLINE + timedelta(hours=3)
    short = eng.observe(pole.camera(later, "a", SHORT_2_5_IN))  # no sigma: beyond 2 in
    assert not [t for t in short if isinstance(t, Transition) and t.to_state == "cured"]
    cured = eng.observe(pole.camera(later + timedelta(minutes=10), "a", SHORT_2_5_IN,
                                    width_uncertainty_mm=SIGMA_MM))  # fmt: skip
    [cure] = [t for t in cured if isinstance(t, Transition) and t.to_state == "cured"]
    assert cure.detail["violation"] == violation.key


def test_snapshots_without_the_field_are_unchanged_and_old_ones_restore() -> None:
    eng, pole = engine(), Pole()
    eng.feed(readings(pole, SHORT_2_5_IN, None))  # up to past the deadline, undecided
    old = eng.snapshot()
    assert b"width_uncertainty_mm" not in old  # byte for byte as engines before it wrote
    restored = engine()
    restored.restore(old)
    assert restored.snapshot() == old
    events = restored.advance(DEADLINE + timedelta(minutes=10))
    assert decided(events) == ["violation"]
    # With the field, the snapshot keeps it and the restored engine decides on it.
    eng, pole = engine(), Pole()
    eng.feed(readings(pole, SHORT_2_5_IN, SIGMA_MM))
    new = eng.snapshot()
    assert b'"width_uncertainty_mm":35.0' in new
    restored = engine()
    restored.restore(new)
    assert decided(restored.advance(DEADLINE + timedelta(minutes=10))) == ["complied"]
