"""The letter says how the end of the snowfall was found, and a range counts from its end.

The engine's cessation carries how it was determined (``basis``) and the earliest end
the evidence allows; the violation keeps both and the § 370-10 A letter says them in
words, so the 24 hours' start can be explained at a hearing.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import Addressee, FrontageInfo, render_clearing_violation
from sidewalk.alerts.wording import how_cessation_was_found
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import ClearingViolation
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0, flat
from tests.alerts.test_honest_measurements import ONSET, _engine_readings, violation_record
from tests.clocks.streams import DEVICE


def test_the_engines_violation_says_how_the_cessation_was_found(
    profile: Profile, cases: CaseStore
) -> None:
    engine = ClockEngine(profile, [FrontageSpec("main-101", DEVICE)])
    events = engine.feed(_engine_readings(300.0, "main-101"))
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    assert violation.cessation_basis in {"gauge", "gauge_latest", "depth", "last_signal"}
    assert violation.cessation_earliest is not None
    assert violation.cessation_earliest <= violation.cessation_at
    assert violation.cessation_at >= ONSET + timedelta(hours=4) - timedelta(minutes=10)
    issuer = NoticeIssuer(cases, profile)
    CaseRecorder(cases, profile, on_violation=issuer.clearing_violation).record(events)
    [notice] = cases.notices.list(frontage_id="main-101")
    record = cases.clocks.get_violation(notice.violation_id or 0)
    assert record.evidence["cessation_basis"] == violation.cessation_basis
    words = how_cessation_was_found(violation.cessation_basis, "x")
    assert words is not None
    assert words.split(" x ")[0] in flat(notice.body_text or "")


def _letter(profile: Profile, **extra: object) -> str:
    record = {**violation_record(600.0, 50.8), **extra}
    rendered = render_clearing_violation(
        record, number="CLY-2026-000001", issued_at=T0,
        owner=Addressee("Jane Smith", ("101 Main St", "Clyman, WI 53016")),
        frontage=FrontageInfo("main-101", "101 Main St", "026-0915-0001"), profile=profile,
    )  # fmt: skip
    return flat(rendered.text)


def test_a_range_the_gauge_allows_is_stated_and_counted_from_its_later_end(
    profile: Profile,
) -> None:
    ceased = T0 - timedelta(hours=24)
    text = _letter(profile, cessation_basis="gauge_latest",
                   cessation_earliest=(ceased - timedelta(minutes=40)).isoformat())  # fmt: skip
    assert "places the end of the snowfall between" in text
    assert "the 24 hours count from the later time" in text


@pytest.mark.parametrize(
    ("basis", "words"),
    [("gauge", "precipitation gauge"), ("depth", "snow depth"), ("camera", "camera last saw")],
)
def test_each_way_of_finding_the_end_is_said(profile: Profile, basis: str, words: str) -> None:
    assert words in _letter(profile, cessation_basis=basis)


def test_an_older_record_says_nothing_it_does_not_know(profile: Profile) -> None:
    text = _letter(profile)
    assert "precipitation gauge" not in text
    assert "()" not in text
