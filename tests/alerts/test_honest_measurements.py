"""Measurements stated honestly: a letter prints a width to the quarter inch with the
measurement's uncertainty, never a measured width that reaches the minimum it fell
short of; a camera's path is found too narrow only when it is short of § 370-10 A's
four feet by more than the stated uncertainty (``snow_and_ice.width_tolerance``, a
value the Code does not set, held for the Village's confirmation like any other);
defect letters give sizes to the sixteenth of an inch with their uncertainty."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from fractions import Fraction
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import (
    Addressee,
    BlockDefect,
    FrontageInfo,
    render_clearing_violation,
)
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.events import ClearingViolation, Event
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.cli.notices import notices_app
from sidewalk.core.contract import AnyReading
from sidewalk.core.profile import Profile, load_profile, parse_profile
from sidewalk.core.profiles import __file__ as profiles_init
from sidewalk.storage.cases import CaseStore
from sidewalk.system import open_cases
from tests.alerts.conftest import T0, flat, pdf_text
from tests.clocks.streams import DEVICE, Pole, storm

CHICAGO = ZoneInfo("America/Chicago")
ONSET = datetime(2026, 12, 10, 6, 0, tzinfo=CHICAGO)
FOUR_FEET_MM = 4 * 304.8
CLYMAN_TOML = Path(profiles_init).with_name("clyman.toml").read_text(encoding="utf-8")
# The letter's sentence, as the owner reads it (whitespace flattened).
SAID = re.compile(
    r"narrowest cleared path along your sidewalk at (?P<width>[\d /ftin]+?) "
    r"\(± (?P<plus>[\d /]+) in\)\. The Code requires at least (?P<required>\w+) feet"
)
NUMBERS = {"four": 4, "4": 4}


def inches_of(text: str) -> Fraction:
    """``3 ft 11 3/4 in`` → 47.75; ``7/8 in`` → 0.875 (read as a person reads it)."""
    total = Fraction(0)
    feet = re.search(r"(\d+) ft", text)
    if feet:
        total += 12 * int(feet.group(1))
        text = text[feet.end() :]
    for part in text.replace("in", "").split():
        total += Fraction(part)
    return total


def violation_record(width_mm: float, uncertainty_mm: float | None) -> dict[str, object]:
    return {
        "measured_width_mm": width_mm, "width_uncertainty_mm": uncertainty_mm,
        "required_width_mm": FOUR_FEET_MM, "measured_at": T0.isoformat(),
        "cessation_at": (T0 - timedelta(hours=24)).isoformat(), "deadline": T0.isoformat(),
        "measured_by": DEVICE, "measured_seq": 7, "snow_depth_peak_mm": 90.0,
    }  # fmt: skip


@pytest.mark.parametrize("width_mm", [1206.5, 1210.0, 1215.9, 1218.0, 1219.1])
def test_a_width_just_under_four_feet_never_reads_as_four_feet(
    width_mm: float, profile: Profile
) -> None:
    rendered = render_clearing_violation(
        violation_record(width_mm, 50.8), number="CLY-2026-000001", issued_at=T0,
        owner=Addressee("Jane Smith", ("101 Main St", "Clyman, WI 53016")),
        frontage=FrontageInfo("main-101", "101 Main St", "026-0915-0001"), profile=profile,
    )  # fmt: skip
    letter, record = (flat(p) for p in rendered.text.split("\f"))
    said = SAID.search(letter)
    assert said is not None, letter
    assert inches_of(said["width"]) < 12 * NUMBERS[said["required"]]
    assert said["plus"] == "2"  # the camera's stated uncertainty, 50.8 mm
    assert abs(inches_of(said["width"]) - Fraction(width_mm) / Fraction("25.4")) <= Fraction(1, 4)
    # The evidence record keeps the value as measured and its uncertainty in mm.
    assert f"({width_mm:.1f} mm ± 50.8 mm)" in record
    assert "4 ft 0 in (1219.2 mm)" in record
    # A record decided within the uncertainty says so: never "short by more than" it.
    assert "narrower than that by less than the camera's measuring uncertainty" in letter
    assert "This path measured short by less than that" in record


def _engine_readings(width_mm: float, frontage: str) -> list[AnyReading]:
    pole = Pole()
    readings = storm(pole, ONSET, hours=4)
    readings.append(pole.camera(ONSET + timedelta(hours=27), frontage, width_mm))
    readings.append(pole.weather(ONSET + timedelta(hours=30), 80.0))
    return sorted(readings, key=lambda r: (r.ts, r.seq))


def _events(profile: Profile, width_mm: float, frontage: str = "main-101") -> list[Event]:
    engine = ClockEngine(profile, [FrontageSpec(frontage, DEVICE)])
    return engine.feed(_engine_readings(width_mm, frontage))


def _decide(
    profile: Profile, cases: CaseStore, width_mm: float, frontage: str = "main-101"
) -> list[Event]:
    """The engine's decision, recorded and its notice issued as analytics does."""
    issuer = NoticeIssuer(cases, profile)
    events = _events(profile, width_mm, frontage)
    CaseRecorder(cases, profile, on_violation=issuer.clearing_violation).record(events)
    return events


