"""A letter, not a log.

Every notice kind the system issues is rendered to PDF, its text extracted
(pypdf) and read as the owner would: no internal vocabulary (state names,
field names, ``device#seq`` references, "unconfirmed", "inferred"); the
letter fits its first page, with the letterhead, the officer's signature and
whom to call; the address sits in the #10 window; an owner's name with
diacritics prints intact; the evidence goes on a page of its own.
"""

from __future__ import annotations

import io
import re
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from pypdf import PdfReader

from sidewalk.alerts.accounts import bill_abatement
from sidewalk.alerts.billing import AbatementWork, Material
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import AdvisoryFinding, BlockDefect, Evidence, Photo, Reading
from sidewalk.alerts.pdf import ADDRESS_H, ADDRESS_W, ADDRESS_X, ADDRESS_Y, INCH, notice_pdf
from sidewalk.analytics.clocks.states import STATE_ENUMS
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore, NoticeRecord
from tests.alerts.conftest import T0, flat

DIACRITICS = "Zoë Łukasiewicz-Ørsted"
ADDRESS = ["Søndergade 4, Apt 2", "Juneau, WI 53039"]
# Every clock state the engine names with more than one word (the regex below catches
# any snake_case word too; this list says which ones matter).
STATE_NAMES = sorted({s.value for enum in STATE_ENUMS for s in enum if "_" in s.value})
# Plain English words that are also state names are checked as the engine writes them
# in a log: "idle -> snowing", "violation:…", and every snake_case name above.
INTERNAL = [
    (re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b"), "a field or state name"),
    (re.compile(r"\S#\d+"), "a device#seq reading reference"),
    (re.compile(r"unconfirmed", re.I), "an unconfirmed mark"),
    (re.compile(r"inferred", re.I), "an inferred mark"),
    (re.compile(r"\b(idle|snowing|complied|violation)\s*(->|→)"), "a clock transition"),
    (re.compile(r"\bviolation:"), "a violation key"),
    (re.compile(r"\b(idle|snowing)\b"), "a clock state"),
    (re.compile(r"Courier"), "a typewriter font"),
]


def pages(pdf: bytes) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages]


def internal_words(text: str) -> list[str]:
    found = [f"{why}: {m.group(0)!r}" for rx, why in INTERNAL for m in rx.finditer(text)]
    found += [f"a state name: {s!r}" for s in STATE_NAMES if re.search(rf"\b{s}\b", text)]
    return found


def window_lines(pdf: bytes) -> list[tuple[float, float, str]]:
    """(x mm from the left, y mm from the top, text) of every text run on page 1."""
    page = PdfReader(io.BytesIO(pdf)).pages[0]
    height = float(page.mediabox.height)
    runs: list[tuple[float, float, str]] = []

    def visit(text: str, cm: list[float], tm: list[float], *_: object) -> None:
        if text.strip():
            x, y = tm[4] * cm[0] + cm[4], tm[5] * cm[3] + cm[5]
            runs.append((x / 72 * INCH, (height - y) / 72 * INCH, text.strip()))

    page.extract_text(visitor_text=visit)
    return runs


def all_kinds(
    stormed: tuple[AnalyticsRunner, CaseStore], issuer: NoticeIssuer
) -> list[NoticeRecord]:
    """One notice of every kind the system issues, each to an owner named with diacritics."""
    runner, storm = stormed
    for owner in {f.owner_id for f in storm.registry.list_frontages()}:
        storm.registry.upsert_owner(owner, DIACRITICS, ADDRESS)
    issuer.cases.registry.upsert_owner("owner-smith", DIACRITICS, ADDRESS)
    for frontage, then in (("main-st-105", "owner_unavailable"), ("main-st-103", None)):
        [first] = storm.notices.list(frontage_id=frontage)
        key = storm.clocks.get_violation(first.violation_id or 0).key
        storm.actions.record("confirm_hazard", key, first.issued_at, "Officer Quinn")
        if then:
            storm.actions.record(then, key, first.issued_at + timedelta(hours=1), "Officer Quinn")
    runner.tick()
    storm_notices = storm.notices.list()
    abatement = issuer.cases.bills.order_abatement("v1/abatement", "main-101", "notice_expired", T0)
    work = AbatementWork(
        Decimal("2.5"), Decimal("0.75"), (Material("salt, 3 bags", Decimal("21.90")),)
    )
    billed = bill_abatement(
        issuer, abatement.id, work, T0 + timedelta(hours=3), who="Clerk Lee",
        completed_at=T0 + timedelta(hours=2),
    )  # fmt: skip
    photo = Photo("ab" * 32, T0, "pole-1", "sandwich board at the curb")
    reading = Reading(T0, "pole-1", 812, "cleared_width_mm", "701")
    finding = AdvisoryFinding(
        "street_openings.frozen_ground_window", "§ 370-7 A (inferred)", "violation",
        "opening requested inside the frozen-ground window", T0,
    )  # fmt: skip
    pour = AdvisoryFinding(
        "cold_weather.frozen_subgrade_at_or_below", "§ 370-5 (sidewalk construction) (9)",
        "warning", "subgrade probe at or below freezing", T0, unconfirmed=True,
        notes=("the code does not define frozen subgrade",),
    )  # fmt: skip
    mine = [
        billed.notice,
        issuer.repair_notice(
            "s-1", "main-101", T0, surveyed_at=T0 - timedelta(days=1), total_blocks=10,
            defects=[BlockDefect(3, "vertical_differential", 23.0, 1.2, "crack")],
        ),
        issuer.repair_notice(
            "s-2", "main-101", T0, surveyed_at=T0, total_blocks=10,
            defects=[BlockDefect(b, "surface_deterioration", 15.0, 1.0) for b in range(1, 9)],
        ),
        issuer.obstruction_notice(
            "o-1", "main-101", T0 + timedelta(hours=1), area="sidewalk", observed_at=T0,
            description="a sandwich board", clear_width_mm=701.0,
            evidence=Evidence(photos=(photo,), readings=(reading,)),
        ),
        issuer.obstruction_notice(
            "o-2", "main-101", T0, area="street", observed_at=T0, description="a dumpster"
        ),
        issuer.advisory(
            "frozen_ground_advisory", "exc-7", "main-101", T0, subject="Excavation at 101 Main St",
            findings=[finding], deadlines=[("apply for permit by", T0 + timedelta(days=1))],
        ),
        issuer.advisory(
            "permit_advisory", "pour-1", "main-101", T0, subject="Sidewalk pour", findings=[pour]
        ),
    ]  # fmt: skip
    return storm_notices + mine


