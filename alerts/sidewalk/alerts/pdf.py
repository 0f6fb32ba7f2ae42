"""Notices as PDF (fpdf2, pure Python): the letter, its evidence record, the print batch,
and the table documents (the register, the tax roll).

A notice's PDF is a function of its stored record: the Village's letterhead
and issuing officer as stored with the notice (``detail["letterhead"]``), the
owner's address placed for a #10 window envelope, the letter (the stored
text up to its form feed) on one page with the photograph at the deadline
and the officer's signature, then the evidence record (the rest of the
stored text) on a page of its own, then any further photographs. The
creation date is the issue time, so the same record always gives the same
bytes (the evidence package depends on it).

Letters are set in DejaVu Sans, a proportional TrueType font with full
Unicode coverage (an owner named Zoë Łukasiewicz-Ørsted prints as named),
from Debian's ``fonts-dejavu-core`` (``scripts/services`` installs it).
``notice_pdf`` is the one renderer: the command line, e-mail delivery, the
evidence package and the dashboard's print page all call it (or ``batch_pdf``,
the same letters in one file).
"""

from __future__ import annotations

import copy
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Final

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from sidewalk.alerts.letterhead import Letterhead, letterhead_of
from sidewalk.alerts.notices import INTERNAL_KINDS
from sidewalk.alerts.wording import local_day
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import NoticeRecord

# US letter, inches → mm. The address sits where a #10 window envelope shows
# it when the letter is tri-folded: 1 in from the left, 2 in from the top, in
# a block at most 3.75 in wide and 1 in tall (the window is 4 1/2 × 1 1/8 in).
INCH: Final = 25.4
MARGIN: Final = 0.75 * INCH
ADDRESS_X: Final = 1.0 * INCH
ADDRESS_Y: Final = 2.0 * INCH
ADDRESS_W: Final = 3.75 * INCH
ADDRESS_H: Final = 1.0 * INCH
ADDRESS_LINES: Final = 5
RETURN_Y: Final = 0.5 * INCH
BODY_Y: Final = 3.3 * INCH
BODY_FONT_PT: Final = 10.0
# Tried in order until the letter fits its page (a long survey list needs less).
LETTER_SIZES: Final = (10.0, 9.5, 9.0, 8.5, 8.0, 7.5)
PHOTO_H: Final = 38.0
SIGNATURE_H: Final = 12.0
FAMILY: Final = "DejaVu"
_FONT_FILES: Final = {"": "DejaVuSans.ttf", "B": "DejaVuSans-Bold.ttf"}
_LEADS: Final = re.compile(
    r"^(What we found\.|What to do\.|What happens if you do not\.|What happens (?:now|next)\."
    r"|Questions\?)\s"
)


class FontMissingError(RuntimeError):
    """DejaVu Sans is not installed: letters cannot be set."""


def _font_dirs() -> list[Path]:
    return [Path("/usr/share/fonts/truetype/dejavu")]


@cache
def font_files() -> dict[str, Path]:
    """The DejaVu Sans files letters are set in (raises ``FontMissingError``)."""
    for folder in _font_dirs():
        found = {style: folder / name for style, name in _FONT_FILES.items()}
        if all(p.is_file() for p in found.values()):
            return found
    raise FontMissingError(
        "letters need the DejaVu Sans font: install Debian's fonts-dejavu-core "
        "(scripts/services does)"
    )


@cache
def _parsed_fonts() -> dict[str, object]:
    """The fonts parsed once per process, for trial layouts only (never written)."""
    scratch = FPDF()
    for style, path in font_files().items():
        scratch.add_font(FAMILY, style=style, fname=str(path))
    return dict(scratch.fonts)


def _add_fonts(pdf: FPDF) -> None:
    """Fonts parsed for this document: writing it subsets them in place."""
    for style, path in font_files().items():
        pdf.add_font(FAMILY, style=style, fname=str(path))


def _share_fonts(pdf: FPDF) -> None:
    """For a trial layout that is never written: copies sharing the parsed fonts
    (fpdf2's copy shares the parsed tables, which only writing would change)."""
    for key, font in _parsed_fonts().items():
        # Ignored: the cache types fpdf2's font objects as ``object``.
        pdf.fonts[key] = copy.deepcopy(font)  # type: ignore[assignment]


@dataclass(frozen=True)
class PhotoBytes:
    """An evidence photograph: the first prints on the letter, all in the evidence record."""

    sha256: str
    jpeg: bytes
    caption: str