def test_the_camera_finds_a_path_too_narrow_only_beyond_its_stated_uncertainty(
    profile: Profile, cases: CaseStore
) -> None:
    tolerance = profile.snow_and_ice.width_tolerance
    assert tolerance.unconfirmed
    assert tolerance.citation is None
    assert tolerance.note
    within = FOUR_FEET_MM - tolerance.length_mm + 1.0  # e.g. 1169.4 mm: within 2 in
    events = _decide(profile, cases, within)
    assert not [e for e in events if isinstance(e, ClearingViolation)]
    assert cases.notices.list(frontage_id="main-101") == []
    cases.registry.upsert_frontage(
        "main-103", site="clyman", parcel_number="026-0915-0003", street_address="103 Main St",
        length_ft=66.0, zone="residential", owner_id="owner-smith",
    )  # fmt: skip
    beyond = FOUR_FEET_MM - tolerance.length_mm - 5.0  # 2 in and 5 mm short
    events = _decide(profile, cases, beyond, "main-103")
    [violation] = [e for e in events if isinstance(e, ClearingViolation)]
    assert violation.width_uncertainty_mm == pytest.approx(tolerance.length_mm)
    assert violation.citation == "§ 370-10 A (inferred)"  # one section, cited once
    [notice] = cases.notices.list(frontage_id="main-103")
    record = cases.clocks.get_violation(notice.violation_id or 0)
    assert record.evidence["width_uncertainty_mm"] == pytest.approx(tolerance.length_mm)
    assert "snow_and_ice.width_tolerance" in [r.name for r in notice.rules]
    text = flat(pdf_text(notice_pdf(notice, profile)))
    said = SAID.search(text)
    assert said is not None, text
    assert said["plus"] == "2"
    assert inches_of(said["width"]) < 48
    assert "narrower than that by more than the camera's measuring uncertainty of 2 in" in text
    assert "Width tolerance, 2 inches: confirmed by" in text  # the Village's, in the record
    assert "(inferred)" not in text


def test_a_profile_sets_its_own_tolerance() -> None:
    table = "[snow_and_ice.width_tolerance]\nvalue = "
    assert f"{table}2\n" in CLYMAN_TOML
    strict = parse_profile(CLYMAN_TOML.replace(f"{table}2\n", f"{table}0\n"))
    assert strict.snow_and_ice.width_tolerance.length_mm == 0
    events = _events(strict, FOUR_FEET_MM - 1.0)
    assert len([e for e in events if isinstance(e, ClearingViolation)]) == 1
    assert not [
        e for e in _events(load_profile(), FOUR_FEET_MM - 1.0) if isinstance(e, ClearingViolation)
    ]


def test_a_notice_relying_on_the_unconfirmed_tolerance_is_held(
    tmp_path: Path, profile: Profile
) -> None:
    store = open_cases(f"sqlite:///{tmp_path / 'fresh.sqlite3'}", profile)
    store.registry.upsert_owner("o", "Jane Smith", ["101 Main St", "Clyman, WI 53016"])
    store.registry.upsert_frontage(
        "main-101", site="clyman", parcel_number="026-0915-0001", street_address="101 Main St",
        length_ft=66.0, zone="residential", owner_id="o",
    )  # fmt: skip
    _decide(profile, store, 600.0)
    [notice] = store.notices.list(frontage_id="main-101")
    assert notice.status == "held"
    [held] = [a for a in store.audit.list(f"notice:{notice.number}") if a.action == "notice.held"]
    assert "snow_and_ice.width_tolerance" in held.detail["waiting_for"]
    store.close()