EVERY_KIND = {
    "clearing_violation", "hazard_notice", "hazard_abatement_notice", "abatement_bill",
    "repair_notice", "replacement_notice", "obstruction_notice", "frozen_ground_advisory",
    "permit_advisory",
}  # fmt: skip


def test_every_notice_kind_reads_as_a_letter_not_a_log(
    stormed: tuple[AnalyticsRunner, CaseStore], issuer: NoticeIssuer, profile: Profile
) -> None:
    notices = all_kinds(stormed, issuer)
    assert {n.kind for n in notices} == EVERY_KIND
    named = 0
    for notice in notices:
        assert notice.status == "rendered", (notice.kind, notice.status)
        pdf = notice_pdf(notice, profile)
        text = pages(pdf)
        letter, record = flat(text[0]), flat(" ".join(text[1:]))
        where = f"{notice.kind} {notice.number}"
        # No internal vocabulary anywhere on paper, the evidence record included.
        assert internal_words(letter) == [], where
        assert internal_words(record) == [], where
        # The letter is one page: letterhead, officer, signature line, whom to call.
        assert "VILLAGE OF CLYMAN" in letter, where
        assert "Sincerely," in letter, where
        assert "Dana Krüger" in letter, where
        assert "Clerk-Treasurer, Village of Clyman" in letter, where
        assert "(920) 555-0142" in letter, where
        assert "clerk@clyman.example" in letter, where
        assert "Office hours: Monday to Friday, 8:00 AM to 4:00 PM" in letter, where
        assert f"Notice No. {notice.number}" in letter, where
        # Each part of the letter is a paragraph of its own (the PDF bolds its lead).
        body = notice.body_text or ""
        for lead in ("What we found.", "What to do.", "What happens if you do not.", "Questions?"):
            assert lead not in body or f"\n\n{lead}" in body, (where, lead)
        # The evidence is on a page of its own.
        assert text[1].lstrip().startswith("EVIDENCE RECORD"), where
        assert "EVIDENCE RECORD" not in letter, where
        if notice.kind in ("frozen_ground_advisory", "permit_advisory"):
            assert "INTERNAL · DO NOT MAIL" in letter, where
            assert DIACRITICS not in letter, where
            continue
        # The owner's name prints as written, in the window and after "Dear".
        name, address = notice.owner_name, list(notice.owner_address_lines)
        named += name == DIACRITICS
        assert f"Dear {name}:" in letter, where
        runs = window_lines(pdf)
        window = [(x, y, t) for x, y, t in runs if ADDRESS_Y - 5 <= y <= ADDRESS_Y + ADDRESS_H + 5]
        # The window shows the name and address, once, and nothing else.
        assert [t for _x, _y, t in window] == [name, *address], (where, window)
        for x, y, t in window:
            assert ADDRESS_X - 0.5 <= x <= ADDRESS_X + ADDRESS_W, (where, t, x)
            assert ADDRESS_Y <= y <= ADDRESS_Y + ADDRESS_H, (where, t, y)
    # Issued after the owners were renamed: the hazard notices, the bill, the survey
    # and obstruction notices, all addressed to Zoë Łukasiewicz-Ørsted.
    assert named >= 6


