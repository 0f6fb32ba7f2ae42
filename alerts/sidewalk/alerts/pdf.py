"""Notices as PDF (fpdf2, pure Python): one letter, a print batch, the register, the tax roll.

A notice's PDF is a function of its stored record: the letterhead and the
owner's address snapshot placed for a window envelope, then the rendered text
exactly as stored, then any evidence photographs. The creation date is the
issue time, so the same record always gives the same bytes (the evidence
package depends on it).

The built-in PDF fonts cover Latin-1 only; typographic characters are mapped
to their plain forms and anything else prints as ``?`` (see ``latin1``).
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from sidewalk.alerts.notices import INTERNAL_KINDS
from sidewalk.core.clock import format_local
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import NoticeRecord

# US letter, inches → mm. The address sits where a #10 double-window envelope
# shows it when the letter is tri-folded: 2 in from the top, 1 in from the left.
INCH: Final = 25.4
MARGIN: Final = 0.75 * INCH
ADDRESS_X: Final = 1.0 * INCH
ADDRESS_Y: Final = 2.0 * INCH
ADDRESS_W: Final = 3.75 * INCH
RETURN_Y: Final = 0.5 * INCH
BODY_Y: Final = 3.4 * INCH
BODY_FONT_PT: Final = 8.5

_PLAIN: Final = str.maketrans(
    {
        "\u2013": "-",
        "\u2014": "-",
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2026": "...",
        "\u2192": "->",
        "\u2265": ">=",
        "\u2264": "<=",
        "\u00a0": " ",
    }
)


def latin1(text: str) -> str:
    """Text the built-in fonts can show: typographic marks made plain, the rest ``?``."""
    return text.translate(_PLAIN).encode("latin-1", errors="replace").decode("latin-1")


@dataclass(frozen=True)
class PhotoBytes:
    """An evidence photograph to print after the notice text."""

    sha256: str
    jpeg: bytes
    caption: str


class _Letters(FPDF):
    """Letter pages whose footer names the notice on the page and its page within it."""

    def __init__(self) -> None:
        super().__init__(unit="mm", format="letter")
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
        self.set_font("Helvetica", size=7)
        self.cell(0, 4, latin1(f"{text} - page {self.page_no() - first + 1}"), align="C")


def _monospace(pdf: FPDF, text: str) -> None:
    """Pre-formatted text, wrapped here by character count.

    Courier's every glyph is 0.6 em wide, so wrapping by count is exact, and
    far cheaper than fpdf2's per-glyph line breaking (the bench's hot spot).
    Continuation lines keep the line's indent, plus two.
    """
    per_line = int(pdf.epw / (0.6 * BODY_FONT_PT * INCH / 72))
    for line in text.split("\n"):
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        wrapped = textwrap.wrap(line, per_line, subsequent_indent=indent) or [""]
        for part in wrapped:
            pdf.cell(0, BODY_FONT_PT * 0.45, part, new_x=XPos.LMARGIN, new_y=YPos.NEXT)


def _letter(
    pdf: _Letters, notice: NoticeRecord, profile: Profile, photos: Sequence[PhotoBytes]
) -> None:
    if notice.body_text is None:
        raise ValueError(f"notice {notice.number} is not rendered; nothing to print")
    pdf.footer_text = f"{profile.village.name} - Notice No. {notice.number}"
    pdf.first_page = pdf.page_no() + 1
    pdf.add_page()
    # Return address and the notice number, above the window.
    pdf.set_xy(MARGIN, RETURN_Y)
    pdf.set_font("Helvetica", style="B", size=10)
    pdf.cell(0, 5, latin1(f"{profile.village.name}, {profile.village.state}"))
    pdf.set_xy(MARGIN, RETURN_Y + 5)
    pdf.set_font("Helvetica", size=8)
    pdf.cell(0, 4, "Department of Public Works")
    pdf.set_xy(-MARGIN - 70, RETURN_Y)
    pdf.set_font("Helvetica", style="B", size=10)
    pdf.cell(70, 5, latin1(f"Notice No. {notice.number}"), align="R")
    pdf.set_xy(-MARGIN - 70, RETURN_Y + 5)
    pdf.set_font("Helvetica", size=8)
    pdf.cell(70, 4, latin1(f"Issued {format_local(notice.issued_at, profile.zone)}"), align="R")
    # The window address: the owner snapshot, or the department for internal advisories.
    if notice.kind in INTERNAL_KINDS:
        lines = ["Director of Public Works", profile.village.name, "INTERNAL - DO NOT MAIL"]
    else:
        lines = [notice.owner_name, *notice.owner_address_lines]
    pdf.set_font("Helvetica", size=11)
    for i, line in enumerate(lines[:6]):
        pdf.set_xy(ADDRESS_X, ADDRESS_Y + i * 5)
        pdf.cell(ADDRESS_W, 5, latin1(line))
    pdf.set_xy(MARGIN, BODY_Y)
    pdf.set_font("Courier", size=BODY_FONT_PT)
    _monospace(pdf, latin1(notice.body_text.rstrip("\n")))
    for photo in photos:
        pdf.add_page()
        pdf.set_font("Helvetica", size=9)
        for line in (f"Evidence photograph sha256 {photo.sha256}", photo.caption):
            pdf.multi_cell(0, 5, latin1(line), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.image(io.BytesIO(photo.jpeg), x=MARGIN, w=pdf.epw)
    pdf.ln(4)
    pdf.set_font("Helvetica", style="I", size=8)
    pdf.cell(0, 4, latin1(f"- end of Notice No. {notice.number} -"), align="C")


def _new(title: str, created: datetime) -> _Letters:
    pdf = _Letters()
    pdf.set_title(latin1(title))
    pdf.set_creator("Sidewalk Watch")
    pdf.set_creation_date(created)
    return pdf


def notice_pdf(notice: NoticeRecord, profile: Profile, photos: Sequence[PhotoBytes] = ()) -> bytes:
    """One notice as a PDF letter (same record, same bytes)."""
    pdf = _new(f"Notice {notice.number}", notice.issued_at)
    _letter(pdf, notice, profile, photos)
    return bytes(pdf.output())


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
    pdf.set_creation_date(created)
    pdf.set_title(latin1(title))
    pdf.set_margins(MARGIN, MARGIN, MARGIN)
    pdf.set_auto_page_break(auto=True, margin=MARGIN)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=13)
    pdf.multi_cell(0, 7, latin1(title), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=9)
    for line in lead:
        pdf.multi_cell(0, 5, latin1(line), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(2)
    pdf.set_font("Helvetica", size=8)
    with pdf.table(col_widths=tuple(widths) if widths else None, text_align="LEFT") as table:
        table.row([latin1(h) for h in header])
        for row in rows:
            table.row([latin1(cell) for cell in row])
    pdf.ln(3)
    pdf.set_font("Helvetica", size=9)
    for line in closing:
        pdf.multi_cell(0, 5, latin1(line), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    return bytes(pdf.output())