def test_defect_letters_give_sizes_to_the_sixteenth_with_their_uncertainty(
    issuer: NoticeIssuer,
) -> None:
    limit_mm = issuer.profile.sidewalk_condition.vertical_differential.length_mm  # 3/4 in
    defects = [
        BlockDefect(2, "vertical_differential", limit_mm + 0.02, 0.8, "joint"),  # just at it
        BlockDefect(5, "vertical_differential", 23.0, 1.2, "crack"),
    ]
    notice = issuer.repair_notice(
        "survey-h", "main-101", T0, surveyed_at=T0, total_blocks=10, defects=defects
    )
    text = flat(pdf_text(notice_pdf(notice, issuer.profile)))
    sizes = re.findall(
        r"Block (\d): one edge higher than the next by ([\d/ ]+) in \(± ([\d/]+) in\)", text
    )
    assert sizes == [("2", "3/4", "1/16"), ("5", "7/8", "1/16")]
    # Never printed under the limit it was found to reach.
    assert all(inches_of(size) >= Fraction(3, 4) for _, size, _ in sizes)
    assert "3/4 in ± 1/16 in (19.1 mm ± 0.8 mm)" in text
    assert "0.91" not in text  # no decimal inches beside the Code's fractions


def test_the_printed_letter_from_the_command_line_states_the_uncertainty(
    profile: Profile, cases: CaseStore, tmp_path: Path
) -> None:
    _decide(profile, cases, 1100.0)
    [notice] = cases.notices.list(frontage_id="main-101")
    config = tmp_path / "sidewalk.toml"
    config.write_text(f'[cases]\ndatabase_url = "{cases.url}"\n', encoding="utf-8")
    c = ["--config", str(config)]
    runner = CliRunner()
    result = runner.invoke(notices_app, ["queue", notice.number, "--channel", "print", *c])
    assert result.exit_code == 0, result.output
    result = runner.invoke(notices_app, ["print-batch", "--out", str(tmp_path / "p"), *c])
    assert result.exit_code == 0, result.output
    [batch] = (tmp_path / "p").glob("print-batch-*.pdf")
    text = flat(pdf_text(batch.read_bytes()))
    said = SAID.search(text)
    assert said is not None, text
    assert (said["width"], said["plus"], said["required"]) == ("3 ft 7 1/4 in", "2", "4")
    assert "3 ft 7 1/4 in ± 2 in (1100.0 mm ± 50.8 mm)" in text


@pytest.mark.parametrize(
    ("width_mm", "uncertainty_mm", "exceeded", "within"),
    [
        # 73.8 mm is 2.91 in: "more than 3 in" would be false for a walk 74-76 mm short.
        (FOUR_FEET_MM - 75.0, 73.8, "2 3/4 in", "3 in"),
        (FOUR_FEET_MM - 60.0, 50.8, "2 in", "2 in"),  # exactly 2 in: one figure
    ],
)
def test_a_letter_says_short_by_more_than_only_a_figure_the_shortfall_exceeds(
    width_mm: float, uncertainty_mm: float, exceeded: str, within: str, profile: Profile
) -> None:
    rendered = render_clearing_violation(
        violation_record(width_mm, uncertainty_mm), number="CLY-2026-000001", issued_at=T0,
        owner=Addressee("Jane Smith", ("101 Main St", "Clyman, WI 53016")),
        frontage=FrontageInfo("main-101", "101 Main St", "026-0915-0001"), profile=profile,
    )  # fmt: skip
    letter, record = (flat(p) for p in rendered.text.split("\f"))
    assert f"by more than the camera's measuring uncertainty of {exceeded}" in letter
    shortfall_in = (FOUR_FEET_MM - width_mm) / 25.4
    assert shortfall_in > inches_of(exceeded.removesuffix(" in"))
    # Where it says the camera measures to within a figure, the figure is not less.
    assert f"narrowest cleared path to within {within}" in record
    assert inches_of(within.removesuffix(" in")) * 25.4 >= uncertainty_mm