def test_the_letter_says_what_was_found_what_to_do_by_when_and_what_happens(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    _runner, cases = stormed
    [notice] = cases.notices.list(frontage_id="main-st-103")
    letter, record = (flat(p) for p in pages(notice_pdf(notice, profile)))
    # Sensors recorded the cessation: not stated as a fact of nature.
    assert "The Village's sensors recorded that snow stopped accumulating" in letter
    assert "had to be cleared by Friday, December 11, 2026 at 5:00 PM CST" in letter
    assert "narrowest cleared path along your sidewalk at 2 ft 0 in (± 2 in)" in letter
    assert "within 24 hours after this notice is delivered to you" in letter
    # Citations plainly; consequences only as the ordinance gives them.
    assert "Village Code § 370-10 A requires" in letter
    assert "charge the cost to the owner (Village Code § 370-10 G)" in letter
    assert "payable within 10 calendar days after you receive it" in letter
    assert "tax roll as a special tax" in letter
    assert "§ 66.0907(5), Wis. Stats." in letter
    assert "separate offense (Village Code § 370-10 E)" in letter
    assert "penalty the Village Code provides (§ 1-3, applied by Village Code § 370-10 H)" in letter
    # The evidence record: measurement, reading reference in words, the clock's steps.
    assert "2 ft 0 in ± 2 in (609.6 mm ± 50.8 mm)" in record
    assert "4 ft 0 in (1219.2 mm)" in record
    assert "reading no. 891" in record
    assert (
        "the owner's time to clear running, then not cleared by the deadline"
        " (the deadline passed)" in record
    )
    assert "confirmed by Sidewalk Watch demo setup" in record
    assert (
        'Village Code § 370-10 A: "Sidewalks are to be kept clear of snow and ice to a minimum '
        'of four feet in width."'
    ) in record


def test_a_photo_at_the_deadline_prints_on_the_letter_and_it_still_fits(
    issuer: NoticeIssuer,
) -> None:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (640, 480), (200, 200, 210)).save(buffer, format="JPEG")
    notice = issuer.obstruction_notice(
        "o-photo", "main-101", T0, area="sidewalk", observed_at=T0, description="a bench",
        clear_width_mm=600.0, evidence=Evidence(photos=(Photo("cd" * 32, T0, "pole-1"),)),
    )  # fmt: skip
    from sidewalk.alerts.pdf import PhotoBytes

    pdf = notice_pdf(notice, issuer.profile, [PhotoBytes("cd" * 32, buffer.getvalue(), "")])
    reader = PdfReader(io.BytesIO(pdf))
    assert len(reader.pages[0].images) == 2  # the photograph and the signature
    assert "Sincerely," in reader.pages[0].extract_text()
    assert reader.pages[1].extract_text().lstrip().startswith("EVIDENCE RECORD")


@pytest.mark.parametrize("defects", [3, 40])
def test_a_long_survey_letter_still_fits_one_page(issuer: NoticeIssuer, defects: int) -> None:
    notice = issuer.repair_notice(
        f"s-many-{defects}", "main-101", T0, surveyed_at=T0, total_blocks=200,
        defects=[BlockDefect(b, "horizontal_gap", 40.0, 1.0) for b in range(1, defects + 1)],
    )  # fmt: skip
    text = pages(notice_pdf(notice, issuer.profile))
    assert "Sincerely," in text[0]
    assert "Dana Krüger" in text[0]
    assert text[1].lstrip().startswith("EVIDENCE RECORD")
    assert f"block {defects}:" in flat(" ".join(text[1:]))


def test_village_letterhead_settings_are_validated_and_name_the_field(tmp_path: Path) -> None:
    from sidewalk.core.config import ConfigError, load_settings

    good = {
        "office": '"Village Hall"',
        "address_lines": '["1 Municipal Pl", "Clyman, WI 53016"]',
        "telephone": '"(920) 555-0142"',
        "email": '"clerk@clyman.example"',
        "office_hours": '"Monday to Friday, 8:00 AM to 4:00 PM"',
        "officer_name": '"Dana Krüger"',
        "officer_title": '"Clerk-Treasurer"',
    }

    def write(**changed: str) -> Path:
        path = tmp_path / "sidewalk.toml"
        lines = [f"{k} = {v}" for k, v in {**good, **changed}.items()]
        path.write_text("[village]\n" + "\n".join(lines) + "\n", encoding="utf-8")
        return path

    settings = load_settings(write())
    assert settings.village is not None
    assert settings.village.officer_name == "Dana Krüger"
    for field, value in (
        ("telephone", '"call us"'),
        ("email", '"clerk at clyman"'),
        ("signature_image", f'"{tmp_path / "missing.png"}"'),
        ("signature_image", '"signature.gif"'),
    ):
        with pytest.raises(ConfigError, match=rf"village\.{field}"):
            load_settings(write(**{field: value}))
    path = write()
    path.write_text(path.read_text().replace('officer_name = "Dana Krüger"\n', ""))
    with pytest.raises(ConfigError, match=r"village\.officer_name"):
        load_settings(path)