class _Letters(FPDF):
    """Letter pages whose footer names the notice on the page and its page within it."""

    def __init__(self, *, trial: bool = False) -> None:
        super().__init__(unit="mm", format="letter")
        if trial:
            _share_fonts(self)  # laid out to measure, never written
        else:
            _add_fonts(self)
        self.set_auto_page_break(auto=True, margin=MARGIN)
        self.set_margins(MARGIN, MARGIN, MARGIN)
        self.footer_text = ""
        self.first_page = 1
        # fpdf2 draws a page's footer when the *next* page starts, so each page
        # remembers its own footer when it begins.
        self._footers: dict[int, tuple[str, int]] = {}

    def header(self) -> None:
        self._footers[self.page_no()] = (self.footer_text, self.first_page)

    def footer(self) -> None:
        text, first = self._footers.get(self.page_no(), ("", 1))
        if not text:
            return
        self.set_y(-0.55 * INCH)
        self.set_font(FAMILY, size=7)
        self.cell(0, 4, f"{text} · page {self.page_no() - first + 1}", align="C")


def _blocks(text: str) -> list[list[str]]:
    """Paragraph blocks (runs of non-blank lines) of a stored letter."""
    blocks: list[list[str]] = [[]]
    for line in text.strip("\n").split("\n"):
        if line.strip():
            blocks[-1].append(line.rstrip())
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _paragraph(pdf: FPDF, text: str, size: float, *, indent: float = 0.0) -> None:
    """One paragraph, a bold lead phrase ("What to do.") kept bold."""
    height = size * 0.47
    pdf.set_x(MARGIN + indent)
    lead = _LEADS.match(text)
    if lead:
        pdf.set_font(FAMILY, style="B", size=size)
        pdf.write(height, lead.group(0))
        text = text[lead.end() :]
        pdf.set_font(FAMILY, size=size)
        pdf.write(height, text)
        pdf.ln(height)
    else:
        pdf.set_font(FAMILY, size=size)
        pdf.multi_cell(
            pdf.epw - indent, height, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT
        )


def _image(pdf: FPDF, data: bytes, height: float, *, x: float = MARGIN) -> None:
    pdf.image(io.BytesIO(data), x=x, y=pdf.get_y(), h=height)
    pdf.set_y(pdf.get_y() + height)


def _letter_body(
    pdf: FPDF,
    text: str,
    letterhead: Letterhead,
    size: float,
    photo: PhotoBytes | None,
) -> None:
    """The letter from its title to the officer's name, at ``size`` points."""
    blocks = _blocks(text)
    gap = size * 0.3
    height = size * 0.47
    signed = False
    for number, block in enumerate(blocks):
        if number == 0:  # the title, then the property line
            pdf.set_font(FAMILY, style="B", size=size + 1.5)
            pdf.multi_cell(0, (size + 1.5) * 0.5, block[0], new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.set_font(FAMILY, style="B", size=size)
            for line in block[1:]:
                pdf.multi_cell(0, height, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(gap)
            continue
        if block[0].strip() == "Sincerely,":
            _paragraph(pdf, "Sincerely,", size)
            if letterhead.signature:
                _image(pdf, letterhead.signature, SIGNATURE_H)
            else:
                pdf.ln(SIGNATURE_H * 0.6)
            signed = True
            continue
        if signed:  # the officer's name and title, a line each
            for i, line in enumerate(block):
                pdf.set_font(FAMILY, style="B" if i == 0 else "", size=size)
                pdf.multi_cell(0, height, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            continue
        _block(pdf, block, size, photo)
        pdf.ln(gap)


def _block(pdf: FPDF, block: list[str], size: float, photo: PhotoBytes | None) -> None:
    """A paragraph block: running lines joined; list lines, the photograph and the
    officer's delivery line each on their own."""
    running: list[str] = []
    for line in block:
        if not line.startswith(("  ", "- ", "Photograph:", "Delivered on")):
            running.append(line.strip())
            continue
        if running:
            _paragraph(pdf, " ".join(running), size)
            running.clear()
        if not line.startswith("Photograph:"):
            _paragraph(pdf, line.strip(), size, indent=6.0 if line[0] in " -" else 0.0)
        elif photo is None:
            _paragraph(pdf, f"{line} It is kept with the Village's record of this notice.", size)
        else:
            _paragraph(pdf, line, size)
            pdf.ln(1)
            _image(pdf, photo.jpeg, PHOTO_H, x=MARGIN + 6.0)
    if running:
        _paragraph(pdf, " ".join(running), size)


def _letterhead(pdf: FPDF, letterhead: Letterhead, notice: NoticeRecord, profile: Profile) -> None:
    """The Village's name, office and contacts top left; notice number and date top right."""
    pdf.set_xy(MARGIN, RETURN_Y)
    pdf.set_font(FAMILY, style="B", size=13)
    pdf.cell(110, 6, letterhead.village.upper(), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font(FAMILY, size=8)
    lines = [letterhead.office, *letterhead.address_lines]
    contacts = [x for x in (letterhead.telephone and f"Telephone {letterhead.telephone}",
                            letterhead.email) if x]  # fmt: skip
    if contacts:
        lines.append(" · ".join(contacts))
    for line in lines:
        pdf.cell(110, 3.6, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    right = pdf.w - MARGIN - 70
    pdf.set_xy(right, RETURN_Y)
    pdf.set_font(FAMILY, style="B", size=10)
    pdf.cell(70, 5, f"Notice No. {notice.number}", align="R")
    pdf.set_xy(right, RETURN_Y + 5.5)
    pdf.set_font(FAMILY, size=9)
    pdf.cell(70, 4, local_day(notice.issued_at.astimezone(profile.zone).date()), align="R")


def _window_address(pdf: FPDF, notice: NoticeRecord, profile: Profile) -> None:
    if notice.kind in INTERNAL_KINDS:
        lines = ["Director of Public Works", profile.village.name, "INTERNAL · DO NOT MAIL"]
    else:
        lines = [notice.owner_name, *notice.owner_address_lines]
    pdf.set_font(FAMILY, size=10.5)
    step = ADDRESS_H / ADDRESS_LINES
    for i, line in enumerate(lines[:ADDRESS_LINES]):
        pdf.set_xy(ADDRESS_X, ADDRESS_Y + i * step)
        pdf.cell(ADDRESS_W, step, line)


def _record_page(pdf: FPDF, record: str, photos: Sequence[PhotoBytes]) -> None:
    """The evidence record: measurements, readings, the clock's steps, the Code's words."""
    pdf.add_page()
    size = 8.5
    for number, block in enumerate(_blocks(record)):
        if number == 0:
            pdf.set_font(FAMILY, style="B", size=11)
            pdf.multi_cell(0, 5.5, block[0], new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        for line in block[1:] if number == 0 else block:
            if line.startswith("- "):
                _paragraph(pdf, f"• {line[2:].strip()}", size, indent=4.0)
            elif line.startswith("  "):
                _paragraph(pdf, line.strip(), size, indent=4.0)
            else:
                _paragraph(pdf, line.strip(), size)
        pdf.ln(1.5)
    for photo in photos:
        pdf.add_page()
        pdf.set_font(FAMILY, size=9)
        for line in (f"Evidence photograph, SHA-256 digest {photo.sha256}", photo.caption):
            pdf.multi_cell(0, 5, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.image(io.BytesIO(photo.jpeg), x=MARGIN, w=pdf.epw)


def _roughly_fits(pdf: FPDF, text: str, size: float, photo: PhotoBytes | None) -> bool:
    """A generous estimate that a letter fits at ``size`` without a trial rendering."""
    per_line = pdf.epw / (size * 0.21)  # DejaVu Sans averages about 0.55 em a character
    blocks = _blocks(text)
    lines = sum(math.ceil(len(line) / per_line) for block in blocks for line in block)
    height = lines * size * 0.47 + len(blocks) * size * 0.3 + SIGNATURE_H
    height += PHOTO_H + 2 if photo is not None else 0
    return height < 0.9 * (pdf.h - MARGIN - BODY_Y)


def _fitting(
    pdf: _Letters, text: str, letterhead: Letterhead, photo: PhotoBytes | None
) -> tuple[float, PhotoBytes | None]:
    """The largest size (with the photograph if it can stay) at which the letter fits its page.

    Tried on a scratch document, not fpdf2's ``offset_rendering`` (which copies this
    one, fonts and images included): cheap, and this document stays as it was.
    """
    if _roughly_fits(pdf, text, LETTER_SIZES[0], photo):
        return LETTER_SIZES[0], photo
    tries = [(size, photo) for size in LETTER_SIZES]
    if photo is not None:
        tries += [(size, None) for size in LETTER_SIZES]
    for size, with_photo in tries:
        trial = _Letters(trial=True)
        trial.add_page()
        trial.set_xy(MARGIN, BODY_Y)
        _letter_body(trial, text, letterhead, size, with_photo)
        if trial.page_no() == 1:
            return size, with_photo
    return LETTER_SIZES[-1], None


def _letter(
    pdf: _Letters, notice: NoticeRecord, profile: Profile, photos: Sequence[PhotoBytes]
) -> None:
    if notice.body_text is None:
        raise ValueError(f"notice {notice.number} is not rendered; nothing to print")
    letter, _, record = notice.body_text.partition("\f")
    letterhead = letterhead_of(notice.detail, profile)
    pdf.footer_text = f"{profile.village.name} · Notice No. {notice.number}"
    pdf.first_page = pdf.page_no() + 1
    pdf.add_page()
    _letterhead(pdf, letterhead, notice, profile)
    _window_address(pdf, notice, profile)
    size, photo = _fitting(pdf, letter, letterhead, photos[0] if photos else None)
    pdf.set_xy(MARGIN, BODY_Y)
    _letter_body(pdf, letter, letterhead, size, photo)
    if record.strip():
        _record_page(pdf, record, photos[1:] if photo is not None else photos)
    pdf.ln(3)
    pdf.set_font(FAMILY, size=7.5)
    pdf.cell(0, 4, f"End of Notice No. {notice.number}", align="C")


def _new(title: str, created: datetime) -> _Letters:
    pdf = _Letters()
    pdf.set_title(title)
    pdf.set_creator("Sidewalk Watch")
    pdf.set_creation_date(created)
    return pdf


def notice_pdf(notice: NoticeRecord, profile: Profile, photos: Sequence[PhotoBytes] = ()) -> bytes:
    """One notice as a PDF letter and its evidence record (same record, same bytes)."""
    pdf = _new(f"Notice {notice.number}", notice.issued_at)
    _letter(pdf, notice, profile, photos)
    return bytes(pdf.output())


def specimen_pdf(letterhead: Letterhead, profile: Profile, at: datetime) -> bytes:
    """A specimen letter under ``letterhead`` (``sidewalk check``): the very path a
    notice takes to paper, so a signature file fpdf cannot print fails here, before
    the first notice, and the IT person can look at the letterhead as owners will."""

    specimen = NoticeRecord(
        id=0, number="SPECIMEN", key="specimen", kind="clearing_violation", violation_id=None,
        frontage_id="specimen", owner_id="specimen", owner_name="A. Property Owner",
        owner_address_lines=("123 Specimen St", f"{profile.village.name}, {profile.village.state}"),
        issued_at=at, deadline=None, citation=None, rules=(),
        detail={"letterhead": letterhead.to_json()},
        body_text="\n\n".join([
            "SPECIMEN OF THE VILLAGE'S LETTERHEAD\nProperty: 123 Specimen St",
            "Dear A. Property Owner:",
            "This is a specimen of the letterhead, contact line and signature that notices"
            " carry. It is not a notice.",
            letterhead.contact,
            "Sincerely,",
            "\n".join(x for x in (letterhead.officer_name,
                                  f"{letterhead.officer_title}, {letterhead.village}") if x),
        ]),
        body_html=None, status="rendered", rendered_at=at, delivered_at=None, received_at=None,
    )  # fmt: skip
    return notice_pdf(specimen, profile)


def batch_pdf(
    notices: Sequence[NoticeRecord],
    profile: Profile,
    created: datetime,
    *,
    duplex: bool = True,
) -> bytes:
    """Many notices in one PDF for the print room, each starting on a new sheet.

    With ``duplex`` a notice with an odd number of pages is followed by a blank
    page, so no sheet carries the end of one letter and the start of the next.
    The dashboard's print page and ``sidewalk notices print-batch`` both print this.
    """
    if not notices:
        raise ValueError("an empty print batch")
    pdf = _new(f"Print batch of {len(notices)} notices", created)
    for notice in notices:
        _letter(pdf, notice, profile, ())
        if duplex and (pdf.page_no() - pdf.first_page + 1) % 2:
            pdf.footer_text = ""
            pdf.add_page()
    return bytes(pdf.output())


def table_pdf(
    title: str,
    lead: Iterable[str],
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    created: datetime,
    *,
    closing: Iterable[str] = (),
    widths: Sequence[int] | None = None,
) -> bytes:
    """A landscape table document (the notice register, the tax-roll certification)."""
    pdf = FPDF(orientation="landscape", unit="mm", format="letter")
    _add_fonts(pdf)
    pdf.set_creation_date(created)
    pdf.set_title(title)
    pdf.set_margins(MARGIN, MARGIN, MARGIN)
    pdf.set_auto_page_break(auto=True, margin=MARGIN)
    pdf.add_page()
    pdf.set_font(FAMILY, style="B", size=13)
    pdf.multi_cell(0, 7, title, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font(FAMILY, size=9)
    for line in lead:
        pdf.multi_cell(0, 5, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(2)
    pdf.set_font(FAMILY, size=8)
    with pdf.table(col_widths=tuple(widths) if widths else None, text_align="LEFT") as table:
        table.row(list(header))
        for row in rows:
            table.row(list(row))
    pdf.ln(3)
    pdf.set_font(FAMILY, size=9)
    for line in closing:
        pdf.multi_cell(0, 5, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    return bytes(pdf.output())
